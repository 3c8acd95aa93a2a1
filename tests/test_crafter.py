"""Crafter: worlds identical to crafter's, crafter's dynamics, config knobs, score, text."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from tests.extras import need

crafter = need("crafter")
opensimplex = need("opensimplex")

import llmgym
from llmgym import ConfigError
from llmgym.envs.crafter import ACHIEVEMENTS, ACTIONS, score
from llmgym.envs.crafter.config import CrafterConfig
from llmgym.envs.crafter.env import EVAL_WORLD_SEED_BASE, CrafterEnv
from llmgym.envs.crafter.game import CrafterGame, crafter_world_seed
from llmgym.envs.crafter.noise import NoiseGrid, OpenSimplexNoise, permutation
from llmgym.envs.crafter.text import parse_action


def crafter_reference(seed: int) -> crafter.Env:
    """``crafter.Env(seed)`` after its first reset, made reproducible: its despawn choice
    iterates a set of objects (an order that follows memory addresses), replaced by ours."""
    env = crafter.Env(seed=seed)
    env.reset()
    helper = CrafterGame.__new__(CrafterGame)
    helper.env = env
    env._balance_object = helper._balance_object
    return env


# ---------------------------------------------------------------------- noise and worlds
@pytest.mark.parametrize("seed", [0, 1, 4242, 2**31 - 2])
def test_vectorised_and_grid_noise_equal_opensimplex_bit_for_bit(seed: int) -> None:
    reference = opensimplex.OpenSimplex(seed)
    perm, grad = permutation(seed)
    np.testing.assert_array_equal(perm, opensimplex.internals._init(seed)[0])
    np.testing.assert_array_equal(grad, opensimplex.internals._init(seed)[1])
    rng = np.random.default_rng(seed % 1000)
    x = np.concatenate([rng.uniform(-40, 40, 600), np.arange(64) / 3, (2 * np.arange(64)) / 3])
    y = np.concatenate([rng.uniform(-40, 40, 600), (np.arange(64) / 5) / 3, np.arange(64) / 15])
    z = np.concatenate([rng.integers(0, 9, 600).astype(float), np.full(128, 7.0)])
    ours = OpenSimplexNoise(seed).noise3(x, y, z)
    expected = [reference.noise3(a, b, c) for a, b, c in zip(x, y, z, strict=True)]
    assert ours.tolist() == expected
    grid = NoiseGrid(x, y, z)
    assert grid.evaluate(OpenSimplexNoise(seed)).tolist() == expected
    points = np.arange(0, len(x), 7)
    assert grid.evaluate(OpenSimplexNoise(seed), points).tolist() == [expected[i] for i in points]


def test_world_seed_matches_crafters_hash() -> None:
    for seed in (0, 1, 2, 99, 123_456, 999_999, 2**31 - 2, 2**40):
        for episode in (1, 2, 7):
            assert crafter_world_seed(seed, episode) == hash((seed, episode)) % (2**31 - 1)


def _assert_same_first_world(seed: int) -> None:
    reference = crafter.Env(seed=seed)
    reference.reset()
    env = gym.make("llmgym/Crafter-v0")
    env.reset(seed=seed)
    np.testing.assert_array_equal(env.unwrapped.semantic_map(), reference._sem_view())
    assert env.unwrapped.task.task_id == f"train/{seed:05d}"
    # the world's random stream ends where crafter's does, so what follows matches too
    state = env.unwrapped.game.world.random.get_state()
    assert state[2] == reference._world.random.get_state()[2]
    np.testing.assert_array_equal(state[1], reference._world.random.get_state()[1])


@pytest.mark.parametrize("seed", range(8))
def test_vectorised_worldgen_equals_crafters_on_small_worlds(seed: int) -> None:
    """crafter's own generator and ours on 20x20 worlds (fast): same cells, same creatures in the
    same order, same random state afterwards."""
    from crafter import constants, engine, objects, worldgen

    from llmgym.envs.crafter.worldgen import WorldSpec, generate_world

    worlds = []
    for generate in (worldgen.generate_world, None):
        world = engine.World((20, 20), constants.materials, (12, 12))
        world.reset(seed=seed)
        player = objects.Player(world, (10, 10))
        world.add(player)
        if generate is None:
            generate_world(world, player, WorldSpec(), objects)
        else:
            generate(world, player)
        worlds.append(world)
    reference, ours = worlds
    np.testing.assert_array_equal(ours._mat_map, reference._mat_map)
    listing = [[(type(o).__name__, tuple(o.pos)) for o in w.objects] for w in worlds]
    assert listing[0] == listing[1]
    assert ours.random.get_state()[2] == reference.random.get_state()[2]
    np.testing.assert_array_equal(ours.random.get_state()[1], reference.random.get_state()[1])


@pytest.mark.slow
@pytest.mark.parametrize(
    "seed", [0, 1, 2, 3, 5, 7, 8, 13, 21, 34, 55, 89, 144, 1000, 65_537, 999_999]
)
def test_reset_seed_gives_crafters_first_world_many_seeds(seed: int) -> None:
    _assert_same_first_world(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 11])
def test_steps_match_crafter_step_for_step(seed: int) -> None:
    """Same world, same actions: same semantic maps, inventories, rewards and frames as crafter
    (including nights, whose rendering draws from the world's random stream)."""
    for pixels in (False, True):
        reference = crafter_reference(seed)
        env = gym.make("llmgym/CrafterPixels-v0" if pixels else "llmgym/Crafter-v0", target="none")
        env.reset(seed=seed)
        inner = env.unwrapped
        rng = np.random.default_rng(seed)
        for _ in range(300):
            action = int(rng.integers(len(ACTIONS))) if rng.random() < 0.7 else 0
            frame, reward, done, info = reference.step(action)
            observation, ours, terminated, truncated, _ = env.step(
                action if pixels else ACTIONS[action]
            )
            np.testing.assert_array_equal(inner.semantic_map(), info["semantic"])
            assert ours == pytest.approx(reward) and terminated == done
            assert inner.game.player.inventory == info["inventory"]
            if pixels:
                np.testing.assert_array_equal(observation, frame)
            if done:
                break


def test_text_and_pixel_games_stay_identical_and_text_never_renders() -> None:
    knobs = {"length": 200, "zombie_density": 0.0}  # no zombies: the agent lives into the night
    text = gym.make("llmgym/Crafter-v0", target="none", **knobs).unwrapped
    pixels = gym.make("llmgym/CrafterPixels-v0", **knobs).unwrapped
    text.reset(seed=11)
    pixels.reset(seed=11)

    def refuse_to_render(*args, **kwargs):
        raise AssertionError("text mode rendered pixels")

    text.game.render = refuse_to_render
    text.game.env.render = refuse_to_render
    rng = np.random.default_rng(0)
    darkest = 1.0
    for _ in range(200):
        action = int(rng.integers(len(ACTIONS)))
        darkest = min(darkest, text.game.world.daylight)
        _, _, done_text, trunc_text, _ = text.step(ACTIONS[action])
        _, _, done_pix, trunc_pix, _ = pixels.step(action)
        np.testing.assert_array_equal(text.semantic_map(), pixels.semantic_map())
        assert (done_text, trunc_text) == (done_pix, trunc_pix)
        if done_text or trunc_text:
            break
    assert darkest < 0.5, "the run should go through a night (night rendering draws randomness)"


def test_eval_worlds_use_seeds_crafter_never_produces() -> None:
    env = gym.make("llmgym/Crafter-v0").unwrapped
    _, info = env.reset(seed=5, options={"split": "eval"})
    assert info["split"] == "eval"
    assert env.world_seed(env.task) >= EVAL_WORLD_SEED_BASE > 2**31 - 2
    _, info = env.reset(seed=5)
    assert info["task_id"] == "train/00005" and env.world_seed(env.task) == crafter_world_seed(5)


# ---------------------------------------------------------------------- config knobs
def _material_counts(config: dict, seeds=range(2)) -> dict[str, int]:
    env = gym.make("llmgym/Crafter-v0", **config).unwrapped
    counts: dict[str, int] = {}
    for seed in seeds:
        env.reset(seed=seed)
        world = env.game.world
        for name, index in world._mat_ids.items():
            counts[name] = counts.get(name, 0) + int((world._mat_map == index).sum())
    return counts


def test_biomes_shift_the_terrain_like_envgen() -> None:
    natural = _material_counts({})
    mountain = _material_counts({"target_biome": "mountain"})
    beaches = _material_counts({"target_biome": "beaches"})
    grassland = _material_counts({"target_biome": "grassland"})
    assert mountain["stone"] > 2 * natural["stone"] and mountain["water"] < natural["water"]
    assert beaches["water"] + beaches["sand"] > natural["water"] + natural["sand"]
    assert beaches["stone"] < natural["stone"] / 2
    assert grassland["grass"] + grassland["tree"] > natural["grass"] + natural["tree"]
    env = gym.make("llmgym/Crafter-v0", target_biome="mountain").unwrapped
    env.reset(seed=0)
    assert env.game.world[(32, 32)][0] == "path"  # EnvGen's mountain start is a path


def test_rarity_knobs_change_resource_counts() -> None:
    rare = _material_counts({"diamond_rarity": "rare", "tree_rarity": "rare"})
    common = _material_counts({"diamond_rarity": "very common", "tree_rarity": "very common"})
    assert common["diamond"] > 5 * max(rare["diamond"], 1)
    assert common["tree"] > rare["tree"]
    none = _material_counts({"coal_rarity": 0.0, "iron_rarity": 0})
    assert none["coal"] == 0 and none["iron"] == 0


def test_creature_densities_and_night() -> None:
    env = gym.make("llmgym/Crafter-v0", zombie_density=0, skeleton_density=0, target="none")
    env.reset(seed=1)
    inner = env.unwrapped
    for _ in range(250):
        env.step("noop")
    kinds = {type(obj).__name__ for obj in inner.game.world.objects}
    assert "Zombie" not in kinds and "Skeleton" not in kinds and "Cow" in kinds
    env = gym.make("llmgym/Crafter-v0", night=False, target="none").unwrapped
    env.reset(seed=1)
    for _ in range(220):
        env.step("noop")
    assert env.game.world.daylight == 1.0
    env = gym.make("llmgym/Crafter-v0", cow_density=4.0).unwrapped
    env.reset(seed=1)
    many = sum(type(o).__name__ == "Cow" for o in env.game.world.objects)
    env.reset(seed=1, options={"config": {"cow_density": 1.0}})
    assert many > 2 * sum(type(o).__name__ == "Cow" for o in env.game.world.objects)


def test_starting_inventory_never_credits_achievements() -> None:
    env = gym.make(
        "llmgym/Crafter-v0", inventory={"wood": 5, "stone": 3, "wood_pickaxe": 1}, target="none"
    )
    observation, _ = env.reset(seed=0)
    assert "5 wood" in observation and "1 wood pickaxe" in observation
    _, reward, _, _, info = env.step("noop")
    assert reward == 0.0 and info["achievements"] == {"new": [], "unlocked": []}
    assert env.unwrapped.skills_achieved() == frozenset()


def test_episode_length_truncates_and_survival_is_success_without_target() -> None:
    env = gym.make("llmgym/Crafter-v0", length=5, target="none")
    env.reset(seed=0)
    for _ in range(4):
        assert env.step("noop")[3] is False
    _, _, terminated, truncated, info = env.step("noop")
    assert truncated and not terminated and info["success"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"target_biome": "desert"}, "CrafterConfig.target_biome"),
        ({"coal_rarity": "very_common"}, "CrafterConfig.coal_rarity"),
        ({"iron_rarity": 1.5}, "CrafterConfig.iron_rarity"),
        ({"inventory": {"wood": 10}}, "CrafterConfig.inventory.wood"),
        ({"inventory": {"iron_sword": 2}}, "CrafterConfig.inventory.iron_sword"),
        ({"inventory": {"table": 1}}, "CrafterConfig.inventory.table"),
        ({"inventory": {"wood": 2.5}}, "CrafterConfig.inventory.wood"),
        ({"zombie_density": -1}, "CrafterConfig.zombie_density"),
        ({"length": 0}, "CrafterConfig.length"),
        ({"target": "collect_gold"}, "CrafterConfig.target"),
        ({"night": "yes"}, "CrafterConfig.night"),
    ],
)
def test_config_errors_name_the_field(overrides: dict, field: str) -> None:
    with pytest.raises(ConfigError) as error:
        gym.make("llmgym/Crafter-v0", **overrides)
    assert error.value.field == field
    assert "allowed" in str(error.value) or "whole number" in str(error.value)


def test_from_envgen_reads_the_llm_output_format() -> None:
    config = CrafterConfig.from_envgen(
        {
            "environment_settings": {"target_biome": "mountain", "iron_rarity": "very_common"},
            "inventory_settings": {"wood": 3, "stone_pickaxe": 1},
        }
    )
    assert config.target_biome == "mountain" and config.iron_rarity == "very common"
    assert config.inventory == {"wood": 3, "stone_pickaxe": 1}
    with pytest.raises(ConfigError):
        CrafterConfig.from_envgen({"environment_settings": {"lava_rarity": "rare"}})


# ---------------------------------------------------------------------- score
def test_score_against_hand_computed_values() -> None:
    assert score({}) == 0.0
    assert score(dict.fromkeys(ACHIEVEMENTS, 100.0)) == pytest.approx(100.0)
    # one achievement always, the rest never: (1 + 100) ** (1 / 22) - 1
    assert score({"collect_wood": 100.0}) == pytest.approx(101 ** (1 / 22) - 1)
    assert score({"collect_wood": 100.0}) == pytest.approx(0.2334045, abs=1e-6)
    # every achievement at 10%: exactly 10
    assert score(dict.fromkeys(ACHIEVEMENTS, 10.0)) == pytest.approx(10.0)
    human = {  # the rounded human-expert rates of Crafter's paper
        "collect_coal": 86, "collect_diamond": 12, "collect_drink": 92, "collect_iron": 53,
        "collect_sapling": 67, "collect_stone": 100, "collect_wood": 100,
        "defeat_skeleton": 31, "defeat_zombie": 84, "eat_cow": 89, "eat_plant": 8,
        "make_iron_pickaxe": 26, "make_iron_sword": 22, "make_stone_pickaxe": 78,
        "make_stone_sword": 78, "make_wood_pickaxe": 100, "make_wood_sword": 45,
        "place_furnace": 32, "place_plant": 24, "place_stone": 90, "place_table": 100,
        "wake_up": 73,
    }  # fmt: skip
    expected = math.exp(sum(math.log(1 + v) for v in human.values()) / 22) - 1
    assert score(human) == pytest.approx(expected)
    # two achievements: exp((ln 101 + ln 51) / 22) - 1, by hand
    assert score({"collect_wood": 100, "eat_cow": 50}) == pytest.approx(0.474763, abs=1e-6)
    with pytest.raises(ValueError, match="unknown achievement"):
        score({"collect_gold": 50})
    with pytest.raises(ValueError, match="percentage"):
        score({"collect_wood": 0.5 * 300})


# ---------------------------------------------------------------------- text interface
@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("move left", "move_left"),
        ("Move_Left", "move_left"),
        ("  **go west.** ", "move_left"),
        ("north", "move_up"),
        ("Place a Table", "place_table"),
        ("place_table", "place_table"),
        ("make the wood pickaxe", "make_wood_pickaxe"),
        ("craft stone sword", "make_stone_sword"),
        ("DO", "do"),
        ("no-op", "noop"),
        ("place sapling", "place_plant"),
    ],
)
def test_commands_are_parsed_tolerantly(text: str, action: str) -> None:
    assert parse_action(text) == ACTIONS.index(action)


@pytest.mark.parametrize(
    "text", ["", "jump", "move", "place", "make pickaxe", "mové left", "do do"]
)
def test_unknown_commands_are_invalid_with_the_list(text: str) -> None:
    env = gym.make("llmgym/Crafter-v0")
    env.reset(seed=0)
    before = env.unwrapped.game.step_count
    observation, _, _, _, info = env.step(text)
    assert info["invalid_action"] and "make wood pickaxe" in observation
    assert env.unwrapped.game.step_count == before


def test_observation_describes_surroundings_and_feedback() -> None:
    env = gym.make("llmgym/Crafter-v0", show_grid=True, target="collect_diamond")
    observation, info = env.reset(seed=0)
    assert "You face" in observation and "Health 9/9" in observation
    assert "Target: collect diamond (not yet)" in observation
    assert "Legend:" in observation and "@" in observation
    assert info["instruction"].endswith("unlock the achievement collect diamond.")
    observation, _, _, _, info = env.step("make wood pickaxe")
    assert not info["invalid_action"]
    assert "needs a nearby table and 1 wood" in observation


def test_oracle_collects_wood_and_reward_follows_crafter() -> None:
    env = gym.make("llmgym/Crafter-v0", target="collect_wood")
    env.reset(seed=0)
    inner = env.unwrapped
    total = 0.0
    for _ in range(200):
        _, reward, terminated, truncated, info = env.step(inner.oracle_action())
        total += reward
        if terminated or truncated:
            break
    assert terminated and info["success"] and "collect_wood" in info["achievements"]["new"]
    assert total == pytest.approx(1.0)
    assert inner.skills == ACHIEVEMENTS and "collect_wood" in inner.skills_achieved()


# ---------------------------------------------------------------------- pixels
def test_pixel_env_in_a_vector_env() -> None:
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("llmgym/CrafterPixels-v0") for _ in range(2)])
    observations, _ = envs.reset(seed=[0, 1])
    assert observations.shape == (2, 64, 64, 3) and observations.dtype == np.uint8
    assert not np.array_equal(observations[0], observations[1])
    for _ in range(20):
        observations, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())
    assert observations.shape == (2, 64, 64, 3) and rewards.shape == (2,)
    envs.close()


@pytest.mark.slow
def test_pixel_env_first_frame_is_crafters() -> None:
    reference = crafter.Env(seed=3)
    frame = reference.reset()
    env = gym.make("llmgym/CrafterPixels-v0")
    observation, _ = env.reset(seed=3)
    np.testing.assert_array_equal(observation, frame)
    observation, _, _, _, info = env.step(99)
    assert info["invalid_action"] and "not an action" in info["feedback"]
    np.testing.assert_array_equal(observation, frame)


@pytest.mark.slow
def test_pixel_env_passes_stable_baselines3_env_checker() -> None:
    sb3_checker = need("stable_baselines3.common.env_checker")
    env = gym.make("llmgym/CrafterPixels-v0")
    sb3_checker.check_env(env.unwrapped, warn=True)


def test_registered_ids_and_extra() -> None:
    entry = llmgym.get_entry("llmgym/Crafter-v0")
    assert entry.extra == "crafter" and entry.available
    assert isinstance(gym.make("llmgym/Crafter-v0").unwrapped, CrafterEnv)


# ---------------------------------------------------------------------- oracle (slow)
BASIC = (
    "collect_wood", "place_table", "make_wood_pickaxe", "collect_stone", "place_stone",
    "make_stone_pickaxe", "collect_coal", "collect_sapling", "place_plant", "collect_drink",
    "eat_cow",
)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_oracle_unlocks_the_basic_achievements_in_default_worlds(seed: int) -> None:
    env = gym.make("llmgym/Crafter-v0", target="none")
    env.reset(seed=seed)
    inner = env.unwrapped
    for _ in range(10_000):
        _, _, terminated, truncated, _ = env.step(inner.oracle_action())
        if set(BASIC) <= inner.skills_achieved() or terminated or truncated:
            break
    assert set(BASIC) <= inner.skills_achieved()
