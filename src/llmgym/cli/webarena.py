"""``llmgym webarena serve``: WebArena-v0's sites on local ports, for a real browser."""

from __future__ import annotations

import argparse
import time

from llmgym.cli.common import EXIT_INTERRUPTED, integer, listen_errors


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "webarena", help="serve WebArena-v0's sites (store, back office, ...) for a browser"
    )
    parser.add_argument("action", choices=("serve",), help="what to do")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    parser.add_argument("--seed", type=integer(0), default=0, help="seed of the generated data")
    parser.add_argument(
        "--port-offset",
        type=int,
        default=0,
        help="added to each site's port (store 7770, admin 7780, code host 8023, wiki 8888, "
        "forum 9999)",
    )
    parser.add_argument("--sites", default="", help="comma-separated site names (default: all)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from llmgym.envs.webarena.serve import SIGN_IN, serve_sites

    where = f"{args.host} at the sites' ports plus {args.port_offset}"
    with listen_errors(where, "choose another --port-offset"):
        running = serve_sites(
            args.sites.split(",") if args.sites else None,
            host=args.host,
            seed=args.seed,
            port_offset=args.port_offset,
        )
    for served in running:
        sign_in = SIGN_IN.get(served.site.name, "")
        print(f"{served.site.title:<20} {served.url}/  {sign_in}")
    print("serving; Ctrl-C stops", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        for served in running:
            served.stop()
        return EXIT_INTERRUPTED
