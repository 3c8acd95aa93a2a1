"""The batched array Crafter plays CrafterSymbolic-v0's games step for step: the same
observations, rewards, terminations, truncations and infos as ``CrafterSymbolicVectorEnv``
(crafter's own engine) for the same seeds, actions, configs and EnvGen designs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.extras import need

need("crafter")

from llmgym.envs.crafter import ACTIONS
from llmgym.envs.crafter.batched import (
    NIGHT_NOISE_DRAWS,
    OBJECTS,
    REMOVED,
    STREAM_POS,
    CrafterBatchedVectorEnv,
    Worlds,
    _below,
    _compact,
    _skip,
    _uniform,
)
from llmgym.envs.crafter.env import _CrafterEnvBase
from llmgym.envs.crafter.game import CrafterGame
from llmgym.envs.crafter.vector import CrafterSymbolicVectorEnv

DESIGNS = list(_CrafterEnvBase.skill_practice.values())
"""EnvGen-style designs: every knob (biomes, rarities, densities, starting inventories)."""

STRESS = {
    "target_biome": "mountain",
    "zombie_density": 3.0,
    "skeleton_density": 4.0,
    "cow_density": 3.0,
    "diamond_rarity": "very common",
    "inventory": {
        "sapling": 9, "wood": 9, "stone": 9, "coal": 9, "iron": 9,
        "wood_pickaxe": 1, "stone_pickaxe": 1, "iron_pickaxe": 1, "wood_sword": 1,
    },
}  # fmt: skip
"""Everything at once: crafting, placing, mining every ore, fights, skeletons' arrows."""


def _actions(rng: np.random.Generator, count: int, bias: str) -> np.ndarray:
    """Random actions; ``bias`` favours sleeping (nights, waking, hurt sleepers) or planting
    and waiting (ripe plants, eaten plants) or doing and placing (tables, furnaces, tools)."""
    weights = np.ones(len(ACTIONS))
    if bias == "sleep":
        weights[ACTIONS.index("sleep")] = 30
    elif bias == "plant":
        weights[ACTIONS.index("noop")] = 20
        weights[ACTIONS.index("place_plant")] = 4
        weights[ACTIONS.index("do")] = 6
    elif bias == "craft":
        weights[ACTIONS.index("do")] = 6
        weights[ACTIONS.index("place_table")] = 3
        weights[ACTIONS.index("place_furnace")] = 3
    return rng.choice(len(ACTIONS), size=count, p=weights / weights.sum())


def _assert_same_play(
    count: int,
    steps: int,
    seed: int,
    config: dict[str, Any] | None = None,
    designs: list[dict[str, Any]] | None = None,
    ratio: float = 0.0,
    bias: str = "uniform",
) -> dict[str, int]:
    """Play both vector envs side by side; return what happened (episodes, achievements)."""
    envs = [
        cls(count, config, designs=designs or (), ratio=ratio, seed=seed)
        for cls in (CrafterSymbolicVectorEnv, CrafterBatchedVectorEnv)
    ]
    reference, batched = envs
    first, _ = reference.reset()
    np.testing.assert_array_equal(batched.reset()[0], first)
    rng = np.random.default_rng(seed)
    seen = {"episodes": 0, "achievements": 0, "night_steps": 0}
    for step in range(steps):
        actions = _actions(rng, count, bias)
        expected, got = reference.step(actions), batched.step(actions)
        names = ("obs", "reward", "terminated", "truncated")
        for name, want, have in zip(names, expected[:4], got[:4], strict=True):
            np.testing.assert_array_equal(have, want, err_msg=f"{name} at step {step}")
        want_info, have_info = expected[4], got[4]
        assert have_info.keys() == want_info.keys(), step
        for key, want in want_info.items():
            have = have_info[key]
            if isinstance(want, dict):
                for part in want:
                    np.testing.assert_array_equal(have[part], want[part], err_msg=f"{key}/{part}")
            else:
                np.testing.assert_array_equal(have, want, err_msg=f"{key} at step {step}")
        if "_episode" in want_info:
            seen["episodes"] += int(want_info["_episode"].sum())
            seen["achievements"] += int(want_info["achievements"].sum())
        seen["night_steps"] += int((expected[0][:, -2] < 0.5).sum())
    np.testing.assert_array_equal(batched.task_indices, reference.task_indices)
    np.testing.assert_array_equal(batched.design_indices, reference.design_indices)
    return seen


def test_draws_are_randomstates() -> None:
    """The compiled stream (MT19937's words and position) takes the same numbers as crafter's
    ``randint(0, n)`` and ``uniform()`` from the world's ``RandomState``, reloads included, and
    ends where it does after a night's skipped draws."""
    counts = [1, 2, 3, 4, 4, 5, 7, 8, 9, 13, 64, 100, 144, 1, 4, 1000, 2**20 + 3]
    worlds = Worlds.empty(1)
    for seed in range(20):
        reference = np.random.RandomState(seed)
        reference.random_sample(seed * 50)  # start anywhere in the 624 words
        _, words, position, _, _ = reference.get_state(legacy=True)
        worlds.stream[0], worlds.ints[0, STREAM_POS] = words, position
        for _ in range(40):  # past a reload of the words
            expected = [reference.randint(0, n) for n in counts] + [reference.uniform()]
            assert [_below(worlds, 0, n) for n in counts] + [_uniform(worlds, 0)] == expected
        reference.random_sample(NIGHT_NOISE_DRAWS)
        _skip(worlds, 0, 2 * NIGHT_NOISE_DRAWS)
        assert _uniform(worlds, 0) == reference.uniform()


def test_night_noise_draws_are_the_renderers() -> None:
    assert CrafterGame()._night_noise_draws == NIGHT_NOISE_DRAWS


def test_same_play_as_crafters_engine_short() -> None:
    seen = _assert_same_play(4, 400, seed=0, designs=DESIGNS, ratio=0.5)
    assert seen["episodes"] > 0 and seen["night_steps"] > 0
    _assert_same_play(3, 250, seed=1, config=STRESS, bias="craft")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seed", "config", "ratio", "bias"),
    [
        (10, None, 0.0, "uniform"),
        (11, None, 0.0, "sleep"),
        (12, None, 0.0, "plant"),
        (13, {"night": False}, 0.7, "craft"),
        (14, {"target": "task"}, 0.5, "uniform"),
        (15, STRESS, 0.0, "craft"),
        (16, {**STRESS, "length": 300}, 0.0, "sleep"),
        (17, {"target_biome": "beaches", "zombie_density": 0.0}, 1.0, "plant"),
    ],
)
def test_same_play_as_crafters_engine_long(
    seed: int, config: dict[str, Any] | None, ratio: float, bias: str
) -> None:
    """Long play per world, over many episodes and EnvGen designs."""
    seen = _assert_same_play(8, 1500, seed, config, DESIGNS, ratio, bias)
    assert seen["episodes"] >= 8 and seen["achievements"] > 0


def test_compacting_the_object_slots_keeps_the_play() -> None:
    """Dropping removed objects' slots (done when a world's slots run low) keeps the live
    objects' order, cells and counts: the play goes on as crafter's."""
    count, seed = 3, 2
    reference = CrafterSymbolicVectorEnv(count, STRESS, seed=seed)
    batched = CrafterBatchedVectorEnv(count, STRESS, seed=seed)
    np.testing.assert_array_equal(batched.reset()[0], reference.reset()[0])
    rng = np.random.default_rng(seed)
    dropped = 0
    for step in range(300):
        if step % 20 == 0:
            worlds = batched._worlds
            for w in range(count):
                before = int(worlds.ints[w, OBJECTS])
                live = int((worlds.objects[w, 2:before, REMOVED] == 0).sum())
                _compact(worlds, w)
                assert worlds.ints[w, OBJECTS] == 2 + live
                dropped += before - (2 + live)
        actions = _actions(rng, count, "craft")
        for want, have in zip(reference.step(actions)[:4], batched.step(actions)[:4], strict=True):
            np.testing.assert_array_equal(have, want, err_msg=f"step {step}")
    assert dropped > 0
