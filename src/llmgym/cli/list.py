"""``llmgym list``: the environment table."""

from __future__ import annotations

import argparse
import json
import shutil

from llmgym.cli.common import format_table
from llmgym.envs import all_entries


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listing = commands.add_parser("list", help="list the registered environments")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rows = [entry.as_dict() for entry in all_entries()]
    if args.json:
        print(json.dumps({"environments": rows}, indent=2))
        return 0
    for row in rows:
        row["steps"] = row["max_episode_steps"] or "-"
        row["extra"] = row["extra"] or "-"
        row["available"] = "yes" if row["available"] else "no"
    columns = ["id", "steps", "extra", "available"]
    used = len(format_table(rows, columns).splitlines()[0]) + 2
    room = max(20, shutil.get_terminal_size((100, 24)).columns - used)
    for row in rows:
        summary = row["summary"]
        row["summary"] = summary if len(summary) <= room else summary[: room - 3] + "..."
    print(format_table(rows, [*columns, "summary"]))
    return 0
