"""CrafterPixels frames: the atlas renderer draws crafter's own image, byte for byte.

Two comparisons. On the same game state, crafter's renderer (``crafter.Env.render`` of the
game's own ``crafter.Env``) against :class:`~llmgym.envs.crafter.render.FrameRenderer`, with the
world's random stream rewound in between so both draw the night noise from the same state (and
must leave it in the same state). And end to end, ``crafter.Env`` itself stepped in lockstep with
llmgym's game at a size other than 64.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tests.extras import need

crafter = need("crafter")
Image = need("PIL.Image")
ImageEnhance = need("PIL.ImageEnhance")

from llmgym.envs.crafter import ACTIONS
from llmgym.envs.crafter.config import CrafterConfig
from llmgym.envs.crafter.game import CrafterGame, crafter_world_seed
from llmgym.envs.crafter.oracle import CrafterOracle
from llmgym.envs.crafter.render import _night, _tint


def _random_state(game: CrafterGame) -> tuple:
    kind, keys, position, *rest = game.world.random.get_state()
    return (kind, keys.tobytes(), position, *rest)


def _play_and_compare(
    seed: int, size: int, policy: str, steps: int, config: CrafterConfig
) -> Counter[str]:
    """Play ``steps`` steps of world ``seed`` (``policy`` "random" or "oracle") and compare every
    frame; returns how many frames were compared, at night and asleep."""
    game = CrafterGame(render_size=size)
    game.reset(crafter_world_seed(seed), config)
    oracle = CrafterOracle(game)
    oracle.reset(None)
    rng = np.random.default_rng(seed)
    seen: Counter[str] = Counter()
    for step in range(steps + 1):
        before = game.world.random.get_state()
        expected = game.env.render()
        after = _random_state(game)
        game.world.random.set_state(before)
        frame = game.render()
        assert frame.shape == (size, size, 3) and frame.dtype == np.uint8
        if not np.array_equal(frame, expected):
            wrong = np.argwhere(frame != expected)
            pytest.fail(
                f"seed {seed}, size {size}, {policy}, step {step} (daylight "
                f"{game.world.daylight:.3f}, sleeping {game.player.sleeping}): "
                f"{len(wrong)} values differ, first at {wrong[0].tolist()}"
            )
        assert _random_state(game) == after, "the night noise must draw what crafter draws"
        seen["frames"] += 1
        seen["night"] += game.world.daylight < 0.5
        seen["asleep"] += game.player.sleeping
        if step == steps:
            break
        action = oracle.act() if policy == "oracle" else int(rng.integers(len(ACTIONS)))
        result = game.step(action, render=True)
        if result.dead or result.over:
            break
    return seen


def test_frames_equal_crafters_through_a_night_and_sleep() -> None:
    """One world without zombies, random play into the first night (daylight < 0.5 from about
    step 148), with the sleep action among the random ones."""
    seen = _play_and_compare(11, 64, "random", 320, CrafterConfig(zombie_density=0.0))
    assert seen["frames"] == 321 and seen["night"] > 50 and seen["asleep"] > 0, seen


@pytest.mark.parametrize("size", [64, 37])
def test_frames_equal_crafters_at_the_edges_of_the_world(size: int) -> None:
    """Cells outside the world are crafter's grey; the player stands in each corner and by
    each side, by day, at night and asleep."""
    game = CrafterGame(render_size=size)
    game.reset(crafter_world_seed(5), CrafterConfig())
    world, player = game.world, game.player
    for x, y in [(0, 0), (63, 63), (0, 63), (63, 0), (2, 30), (40, 1), (61, 62)]:
        occupant = world[(x, y)][1]
        if occupant is not None and occupant is not player:
            world.remove(occupant)
        world[(x, y)] = "grass"
        world.move(player, (x, y))
        for daylight, sleeping in [(1.0, False), (0.7, False), (0.2, False), (0.2, True)]:
            world.daylight, player.sleeping = daylight, sleeping
            before = world.random.get_state()
            expected = game.env.render()
            world.random.set_state(before)
            np.testing.assert_array_equal(game.render(), expected)


@pytest.mark.slow
@pytest.mark.parametrize("size", [64, 96, 37])
def test_frames_equal_crafters_over_many_seeds_and_steps(size: int) -> None:
    """Random play (no zombies, so it lives into the night) and oracle play (which digs in and
    sleeps at night) on several worlds, up to 600 steps (two nights); about 9,700 frames at 64
    pixels, 2,500 at 96 and 2,300 at 37."""
    seen: Counter[str] = Counter()
    seeds = range(12) if size == 64 else range(3)
    for seed in seeds:
        seen += _play_and_compare(seed, size, "random", 600, CrafterConfig(zombie_density=0.0))
        seen += _play_and_compare(seed, size, "oracle", 600, CrafterConfig())
    assert seen["night"] > 0.2 * seen["frames"] and seen["asleep"] > 100, seen


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 7])
def test_frames_equal_crafter_env_in_lockstep_at_another_size(seed: int) -> None:
    """``crafter.Env(size=96)`` itself against llmgym's game at 96 pixels: same world, same
    actions, same frames (so both draw from the world's random stream alike, step after step),
    into the first night (these worlds' random players live that long)."""
    reference = crafter.Env(size=(96, 96), seed=seed)
    expected = reference.reset()
    # crafter picks the creature to despawn from a set (an order that follows memory
    # addresses); the reference uses llmgym's reproducible order, as in tests/test_crafter.py
    despawner = CrafterGame.__new__(CrafterGame)
    despawner.env = reference
    reference._balance_object = despawner._balance_object
    game = CrafterGame(render_size=96)
    game.reset(crafter_world_seed(seed), CrafterConfig())
    np.testing.assert_array_equal(game.render(), expected)
    rng = np.random.default_rng(seed)
    nights = asleep = 0
    for _ in range(320):
        action = int(rng.integers(len(ACTIONS)))
        expected, _, done, _ = reference.step(action)
        result = game.step(action, render=True)
        np.testing.assert_array_equal(game.render(), expected)
        nights += game.world.daylight < 0.5
        asleep += game.player.sleeping
        if done or result.dead:
            break
    assert nights > 0 and asleep > 0


@pytest.mark.slow
def test_night_image_equals_pil_for_every_colour() -> None:
    """The night image (PIL's ``ImageEnhance.Color(0.4)`` then crafter's tint) for all 2**24
    colours, in slices: equal to crafter's PIL pipeline."""
    colours = np.arange(2**24, dtype=np.uint32)
    rgb = np.stack([colours >> 16, (colours >> 8) & 255, colours & 255], -1).astype(np.uint8)
    for part in np.split(rgb.reshape(64, 512, 512, 3), 64):
        image = part[0]
        expected = _tint(np.array(ImageEnhance.Color(Image.fromarray(image)).enhance(0.4)),
                         (0, 16, 64), 0.5)  # fmt: skip
        np.testing.assert_array_equal(_night(image), expected)
