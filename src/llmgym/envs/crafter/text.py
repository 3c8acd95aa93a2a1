"""Crafter as text: what the agent sees, and commands by name."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from llmgym.core.text import join_names, normalize_command
from llmgym.envs.crafter import ACTIONS

if TYPE_CHECKING:  # crafter ships no types: these name what the values are
    from crafter.engine import World
    from crafter.objects import Object, Player

    from llmgym.envs.crafter.game import CrafterGame

__all__ = ["COMMANDS", "describe", "draw_grid", "parse_action"]

COMMANDS: tuple[str, ...] = tuple(name.replace("_", " ") for name in ACTIONS)
"""The 17 actions as text, index for index with :data:`~llmgym.envs.crafter.ACTIONS`."""

_DIRECTIONS = {"left": "left", "right": "right", "up": "up", "down": "down",
               "west": "left", "east": "right", "north": "up", "south": "down"}  # fmt: skip
_ALIASES: dict[str, int] = {command: i for i, command in enumerate(COMMANDS)}
for _word, _direction in _DIRECTIONS.items():
    _index = COMMANDS.index(f"move {_direction}")
    for _form in (_word, f"move {_word}", f"go {_word}", f"walk {_word}"):
        _ALIASES[_form] = _index
_ALIASES.update(
    {
        "no op": 0, "nothing": 0, "wait": 0, "idle": 0,
        "interact": 5, "place sapling": 10,
        **{"craft" + c[4:]: i for i, c in enumerate(COMMANDS) if c.startswith("make ")},
    }
)  # fmt: skip
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_SEPARATORS = re.compile(r"[_\-\s]+")

MATERIAL_NAMES = (None, "water", "grass", "stone", "path", "sand", "tree", "lava", "coal", "iron",
                  "diamond", "table", "furnace")  # fmt: skip
_GRID_CHARS = {"water": "~", "grass": ".", "stone": "#", "path": "_", "sand": ":", "tree": "T",
               "lava": "!", "coal": "c", "iron": "i", "diamond": "d", "table": "t",
               "furnace": "f", None: " "}  # fmt: skip
_CREATURE_CHARS = {"Cow": "C", "Zombie": "Z", "Skeleton": "S", "Arrow": "*", "Plant": "p"}
GRID_LEGEND = (
    "Legend: @ you, . grass, : sand, _ path, ~ water, # stone, T tree, ! lava, c coal, i iron, "
    "d diamond, t table, f furnace, C cow, Z zombie, S skeleton, * arrow, p sapling, P ripe plant."
)
_FACING_WORD = {(-1, 0): "left", (1, 0): "right", (0, -1): "up", (0, 1): "down"}
VIEW = (9, 7)
"""Width and height of the local view, crafter's (the pixel observation shows the same area)."""


def parse_action(action: str) -> int | None:
    """The action index of a command such as ``"Move Left"``, ``"place_table"`` or ``"make a wood
    pickaxe"``; ``None`` when it names no action."""
    text = normalize_command(action, max_length=100)
    if not text.isascii():
        return None
    text = _SEPARATORS.sub(" ", _ARTICLES.sub(" ", text)).strip()
    return _ALIASES.get(text)


def _creature_name(obj: Object) -> str:
    name = type(obj).__name__
    if name == "Plant":
        return "ripe plant" if obj.ripe else "sapling"
    return name.lower()


def _offset_words(dx: int, dy: int) -> str:
    parts = []
    if dx:
        parts.append(f"{abs(dx)} step{'s' if abs(dx) > 1 else ''} {'right' if dx > 0 else 'left'}")
    if dy:
        parts.append(f"{abs(dy)} step{'s' if abs(dy) > 1 else ''} {'down' if dy > 0 else 'up'}")
    return " and ".join(parts) if parts else "here"


def _view_bounds(pos: tuple[int, int]) -> tuple[int, int, int, int]:
    half_w, half_h = VIEW[0] // 2, VIEW[1] // 2
    return pos[0] - half_w, pos[0] + half_w, pos[1] - half_h, pos[1] + half_h


def visible(
    world: World, player: Player
) -> tuple[list[tuple[str | None, int, int]], list[tuple[Object, int, int]]]:
    """Materials ``(name, dx, dy)`` (``None``: no material) and creatures ``(object, dx, dy)`` in
    the local view, relative to the player."""
    px, py = player.pos.tolist()
    x0, x1, y0, y1 = _view_bounds((px, py))
    area = world._mat_map
    xa, xb = max(x0, 0), min(x1, area.shape[0] - 1)
    ya, yb = max(y0, 0), min(y1, area.shape[1] - 1)
    cells = [
        (MATERIAL_NAMES[material], xa + i - px, ya + j - py)
        for i, column in enumerate(area[xa : xb + 1, ya : yb + 1].tolist())
        for j, material in enumerate(column)
    ]
    creatures = []
    for obj in world.objects:
        ox, oy = obj.pos.tolist()
        if obj is not player and x0 <= ox <= x1 and y0 <= oy <= y1:
            creatures.append((obj, ox - px, oy - py))
    return cells, creatures


def describe(game: CrafterGame, *, show_grid: bool, target: str | None, message: str = "") -> str:
    """The text observation of ``game`` (a :class:`~llmgym.envs.crafter.game.CrafterGame`)."""
    world, player = game.world, game.player
    cells, creatures = visible(world, player)
    nearest: dict[str | None, tuple[int, int, int]] = {}
    counts: dict[str | None, int] = {}
    for name, dx, dy in cells:
        if dx == 0 and dy == 0:
            continue
        counts[name] = counts.get(name, 0) + 1
        distance = abs(dx) + abs(dy)
        if name not in nearest or distance < nearest[name][0]:
            nearest[name] = (distance, dx, dy)
    for obj, dx, dy in creatures:
        name = _creature_name(obj)
        counts[name] = counts.get(name, 0) + 1
        distance = abs(dx) + abs(dy)
        if name not in nearest or distance < nearest[name][0]:
            nearest[name] = (distance, dx, dy)
    lines = []
    if message:
        lines.append(message)
    lines.append(f"You see ({VIEW[0]}x{VIEW[1]} area around you, nearest of each kind):")
    for name, (_, dx, dy) in sorted(nearest.items(), key=lambda item: (item[1][0], item[0])):
        many = f" ({counts[name]} in view)" if counts[name] > 1 else ""
        lines.append(f"- {name}: {_offset_words(dx, dy)}{many}")
    if any(name is None for name, _, _ in cells) or len(cells) < VIEW[0] * VIEW[1]:
        lines.append("- the edge of the world")
    fx, fy = player.facing
    px, py = player.pos.tolist()
    material, obj = world[(px + fx, py + fy)]
    facing = _creature_name(obj) if obj is not None else (material or "the edge of the world")
    lines.append(f"You face {facing} ({_FACING_WORD[(fx, fy)]}).")
    inv = player.inventory
    lines.append(
        f"Health {inv['health']}/9, food {inv['food']}/9, drink {inv['drink']}/9, "
        f"energy {inv['energy']}/9." + (" You are asleep." if player.sleeping else "")
    )
    items = [
        f"{amount} {name.replace('_', ' ')}"
        for name, amount in inv.items()
        if amount > 0 and name not in ("health", "food", "drink", "energy")
    ]
    lines.append("Inventory: " + (join_names(items) if items else "empty") + ".")
    daylight = world.daylight
    period = "day" if daylight >= 0.5 else "night"
    lines.append(f"Step {game.step_count}; it is {period} (daylight {daylight:.0%}).")
    if target is not None:
        state = "done" if target in game.unlocked else "not yet"
        lines.append(f"Target: {target.replace('_', ' ')} ({state}).")
    if show_grid:
        lines.append(draw_grid(world, player))
        lines.append(GRID_LEGEND)
    return "\n".join(lines)


def draw_grid(world: World, player: Player) -> str:
    """The local view as characters, rows top to bottom."""
    px, py = player.pos.tolist()
    x0, x1, y0, y1 = _view_bounds((px, py))
    creatures = {}
    for obj in world.objects:
        ox, oy = obj.pos.tolist()
        if x0 <= ox <= x1 and y0 <= oy <= y1:
            char = _CREATURE_CHARS.get(type(obj).__name__, "@")
            if char == "p" and obj.ripe:
                char = "P"
            creatures[(ox, oy)] = char
    creatures[(px, py)] = "@"
    rows = []
    for y in range(y0, y1 + 1):
        row = []
        for x in range(x0, x1 + 1):
            if (x, y) in creatures:
                row.append(creatures[(x, y)])
            else:
                row.append(_GRID_CHARS[world[(x, y)][0]])
        rows.append("".join(row))
    return "\n".join(rows)
