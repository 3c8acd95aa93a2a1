"""Maze rules: walls, moves, observations, generation."""

from __future__ import annotations

import functools

import gymnasium as gym
import pytest

from llmgym.envs.maze import MazeEnv
from llmgym.testing import check_conformance


@pytest.fixture
def env() -> MazeEnv:
    """A maze whose start has at least one wall and one opening."""
    env = gym.make("llmgym/Maze-v0", observability="full").unwrapped
    for task_id in env.task_ids("train"):
        env.reset(options={"task_id": task_id})
        if 0 < len(env.admissible_actions()) < 4:
            return env
    raise AssertionError("no suitable maze")


def _map_cell(env: MazeEnv, row: int, col: int, dr: int, dc: int) -> str:
    lines = env._draw().split("\n")
    return lines[2 * row + 1 + dr][2 * col + 1 + dc]


def test_walls_block_and_are_described(env: MazeEnv) -> None:
    row, col = env._position
    for direction, (dr, dc) in {
        "up": (-1, 0),
        "down": (1, 0),
        "left": (0, -1),
        "right": (0, 1),
    }.items():
        wall = _map_cell(env, row, col, dr, dc) == "#"
        assert (f"move {direction}" in env.admissible_actions()) is not wall
    blocked = next(
        d for d in ("up", "down", "left", "right") if f"move {d}" not in env.admissible_actions()
    )
    observation, reward, terminated, _, info = env.step(f"Move {blocked.upper()}")
    assert info["invalid_action"] and "wall" in observation and reward == 0 and not terminated
    assert env._position == (row, col)


def test_moves_change_position(env: MazeEnv) -> None:
    row, col = env._position
    action = env.admissible_actions()[0]
    env.step(action)
    deltas = {"move up": (-1, 0), "move down": (1, 0), "move left": (0, -1), "move right": (0, 1)}
    assert env._position == (row + deltas[action][0], col + deltas[action][1])


def test_observation_states_goal_and_position(env: MazeEnv) -> None:
    observation, *_ = env.step(env.admissible_actions()[0])
    (gr, gc), (r, c) = env._layout.goal, env._position
    assert f"The goal is at row {gr}, column {gc}. You are at row {r}, column {c}." in observation
    assert "@" in observation and "G" in observation


@pytest.mark.parametrize("alias", ["north", "go up", "up", "MOVE NORTH.", "**move up**"])
def test_aliases_mean_move_up(alias: str) -> None:
    env = gym.make("llmgym/Maze-v0", loopiness=1.0).unwrapped
    env.reset(seed=0)
    if "move up" not in env.admissible_actions():
        env.step("move down")
    row, col = env._position
    observation, *_, info = env.step(alias)
    assert not info["invalid_action"], observation
    assert env._position == (row - 1, col)


def test_unknown_action_costs_a_move_and_step_limit_truncates() -> None:
    env = gym.make("llmgym/Maze-v0", step_limit=3).unwrapped
    env.reset(seed=0)
    assert env.step("jump")[4]["invalid_action"]
    assert not env.step("jump")[3]
    assert env.step("jump")[3]


def test_perfect_maze_is_a_tree_and_loopiness_adds_passages() -> None:
    def passages(loopiness: float) -> int:
        env = gym.make("llmgym/Maze-v0", width=8, height=8, loopiness=loopiness).unwrapped
        env.reset(options={"task_id": "train/00003"})
        return sum(bin(sides).count("1") for sides in env._layout.open_sides) // 2

    assert passages(0.0) == 8 * 8 - 1
    assert passages(1.0) == 2 * 8 * 7
    assert 63 < passages(0.3) < 112


def test_goal_reached_gives_reward_one() -> None:
    env = gym.make("llmgym/Maze-v0", width=3, height=3).unwrapped
    env.reset(seed=1)
    total = 0.0
    for _ in range(50):
        _, reward, terminated, _, info = env.step(env.oracle_action())
        total += reward
        if terminated:
            break
    assert terminated and info["success"] and total == 1.0


# ---------------------------------------------------------------- AgentGym wording


def _agentgym_env(**config) -> MazeEnv:
    env = gym.make("llmgym/Maze-v0", wording="agentgym", **config).unwrapped
    for task_id in env.task_ids("train"):
        env.reset(options={"task_id": task_id})
        if 1 < 4 - len(env.admissible_actions()) < 4:
            return env
    raise AssertionError("no maze start with two or three walls")


def test_agentgym_wording_names_position_x_as_row_and_y_as_column() -> None:
    env = _agentgym_env()
    (gr, gc), (r, c) = env._layout.goal, env._position
    observation = env._describe()
    assert observation.startswith(
        f"The goal is at position {gr}, {gc}. Your current position is at position {r}, {c}. "
    )
    order = ["to your right", "to your left", "above you", "below you"]
    blocked = [p for p, d in zip(order, ["right", "left", "up", "down"], strict=True)
               if f"move {d}" not in env.admissible_actions()]  # fmt: skip
    assert observation.endswith(f"There are walls {', '.join(blocked)}.\n")
    if "move down" in env.admissible_actions():
        observation, *_ = env.step("move down")
        assert f"Your current position is at position {r + 1}, {c}." in observation


def test_agentgym_writes_two_digit_coordinates_digit_by_digit() -> None:
    env = gym.make("llmgym/Maze-v0", wording="agentgym", width=14, height=14).unwrapped
    env.reset(options={"task_id": "eval/00001"})
    env._position = (12, 3)
    assert "Your current position is at position 1 2, 3. " in env._describe()


def test_agentgym_bumps_repeat_the_position_and_count_as_invalid() -> None:
    env = _agentgym_env()
    before = env._describe()
    blocked = next(
        d for d in ("up", "down", "left", "right") if f"move {d}" not in env.admissible_actions()
    )
    for action in (f"move {blocked}", "jump over the wall", ""):
        observation, reward, terminated, _, info = env.step(action)
        assert observation == before and info["invalid_action"] and reward == 0 and not terminated


def test_agentgym_success_and_failure_endings() -> None:
    env = gym.make("llmgym/Maze-v0", wording="agentgym").unwrapped
    env.reset(options={"task_id": "eval/00004"})
    while True:
        observation, reward, terminated, truncated, info = env.step(env.oracle_action())
        if terminated or truncated:
            break
    assert observation == "Success\n" and reward == 1.0 and info["success"]
    env = gym.make("llmgym/Maze-v0", wording="agentgym", step_limit=2).unwrapped
    env.reset(options={"task_id": "eval/00004"})
    assert env.step("wait")[0] != "Failure\n"
    observation, reward, terminated, truncated, _ = env.step("wait")
    assert observation == "Failure\n" and truncated and not terminated and reward == 0.0


def test_default_wording_is_unchanged() -> None:
    env = gym.make("llmgym/Maze-v0").unwrapped
    observation, info = env.reset(options={"task_id": "eval/00004"})
    assert "position" not in observation and "row" in observation and "row" in info["instruction"]


def test_wording_is_validated() -> None:
    with pytest.raises(ValueError, match="MazeConfig.wording.*'llmgym', 'agentgym'"):
        gym.make("llmgym/Maze-v0", wording="lmrl")


def test_agentgym_wording_conforms() -> None:
    make = functools.partial(gym.make, "llmgym/Maze-v0", wording="agentgym")
    assert check_conformance(make, hostile_count=200)["oracle_success_rate"] == 1.0


@pytest.mark.parametrize("spelling", ["eval/1", "eval/0000000001", "eval/+1", "Eval/00001"])
def test_a_task_id_has_one_spelling(spelling: str) -> None:
    env = gym.make("llmgym/Maze-v0")
    with pytest.raises(ValueError, match="nearest valid id is 'eval/00001'"):
        env.reset(options={"task_id": spelling})
