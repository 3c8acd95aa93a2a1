"""How often Crafter's scripted oracle unlocks each achievement in default worlds.

    python benchmarks/crafter_oracle.py --worlds 10   # -> benchmarks/results/crafter_oracle.json

Plays ``llmgym/Crafter-v0`` with ``target="none"`` (the planner works through all 22
achievements) on the train tasks 0..worlds-1 (Crafter's seeds) for at most 10,000 steps each,
stopping early once all 22 are unlocked or the agent dies, and reports per-achievement rates,
the median step of each first unlock, and Crafter's score of the oracle.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import gymnasium as gym
from bench_utils import write_json

import llmgym  # noqa: F401
from llmgym.cli import format_table
from llmgym.envs.crafter import ACHIEVEMENTS, score

BASIC = (
    "collect_wood", "place_table", "make_wood_pickaxe", "collect_stone", "place_stone",
    "make_stone_pickaxe", "collect_coal", "collect_sapling", "place_plant", "collect_drink",
    "eat_cow",
)  # fmt: skip
"""The achievements the issue asks the oracle to unlock in most default worlds."""


def play(seed: int, max_steps: int) -> dict:
    env = gym.make("llmgym/Crafter-v0", target="none", length=max_steps)
    env.reset(seed=seed)
    inner = env.unwrapped
    first: dict[str, int] = {}
    steps, died = 0, False
    start = time.perf_counter()
    while steps < max_steps:
        _, _, terminated, truncated, info = env.step(inner.oracle_action())
        steps += 1
        for name in info["achievements"]["new"]:
            first[name] = steps
        if terminated:
            died = True
            break
        if truncated or len(first) == len(ACHIEVEMENTS):
            break
    return {"seed": seed, "steps": steps, "died": died, "first_unlock": first,
            "seconds": time.perf_counter() - start}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", type=int, default=10)
    parser.add_argument("--max-steps", type=int, default=10_000)
    parser.add_argument("--json", default="benchmarks/results/crafter_oracle.json")
    args = parser.parse_args(argv)
    episodes = []
    for seed in range(args.worlds):
        episodes.append(play(seed, args.max_steps))
        e = episodes[-1]
        print(f"world {seed}: {len(e['first_unlock'])}/22 in {e['steps']} steps"
              f"{' (died)' if e['died'] else ''}", file=sys.stderr)  # fmt: skip
    rates = {
        name: 100.0 * sum(name in e["first_unlock"] for e in episodes) / len(episodes)
        for name in ACHIEVEMENTS
    }
    rows = []
    for name in ACHIEVEMENTS:
        when = [e["first_unlock"][name] for e in episodes if name in e["first_unlock"]]
        median = int(statistics.median(when)) if when else "-"
        rows.append({"achievement": name, "success_%": round(rates[name]), "first_step": median})
    print(format_table(rows, ["achievement", "success_%", "first_step"]))
    basic = sum(all(n in e["first_unlock"] for n in BASIC) for e in episodes) / len(episodes)
    print(f"all 11 basic achievements: {basic:.0%} of worlds; Crafter score {score(rates):.1f}%")
    payload = {
        "benchmark": "crafter_oracle",
        "worlds": args.worlds,
        "max_steps": args.max_steps,
        "success_rates_percent": rates,
        "all_basic_achievements_rate": basic,
        "score_percent": score(rates),
        "deaths": sum(e["died"] for e in episodes),
        "episodes": episodes,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
