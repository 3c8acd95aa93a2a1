"""Heist's rules on a grid: procgen's maze, keys, locked doors and gem, generated from a TaskRng.

Generation follows procgen's ``heist.cpp`` and ``mazegen.cpp``: the world is ``world_size`` cells
square (9 in procgen's easy distribution, 13 in hard); a maze of odd size ``2 * difficulty + 5`` is
carved by Kruskal's algorithm (cells on even coordinates, walls between them removed in random
order when they join two sets) and pasted at a random offset, everything else wall. Doors go on
forks (open cells with more than two open neighbours); the agent starts on an open cell not next
to a door; then, searching outwards from the agent, the first door reached becomes door 0 (blue)
and key 0 is put in the region reachable without opening a door; key 1 (green) goes in the region
door 0 opens, and so on; the gem goes behind the last door. So every key lies before its door
and doors open in the order blue, green, red.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from llmgym.core import TaskRng
from llmgym.core.cache import bounded_cache

__all__ = ["COLORS", "DIRECTIONS", "HeistLayout", "HeistState", "generate_layout"]

COLORS = ("blue", "green", "red")
DIRECTIONS: dict[str, tuple[int, int]] = {
    "up": (-1, 0),
    "down": (1, 0),
    "left": (0, -1),
    "right": (0, 1),
}
Cell = tuple[int, int]


@dataclass(frozen=True)
class HeistLayout:
    """A generated level: ``walls[r][c]`` is True for a wall; doors and keys by colour index."""

    size: int
    walls: tuple[tuple[bool, ...], ...]
    start: Cell
    gem: Cell
    doors: tuple[Cell, ...]
    keys: tuple[Cell, ...]
    maze_size: int

    def instance_key(self) -> str:
        rows = "".join("".join("#" if w else "." for w in row) for row in self.walls)
        return f"{self.size}|{rows}|{self.start}|{self.gem}|{self.doors}|{self.keys}"


@bounded_cache(4096)
def _open_cells(layout: HeistLayout) -> frozenset[Cell]:
    return frozenset(
        (r, c) for r, row in enumerate(layout.walls) for c, wall in enumerate(row) if not wall
    )


def _kruskal_maze(rng: TaskRng, size: int) -> list[list[bool]]:
    """procgen's MazeGen: a perfect maze on the even cells of a ``size`` x ``size`` grid."""
    walls = [[True] * size for _ in range(size)]
    cells = [(r, c) for r in range(0, size, 2) for c in range(0, size, 2)]
    for r, c in cells:
        walls[r][c] = False
    parent = {cell: cell for cell in cells}

    def find(cell: Cell) -> Cell:
        while parent[cell] != cell:
            parent[cell] = parent[parent[cell]]
            cell = parent[cell]
        return cell

    candidates = [(r, c + 1) for r in range(0, size, 2) for c in range(0, size - 1, 2)]
    candidates += [(r + 1, c) for r in range(0, size - 1, 2) for c in range(0, size, 2)]
    rng.shuffle(candidates)
    for r, c in candidates:
        a, b = ((r, c - 1), (r, c + 1)) if r % 2 == 0 else ((r - 1, c), (r + 1, c))
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[root_a] = root_b
            walls[r][c] = False
    return walls


def _neighbours(cell: Cell, size: int) -> Iterator[Cell]:
    for dr, dc in DIRECTIONS.values():
        r, c = cell[0] + dr, cell[1] + dc
        if 0 <= r < size and 0 <= c < size:
            yield (r, c)


def generate_layout(rng: TaskRng, world_size: int, maze_size: int, num_keys: int) -> HeistLayout:
    """A level with a ``maze_size`` maze in a ``world_size`` world and up to ``num_keys`` keys."""
    maze = _kruskal_maze(rng, maze_size)
    off_r = rng.randint(0, world_size - maze_size)
    off_c = rng.randint(0, world_size - maze_size)
    walls = [[True] * world_size for _ in range(world_size)]
    for r in range(maze_size):
        for c in range(maze_size):
            walls[off_r + r][off_c + c] = maze[r][c]
    open_cells = [(r, c) for r in range(world_size) for c in range(world_size) if not walls[r][c]]

    def degree(cell: Cell) -> int:
        return sum(not walls[r][c] for r, c in _neighbours(cell, world_size))

    forks = [cell for cell in open_cells if degree(cell) > 2]
    door_cells = rng.sample(forks, min(num_keys, len(forks)))
    near_door = set(door_cells)
    for door in door_cells:
        near_door.update(_neighbours(door, world_size))
    start = rng.choice([cell for cell in open_cells if cell not in near_door])

    locked = set(door_cells)
    reached = {start}
    doors: list[Cell] = []
    keys: list[Cell] = []
    gem: Cell = start
    taken = {start}
    for k in range(len(door_cells) + 1):
        region = _flood(reached, walls, locked, world_size)
        fresh = [cell for cell in sorted(region - reached) if cell not in taken]
        spot = rng.choice(fresh or [cell for cell in sorted(region) if cell not in taken])
        taken.add(spot)
        if k == len(door_cells):
            gem = spot
            break
        keys.append(spot)
        door = _first_door(reached, walls, locked, world_size)
        doors.append(door)
        locked.discard(door)
        reached = region | {door}
    return HeistLayout(
        size=world_size,
        walls=tuple(tuple(row) for row in walls),
        start=start,
        gem=gem,
        doors=tuple(doors),
        keys=tuple(keys),
        maze_size=maze_size,
    )


def _flood(
    sources: set[Cell], walls: Sequence[Sequence[bool]], locked: set[Cell], size: int
) -> set[Cell]:
    """Open cells reachable from ``sources`` without entering a locked door."""
    seen = set(sources)
    queue = deque(sources)
    while queue:
        cell = queue.popleft()
        for nxt in _neighbours(cell, size):
            if nxt not in seen and not walls[nxt[0]][nxt[1]] and nxt not in locked:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def _first_door(
    sources: set[Cell], walls: Sequence[Sequence[bool]], locked: set[Cell], size: int
) -> Cell:
    """The locked door that a breadth-first search from ``sources`` touches first."""
    seen = set(sources)
    queue = deque(sorted(sources))
    while queue:
        cell = queue.popleft()
        for nxt in _neighbours(cell, size):
            if nxt in locked:
                return nxt
            if nxt not in seen and not walls[nxt[0]][nxt[1]]:
                seen.add(nxt)
                queue.append(nxt)
    raise AssertionError("every door is reachable in a perfect maze")


class HeistState:
    """The mutable state of one episode: position, keys held, doors opened, steps."""

    __slots__ = (
        "_door_at",
        "_key_at",
        "_open",
        "doors_open",
        "gem_taken",
        "keys_held",
        "layout",
        "position",
        "steps",
    )

    def __init__(self, layout: HeistLayout, keys_held: int = 0) -> None:
        self.layout = layout
        self.position = layout.start
        self.keys_held = [i < keys_held for i in range(len(layout.keys))]
        self.doors_open = [False] * len(layout.doors)
        self.gem_taken = False
        self.steps = 0
        self._open = _open_cells(layout)
        self._door_at = {door: i for i, door in enumerate(layout.doors)}
        self._key_at = {key: i for i, key in enumerate(layout.keys)}

    def blocked_by(self, cell: Cell) -> str | None:
        """Why the agent cannot enter ``cell`` (``None`` if it can)."""
        if cell not in self._open:
            return "a wall"
        i = self._door_at.get(cell)
        if i is not None and not self.doors_open[i] and not self.keys_held[i]:
            return f"the locked {COLORS[i]} door (you need the {COLORS[i]} key)"
        return None

    def move(self, direction: str) -> list[str]:
        """Move one cell; return the events (``"key:<i>"``, ``"door:<i>"``, ``"gem"``)."""
        dr, dc = DIRECTIONS[direction]
        cell = (self.position[0] + dr, self.position[1] + dc)
        if self.blocked_by(cell) is not None:
            return []
        events = []
        door = self._door_at.get(cell)
        if door is not None and not self.doors_open[door]:
            self.doors_open[door] = True
            events.append(f"door:{door}")
        self.position = cell
        key = self._key_at.get(cell)
        if key is not None and not self.keys_held[key]:
            self.keys_held[key] = True
            events.append(f"key:{key}")
        if cell == self.layout.gem:
            self.gem_taken = True
            events.append("gem")
        return events

    def shortest_path(self) -> list[str]:
        """Moves to the gem, picking up keys on the way (BFS over position and keys held)."""
        layout = self.layout
        start = (self.position, tuple(self.keys_held), tuple(self.doors_open))
        parent: dict = {start: None}
        queue = deque([start])
        while queue:
            state = queue.popleft()
            position, held, opened = state
            if position == layout.gem:
                moves = []
                while parent[state] is not None:
                    state, move = parent[state]
                    moves.append(move)
                return moves[::-1]
            for name, (dr, dc) in DIRECTIONS.items():
                cell = (position[0] + dr, position[1] + dc)
                r, c = cell
                if not (0 <= r < layout.size and 0 <= c < layout.size) or layout.walls[r][c]:
                    continue
                new_held, new_open = list(held), list(opened)
                if cell in layout.doors:
                    i = layout.doors.index(cell)
                    if not opened[i]:
                        if not held[i]:
                            continue
                        new_open[i] = True
                if cell in layout.keys:
                    new_held[layout.keys.index(cell)] = True
                nxt = (cell, tuple(new_held), tuple(new_open))
                if nxt not in parent:
                    parent[nxt] = (state, name)
                    queue.append(nxt)
        return []
