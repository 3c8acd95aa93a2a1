"""The conformance suite, parametrised over every registered environment.

A new environment added to ``llmgym.envs.ENVIRONMENTS`` is checked here without new code. An
environment may tune the suite in ``SETTINGS`` (fewer oracle episodes for slow engines, a
``slow`` mark), never skip a check.
"""

from __future__ import annotations

import functools

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmgym import testing
from tests.environments import environment_params

SETTINGS: dict[str, dict] = {
    # Crafter: slow resets and a planner per step; the oracle pursues each task's target
    # achievement (one of the 22, drawn by the task id) and misses a few (its rate is on
    # docs/environments/crafter.md, from benchmarks/oracle_rates.py), so its bar is below the
    # default.
    "llmgym/Crafter-v0": {"slow": True, "oracle_episodes": 12, "oracle_bar": 0.8},
    # the pixel variant is registered without a target (plain Crafter); checked with task targets
    "llmgym/CrafterPixels-v0": {
        "slow": True,
        "oracle_episodes": 6,
        "oracle_bar": 0.8,
        "kwargs": {"target": "task"},
    },
    "llmgym/CrafterSymbolic-v0": {
        "slow": True,
        "oracle_episodes": 6,
        "oracle_bar": 0.8,
        "kwargs": {"target": "task"},
    },
    # procgen's own game (only with the [procgen] extra): the oracle reads the frame and steers
    # procgen's continuous agent, which misses levels (no committed measurement: the [procgen]
    # extra is kept out of [all])
    "llmgym/ProcgenHeist-v0": {
        "slow": True,
        "oracle_episodes": 20,
        "oracle_bar": 0.5,
        # a procgen step costs ~0.1 s: 100 hostile actions (all the fixed ones, then garbage)
        "hostile_count": 100,
    },
    # Every new game is generated and compiled by TextWorld (slow): fewer distinct games.
    "llmgym/TextWorld-v0": {
        "oracle_episodes": 10,
        "split_samples": 10,
        "hostile_count": 200,
        "slow": True,
    },
    # ALFWorld's games (tests/alfworld_data.py, through $ALFWORLD_DATA: see tests/conftest.py):
    # 3 train and 4 eval games, TextWorld's PDDL engine and a Fast Downward plan per oracle step
    "llmgym/ALFWorld-v0": {
        "oracle_episodes": 2,
        "split_samples": 10,
        "hostile_count": 100,
        "slow": True,
    },
    # The BabyAI bot replans at every primitive step: the checks are slow.
    "llmgym/BabyAI-v0": {"slow": True},
    # A Java simulator (slow steps, a JVM per process) whose gold paths are generated on first
    # use: 10 oracle episodes (the first test variation of tasks 1-1 to 3-3);
    # docs/environments/sciworld.md gives the rate on the AgentEval suite's 200 tasks.
    "llmgym/SciWorld-v0": {
        "oracle_episodes": 10,
        "split_samples": 20,
        "hostile_count": 60,
        "slow": True,
    },
}
"""Per-environment overrides: ``oracle_episodes``, ``oracle_bar``, ``split_samples``,
``hostile_count``, ``slow``,
and ``kwargs`` for ``gymnasium.make`` (a config under which the checks run)."""

SLOW_IDS = frozenset(env_id for env_id, options in SETTINGS.items() if options.get("slow"))
"""The environments whose checks are marked slow."""


ENV_IDS = environment_params(SLOW_IDS)


def _factory(env_id: str):
    return functools.partial(gym.make, env_id, **SETTINGS.get(env_id, {}).get("kwargs", {}))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_api(env_id: str) -> None:
    testing.check_api(_factory(env_id))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_determinism(env_id: str) -> None:
    testing.check_determinism(_factory(env_id))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_splits(env_id: str) -> None:
    testing.check_splits(
        _factory(env_id), samples=SETTINGS.get(env_id, {}).get("split_samples", 50)
    )


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_task_ids_have_one_spelling(env_id: str) -> None:
    testing.check_task_ids(_factory(env_id))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_oracle_solves_eval_tasks(env_id: str) -> None:
    options = SETTINGS.get(env_id, {})
    rate = testing.oracle_success_rate(
        _factory(env_id), episodes=options.get("oracle_episodes", 50)
    )
    assert rate >= options.get("oracle_bar", 0.95), f"oracle solved {rate:.0%}"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_hostile_actions(env_id: str) -> None:
    testing.check_hostile_actions(
        _factory(env_id), count=SETTINGS.get(env_id, {}).get("hostile_count", 500)
    )


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_hypothesis_actions_never_raise(env_id: str) -> None:
    env = _factory(env_id)().unwrapped
    env.reset(seed=0)

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.text(max_size=300))
    def play(action: str) -> None:
        observation, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(observation)
        assert isinstance(info["invalid_action"], bool)
        if terminated or truncated:
            env.reset()

    play()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_non_string_actions_are_invalid(env_id: str) -> None:
    env = _factory(env_id)().unwrapped
    env.reset(seed=0)
    for action in (None, 42, b"bytes", ["move", "up"], {"action": "x"}):
        observation, _, terminated, _, info = env.step(action)
        assert info["invalid_action"] and not terminated
        assert testing.has_feedback(observation, info)
