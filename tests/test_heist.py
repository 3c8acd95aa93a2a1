"""Heist: procgen's level rules (maze, doors in search order, keys before doors), movement, keys,
the gem, config errors, the oracle, and the pixel variant."""

from __future__ import annotations

from collections import deque

import gymnasium as gym
import numpy as np
import pytest

from llmgym import ConfigError
from llmgym.envs.heist.env import HEIST_SKILLS, HeistEnv, render_rgb
from llmgym.envs.heist.game import DIRECTIONS, HeistLayout
from tests.extras import need


def _reachable(layout: HeistLayout, start, passable_doors: set) -> set:
    """Open cells reachable from ``start`` entering only the doors in ``passable_doors``."""
    locked = set(layout.doors) - passable_doors
    seen, queue = {start}, deque([start])
    while queue:
        r, c = queue.popleft()
        for dr, dc in DIRECTIONS.values():
            cell = (r + dr, c + dc)
            if not (0 <= cell[0] < layout.size and 0 <= cell[1] < layout.size):
                continue
            if cell in seen or layout.walls[cell[0]][cell[1]] or cell in locked:
                continue
            seen.add(cell)
            queue.append(cell)
    return seen


def _layouts(distribution: str, count: int, **config):
    env = gym.make("llmgym/Heist-v0", distribution=distribution, **config).unwrapped
    for index in range(count):
        env.reset(options={"task_id": f"train/{index:05d}"})
        yield env.state.layout


@pytest.mark.parametrize(
    ("distribution", "world", "sizes"), [("easy", 9, {5, 7, 9}), ("hard", 13, {5, 7, 9, 11, 13})]
)
def test_levels_follow_procgen_distributions(distribution: str, world: int, sizes: set) -> None:
    seen_sizes, seen_keys = set(), set()
    for layout in _layouts(distribution, 80):
        assert layout.size == world and layout.maze_size in sizes
        difficulty = (layout.maze_size - 5) // 2
        assert len(layout.doors) == len(layout.keys) <= min(3, difficulty + 1)
        seen_sizes.add(layout.maze_size)
        seen_keys.add(len(layout.keys))
        open_cells = sum(not w for row in layout.walls for w in row)
        # a perfect maze on the even cells: ((n + 1) / 2) ** 2 cells and one fewer passages
        cells = ((layout.maze_size + 1) // 2) ** 2
        assert open_cells == 2 * cells - 1
    assert seen_sizes == sizes and 0 in seen_keys and max(seen_keys) >= 2


def test_keys_lie_before_their_doors_and_the_gem_behind_the_last() -> None:
    for layout in _layouts("hard", 60, num_keys=3):
        doors, keys = list(layout.doors), list(layout.keys)
        for k in range(len(doors)):
            before = _reachable(layout, layout.start, set(doors[:k]))
            assert keys[k] in before, "key k is reachable with the doors before it open"
            assert doors[k] not in before
            assert any(
                (doors[k][0] + dr, doors[k][1] + dc) in before for dr, dc in DIRECTIONS.values()
            ), "door k borders the region opened so far"
        if doors:
            assert layout.gem not in _reachable(layout, layout.start, set(doors[:-1]))
        assert layout.gem in _reachable(layout, layout.start, set(doors))
        for door in doors:  # doors stand on forks, and the start is not next to one
            assert (
                sum(
                    not layout.walls[door[0] + dr][door[1] + dc]
                    for dr, dc in DIRECTIONS.values()
                    if 0 <= door[0] + dr < layout.size and 0 <= door[1] + dc < layout.size
                )
                > 2
            )
            assert abs(door[0] - layout.start[0]) + abs(door[1] - layout.start[1]) > 1


def test_doors_are_numbered_in_search_order_from_the_agent() -> None:
    for layout in _layouts("hard", 50, num_keys=3):
        if len(layout.doors) < 2:
            continue
        region = _reachable(layout, layout.start, set())
        distance = {cell: d for d, cell in _bfs_order(layout, layout.start, region)}
        touching = [
            door
            for door in layout.doors
            if any((door[0] + dr, door[1] + dc) in region for dr, dc in DIRECTIONS.values())
        ]
        first = min(
            touching,
            key=lambda door: min(
                distance.get((door[0] + dr, door[1] + dc), 10**6) for dr, dc in DIRECTIONS.values()
            ),
        )
        assert layout.doors[0] == first


def _bfs_order(layout, start, region):
    queue, seen, d = deque([(0, start)]), {start}, []
    while queue:
        dist, (r, c) = queue.popleft()
        d.append((dist, (r, c)))
        for dr, dc in DIRECTIONS.values():
            cell = (r + dr, c + dc)
            if cell in region and cell not in seen:
                seen.add(cell)
                queue.append((dist + 1, cell))
    return d


def test_locked_door_blocks_until_its_key_then_opens() -> None:
    env = gym.make("llmgym/Heist-v0", distribution="hard", num_keys=1, maze_size=9)
    env.reset(seed=0)
    inner: HeistEnv = env.unwrapped
    state = inner.state
    door = state.layout.doors[0]
    # walk next to the door without the key: BFS with the door locked
    region = _reachable(state.layout, state.position, set())
    beside = next(
        (door[0] - dr, door[1] - dc, name)
        for name, (dr, dc) in DIRECTIONS.items()
        if (door[0] - dr, door[1] - dc) in region
    )
    state.position = beside[:2]
    steps = state.steps
    observation, reward, terminated, _, info = env.step(f"move {beside[2]}")
    assert (
        info["invalid_action"]
        and "locked blue door" in observation
        and state.position == beside[:2]
    )
    assert state.steps == steps + 1 and reward == 0.0 and not terminated
    state.keys_held[0] = True
    observation, _, _, _, info = env.step(f"move {beside[2]}")
    assert not info["invalid_action"] and state.position == door
    assert "opened the blue door" in observation
    assert "open_blue_door" in inner.skills_achieved()


def test_gem_gives_reward_and_ends_the_episode() -> None:
    env = gym.make("llmgym/Heist-v0", distribution="hard")
    env.reset(seed=3)
    inner = env.unwrapped
    shortest = len(inner.state.shortest_path())
    total, steps = 0.0, 0
    while True:
        _, reward, terminated, truncated, info = env.step(inner.oracle_action())
        total, steps = total + reward, steps + 1
        if terminated or truncated:
            break
    assert terminated and info["success"] and total == 10.0
    assert "steal_gem" in inner.skills_achieved() and set(inner.skills) == set(HEIST_SKILLS)
    assert steps == shortest > 0


def test_step_limit_truncates() -> None:
    env = gym.make("llmgym/Heist-v0", max_steps=3)
    env.reset(seed=0)
    results = [env.step("move up")[3] for _ in range(3)]
    assert results == [False, False, True]


def test_keys_at_start_and_local_view() -> None:
    env = gym.make("llmgym/Heist-v0", num_keys=2, keys_at_start=1, observability="local",
                   view_radius=1, distribution="hard", maze_size=11)  # fmt: skip
    observation, _ = env.reset(seed=1)
    assert "Keys held: blue" in observation
    grid = observation.split("\n")[:13]
    visible = sum(ch != "?" for row in grid for ch in row)
    assert visible <= 9


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"maze_size": 8}, "HeistConfig.maze_size"),
        ({"maze_size": 27}, "HeistConfig.maze_size"),
        ({"num_keys": 4}, "HeistConfig.num_keys"),
        ({"distribution": "memory"}, "HeistConfig.distribution"),
        ({"max_steps": 0}, "HeistConfig.max_steps"),
    ],
)
def test_config_errors(overrides: dict, field: str) -> None:
    with pytest.raises(ConfigError) as error:
        gym.make("llmgym/Heist-v0", **overrides)
    assert error.value.field == field


@pytest.mark.parametrize("distribution", ["easy", "hard"])
def test_bfs_oracle_solves_every_level(distribution: str) -> None:
    env = gym.make("llmgym/Heist-v0", distribution=distribution, num_keys=3)
    inner = env.unwrapped
    for index in range(40):
        env.reset(options={"task_id": f"eval/{index:05d}"})
        while True:
            _, _, terminated, truncated, info = env.step(inner.oracle_action())
            if terminated or truncated:
                break
        assert info["success"], f"eval/{index:05d}"


def test_pixels_draw_the_map_and_work_in_a_vector_env() -> None:
    image = render_rgb(["#.", "@$"], size=64)
    assert image.shape == (64, 64, 3) and image.dtype == np.uint8
    assert not np.array_equal(image[:32, :32], image[:32, 32:])  # wall and floor differ
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("llmgym/HeistPixels-v0") for _ in range(3)])
    observations, _ = envs.reset(seed=[0, 1, 2])
    assert observations.shape == (3, 64, 64, 3)
    for _ in range(30):
        observations, rewards, *_ = envs.step(envs.action_space.sample())
    assert observations.shape == (3, 64, 64, 3) and rewards.shape == (3,)
    env = gym.make("llmgym/HeistPixels-v0")
    frame, _ = env.reset(seed=0)
    same, _, _, _, info = env.step(7)
    assert info["invalid_action"] and "not a move" in info["feedback"]
    np.testing.assert_array_equal(same, frame)


def test_procgen_heist_without_its_extra_names_the_install_command() -> None:
    import importlib.util

    from llmgym import MissingDependencyError

    if importlib.util.find_spec("procgen") is not None:
        pytest.skip("procgen is installed here")
    with pytest.raises(MissingDependencyError, match=r"\.\[procgen\]"):
        gym.make("llmgym/ProcgenHeist-v0")


def test_procgen_heist_plays_procgens_game() -> None:
    need("procgen")
    env = gym.make("llmgym/ProcgenHeist-v0")
    frame, info = env.reset(seed=0, options={"task_id": "eval/00003"})
    assert frame.shape == (64, 64, 3) and info["task_id"] == "eval/00003"
    again, _ = gym.make("llmgym/ProcgenHeist-v0").reset(options={"task_id": "eval/00003"})
    np.testing.assert_array_equal(frame, again)
    _, _, _, _, info = env.step("jump")
    assert info["invalid_action"] and "not a procgen action" in info["feedback"]
    inner = env.unwrapped
    for _ in range(1000):
        _, reward, terminated, truncated, info = env.step(inner.oracle_action())
        if terminated or truncated:
            break
    assert terminated and info["success"] and reward == 10.0


@pytest.mark.slow
def test_heist_pixels_passes_stable_baselines3_env_checker() -> None:
    sb3_checker = need("stable_baselines3.common.env_checker")
    sb3_checker.check_env(gym.make("llmgym/HeistPixels-v0").unwrapped, warn=True)
