"""``llmgym view``: a local web page over trajectory and results files."""

from __future__ import annotations

import argparse
import sys

from llmgym.cli.common import PORT, address, listen_errors, warn


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "view", help="browse episodes (trajectory or results files) in a local web page"
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="trajectory files (JSONL) and results files of `llmgym eval --json` (a results "
        "file brings the trajectory file it names)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface (the default answers this machine only)"
    )
    parser.add_argument("--port", type=PORT, default=8765, help="0 picks a free port")
    parser.add_argument("--open", action="store_true", help="open the page in a web browser")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from llmgym.viewer import TrajectoryStore, make_server

    store = TrajectoryStore(args.paths)
    for loaded in store.runs:
        warn([f"{loaded.path}, {warning}" for warning in loaded.warnings], loaded.warning_count)
        if loaded.kind == "results":
            print(
                f"llmgym: {loaded.path} names no trajectory file, so episodes show as summaries; "
                "evaluate with --trajectories PATH as well to see every turn",
                file=sys.stderr,
            )
    with listen_errors(address(args.host, args.port)):
        server = make_server(store, args.host, args.port)
    print(
        f"llmgym view: {len(store.episodes):,} episodes of {len(store.runs)} run(s) on "
        f"{server.url} (Ctrl-C stops)",
        flush=True,
    )
    if args.open:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
