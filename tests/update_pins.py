"""Rewrite tests/golden/pins.json: what must never change by accident.

    python tests/update_pins.py [ENV_ID ...]

Per environment it holds:

* ``suite``: one digest over every instance of the frozen AgentEval suite (each task's first
  observation and instance identity, in suite order);
* ``oracle``: for two task ids, a digest of a seeded oracle run (every step's observation,
  reward, flags and info), at most :data:`ORACLE_STEPS` steps.

Run it only when an environment's generator or rules change on purpose (and bump its version
then). With ids given, only those environments are recomputed.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import llmgym
from llmgym.suites import load_suite

if not __package__:  # run as a script: tests/ is on sys.path, the repository root is not
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.environments import original_data_only

PINS = Path(__file__).resolve().parent / "golden" / "pins.json"
ORACLE_TASK_IDS = ("train/00001", "eval/00002")
ORACLE_STEPS = 60


def _observation_text(observation: Any) -> str:
    if isinstance(observation, str):
        return observation
    return hashlib.sha256(np.ascontiguousarray(observation).tobytes()).hexdigest()


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_jsonable(item) for item in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    return value


def suite_digest(env_id: str, task_ids: list[str]) -> str:
    """A digest over the given instances: each one's first observation and identity."""
    env = gym.make(env_id).unwrapped
    digest = hashlib.sha256()
    for task_id in task_ids:
        observation, _ = env.reset(seed=0, options={"task_id": task_id})
        digest.update(f"{task_id}\n{_observation_text(observation)}\n".encode())
        digest.update(f"{env.instance_key()}\n".encode())
    env.close()
    return digest.hexdigest()


def oracle_digest(env_id: str, task_id: str) -> str:
    """A digest of a seeded oracle run on ``task_id``: every step's result."""
    env = gym.make(env_id).unwrapped
    observation, info = env.reset(seed=0, options={"task_id": task_id})
    digest = hashlib.sha256()
    record = [_observation_text(observation), _jsonable(info)]
    digest.update(json.dumps(record, sort_keys=True, default=repr).encode())
    for _ in range(ORACLE_STEPS):
        action = env.oracle_action()
        observation, reward, terminated, truncated, info = env.step(action)
        record = [
            _jsonable(action),
            _observation_text(observation),
            float(reward),
            bool(terminated),
            bool(truncated),
            _jsonable(info),
        ]
        digest.update(json.dumps(record, sort_keys=True, default=repr).encode())
        if terminated or truncated:
            break
    env.close()
    return digest.hexdigest()


def pins_of(env_id: str) -> dict[str, Any]:
    """The pins of one environment."""
    suite = load_suite("agenteval").get(env_id)
    pins: dict[str, Any] = {
        "oracle": {task_id: oracle_digest(env_id, task_id) for task_id in ORACLE_TASK_IDS}
    }
    if suite is not None:
        pins["suite"] = suite_digest(env_id, suite)
    return pins


if __name__ == "__main__":
    wanted = sys.argv[1:] or [
        entry.id
        for entry in llmgym.ENVIRONMENTS
        if entry.available and not original_data_only(entry)
    ]
    existing = json.loads(PINS.read_text()) if PINS.exists() else {}
    for env_id in wanted:
        existing[env_id] = pins_of(env_id)
        print(f"{env_id}: {existing[env_id]}", file=sys.stderr)
    PINS.write_text(json.dumps(existing, indent=2, sort_keys=True) + "\n")
    print(f"wrote {PINS}", file=sys.stderr)
