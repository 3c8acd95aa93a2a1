"""``llmgym match``: agents play a multi-agent game against each other."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import llmgym
from llmgym.cli import options
from llmgym.cli.common import EXIT_INTERRUPTED, format_table, integer


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "match", help="play agents against each other in a multi-agent game; print win rates"
    )
    parser.add_argument(
        "game", help="connect_four, negotiation, auction (or a single-agent id of one)"
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="PLAYER",
        help="one per seat: oracle, random, human, openai:MODEL or a scripted player of the "
        "game (greedy, cautious, conceder, boulware, shader, truthful)",
    )
    parser.add_argument("--games", type=integer(1), default=20, help="games to play (seats rotate)")
    parser.add_argument(
        "--split", choices=("train", "eval"), default="eval", help="the split games come from"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the standings and games as JSON")
    parser.add_argument(
        "--transcripts", metavar="PATH", help="also append every game with its conversations"
    )
    options.add_agent_options(parser, agent=False)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from llmgym.runner.matches import make_player, run_match

    if len(args.agents) < 2:
        raise ValueError("a match needs at least two agents (--agents A B ...)")
    agents = [
        make_player(
            spec, args.game, seed=args.seed, react=args.react, **options.openai_options(args, spec)
        )
        for spec in args.agents
    ]
    for agent in agents:  # a model server that is down fails here, not in game 1
        agent.preflight()
    transcripts = Path(args.transcripts) if args.transcripts else None

    def save(record: Any) -> None:
        if transcripts is not None:
            transcripts.parent.mkdir(parents=True, exist_ok=True)
            with transcripts.open("a", encoding="utf-8") as stream:
                stream.write(json.dumps(record.to_dict()) + "\n")

    result = run_match(
        args.game,
        agents,
        games=args.games,
        split=args.split,
        seed=args.seed,
        config=args.config,
        concurrency=args.concurrency,
        progress=not args.quiet,
        keep_messages=transcripts is not None,
        on_game=save,
        stop_on_interrupt=True,
    )
    rows = []
    for row in result.standings():
        low, high = row.pop("win_ci95")
        rows.append({**row, "win_ci95": f"{low:.2f}-{high:.2f}"})
    print(f"{result.game}: {len(result.games)} games on the {result.split} split")
    columns = ["agent", "games", "wins", "draws", "losses", "win_rate", "win_ci95"]
    columns += ["mean_score", "success_rate", "invalid_moves", "forfeits", "tokens", "errors"]
    print(format_table(rows, columns))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"llmgym_version": llmgym.__version__, "react": args.react, **result.to_dict()}
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {path}")
    if result.interrupted:
        kept = f" (and {args.json})" if args.json else ""
        print(
            f"llmgym: interrupted; the standings{kept} count the {len(result.games)} finished "
            f"games of {args.games}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return 1 if result.games and all(record.error for record in result.games) else 0
