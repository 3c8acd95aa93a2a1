"""Many symbolic Crafter worlds in arrays, stepped together: ``llmgym/CrafterSymbolic-v0``'s
games, step for step, without crafter's objects.

:class:`CrafterBatchedVectorEnv` keeps every world's materials, objects and creature kinds in
``(num_envs, 72, 72)`` arrays (the 64x64 world with a border of 4 cells that reads as "outside",
as crafter's ``World.__getitem__`` does), and builds the symbolic observations of all worlds at
once. The rules are crafter's (``crafter/objects.py``, ``crafter/env.py``), transcribed onto
integers: the player's and each creature's update, in crafter's order, with every draw from the
world's own ``RandomState`` made where crafter makes it, so the random streams — and with them
creatures, spawns, sapling luck and everything after — stay crafter's. Crafter's night renderer
draws noise from the same stream; a step at night advances it by the same count, as
:class:`~llmgym.envs.crafter.game.CrafterGame` does when it skips rendering.

What is vectorised: world generation's noise (:class:`~.noise.NoiseGrid`), the observations,
the search for the objects within the player's reach. What is a Python loop per world: the
player's action and the creatures near it (crafter updates them one by one, each drawing from
the shared stream in turn), and crafter's creature balancing every 10 steps, from per-chunk
counts of grass, path and creatures kept up to date as the world changes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from llmgym.envs.crafter import ACHIEVEMENTS, ACTIONS
from llmgym.envs.crafter.config import CrafterConfig
from llmgym.envs.crafter.game import constants, world_spec
from llmgym.envs.crafter.symbolic import CREATURES, INVENTORY, MATERIALS, SYMBOLIC_SIZE, VIEW
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
_IN_REACH = np.flatnonzero(np.abs(_REACH)[:, None] + np.abs(_REACH)[None, :] < UPDATE_REACH)
"""The cells of the square around the player (row-major) that are within reach."""
NIGHT_NOISE_DRAWS = (9 * (64 // 9)) * (7 * (64 // 9))
"""The uniform draws of crafter's night renderer at 64x64 (its 9x7 local view of 7-pixel units),
which a step at night takes from the world's stream."""

MAT = {name: index + 1 for index, name in enumerate(constants.materials)}
WATER, GRASS, PATH, LAVA = MAT["water"], MAT["grass"], MAT["path"], MAT["lava"]
TABLE, FURNACE = MAT["table"], MAT["furnace"]
WALKABLE = frozenset(MAT[name] for name in constants.walkable)
PLAYER_WALKABLE = WALKABLE | {LAVA}
ARROW_WALKABLE = WALKABLE | {WATER, LAVA}

COW, ZOMBIE, SKELETON, ARROW, PLANT, PLAYER = 1, 2, 3, 4, 5, 6
"""Object kinds: the first five in :data:`~.symbolic.CREATURES` order."""
assert CREATURES == ("cow", "zombie", "skeleton", "arrow", "plant")

ITEM = {name: index for index, name in enumerate(INVENTORY)}
HEALTH, FOOD, DRINK, ENERGY = (ITEM[name] for name in ("health", "food", "drink", "energy"))
(ITEM_MAX,) = {constants.items[name]["max"] for name in INVENTORY}
"""Every item's maximum (crafter's are all 9)."""
ACHIEVEMENT = {name: index for index, name in enumerate(ACHIEVEMENTS)}
DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1))
"""Crafter's ``all_dirs`` (``random_dir``'s choices), in order; also the symbolic observation's
facing order."""
NOOP, DO, SLEEP = ACTIONS.index("noop"), ACTIONS.index("do"), ACTIONS.index("sleep")
MOVES = {
    ACTIONS.index(f"move_{name}"): d
    for name, d in zip(("left", "right", "up", "down"), DIRECTIONS, strict=True)
}


def _uses(uses: dict[str, int]) -> tuple[tuple[int, int], ...]:
    return tuple((ITEM[item], amount) for item, amount in uses.items())


COLLECT = {
    MAT[material]: (
        _uses(info["require"]),
        tuple(
            (ITEM[item], amount, ACHIEVEMENT[f"collect_{item}"])
            for item, amount in info["receive"].items()
        ),
        MAT[info["leaves"]],
        info.get("probability", 1),
    )
    for material, info in constants.collect.items()
}
PLACE = {
    ACTIONS.index(f"place_{name}"): (
        _uses(info["uses"]),
        frozenset(MAT[m] for m in info["where"]),
        MAT[name] if info["type"] == "material" else None,
        ACHIEVEMENT[f"place_{name}"],
    )
    for name, info in constants.place.items()
}
MAKE = {
    ACTIONS.index(f"make_{name}"): (
        tuple(MAT[m] for m in info["nearby"]),
        _uses(info["uses"]),
        ITEM[name],
        info["gives"],
        ACHIEVEMENT[f"make_{name}"],
    )
    for name, info in constants.make.items()
}
SWORDS = ((ITEM["wood_sword"], 2), (ITEM["stone_sword"], 3), (ITEM["iron_sword"], 5))

_cells = np.zeros((len(MAT) + 1, PLAYER + 1, len(MATERIALS) + len(CREATURES)), np.float32)
for _channel, _name in enumerate(MATERIALS):
    _cells[MAT[_name], :, _channel] = 1.0
_cells[:, np.arange(1, PLAYER), len(MATERIALS) + np.arange(len(CREATURES))] = 1.0
_CELL_ONEHOT = _cells.reshape((len(MAT) + 1) * (PLAYER + 1), -1)
"""A cell's channels by ``material * 7 + kind``: its material's one-hot, then its creature's (the
player and empty cells have none)."""
_FACING_INDEX = {facing: index for index, facing in enumerate(DIRECTIONS)}
_CHUNK_INDEX = (
    CHUNKS * (np.arange(CHUNKS * CHUNK)[:, None] // CHUNK) + np.arange(CHUNKS * CHUNK) // CHUNK
).ravel()
"""Per cell of the chunks' block (row-major), its chunk's index."""
_COUNTED_MATERIAL = np.zeros(len(MAT) + 1, np.int64)
_COUNTED_MATERIAL[GRASS], _COUNTED_MATERIAL[PATH] = 1, 2
"""What a chunk's census counts of a cell's material: 1 grass, 2 path, 0 anything else."""
_VIEW_X = np.arange(VIEW[0]) - VIEW[0] // 2
_VIEW_Y = np.arange(VIEW[1]) - VIEW[1] // 2
_GRID = VIEW[0] * VIEW[1] * (len(MATERIALS) + len(CREATURES))

_DAYLIGHT: dict[int, float] = {}


def _daylight(step: int) -> float:
    """Crafter's ``Env._update_time`` daylight at ``step`` (its expression, cached)."""
    light = _DAYLIGHT.get(step)
    if light is None:
        progress = (step / 300) % 1 + 0.3
        light = _DAYLIGHT[step] = 1 - np.abs(np.cos(np.pi * progress)) ** 3
    return light


class _Object:
    """A crafter object: its kind, position (in the padded arrays), health and counter (a
    zombie's cooldown, a skeleton's reload, a plant's growth), an arrow's direction."""

    __slots__ = ("counter", "dx", "dy", "health", "index", "kind", "removed", "x", "y")

    def __init__(self, kind: int, x: int, y: int, health: int) -> None:
        self.kind, self.x, self.y, self.health = kind, x, y, health
        self.counter = self.dx = self.dy = self.index = 0
        self.removed = False


class _World:
    """One world: views of its rows of the batch arrays, its objects in crafter's order (index
    0 empty, 1 the player), its chunks in the order crafter's dict first saw them, and the
    player's and episode's state."""

    def __init__(self, materials: np.ndarray, ids: np.ndarray, kinds: np.ndarray) -> None:
        self.mat, self.ids, self.kinds = materials, ids, kinds
        self._use_stream(np.random.RandomState(0))
        self.objects: list[_Object | None] = [None]
        self.chunks: dict[tuple[int, int], None] = {}
        self.player = _Object(PLAYER, 0, 0, 0)
        self.config = CrafterConfig()
        self.step = 0
        self.daylight = 0.0
        self.inventory = [0] * len(INVENTORY)
        self.achievements = [0] * len(ACHIEVEMENTS)
        self.unlocked = [False] * len(ACHIEVEMENTS)
        self._new: list[str] = []
        self.facing = (0, 1)
        self.sleeping = False
        self.player_last_health = self.last_health = 0
        self.hunger = self.thirst = self.fatigue = self.recover = 0.0

    # ------------------------------------------------------------------ crafter's draws
    def _use_stream(self, random: np.random.RandomState) -> None:
        self.random = random
        # ``uniform()`` is ``0.0 + 1.0 * random_sample()``: the same double, for a tenth of the
        # call's cost
        self.uniform = random.random_sample
        self._raw = random._bit_generator.random_raw

    def below(self, count: int) -> int:
        """``random.randint(0, count)`` of crafter's draws, the same number from the same
        32-bit outputs (numpy's legacy masked rejection: the low bits of a draw, drawn again
        while the number is too big; no draw at all for one choice)."""
        if count == 1:
            return 0
        mask = (1 << (count - 1).bit_length()) - 1
        while True:
            value = int(self._raw()) & mask
            if value < count:
                return value

    # ------------------------------------------------------------------ crafter's World
    def reset(self, world_seed: int, config: CrafterConfig) -> None:
        """``CrafterGame.reset``: a fresh world of ``world_seed`` under ``config``."""
        self._use_stream(np.random.RandomState(world_seed))
        self.config = config
        self.step = 0
        self.daylight = _daylight(0) if config.night else 1.0
        self.mat.fill(0)
        self.ids.fill(0)
        self.kinds.fill(0)
        self.objects = [None]
        self.chunks = {}
        self.inventory = [constants.items[name]["initial"] for name in INVENTORY]
        self.achievements = [0] * len(ACHIEVEMENTS)
        self.unlocked = [False] * len(ACHIEVEMENTS)
        self._new = []
        self.facing = (0, 1)
        self.sleeping = False
        self.player_last_health = self.last_health = self.inventory[HEALTH]
        self.hunger = self.thirst = self.fatigue = self.recover = 0
        center = (AREA // 2, AREA // 2)
        self.census = [[[0] * CHUNKS for _ in range(CHUNKS)] for _ in range(PLAYER + 1)]
        self.player = _Object(PLAYER, center[0] + PAD, center[1] + PAD, 0)
        self.add(self.player)
        materials, creatures = generate_terrain(
            self.random, (AREA, AREA), center, world_spec(config)
        )
        self.mat[PAD : PAD + AREA, PAD : PAD + AREA] = materials
        block = slice(PAD, PAD + CHUNKS * CHUNK)  # the world and some "outside" after it
        counted = np.bincount(
            3 * _CHUNK_INDEX + _COUNTED_MATERIAL[self.mat[block, block]].ravel(),
            minlength=CHUNKS * CHUNKS * 3,
        ).reshape(CHUNKS, CHUNKS, 3)
        self.grass, self.path = counted[..., 1].tolist(), counted[..., 2].tolist()
        health = {"cow": 3, "zombie": 5, "skeleton": 3}
        kind = {"cow": COW, "zombie": ZOMBIE, "skeleton": SKELETON}
        for name, (x, y) in creatures:
            self.add(_Object(kind[name], x + PAD, y + PAD, health[name]))
        for name, amount in config.inventory.items():
            self.inventory[ITEM[name]] = amount

    def add(self, obj: _Object) -> None:
        obj.index = len(self.objects)
        self.objects.append(obj)
        self.ids[obj.x, obj.y] = obj.index
        self.kinds[obj.x, obj.y] = obj.kind
        cx, cy = (obj.x - PAD) // CHUNK, (obj.y - PAD) // CHUNK
        self.chunks.setdefault((cx, cy))
        self.census[obj.kind][cx][cy] += 1

    def remove(self, obj: _Object) -> None:
        if obj.removed:
            return
        self.objects[obj.index] = None
        self.ids[obj.x, obj.y] = 0
        self.kinds[obj.x, obj.y] = 0
        self.census[obj.kind][(obj.x - PAD) // CHUNK][(obj.y - PAD) // CHUNK] -= 1
        obj.removed = True

    def move(self, obj: _Object, dx: int, dy: int, walkable: Collection[int]) -> bool:
        """Crafter's ``Object.move``: whether the target cell was free (a removed object
        answers but stays put, as in crafter)."""
        x, y = obj.x + dx, obj.y + dy
        if self.ids[x, y] or self.mat[x, y] not in walkable:
            return False
        if obj.removed:
            return True
        self.ids[x, y] = obj.index
        self.kinds[x, y] = obj.kind
        self.ids[obj.x, obj.y] = 0
        self.kinds[obj.x, obj.y] = 0
        cx, cy = (x - PAD) // CHUNK, (y - PAD) // CHUNK
        old_cx, old_cy = (obj.x - PAD) // CHUNK, (obj.y - PAD) // CHUNK
        if cx != old_cx or cy != old_cy:
            self.chunks.setdefault((cx, cy))
            census = self.census[obj.kind]
            census[old_cx][old_cy] -= 1
            census[cx][cy] += 1
        obj.x, obj.y = x, y
        return True

    def set_material(self, x: int, y: int, material: int) -> None:
        """Change a cell of the world, keeping the chunks' grass and path counts."""
        cx, cy = (x - PAD) // CHUNK, (y - PAD) // CHUNK
        old = self.mat[x, y]
        if old == GRASS:
            self.grass[cx][cy] -= 1
        elif old == PATH:
            self.path[cx][cy] -= 1
        if material == GRASS:
            self.grass[cx][cy] += 1
        elif material == PATH:
            self.path[cx][cy] += 1
        self.mat[x, y] = material

    def _object(self, object_id: int) -> _Object:
        """The live object with this id (cells' ``ids`` name only live ones)."""
        obj = self.objects[object_id]
        assert obj is not None, f"cell names removed object {object_id}"
        return obj

    def damage(self, obj: _Object, amount: int) -> None:
        if obj.kind == PLAYER:
            self.inventory[HEALTH] = max(0, self.inventory[HEALTH] - amount)
        else:
            obj.health = max(0, obj.health - amount)

    # ------------------------------------------------------------------ crafter's Env.step
    def advance(self, action: int) -> tuple[float, bool, bool, list[str]]:
        """One step of ``CrafterGame.step``: ``(reward, dead, over, new achievements)``."""
        self.step += 1
        self.daylight = _daylight(self.step) if self.config.night else 1.0
        objects = self.objects
        snapshot = len(objects)  # what the player adds now waits for the next step
        self._update_player(action)
        px, py = self.player.x, self.player.y
        reach = UPDATE_REACH - 1
        near = self.ids[px - reach : px + reach + 1, py - reach : py + reach + 1].take(_IN_REACH)
        near = near[(near > 1) & (near < snapshot)]
        near.sort()
        for index in near.tolist():
            obj = objects[index]
            kind = obj.kind
            if kind == ZOMBIE:
                self._update_zombie(obj)
            elif kind == COW:
                self._update_cow(obj)
            elif kind == SKELETON:
                self._update_skeleton(obj)
            elif kind == ARROW:
                self._update_arrow(obj)
            else:
                self._update_plant(obj)
        if self.step % 10 == 0:
            self._balance()
        if self.daylight < 0.5:
            self.random.random_sample(NIGHT_NOISE_DRAWS)
        health = self.inventory[HEALTH]
        reward = (health - self.last_health) / 10
        self.last_health = health
        new = sorted(self._new, key=ACHIEVEMENT.__getitem__)
        if new:
            self._new.clear()
            reward += 1.0
        length = self.config.length
        return reward, health <= 0, bool(length and self.step >= length), new

    # ------------------------------------------------------------------ the player
    def _update_player(self, action: int) -> None:
        player, inventory = self.player, self.inventory
        fx, fy = self.facing
        tx, ty = player.x + fx, player.y + fy
        material, target = int(self.mat[tx, ty]), int(self.ids[tx, ty])
        if self.sleeping:
            if inventory[ENERGY] < ITEM_MAX:
                action = SLEEP
            else:
                self.sleeping = False
                self._achieve(ACHIEVEMENT["wake_up"])
        if action == NOOP:
            pass
        elif action in MOVES:
            self.facing = MOVES[action]
            self.move(player, *self.facing, PLAYER_WALKABLE)
            if self.mat[player.x, player.y] == LAVA:
                inventory[HEALTH] = 0
        elif action == DO:
            if target:
                self._do_object(self._object(target))
            else:
                self._do_material(tx, ty, material)
        elif action == SLEEP:
            if inventory[ENERGY] < ITEM_MAX:
                self.sleeping = True
        elif action in PLACE:
            self._place(PLACE[action], tx, ty, material, target)
        else:
            self._make(MAKE[action])
        self._update_life_stats()
        self._degen_or_regen_health()
        self.inventory = [0 if a < 0 else ITEM_MAX if a > ITEM_MAX else a for a in inventory]
        if self.inventory[HEALTH] < self.player_last_health:
            self.sleeping = False
        self.player_last_health = self.inventory[HEALTH]

    def _achieve(self, index: int) -> None:
        self.achievements[index] += 1
        if not self.unlocked[index]:
            self.unlocked[index] = True
            self._new.append(ACHIEVEMENTS[index])

    def _do_object(self, obj: _Object) -> None:
        inventory = self.inventory
        damage = max(1, *(value if inventory[item] else 0 for item, value in SWORDS))
        kind = obj.kind
        if kind == PLANT:
            if obj.counter > 300:
                obj.counter = 0
                inventory[FOOD] += 4
                self._achieve(ACHIEVEMENT["eat_plant"])
        elif kind in (ZOMBIE, SKELETON, COW):
            obj.health = max(0, obj.health - damage)
            if obj.health <= 0:
                if kind == ZOMBIE:
                    self._achieve(ACHIEVEMENT["defeat_zombie"])
                elif kind == SKELETON:
                    self._achieve(ACHIEVEMENT["defeat_skeleton"])
                else:
                    inventory[FOOD] += 6
                    self._achieve(ACHIEVEMENT["eat_cow"])
                    self.hunger = 0

    def _do_material(self, x: int, y: int, material: int) -> None:
        if material == WATER:
            self.thirst = 0
        info = COLLECT.get(material)
        if info is None:
            return
        require, receive, leaves, probability = info
        inventory = self.inventory
        if any(inventory[item] < amount for item, amount in require):
            return
        self.set_material(x, y, leaves)
        if self.uniform() <= probability:
            for item, amount, achievement in receive:
                inventory[item] += amount
                self._achieve(achievement)

    def _place(self, info: tuple[Any, ...], x: int, y: int, material: int, target: int) -> None:
        uses, where, placed, achievement = info
        if target or material not in where:
            return
        inventory = self.inventory
        if any(inventory[item] < amount for item, amount in uses):
            return
        for item, amount in uses:
            inventory[item] -= amount
        if placed is not None:
            self.set_material(x, y, placed)
        else:
            self.add(_Object(PLANT, x, y, 1))
        self._achieve(achievement)

    def _make(self, info: tuple[Any, ...]) -> None:
        nearby, uses, item, gives, achievement = info
        player = self.player
        # crafter slices [x - 1 : x + 2]: at the world's first row or column the slice is empty
        if player.x == PAD or player.y == PAD:
            return
        area = self.mat[player.x - 1 : player.x + 2, player.y - 1 : player.y + 2]
        if not all((area == station).any() for station in nearby):
            return
        inventory = self.inventory
        if any(inventory[name] < amount for name, amount in uses):
            return
        for name, amount in uses:
            inventory[name] -= amount
        inventory[item] += gives
        self._achieve(achievement)

    def _update_life_stats(self) -> None:
        inventory, sleeping = self.inventory, self.sleeping
        self.hunger += 0.5 if sleeping else 1
        if self.hunger > 25:
            self.hunger = 0
            inventory[FOOD] -= 1
        self.thirst += 0.5 if sleeping else 1
        if self.thirst > 20:
            self.thirst = 0
            inventory[DRINK] -= 1
        if sleeping:
            self.fatigue = min(self.fatigue - 1, 0)
        else:
            self.fatigue += 1
        if self.fatigue < -10:
            self.fatigue = 0
            inventory[ENERGY] += 1
        if self.fatigue > 30:
            self.fatigue = 0
            inventory[ENERGY] -= 1

    def _degen_or_regen_health(self) -> None:
        inventory, sleeping = self.inventory, self.sleeping
        if inventory[FOOD] > 0 and inventory[DRINK] > 0 and (inventory[ENERGY] > 0 or sleeping):
            self.recover += 2 if sleeping else 1
        else:
            self.recover -= 0.5 if sleeping else 1
        if self.recover > 25:
            self.recover = 0
            inventory[HEALTH] += 1
        if self.recover < -15:
            self.recover = 0
            inventory[HEALTH] = max(0, inventory[HEALTH] - 1)

    # ------------------------------------------------------------------ the creatures
    def _toward(self, obj: _Object, long_axis: bool) -> tuple[int, int]:
        ox, oy = self.player.x - obj.x, self.player.y - obj.y
        if abs(ox) > abs(oy) if long_axis else abs(ox) <= abs(oy):
            return (ox > 0) - (ox < 0), 0
        return 0, (oy > 0) - (oy < 0)

    def _distance(self, obj: _Object) -> int:
        return abs(self.player.x - obj.x) + abs(self.player.y - obj.y)

    def _update_cow(self, cow: _Object) -> None:
        if cow.health <= 0:
            self.remove(cow)
        if self.uniform() < 0.5:
            self.move(cow, *DIRECTIONS[self.below(4)], WALKABLE)

    def _update_zombie(self, zombie: _Object) -> None:
        if zombie.health <= 0:
            self.remove(zombie)
        if self._distance(zombie) <= 8 and self.uniform() < 0.9:
            self.move(zombie, *self._toward(zombie, self.uniform() < 0.8), WALKABLE)
        else:
            self.move(zombie, *DIRECTIONS[self.below(4)], WALKABLE)
        if self._distance(zombie) <= 1:
            if zombie.counter:
                zombie.counter -= 1
            else:
                self.damage(self.player, 7 if self.sleeping else 2)
                zombie.counter = 5

    def _update_skeleton(self, skeleton: _Object) -> None:
        if skeleton.health <= 0:
            self.remove(skeleton)
        skeleton.counter = max(0, skeleton.counter - 1)
        dist = self._distance(skeleton)
        if dist <= 3:
            dx, dy = self._toward(skeleton, self.uniform() < 0.6)
            if self.move(skeleton, -dx, -dy, WALKABLE):
                return
        if dist <= 5 and self.uniform() < 0.5:
            self._shoot(skeleton, *self._toward(skeleton, True))
        elif dist <= 8 and self.uniform() < 0.3:
            self.move(skeleton, *self._toward(skeleton, self.uniform() < 0.6), WALKABLE)
        elif self.uniform() < 0.2:
            self.move(skeleton, *DIRECTIONS[self.below(4)], WALKABLE)

    def _shoot(self, skeleton: _Object, dx: int, dy: int) -> None:
        if skeleton.counter > 0 or (dx == 0 and dy == 0):
            return
        x, y = skeleton.x + dx, skeleton.y + dy
        if self.ids[x, y] or self.mat[x, y] not in ARROW_WALKABLE:
            return
        arrow = _Object(ARROW, x, y, 0)
        arrow.dx, arrow.dy = dx, dy
        self.add(arrow)
        skeleton.counter = 4

    def _update_arrow(self, arrow: _Object) -> None:
        x, y = arrow.x + arrow.dx, arrow.y + arrow.dy
        target = int(self.ids[x, y])
        if target:
            self.damage(self._object(target), 2)
            self.remove(arrow)
            return
        material = int(self.mat[x, y])
        if material not in ARROW_WALKABLE:
            self.remove(arrow)
            if material in (TABLE, FURNACE):
                self.set_material(x, y, PATH)
        else:
            self.move(arrow, arrow.dx, arrow.dy, ARROW_WALKABLE)

    def _update_plant(self, plant: _Object) -> None:
        plant.counter += 1
        kinds = self.kinds
        x, y = plant.x, plant.y
        if any(kinds[x + dx, y + dy] in (ZOMBIE, SKELETON, COW) for dx, dy in DIRECTIONS):
            plant.health = max(0, plant.health - 1)
        if plant.health <= 0:
            self.remove(plant)

    # ------------------------------------------------------------------ crafter's balancing
    def _balance(self) -> None:
        """``CrafterGame._balance_chunk`` over the chunks in crafter's order, from the chunks'
        counts of grass, path and creatures (kept as the world changes); only a chunk outside
        its target range draws and runs crafter's spawn or despawn."""
        grass, path = self.grass, self.path
        zombie_count, skeleton_count, cow_count = (self.census[k] for k in (ZOMBIE, SKELETON, COW))
        light, config = self.daylight, self.config
        # crafter's target ranges: the same float expressions, truncated by int() as crafter's
        zombies = int((3.5 - 3 * light) * config.zombie_density)
        skeletons_low, skeletons_high = (
            int(1 * config.skeleton_density),
            int(2 * config.skeleton_density),
        )
        cows_low, cows_high = int(1 * config.cow_density), int((1.5 + light) * config.cow_density)
        for cx, cy in list(self.chunks):
            space = grass[cx][cy]
            count, low = zombie_count[cx][cy], 0 if space < 50 else zombies
            if count < low or count > zombies:
                self._balance_object(cx, cy, ZOMBIE, count, low, zombies)
            count, low = skeleton_count[cx][cy], 0 if path[cx][cy] < 6 else skeletons_low
            if count < low or count > skeletons_high:
                self._balance_object(cx, cy, SKELETON, count, low, skeletons_high)
            count, low = cow_count[cx][cy], 0 if space < 30 else cows_low
            if count < low or count > cows_high:
                self._balance_object(cx, cy, COW, count, low, cows_high)

    def _chunk_members(self, cx: int, cy: int, kind: int) -> list[_Object]:
        """The objects of ``kind`` in chunk ``(cx, cy)``, in the order they were added."""
        x0, y0 = PAD + cx * CHUNK, PAD + cy * CHUNK
        cells = (slice(x0, min(x0 + CHUNK, PAD + AREA)), slice(y0, min(y0 + CHUNK, PAD + AREA)))
        ids = np.sort(self.ids[cells][self.kinds[cells] == kind])
        return [self._object(index) for index in ids.tolist()]

    def _balance_object(self, cx: int, cy: int, kind: int, count: int, low: int, high: int) -> None:
        """``CrafterGame._balance_object`` for a chunk whose ``count`` of ``kind`` is outside
        ``[low, high]``."""
        material, span_dist, despan_dist, spawn_prob, despawn_prob = _BALANCE[kind]
        if count < low and self.uniform() < spawn_prob:
            x0, y0 = PAD + cx * CHUNK, PAD + cy * CHUNK
            xs, ys = np.nonzero(
                self.mat[x0 : min(x0 + CHUNK, PAD + AREA), y0 : min(y0 + CHUNK, PAD + AREA)]
                == material
            )
            i = self.below(len(xs))
            x, y = x0 + int(xs[i]), y0 + int(ys[i])
            player = self.player
            if not self.ids[x, y] and abs(x - player.x) + abs(y - player.y) >= span_dist:
                self.add(_Object(kind, x, y, 5 if kind == ZOMBIE else 3))
        elif count > high and self.uniform() < despawn_prob:
            obj = self._chunk_members(cx, cy, kind)[self.below(count)]
            if self._distance(obj) >= despan_dist:
                self.remove(obj)


_BALANCE = {
    ZOMBIE: (GRASS, 6, 0, 0.3, 0.4),
    SKELETON: (PATH, 7, 7, 0.1, 0.1),
    COW: (GRASS, 5, 5, 0.01, 0.1),
}
"""Crafter's balancing of each kind: its material, spawn and despawn distances from the
player, spawn and despawn probabilities."""


class CrafterBatchedVectorEnv(CrafterSymbolicVectorEnv):
    """:class:`~llmgym.envs.crafter.vector.CrafterSymbolicVectorEnv` on array worlds: the same
    constructor, episodes, draws, observations, rewards, terminations and infos, step for step
    (``tests/test_crafter_batched.py`` plays both side by side), several times faster."""

    def _make_games(self) -> None:
        count = self.num_envs
        self._materials = np.zeros((count, SIZE, SIZE), np.uint8)
        self._ids = np.zeros((count, SIZE, SIZE), np.int32)
        self._kinds = np.zeros((count, SIZE, SIZE), np.uint8)
        self._worlds = [
            _World(self._materials[i], self._ids[i], self._kinds[i]) for i in range(count)
        ]

    def _reset_game(self, index: int, world_seed: int, config: CrafterConfig) -> None:
        self._worlds[index].reset(world_seed, config)

    def _observe_started(self, index: int) -> None:
        self._observe(np.array([index]))

    def _unlocked(self, index: int) -> Collection[str]:
        world = self._worlds[index]
        return {name for name, done in zip(ACHIEVEMENTS, world.unlocked, strict=True) if done}

    def step(
        self, actions: np.ndarray | Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Advance every game by its action index (0-16)."""
        actions = self._checked(actions)
        count = self.num_envs
        rewards = np.zeros(count, np.float32)
        terminated = np.zeros(count, bool)
        truncated = np.zeros(count, bool)
        finished: list[int] = []
        for index, (world, action) in enumerate(zip(self._worlds, actions.tolist(), strict=True)):
            reward, dead, over, _ = world.advance(action)
            target = self._targets[index]
            reached = target is not None and world.unlocked[ACHIEVEMENT[target]]
            ended = dead or (reached and world.config.end_on_target)
            rewards[index] = reward
            terminated[index] = ended
            truncated[index] = over and not ended
            self._returns[index] += reward
            self._lengths[index] += 1
            if ended or over:
                finished.append(index)
        self._observe(np.arange(count))
        return self._finish_step(finished, rewards, terminated, truncated)

    def _observe(self, indices: np.ndarray) -> None:
        """Write the symbolic observations of the worlds ``indices`` (crafter's local view, as
        :class:`~llmgym.envs.crafter.symbolic.SymbolicObserver` lays it out)."""
        worlds = [self._worlds[i] for i in indices.tolist()]
        count = len(worlds)
        xs = np.array([w.player.x for w in worlds])[:, None] + _VIEW_X
        ys = np.array([w.player.y for w in worlds])[:, None] + _VIEW_Y
        cells = (indices[:, None, None], xs[:, :, None], ys[:, None, :])
        codes = self._materials[cells] * np.uint8(PLAYER + 1) + self._kinds[cells]
        out = np.empty((count, SYMBOLIC_SIZE), np.float32)
        out[:, :_GRID] = _CELL_ONEHOT[codes].reshape(count, _GRID)
        base = _GRID + len(INVENTORY)
        out[:, _GRID:base] = np.array([w.inventory for w in worlds]) / 9.0
        out[:, base : base + len(DIRECTIONS)] = 0.0
        out[np.arange(count), base + np.array([_FACING_INDEX[w.facing] for w in worlds])] = 1.0
        base += len(DIRECTIONS)
        out[:, base] = [w.daylight for w in worlds]
        out[:, base + 1] = [w.sleeping for w in worlds]
        self._observations[indices] = out
