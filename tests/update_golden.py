"""Rewrite tests/golden/instances.json: pinned fingerprints of a few task instances per environment.

    python tests/update_golden.py

Run it only when an environment's generator changes on purpose (and bump its version then):
the golden test exists to catch instances that change by accident.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import gymnasium as gym

import llmgym

if not __package__:  # run as a script: tests/ is on sys.path, the repository root is not
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.environments import original_data_only

GOLDEN = Path(__file__).resolve().parent / "golden" / "instances.json"
TASK_IDS = ("train/00000", "train/00003", "eval/00000", "eval/00007")


def fingerprint(env_id: str, task_id: str) -> str:
    """A short hash of the task's first observation and its content signature. The reset is
    seeded: in a game against a scripted opponent that moves first, its (random) first move is
    part of the first observation."""
    env = gym.make(env_id).unwrapped
    observation, _ = env.reset(seed=0, options={"task_id": task_id})
    if not isinstance(observation, str):  # pixel observations: their bytes
        observation = hashlib.sha256(observation.tobytes()).hexdigest()
    digest = hashlib.sha256(f"{observation}\n{env.instance_key()}".encode()).hexdigest()[:20]
    env.close()
    return digest


def current() -> dict[str, dict[str, str]]:
    """Fingerprints of every available environment."""
    return {
        entry.id: {task_id: fingerprint(entry.id, task_id) for task_id in TASK_IDS}
        for entry in llmgym.ENVIRONMENTS
        if entry.available and not original_data_only(entry)
    }


if __name__ == "__main__":
    existing = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    GOLDEN.write_text(json.dumps({**existing, **current()}, indent=2, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
