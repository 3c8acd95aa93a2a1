"""BabyAI rules: text descriptions, high-level actions, rewards, invalid actions."""

from __future__ import annotations

import functools
import json
import re

import gymnasium as gym
import pytest

from tests.extras import need

need("minigrid")

from llmgym.envs.babyai import LEVELS, BabyAIEnv
from llmgym.testing import check_conformance


def _env(level: str) -> BabyAIEnv:
    return gym.make("llmgym/BabyAI-v0", level=level).unwrapped


def _task_with(env: BabyAIEnv, wanted) -> str:
    """The first train task whose start state satisfies ``wanted(env)``."""
    for task_id in env.task_ids("train")[:200]:
        env.reset(options={"task_id": task_id})
        if wanted(env):
            return task_id
    raise AssertionError("no such task in the first 200")


def _target_in_view(env: BabyAIEnv) -> bool:
    names = {seen.name for seen in env._seen}
    mission = env._grid_env.mission
    return any(name in mission for name in names)


def test_relative_positions_name_the_right_cells() -> None:
    env = _env("GoToLocal")
    for task_id in env.task_ids("train")[:20]:
        env.reset(options={"task_id": task_id})
        grid = env._grid_env
        for seen in env._seen:
            cell = grid.grid.get(
                *(grid.agent_pos + seen.ahead * grid.dir_vec + seen.right * grid.right_vec)
            )
            assert cell is not None and f"{cell.color} {cell.type}" == seen.name
            phrase = f"a {seen.label} "
            assert phrase in env._last_observation
        assert "You are carrying nothing." in env._last_observation


def test_both_pick_up_spellings_work_and_reward_follows_babyai() -> None:
    env = _env("PickupLoc")
    task_id = _task_with(env, _target_in_view)
    results = []
    for spelling in ("pick up", "pickup"):
        env.reset(options={"task_id": task_id})
        target = next(s for s in env._seen if s.name in env._grid_env.mission)
        observation, reward, terminated, _, info = env.step(f"{spelling} the {target.name}")
        assert not info["invalid_action"], observation
        grid = env._grid_env
        if info["success"]:
            assert terminated
            assert reward == pytest.approx(1 - 0.9 * grid.step_count / grid.max_steps)
        results.append((observation, reward, grid.step_count))
    assert results[0] == results[1]


def test_go_to_ends_facing_the_object_and_costs_its_path() -> None:
    env = _env("GoToLocal")
    for task_id in env.task_ids("train")[:10]:
        env.reset(options={"task_id": task_id})
        if not env._seen:
            continue
        target = env._seen[-1]
        before = env._grid_env.step_count
        plan = env._path_to_face({target.position})
        _, reward, terminated, _, info = env.step(f"go to {target.name}")
        grid = env._grid_env
        assert not info["invalid_action"]
        assert info["primitive_steps"] == grid.step_count
        if terminated:  # the mission's object was faced on the way
            assert reward > 0 and grid.step_count - before <= len(plan)
        else:
            assert grid.step_count - before == len(plan)
            assert tuple(int(v) for v in grid.front_pos) == target.position


def test_no_op_primitives_and_unknown_objects_are_invalid_and_cost_nothing() -> None:
    env = _env("GoToRedBallGrey")
    env.reset(options={"task_id": "train/00000"})
    grid = env._grid_env
    state = (tuple(grid.agent_pos), grid.agent_dir, grid.step_count)
    for action in ("drop", "pick up", "toggle", "go to purple key", "open red door", "fly"):
        observation, _, terminated, _, info = env.step(action)
        assert info["invalid_action"] and not terminated, action
        assert observation
        assert (tuple(grid.agent_pos), grid.agent_dir, grid.step_count) == state


def test_locked_door_needs_its_key() -> None:
    env = _env("UnlockLocal")

    def locked_door_in_view(env: BabyAIEnv) -> bool:
        return any(seen.label.startswith("locked") for seen in env._seen)

    _task_with(env, locked_door_in_view)
    door = next(s for s in env._seen if s.label.startswith("locked"))
    observation, *_, info = env.step(f"open {door.name}")
    assert info["invalid_action"] and "key" in observation


def test_every_admissible_action_is_accepted() -> None:
    env = gym.make("llmgym/BabyAI-v0").unwrapped
    for task_id in env.task_ids("train")[:15]:
        _, info = env.reset(options={"task_id": task_id})
        for action in info["admissible_actions"]:
            env.reset(options={"task_id": task_id})
            _, _, _, _, info = env.step(action)
            assert not info["invalid_action"], (task_id, action)


def test_levels_cycle_and_the_oracle_solves_one_task_of_each() -> None:
    env = gym.make("llmgym/BabyAI-v0").unwrapped
    assert len(env.task_ids("train")) == len(LEVELS) * 1000
    solved = 0
    for index in range(0, len(LEVELS), 9):
        env.reset(options={"task_id": f"eval/{index:05d}"})
        assert env._level == LEVELS[index]
        while True:
            *_, terminated, truncated, info = env.step(env.oracle_action())
            if terminated or truncated:
                break
        solved += info["success"]
    assert solved == len(range(0, len(LEVELS), 9))


# ---------------------------------------------------------------- AgentGym action forms


def _agentgym(level: str | None = None) -> BabyAIEnv:
    return gym.make("llmgym/BabyAI-v0", level=level, actions="agentgym").unwrapped


def _closed_door_in_reach(env: BabyAIEnv) -> bool:
    return any(
        action.startswith("toggle and go through") and " closed door " in action
        for action in env.admissible_actions()
    )


def test_agentgym_observation_starts_with_the_goal_and_lists_actions_as_json() -> None:
    env = _agentgym("GoToLocal")
    observation, info = env.reset(options={"task_id": "eval/00001"})
    first, *_, last = observation.split("\n")
    assert first == f"Your goal: {env._grid_env.mission}" == info["instruction"]
    assert last == "Available actions: " + json.dumps(info["admissible_actions"])
    assert "check available actions" in info["admissible_actions"]
    assert all(action.split(" ")[-1].isdigit() for action in info["admissible_actions"]
               if action.startswith(("go to", "pickup", "go through", "toggle and")))  # fmt: skip
    observation, *_ = env.step("turn left")
    assert observation.startswith("Your goal: ")


def test_agentgym_door_forms_go_through_and_name_the_door_state() -> None:
    env = _agentgym("OpenDoor")
    task_id = _task_with(env, _closed_door_in_reach)
    action = next(a for a in env.admissible_actions() if a.startswith("toggle and go through"))
    color = action.split(" ")[4]
    for wrong in (f"go through {color} locked door 1", f"go through {color} open door 1"):
        env.reset(options={"task_id": task_id})
        observation, *_, info = env.step(wrong)
        assert info["invalid_action"] and "door is closed" in observation, observation
    for form in (action, f"go through {color} closed door 1", f"go to {color} closed door 1"):
        env.reset(options={"task_id": task_id})
        door = next(s for s in env._seen if s.name == f"{color} door")
        observation, *_, info = env.step(form)
        assert not info["invalid_action"], observation
        assert env._grid_env.grid.get(*door.position).is_open != form.startswith("go to")


def test_door_forms_with_a_state_are_only_parsed_under_the_option() -> None:
    env = _env("OpenDoor")
    _task_with(env, lambda env: any(s.label.startswith("closed") for s in env._seen))
    door = next(s for s in env._seen if s.label.startswith("closed"))
    observation, *_, info = env.step(f"toggle and go through {door.label.split()[1]} closed door")
    assert info["invalid_action"] and "not an action here" in observation
    assert "Your goal" not in env.reset(options={"task_id": "eval/00001"})[0]
    assert "check available actions" not in env.admissible_actions()


def test_every_agentgym_admissible_action_is_accepted() -> None:
    env = _agentgym()
    door = re.compile(r" [a-z]+ (open|closed|locked) door [0-9]+$")
    for task_id in env.task_ids("train")[:15]:
        _, info = env.reset(options={"task_id": task_id})
        assert all(door.search(a) for a in info["admissible_actions"] if " door " in a)
        for action in info["admissible_actions"]:
            env.reset(options={"task_id": task_id})
            _, _, _, _, info = env.step(action)
            assert not info["invalid_action"], (task_id, action)


def test_the_oracle_solves_every_level_in_agentgym_forms() -> None:
    env = _agentgym()
    allowed = re.compile(
        r"^(turn left|turn right|move forward|drop|toggle|pickup [a-z]+ [a-z]+ [0-9]+)$"
    )
    solved = 0
    for index in range(len(LEVELS)):
        env.reset(options={"task_id": f"eval/{index:05d}"})
        while True:
            action = env.oracle_action()
            assert allowed.match(action), action
            *_, terminated, truncated, info = env.step(action)
            assert not info["invalid_action"], action
            if terminated or truncated:
                break
        solved += info["success"]
    assert solved == len(LEVELS)


def test_actions_option_is_validated() -> None:
    with pytest.raises(ValueError, match="BabyAIConfig.actions.*'llmgym', 'agentgym'"):
        gym.make("llmgym/BabyAI-v0", actions="minigrid")


def test_agentgym_actions_conform() -> None:
    make = functools.partial(gym.make, "llmgym/BabyAI-v0", actions="agentgym")
    assert check_conformance(make, hostile_count=200)["oracle_success_rate"] >= 0.95
