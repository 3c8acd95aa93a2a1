"""Oracle and random success on the first eval tasks of each environment (default config).

    python benchmarks/oracle_rates.py                        # every installed env outside AgentEval
    python benchmarks/oracle_rates.py --tasks 200 --envs llmgym/ConnectFour-v0 llmgym/Auction-v0

Plays the first ``--tasks`` tasks of the eval split (``env.task_ids("eval")[:N]``) of each
environment made with ``gymnasium.make(env_id)`` (its registered turn limit applies): once with
its oracle (as ``llmgym.testing.oracle_success_rate``, what the conformance suite checks) and
once with random valid actions (``env.sample_action``); episode ``i`` is reset with seed ``i``.
AgentEval's environments get their figures from ``benchmarks/agenteval_baselines.py``; pass
them with ``--envs`` to measure them here too. Each environment's row records its N, the date
and the commit it was measured at, and replaces that environment's previous row in
``benchmarks/results/oracle_rates.json``; ``python docs/generate.py`` puts the figures on the
environment pages.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from bench_utils import write_json

import llmgym
from llmgym import testing
from llmgym.suites import load_suite

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "oracle_rates.json"


def commit() -> str | None:
    """The checkout's commit (``None`` outside a git checkout)."""
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def random_success(env_id: str, task_ids: list[str]) -> dict[str, Any]:
    """Random valid actions on each task (the generator seeded by the task's index)."""
    env = gym.make(env_id)
    inner = env.unwrapped
    successes, steps = 0, []
    for index, task_id in enumerate(task_ids):
        rng = np.random.default_rng(index)
        trajectory = testing.run_episode(
            env,
            lambda _env, rng=rng: inner.sample_action(rng),  # type: ignore[attr-defined]
            seed=index,
            options={"task_id": task_id},
        )
        successes += bool(trajectory[-1][5].get("success"))
        steps.append(len(trajectory) - 1)
    env.close()
    return summary(successes, steps)


def oracle_success(env_id: str, task_ids: list[str]) -> dict[str, Any]:
    """The oracle on each task, as ``llmgym.testing.oracle_success_rate`` plays it but seeded
    (episode ``i`` is reset with seed ``i``: opponents' and worlds' randomness repeats); the
    tasks it failed are listed."""
    env = gym.make(env_id)
    failed, steps = [], []
    for index, task_id in enumerate(task_ids):
        trajectory = testing.run_episode(
            env, testing.oracle_policy, seed=index, options={"task_id": task_id}
        )
        if not trajectory[-1][5].get("success"):
            failed.append(task_id)
        steps.append(len(trajectory) - 1)
    env.close()
    return {**summary(len(task_ids) - len(failed), steps), "failed_tasks": failed}


def summary(successes: int, steps: list[int]) -> dict[str, Any]:
    return {
        "episodes": len(steps),
        "successes": successes,
        "success_rate": successes / len(steps),
        "mean_steps": round(sum(steps) / len(steps), 2),
        "min_steps": min(steps),
        "max_steps": max(steps),
    }


def measure(env_id: str, tasks: int) -> dict[str, Any]:
    """One environment's row: oracle and random on its first ``tasks`` eval tasks."""
    started, measured_at = time.perf_counter(), commit()
    probe = gym.make(env_id)
    task_ids = list(probe.unwrapped.task_ids("eval")[:tasks])  # type: ignore[attr-defined]
    probe.close()
    row = {
        "tasks": len(task_ids),
        "split": "eval",
        "config": "default",
        "oracle": oracle_success(env_id, task_ids),
        "random": random_success(env_id, task_ids),
    }
    row["seconds"] = round(time.perf_counter() - started, 1)
    row["date"] = datetime.date.today().isoformat()
    row["commit"] = measured_at
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=30, help="first N eval tasks (default 30)")
    parser.add_argument("--envs", nargs="+", help="environment ids (default: outside AgentEval)")
    args = parser.parse_args(argv)
    suite = set(load_suite("agenteval"))
    env_ids = args.envs or [e.id for e in llmgym.ENVIRONMENTS if e.id not in suite]
    previous = json.loads(RESULTS.read_text())["environments"] if RESULTS.exists() else {}
    environments = dict(previous)
    for env_id in env_ids:
        if not llmgym.get_entry(env_id).available:
            print(f"{env_id:28s} skipped: needs {llmgym.get_entry(env_id).install_hint}")
            continue
        row = measure(env_id, args.tasks)
        environments[env_id] = row
        print(
            f"{env_id:28s} oracle {row['oracle']['successes']}/{row['tasks']}, "
            f"random {row['random']['successes']}/{row['tasks']} ({row['seconds']} s)",
            flush=True,
        )
        order = [e.id for e in llmgym.ENVIRONMENTS]
        write_json(
            RESULTS,
            {
                "benchmark": "oracle_rates",
                "environments": dict(
                    sorted(environments.items(), key=lambda item: order.index(item[0]))
                ),
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
