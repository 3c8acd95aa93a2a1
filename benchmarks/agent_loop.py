"""Cost of the agent loop: ReAct + chat-history wrappers per step, and rollout concurrency.

    python benchmarks/agent_loop.py [--delays 0.02 0.2] [--json benchmarks/results/agent_loop.json]

1. Wrapper overhead: recorded oracle episodes are replayed through the raw environment and
   through ``ChatHistory(ReActWrapper(env))`` (replies in ``Thought: ...\\nAction: ...`` form);
   the difference of the mean step times is the wrappers' cost (target: under 50 µs per step).
2. Rollout throughput: a scripted agent that answers after a fixed delay (standing in for an LLM
   server) plays Maze (whose oracle costs microseconds) at concurrency 1, 8 and 64; throughput
   should scale nearly linearly. Worker threads share one interpreter, so the ceiling is one core
   running every step's Python (environment, wrappers, trajectory); the results show at which
   reply delay and concurrency that ceiling binds.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import gymnasium as gym
from bench_utils import write_json

from llmgym.agents import Agent
from llmgym.cli import format_table
from llmgym.runner.rollout import rollout
from llmgym.wrappers import make_chat_env

ENV_IDS = ("llmgym/Wordle-v0", "llmgym/Maze-v0", "llmgym/TextCraft-v0")
OVERHEAD_TARGET_US = 50.0


def _record(env_id: str, episodes: int) -> list[tuple[str, list[str]]]:
    env = gym.make(env_id)
    recorded = []
    for seed in range(episodes):
        _, info = env.reset(seed=seed)
        actions: list[str] = []
        while True:
            actions.append(env.unwrapped.oracle_action())
            *_, terminated, truncated, _ = env.step(actions[-1])
            if terminated or truncated:
                break
        recorded.append((info["task_id"], actions))
    return recorded


def _mean_step_us(
    env: gym.Env, episodes: list[tuple[str, list[str]]], wrap: bool, repeats: int
) -> float:
    spent, steps = 0.0, 0
    for _ in range(repeats):
        for seed, (task_id, actions) in enumerate(episodes):
            env.reset(seed=seed, options={"task_id": task_id})
            for action in actions:
                message = f"Thought: I follow my plan.\nAction: {action}" if wrap else action
                start = time.perf_counter()
                env.step(message)
                spent += time.perf_counter() - start
                steps += 1
    return spent / steps * 1e6


def wrapper_overhead(repeats: int) -> list[dict[str, Any]]:
    rows = []
    for env_id in ENV_IDS:
        episodes = _record(env_id, 40)
        raw = _mean_step_us(gym.make(env_id), episodes, wrap=False, repeats=repeats)
        wrapped = _mean_step_us(make_chat_env(env_id), episodes, wrap=True, repeats=repeats)
        rows.append(
            {
                "env_id": env_id,
                "raw_step_us": raw,
                "react_chat_step_us": wrapped,
                "overhead_us": wrapped - raw,
                "meets_target": "yes" if wrapped - raw < OVERHEAD_TARGET_US else "NO",
            }
        )
    return rows


class DelayedOracle(Agent):
    """The oracle, answering after ``delay`` seconds like a model server would."""

    name = "delayed-oracle"

    def __init__(self, delay: float) -> None:
        super().__init__(react=True)
        self.delay = delay
        self._env: gym.Env | None = None

    def reset(self, env: gym.Env | None, *, seed: int | None = None) -> None:
        super().reset(env, seed=seed)
        self._env = env

    def act(self, observation: str, info: dict[str, Any]) -> str:
        time.sleep(self.delay)
        return f"Thought: plan\nAction: {self._env.unwrapped.oracle_action()}"


def rollout_scaling(delay: float, levels: tuple[int, ...]) -> list[dict[str, Any]]:
    rows = []
    base = None
    for concurrency in levels:
        episodes = max(16, 4 * concurrency)  # several episodes per worker: a steady state
        start = time.perf_counter()
        trajectories = rollout(
            "llmgym/Maze-v0",
            DelayedOracle(delay),
            episodes=episodes,
            concurrency=concurrency,
            progress=False,
        )
        elapsed = time.perf_counter() - start
        steps = sum(len(t.turns) for t in trajectories)
        rate = steps / elapsed
        base = base or rate
        rows.append(
            {
                "concurrency": concurrency,
                "episodes": episodes,
                "agent_delay_s": delay,
                "steps_per_s": rate,
                "speedup": rate / base,
                "ideal_speedup": float(concurrency),
                "efficiency": rate / base / concurrency,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--delays",
        type=float,
        nargs="+",
        default=[0.02, 0.2],
        help="scripted agent latencies in seconds, one scaling table each",
    )
    parser.add_argument("--repeats", type=int, default=5, help="replays per environment")
    parser.add_argument("--json", default="benchmarks/results/agent_loop.json")
    args = parser.parse_args(argv)
    overhead = wrapper_overhead(args.repeats)
    print("ReAct + chat history wrapper overhead per step (one core):")
    print(
        format_table(
            [
                {k: round(v, 1) if isinstance(v, float) else v for k, v in r.items()}
                for r in overhead
            ],
            list(overhead[0]),
        )
    )
    scaling = []
    for delay in args.delays:
        rows = rollout_scaling(delay, (1, 8, 64))
        print(f"\nRollout throughput, scripted agent answering after {delay * 1000:.0f} ms (Maze):")
        print(
            format_table(
                [
                    {k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()}
                    for r in rows
                ],
                list(rows[0]),
            )
        )
        scaling.extend(rows)
    payload = {
        "benchmark": "agent_loop",
        "overhead_target_us": OVERHEAD_TARGET_US,
        "wrapper_overhead": overhead,
        "rollout_scaling": scaling,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
