"""``llmgym envgen``: design environment configs with an LLM (EnvGen)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from llmgym.cli.common import ENV_ID_HELP, integer, resolve_id


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("envgen", help="design environment configs with an LLM (EnvGen)")
    parser.add_argument("env_id", help=ENV_ID_HELP)
    parser.add_argument(
        "--llm", default="offline", help="offline, frontier, openai:MODEL or replay:FOLDER"
    )
    parser.add_argument(
        "--prompt",
        choices=("auto", "envgen", "generic"),
        default="auto",
        help="openai:MODEL's prompt: EnvGen's Crafter prompt (auto for Crafter) or the generic one",
    )
    parser.add_argument("--base-url", help="chat-completions API root (default: $OPENAI_BASE_URL)")
    parser.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    parser.add_argument("--n", type=integer(1), default=4, help="environments to design")
    parser.add_argument("--out", help="run folder (continued when it exists)")
    parser.add_argument("--stats", help="per-skill success rates (JSON) for an adaptation step")
    parser.add_argument(
        "--repair-rounds", type=integer(0), default=2, help="retries after an invalid design reply"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from llmgym.envgen import DesignSpec, SkillStats, make_designer

    spec = DesignSpec.from_env_id(resolve_id(args.env_id))
    designer = make_designer(
        spec,
        args.llm,
        n=args.n,
        run_folder=args.out,
        base_url=args.base_url,
        api_key=args.api_key,
        repair_rounds=args.repair_rounds,
        prompt=args.prompt,
    )
    stats = SkillStats.load(args.stats) if args.stats else None
    designs = designer.propose(stats)
    if designer.choices is not None:
        print(f"Chosen: {designer.choices['summary']}\n")
    for number, design in enumerate(designs, start=1):
        print(f"Environment {number}: {design.purpose}\n  {json.dumps(design.config)}")
    if args.out:
        saved = Path(args.out) / "designs.json"
        print(f"\nsaved to {saved} (every prompt and reply: events.jsonl)")
    return 0
