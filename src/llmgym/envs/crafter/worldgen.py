"""Crafter's world generator, vectorised: the same worlds as ``crafter.worldgen``, faster.

``crafter.worldgen.generate_world`` visits the 64x64 cells one by one, evaluating OpenSimplex noise
per cell in pure Python and drawing from the world's ``RandomState`` when a rule needs a coin
flip. This module evaluates the noise layers on whole arrays (:mod:`.noise`, bit-for-bit equal to
``opensimplex``), classifies the cells with array operations, and then replays the coin flips in
crafter's exact order (cells by column, then row; rules in crafter's order; a draw only where
crafter's short-circuiting ``and`` makes one), so the world's random stream ends where crafter's
does and everything after it (creatures, dynamics) stays identical.

The knobs of :class:`WorldSpec` generalise crafter's constants (EnvGen's biome transforms, ore and
tree probabilities, creature densities); at their defaults the rules are crafter's own, constant
for constant.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from llmgym.envs.crafter.jit import njit
from llmgym.envs.crafter.noise import NoiseGrid, OpenSimplexNoise

if TYPE_CHECKING:  # crafter ships no types: these name what the values are
    from crafter.engine import World
    from crafter.objects import Player

__all__ = ["WorldSpec", "generate_terrain", "generate_world"]


@dataclass(frozen=True)
class WorldSpec:
    """Generation parameters (thresholds as crafter writes them: a draw ``u`` places the resource
    when ``u > threshold``)."""

    biome: str = "natural"
    coal_threshold: float = 0.85
    iron_threshold: float = 0.75
    diamond_threshold: float = 0.994
    tree_threshold: float = 0.8
    cow_threshold: float = 0.985
    zombie_threshold: float = 0.993
    skeleton_threshold: float = 0.95


# material ids of crafter's World (``[None] + constants.materials``)
WATER, GRASS, STONE, PATH, SAND, TREE, LAVA, COAL, IRON, DIAMOND = range(1, 11)


_Coordinate = Callable[[np.ndarray], np.ndarray]
_Outcome = TypeVar("_Outcome")
_LAYERS: dict[str, tuple[_Coordinate, _Coordinate, int]] = {
    # name: (x, y, z) as crafter's ``_simplex`` computes them from the cell (x, y) and a size
    "start": (lambda x: x / 3, lambda y: y / 3, 8),
    "water15": (lambda x: x / 15, lambda y: y / 15, 3),
    "water5": (lambda x: x / 5, lambda y: y / 5, 3),
    "mountain15": (lambda x: x / 15, lambda y: y / 15, 0),
    "mountain5": (lambda x: x / 5, lambda y: y / 5, 0),
    "cave": (lambda x: x / 7, lambda y: y / 7, 6),
    "htunnel": (lambda x: (2 * x) / 3, lambda y: (y / 5) / 3, 7),
    "vtunnel": (lambda x: (x / 5) / 3, lambda y: (2 * y) / 3, 7),
    "coal": (lambda x: x / 8, lambda y: y / 8, 1),
    "iron": (lambda x: x / 6, lambda y: y / 6, 2),
    "lava": (lambda x: x / 5, lambda y: y / 5, 6),
    "sand": (lambda x: x / 9, lambda y: y / 9, 4),
    "tree": (lambda x: x / 7, lambda y: y / 7, 5),
}


@functools.cache
def _grid(name: str, area: tuple[int, int]) -> NoiseGrid:
    """The geometry of noise layer ``name`` at every cell of an ``area`` world, cells in
    row-major order (``x * height + y``)."""
    xs, ys = (a.ravel().astype(np.float64) for a in np.indices(area))
    x_of, y_of, z = _LAYERS[name]
    return NoiseGrid(x_of(xs), y_of(ys), float(z))


def _layers(noise: OpenSimplexNoise, names: list[str], mask: np.ndarray) -> dict[str, np.ndarray]:
    """Noise layers ``names`` at the cells of ``mask`` (zero elsewhere).

    Each is ``simplex(x, y, z, size)`` of crafter's ``_simplex`` before weighting, with the
    coordinates computed by the same float operations (``(2 * x) / 3``, ``(y / 5) / 3``).
    Crafter only evaluates a layer where its rules consult it; values elsewhere are not needed.
    """
    cells = np.flatnonzero(mask)
    layers = {}
    for name in names:
        layer = np.zeros(mask.shape)
        layer.reshape(-1)[cells] = _grid(name, mask.shape).evaluate(noise, cells)
        layers[name] = layer
    return layers


def generate_world(world: World, player: Player, spec: WorldSpec, objects: ModuleType) -> None:
    """Fill crafter ``world`` (already reset, ``player`` added) exactly as crafter would.

    ``objects`` is the ``crafter.objects`` module (creatures are crafter's own classes).
    """
    materials, creatures = generate_terrain(
        world.random, tuple(world.area), (int(player.pos[0]), int(player.pos[1])), spec
    )
    world._mat_map[:, :] = materials
    for kind, pos in creatures:
        if kind == "cow":
            world.add(objects.Cow(world, pos))
        elif kind == "zombie":
            world.add(objects.Zombie(world, pos, player))
        else:
            world.add(objects.Skeleton(world, pos, player))


def generate_terrain(
    random: np.random.RandomState,
    area: tuple[int, int],
    player_pos: tuple[int, int],
    spec: WorldSpec,
) -> tuple[np.ndarray, list[tuple[str, tuple[int, int]]]]:
    """Crafter's world for the stream ``random`` (a reset world's, left where crafter leaves
    it): the material ids (``area``, crafter's ids) and the creatures crafter adds, in its
    order, as ``(kind, (x, y))`` with kind ``"cow"``, ``"zombie"`` or ``"skeleton"``."""
    noise = OpenSimplexNoise(random.randint(0, 2**31 - 1))
    everywhere = np.ones(area, dtype=bool)
    layers = _layers(noise, ["start", "water15", "water5", "mountain15", "mountain5"], everywhere)
    px, py = player_pos
    xs = np.arange(area[0])[:, None]
    ys = np.arange(area[1])[None, :]
    distance = np.sqrt((xs - px) ** 2 + (ys - py) ** 2)

    start, water, mountain = _fields(layers, distance)
    water, mountain, start_threshold, start_material = _biome(spec.biome, water, mountain)

    is_start = start > start_threshold
    is_mountain = ~is_start & (mountain > 0.15)
    rest = ~is_start & ~is_mountain
    layers.update(
        _layers(noise, ["cave", "htunnel", "vtunnel", "coal", "iron", "lava"], is_mountain)
    )
    layers.update(_layers(noise, ["sand"], rest & (water > 0.25) & (water <= 0.35)))
    layers.update(_layers(noise, ["tree"], rest & ~(water > 0.3)))
    cave = is_mountain & (layers["cave"] > 0.15) & (mountain > 0.3)
    htunnel = is_mountain & ~cave & (layers["htunnel"] > 0.4)
    vtunnel = is_mountain & ~cave & ~htunnel & (layers["vtunnel"] > 0.4)
    sand = rest & (water > 0.25) & (water <= 0.35) & (layers["sand"] > -0.2)
    wet = rest & ~sand & (water > 0.3)

    materials = np.full(area, GRASS, dtype=np.uint8)
    materials[is_start] = start_material
    materials[cave | htunnel | vtunnel] = PATH
    materials[sand] = SAND
    materials[wet] = WATER
    ore_cell = is_mountain & ~cave & ~htunnel & ~vtunnel
    tree_cell = rest & ~sand & ~wet & (layers["tree"] > 0)
    _place_resources(random, spec, materials, layers, mountain, ore_cell, tree_cell)
    creatures = _place_creatures(random, spec, materials, htunnel | vtunnel, distance)
    return materials, creatures


def _fields(layers: dict[str, np.ndarray], distance: np.ndarray) -> tuple:
    """Crafter's start, water and mountain fields: ``(start, water, mountain)``."""
    start = 4 - distance
    start = start + 2 * layers["start"]
    start = 1 / (1 + np.exp(-start))
    water = layers["water15"] + 0.15 * layers["water5"] + 0.1
    water = water - 2 * start
    mountain = (layers["mountain15"] + 0.3 * layers["mountain5"]) / (1 + 0.3)
    mountain = mountain - (4 * start + 0.3 * water)
    return start, water, mountain


def _biome(biome: str, water: np.ndarray, mountain: np.ndarray) -> tuple:
    """EnvGen's biome transform of the water and mountain fields, and the start area's
    threshold and material: ``(water, mountain, start_threshold, start_material)``."""
    if biome == "mountain":
        return water * 0.1, np.abs(mountain) * 2, 0.6, PATH
    if biome == "beaches":
        return water, mountain * 0.1, 0.8, GRASS
    if biome == "grassland":
        return water * 0.1, mountain * 0.1, 0.6, GRASS
    return water, mountain, 0.5, GRASS


def _first_above(
    random: np.random.RandomState,
    cells: np.ndarray,
    codes: np.ndarray,
    rules: Mapping[int, tuple[tuple[float, _Outcome], ...]],
) -> list[tuple[int, _Outcome]]:
    """Crafter's coin flips of one pass over ``cells``, in its order: cell ``i`` tries the
    rules ``rules[codes[i]]`` (``(threshold, outcome)`` pairs) in turn, one draw each, until a
    draw ``u > threshold``; the cells with an outcome, ``(cell, outcome)``. The draws come ahead
    from a copy of the world's stream, which is then advanced by exactly the number crafter
    consumes (a draw only where its short-circuiting ``and`` makes one)."""
    width = max(len(tried) for tried in rules.values())
    thresholds = np.zeros((max(rules) + 1, width))
    tries = np.zeros(max(rules) + 1, np.int64)
    for code, tried in rules.items():
        tries[code] = len(tried)
        thresholds[code, : len(tried)] = [threshold for threshold, _ in tried]
    state = random.get_state()
    values = random.random_sample(width * len(cells))
    found, rule, used = _first_above_compiled(values, codes.astype(np.int64), thresholds, tries)
    random.set_state(state)
    random.random_sample(used)
    return [
        (cell, rules[code][k][1])
        for cell, code, k in zip(
            cells[found].tolist(), codes[found].tolist(), rule.tolist(), strict=True
        )
    ]


@njit
def _first_above_compiled(
    values: np.ndarray, codes: np.ndarray, thresholds: np.ndarray, tries: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`_first_above` on arrays: the positions (in ``codes``) of the cells with an
    outcome, the rule each met, and the draws used."""
    found = np.empty(codes.size, np.int64)
    rule = np.empty(codes.size, np.int64)
    count = used = 0
    for i in range(codes.size):
        code = codes[i]
        for k in range(tries[code]):
            used += 1
            if values[used - 1] > thresholds[code, k]:
                found[count], rule[count] = i, k
                count += 1
                break
    return found[:count], rule[:count], used


def _place_resources(
    random: np.random.RandomState,
    spec: WorldSpec,
    materials: np.ndarray,
    layers: dict[str, np.ndarray],
    mountain: np.ndarray,
    ore_cell: np.ndarray,
    tree_cell: np.ndarray,
) -> None:
    """Crafter's coal, iron, diamond, lava and stone in the mountains and trees on land, with
    the same draws (at most three per cell)."""
    coal = layers["coal"] > 0
    iron = layers["iron"] > 0.4
    deep = mountain > 0.18
    lava = (mountain > 0.3) & (layers["lava"] > 0.35)
    flat = materials.reshape(-1)
    cells = np.flatnonzero((ore_cell | tree_cell).ravel())
    # a tree cell tries the tree; an ore cell tries coal, iron and diamond where they may be
    codes = np.where(ore_cell, 1 + coal + 2 * iron + 4 * deep, 0).ravel()[cells]
    ores = (
        (spec.coal_threshold, COAL),
        (spec.iron_threshold, IRON),
        (spec.diamond_threshold, DIAMOND),
    )
    rules: dict[int, tuple[tuple[float, int], ...]] = {0: ((spec.tree_threshold, TREE),)}
    for bits in range(8):
        rules[1 + bits] = tuple(rule for k, rule in enumerate(ores) if bits >> k & 1)
    ore_cells = np.flatnonzero(ore_cell.ravel())
    flat[ore_cells] = np.where(lava.ravel()[ore_cells], LAVA, STONE)
    for cell, material in _first_above(random, cells, codes, rules):
        flat[cell] = material


def _place_creatures(
    random: np.random.RandomState,
    spec: WorldSpec,
    materials: np.ndarray,
    tunnels: np.ndarray,
    distance: np.ndarray,
) -> list[tuple[str, tuple[int, int]]]:
    """Crafter's ``_set_object`` pass: cows, zombies and skeletons, in the same order and with the
    same draws."""
    walkable = (materials == GRASS) | (materials == SAND) | (materials == PATH)
    grass_far = walkable & (materials == GRASS) & (distance > 3)
    zombie_far = walkable & (distance > 10)
    tunnel = walkable & (materials == PATH) & tunnels
    cells = np.flatnonzero((grass_far | zombie_far | tunnel).ravel())
    codes = (1 * grass_far + 2 * zombie_far + 4 * tunnel).ravel()[cells]
    kinds = (
        (spec.cow_threshold, "cow"),
        (spec.zombie_threshold, "zombie"),
        (spec.skeleton_threshold, "skeleton"),
    )
    rules = {
        bits: tuple(rule for k, rule in enumerate(kinds) if bits >> k & 1) for bits in range(8)
    }
    height = materials.shape[1]
    return [
        (kind, divmod(cell, height)) for cell, kind in _first_above(random, cells, codes, rules)
    ]
