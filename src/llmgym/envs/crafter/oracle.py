"""A scripted Crafter planner over the true state: the oracle of Crafter-v0 and CrafterPixels-v0.

Each step it (1) keeps the agent alive — fights adjacent zombies, drinks, eats and sleeps when
vitals run low — then (2) works towards the task's target through crafter's tech tree
(wood -> table -> wood pickaxe -> stone -> stone pickaxe -> coal, iron -> furnace -> iron
tools -> diamond), then (3) towards the other achievements. Movement uses shortest paths over the
full map (mining through stone once it has a pickaxe, never entering lava). It reads crafter's
recipes from ``crafter.constants`` rather than restating them.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from llmgym.envs.crafter import ACTIONS
from llmgym.envs.crafter.game import CrafterGame, constants, objects

if TYPE_CHECKING:  # crafter ships no types: these name what the values are
    from crafter.objects import Object, Plant

__all__ = ["CrafterOracle"]

_ACTION = {name: i for i, name in enumerate(ACTIONS)}
_MOVES = {(-1, 0): _ACTION["move_left"], (1, 0): _ACTION["move_right"],
          (0, -1): _ACTION["move_up"], (0, 1): _ACTION["move_down"]}  # fmt: skip
_DIRS = tuple(_MOVES)
_WALKABLE = frozenset(constants.walkable)
_MINABLE = {"stone": "wood_pickaxe", "coal": "wood_pickaxe", "iron": "stone_pickaxe",
            "diamond": "iron_pickaxe"}  # fmt: skip
_SOURCE = {"wood": "tree", "stone": "stone", "coal": "coal", "iron": "iron",
           "diamond": "diamond"}  # fmt: skip
_TOOLS = ("wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword", "stone_sword",
          "iron_sword")  # fmt: skip
# the order in which the planner works through achievements once its target is done
_AGENDA = (
    "collect_wood", "place_table", "make_wood_pickaxe", "make_wood_sword", "collect_sapling",
    "place_plant", "collect_drink", "collect_stone", "place_stone", "make_stone_pickaxe",
    "make_stone_sword", "collect_coal", "eat_cow", "place_furnace", "defeat_zombie",
    "collect_iron", "make_iron_pickaxe", "make_iron_sword", "wake_up", "collect_diamond",
    "defeat_skeleton", "eat_plant",
)  # fmt: skip
_KIT = ("collect_wood", "place_table", "make_wood_pickaxe", "make_wood_sword")
# targets reached quickly enough that the planner goes straight for them
_QUICK = frozenset({"collect_wood", "place_table", "make_wood_pickaxe", "make_wood_sword",
                    "collect_sapling", "place_plant", "collect_drink", "eat_cow"})  # fmt: skip
Cell = tuple[int, int]
Direction = tuple[int, int]
Goal = Callable[[Cell, Direction], "int | None"]
"""``goal(cell, arrival_direction)``: the final action (-1 for none) at a goal cell, else None."""
Parents = dict[Cell, "tuple[Cell, Direction] | None"]
"""The search's tree: each cell's parent cell and the direction of the move from it."""


class CrafterOracle:
    """Chooses crafter action indices for a :class:`CrafterGame`; :meth:`reset` per episode."""

    def __init__(self, game: CrafterGame) -> None:
        self.game = game
        self.target: str | None = None
        self._plants: list[Plant] = []
        self._busy: str | None = None  # a multi-step activity in progress: "drink" or "eat"
        self._pocket: tuple[Cell, Cell, Cell, Direction] | None = None
        self._bad_sites: set[Cell] = set()
        self._search_end: Cell = (0, 0)

    def reset(self, target: str | None) -> None:
        self.target = target
        self._plants = []
        self._busy = None
        self._pocket = None
        self._bad_sites = set()

    # ------------------------------------------------------------------ top level
    def act(self) -> int:
        """The next action index."""
        player = self.game.player
        if player.sleeping:
            return _ACTION["noop"]
        self._plants = [o for o in self.game.world.objects if isinstance(o, objects.Plant)]
        action = self._survive()
        if action is not None:
            return action
        goals = [] if self.target in _QUICK else list(_KIT)
        goals += [self.target] if self.target else []
        goals += [g for g in _AGENDA if g != self.target]
        for goal in goals:
            if goal in self.game.unlocked:
                continue
            action = self._pursue(goal)
            if action is not None:
                return action
        return self._wander()

    # ------------------------------------------------------------------ survival
    def _survive(self) -> int | None:
        player, inv = self.game.player, self.game.player.inventory
        zombie = self._adjacent_creature(objects.Zombie)
        if zombie is not None:
            return self._strike(zombie)
        if (self._busy == "drink" and inv["drink"] < 9) or inv["drink"] <= 3:
            self._busy = "drink"
            action = self._interact(lambda m, o: m == "water" and o is None, dig=True)
            if action is not None:
                return action
        if self._busy == "drink":
            self._busy = None
        if (self._busy == "eat" and inv["food"] < 7) or inv["food"] <= 3:
            self._busy = "eat"
            action = self._hunt(objects.Cow)
            if action is not None:
                return action
        if self._busy == "eat":
            self._busy = None
        if inv["energy"] <= 1 and self._nearest_creature_distance(objects.Zombie) > 4:
            return _ACTION["sleep"]  # exhausted: health drains awake, sleep where we stand
        if inv["energy"] <= 3 or inv["health"] <= 3:
            return self._sleep()
        if self._dusk():
            action = self._shelter()
            if action is not None:
                return action
            if self._sealed(tuple(player.pos.tolist())):
                return _ACTION["sleep"] if inv["energy"] < 9 else _ACTION["noop"]
        return None

    def _dusk(self) -> bool:
        """Whether it is night or nearly (zombies spawn in the dark): crafter's daylight is below
        one half from step 148 to 272 of every 300."""
        return self.game.config.night and 135 <= self.game.step_count % 300 < 272

    def _sleep(self) -> int:
        """Sleep, in a sealed pocket dug into stone when one can be made nearby."""
        action = self._shelter()
        if action is not None:
            return action
        if self._nearest_creature_distance(objects.Zombie) <= 6:
            return self._flee(objects.Zombie)
        return _ACTION["sleep"] if self.game.player.inventory["energy"] < 9 else _ACTION["noop"]

    def _shelter(self) -> int | None:
        """Dig a two-cell pocket into stone and seal its entrance: from the entrance E, mine the
        stone A ahead and B behind it, step in to B, step back to A (now facing E) and place a
        stone on E. ``None`` once sealed in (or when no pocket can be made)."""
        world, player = self.game.world, self.game.player
        inv = player.inventory
        pos = tuple(player.pos.tolist())
        if self._sealed(pos):
            return None
        if inv["wood_pickaxe"] < 1:
            return None
        plan = self._pocket
        if plan is not None and not self._viable(plan):
            plan = self._pocket = None
        if plan is not None:
            entrance, a, b, d = plan
            material_a = world[a][0]
            material_b = world[b][0]
            if pos == b:
                return _MOVES[(-d[0], -d[1])]
            if pos == a:
                if material_b != "path":
                    return _ACTION["do"] if tuple(player.facing) == d else _MOVES[d]
                if self._free(entrance) and inv["stone"] > 0:
                    facing_out = tuple(player.facing) == (-d[0], -d[1])
                    return _ACTION["place_stone"] if facing_out else _MOVES[d]
                # sealed from outside yet not closed (a creature inside, a leak): give up here
                self._bad_sites.add(entrance)
                self._pocket = None
                return None
            if pos == entrance and tuple(player.facing) == d:
                return _ACTION["do"] if material_a == "stone" else _MOVES[d]
            path = self._search(lambda cell, arrived: _MOVES[d] if cell == entrance else None,
                                dig=True, limit=40)  # fmt: skip
            if path:
                return path[0]
        sites = {e: site for e, site in self._pocket_sites().items() if e not in self._bad_sites}
        if not sites:
            self._pocket = None
            return None

        def goal(cell: Cell, arrived: Direction) -> int | None:
            site = sites.get(cell)
            return None if site is None else _MOVES[site[2]]

        path = self._search(goal, limit=30)
        if not path:
            self._pocket = None
            return None
        target = self._search_end
        a, b, d = sites[target]
        self._pocket = (target, a, b, d)
        return path[0]

    def _viable(self, plan: tuple[Cell, Cell, Cell, Direction]) -> bool:
        world = self.game.world
        entrance, a, b, _ = plan
        return (
            world[a][0] in ("stone", "path")
            and world[b][0] in ("stone", "path")
            and world[entrance][0] in ("stone", *_WALKABLE)
        )

    def _sealed(self, pos: Cell) -> bool:
        """Whether the agent's walkable region is at most its pocket (two cells, no creature)."""
        world = self.game.world
        seen, stack = {pos}, [pos]
        while stack:
            x, y = stack.pop()
            for d in _DIRS:
                cell = (x + d[0], y + d[1])
                if cell in seen:
                    continue
                material, obj = world[cell]
                if material in _WALKABLE:
                    if obj is not None or len(seen) >= 2:
                        return False
                    seen.add(cell)
                    stack.append(cell)
        return True

    def _pocket_sites(self) -> dict[Cell, tuple[Cell, Cell, tuple[int, int]]]:
        """Entrances E -> (A, B, direction) of pockets that can be dug nearby."""
        world = self.game.world
        mat = world._mat_map
        ids = world._mat_ids
        open_ = np.isin(mat, [ids[m] for m in _WALKABLE])
        stone = mat == ids["stone"]
        px, py = self.game.player.pos.tolist()
        width, height = world.area
        sites = {}
        for x in range(max(2, px - 12), min(width - 2, px + 13)):
            for y in range(max(2, py - 12), min(height - 2, py + 13)):
                if not stone[x, y]:
                    continue
                for d in _DIRS:
                    e = (x - d[0], y - d[1])
                    b = (x + d[0], y + d[1])
                    side = (d[1], d[0])
                    walls = [
                        (x + side[0], y + side[1]), (x - side[0], y - side[1]),
                        (b[0] + d[0], b[1] + d[1]), (b[0] + side[0], b[1] + side[1]),
                        (b[0] - side[0], b[1] - side[1]),
                    ]  # fmt: skip
                    if (
                        open_[e]
                        and stone[b]
                        and not any(open_[w] for w in walls)
                        and world[e][1] is None
                    ):
                        sites[e] = ((x, y), b, d)
        return sites

    # ------------------------------------------------------------------ goals
    def _pursue(self, goal: str) -> int | None:
        kind, _, what = goal.partition("_")
        inv = self.game.player.inventory
        if goal == "collect_drink":
            return self._interact(lambda m, o: m == "water" and o is None)
        if goal == "collect_sapling":
            return self._interact(lambda m, o: m == "grass" and o is None, blocked_only=False)
        if kind == "collect":
            return self._gather(what, inv[what] + 1)
        if goal == "place_plant":
            return self._ensure_item("sapling", 1) or self._place("plant")
        if kind == "place":
            cost = constants.place[what]["uses"]
            for item, amount in cost.items():
                action = self._ensure_item(item, amount)
                if action is not None:
                    return action
            return self._place(what)
        if kind == "make":
            return self._make(what)
        if goal == "eat_cow":
            return self._hunt(objects.Cow)
        if goal == "defeat_zombie":
            return self._ensure_tool("wood_sword") or self._hunt(objects.Zombie)
        if goal == "defeat_skeleton":
            return self._ensure_tool("stone_sword") or self._hunt(objects.Skeleton)
        if goal == "wake_up":
            if inv["energy"] < 9:
                return self._sleep()
            return None
        if goal == "eat_plant":
            return self._eat_plant()
        return None

    def _gather(self, item: str, count: int) -> int | None:
        """Act towards holding ``count`` of material ``item``; ``None`` once held."""
        inv = self.game.player.inventory
        if inv[item] >= min(count, 9):
            return None
        if item == "sapling":
            return self._interact(lambda m, o: m == "grass" and o is None, blocked_only=False)
        tool = _MINABLE.get(_SOURCE[item])
        if tool is not None and inv[tool] < 1:
            return self._ensure_tool(tool)
        source = _SOURCE[item]
        action = self._interact(lambda m, o: m == source and o is None, dig=True)
        return action if action is not None else self._wander()

    def _ensure_item(self, item: str, count: int) -> int | None:
        if item in _TOOLS:
            return self._ensure_tool(item)
        return self._gather(item, count)

    def _ensure_tool(self, tool: str) -> int | None:
        if self.game.player.inventory[tool] >= 1:
            return None
        return self._make(tool)

    def _make(self, tool: str) -> int | None:
        """Act towards making ``tool`` (gathering, placing stations, then the make action)."""
        recipe = constants.make[tool]
        stations = recipe["nearby"]
        # materials for the tool plus any station that will have to be placed
        needs = dict(recipe["uses"])
        for station in stations:
            if not self._station_near(station):
                for item, amount in constants.place[station]["uses"].items():
                    needs[item] = needs.get(item, 0) + amount
        for item, amount in needs.items():
            action = self._ensure_item(item, amount)
            if action is not None:
                return action
        action = self._reach_stations(stations)
        if action is not None:
            return action
        return _ACTION[f"make_{tool}"]

    # ------------------------------------------------------------------ stations
    def _station_near(self, station: str, radius: int = 8) -> bool:
        """Whether a ``station`` stands within ``radius`` cells (either axis) of the agent."""
        world = self.game.world
        px, py = self.game.player.pos.tolist()
        block = world._mat_map[
            max(0, px - radius) : px + radius + 1, max(0, py - radius) : py + radius + 1
        ]
        return bool((block == world._mat_ids[station]).any())

    def _reach_stations(self, stations: list[str]) -> int | None:
        """Stand within one cell (8-neighbourhood) of every station, walking to existing ones
        and placing the missing ones there."""
        world, player = self.game.world, self.game.player
        nearby, _ = world.nearby(player.pos, 1)
        if all(s in nearby for s in stations):
            return None
        reachable = [s for s in stations if self._station_near(s)]
        if reachable and not all(s in nearby for s in reachable):
            path = self._walk_to(self._cells_near_all(reachable))
            if path:
                return path[0]
        present = [s for s in stations if s in nearby]
        station = next(s for s in stations if s not in nearby)
        for item, amount in constants.place[station]["uses"].items():
            action = self._ensure_item(item, amount)
            if action is not None:
                return action
        return self._place(station, keep_near=present)

    def _cells_near_all(self, stations: list[str]) -> set[Cell]:
        world = self.game.world
        area = world.area
        mat = world._mat_map
        ids = [world._mat_ids[s] for s in stations]
        px, py = self.game.player.pos.tolist()
        cells = set()
        for x in range(max(0, px - 9), min(area[0], px + 10)):
            for y in range(max(0, py - 9), min(area[1], py + 10)):
                if not self._free((x, y)):
                    continue
                block = mat[max(0, x - 1) : x + 2, max(0, y - 1) : y + 2]
                if all((block == i).any() for i in ids):
                    cells.add((x, y))
        return cells

    # ------------------------------------------------------------------ placing
    def _place(self, what: str, keep_near: list[str] | None = None) -> int | None:
        """Face a cell where ``what`` can be placed (keeping ``keep_near`` stations within one
        cell), then place it."""
        where = set(constants.place[what]["where"])
        world, player = self.game.world, self.game.player
        front = self._front()
        material, obj = world[front]
        if obj is None and material in where:
            return _ACTION[f"place_{what}"]
        keep = keep_near or []
        best = None
        px, py = player.pos.tolist()
        for d in _DIRS:
            cell = (px + d[0], py + d[1])
            m, o = world[cell]
            if o is None and m in where and not self._free(cell):
                return _MOVES[d]  # a placeable cell we cannot enter (water, lava): turn to it
            if self._free(cell) and all(self._near_material(cell, s) for s in keep):
                best = best or _MOVES[d]
        if best is not None:
            return best
        return self._wander()

    def _near_material(self, cell: Cell, material: str) -> bool:
        world = self.game.world
        x, y = cell
        block = world._mat_map[max(0, x - 1) : x + 2, max(0, y - 1) : y + 2]
        return bool((block == world._mat_ids[material]).any())

    # ------------------------------------------------------------------ creatures
    def _creatures(self, cls: type[Object]) -> list[Object]:
        return [obj for obj in self.game.world.objects if isinstance(obj, cls)]

    def _adjacent_creature(self, cls: type[Object]) -> Object | None:
        px, py = self.game.player.pos.tolist()
        for obj in self._creatures(cls):
            ox, oy = obj.pos.tolist()
            if abs(ox - px) + abs(oy - py) == 1:
                return obj
        return None

    def _nearest_creature_distance(self, cls: type[Object]) -> int:
        px, py = self.game.player.pos.tolist()
        distances = [abs(o.pos[0] - px) + abs(o.pos[1] - py) for o in self._creatures(cls)]
        return int(min(distances, default=10_000))

    def _strike(self, obj: Object) -> int:
        px, py = self.game.player.pos.tolist()
        ox, oy = obj.pos.tolist()
        d = (ox - px, oy - py)
        if tuple(self.game.player.facing) == d:
            return _ACTION["do"]
        return _MOVES[d]

    def _hunt(self, cls: type[Object]) -> int | None:
        adjacent = self._adjacent_creature(cls)
        if adjacent is not None:
            return self._strike(adjacent)
        targets = {tuple(o.pos.tolist()) for o in self._creatures(cls)}
        if not targets:
            return self._wander()
        path = self._path_to_cells(targets, dig=True)
        return path[0] if path else self._wander()

    def _flee(self, cls: type[Object]) -> int:
        px, py = self.game.player.pos.tolist()
        threats = [o.pos.tolist() for o in self._creatures(cls)]
        best, best_score = _ACTION["noop"], -1
        for d, action in _MOVES.items():
            cell = (px + d[0], py + d[1])
            if not self._free(cell):
                continue
            score = min(abs(cell[0] - x) + abs(cell[1] - y) for x, y in threats)
            if score > best_score:
                best, best_score = action, score
        return best

    # ------------------------------------------------------------------ plants
    def _eat_plant(self) -> int | None:
        ripe = [p for p in self._plants if p.ripe]
        if ripe:
            cells = {tuple(p.pos.tolist()) for p in ripe}
            adjacent = self._adjacent_cell(cells)
            if adjacent is not None:
                return self._face_and(adjacent, _ACTION["do"])
            path = self._path_to_cells(cells)
            return path[0] if path else None
        if len(self._plants) < 2:  # a spare: creatures trample saplings
            action = self._ensure_item("sapling", 1)
            if action is not None:
                return action
            return self._plant_in_nook()
        # wait next to a plant, guarding it (in a nook, the agent blocks its only open side)
        plant = self._plants[0]
        cells = {tuple(plant.pos.tolist())}
        if self._adjacent_cell(cells) is None:
            path = self._path_to_cells(cells)
            return path[0] if path else None
        for cls in (objects.Zombie, objects.Cow):
            if self._nearest_creature_distance(cls) <= 3:
                return self._hunt(cls)
        return _ACTION["noop"]

    def _open_sides(self, cell: Cell) -> int:
        """How many neighbours of ``cell`` a creature could stand on."""
        world = self.game.world
        return sum(world[(cell[0] + d[0], cell[1] + d[1])][0] in _WALKABLE for d in _DIRS)

    def _plant_in_nook(self) -> int | None:
        """Face a grass cell whose only walkable neighbour is the agent's, then plant there (no
        creature can then reach the sapling while the agent stands guard)."""
        front = self._front()
        material, obj = self.game.world[front]
        if material == "grass" and obj is None and self._open_sides(front) <= 1:
            return _ACTION["place_plant"]
        world = self.game.world

        def goal(cell: Cell, arrived: Direction) -> int | None:
            ahead = (cell[0] + arrived[0], cell[1] + arrived[1])
            material, obj = world[ahead]
            if material == "grass" and obj is None and self._open_sides(ahead) <= 1:
                return -1
            return None

        path = self._search(goal, limit=40)
        if path and path[0] != _ACTION["noop"]:
            return path[0]
        return self._place("plant")

    # ------------------------------------------------------------------ movement
    def _front(self) -> Cell:
        player = self.game.player
        return (int(player.pos[0] + player.facing[0]), int(player.pos[1] + player.facing[1]))

    def _free(self, cell: Cell) -> bool:
        material, obj = self.game.world[cell]
        return obj is None and material in _WALKABLE

    def _adjacent_cell(self, cells: set[Cell]) -> Cell | None:
        px, py = self.game.player.pos.tolist()
        for d in _DIRS:
            if (px + d[0], py + d[1]) in cells:
                return (px + d[0], py + d[1])
        return None

    def _face_and(self, cell: Cell, action: int) -> int:
        px, py = self.game.player.pos.tolist()
        d = (cell[0] - px, cell[1] - py)
        if tuple(self.game.player.facing) == d:
            return action
        return _MOVES[d]

    def _interact(
        self,
        predicate: Callable[[str | None, object], bool],
        *,
        blocked_only: bool = True,
        dig: bool = False,
    ) -> int | None:
        """Face the nearest cell satisfying ``predicate(material, object)`` and ``do``."""
        if predicate(*self.game.world[self._front()]):
            return _ACTION["do"]
        path = self._path_to(predicate, blocked_only=blocked_only, dig=dig)
        return path[0] if path else None

    def _path_to(
        self,
        predicate: Callable[[str | None, object], bool],
        *,
        blocked_only: bool = True,
        dig: bool = False,
        limit: int = 200,
    ) -> list[int] | None:
        """Actions that end facing a cell satisfying ``predicate``. A free target cell (grass to
        take a sapling from) must be faced by arriving with a move towards it; a blocked one
        (tree, water, a creature) by turning to it."""
        world = self.game.world
        mat_names = world._mat_names
        mat, objmap = world._mat_map, world._obj_map
        objs = world._objects
        width, height = world.area

        def goal(cell: Cell, arrived: Direction) -> int | None:
            for d in _DIRS:
                x, y = cell[0] + d[0], cell[1] + d[1]
                if not (0 <= x < width and 0 <= y < height):
                    continue
                material = mat_names[mat[x, y]]
                obj = objs[objmap[x, y]]
                if not predicate(material, obj):
                    continue
                free = obj is None and material in _WALKABLE
                if not free:
                    return _MOVES[d]
                if not blocked_only and arrived == d:
                    return -1  # already facing it
            return None

        return self._search(goal, dig=dig, limit=limit)

    def _path_to_cells(self, cells: set[Cell], *, dig: bool = False) -> list[int] | None:
        """Actions that end next to (and facing) one of ``cells``."""

        def goal(cell: Cell, arrived: Direction) -> int | None:
            for d in _DIRS:
                if (cell[0] + d[0], cell[1] + d[1]) in cells:
                    return _MOVES[d]
            return None

        return self._search(goal, dig=dig)

    def _walk_to(self, cells: set[Cell]) -> list[int] | None:
        def goal(cell: Cell, arrived: Direction) -> int | None:
            return -1 if cell in cells else None

        return self._search(goal, limit=40)

    def _search(self, goal: Goal, *, dig: bool = False, limit: int = 200) -> list[int] | None:
        """Dijkstra from the player; ``goal(cell, arrival_direction)`` returns the final action
        (-1 for none) at a goal cell. Stone and ores it can mine cost two steps when ``dig``."""
        world, player = self.game.world, self.game.player
        mat_names = world._mat_names
        mat, objmap = world._mat_map, world._obj_map
        width, height = world.area
        inv = player.inventory
        start = tuple(player.pos.tolist())
        facing = tuple(player.facing)
        minable = {m for m, tool in _MINABLE.items() if dig and inv[tool] > 0}
        frontier = [(0, start)]
        best = {start: 0}
        parent: Parents = {start: None}
        while frontier:
            cost, cell = heapq.heappop(frontier)
            if cost > best[cell] or cost > limit:
                continue
            link = parent[cell]
            arrived = link[1] if link else facing
            final = goal(cell, arrived)
            if final is not None:
                self._search_end = cell
                return self._actions(cell, parent, final)
            for d in _DIRS:
                nxt = (cell[0] + d[0], cell[1] + d[1])
                if not (0 <= nxt[0] < width and 0 <= nxt[1] < height):
                    continue
                material = mat_names[mat[nxt]]
                if objmap[nxt] and nxt != start:
                    continue
                if material in _WALKABLE:
                    step = 1
                elif material in minable:
                    step = 3
                else:
                    continue
                if cost + step < best.get(nxt, 1 << 30):
                    best[nxt] = cost + step
                    parent[nxt] = (cell, d)
                    heapq.heappush(frontier, (cost + step, nxt))
        return None

    def _actions(self, cell: Cell, parent: Parents, final: int) -> list[int]:
        """The first actions of the path to ``cell`` (mining a blocked cell on the way)."""
        moves: list[tuple[Cell, Direction]] = []
        link = parent[cell]
        while link is not None:
            previous, d = link
            moves.append((cell, d))
            cell = previous
            link = parent[cell]
        moves.reverse()
        if not moves:
            return [final] if final >= 0 else [_ACTION["noop"]]
        first_cell, d = moves[0]
        material, _ = self.game.world[first_cell]
        if material not in _WALKABLE and tuple(self.game.player.facing) == d:
            return [_ACTION["do"]]  # mine the stone in the way (a move first turns to it)
        return [_MOVES[d]]

    def _wander(self) -> int:
        """Walk towards the least visited direction: a deterministic exploration fallback."""
        player = self.game.player
        px, py = player.pos.tolist()
        step = self.game.step_count
        order = _DIRS[(step // 25) % 4 :] + _DIRS[: (step // 25) % 4]
        for d in order:
            if self._free((px + d[0], py + d[1])):
                return _MOVES[d]
        return _ACTION["noop"]
