"""Many symbolic Crafter worlds in arrays, stepped together by compiled code:
``llmgym/CrafterSymbolic-v0``'s games, step for step, without crafter's objects.

:class:`CrafterBatchedVectorEnv` keeps every world's materials, objects and creature kinds in
``(num_envs, 100, 100)`` arrays (the 64x64 world with a border of "outside" wide enough for the
player's update reach, as crafter's ``World.__getitem__`` reads outside the area), every object's
fields in a ``(num_envs, capacity, 8)`` array (crafter's object list, in its order), and each
world's random stream as the 624 words and position of numpy's MT19937, so that the rules of
crafter (``crafter/objects.py``, ``crafter/env.py``), transcribed onto integers, run in compiled
loops (numba): the player's action and the creatures within reach, in crafter's order, each draw
from the world's own stream made where crafter makes it, so the streams — and with them
creatures, spawns, sapling luck and everything after — stay crafter's. Crafter's night renderer
draws noise from the same stream; a step at night advances it by the same count, as
:class:`~llmgym.envs.crafter.game.CrafterGame` does when it skips rendering.

World generation is :func:`~llmgym.envs.crafter.worldgen.generate_terrain`, shared with the
vector env on crafter's engine (numpy, its noise sums and coin flips compiled too), on a
``RandomState`` whose state the world then takes over.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import numpy as np

from llmgym.envs.crafter import ACHIEVEMENTS, ACTIONS
from llmgym.envs.crafter.config import CrafterConfig
from llmgym.envs.crafter.game import constants, world_spec
from llmgym.envs.crafter.jit import njit
from llmgym.envs.crafter.symbolic import CREATURES, INVENTORY, MATERIALS, VIEW
from llmgym.envs.crafter.vector import CrafterSymbolicVectorEnv
from llmgym.envs.crafter.worldgen import generate_terrain

__all__ = ["CrafterBatchedVectorEnv"]

AREA = 64
UPDATE_REACH = 18
"""Crafter updates the objects within this (Manhattan) distance of the player: 2 * view (9)."""
PAD = UPDATE_REACH
"""Cells of "outside" around each world: the player's update reach fits in the arrays, and so
do the view and any step beyond the edge."""
SIZE = AREA + 2 * PAD
CHUNK = 12
CHUNKS = -(-AREA // CHUNK)
"""Chunks per row (and column): crafter's last ones are 4 cells wide."""
_REACH = np.arange(1 - UPDATE_REACH, UPDATE_REACH)
_IN_REACH_X, _IN_REACH_Y = (
    np.ascontiguousarray(offsets) - (UPDATE_REACH - 1)  # numba embeds only contiguous arrays
    for offsets in np.nonzero(np.abs(_REACH)[:, None] + np.abs(_REACH)[None, :] < UPDATE_REACH)
)
"""The offsets (row-major) of the cells within reach of the player."""
NIGHT_NOISE_DRAWS = (9 * (64 // 9)) * (7 * (64 // 9))
"""The uniform draws of crafter's night renderer at 64x64 (its 9x7 local view of 7-pixel units),
which a step at night takes from the world's stream."""

CAPACITY = 8192
"""Object slots per world. Objects keep their slot (crafter's list order) until the world's
slots run low, when the removed ones are dropped and the live ones move down in order."""
_COMPACT_ABOVE = CAPACITY - 1024
"""Compact before a step once this many slots are used: a step adds fewer than 1,024 objects
(a sapling, an arrow per skeleton in reach, a spawn per chunk and kind), and after compacting at
most 4,098 slots (every cell one object) are used."""

MAT = {name: index + 1 for index, name in enumerate(constants.materials)}
WATER, GRASS, PATH, LAVA = MAT["water"], MAT["grass"], MAT["path"], MAT["lava"]
TABLE, FURNACE = MAT["table"], MAT["furnace"]
_MATERIAL_COUNT = len(MAT) + 1


def _material_set(names: Collection[str]) -> np.ndarray:
    table = np.zeros(_MATERIAL_COUNT, np.bool_)
    table[[MAT[name] for name in names]] = True
    return table


_WALKABLE = np.stack(
    [
        _material_set(constants.walkable),
        _material_set([*constants.walkable, "lava"]),
        _material_set([*constants.walkable, "water", "lava"]),
    ]
)
CREATURE_WALK, PLAYER_WALK, ARROW_WALK = 0, 1, 2
"""Rows of ``_WALKABLE``: where creatures, the player and arrows may move."""

COW, ZOMBIE, SKELETON, ARROW, PLANT, PLAYER = 1, 2, 3, 4, 5, 6
"""Object kinds: the first five in :data:`~.symbolic.CREATURES` order."""
assert CREATURES == ("cow", "zombie", "skeleton", "arrow", "plant")
KIND, X, Y, HEALTH_OF, COUNTER, DX, DY, REMOVED = range(8)
"""The fields of an object's row: kind, position (in the padded arrays), health, counter (a
zombie's cooldown, a skeleton's reload, a plant's growth), an arrow's direction, removed."""

ITEM = {name: index for index, name in enumerate(INVENTORY)}
HEALTH, FOOD, DRINK, ENERGY = (ITEM[name] for name in ("health", "food", "drink", "energy"))
(ITEM_MAX,) = {constants.items[name]["max"] for name in INVENTORY}
"""Every item's maximum (crafter's are all 9)."""
_INITIAL = np.array([constants.items[name]["initial"] for name in INVENTORY], np.int64)
ACHIEVEMENT = {name: index for index, name in enumerate(ACHIEVEMENTS)}
DIRECTIONS = np.array(((-1, 0), (1, 0), (0, -1), (0, 1)), np.int64)
"""Crafter's ``all_dirs`` (``random_dir``'s choices), in order; also the symbolic observation's
facing order."""
NOOP, DO, SLEEP = ACTIONS.index("noop"), ACTIONS.index("do"), ACTIONS.index("sleep")
_MOVE = np.full(len(ACTIONS), -1, np.int64)
for _index, _name in enumerate(("left", "right", "up", "down")):
    _MOVE[ACTIONS.index(f"move_{_name}")] = _index
"""Per action, the direction it moves in (-1: not a move)."""


def _amounts(uses: dict[str, int]) -> np.ndarray:
    row = np.zeros(len(INVENTORY), np.int64)
    for item, amount in uses.items():
        row[ITEM[item]] = amount
    return row


_COLLECT_REQUIRE = np.zeros((_MATERIAL_COUNT, len(INVENTORY)), np.int64)
_COLLECT_RECEIVE = np.zeros((_MATERIAL_COUNT, len(INVENTORY)), np.int64)
_COLLECT_LEAVES = np.full(_MATERIAL_COUNT, -1, np.int64)
"""Per material, what collecting it leaves (-1: nothing to collect)."""
_COLLECT_PROBABILITY = np.ones(_MATERIAL_COUNT)
for _name, _info in constants.collect.items():
    _COLLECT_REQUIRE[MAT[_name]] = _amounts(_info["require"])
    _COLLECT_RECEIVE[MAT[_name]] = _amounts(_info["receive"])
    _COLLECT_LEAVES[MAT[_name]] = MAT[_info["leaves"]]
    _COLLECT_PROBABILITY[MAT[_name]] = _info.get("probability", 1)
_COLLECT_ACHIEVEMENT = np.array(
    [ACHIEVEMENT.get(f"collect_{name}", -1) for name in INVENTORY], np.int64
)

_PLACE_USES = np.zeros((len(ACTIONS), len(INVENTORY)), np.int64)
_PLACE_WHERE = np.zeros((len(ACTIONS), _MATERIAL_COUNT), np.bool_)
_PLACE_MATERIAL = np.full(len(ACTIONS), -1, np.int64)
"""Per place action, the material it places (0: a plant object; -1: not a place action)."""
_PLACE_ACHIEVEMENT = np.zeros(len(ACTIONS), np.int64)
for _name, _info in constants.place.items():
    _action = ACTIONS.index(f"place_{_name}")
    _PLACE_USES[_action] = _amounts(_info["uses"])
    _PLACE_WHERE[_action] = _material_set(_info["where"])
    _PLACE_MATERIAL[_action] = MAT[_name] if _info["type"] == "material" else 0
    _PLACE_ACHIEVEMENT[_action] = ACHIEVEMENT[f"place_{_name}"]

_MAKE_NEARBY = np.zeros((len(ACTIONS), _MATERIAL_COUNT), np.bool_)
_MAKE_USES = np.zeros((len(ACTIONS), len(INVENTORY)), np.int64)
_MAKE_ITEM = np.full(len(ACTIONS), -1, np.int64)
"""Per make action, the item it makes (-1: not a make action)."""
_MAKE_GIVES = np.zeros(len(ACTIONS), np.int64)
_MAKE_ACHIEVEMENT = np.zeros(len(ACTIONS), np.int64)
for _name, _info in constants.make.items():
    _action = ACTIONS.index(f"make_{_name}")
    _MAKE_NEARBY[_action] = _material_set(_info["nearby"])
    _MAKE_USES[_action] = _amounts(_info["uses"])
    _MAKE_ITEM[_action] = ITEM[_name]
    _MAKE_GIVES[_action] = _info["gives"]
    _MAKE_ACHIEVEMENT[_action] = ACHIEVEMENT[f"make_{_name}"]

_SWORDS = np.array(
    [(ITEM["wood_sword"], 2), (ITEM["stone_sword"], 3), (ITEM["iron_sword"], 5)], np.int64
)
_EAT_PLANT, _EAT_COW = ACHIEVEMENT["eat_plant"], ACHIEVEMENT["eat_cow"]
_DEFEAT_ZOMBIE, _DEFEAT_SKELETON = ACHIEVEMENT["defeat_zombie"], ACHIEVEMENT["defeat_skeleton"]
_WAKE_UP = ACHIEVEMENT["wake_up"]

_BALANCE = np.array(
    [
        # material, spawn distance, despawn distance (from the player)
        (0, 0, 0),
        (GRASS, 5, 5),  # cow
        (GRASS, 6, 0),  # zombie
        (PATH, 7, 7),  # skeleton
    ],
    np.int64,
)
_BALANCE_PROBABILITY = np.array([(0.0, 0.0), (0.01, 0.1), (0.3, 0.4), (0.1, 0.1)])
"""Crafter's balancing of each kind: its material, spawn and despawn distances from the player,
spawn and despawn probabilities."""

_cells = np.zeros((_MATERIAL_COUNT, PLAYER + 1, len(MATERIALS) + len(CREATURES)), np.float32)
for _channel, _name in enumerate(MATERIALS):
    _cells[MAT[_name], :, _channel] = 1.0
_cells[:, np.arange(1, PLAYER), len(MATERIALS) + np.arange(len(CREATURES))] = 1.0
_CELL_ONEHOT = _cells.reshape(_MATERIAL_COUNT * (PLAYER + 1), -1)
"""A cell's channels by ``material * 7 + kind``: its material's one-hot, then its creature's (the
player and empty cells have none)."""
_CHUNK_INDEX = (
    CHUNKS * (np.arange(CHUNKS * CHUNK)[:, None] // CHUNK) + np.arange(CHUNKS * CHUNK) // CHUNK
).ravel()
"""Per cell of the chunks' block (row-major), its chunk's index."""
_COUNTED_MATERIAL = np.zeros(_MATERIAL_COUNT, np.int64)
_COUNTED_MATERIAL[GRASS], _COUNTED_MATERIAL[PATH] = 1, 2
"""What a chunk's census counts of a cell's material: 1 grass, 2 path, 0 anything else."""

# a world's integer state (``Worlds.ints`` columns)
(STEP, STREAM_POS, SLEEPING, FACING, LAST_HEALTH, PLAYER_LAST_HEALTH, LENGTH, NIGHT, OBJECTS,
 CHUNKS_SEEN, NEW) = range(11)  # fmt: skip
# a world's float state (``Worlds.floats`` columns)
HUNGER, THIRST, FATIGUE, RECOVER, DAYLIGHT, ZOMBIE_DENSITY, SKELETON_DENSITY, COW_DENSITY = range(8)

_DAYLIGHT = [np.zeros(0)]
"""Daylight per step number (computed once, kept; the list holds the table as it grows)."""


def _daylight(step: int) -> float:
    """Crafter's ``Env._update_time`` daylight at ``step`` (its expression, on numpy's scalars,
    so the same double)."""
    progress = (step / 300) % 1 + 0.3
    return float(1 - np.abs(np.cos(np.pi * progress)) ** 3)


def _daylight_table(steps: int) -> np.ndarray:
    """Daylight for (at least) steps ``0 .. steps - 1``."""
    table = _DAYLIGHT[0]
    if table.size < steps:
        more = [_daylight(step) for step in range(table.size, max(steps, 2 * table.size))]
        table = _DAYLIGHT[0] = np.concatenate([table, more])
    return table


class Worlds(NamedTuple):
    """Every world's state, one row per world (the compiled rules take it whole)."""

    materials: np.ndarray  # (n, SIZE, SIZE) uint8, crafter's material ids (0 outside)
    ids: np.ndarray  # (n, SIZE, SIZE) int32, the object in each cell (0 none, 1 the player)
    kinds: np.ndarray  # (n, SIZE, SIZE) uint8, the kind of the object in each cell
    objects: np.ndarray  # (n, CAPACITY, 8) int32, objects' fields (KIND ... REMOVED)
    ints: np.ndarray  # (n, 11) int64 (STEP ... NEW)
    floats: np.ndarray  # (n, 8) float64 (HUNGER ... COW_DENSITY)
    inventory: np.ndarray  # (n, 16) int64
    unlocked: np.ndarray  # (n, 22) bool
    stream: np.ndarray  # (n, 624) uint32, MT19937's words
    chunk_order: np.ndarray  # (n, 36) int64, chunks in the order crafter's dict saw them
    chunk_seen: np.ndarray  # (n, 36) bool
    census: np.ndarray  # (n, 7, 36) int64, objects per kind and chunk
    grass: np.ndarray  # (n, 36) int64, grass cells per chunk
    path: np.ndarray  # (n, 36) int64, path cells per chunk

    @classmethod
    def empty(cls, count: int) -> Worlds:
        """``count`` worlds, all zero (each starts with :func:`_reset_world`)."""
        chunks = CHUNKS * CHUNKS
        return cls(
            materials=np.zeros((count, SIZE, SIZE), np.uint8),
            ids=np.zeros((count, SIZE, SIZE), np.int32),
            kinds=np.zeros((count, SIZE, SIZE), np.uint8),
            objects=np.zeros((count, CAPACITY, 8), np.int32),
            ints=np.zeros((count, NEW + 1), np.int64),
            floats=np.zeros((count, COW_DENSITY + 1), np.float64),
            inventory=np.zeros((count, len(INVENTORY)), np.int64),
            unlocked=np.zeros((count, len(ACHIEVEMENTS)), np.bool_),
            stream=np.zeros((count, 624), np.uint32),
            chunk_order=np.zeros((count, chunks), np.int64),
            chunk_seen=np.zeros((count, chunks), np.bool_),
            census=np.zeros((count, PLAYER + 1, chunks), np.int64),
            grass=np.zeros((count, chunks), np.int64),
            path=np.zeros((count, chunks), np.int64),
        )


# ---------------------------------------------------------------------- the world's stream
@njit
def _reload(words: np.ndarray) -> None:
    """MT19937's next 624 words (numpy's ``mt19937_gen``)."""
    for i in range(624):
        y = (np.int64(words[i]) & 0x80000000) | (np.int64(words[(i + 1) % 624]) & 0x7FFFFFFF)
        value = np.int64(words[(i + 397) % 624]) ^ (y >> 1)
        if y & 1:
            value ^= 0x9908B0DF
        words[i] = np.uint32(value)


@njit
def _raw(s: Worlds, w: int) -> int:
    """The next 32-bit output of world ``w``'s stream (``random_raw``)."""
    pos = s.ints[w, STREAM_POS]
    if pos == 624:
        _reload(s.stream[w])
        pos = 0
    y = np.int64(s.stream[w, pos])
    s.ints[w, STREAM_POS] = pos + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    return y ^ (y >> 18)


@njit
def _uniform(s: Worlds, w: int) -> float:
    """``RandomState.uniform()``: the double of two outputs."""
    a = _raw(s, w) >> 5
    b = _raw(s, w) >> 6
    return (a * 67108864.0 + b) / 9007199254740992.0


@njit
def _below(s: Worlds, w: int, count: int) -> int:
    """``RandomState.randint(0, count)``: numpy's legacy masked rejection (the low bits of an
    output, drawn again while too big; no draw at all for one choice)."""
    if count == 1:
        return 0
    mask = 1
    while mask < count - 1:
        mask = (mask << 1) | 1
    while True:
        value = _raw(s, w) & mask
        if value < count:
            return value


@njit
def _skip(s: Worlds, w: int, outputs: int) -> None:
    """Advance world ``w``'s stream by ``outputs`` 32-bit outputs."""
    pos = s.ints[w, STREAM_POS]
    while outputs > 0:
        if pos == 624:
            _reload(s.stream[w])
            pos = 0
        taken = min(outputs, 624 - pos)
        pos += taken
        outputs -= taken
    s.ints[w, STREAM_POS] = pos


# ---------------------------------------------------------------------- crafter's World
@njit
def _chunk(x: int, y: int) -> int:
    return ((x - PAD) // CHUNK) * CHUNKS + (y - PAD) // CHUNK


@njit
def _see_chunk(s: Worlds, w: int, chunk: int) -> None:
    if not s.chunk_seen[w, chunk]:
        s.chunk_seen[w, chunk] = True
        s.chunk_order[w, s.ints[w, CHUNKS_SEEN]] = chunk
        s.ints[w, CHUNKS_SEEN] += 1


@njit
def add_object(s: Worlds, w: int, kind: int, x: int, y: int, health: int) -> int:
    """Crafter's ``World.add``: a new object at the end of the world's list; its index."""
    index = s.ints[w, OBJECTS]
    s.ints[w, OBJECTS] = index + 1
    row = s.objects[w, index]
    row[:] = 0
    row[KIND], row[X], row[Y], row[HEALTH_OF] = kind, x, y, health
    s.ids[w, x, y] = index
    s.kinds[w, x, y] = kind
    chunk = _chunk(x, y)
    _see_chunk(s, w, chunk)
    s.census[w, kind, chunk] += 1
    return index


@njit
def _remove(s: Worlds, w: int, index: int) -> None:
    row = s.objects[w, index]
    if row[REMOVED]:
        return
    s.ids[w, row[X], row[Y]] = 0
    s.kinds[w, row[X], row[Y]] = 0
    s.census[w, row[KIND], _chunk(row[X], row[Y])] -= 1
    row[REMOVED] = 1


@njit
def _move(s: Worlds, w: int, index: int, dx: int, dy: int, walk: int) -> bool:
    """Crafter's ``Object.move``: whether the target cell was free (a removed object answers
    but stays put, as in crafter)."""
    row = s.objects[w, index]
    x, y = row[X] + dx, row[Y] + dy
    if s.ids[w, x, y] or not _WALKABLE[walk, s.materials[w, x, y]]:
        return False
    if row[REMOVED]:
        return True
    kind = row[KIND]
    s.ids[w, x, y] = index
    s.kinds[w, x, y] = kind
    s.ids[w, row[X], row[Y]] = 0
    s.kinds[w, row[X], row[Y]] = 0
    chunk, old = _chunk(x, y), _chunk(row[X], row[Y])
    if chunk != old:
        _see_chunk(s, w, chunk)
        s.census[w, kind, old] -= 1
        s.census[w, kind, chunk] += 1
    row[X], row[Y] = x, y
    return True


@njit
def _set_material(s: Worlds, w: int, x: int, y: int, material: int) -> None:
    """Change a cell of the world, keeping the chunks' grass and path counts."""
    chunk = _chunk(x, y)
    old = s.materials[w, x, y]
    if old == GRASS:
        s.grass[w, chunk] -= 1
    elif old == PATH:
        s.path[w, chunk] -= 1
    if material == GRASS:
        s.grass[w, chunk] += 1
    elif material == PATH:
        s.path[w, chunk] += 1
    s.materials[w, x, y] = material


@njit
def _damage(s: Worlds, w: int, index: int, amount: int) -> None:
    if index == 1:
        s.inventory[w, HEALTH] = max(0, s.inventory[w, HEALTH] - amount)
    else:
        row = s.objects[w, index]
        row[HEALTH_OF] = max(0, row[HEALTH_OF] - amount)


@njit
def _compact(s: Worlds, w: int) -> None:
    """Drop the removed objects' slots; the live ones keep their order (crafter's)."""
    count = s.ints[w, OBJECTS]
    kept = 2  # the empty slot and the player stay
    for index in range(2, count):
        row = s.objects[w, index]
        if row[REMOVED]:
            continue
        if kept != index:
            s.objects[w, kept] = row
            s.ids[w, row[X], row[Y]] = kept
        kept += 1
    s.ints[w, OBJECTS] = kept


@njit
def _achieve(s: Worlds, w: int, achievement: int) -> None:
    if not s.unlocked[w, achievement]:
        s.unlocked[w, achievement] = True
        s.ints[w, NEW] += 1


# ---------------------------------------------------------------------- crafter's Env.step
@njit
def _advance(s: Worlds, w: int, action: int, daylight: np.ndarray) -> tuple[float, bool, bool]:
    """One step of ``CrafterGame.step``: ``(reward, dead, over)``."""
    ints, floats = s.ints[w], s.floats[w]
    ints[STEP] += 1
    floats[DAYLIGHT] = daylight[ints[STEP]] if ints[NIGHT] else 1.0
    snapshot = ints[OBJECTS]  # what the player adds now waits for the next step
    _update_player(s, w, action)
    player = s.objects[w, 1]
    px, py = player[X], player[Y]
    near = np.empty(_IN_REACH_X.size, np.int64)
    found = 0
    for k in range(_IN_REACH_X.size):
        index = s.ids[w, px + _IN_REACH_X[k], py + _IN_REACH_Y[k]]
        if 1 < index < snapshot:
            near[found] = index
            found += 1
    for index in np.sort(near[:found]):
        kind = s.objects[w, index, KIND]
        if kind == ZOMBIE:
            _update_zombie(s, w, index)
        elif kind == COW:
            _update_cow(s, w, index)
        elif kind == SKELETON:
            _update_skeleton(s, w, index)
        elif kind == ARROW:
            _update_arrow(s, w, index)
        else:
            _update_plant(s, w, index)
    if ints[STEP] % 10 == 0:
        _balance(s, w)
    if floats[DAYLIGHT] < 0.5:
        _skip(s, w, 2 * NIGHT_NOISE_DRAWS)
    health = s.inventory[w, HEALTH]
    reward = (health - ints[LAST_HEALTH]) / 10
    ints[LAST_HEALTH] = health
    if ints[NEW]:
        ints[NEW] = 0
        reward += 1.0
    over = ints[LENGTH] > 0 and ints[STEP] >= ints[LENGTH]
    return reward, health <= 0, over


@njit
def _has(s: Worlds, w: int, amounts: np.ndarray) -> bool:
    return bool((s.inventory[w] >= amounts).all())


@njit
def _update_player(s: Worlds, w: int, action: int) -> None:
    ints, floats, inventory = s.ints[w], s.floats[w], s.inventory[w]
    player = s.objects[w, 1]
    fx, fy = DIRECTIONS[ints[FACING], 0], DIRECTIONS[ints[FACING], 1]
    tx, ty = player[X] + fx, player[Y] + fy
    material, target = s.materials[w, tx, ty], s.ids[w, tx, ty]
    if ints[SLEEPING]:
        if inventory[ENERGY] < ITEM_MAX:
            action = SLEEP
        else:
            ints[SLEEPING] = 0
            _achieve(s, w, _WAKE_UP)
    if action == NOOP:
        pass
    elif _MOVE[action] >= 0:
        ints[FACING] = _MOVE[action]
        _move(s, w, 1, DIRECTIONS[_MOVE[action], 0], DIRECTIONS[_MOVE[action], 1], PLAYER_WALK)
        if s.materials[w, player[X], player[Y]] == LAVA:
            inventory[HEALTH] = 0
    elif action == DO:
        if target:
            _do_object(s, w, target)
        else:
            _do_material(s, w, tx, ty, material)
    elif action == SLEEP:
        if inventory[ENERGY] < ITEM_MAX:
            ints[SLEEPING] = 1
    elif _PLACE_MATERIAL[action] >= 0:
        if not target and _PLACE_WHERE[action, material] and _has(s, w, _PLACE_USES[action]):
            inventory -= _PLACE_USES[action]
            if _PLACE_MATERIAL[action]:
                _set_material(s, w, tx, ty, _PLACE_MATERIAL[action])
            else:
                add_object(s, w, PLANT, tx, ty, 1)
            _achieve(s, w, _PLACE_ACHIEVEMENT[action])
    else:
        _make(s, w, action)
    _update_life_stats(ints, floats, inventory)
    _degen_or_regen_health(ints, floats, inventory)
    for item in range(inventory.size):
        inventory[item] = min(max(inventory[item], 0), ITEM_MAX)
    if inventory[HEALTH] < ints[PLAYER_LAST_HEALTH]:
        ints[SLEEPING] = 0
    ints[PLAYER_LAST_HEALTH] = inventory[HEALTH]


@njit
def _do_object(s: Worlds, w: int, index: int) -> None:
    inventory = s.inventory[w]
    damage = 1
    for k in range(_SWORDS.shape[0]):
        if inventory[_SWORDS[k, 0]]:
            damage = max(damage, _SWORDS[k, 1])
    row = s.objects[w, index]
    kind = row[KIND]
    if kind == PLANT:
        if row[COUNTER] > 300:
            row[COUNTER] = 0
            inventory[FOOD] += 4
            _achieve(s, w, _EAT_PLANT)
    elif kind in (ZOMBIE, SKELETON, COW):
        row[HEALTH_OF] = max(0, row[HEALTH_OF] - damage)
        if row[HEALTH_OF] <= 0:
            if kind == ZOMBIE:
                _achieve(s, w, _DEFEAT_ZOMBIE)
            elif kind == SKELETON:
                _achieve(s, w, _DEFEAT_SKELETON)
            else:
                inventory[FOOD] += 6
                _achieve(s, w, _EAT_COW)
                s.floats[w, HUNGER] = 0.0


@njit
def _do_material(s: Worlds, w: int, x: int, y: int, material: int) -> None:
    if material == WATER:
        s.floats[w, THIRST] = 0.0
    leaves = _COLLECT_LEAVES[material]
    if leaves < 0 or not _has(s, w, _COLLECT_REQUIRE[material]):
        return
    _set_material(s, w, x, y, leaves)
    if _uniform(s, w) <= _COLLECT_PROBABILITY[material]:
        received = _COLLECT_RECEIVE[material]
        for item in range(received.size):
            if received[item]:
                s.inventory[w, item] += received[item]
                _achieve(s, w, _COLLECT_ACHIEVEMENT[item])


@njit
def _make(s: Worlds, w: int, action: int) -> None:
    player = s.objects[w, 1]
    x, y = player[X], player[Y]
    # crafter slices [x - 1 : x + 2]: at the world's first row or column the slice is empty
    if x == PAD or y == PAD:
        return
    nearby = _MAKE_NEARBY[action]
    for station in range(nearby.size):
        if nearby[station] and not (s.materials[w, x - 1 : x + 2, y - 1 : y + 2] == station).any():
            return
    if not _has(s, w, _MAKE_USES[action]):
        return
    inventory = s.inventory[w]
    inventory -= _MAKE_USES[action]
    inventory[_MAKE_ITEM[action]] += _MAKE_GIVES[action]
    _achieve(s, w, _MAKE_ACHIEVEMENT[action])


@njit
def _update_life_stats(ints: np.ndarray, floats: np.ndarray, inventory: np.ndarray) -> None:
    sleeping = ints[SLEEPING]
    floats[HUNGER] += 0.5 if sleeping else 1.0
    if floats[HUNGER] > 25:
        floats[HUNGER] = 0.0
        inventory[FOOD] -= 1
    floats[THIRST] += 0.5 if sleeping else 1.0
    if floats[THIRST] > 20:
        floats[THIRST] = 0.0
        inventory[DRINK] -= 1
    if sleeping:
        floats[FATIGUE] = min(floats[FATIGUE] - 1, 0.0)
    else:
        floats[FATIGUE] += 1
    if floats[FATIGUE] < -10:
        floats[FATIGUE] = 0.0
        inventory[ENERGY] += 1
    if floats[FATIGUE] > 30:
        floats[FATIGUE] = 0.0
        inventory[ENERGY] -= 1


@njit
def _degen_or_regen_health(ints: np.ndarray, floats: np.ndarray, inventory: np.ndarray) -> None:
    sleeping = ints[SLEEPING]
    if inventory[FOOD] > 0 and inventory[DRINK] > 0 and (inventory[ENERGY] > 0 or sleeping):
        floats[RECOVER] += 2.0 if sleeping else 1.0
    else:
        floats[RECOVER] -= 0.5 if sleeping else 1.0
    if floats[RECOVER] > 25:
        floats[RECOVER] = 0.0
        inventory[HEALTH] += 1
    if floats[RECOVER] < -15:
        floats[RECOVER] = 0.0
        inventory[HEALTH] = max(0, inventory[HEALTH] - 1)


# ---------------------------------------------------------------------- the creatures
@njit
def _toward(s: Worlds, w: int, index: int, long_axis: bool) -> tuple[int, int]:
    player, row = s.objects[w, 1], s.objects[w, index]
    ox, oy = player[X] - row[X], player[Y] - row[Y]
    if (abs(ox) > abs(oy)) if long_axis else (abs(ox) <= abs(oy)):
        return (ox > 0) - (ox < 0), 0
    return 0, (oy > 0) - (oy < 0)


@njit
def _distance(s: Worlds, w: int, index: int) -> int:
    player, row = s.objects[w, 1], s.objects[w, index]
    return abs(player[X] - row[X]) + abs(player[Y] - row[Y])


@njit
def _move_randomly(s: Worlds, w: int, index: int) -> None:
    direction = _below(s, w, 4)
    _move(s, w, index, DIRECTIONS[direction, 0], DIRECTIONS[direction, 1], CREATURE_WALK)


@njit
def _update_cow(s: Worlds, w: int, index: int) -> None:
    if s.objects[w, index, HEALTH_OF] <= 0:
        _remove(s, w, index)
    if _uniform(s, w) < 0.5:
        _move_randomly(s, w, index)


@njit
def _update_zombie(s: Worlds, w: int, index: int) -> None:
    row = s.objects[w, index]
    if row[HEALTH_OF] <= 0:
        _remove(s, w, index)
    if _distance(s, w, index) <= 8 and _uniform(s, w) < 0.9:
        dx, dy = _toward(s, w, index, _uniform(s, w) < 0.8)
        _move(s, w, index, dx, dy, CREATURE_WALK)
    else:
        _move_randomly(s, w, index)
    if _distance(s, w, index) <= 1:
        if row[COUNTER]:
            row[COUNTER] -= 1
        else:
            _damage(s, w, 1, 7 if s.ints[w, SLEEPING] else 2)
            row[COUNTER] = 5


@njit
def _update_skeleton(s: Worlds, w: int, index: int) -> None:
    row = s.objects[w, index]
    if row[HEALTH_OF] <= 0:
        _remove(s, w, index)
    row[COUNTER] = max(0, row[COUNTER] - 1)
    dist = _distance(s, w, index)
    if dist <= 3:
        dx, dy = _toward(s, w, index, _uniform(s, w) < 0.6)
        if _move(s, w, index, -dx, -dy, CREATURE_WALK):
            return
    if dist <= 5 and _uniform(s, w) < 0.5:
        dx, dy = _toward(s, w, index, True)
        _shoot(s, w, index, dx, dy)
    elif dist <= 8 and _uniform(s, w) < 0.3:
        dx, dy = _toward(s, w, index, _uniform(s, w) < 0.6)
        _move(s, w, index, dx, dy, CREATURE_WALK)
    elif _uniform(s, w) < 0.2:
        _move_randomly(s, w, index)


@njit
def _shoot(s: Worlds, w: int, index: int, dx: int, dy: int) -> None:
    row = s.objects[w, index]
    if row[COUNTER] > 0 or (dx == 0 and dy == 0):
        return
    x, y = row[X] + dx, row[Y] + dy
    if s.ids[w, x, y] or not _WALKABLE[ARROW_WALK, s.materials[w, x, y]]:
        return
    arrow = add_object(s, w, ARROW, x, y, 0)
    s.objects[w, arrow, DX], s.objects[w, arrow, DY] = dx, dy
    row[COUNTER] = 4


@njit
def _update_arrow(s: Worlds, w: int, index: int) -> None:
    row = s.objects[w, index]
    x, y = row[X] + row[DX], row[Y] + row[DY]
    target = s.ids[w, x, y]
    if target:
        _damage(s, w, target, 2)
        _remove(s, w, index)
        return
    material = s.materials[w, x, y]
    if not _WALKABLE[ARROW_WALK, material]:
        _remove(s, w, index)
        if material in (TABLE, FURNACE):
            _set_material(s, w, x, y, PATH)
    else:
        _move(s, w, index, row[DX], row[DY], ARROW_WALK)


@njit
def _update_plant(s: Worlds, w: int, index: int) -> None:
    row = s.objects[w, index]
    row[COUNTER] += 1
    for k in range(4):
        kind = s.kinds[w, row[X] + DIRECTIONS[k, 0], row[Y] + DIRECTIONS[k, 1]]
        if kind in (ZOMBIE, SKELETON, COW):
            row[HEALTH_OF] = max(0, row[HEALTH_OF] - 1)
            break
    if row[HEALTH_OF] <= 0:
        _remove(s, w, index)


# ---------------------------------------------------------------------- crafter's balancing
@njit
def _balance(s: Worlds, w: int) -> None:
    """``CrafterGame._balance_chunk`` over the chunks in crafter's order, from the chunks'
    counts of grass, path and creatures (kept as the world changes); only a chunk outside its
    target range draws and runs crafter's spawn or despawn."""
    light, floats = s.floats[w, DAYLIGHT], s.floats[w]
    # crafter's target ranges: the same float expressions, truncated by int() as crafter's
    zombies = int((3.5 - 3 * light) * floats[ZOMBIE_DENSITY])
    skeletons_low = int(1 * floats[SKELETON_DENSITY])
    skeletons_high = int(2 * floats[SKELETON_DENSITY])
    cows_low, cows_high = int(1 * floats[COW_DENSITY]), int((1.5 + light) * floats[COW_DENSITY])
    census = s.census[w]
    for k in range(s.ints[w, CHUNKS_SEEN]):
        chunk = s.chunk_order[w, k]
        space = s.grass[w, chunk]
        count, low = census[ZOMBIE, chunk], 0 if space < 50 else zombies
        if count < low or count > zombies:
            _balance_object(s, w, chunk, ZOMBIE, count, low, zombies)
        count, low = census[SKELETON, chunk], 0 if s.path[w, chunk] < 6 else skeletons_low
        if count < low or count > skeletons_high:
            _balance_object(s, w, chunk, SKELETON, count, low, skeletons_high)
        count, low = census[COW, chunk], 0 if space < 30 else cows_low
        if count < low or count > cows_high:
            _balance_object(s, w, chunk, COW, count, low, cows_high)


@njit
def _balance_object(
    s: Worlds, w: int, chunk: int, kind: int, count: int, low: int, high: int
) -> None:
    """``CrafterGame._balance_object`` for a chunk whose ``count`` of ``kind`` is outside
    ``[low, high]``."""
    x0, y0 = PAD + (chunk // CHUNKS) * CHUNK, PAD + (chunk % CHUNKS) * CHUNK
    x1, y1 = min(x0 + CHUNK, PAD + AREA), min(y0 + CHUNK, PAD + AREA)
    player = s.objects[w, 1]
    if count < low and _uniform(s, w) < _BALANCE_PROBABILITY[kind, 0]:
        material = _BALANCE[kind, 0]
        cells = 0
        for x in range(x0, x1):
            for y in range(y0, y1):
                cells += s.materials[w, x, y] == material
        chosen = _below(s, w, cells)
        for x in range(x0, x1):
            for y in range(y0, y1):
                if s.materials[w, x, y] == material:
                    if chosen == 0:
                        far = abs(x - player[X]) + abs(y - player[Y]) >= _BALANCE[kind, 1]
                        if not s.ids[w, x, y] and far:
                            add_object(s, w, kind, x, y, 5 if kind == ZOMBIE else 3)
                        return
                    chosen -= 1
    elif count > high and _uniform(s, w) < _BALANCE_PROBABILITY[kind, 1]:
        members = np.empty((x1 - x0) * (y1 - y0), np.int64)
        found = 0
        for x in range(x0, x1):
            for y in range(y0, y1):
                if s.kinds[w, x, y] == kind:
                    members[found] = s.ids[w, x, y]
                    found += 1
        index = np.sort(members[:found])[_below(s, w, count)]
        if _distance(s, w, index) >= _BALANCE[kind, 2]:
            _remove(s, w, index)


# ---------------------------------------------------------------------- the batch
@njit
def _step_all(
    s: Worlds, actions: np.ndarray, daylight: np.ndarray, rewards: np.ndarray,
    dead: np.ndarray, over: np.ndarray, observations: np.ndarray,
) -> None:  # fmt: skip
    """Advance every world by its action and write every world's observation."""
    for w in range(actions.size):
        if s.ints[w, OBJECTS] > _COMPACT_ABOVE:
            _compact(s, w)
        rewards[w], dead[w], over[w] = _advance(s, w, actions[w], daylight)
        _observe(s, w, observations[w])


@njit
def _observe(s: Worlds, w: int, out: np.ndarray) -> None:
    """World ``w``'s symbolic observation (crafter's local view, as
    :class:`~llmgym.envs.crafter.symbolic.SymbolicObserver` lays it out)."""
    player = s.objects[w, 1]
    channels = _CELL_ONEHOT.shape[1]
    offset = 0
    for i in range(VIEW[0]):
        x = player[X] + i - VIEW[0] // 2
        for j in range(VIEW[1]):
            y = player[Y] + j - VIEW[1] // 2
            out[offset : offset + channels] = _CELL_ONEHOT[
                np.int64(s.materials[w, x, y]) * (PLAYER + 1) + s.kinds[w, x, y]
            ]
            offset += channels
    for item in range(s.inventory.shape[1]):
        out[offset + item] = s.inventory[w, item] / 9.0
    offset += s.inventory.shape[1]
    out[offset : offset + 4] = 0.0
    out[offset + s.ints[w, FACING]] = 1.0
    out[offset + 4] = s.floats[w, DAYLIGHT]
    out[offset + 5] = s.ints[w, SLEEPING]


@njit
def _observe_one(s: Worlds, w: int, observations: np.ndarray) -> None:
    _observe(s, w, observations[w])


def _reset_world(s: Worlds, w: int, world_seed: int, config: CrafterConfig) -> None:
    """``CrafterGame.reset``: world ``w`` becomes a fresh world of ``world_seed`` under
    ``config``."""
    random = np.random.RandomState(world_seed)
    s.materials[w].fill(0)
    s.ids[w].fill(0)
    s.kinds[w].fill(0)
    s.chunk_seen[w].fill(False)
    s.census[w].fill(0)
    s.unlocked[w].fill(False)
    s.inventory[w] = _INITIAL
    health = int(_INITIAL[HEALTH])
    s.ints[w] = 0
    s.ints[w, OBJECTS] = 1  # slot 0 is "no object"
    s.ints[w, FACING] = 3  # facing down, (0, 1)
    s.ints[w, LAST_HEALTH] = s.ints[w, PLAYER_LAST_HEALTH] = health
    s.ints[w, LENGTH] = config.length or 0
    s.ints[w, NIGHT] = config.night
    s.floats[w] = 0.0
    s.floats[w, DAYLIGHT] = _daylight_table(1)[0] if config.night else 1.0
    s.floats[w, ZOMBIE_DENSITY] = config.zombie_density
    s.floats[w, SKELETON_DENSITY] = config.skeleton_density
    s.floats[w, COW_DENSITY] = config.cow_density
    center = (AREA // 2, AREA // 2)
    add_object(s, w, PLAYER, center[0] + PAD, center[1] + PAD, 0)
    materials, creatures = generate_terrain(random, (AREA, AREA), center, world_spec(config))
    s.materials[w, PAD : PAD + AREA, PAD : PAD + AREA] = materials
    block = slice(PAD, PAD + CHUNKS * CHUNK)  # the world and some "outside" after it
    counted = np.bincount(
        3 * _CHUNK_INDEX + _COUNTED_MATERIAL[s.materials[w, block, block]].ravel(),
        minlength=CHUNKS * CHUNKS * 3,
    ).reshape(-1, 3)
    s.grass[w], s.path[w] = counted[:, 1], counted[:, 2]
    health_of = {"cow": 3, "zombie": 5, "skeleton": 3}
    kind = {"cow": COW, "zombie": ZOMBIE, "skeleton": SKELETON}
    for name, (x, y) in creatures:
        add_object(s, w, kind[name], x + PAD, y + PAD, health_of[name])
    for name, amount in config.inventory.items():
        s.inventory[w, ITEM[name]] = amount
    _, words, pos, _, _ = random.get_state(legacy=True)
    s.stream[w] = words
    s.ints[w, STREAM_POS] = pos


class CrafterBatchedVectorEnv(CrafterSymbolicVectorEnv):
    """:class:`~llmgym.envs.crafter.vector.CrafterSymbolicVectorEnv` on array worlds: the same
    constructor, episodes, draws, observations, rewards, terminations and infos, step for step
    (``tests/test_crafter_batched.py`` plays both side by side), several times faster."""

    def _make_games(self) -> None:
        self._worlds = Worlds.empty(self.num_envs)
        self._rewards = np.zeros(self.num_envs, np.float64)
        self._dead = np.zeros(self.num_envs, np.bool_)
        self._over = np.zeros(self.num_envs, np.bool_)
        self._end_on_target = np.zeros(self.num_envs, np.bool_)

    def _reset_game(self, index: int, world_seed: int, config: CrafterConfig) -> None:
        _reset_world(self._worlds, index, world_seed, config)
        self._end_on_target[index] = config.end_on_target

    def _observe_started(self, index: int) -> None:
        _observe_one(self._worlds, index, self._observations)

    def _unlocked(self, index: int) -> Collection[str]:
        unlocked = self._worlds.unlocked[index]
        return {name for name, done in zip(ACHIEVEMENTS, unlocked, strict=True) if done}

    def step(
        self, actions: np.ndarray | Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Advance every game by its action index (0-16)."""
        actions = self._checked(actions).astype(np.int64, copy=False)
        worlds = self._worlds
        daylight = _daylight_table(int(worlds.ints[:, STEP].max()) + 2)
        _step_all(
            worlds, actions, daylight, self._rewards, self._dead, self._over, self._observations
        )
        targets = np.array(
            [ACHIEVEMENT[t] if t is not None else -1 for t in self._targets], np.int64
        )
        reached = (targets >= 0) & worlds.unlocked[np.arange(self.num_envs), targets]
        terminated = self._dead | (reached & self._end_on_target)
        truncated = self._over & ~terminated
        self._returns += self._rewards
        self._lengths += 1
        finished = np.flatnonzero(terminated | self._over).tolist()
        rewards = self._rewards.astype(np.float32)
        return self._finish_step(finished, rewards, terminated, truncated)
