"""``llmgym convert``: trajectories to SFT data (TRL messages or AgentGym)."""

from __future__ import annotations

import argparse
import sys

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
        _report_bad_lines(args.input, bad_lines)
    print(f"wrote {count} {args.format} records to {args.output}")
    return 0


def _report_bad_lines(path: str, bad_lines: list[BadLine], most: int = 10) -> None:
    for bad in bad_lines[:most]:
        print(f"llmgym: warning: {path}, {bad} (skipped)", file=sys.stderr)
    if len(bad_lines) > most:
        print(f"llmgym: warning: {len(bad_lines) - most} more lines skipped", file=sys.stderr)
