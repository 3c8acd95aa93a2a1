"""The frozen evaluation suites name real eval tasks."""

from __future__ import annotations

import gymnasium as gym
import pytest

import llmgym
from llmgym.suites import load_suite

SUITE = load_suite("agenteval")


def test_suite_shape() -> None:
    assert set(load_suite("smoke")) == set(SUITE)
    assert all(len(ids) == 3 for ids in load_suite("smoke").values())
    with pytest.raises(ValueError, match="unknown suite"):
        load_suite("nope")


@pytest.mark.parametrize("env_id", sorted(SUITE))
def test_suite_tasks_exist_in_the_eval_split(env_id: str) -> None:
    entry = llmgym.get_entry(env_id)
    if not entry.available:
        pytest.skip(f"needs {entry.install_hint}")
    ids = SUITE[env_id]
    assert len(ids) == len(set(ids)), "duplicate task ids"
    eval_ids = set(gym.make(env_id).unwrapped.task_ids("eval"))
    assert set(ids) <= eval_ids
