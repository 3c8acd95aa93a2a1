"""Steps and resets per second of every registered environment, on one CPU core.

    python benchmarks/throughput.py                      # all available environments
    python benchmarks/throughput.py llmgym/Wordle-v0     # some of them
    python benchmarks/throughput.py --seconds 2 --json benchmarks/results/throughput.json

Environments are made with ``gymnasium.make`` (wrappers included, as users run them). Only the
time spent inside ``env.step`` / ``env.reset`` is counted: choosing the action (the oracle's
planning, a random draw) is excluded. Three figures per environment:

* ``oracle_steps_per_s`` — replaying recorded oracle solutions (recorded first, so the
  planner's own work does not disturb the timing);
* ``random_steps_per_s`` — stepping with random valid actions;
* ``resets_per_s`` — resets to random tasks, alternating train and eval.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from bench_utils import machine, pin_to_one_core, write_json

import llmgym
from llmgym.cli import format_table

TARGETS: dict[str, dict[str, float]] = {
    "llmgym/Wordle-v0": {
        "oracle_steps_per_s": 20_000,
        "random_steps_per_s": 20_000,
        "resets_per_s": 2_000,
    },
    "llmgym/Maze-v0": {
        "oracle_steps_per_s": 20_000,
        "random_steps_per_s": 20_000,
        "resets_per_s": 2_000,
    },
    "llmgym/TextCraft-v0": {
        "oracle_steps_per_s": 5_000,
        "random_steps_per_s": 5_000,
        "resets_per_s": 2_000,
    },
    # Every SQL step parses the reply and runs a real query in the sandbox (the gold queries' cost
    # is measured by benchmarks/sql_sandbox.py; joins with grouping cost most), then grades.
    # 2,000 steps/s keeps the environment under 0.1% of an episode's time next to an LLM call.
    "llmgym/SQL-v0": {
        "oracle_steps_per_s": 2_000,
        "random_steps_per_s": 2_000,
        "resets_per_s": 5_000,
    },
    "llmgym/Household-v0": {"oracle_steps_per_s": 5_000, "random_steps_per_s": 5_000},
    # Multi-agent games: every step also plays the scripted opponents' moves.
    "llmgym/ConnectFour-v0": {
        "oracle_steps_per_s": 2_000,
        "random_steps_per_s": 2_000,
        "resets_per_s": 800,
    },
    "llmgym/Negotiation-v0": {
        "oracle_steps_per_s": 1_500,
        "random_steps_per_s": 1_500,
        "resets_per_s": 700,
    },
    "llmgym/Auction-v0": {
        "oracle_steps_per_s": 2_000,
        "random_steps_per_s": 2_000,
        "resets_per_s": 1_000,
    },
    "llmgym/WebShop-v0": {
        "oracle_steps_per_s": 1_000,
        "random_steps_per_s": 1_000,
        "resets_per_s": 500,
    },
    # Issue 19: at least 1,000 steps/s in-process on a typical page. A step that loads a page
    # runs the site's WSGI app (sqlite queries, HTML), parses the HTML into the accessibility
    # tree (cached per page) and draws the tree in view; a reset that follows a write reloads
    # the written databases from their pristine serialized images.
    "llmgym/WebArena-v0": {
        "oracle_steps_per_s": 1_000,
        "random_steps_per_s": 1_000,
        "resets_per_s": 100,
    },
    "llmgym/Heist-v0": {"oracle_steps_per_s": 20_000, "random_steps_per_s": 20_000},
    # Tool-use environments (issue 6): a step parses JSON, validates arguments, runs the tool and
    # serialises its JSON result. 5,000 steps/s keeps the environment under 1% of a rollout's time
    # next to an LLM call (>= 20 ms per turn) even for a batch of 16 episodes on one core. Resets
    # of Weather, Movie and Academia only draw a goal over a shared read-only service; Sheet
    # generates a workbook and Todo an account per task (Todo's eval split rejects accounts that
    # hash to train, so an eval reset may draw several), hence their lower reset targets.
    "llmgym/Weather-v0": {
        "oracle_steps_per_s": 5_000,
        "random_steps_per_s": 5_000,
        "resets_per_s": 1_000,
    },
    "llmgym/Movie-v0": {
        "oracle_steps_per_s": 5_000,
        "random_steps_per_s": 5_000,
        "resets_per_s": 1_000,
    },
    "llmgym/Academia-v0": {
        "oracle_steps_per_s": 5_000,
        "random_steps_per_s": 5_000,
        "resets_per_s": 1_000,
    },
    "llmgym/Sheet-v0": {
        "oracle_steps_per_s": 5_000,
        "random_steps_per_s": 5_000,
        "resets_per_s": 500,
    },
    "llmgym/Todo-v0": {
        "oracle_steps_per_s": 5_000,
        "random_steps_per_s": 5_000,
        "resets_per_s": 300,
    },
    # Issue 7 sets no throughput for the engine-backed environments (TextWorld's target is a
    # stepping overhead under 5% over its own gym interface: benchmarks/textworld_overhead.py).
    # These floors guard against regressions; the engines set the pace.
    "llmgym/TextWorld-v0": {"oracle_steps_per_s": 50, "random_steps_per_s": 50, "resets_per_s": 10},
    "llmgym/BabyAI-v0": {"oracle_steps_per_s": 300, "random_steps_per_s": 150, "resets_per_s": 20},
    "llmgym/SciWorld-v0": {"oracle_steps_per_s": 10, "random_steps_per_s": 5, "resets_per_s": 0.5},
    # Issue 17: a SearchQA search is one BM25 query over the 5,840-article FTS5 index (the
    # words' stems and document frequencies are cached) and formats the top passages; 2,000
    # steps/s keeps it under 1% of a turn next to an LLM call. A reset only picks a question.
    "llmgym/SearchQA-v0": {
        "oracle_steps_per_s": 2_000,
        "random_steps_per_s": 2_000,
        "resets_per_s": 5_000,
    },
}
"""Targets from the issues that introduced each environment (steps or resets per second)."""

RESET_POOLS: dict[str, int] = {"llmgym/TextWorld-v0": 20}
"""Environments whose first reset of a task is expensive (TextWorld compiles each game once):
their resets are measured over the first N tasks of each split, compiled beforehand."""


def _steps_per_s(env: gym.Env, choose, seconds: float) -> float:
    env.reset(seed=0)
    inner = env.unwrapped
    spent, steps, episode = 0.0, 0, 0
    deadline = time.perf_counter() + seconds * 4
    while spent < seconds and time.perf_counter() < deadline:
        action = choose(inner)
        start = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        spent += time.perf_counter() - start
        steps += 1
        if terminated or truncated:
            episode += 1
            env.reset(options={"split": ("train", "eval")[episode % 2]})
    return steps / spent


def _oracle_steps_per_s(env: gym.Env, seconds: float) -> float:
    """Record oracle episodes (at most 2,000 steps or 10 s of planning), then replay them."""
    inner = env.unwrapped
    episodes: list[tuple[str, list[str]]] = []
    recorded, deadline = 0, time.perf_counter() + 10
    while recorded < 2_000 and time.perf_counter() < deadline:
        split = ("train", "eval")[len(episodes) % 2]
        _, info = env.reset(seed=len(episodes), options={"split": split})
        actions: list[str] = []
        terminated = truncated = False
        while not (terminated or truncated):
            actions.append(inner.oracle_action())
            _, _, terminated, truncated, _ = env.step(actions[-1])
        episodes.append((info["task_id"], actions))
        recorded += len(actions)
    spent, steps = _replay(env, episodes, seconds)
    return steps / spent


def _replay(
    env: gym.Env, episodes: list[tuple[str, list[str]]], seconds: float
) -> tuple[float, int]:
    """Replay recorded episodes until ``seconds`` of stepping are spent (at least one pass)."""
    spent, steps = 0.0, 0
    while True:
        for index, (task_id, actions) in enumerate(episodes):
            env.reset(seed=index, options={"task_id": task_id})
            for action in actions:
                start = time.perf_counter()
                env.step(action)
                spent += time.perf_counter() - start
                steps += 1
        if spent >= seconds:
            return spent, steps


def _resets_per_s(env: gym.Env, seconds: float, pool: int | None = None) -> float:
    inner = env.unwrapped
    counts = {split: len(inner.task_ids(split)) for split in ("train", "eval")}
    if pool is not None:
        counts = {split: min(count, pool) for split, count in counts.items()}
        for split, count in counts.items():  # compile (or load) every game of the pool first
            for task_id in inner.task_ids(split)[:count]:
                env.reset(options={"task_id": task_id})
    rng = np.random.default_rng(0)
    spent, resets = 0.0, 0
    while spent < seconds:
        split = ("train", "eval")[resets % 2]
        task_id = inner.task_ids(split)[int(rng.integers(counts[split]))]
        start = time.perf_counter()
        env.reset(seed=resets, options={"task_id": task_id})
        spent += time.perf_counter() - start
        resets += 1
    return resets / spent


def measure(env_id: str, seconds: float) -> dict[str, float | str]:
    """The three figures for ``env_id``."""
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    row: dict[str, float | str] = {"env_id": env_id}
    row["oracle_steps_per_s"] = _oracle_steps_per_s(env, seconds)
    row["random_steps_per_s"] = _steps_per_s(env, lambda inner: inner.sample_action(rng), seconds)
    row["resets_per_s"] = _resets_per_s(env, seconds, RESET_POOLS.get(env_id))
    row["load_average_1m"] = machine().get("load_average_1m", "")
    env.close()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("env_ids", nargs="*", help="default: every available environment")
    parser.add_argument("--seconds", type=float, default=1.5, help="time per measurement")
    parser.add_argument("--json", default="benchmarks/results/throughput.json", help="output file")
    args = parser.parse_args(argv)
    pin_to_one_core()
    env_ids = args.env_ids or [e.id for e in llmgym.ENVIRONMENTS if e.available]
    rows = []
    for env_id in env_ids:
        row = measure(env_id, args.seconds)
        targets = TARGETS.get(env_id, {})
        row["meets_targets"] = "yes" if all(row[k] >= v for k, v in targets.items()) else "NO"
        if not targets:
            row["meets_targets"] = "-"
        rows.append(row)
        print(f"measured {env_id}", file=sys.stderr)
    columns = [
        "env_id",
        "oracle_steps_per_s",
        "random_steps_per_s",
        "resets_per_s",
        "meets_targets",
    ]
    print(
        format_table(
            [{k: (round(v) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
            columns,
        )
    )
    payload = {
        "benchmark": "throughput",
        "seconds_per_measurement": args.seconds,
        "targets": {env_id: TARGETS[env_id] for env_id in env_ids if env_id in TARGETS},
        "results": rows,
    }
    path = Path(args.json)
    if path.exists():  # keep figures of environments not measured in this run
        previous = json.loads(path.read_text())
        measured = {r["env_id"] for r in rows}
        payload["results"] = [
            r for r in previous.get("results", []) if r["env_id"] not in measured
        ] + rows
        payload["targets"] = {**previous.get("targets", {}), **payload["targets"]}
    write_json(path, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
