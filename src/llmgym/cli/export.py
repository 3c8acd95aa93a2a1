"""``llmgym export openenv ENV_ID DIR`` (an environment packaged for another ecosystem) and
``llmgym export agenteval --format agentgym --out DIR`` (the suite as AgentGym's files)."""

from __future__ import annotations

import argparse

from llmgym.cli.common import ENV_ID_HELP, number, resolve_id


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "export",
        help="package an environment for another ecosystem (openenv: an HF Space), or write "
        "the agenteval suite as AgentGym's test files (agenteval --format agentgym)",
    )
    parser.add_argument("what", choices=("openenv", "agenteval"), help="what to write")
    parser.add_argument("env_id", nargs="?", metavar="ENV_ID", help="openenv: " + ENV_ID_HELP)
    parser.add_argument(
        "directory", nargs="?", metavar="DIR", help="openenv: where to write it (made if missing)"
    )
    parser.add_argument(
        "--format",
        choices=("agentgym",),
        default="agentgym",
        help="agenteval: AgentGym's <family>_test.json files, item ids <family>_<index>",
    )
    parser.add_argument("--out", metavar="DIR", help="agenteval: the directory to write into")
    parser.add_argument(
        "--reward-range",
        nargs=2,
        type=number(),
        metavar=("LOW", "HIGH"),
        help="openenv: the reward range to declare (default: 0 to the oracle's best return on "
        "the first eval tasks)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.what == "agenteval":
        return _export_agenteval(args)
    if args.env_id is None or args.directory is None:
        raise ValueError("export openenv takes an ENV_ID and a DIR: llmgym export openenv ID DIR")
    from llmgym.serving.openenv_export import export_openenv

    if args.reward_range is not None and args.reward_range[0] > args.reward_range[1]:
        low, high = args.reward_range
        raise ValueError(f"--reward-range LOW HIGH: {low:g} is above {high:g}")

    written = export_openenv(resolve_id(args.env_id), args.directory, args.reward_range)
    for path in written:
        print(path)
    print(
        f"wrote an OpenEnv Space for {resolve_id(args.env_id)}; publish it with "
        f"`openenv push {args.directory}`"
    )
    return 0


def _export_agenteval(args: argparse.Namespace) -> int:
    """``llmgym export agenteval --format agentgym --out DIR``: the frozen suite as AgentGym's
    ``<family>_test.json`` files."""
    from llmgym.integrations.agentgym import write_agenteval

    if args.env_id is not None or args.directory is not None:
        raise ValueError("export agenteval takes no ENV_ID or DIR: give --out DIR")
    if args.out is None:
        raise ValueError("export agenteval writes into --out DIR; name it")
    written = write_agenteval(args.out)
    for path in written:
        print(path)
    print(f"wrote AgentGym's test files for {len(written)} families of the agenteval suite")
    return 0
