"""``llmgym data``: the original datasets a user has (check a directory, list the sources, fetch
one on a machine with a network)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from llmgym.cli.common import format_table
from llmgym.envs import get_entry
from llmgym.errors import DataError, MissingDependencyError
from llmgym.originals import get_source, source_names, sources_envs


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    data = commands.add_parser(
        "data", help="original datasets: list the sources, check a directory, fetch one"
    )
    actions = data.add_subparsers(dest="data_command", required=True)
    listing = actions.add_parser(
        "list", help="the original sources, their environments and licenses"
    )
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(run=run_list)
    check = actions.add_parser(
        "check", help="validate a directory in a source's published layout; print its tasks"
    )
    check.add_argument("family", metavar="FAMILY", choices=source_names(), help="the source")
    check.add_argument("directory", metavar="DIR", help="the directory holding the data")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(run=run_check)
    fetch = actions.add_parser(
        "fetch",
        help="download a source into DIR with its authors' published commands (needs a network;"
        " llmgym never downloads on its own)",
    )
    fetch.add_argument("family", metavar="FAMILY", choices=source_names(), help="the source")
    fetch.add_argument("directory", metavar="DIR", help="where to put the data (created)")
    fetch.add_argument(
        "--print", action="store_true", help="print the commands instead of running them"
    )
    fetch.set_defaults(run=run_fetch)


def run_list(args: argparse.Namespace) -> int:
    rows = []
    for name in source_names():
        try:
            source = get_source(name)
        except MissingDependencyError:  # its environment's extra is not installed
            entry = get_entry(sources_envs()[name])
            rows.append(
                {
                    "source": name,
                    "env": entry.id,
                    "dataset": f"(needs {entry.install_hint})",
                    "license": "",
                    "homepage": "",
                }
            )
            continue
        rows.append(
            {
                "source": name,
                "env": source.env_id,
                "dataset": source.title,
                "license": source.license,
                "homepage": source.homepage,
            }
        )
    if args.json:
        print(json.dumps({"sources": rows}, indent=2))
    else:
        for row in rows:  # the table shows a license's first clause; --json has it whole
            row["license"] = re.split(r" \(|; ", row["license"], maxsplit=1)[0]
        print(format_table(rows, ["source", "env", "dataset", "license"]))
    return 0


def run_check(args: argparse.Namespace) -> int:
    source = get_source(args.family)
    directory = Path(args.directory).expanduser()
    if not directory.is_dir():
        raise DataError(f"{args.directory}: not a directory")
    report = source.check(directory.resolve())
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.text())
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    source = get_source(args.family)
    directory = Path(args.directory).expanduser()
    if args.print:
        print(f"mkdir -p {directory} && cd {directory}")
        print("\n".join(source.fetch_commands))
        return 0
    directory.mkdir(parents=True, exist_ok=True)
    print(
        f"llmgym: fetching {source.title} into {directory} (license: {source.license}); this "
        "needs a network",
        file=sys.stderr,
    )
    for command in source.fetch_commands:
        print(f"$ {command}", flush=True)
        done = subprocess.run(command, shell=True, cwd=directory, check=False)
        if done.returncode != 0:
            raise DataError(
                f"{command!r} failed with exit status {done.returncode} in {directory}; "
                f"the source's page: {source.homepage}"
            )
    print(source.check(directory.resolve()).text())
    return 0
