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

from dataclasses import dataclass

import numpy as np

from llmgym.envs.crafter.noise import OpenSimplexNoise

__all__ = ["WorldSpec", "generate_world"]


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


_LAYERS = {
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


def _layers(noise: OpenSimplexNoise, names: list[str], mask: np.ndarray) -> dict[str, np.ndarray]:
    """Noise layers ``names`` at the cells of ``mask`` (zero elsewhere), in one vectorised call.

    Each is ``simplex(x, y, z, size)`` of crafter's ``_simplex`` before weighting, with the
    coordinates computed by the same float operations (``(2 * x) / 3``, ``(y / 5) / 3``).
    Crafter only evaluates a layer where its rules consult it; values elsewhere are not needed.
    """
    xs, ys = np.nonzero(mask)
    xs, ys = xs.astype(np.float64), ys.astype(np.float64)
    x = np.concatenate([_LAYERS[n][0](xs) for n in names])
    y = np.concatenate([_LAYERS[n][1](ys) for n in names])
    z = np.repeat(np.array([float(_LAYERS[n][2]) for n in names]), len(xs))
    values = noise.noise3(x, y, z).reshape(len(names), len(xs))
    layers = {}
    for name, row in zip(names, values, strict=True):
        layer = np.zeros(mask.shape)
        layer[mask] = row
        layers[name] = layer
    return layers


def generate_world(world, player, spec: WorldSpec, objects) -> None:
    """Fill crafter ``world`` (already reset, ``player`` added) exactly as crafter would.

    ``objects`` is the ``crafter.objects`` module (creatures are crafter's own classes).
    """
    random = world.random
    noise = OpenSimplexNoise(random.randint(0, 2**31 - 1))
    area = tuple(world.area)
    everywhere = np.ones(area, dtype=bool)
    layers = _layers(noise, ["start", "water15", "water5", "mountain15", "mountain5"], everywhere)
    px, py = (int(v) for v in player.pos)
    xs = np.arange(area[0])[:, None]
    ys = np.arange(area[1])[None, :]
    distance = np.sqrt((xs - px) ** 2 + (ys - py) ** 2)

    start = 4 - distance
    start = start + 2 * layers["start"]
    start = 1 / (1 + np.exp(-start))
    water = layers["water15"] + 0.15 * layers["water5"] + 0.1
    water = water - 2 * start
    mountain = (layers["mountain15"] + 0.3 * layers["mountain5"]) / (1 + 0.3)
    mountain = mountain - (4 * start + 0.3 * water)

    start_threshold, start_material = 0.5, GRASS
    if spec.biome == "mountain":
        mountain = np.abs(mountain) * 2
        water = water * 0.1
        start_threshold, start_material = 0.6, PATH
    elif spec.biome == "beaches":
        mountain = mountain * 0.1
        start_threshold = 0.8
    elif spec.biome == "grassland":
        water = water * 0.1
        mountain = mountain * 0.1
        start_threshold = 0.6

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
    ore_cell = is_mountain & ~cave & ~htunnel & ~vtunnel
    sand = rest & (water > 0.25) & (water <= 0.35) & (layers["sand"] > -0.2)
    wet = rest & ~sand & (water > 0.3)
    land = rest & ~sand & ~wet

    materials = np.full(area, GRASS, dtype=np.uint8)
    materials[is_start] = start_material
    materials[cave | htunnel | vtunnel] = PATH
    materials[sand] = SAND
    materials[wet] = WATER
    tunnels = htunnel | vtunnel

    # Cells whose rules draw from the random stream, in crafter's visiting order.
    coal_noise = layers["coal"] > 0
    iron_noise = layers["iron"] > 0.4
    lava = (mountain > 0.3) & (layers["lava"] > 0.35)
    tree_noise = land & (layers["tree"] > 0)
    drawing = (ore_cell | tree_noise).ravel()
    cells = np.flatnonzero(drawing)
    # At most three draws per cell; drawn from a copy of the stream, then the real stream is
    # advanced by exactly the number crafter consumes.
    state = random.get_state()
    draws = random.random_sample(3 * len(cells)).tolist()
    used = 0
    flat = materials.reshape(-1)
    ore_flat, coal_flat, iron_flat = ore_cell.ravel(), coal_noise.ravel(), iron_noise.ravel()
    deep_flat, lava_flat = (mountain > 0.18).ravel(), lava.ravel()
    coal_t, iron_t = spec.coal_threshold, spec.iron_threshold
    diamond_t, tree_t = spec.diamond_threshold, spec.tree_threshold
    for cell in cells.tolist():
        if ore_flat[cell]:
            if coal_flat[cell]:
                used += 1
                if draws[used - 1] > coal_t:
                    flat[cell] = COAL
                    continue
            if iron_flat[cell]:
                used += 1
                if draws[used - 1] > iron_t:
                    flat[cell] = IRON
                    continue
            if deep_flat[cell]:
                used += 1
                if draws[used - 1] > diamond_t:
                    flat[cell] = DIAMOND
                    continue
            flat[cell] = LAVA if lava_flat[cell] else STONE
        else:
            used += 1
            if draws[used - 1] > tree_t:
                flat[cell] = TREE
    random.set_state(state)
    random.random_sample(used)
    world._mat_map[:, :] = materials

    _place_creatures(world, player, spec, objects, materials, tunnels, distance)


def _place_creatures(world, player, spec, objects, materials, tunnels, distance) -> None:
    """Crafter's ``_set_object`` pass: cows, zombies and skeletons, in the same order and with the
    same draws."""
    random = world.random
    walkable = (materials == GRASS) | (materials == SAND) | (materials == PATH)
    grass_far = walkable & (materials == GRASS) & (distance > 3)
    zombie_far = walkable & (distance > 10)
    tunnel = walkable & (materials == PATH) & tunnels
    candidates = np.flatnonzero((grass_far | zombie_far | tunnel).ravel())
    if len(candidates) == 0:
        return
    state = random.get_state()
    draws = random.random_sample(3 * len(candidates)).tolist()
    used = 0
    height = world.area[1]
    grass_flat, zombie_flat, tunnel_flat = grass_far.ravel(), zombie_far.ravel(), tunnel.ravel()
    cow_t, zombie_t, skeleton_t = spec.cow_threshold, spec.zombie_threshold, spec.skeleton_threshold
    for cell in candidates.tolist():
        pos = divmod(cell, height)
        if grass_flat[cell]:
            used += 1
            if draws[used - 1] > cow_t:
                world.add(objects.Cow(world, pos))
                continue
        if zombie_flat[cell]:
            used += 1
            if draws[used - 1] > zombie_t:
                world.add(objects.Zombie(world, pos, player))
                continue
        if tunnel_flat[cell]:
            used += 1
            if draws[used - 1] > skeleton_t:
                world.add(objects.Skeleton(world, pos, player))
    random.set_state(state)
    random.random_sample(used)
