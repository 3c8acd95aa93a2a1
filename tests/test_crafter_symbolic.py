"""CrafterSymbolic-v0 and the batched CrafterSymbolicVectorEnv: layout, same game, designs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from tests.extras import need

need("crafter")

import llmgym  # noqa: F401
from llmgym.envs.crafter import ACHIEVEMENTS
from llmgym.envs.crafter.symbolic import (
    CREATURES,
    INVENTORY,
    MATERIALS,
    SYMBOLIC_SIZE,
    VIEW,
)
from llmgym.envs.crafter.vector import CrafterSymbolicVectorEnv
from llmgym.errors import ConfigError

CHANNELS = len(MATERIALS) + len(CREATURES)
GRID = VIEW[0] * VIEW[1] * CHANNELS
MOUNTAIN = {"target_biome": "mountain", "inventory": {"wood": 3, "stone_pickaxe": 1}}


def _grid(observation: np.ndarray) -> np.ndarray:
    return observation[:GRID].reshape(VIEW[0], VIEW[1], CHANNELS)


def test_the_view_matches_crafters_semantic_map() -> None:
    env = gym.make("llmgym/CrafterSymbolic-v0")
    observation, _ = env.reset(seed=7)
    rng = np.random.default_rng(1)
    game = env.unwrapped.game
    names = {v: k for k, v in game.world._mat_ids.items()}
    for _ in range(150):
        assert observation.shape == (SYMBOLIC_SIZE,) and observation.dtype == np.float32
        semantic = env.unwrapped.semantic_map()
        px, py = game.player.pos.tolist()
        grid = _grid(observation)
        for x in range(VIEW[0]):
            for y in range(VIEW[1]):
                wx, wy = px - 4 + x, py - 3 + y
                materials = grid[x, y, : len(MATERIALS)]
                if not (0 <= wx < 64 and 0 <= wy < 64):
                    assert not grid[x, y].any()
                    continue
                material = names[int(game.world._mat_map[wx, wy])]
                assert materials.sum() == 1 and MATERIALS[int(materials.argmax())] == material
                creature = grid[x, y, len(MATERIALS) :]
                assert creature.sum() <= 1
                if semantic[wx, wy] > len(names) and (x, y) != (4, 3):
                    assert creature.sum() == 1
        inventory = observation[GRID : GRID + len(INVENTORY)] * 9
        expected = [game.player.inventory[name] for name in INVENTORY]
        np.testing.assert_allclose(inventory, expected, atol=1e-5)
        facing = observation[GRID + len(INVENTORY) : GRID + len(INVENTORY) + 4]
        assert facing.sum() == 1
        assert observation[-2] == pytest.approx(game.world.daylight)
        assert observation[-1] == float(game.player.sleeping)
        observation, _, terminated, truncated, _ = env.step(int(rng.integers(17)))
        if terminated or truncated:
            break


def test_invalid_actions_change_nothing() -> None:
    env = gym.make("llmgym/CrafterSymbolic-v0")
    observation, _ = env.reset(seed=3)
    again, reward, terminated, truncated, info = env.step(17)
    assert info["invalid_action"] and "0-16" in info["feedback"]
    assert np.array_equal(again, observation) and reward == 0.0
    assert env.unwrapped.render() is None


@pytest.mark.parametrize("ratio", [0.0, 0.5])
def test_the_vector_env_plays_the_registered_game(ratio: float) -> None:
    """Every game of the batch equals CrafterSymbolic-v0 on the same task, config and actions,
    across episode ends (the finished episode's last observation is ``final_obs``)."""
    vec = CrafterSymbolicVectorEnv(
        3, designs=[MOUNTAIN], ratio=ratio, seed=5, config={"length": 60}
    )
    observations, info = vec.reset()
    rng = np.random.default_rng(0)
    singles = [gym.make("llmgym/CrafterSymbolic-v0", length=60) for _ in range(3)]

    def start(index: int) -> None:
        options = {"config": MOUNTAIN} if vec.design_indices[index] >= 0 else None
        first, _ = singles[index].reset(seed=int(vec.task_indices[index]), options=options)
        assert np.array_equal(first, observations[index])

    for index in range(3):
        start(index)
    ends = 0
    assert (info["design"] == -1).all() if ratio == 0.0 else (info["design"] >= -1).all()
    for _ in range(150):
        actions = rng.integers(17, size=3)
        observations, rewards, terminated, truncated, infos = vec.step(actions)
        for index, env in enumerate(singles):
            expected, reward, ended, cut, single_info = env.step(int(actions[index]))
            assert rewards[index] == pytest.approx(reward)
            assert (terminated[index], truncated[index]) == (ended, cut)
            if ended or cut:
                assert infos["_episode"][index]
                assert np.array_equal(infos["final_obs"][index], expected)
                unlocked = single_info["achievements"]["unlocked"]
                assert [ACHIEVEMENTS[i] for i in np.flatnonzero(infos["achievements"][index])] == (
                    unlocked
                )
                ends += 1
                start(index)
            else:
                assert np.array_equal(observations[index], expected)
    assert ends >= 6, "every game ends at length 60"


def test_designs_are_drawn_at_the_ratio_and_validated() -> None:
    vec = CrafterSymbolicVectorEnv(2, designs=[MOUNTAIN, {"target_biome": "grassland"}], seed=0)
    vec.ratio = 1.0
    _, info = vec.reset()
    assert set(info["design"].tolist()) <= {0, 1}
    vec.set_designs([])
    _, info = vec.reset(seed=1)
    assert (info["design"] == -1).all()
    with pytest.raises(ConfigError, match="coal_rarity"):
        vec.set_designs([{"coal_rarity": "abundant"}])
    with pytest.raises(ConfigError, match="ratio"):
        vec.ratio = 1.5
    with pytest.raises(ConfigError, match="num_envs"):
        CrafterSymbolicVectorEnv(0)
    with pytest.raises(ValueError, match="0-16"):
        vec.step(np.array([0, 17]))
