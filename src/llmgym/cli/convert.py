"""``llmgym convert``: trajectories to SFT data (TRL messages or AgentGym)."""

from __future__ import annotations

import argparse

from llmgym.cli.common import warn
from llmgym.runner.trajectories import BadLine, convert_file


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "convert", help="trajectories to SFT data (TRL messages or AgentGym)"
    )
    parser.add_argument("input", help="a trajectory file (JSONL) of eval or collect")
    parser.add_argument(
        "-o", "--output", required=True, help="the file to write (JSONL; agentgym: a JSON array)"
    )
    parser.add_argument(
        "--format",
        choices=("messages", "conversations", "agentgym"),
        default="messages",
        help="messages: TRL's conversational format; conversations: AgentGym's conversations "
        "as JSON lines; agentgym: AgentTraj's JSON array with item ids <family>_<index>, as "
        "AgentGym's trainers load it",
    )
    parser.add_argument(
        "--successful-only", action="store_true", help="keep only successful episodes"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    bad_lines: list[BadLine] = []
    try:
        count = convert_file(
            args.input,
            args.output,
            fmt=args.format,
            successful_only=args.successful_only,
            bad_lines=bad_lines,
        )
    finally:
        warn([f"{args.input}, {bad} (skipped)" for bad in bad_lines], len(bad_lines))
    print(f"wrote {count} {args.format} records to {args.output}")
    return 0
