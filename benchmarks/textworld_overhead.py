"""llmgym/TextWorld-v0 against TextWorld's own gym interface, on the same games and commands.

    python benchmarks/textworld_overhead.py                 # 10 cached games, 5 rounds
    python benchmarks/textworld_overhead.py --games 20 --rounds 7

Both sides request the same information from TextWorld (admissible commands, policy commands,
objective, score, max score, won/lost) and replay the same recorded oracle commands on the same
compiled games; only the time inside ``step`` (and, separately, ``reset``) is counted. The two
sides alternate round by round so that machine noise hits both alike. The overhead is
``llmgym time / textworld time - 1`` per step (target: under 5%).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import gymnasium as gym
import textworld
import textworld.gym
from bench_utils import pin_to_one_core, write_json

from llmgym.envs.textworld import _INFOS, TextWorldConfig, pregenerate


def _record(env: gym.Env, task_ids: list[str]) -> list[list[str]]:
    """The oracle's commands for each task."""
    episodes = []
    for task_id in task_ids:
        env.reset(options={"task_id": task_id})
        actions: list[str] = []
        done = False
        while not done:
            actions.append(env.unwrapped.oracle_action())
            *_, terminated, truncated, _ = env.step(actions[-1])
            done = terminated or truncated
        episodes.append(actions)
    return episodes


def _time_textworld(games: list[Path], episodes: list[list[str]]) -> tuple[float, float, int]:
    """Seconds spent in step and in reset (loading the game included), and steps taken."""
    infos = textworld.EnvInfos(**_INFOS)
    step_time = reset_time = 0.0
    steps = 0
    for game, actions in zip(games, episodes, strict=True):
        env = textworld.gym.make(
            textworld.gym.register_game(str(game), infos, max_episode_steps=100)
        )
        start = time.perf_counter()
        env.reset()
        reset_time += time.perf_counter() - start
        for action in actions:
            start = time.perf_counter()
            env.step(action)
            step_time += time.perf_counter() - start
            steps += 1
        env.close()
    return step_time, reset_time, steps


def _time_llmgym(
    env: gym.Env, task_ids: list[str], episodes: list[list[str]]
) -> tuple[float, float, int]:
    step_time = reset_time = 0.0
    steps = 0
    for task_id, actions in zip(task_ids, episodes, strict=True):
        start = time.perf_counter()
        env.reset(options={"task_id": task_id})
        reset_time += time.perf_counter() - start
        for action in actions:
            start = time.perf_counter()
            env.step(action)
            step_time += time.perf_counter() - start
            steps += 1
    return step_time, reset_time, steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="eval games (generated if needed)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating timing rounds")
    parser.add_argument("--config", default="{}", help="TextWorld config overrides as JSON")
    parser.add_argument("--json", default="benchmarks/results/textworld_overhead.json")
    args = parser.parse_args(argv)
    pin_to_one_core()
    config = TextWorldConfig.from_dict(json.loads(args.config))
    games = pregenerate(config, "eval", args.games)
    task_ids = [f"eval/{index:05d}" for index in range(args.games)]
    env = gym.make("llmgym/TextWorld-v0", config=config)
    episodes = _record(env, task_ids)
    rows: dict[str, list[tuple[float, float, int]]] = {"textworld": [], "llmgym": []}
    for _ in range(args.rounds):
        rows["textworld"].append(_time_textworld(games, episodes))
        rows["llmgym"].append(_time_llmgym(env, task_ids, episodes))
    env.close()
    summary = {}
    for side, runs in rows.items():
        steps = runs[0][2]
        summary[side] = {
            "us_per_step": statistics.median(r[0] for r in runs) / steps * 1e6,
            "ms_per_reset": statistics.median(r[1] for r in runs) / len(task_ids) * 1e3,
            "steps_per_round": steps,
        }
    ratio = summary["llmgym"]["us_per_step"] / summary["textworld"]["us_per_step"]
    reset_ratio = summary["llmgym"]["ms_per_reset"] / summary["textworld"]["ms_per_reset"]
    print(f"{'side':<10} {'us/step':>10} {'ms/reset':>10}")
    for side, row in summary.items():
        print(f"{side:<10} {row['us_per_step']:>10.0f} {row['ms_per_reset']:>10.1f}")
    print(f"step overhead of llmgym: {ratio - 1:+.1%} (target: under +5%)")
    print(f"reset time ratio llmgym/textworld: {reset_ratio:.2f}")
    payload = {
        "benchmark": "textworld_overhead",
        "textworld_version": textworld.__version__,
        "config": config.to_dict(),
        "games": args.games,
        "rounds": args.rounds,
        "results": summary,
        "step_overhead": ratio - 1,
        "reset_ratio": reset_ratio,
        "meets_target": ratio - 1 < 0.05,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
