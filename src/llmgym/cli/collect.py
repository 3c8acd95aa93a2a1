"""``llmgym collect``: build a trajectory dataset (resumable)."""

from __future__ import annotations

import argparse
from pathlib import Path

from llmgym.cli import options
from llmgym.cli.common import ENV_ID_HELP, integer, resolve_id
from llmgym.runner.rollout import choose_tasks, rollout
from llmgym.runner.trajectories import Trajectory, append_trajectory, read_trajectories


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("collect", help="build a trajectory dataset (resumable)")
    parser.add_argument("--envs", nargs="+", required=True, metavar="ENV_ID", help=ENV_ID_HELP)
    parser.add_argument(
        "--split", choices=("train", "eval"), default="train", help="the split tasks come from"
    )
    parser.add_argument("--episodes", type=integer(1), default=100, help="per environment")
    parser.add_argument(
        "-o", "--output", required=True, help="JSONL file (appended; finished tasks skipped)"
    )
    parser.add_argument(
        "--successful-only", action="store_true", help="keep only successful episodes"
    )
    options.add_record_frames_option(parser)
    options.add_agent_options(parser)
    options.add_placement_options(parser)
    parser.set_defaults(run=run, on_interrupt=_interrupted)


def run(args: argparse.Namespace) -> int:
    options.connect(args)
    agent = options.agent(args)
    out = Path(args.output)
    done: set[tuple[str, str]] = set()
    if out.exists():
        done = {(t.env_id, t.task_id) for t in read_trajectories(out)}
    written = 0

    def save(trajectory: Trajectory) -> None:
        nonlocal written
        if trajectory.error is None and (trajectory.success or not args.successful_only):
            append_trajectory(out, trajectory)
            written += 1

    for env_id in (resolve_id(e) for e in args.envs):
        source = options.env_source(args, env_id)
        make_kwargs = options.make_kwargs(args)
        tasks = choose_tasks(source, args.split, args.episodes, args.seed, make_kwargs=make_kwargs)
        todo = [t for t in tasks if (env_id, t) not in done]
        if len(todo) < len(tasks):
            print(
                f"{env_id}: {len(tasks) - len(todo)} of {len(tasks)} tasks already in {out}, "
                "skipped"
            )
        if todo:
            rollout(
                source,
                agent,
                task_ids=todo,
                seed=args.seed,
                concurrency=args.concurrency,
                progress=not args.quiet,
                on_trajectory=save,
                make_kwargs=make_kwargs,
                record_frames=args.record_frames,
            )
    print(f"wrote {written} trajectories to {out}")
    return 0


def _interrupted(args: argparse.Namespace) -> str:
    return f"llmgym: the finished trajectories are in {args.output}; the same command continues"
