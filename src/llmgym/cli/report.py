"""``llmgym report``: plots of results files and EnvGen runs in one static HTML page."""

from __future__ import annotations

import argparse

from llmgym.cli.common import warn


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "report", help="plots of results files and EnvGen runs in one HTML page ([report] extra)"
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="results files of `llmgym eval --json`, EnvGen run folders (llmgym envgen --out) "
        "or EnvGen benchmark results",
    )
    parser.add_argument("-o", "--output", default="report.html", help="the HTML file to write")
    parser.add_argument("--title", default="", help="the page's title (default: llmgym report)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from llmgym.viewer.report import write_report

    warnings: list[str] = []
    try:
        path = write_report(args.inputs, args.output, title=args.title, warnings=warnings)
    finally:
        warn(warnings, len(warnings))
    print(f"wrote {path}")
    return 0
