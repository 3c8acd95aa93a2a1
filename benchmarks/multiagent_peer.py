"""llmgym's text Connect Four against PettingZoo's own ``connect_four_v3`` (array observations,
action masks), both through the AEC API, measured in the same run on one core.

    pip install -e '.[multiagent]' pygame     # pygame: PettingZoo's classic games import it
    python benchmarks/multiagent_peer.py

Both sides play random legal moves (from PettingZoo's action mask; from llmgym's
``info["admissible_actions"]``). Only the time inside ``env.last()`` (which builds the
observation) and ``env.step()`` counts. Writes ``benchmarks/results/multiagent_peer.json``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from bench_utils import pin_to_one_core, write_json

from llmgym.cli import format_table


def _steps_per_s(env, choose, seconds: float) -> tuple[float, float]:
    """(steps per second, games per second) of random legal play."""
    rng = np.random.default_rng(0)
    spent, steps, games = 0.0, 0, 0
    while spent < seconds:
        start = time.perf_counter()
        env.reset(seed=games)
        spent += time.perf_counter() - start
        games += 1
        while env.agents:
            start = time.perf_counter()
            observation, _, terminated, truncated, info = env.last()
            spent += time.perf_counter() - start
            action = None if terminated or truncated else choose(observation, info, rng)
            start = time.perf_counter()
            env.step(action)
            spent += time.perf_counter() - start
            steps += 1
    return steps / spent, games / spent


def _pettingzoo_move(observation, info, rng) -> int:
    legal = np.flatnonzero(observation["action_mask"])
    return int(legal[rng.integers(len(legal))])


def _llmgym_move(observation, info, rng) -> str:
    legal = info["admissible_actions"]
    return legal[int(rng.integers(len(legal)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--json", default="benchmarks/results/multiagent_peer.json")
    args = parser.parse_args(argv)
    from pettingzoo.classic import connect_four_v3

    from llmgym.envs.multiagent import connect_four

    pin_to_one_core()
    sides = {
        "pettingzoo connect_four_v3 (arrays)": (connect_four_v3.env(), _pettingzoo_move),
        "llmgym connect_four_v0 (text, opening_plies=0)": (
            connect_four.env(opening_plies=0),
            _llmgym_move,
        ),
    }
    rows = []
    for name, (env, choose) in sides.items():
        steps, games = _steps_per_s(env, choose, args.seconds)
        rows.append({"environment": name, "steps_per_s": steps, "games_per_s": games})
    ratio = rows[1]["steps_per_s"] / rows[0]["steps_per_s"]
    shown = [{k: round(v) if isinstance(v, float) else v for k, v in r.items()} for r in rows]
    print(format_table(shown, ["environment", "steps_per_s", "games_per_s"]))
    print(f"\nllmgym / PettingZoo steps per second: {ratio:.2f}")
    payload = {
        "benchmark": "multiagent_peer",
        "seconds_per_measurement": args.seconds,
        "results": rows,
        "llmgym_over_pettingzoo_steps_ratio": ratio,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
