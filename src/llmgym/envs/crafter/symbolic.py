"""Crafter's symbolic observation (as Craftax-Classic's): one flat ``float32`` vector per step.

Layout, in this order (:data:`SYMBOLIC_SIZE` = 1,093 values, all in [0, 1]):

* the 9x7 local view around the agent (the area the pixel observation shows), indexed
  ``[x, y, channel]`` with x left to right (0-8, the agent at 4) and y top to bottom (0-6, the
  agent at 3): 12 material channels (:data:`MATERIALS`, one-hot; all zero outside the world)
  then 5 creature channels (:data:`CREATURES`, one-hot; a creature's cell keeps its material);
* the 16 inventory counts divided by 9 (``health, food, drink, energy`` first, then
  :data:`INVENTORY` order);
* the facing direction, one-hot (left, right, up, down);
* daylight (1 at noon, 0 at deepest night) and whether the agent sleeps (0 or 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmgym.envs.crafter.config import ITEMS

__all__ = [
    "CREATURES",
    "INVENTORY",
    "MATERIALS",
    "SYMBOLIC_SIZE",
    "VIEW",
    "SymbolicObserver",
]

MATERIALS: tuple[str, ...] = (
    "water",
    "grass",
    "stone",
    "path",
    "sand",
    "tree",
    "lava",
    "coal",
    "iron",
    "diamond",
    "table",
    "furnace",
)
"""The material channels of the local view."""

CREATURES: tuple[str, ...] = ("cow", "zombie", "skeleton", "arrow", "plant")
"""The creature (object) channels of the local view; the agent itself is always at the centre."""

INVENTORY: tuple[str, ...] = ("health", "food", "drink", "energy", *ITEMS)
"""The inventory entries, in crafter's order (vitals first)."""

VIEW = (9, 7)
"""The local view's width and height in cells."""

_CHANNELS = len(MATERIALS) + len(CREATURES)
_GRID = VIEW[0] * VIEW[1] * _CHANNELS
_FACINGS = ((-1, 0), (1, 0), (0, -1), (0, 1))
SYMBOLIC_SIZE = _GRID + len(INVENTORY) + len(_FACINGS) + 2
"""The length of the observation vector."""

_ITEM_SCALE = 9.0


class SymbolicObserver:
    """Writes the symbolic observation of a :class:`~llmgym.envs.crafter.game.CrafterGame`
    into a float32 vector; one observer serves any number of games (the lookup tables are
    crafter's, the same for every world)."""

    def __init__(self) -> None:
        self._material_channel: np.ndarray | None = None
        self._creature_channel: dict[type, int] | None = None

    def _tables(self, world: Any) -> tuple[np.ndarray, dict[type, int]]:
        if self._material_channel is None or self._creature_channel is None:
            from crafter import objects

            ids = world._mat_ids
            table = np.full(max(ids.values()) + 1, -1, np.int64)
            for channel, name in enumerate(MATERIALS):
                table[ids[name]] = channel
            self._material_channel = table
            classes = (objects.Cow, objects.Zombie, objects.Skeleton, objects.Arrow, objects.Plant)
            self._creature_channel = {
                cls: len(MATERIALS) + index for index, cls in enumerate(classes)
            }
        return self._material_channel, self._creature_channel

    def observe(self, game: Any, out: np.ndarray | None = None) -> np.ndarray:
        """The observation of ``game``'s current state, written into ``out`` (a float32 vector
        of :data:`SYMBOLIC_SIZE`, allocated when None) and returned."""
        if out is None:
            out = np.zeros(SYMBOLIC_SIZE, np.float32)
        else:
            out.fill(0.0)
        world, player = game.world, game.player
        material_channel, creature_channel = self._tables(world)
        grid = out[:_GRID].reshape(VIEW[0], VIEW[1], _CHANNELS)
        width, height = world.area
        px, py = int(player.pos[0]), int(player.pos[1])
        left, top = px - VIEW[0] // 2, py - VIEW[1] // 2
        x0, x1 = max(left, 0), min(left + VIEW[0], width)
        y0, y1 = max(top, 0), min(top + VIEW[1], height)
        channels = material_channel[world._mat_map[x0:x1, y0:y1]]
        xs, ys = np.nonzero(channels >= 0)
        grid[xs + (x0 - left), ys + (y0 - top), channels[xs, ys]] = 1.0
        cells = world._obj_map[x0:x1, y0:y1]
        objects = world._objects
        for x, y in zip(*np.nonzero(cells), strict=True):
            channel = creature_channel.get(type(objects[cells[x, y]]))
            if channel is not None:
                grid[x + x0 - left, y + y0 - top, channel] = 1.0
        inventory = player.inventory
        base = _GRID
        for offset, name in enumerate(INVENTORY):
            out[base + offset] = inventory[name] / _ITEM_SCALE
        base += len(INVENTORY)
        out[base + _FACINGS.index((int(player.facing[0]), int(player.facing[1])))] = 1.0
        base += len(_FACINGS)
        out[base] = world.daylight
        out[base + 1] = float(player.sleeping)
        return out
