"""Crafter's frames from a cached texture atlas: ``crafter.Env.render``'s image, byte for byte.

``crafter.Env.render`` draws its 9x7 local view cell by cell (a world lookup, a texture lookup
and a slice per cell, an alpha blend per object), lights it through PIL (daylight, night noise,
colour desaturation, a blue tint) and draws the inventory item by item. :class:`FrameRenderer`
computes the same image with array operations:

* the textures are scaled once per cell size (by crafter's own ``Textures``, so the nearest
  neighbour scaling is PIL's) into an atlas: one tile per material, a grey tile for cells outside
  the world, and lazily one tile per (material, object texture) pair, blended by crafter's own
  ``_draw_alpha``;
* the local view is one fancy-indexing gather of the atlas by the material ids around the player,
  with the few cells holding an object (creature, arrow, plant) copied over;
* crafter's lighting is elementwise, so by day each tile is lit once per daylight value
  (``daylight * tile + (1 - daylight) * night``, with ``night`` the tile desaturated and tinted,
  in float64: the operations of crafter's ``LocalView._light``, then the frame's cast to uint8)
  and the lit tiles are gathered; at night the noise is drawn from the world's random stream
  exactly as crafter draws it (same call, same shape, same point of the step) and the whole view
  is lit after gathering; PIL's ``ImageEnhance.Color`` becomes a table of its integer luminance
  and float32 blend (equal for all 2**24 colours), and the sleeping view a table of the grey;
* the inventory rows are gathered from tiles of (slot, item, amount), reused while the inventory
  does not change.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from llmgym.core import optional_import
from llmgym.core.cache import bounded_cache

crafter = optional_import("crafter", extra="crafter")
from crafter import constants, engine  # noqa: E402

__all__ = ["FrameRenderer"]

_OUTSIDE_GREY = 127
_NIGHT_TINT = (0, 16, 64)
_SLEEP_TINT = (0, 0, 16)
_NIGHT_SATURATION = 0.4
_NOISE_STDDEV = 0.5
_CHANNELS = np.arange(3)


def _tint(canvas: np.ndarray, color: tuple[int, int, int], amount: float) -> np.ndarray:
    """``LocalView._tint``: ``(1 - amount) * canvas + amount * color`` (float64)."""
    return (1 - amount) * canvas + amount * np.array(color)


def _luminance(c: np.ndarray) -> np.ndarray:
    """PIL's ``convert("L")`` of RGB pixels given as int32:
    ``(R*19595 + G*38470 + B*7471 + 0x8000) >> 16``."""
    return (c[..., 0] * 19595 + c[..., 1] * 38470 + c[..., 2] * 7471 + 0x8000) >> 16


@functools.cache
def _tint_table(color: tuple[int, int, int]) -> np.ndarray:
    """``_tint(value, color, 0.5)`` for every uint8 value (rows) and channel (columns)."""
    return _tint(np.arange(256)[:, None], color, 0.5)


@functools.cache
def _night_table() -> np.ndarray:
    """``LocalView._light``'s night image of one channel value, flattened from (grey, value,
    channel): ``ImageEnhance.Color(...).enhance(0.4)`` (PIL's ``Image.blend(grey, image,
    0.4)``, computed in C as ``(UINT8)(grey + (float)0.4 * (value - grey))``), then the tint."""
    grey = np.arange(256, dtype=np.int32)[:, None]
    value = np.arange(256, dtype=np.int32)[None, :]
    factor = np.float32(_NIGHT_SATURATION)
    saturated = grey.astype(np.float32) + factor * (value - grey).astype(np.float32)
    return _tint_table(_NIGHT_TINT)[saturated.astype(np.uint8)].ravel()


def _night(rgb: np.ndarray) -> np.ndarray:
    """``LocalView._light``'s night image (float64) of uint8 RGB pixels (after any noise)."""
    c = rgb.astype(np.int32)
    grey = _luminance(c)
    return _night_table().take(grey[..., None] * 768 + c * 3 + _CHANNELS)


@functools.cache
def _textures() -> engine.Textures:
    return engine.Textures(constants.root / "assets")


class _Atlas:
    """The tiles of one cell size (``unit``, crafter's ``size // view``), shared by renderers.

    Tiles are stored as image rows (y, x, channel): crafter draws in (x, y) and transposes the
    finished frame; composing in image order saves that copy."""

    def __init__(self, unit: tuple[int, int], item_grid: tuple[int, int]) -> None:
        self.unit = unit
        self.item_grid = item_grid
        textures = _textures()
        materials = [None, *constants.materials]
        tiles = [textures.get(name, unit)[..., :3].transpose(1, 0, 2) for name in materials]
        tiles.append(np.full((unit[1], unit[0], 3), _OUTSIDE_GREY, np.uint8))
        self.outside = len(materials)
        self.tiles = np.stack(tiles)
        self.night_tiles = _night(self.tiles)
        self._objects: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
        self._items: dict[tuple[int, str, int], np.ndarray] = {}

    def object_tile(self, material: int, texture: str) -> tuple[np.ndarray, np.ndarray]:
        """The tile of an object's ``texture`` (a creature, arrow or plant) alpha-blended onto
        ``material`` by crafter's own ``_draw_alpha``, and its night image."""
        key = (material, texture)
        if key not in self._objects:
            tile = self.tiles[material].transpose(1, 0, 2).copy()
            engine._draw_alpha(tile, (0, 0), _textures().get(texture, self.unit))
            tile = np.ascontiguousarray(tile.transpose(1, 0, 2))
            self._objects[key] = (tile, _night(tile))
        return self._objects[key]

    def item(self, slot: int, name: str, amount: int) -> np.ndarray:
        """Inventory slot ``slot`` showing ``amount`` of ``name``, drawn by crafter's own
        ``ItemView`` (icon, then the count over it) and cut out of its canvas: the icon (0.8 of
        a cell at 0.1) and the count (0.6 at 0.4), both rounded down, stay inside the cell."""
        key = (slot, name, amount)
        if key not in self._items:
            (ux, uy), (columns, rows) = self.unit, self.item_grid
            canvas = np.zeros((columns * ux, rows * uy, 3), np.uint8)
            if amount >= 1:
                view = engine.ItemView(_textures(), self.item_grid)
                view._item(canvas, slot, name, np.array(self.unit))
                view._amount(canvas, slot, amount, np.array(self.unit))
            x, y = (slot % columns) * ux, (slot // columns) * uy
            self._items[key] = np.ascontiguousarray(
                canvas[x : x + ux, y : y + uy].transpose(1, 0, 2)
            )
        return self._items[key]


def _lit(day: np.ndarray, night: np.ndarray, daylight: float) -> np.ndarray:
    """``LocalView._light``'s blend of the day and night images, cast to uint8 as crafter's
    frame does."""
    return (daylight * day + (1 - daylight) * night).astype(np.uint8)


@bounded_cache(16)
def _atlas(unit: tuple[int, int], item_grid: tuple[int, int]) -> _Atlas:
    return _Atlas(unit, item_grid)


class FrameRenderer:
    """``crafter.Env.render()`` of a crafter ``Env``'s current state, computed from an atlas.

    Args:
        env: The ``crafter.Env`` whose world, player, view and size are drawn. Like crafter's
            renderer, a frame at night draws its noise from ``env._world.random``.
    """

    def __init__(self, env: Any) -> None:
        self._env = env
        view = np.array(env._view)
        unit_x, unit_y = (int(u) for u in np.array(env._size) // view)
        unit = (unit_x, unit_y)
        grid_x, grid_y = (int(g) for g in env._local_view._grid)
        self._grid = (grid_x, grid_y)
        self._offset = (grid_x // 2, grid_y // 2)
        item_x, item_y = (int(g) for g in env._item_view._grid)
        item_grid = (item_x, item_y)
        self._atlas = _atlas(unit, item_grid)
        self._unit = unit
        (ux, uy), (gx, gy) = unit, self._grid
        self._local_shape = (gx * ux, gy * uy)
        self._frame_shape = (int(env._size[1]), int(env._size[0]), 3)
        self._border = tuple(int(b) for b in (np.array(env._size) - np.array(unit) * view) // 2)
        xs, ys = np.meshgrid(
            np.linspace(-1, 1, self._local_shape[0]), np.linspace(-1, 1, self._local_shape[1])
        )
        # LocalView._vignette (crafter transposes it to (x, y); these are image rows already)
        self._vignette = (1 - np.exp(-0.5 * (xs**2 + ys**2) / (_NOISE_STDDEV**2)))[..., None]
        self._lit_daylight: float | None = None
        self._lit_tiles = self._atlas.tiles
        self._item_key: tuple[tuple[str, int], ...] | None = None
        self._item_rows = np.zeros((item_grid[1] * uy, item_grid[0] * ux, 3), np.uint8)

    def render(self) -> np.ndarray:
        """The frame, (height, width, 3) uint8, equal to ``crafter.Env.render()``."""
        player = self._env._player
        frame = np.zeros(self._frame_shape, np.uint8)
        (bx, by), (w, h) = self._border, self._local_shape
        frame[by : by + h, bx : bx + w] = self._local_view(player)
        items = self._items(player.inventory)
        frame[by + h : by + h + items.shape[0], bx : bx + w] = items
        return frame

    # ------------------------------------------------------------------ local view
    def _cells(self, player: Any) -> tuple[np.ndarray, list[tuple[int, int, Any]]]:
        """Atlas indices of the view's cells, (x, y), and the objects in view (x, y, object)."""
        world = self._env._world
        (gx, gy), (ox, oy) = self._grid, self._offset
        x0, y0 = int(player.pos[0]) - ox, int(player.pos[1]) - oy
        width, height = world.area
        xa, xb, ya, yb = max(x0, 0), min(x0 + gx, width), max(y0, 0), min(y0 + gy, height)
        materials = world._mat_map[xa:xb, ya:yb]
        occupants = world._obj_map[xa:xb, ya:yb]
        if (xb - xa, yb - ya) == (gx, gy):
            cells = materials.astype(np.intp)
        else:
            cells = np.full((gx, gy), self._atlas.outside, np.intp)
            cells[xa - x0 : xb - x0, ya - y0 : yb - y0] = materials
        objects = world._objects
        occupied = [
            (int(i) + xa - x0, int(j) + ya - y0, objects[occupants[i, j]])
            for i, j in zip(*np.nonzero(occupants), strict=True)
        ]
        return cells, occupied

    def _gather(self, tiles: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """The view from ``tiles`` (image-order tiles) at the (x, y) grid of atlas ``cells``."""
        (gx, gy), (ux, uy) = self._grid, self._unit
        return tiles[cells].transpose(1, 2, 0, 3, 4).reshape(gy * uy, gx * ux, 3)

    def _local_view(self, player: Any) -> np.ndarray:
        """``LocalView.__call__`` cast to uint8: the lit (and, asleep, greyed) view.

        Lighting is elementwise, so by day (no noise) each tile is lit once and then gathered;
        at night the noise covers the whole view, which is lit after gathering."""
        atlas, (ux, uy) = self._atlas, self._unit
        daylight = self._env._world.daylight
        cells, occupied = self._cells(player)
        placed = [
            (x, y, atlas.object_tile(int(cells[x, y]), obj.texture)) for x, y, obj in occupied
        ]
        if daylight < 0.5:
            canvas = self._gather(atlas.tiles, cells)
            for x, y, (tile, _) in placed:
                canvas[y * uy : (y + 1) * uy, x * ux : (x + 1) * ux] = tile
            view = _lit(canvas, self._noisy_night(canvas, daylight), daylight)
        else:
            view = self._gather(self._lit_atlas(daylight), cells)
            for x, y, (tile, night) in placed:
                lit = tile if daylight == 1.0 else _lit(tile, night, daylight)
                view[y * uy : (y + 1) * uy, x * ux : (x + 1) * ux] = lit
        if player.sleeping:
            # LocalView._sleep: fully desaturated (the grey), tinted; then the frame's cast
            sleeping = _tint_table(_SLEEP_TINT).astype(np.uint8)
            view = sleeping[_luminance(view.astype(np.int32))]
        return view

    def _lit_atlas(self, daylight: float) -> np.ndarray:
        """The material tiles lit at ``daylight`` (kept while the daylight stays the same)."""
        if daylight != self._lit_daylight:
            atlas = self._atlas
            self._lit_tiles = (
                atlas.tiles if daylight == 1.0 else _lit(atlas.tiles, atlas.night_tiles, daylight)
            )
            self._lit_daylight = daylight
        return self._lit_tiles

    def _noisy_night(self, canvas: np.ndarray, daylight: float) -> np.ndarray:
        """``LocalView._light``'s night image below half daylight, with crafter's noise draw
        (shape (x, y), as crafter draws it, then turned into image rows)."""
        noise = self._env._world.random.uniform(32, 127, self._local_shape).T[..., None]
        mask = 2 * (0.5 - daylight) * self._vignette
        night = ((1 - mask) * canvas + mask * noise).astype(np.uint8)
        return _night(night)

    # ------------------------------------------------------------------ inventory
    def _items(self, inventory: dict[str, int]) -> np.ndarray:
        """``ItemView.__call__``: crafter's inventory rows (slots in the inventory's order)."""
        key = tuple(inventory.items())
        if key != self._item_key:
            (ux, uy), columns = self._unit, self._atlas.item_grid[0]
            self._item_rows[:] = 0
            for slot, (name, amount) in enumerate(key):
                if amount < 1:
                    continue
                x, y = (slot % columns) * ux, (slot // columns) * uy
                self._item_rows[y : y + uy, x : x + ux] = self._atlas.item(slot, name, amount)
            self._item_key = key
        return self._item_rows
