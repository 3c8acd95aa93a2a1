"""``llmgym eval``: evaluate an agent on environments or a suite, print a results table, and
write the results file (:func:`llmgym.runner.runs.write_results`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from llmgym.cli import match, options
from llmgym.cli.common import (
    ENV_ID_HELP,
    EXIT_INTERRUPTED,
    NoteGiven,
    format_table,
    given,
    integer,
    resolve_id,
)
from llmgym.runner.runs import EvalPlan, EvalRun, estimate_plan, run_plan, write_results
from llmgym.suites import SUITE_NAMES

COLUMNS = (
    "env_id",
    "agent",
    "episodes",
    "success_rate",
    "success_ci95",
    "mean_reward",
    "mean_steps",
    "mean_turns",
    "format_errors",
    "server_errors",
    "tokens",
    "errors",
)
"""The columns of the results table."""


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("eval", help="evaluate an agent and print a results table")
    parser.add_argument("env_ids", nargs="*", metavar="ENV_ID", help=ENV_ID_HELP)
    parser.add_argument("--suite", choices=SUITE_NAMES, help="a named, frozen set of tasks")
    parser.add_argument(
        "--split",
        choices=("train", "eval"),
        default="eval",
        action=NoteGiven,
        help="the split tasks are drawn from (not with --suite)",
    )
    parser.add_argument(
        "--episodes",
        type=integer(1),
        default=50,
        action=NoteGiven,
        help="per environment (not with --suite or --task-ids, which fix the tasks)",
    )
    parser.add_argument(
        "--task-ids",
        nargs="+",
        metavar="TASK_ID",
        help="play exactly these tasks of each ENV_ID, e.g. eval/00003 (instead of --episodes)",
    )
    parser.add_argument(
        "--task-file",
        metavar="PATH",
        help="play the items of an AgentGym data file (a JSON array of {item_id: "
        "<family>_<index>}, e.g. webshop_test.json of 'llmgym export agenteval')",
    )
    parser.add_argument(
        "--data",
        metavar="DIR",
        help="play the original dataset in DIR (its published layout, e.g. BIRD's for "
        "llmgym/SQL-v0; see 'llmgym data list'); with --task-file, its indices are the "
        "original's AgentGym item ids",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--history-window",
        type=integer(0),
        metavar="N",
        help="send the model only the last N exchanges after the system prompt and the task "
        "(default: the whole conversation)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the episodes, turn limits and a token estimate; contact no model",
    )
    parser.add_argument(
        "--trajectories", metavar="PATH", help="also append every episode to a JSONL file"
    )
    options.add_record_frames_option(parser)
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run recorded in --trajectories: episodes it holds that ended without "
        "an error are not played again (the same command, with --resume)",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        metavar="PLAYER",
        help="multi-agent games only: play these agents against each other (one per seat) "
        "instead of --agent; the same as 'llmgym match GAME --agents ...' with --episodes games",
    )
    parser.add_argument(
        "--opponent",
        metavar="PLAYER",
        help="multi-agent games only: who plays the other seats, a scripted player of the game "
        "(e.g. greedy) or an agent (oracle, random, openai:MODEL); default: the game's default",
    )
    options.add_agent_options(parser)
    options.add_placement_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.agents:
        return _as_match(args)
    _check_options(args)
    options.connect(args)
    plan = _plan(args)
    if args.dry_run:
        return _dry_run(args, plan)
    done = run_plan(
        plan,
        options.agent(args),
        trajectories=args.trajectories,
        resume=args.resume,
        record_frames=args.record_frames,
        progress=not args.quiet,
        stop_on_interrupt=True,
        env_source=lambda env_id: options.env_source(args, env_id),
        make_kwargs=lambda env_id: options.opponent_kwargs(args, env_id),
        notify=lambda line: print(line, file=sys.stderr),
    )
    rows = []
    for result in done.results:
        row = result.summary()
        low, high = row.pop("success_ci95")
        row["success_ci95"] = f"{low:.2f}-{high:.2f}"
        rows.append(row)
    print(format_table(rows, COLUMNS))
    print(f"\n{done.score()['label']}")
    if args.json:
        print(f"\nwrote {write_results(args.json, done)}")
    if done.interrupted:
        print(_interrupted_note(args, done), file=sys.stderr)
        return EXIT_INTERRUPTED
    failed = any(r.summary()["errors"] == r.episodes and r.episodes for r in done.results)
    return 1 if failed else 0


def _check_options(args: argparse.Namespace) -> None:
    """Options that would otherwise be silently ignored."""
    for option in ("episodes", "split"):
        if args.suite and not args.env_ids and given(args, option):
            raise ValueError(
                f"--{option} applies to the ENV_IDs named, not to a --suite, whose task lists "
                "are fixed"
            )
    if (args.task_ids or args.task_file) and given(args, "episodes"):
        raise ValueError("--task-ids and --task-file play each task once; leave out --episodes")
    if args.task_file and (args.env_ids or args.task_ids):
        raise ValueError("--task-file names its environments and tasks itself: drop the others")
    if args.resume and not args.trajectories:
        raise ValueError("--resume continues the run recorded by --trajectories PATH; name it")
    if args.record_frames and not args.trajectories:
        raise ValueError("--record-frames writes beside --trajectories PATH; name it")
    if args.data is not None:
        if args.suite:
            raise ValueError("--data plays an original dataset: name its ENV_ID, not a --suite")
        if args.remote:
            raise ValueError(
                "--data is read here; a server plays original data its operator gives it "
                "(llmgym serve --data FAMILY=DIR): drop --data"
            )


def _plan(args: argparse.Namespace) -> EvalPlan:
    """The plan of the positional ids, ``--task-file`` and ``--suite``; a note for each of the
    suite's environments left out."""
    plan = EvalPlan(
        [resolve_id(e) for e in args.env_ids],
        suite=args.suite,
        task_ids=args.task_ids,
        task_file=args.task_file,
        split=args.split,
        episodes=args.episodes,
        seed=args.seed,
        concurrency=args.concurrency,
        history_window=args.history_window,
        config=args.config,
        data_dir=args.data,
        skip_uninstalled=not (args.remote or args.ray),  # else the remote side's business
    )
    for skipped in plan.skipped:
        print(f"llmgym: skipping {skipped['env_id']} (needs {skipped['install']})", file=sys.stderr)
    if not plan.environments:
        raise ValueError("name at least one environment id, a --suite or a --task-file")
    return plan


def _dry_run(args: argparse.Namespace, plan: EvalPlan) -> int:
    """``--dry-run``: the episodes, turn limits and prompt tokens of the run, without
    contacting a model."""
    window = args.history_window
    estimates = estimate_plan(
        plan,
        react=args.react,
        env_source=lambda env_id: options.env_source(args, env_id),
        make_kwargs=lambda env_id: options.opponent_kwargs(args, env_id),
    )
    rows: list[dict[str, Any]] = []
    for estimate in estimates:
        row = {
            "env_id": estimate.env_id,
            "episodes": estimate.episodes,
            "turn_limit": estimate.turn_limit or f"none ({estimate.turns} assumed)",
            "first_prompt": estimate.first_prompt_tokens,
            "per_turn": estimate.turn_tokens,
            "prompt_tokens": estimate.prompt_tokens(),
        }
        if window is not None:
            row[f"window_{window}"] = estimate.prompt_tokens(window)
        rows.append(row)
    print(format_table(rows, list(rows[0])))
    line = f"\nat most ~{sum(e.prompt_tokens() for e in estimates):,} prompt tokens"
    if window is not None:
        windowed = sum(e.prompt_tokens(window) for e in estimates)
        line += f" (~{windowed:,} with --history-window {window})"
    print(line + f", replies of up to {args.max_tokens} tokens each.")
    print(
        "Estimate: characters / 4, every episode running to its turn limit, later observations "
        f"as long as the first, replies of ~{estimates[0].reply_tokens} tokens. "
        "Dry run: no model was contacted."
    )
    return 0


def _interrupted_note(args: argparse.Namespace, done: EvalRun) -> str:
    """What ``llmgym eval`` says after Ctrl-C: what it kept, and how to go on; the count of
    episodes ``--resume`` keeps is the one it finds (those that ended without an error)."""
    episodes = [t for result in done.results for t in result.trajectories]
    kept = f" (and {args.json})" if args.json else ""
    note = f"llmgym: interrupted; the table{kept} holds the {len(episodes)} finished episodes"
    if not args.trajectories:
        return f"{note}; a run with --trajectories PATH can be continued with --resume"
    unerrored = sum(t.error is None for t in episodes)
    return (
        f"{note}, as does {args.trajectories}; the same command with --resume keeps "
        f"{unerrored} of them (those that ended without an error) and plays the rest"
    )


def _as_match(args: argparse.Namespace) -> int:
    """``llmgym eval GAME --agents A B ...``: the same as ``llmgym match``."""
    if len(args.env_ids) != 1 or args.suite:
        raise ValueError("with --agents, name exactly one multi-agent game (no --suite)")
    as_match = argparse.Namespace(**vars(args))
    as_match.game, as_match.games = args.env_ids[0], args.episodes
    as_match.transcripts = args.trajectories
    return match.run(as_match)
