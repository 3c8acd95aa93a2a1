"""``llmgym serve``: serve environments over HTTP (the ``[serve]`` extra)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from llmgym.cli.common import PORT, address, integer, listen_errors, number, resolve_id
from llmgym.originals import get_source


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "serve", help="serve environments over HTTP (needs the [serve] extra)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface (0.0.0.0: all)")
    parser.add_argument("--port", type=PORT, default=8000, help="0 picks a free port")
    parser.add_argument(
        "--envs",
        nargs="+",
        metavar="ENV_ID",
        help="serve only these, e.g. wordle or my_pkg.envs:Anagram (default: every available)",
    )
    parser.add_argument("--max-sessions", type=integer(1), default=256, help="sessions at once")
    parser.add_argument(
        "--max-sessions-per-client",
        type=integer(1),
        default=64,
        metavar="N",
        help="sessions one client address may hold at once (default 64)",
    )
    parser.add_argument("--ttl", type=number(0), default=600.0, help="idle seconds before expiry")
    parser.add_argument(
        "--token",
        help="require 'Authorization: Bearer TOKEN', or for AgentGym's clients the path "
        "/agentgym/TOKEN/<family> (default: $LLMGYM_SERVER_TOKEN)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=integer(1024),
        default=1 << 20,
        help="request size limit (default 1 MiB)",
    )
    parser.add_argument(
        "--max-json-depth",
        type=integer(2),
        default=32,
        metavar="N",
        help="deepest nesting of a request body or stream message (default 32)",
    )
    parser.add_argument(
        "--step-timeout",
        type=number(0),
        default=30.0,
        metavar="S",
        help="seconds a step or remote call may run before its session is closed (default 30)",
    )
    parser.add_argument(
        "--reset-timeout",
        type=number(0),
        default=120.0,
        metavar="S",
        help="the same for making an environment and reset (default 120)",
    )
    parser.add_argument(
        "--max-connections",
        type=integer(1),
        default=4096,
        metavar="N",
        help="connections open at once, in all (default 4096, lowered to fit the open-file "
        "limit); over it an idle connection without the token is closed, or 503",
    )
    parser.add_argument(
        "--max-connections-per-client",
        type=integer(1),
        default=256,
        metavar="N",
        help="connections open at once from one client address (default 256; over it: 429)",
    )
    parser.add_argument(
        "--header-timeout",
        type=number(0),
        default=10.0,
        metavar="S",
        help="seconds a connection has to send a request's headers, and a body between two "
        "of its parts (default 10)",
    )
    parser.add_argument(
        "--ws-idle-timeout",
        type=number(0),
        default=300.0,
        metavar="S",
        help="seconds a WebSocket may stay silent before the server closes it (code 4408; "
        "default 300)",
    )
    parser.add_argument(
        "--max-memory",
        type=number(0),
        metavar="MIB",
        help="memory budget of the sessions in MiB: each reserves its environment's declared "
        "cost, and a session over budget is refused with 503 (default: half the machine's)",
    )
    parser.add_argument(
        "--forwarded-allow-ips",
        nargs="+",
        metavar="ADDRESS",
        help="reverse proxies whose X-Forwarded-For names the client, e.g. 127.0.0.1 for a "
        "proxy on this machine (default: none; the header is ignored)",
    )
    parser.add_argument(
        "--config-max",
        action="append",
        metavar="ENV_ID.FIELD=N",
        help="the largest value clients may give a config field (repeatable; replaces the "
        "default limit of that field)",
    )
    parser.add_argument(
        "--config-values",
        action="append",
        metavar="ENV_ID.FIELD=V[,V...]",
        help="the only values clients may give a config field (repeatable)",
    )
    parser.add_argument(
        "--allow-files",
        metavar="DIR",
        help="let clients name files inside DIR in config fields that name a file "
        "(default: no file paths from clients)",
    )
    parser.add_argument(
        "--isolate",
        nargs="+",
        metavar="ENV_ID",
        help="also run these environments in a child process per session ('all': every one)",
    )
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="the server's log level",
    )
    parser.add_argument("--access-log", action="store_true", help="log every request")
    parser.add_argument(
        "--protocol",
        nargs="+",
        metavar="NAME",
        help="the protocols to speak (default: llmgym openenv agentgym mcp: llmgym's own, "
        "OpenEnv's at /openenv/<name>, AgentGym's at /agentgym/<family>, MCP at /mcp/<name>); "
        "openenv alone serves --env at the root, as an OpenEnv Space",
    )
    parser.add_argument("--env", metavar="ENV_ID", help="serve this environment alone")
    parser.add_argument(
        "--data",
        nargs="+",
        metavar="FAMILY=DIR",
        help="play a family's original dataset from DIR (its published layout; see "
        "'llmgym data list'), e.g. bird=~/data/bird; clients cannot change it",
    )
    parser.add_argument(
        "--workers",
        type=integer(1),
        default=1,
        metavar="N",
        help="server processes on the one port, for light environments to use N cores "
        "(default 1); a session stays in the worker that made it, others forward to it; "
        "MCP and OpenEnv need one worker",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="host every session in a Ray actor of this cluster, spread over its cores and "
        "nodes: auto (the one 'ray start' runs here), HOST:PORT, ray://HOST:10001, or local "
        "(start one in this process); needs the [ray] extra",
    )
    parser.add_argument(
        "--ray-cpus",
        type=number(0, inclusive=True),
        default=0.0,
        metavar="N",
        help="CPUs each session's actor reserves on Ray (fractions allowed; default 0: placed by "
        "memory alone)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from llmgym.serving.server import ServerSettings, configure_logging, serve
    from llmgym.serving.server.policy import ConfigLimit

    limits = [ConfigLimit.parse(text, "maximum") for text in args.config_max or ()]
    limits += [ConfigLimit.parse(text, "values") for text in args.config_values or ()]
    settings = ServerSettings(
        envs=_served_envs(args),
        max_sessions=args.max_sessions,
        max_sessions_per_client=args.max_sessions_per_client,
        ttl_s=args.ttl,
        token=args.token or os.environ.get("LLMGYM_SERVER_TOKEN") or None,
        max_body_bytes=args.max_body_bytes,
        max_json_depth=args.max_json_depth,
        step_timeout_s=args.step_timeout,
        reset_timeout_s=args.reset_timeout,
        config_limits=tuple(limits),
        file_dir=args.allow_files,
        isolate=tuple(e if e == "all" else resolve_id(e) for e in args.isolate or ()),
        protocols=_protocols(args),
        max_connections=args.max_connections,
        max_connections_per_client=args.max_connections_per_client,
        header_timeout_s=args.header_timeout,
        ws_idle_timeout_s=args.ws_idle_timeout,
        max_memory_mb=args.max_memory,
        forwarded_allow_ips=tuple(args.forwarded_allow_ips or ()),
        data=_original_data(args.data or ()),
        ray=args.ray,
        ray_cpus=args.ray_cpus,
        workers=args.workers,
    )
    configure_logging(args.log_level)

    def announce(url: str) -> None:
        print(f"llmgym serve: listening on {url}", flush=True)

    with listen_errors(address(args.host, args.port)):
        serve(
            args.host,
            args.port,
            settings,
            log_level=args.log_level,
            access_log=args.access_log,
            on_ready=announce,
        )
    return 0


def _protocols(args: argparse.Namespace) -> tuple[str, ...]:
    """``--protocol``, or the default protocols (those that several workers can route)."""
    from llmgym.serving.server.protocols import DEFAULT_PROTOCOLS, get_protocol

    if args.protocol:
        return tuple(args.protocol)
    if args.workers == 1:
        return DEFAULT_PROTOCOLS
    routed = tuple(name for name in DEFAULT_PROTOCOLS if not get_protocol(name).single_worker)
    print(
        f"llmgym serve: {args.workers} workers speak {', '.join(routed)} (the others need "
        "one worker)",
        file=sys.stderr,
    )
    return routed


def _original_data(given: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``--data FAMILY=DIR ...``, each directory checked (its report printed for the
    operator)."""
    pairs = []
    for text in given:
        name, equals, directory = text.partition("=")
        if not (equals and name and directory):
            raise ValueError(f"--data {text!r}: expected FAMILY=DIR, e.g. bird=~/data/bird")
        source = get_source(name)
        path = Path(directory).expanduser().resolve()
        if not path.is_dir():
            raise ValueError(f"--data {text!r}: {directory} is not a directory")
        print(source.check(path).text(), flush=True)
        pairs.append((name, str(path)))
    return tuple(pairs)


def _served_envs(args: argparse.Namespace) -> tuple[str, ...] | None:
    """The ids ``--env`` or ``--envs`` name (``None``: every available one)."""
    if args.env is not None:
        if args.envs:
            raise ValueError("--env serves one environment alone: drop --envs")
        return (resolve_id(args.env),)
    return tuple(resolve_id(e) for e in args.envs) if args.envs else None
