"""Gymnasium edges: async vector environments, pickling and copying, spawned worker processes."""

from __future__ import annotations

import copy
import pickle
import re
import subprocess
import sys
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

import llmgym
from llmgym.core.env import TextSpace, text_space
from llmgym.wrappers import OracleHint, ReActWrapper
from tests.test_conformance import ENV_IDS, SETTINGS


def _make(env_id: str) -> gym.Env:
    return gym.make(env_id, **SETTINGS.get(env_id, {}).get("kwargs", {}))


# ------------------------------------------------------------------ async == sync vector envs
def _oracle_actions(info: dict[str, Any], count: int) -> tuple[str, ...]:
    """The sub-environments' oracle actions from a batched ``info`` (``"look"`` where an
    episode just ended: that step is an autoreset and its action is ignored)."""
    found = info.get("_oracle_action", np.zeros(count, bool))
    return tuple(info["oracle_action"][i] if found[i] else "look" for i in range(count))


def _assert_same_batch(sync_step: tuple, async_step: tuple) -> None:
    assert sync_step[0] == async_step[0]
    for sync_part, async_part in zip(sync_step[1:-1], async_step[1:-1], strict=True):
        assert np.array_equal(sync_part, async_part)
    assert repr(sync_step[-1]) == repr(async_step[-1])


@pytest.mark.parametrize(
    "env_id",
    ["llmgym/Wordle-v0", "llmgym/Maze-v0", "llmgym/SQL-v0", "llmgym/Movie-v0", "llmgym/WebShop-v0"],
)
def test_async_vector_env_observes_what_sync_does(env_id: str) -> None:
    factories = [lambda: OracleHint(gym.make(env_id)) for _ in range(3)]
    sync, asynchronous = SyncVectorEnv(factories), AsyncVectorEnv(factories)
    try:
        expected, got = sync.reset(seed=7), asynchronous.reset(seed=7)
        _assert_same_batch(expected, got)
        assert all(observation.strip() for observation in got[0])
        for _ in range(8):
            actions = _oracle_actions(expected[-1], 3)
            expected, got = sync.step(actions), asynchronous.step(actions)
            _assert_same_batch(expected, got)
    finally:
        sync.close()
        asynchronous.close()


def test_make_vec_async_with_default_arguments_equals_sync() -> None:
    sync = gym.make_vec("llmgym/Wordle-v0", num_envs=2)
    asynchronous = gym.make_vec("llmgym/Wordle-v0", num_envs=2, vectorization_mode="async")
    try:
        expected, _ = sync.reset(seed=3)
        got, _ = asynchronous.reset(seed=3)
        assert got == expected and isinstance(got, tuple)
        for _ in range(7):  # past the end of the first episodes (autoreset)
            actions = sync.call("oracle_action")
            assert asynchronous.call("oracle_action") == actions
            expected_step, got_step = sync.step(actions), asynchronous.step(actions)
            assert got_step[0] == expected_step[0]
            assert np.array_equal(got_step[1], expected_step[1])
    finally:
        sync.close()
        asynchronous.close()


def test_async_vector_env_without_copies_sees_each_step() -> None:
    factories = [lambda: ReActWrapper(OracleHint(gym.make("llmgym/Maze-v0"))) for _ in range(2)]
    sync, asynchronous = SyncVectorEnv(factories), AsyncVectorEnv(factories, copy=False)
    try:
        expected, info = sync.reset(seed=1)
        live, _ = asynchronous.reset(seed=1)
        assert live == expected
        first = tuple(live)
        expected, *_, info = sync.step(_oracle_actions(info, 2))
        asynchronous.step(_oracle_actions(info, 2))
        assert live == expected != first  # the batch without copies is a view of the buffer
        assert copy.deepcopy(live) == expected and isinstance(copy.deepcopy(live), tuple)
    finally:
        sync.close()
        asynchronous.close()


@pytest.mark.parametrize(
    "text",
    ["", "plain", "x" * 32, "tab\tnew\nline ünïcödé ♞ →", "\U0001f600 astral", "\ud800 lone"],
)
def test_text_shared_memory_round_trips(text: str) -> None:
    space = text_space(32)
    memory = create_shared_memory(space, n=3)
    batch = read_from_shared_memory(space, memory, n=3)
    assert tuple(batch) == ("", "", "")
    write_to_shared_memory(space, 1, text, memory)
    write_to_shared_memory(space, 2, "last", memory)
    assert batch[1] == text and batch[-1] == "last" and batch[:1] == ("",)
    assert pickle.loads(pickle.dumps(batch)) == ("", text, "last")


def test_text_shared_memory_refuses_a_text_over_max_length() -> None:
    space = text_space(4)
    memory = create_shared_memory(space, n=1)
    with pytest.raises(ValueError, match="max_length=4"):
        write_to_shared_memory(space, 0, "too long", memory)


def test_text_space_pickles_small_and_keeps_its_charset_and_generator() -> None:
    space = text_space(100, min_length=2)
    space.seed(5)
    restored = pickle.loads(pickle.dumps(space))
    assert len(pickle.dumps(space)) < 2_000
    assert restored == space and isinstance(restored, TextSpace)
    assert restored.character_list == space.character_list
    assert restored.sample() == space.sample()
    small = TextSpace(3, min_length=1, charset="ab")
    assert copy.deepcopy(small).character_set == frozenset("ab")


# ------------------------------------------------------------------ pickling and copying
def _copies(env: gym.Env) -> dict[str, gym.Env]:
    return {"deepcopy": copy.deepcopy(env), "pickle": pickle.loads(pickle.dumps(env))}


def _shown(observation: Any) -> Any:
    return observation.tobytes() if isinstance(observation, np.ndarray) else observation


def _step(env: gym.Env, action: Any) -> tuple[str, bool]:
    """``repr`` of a step's outcome, and whether the episode ended."""
    observation, reward, terminated, truncated, info = env.step(action)
    outcome = (_shown(observation), reward, terminated, truncated, sorted(info.items()))
    return repr(outcome), terminated or truncated


def _oracle_plan(env_id: str, seed: int, steps: int = 3) -> list[Any]:
    """The oracle's first ``steps`` actions on the task that ``seed`` draws."""
    env = _make(env_id)
    env.reset(seed=seed)
    actions = []
    for _ in range(steps):
        actions.append(env.unwrapped.oracle_action())
        if _step(env, actions[-1])[1]:
            break
    env.close()
    return actions


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_fresh_environments_pickle_and_copy(env_id: str) -> None:
    env = _make(env_id)
    actions = _oracle_plan(env_id, seed=5)
    for how, copied in _copies(env).items():
        assert _shown(copied.reset(seed=5)[0]) == _shown(env.reset(seed=5)[0]), how
        for action in actions:
            assert _step(copied, action) == _step(env, action), how
        copied.close()
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_environments_copied_mid_episode_continue_identically_or_say_why_not(
    env_id: str,
) -> None:
    plan = _oracle_plan(env_id, seed=11, steps=5)
    env = _make(env_id)
    env.reset(seed=11)
    if len(plan) > 1:  # copy after a step, unless the oracle's first step ends the episode
        env.step(plan.pop(0))
    engine = env.unwrapped._engine_holding_state()
    if engine is not None:
        _assert_copying_is_refused(env, engine)
        return
    copies = _copies(env)
    for action in plan:
        assert [c.unwrapped.oracle_action() for c in copies.values()] == [action] * 2
        expected = _step(env, action)
        for how, copied in copies.items():
            assert _step(copied, action) == expected, how
    # the copies carry the random generator that draws the next task too
    first = _shown(env.reset()[0])
    for how, copied in copies.items():
        assert _shown(copied.reset()[0]) == first, how
    env.close()


def _assert_copying_is_refused(env: gym.Env, engine: str) -> None:
    for how in (copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match=f"cannot be copied after reset: .*{re.escape(engine)}"):
            how(env)
    env.step(env.unwrapped.oracle_action())  # the refused copy left the environment intact
    env.close()
    assert env.unwrapped._engine_holding_state() is None
    assert isinstance(copy.deepcopy(env), gym.Env)  # a closed environment copies again


@pytest.mark.skipif(
    not llmgym.get_entry("llmgym/TextWorld-v0").available, reason="needs llmgym[textworld]"
)
def test_textworld_mid_episode_refuses_copying_and_names_its_interpreter() -> None:
    env = gym.make("llmgym/TextWorld-v0")
    env.reset(options={"task_id": "eval/00000"})
    engine = env.unwrapped._engine_holding_state()
    assert engine is not None and "Z-machine" in engine
    _assert_copying_is_refused(env, engine)


# ------------------------------------------------------------------ spawned worker processes
_FIRST_STEPS = """
import functools, gymnasium as gym, llmgym
from gymnasium.vector import AsyncVectorEnv

def first_steps(vector_env):
    observations, _ = vector_env.reset(seed=4)
    stepped = vector_env.step(("crane", "slate"))[0]
    vector_env.close()
    return [str(o) for o in (*observations, *stepped)]

def first_steps_sb3(vector_env):
    vector_env.seed(4)
    observations = vector_env.reset()
    vector_env.step_async(["crane", "slate"])
    stepped = vector_env.step_wait()[0]
    vector_env.close()
    return [str(o) for o in (*observations, *stepped)]

reference = first_steps(gym.make_vec("llmgym/Wordle-v0", num_envs=2))
"""

_SPAWNED_FACTORY = """
# a factory defined in a parent without a main file: the worker never ran "import llmgym"
made = AsyncVectorEnv([lambda: gym.make("llmgym/Wordle-v0")] * 2, context="spawn")
assert first_steps(made) == reference, "AsyncVectorEnv(context='spawn')"
"""

_SPAWNED_OTHERS = """
made = gym.make_vec(
    "llmgym/Wordle-v0", 2, vectorization_mode="async", vector_kwargs={"context": "spawn"}
)
assert first_steps(made) == reference, "make_vec(..., context='spawn')"
prefixed = functools.partial(gym.make, "llmgym:llmgym/Wordle-v0")
made = AsyncVectorEnv([prefixed] * 2, context="spawn", shared_memory=False)
assert first_steps(made) == reference, "the llmgym: prefix"
if importlib.util.find_spec("stable_baselines3") is not None:
    from stable_baselines3.common.vec_env import SubprocVecEnv

    made = SubprocVecEnv([prefixed] * 2, start_method="spawn")
    assert first_steps_sb3(made) == reference, "SubprocVecEnv(start_method='spawn')"
"""


def _run_in_fresh_parent(*parts: str) -> None:
    """Run the script in ``python -c`` (its ``__main__`` has no file for spawned workers to
    import) and check that it finished."""
    script = "\n".join(["import importlib.util", *parts, 'print("spawned workers agree")'])
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "spawned workers agree" in done.stdout


def test_llmgym_ids_work_in_spawned_async_vector_env_workers() -> None:
    _run_in_fresh_parent(_FIRST_STEPS, _SPAWNED_FACTORY)


@pytest.mark.slow
def test_make_vec_the_llmgym_prefix_and_sb3_work_in_spawned_workers() -> None:
    _run_in_fresh_parent(_FIRST_STEPS, _SPAWNED_OTHERS)
