"""The ``llmgym`` command line: ``list``, ``play`` and ``eval``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

import llmgym
from llmgym.agents import make_agent
from llmgym.envs import ENVIRONMENTS, get_entry
from llmgym.evaluation import evaluate

__all__ = ["format_table", "main"]


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain-text table with a header row; floats are shown with three decimals."""

    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    cells = [[cell(row.get(column, "")) for column in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def _resolve_id(env_id: str) -> str:
    return get_entry(env_id).id


def _cmd_list(args: argparse.Namespace) -> int:
    rows = [entry.as_dict() for entry in ENVIRONMENTS]
    if args.json:
        print(json.dumps({"environments": rows}, indent=2))
        return 0
    for row in rows:
        row["extra"] = row["extra"] or "-"
        row["available"] = "yes" if row["available"] else "no"
        row["max_episode_steps"] = row["max_episode_steps"] or "-"
    print(format_table(rows, ["id", "max_episode_steps", "extra", "available", "summary"]))
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    env = gym.make(_resolve_id(args.env_id))
    options: dict[str, Any] = {"split": args.split}
    if args.task_id:
        options = {"task_id": args.task_id}
    observation, info = env.reset(seed=args.seed, options=options)
    print(f"Task {info['task_id']}: {info['instruction']}")
    print("Type an action; ':actions' lists valid ones, ':hint' asks the oracle, ':quit' leaves.\n")
    total = 0.0
    while True:
        print(observation)
        try:
            action = input("> ")
        except EOFError:
            print()
            return 0
        if action.strip() == ":quit":
            return 0
        if action.strip() == ":actions":
            print(
                ", ".join(info.get("admissible_actions") or ["(not listed for this environment)"])
            )
            continue
        if action.strip() == ":hint":
            print(f"oracle: {env.unwrapped.oracle_action()}")
            continue
        observation, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        if terminated or truncated:
            print(observation)
            outcome = (
                "success" if info.get("success") else ("out of turns" if truncated else "failed")
            )
            print(f"\nEpisode over: {outcome}, total reward {total:.2f}.")
            return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    env_ids = [_resolve_id(env_id) for env_id in args.env_ids]
    results = []
    for env_id in env_ids:
        agent = make_agent(args.agent, seed=args.seed)
        results.append(
            evaluate(
                env_id,
                agent,
                split=args.split,
                episodes=args.episodes,
                seed=args.seed,
                progress=not args.quiet,
            )
        )
    rows = [r.summary() for r in results]
    print(
        format_table(
            rows,
            ["env_id", "agent", "split", "episodes", "success_rate", "mean_reward", "mean_steps"],
        )
    )
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"llmgym_version": llmgym.__version__, "results": [r.to_dict() for r in results]}
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``llmgym`` command."""
    parser = argparse.ArgumentParser(prog="llmgym", description="Text environments for LLM agents.")
    parser.add_argument("--version", action="version", version=f"llmgym {llmgym.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    listing = commands.add_parser("list", help="list the registered environments")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(run=_cmd_list)

    play = commands.add_parser("play", help="play an environment in the terminal")
    play.add_argument("env_id", help="e.g. llmgym/Wordle-v0 (the llmgym/ prefix may be left out)")
    play.add_argument("--seed", type=int, default=None)
    play.add_argument("--split", choices=("train", "eval"), default="train")
    play.add_argument("--task-id", default=None, help="play exactly this task, e.g. eval/00003")
    play.set_defaults(run=_cmd_play)

    run = commands.add_parser("eval", help="evaluate an agent and print a results table")
    run.add_argument("env_ids", nargs="+", metavar="ENV_ID")
    run.add_argument("--agent", default="oracle", help="oracle or random (default: oracle)")
    run.add_argument("--split", choices=("train", "eval"), default="eval")
    run.add_argument("--episodes", type=int, default=50)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(run=_cmd_eval)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``llmgym`` command."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (KeyError, ValueError, llmgym.MissingDependencyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"llmgym: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
