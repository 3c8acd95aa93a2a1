"""``llmgym/Heist-v0`` (text) and ``llmgym/HeistPixels-v0`` (RGB from llmgym's renderer)."""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, ClassVar

import numpy as np

from llmgym.core import (
    ActT,
    EnvConfig,
    ObsT,
    PixelAction,
    PixelEnv,
    Task,
    TaskIdRange,
    TaskRng,
    TextEnv,
    Transition,
    knob,
    normalize_command,
    split_of,
)
from llmgym.core.cache import bounded_cache
from llmgym.envs.heist.game import COLORS, DIRECTIONS, HeistLayout, HeistState, generate_layout
from llmgym.errors import ConfigError

__all__ = [
    "HEIST_REQUIREMENTS",
    "HEIST_SKILLS",
    "HeistConfig",
    "HeistEnv",
    "HeistPixelsEnv",
    "render_rgb",
]

WORLD_SIZES = {"easy": 9, "hard": 13}
HEIST_SKILLS: tuple[str, ...] = (
    *(skill for color in COLORS for skill in (f"collect_{color}_key", f"open_{color}_door")),
    "steal_gem",
)
HEIST_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    **{f"open_{color}_door": (f"collect_{color}_key",) for color in COLORS},
    **{f"collect_{color}_key": (f"open_{before}_door",) for before, color in pairwise(COLORS)},
}
"""Each skill's prerequisites: a door needs its key, and each key after the first lies behind
the door before it. Stealing the gem needs none: a level may have no doors."""
_ALIASES = {
    **{d: d for d in DIRECTIONS},
    **{f"move {d}": d for d in DIRECTIONS},
    **{f"go {d}": d for d in DIRECTIONS},
    "north": "up", "south": "down", "west": "left", "east": "right",
    "move north": "up", "move south": "down", "move west": "left", "move east": "right",
}  # fmt: skip
LEGEND = (
    "Legend: # wall, . floor, @ you, $ gem, b g r keys (blue, green, red), "
    "B G R locked doors of those colours."
)


@dataclass(frozen=True)
class HeistConfig(EnvConfig):
    """Level knobs of Heist: procgen's distributions, or a fixed maze size and key count."""

    distribution: str = knob(
        "easy",
        choices=("easy", "hard"),
        doc="procgen's level distribution: 'easy' (9x9 world, mazes 5-9) or 'hard' (13x13, "
        "mazes 5-13); a maze of 2 * difficulty + 5 cells, difficulty uniform.",
    )
    maze_size: int | None = knob(
        None,
        low=3,
        high=25,
        doc="Fix the maze size (odd, at most the world size); null draws it as procgen does.",
    )
    num_keys: int | None = knob(
        None,
        low=0,
        high=3,
        doc="Fix the number of keys and doors (fewer when the maze has too few forks); null "
        "draws difficulty + 0 or 1, at most 3, as procgen does.",
    )
    keys_at_start: int = knob(
        0,
        low=0,
        high=3,
        doc="Curriculum aid: the agent starts holding this many keys (blue first).",
    )
    max_steps: int = knob(1000, low=1, high=100_000, doc="Moves before truncation (procgen: 1000).")
    gem_reward: float = knob(10.0, low=0.0, high=1000.0, doc="Reward for reaching the gem.")
    observability: str = knob(
        "full",
        choices=("full", "local"),
        doc="'full': the whole map every turn (procgen's easy/hard show the whole world); "
        "'local': only cells within view_radius (procgen's memory mode is agent-centred).",
    )
    view_radius: int = knob(2, low=1, high=12, doc="Cells visible around the agent in 'local'.")

    def validate(self) -> None:
        if self.maze_size is not None:
            if self.maze_size % 2 == 0:
                raise ConfigError(
                    "HeistConfig.maze_size",
                    f"{self.maze_size} is even; allowed: an odd number in [3, 25]",
                )
            world = max(WORLD_SIZES[self.distribution], self.maze_size)
            if self.maze_size > world:
                raise ConfigError("HeistConfig.maze_size", "larger than the world")

    def world_size(self) -> int:
        """Side of the square world (the maze is pasted into it; the rest is wall)."""
        return max(WORLD_SIZES[self.distribution], self.maze_size or 0)


@bounded_cache(4096)
def _layout(env_name: str, task_id: str, split: str, config: HeistConfig) -> HeistLayout:
    """The level of ``task_id``: the first attempt whose content hashes into ``split``."""
    attempt = 0
    while True:
        rng = TaskRng(env_name, task_id, attempt)
        world = config.world_size()
        if config.maze_size is None:
            difficulty = rng.randbelow((world - 5) // 2 + 1)
            maze = 2 * difficulty + 5
        else:
            difficulty = (config.maze_size - 5) // 2
            maze = config.maze_size
        keys = config.num_keys
        if keys is None:
            keys = min(3, max(0, difficulty) + rng.randbelow(2))
        layout = generate_layout(rng, world, maze, keys)
        if split_of(layout.instance_key(), eval_fraction=0.5) == split:
            return layout
        attempt += 1


class _HeistEnvBase(TextEnv[HeistConfig, ObsT, ActT]):
    """The game behind Heist-v0 and HeistPixels-v0: levels, moves, keys and doors. A subclass
    chooses the interface (:meth:`_observe`, :meth:`_invalid`, :meth:`_bump` and the spaces)."""

    config_class = HeistConfig
    env_name = "heist"
    skills = HEIST_SKILLS
    skill_requirements: ClassVar[dict[str, tuple[str, ...]]] = HEIST_REQUIREMENTS
    skill_practice: ClassVar[dict[str, dict[str, Any]]] = {
        "collect_blue_key": {"maze_size": 5, "num_keys": 1},
        "open_blue_door": {"maze_size": 5, "num_keys": 1, "keys_at_start": 1},
        "collect_green_key": {"maze_size": 7, "num_keys": 2, "keys_at_start": 1},
        "open_green_door": {"maze_size": 7, "num_keys": 2, "keys_at_start": 2},
        "collect_red_key": {"maze_size": 9, "num_keys": 3, "keys_at_start": 2},
        "open_red_door": {"maze_size": 9, "num_keys": 3, "keys_at_start": 3},
        "steal_gem": {"maze_size": 5, "num_keys": 0},
    }
    """Small mazes with the keys before the skill's own in hand."""
    train_size = 10_000
    eval_size = 1_000

    _state: HeistState | None = None
    _base_rows: tuple[str, ...] = ()
    _open_moves: list[str]
    _open_moves_key: tuple[object, ...] = ()
    _cleared_key: tuple[object, ...] = ()
    _achieved: frozenset[str] = frozenset()

    def task_ids(self, split: str = "train", config: HeistConfig | None = None) -> TaskIdRange:
        return TaskIdRange(split, self.train_size if split == "train" else self.eval_size)

    def instance_key(self) -> str:
        return self.state.layout.instance_key()

    def rules(self) -> str:
        return (
            "You are in a maze (a grid; row 0 at the top). Reach the gem ($). Locked doors "
            "(B, G, R) block the way; walking into a door opens it if you hold the key of its "
            "colour (b, g, r), collected by walking onto it. Keys come before their doors: blue, "
            "then green, then red. Actions: move up, move down, move left, move right."
        )

    @property
    def state(self) -> HeistState:
        """The episode's state (layout, position, keys, doors)."""
        return self.after_reset(self._state)

    def _reset_task(self, task: Task[HeistConfig]) -> tuple[ObsT, str]:
        config = task.config
        layout = _layout(task.env_name, task.task_id, task.split, config)
        held = min(config.keys_at_start, len(layout.keys))
        self._state = HeistState(layout, keys_held=held)
        self._cleared_key = ()
        self._open_moves_key = ()
        self._achieved = frozenset(f"collect_{COLORS[i]}_key" for i in range(held))
        instruction = "Reach the gem ($), collecting each key before its locked door."
        return self._observe(""), instruction

    def _step(self, action: str) -> Transition[ObsT]:
        state = self._state
        assert state is not None and self._task is not None
        config = self._task.config
        direction = _ALIASES.get(normalize_command(action, max_length=100))
        if direction is None:
            return self._invalid(
                f"{self.quote(action)} is not a move. Valid actions: move up, move down, "
                "move left, move right."
            )
        state.steps += 1
        truncated = state.steps >= config.max_steps
        dr, dc = DIRECTIONS[direction]
        blocker = state.blocked_by((state.position[0] + dr, state.position[1] + dc))
        if blocker is not None:
            return self._bump(f"You cannot move {direction}: {blocker} is in the way.", truncated)
        events = state.move(direction)
        messages = [f"You moved {direction}."]
        for event in events:
            kind, _, index = event.partition(":")
            if kind == "key":
                self._achieved |= {f"collect_{COLORS[int(index)]}_key"}
                messages.append(f"You picked up the {COLORS[int(index)]} key.")
            elif kind == "door":
                self._achieved |= {f"open_{COLORS[int(index)]}_door"}
                messages.append(f"You opened the {COLORS[int(index)]} door.")
        if state.gem_taken:
            self._achieved |= {"steal_gem"}
            return Transition(
                self._observe("You reached the gem. Success!"),
                reward=config.gem_reward,
                terminated=True,
                success=True,
            )
        return Transition(self._observe(" ".join(messages)), truncated=truncated)

    @abstractmethod
    def _observe(self, message: str) -> ObsT:
        """The observation after a move whose outcome ``message`` describes."""

    @abstractmethod
    def _invalid(self, message: str) -> Transition[ObsT]:
        """The transition for an action that is not a move, explained by ``message``."""

    @abstractmethod
    def _bump(self, message: str, truncated: bool) -> Transition[ObsT]:
        """The transition for a move into a wall or a locked door, explained by ``message``."""

    def _unblocked_moves(self) -> list[str]:
        """The moves that do not bump into a wall or a locked door, as commands."""
        state = self.state
        key = (state.position, *state.keys_held, *state.doors_open)
        if key != self._open_moves_key:
            r, c = state.position
            self._open_moves = [
                f"move {name}"
                for name, (dr, dc) in DIRECTIONS.items()
                if state.blocked_by((r + dr, c + dc)) is None
            ]
            self._open_moves_key = key
        return list(self._open_moves)

    def skills_achieved(self) -> frozenset[str]:
        return self._achieved

    def _map_rows(self) -> list[str]:
        """The map as rows of characters (collected keys, opened doors and the taken gem shown
        as floor; cells out of view as ``?`` with local observability)."""
        state = self._state
        assert state is not None and self._task is not None
        layout = state.layout
        config = self._task.config
        key = (*state.doors_open, *state.keys_held, state.gem_taken)
        if key != self._cleared_key:  # a door opened or a key was taken: redraw the base
            rows = list(_base_grid(layout))
            cleared = [d for d, done in zip(layout.doors, state.doors_open, strict=True) if done]
            cleared += [k for k, done in zip(layout.keys, state.keys_held, strict=True) if done]
            if state.gem_taken:
                cleared.append(layout.gem)
            for cell in cleared:
                row = rows[cell[0]]
                rows[cell[0]] = row[: cell[1]] + "." + row[cell[1] + 1 :]
            self._base_rows, self._cleared_key = tuple(rows), key
        rows = list(self._base_rows)
        r, c = state.position
        rows[r] = rows[r][:c] + "@" + rows[r][c + 1 :]
        if config.observability == "local":
            radius = config.view_radius
            left, right = max(0, c - radius), c + radius + 1
            rows = [
                "?" * len(row)
                if abs(i - r) > radius
                else "?" * left + row[left:right] + "?" * max(0, len(row) - right)
                for i, row in enumerate(rows)
            ]
        return rows


class HeistEnv(_HeistEnvBase[str, str]):
    """Steal the gem from a maze of locked doors: collect each key before its door.

    ## Description
    procgen's Heist on a grid. The world is a square of ``9`` (``distribution="easy"``) or ``13``
    (``"hard"``) cells holding a maze generated by Kruskal's algorithm, pasted at a random
    offset; the rest is wall. Up to three locked doors — blue, green, red — stand on forks of the
    maze, numbered in the order a search from the agent reaches them; each key lies in the part
    of the maze reachable before its door (the blue key in the agent's starting region), and the
    gem lies behind the last door. The agent must fetch the blue key, open the blue door, fetch
    the green key, and so on, then reach the gem. Levels follow procgen's ``heist.cpp`` (maze
    sizes, key counts, door and key placement); movement is one cell per step instead of
    procgen's continuous physics, so episodes are shorter than procgen's in steps.

    ![A hard Heist level, drawn by HeistPixels-v0](img/heist_hard.png)

    *A hard level with three keys (``HeistPixels-v0``'s renderer, enlarged): the agent (orange),
    keys and doors in blue, green and red, the gem (yellow).*

    ## Action Space
    Text: ``move up``, ``move down``, ``move left``, ``move right`` (``up``, ``go left`` and
    ``north``/``south``/``west``/``east`` are accepted, any case). Anything else is invalid.

    ## Observation Space
    Text: the map (``#`` wall, ``.`` floor, ``@`` agent, ``$`` gem, ``b``/``g``/``r`` keys,
    ``B``/``G``/``R`` locked doors; row 0 at the top) with a legend, the agent's position, the
    keys held and what happened. With ``observability="local"`` only cells within
    ``view_radius`` of the agent are drawn (others ``?``).

    ## Rewards
    ``gem_reward`` (10, procgen's completion bonus) on reaching the gem, 0 otherwise.

    ## Starting State
    The agent on an open cell not next to a door, holding ``keys_at_start`` keys.

    ## Episode End
    Terminates on reaching the gem (``success``). Truncated after ``max_steps`` moves (1,000,
    procgen's timeout); bumping into a wall or a locked door counts as a move (flagged invalid).
    The oracle (a breadth-first search over position and keys held) solves every level
    (measured: see docs/environments/heist.md).

    ## Arguments
    ``gymnasium.make("llmgym/Heist-v0", config=HeistConfig(...))`` or keyword overrides
    (``distribution="hard"``, ``num_keys=3``, ``maze_size=11``). ``reset(options=...)`` takes
    ``task_id``, ``split`` and ``config``.

    ## Version History
    * v0: Initial version.
    """

    example = (
        "Observation: #########\n#@..#...#\n#.#.B.#$#\n...\nYou are at row 1, column 1. "
        "Keys held: none. The blue key is at row 5, column 3.\n"
        "Thought: The gem is behind the blue door; fetch the blue key first.\n"
        "Action: move down"
    )

    def _invalid(self, message: str) -> Transition[str]:
        return self.invalid(self._observe(message))

    def _bump(self, message: str, truncated: bool) -> Transition[str]:
        return Transition(self._observe(message), invalid=True, truncated=truncated)

    def admissible_actions(self) -> list[str]:
        return self._unblocked_moves()

    def oracle_action(self) -> str:
        path = self.state.shortest_path()
        return f"move {path[0]}" if path else "move up"

    def pixel_frame(self) -> np.ndarray:
        """The image ``HeistPixels-v0`` would show now (for recordings)."""
        return render_rgb(self._map_rows())

    def _observe(self, message: str) -> str:
        rows = self._map_rows()
        state = self._state
        assert state is not None
        r, c = state.position
        held = [COLORS[i] for i, h in enumerate(state.keys_held) if h]
        lines = [message] if message else []
        lines.append("\n".join(rows))
        lines.append(LEGEND)
        lines.append(
            f"You are at row {r}, column {c}. Keys held: {', '.join(held) if held else 'none'}."
        )
        return "\n".join(lines)


def _base_grid(layout: HeistLayout) -> tuple[str, ...]:
    rows = [["#" if wall else "." for wall in row] for row in layout.walls]
    for i, door in enumerate(layout.doors):
        rows[door[0]][door[1]] = "BGR"[i]
    for i, key in enumerate(layout.keys):
        rows[key[0]][key[1]] = "bgr"[i]
    rows[layout.gem[0]][layout.gem[1]] = "$"
    return tuple("".join(row) for row in rows)


# ---------------------------------------------------------------------- pixels
_PALETTE = {
    "#": (40, 44, 52),
    ".": (214, 203, 176),
    "@": (230, 120, 30),
    "$": (250, 220, 40),
    "b": (60, 110, 230),
    "g": (40, 170, 70),
    "r": (210, 50, 50),
    "B": (30, 60, 160),
    "G": (20, 110, 40),
    "R": (140, 25, 25),
    "?": (0, 0, 0),
}
_SHAPES = {"@": "disc", "$": "diamond", "b": "key", "g": "key", "r": "key"}


@bounded_cache(64)
def _tile(char: str, unit: int) -> np.ndarray:
    """A ``unit`` x ``unit`` RGB tile: floor under small items, solid for walls and doors."""
    floor = np.array(_PALETTE["."], np.uint8)
    color = np.array(_PALETTE[char], np.uint8)
    tile = np.empty((unit, unit, 3), np.uint8)
    shape = _SHAPES.get(char)
    if shape is None:
        tile[:] = color
        if char in "BGR":  # a door: a lock mark in the middle
            m = unit // 3
            tile[m : unit - m, m : unit - m] = floor // 2
        return tile
    tile[:] = floor
    ys, xs = np.mgrid[0:unit, 0:unit]
    center = (unit - 1) / 2
    if shape == "disc":
        mask = (ys - center) ** 2 + (xs - center) ** 2 <= (unit * 0.42) ** 2
    elif shape == "diamond":
        mask = abs(ys - center) + abs(xs - center) <= unit * 0.45
    else:  # key: a ring and a bar
        mask = ((ys - center) ** 2 + (xs - unit * 0.35) ** 2 <= (unit * 0.25) ** 2) | (
            (abs(ys - center) <= max(1, unit // 8)) & (xs >= unit * 0.35)
        )
    tile[mask] = color
    return tile


def render_rgb(rows: list[str], size: int = 64) -> np.ndarray:
    """Draw a text map (one character per cell, see the legend) as a ``size`` x ``size`` image,
    centred, cells as large as fit."""
    height, width = len(rows), len(rows[0])
    unit = max(1, size // max(height, width))
    canvas = np.zeros((size, size, 3), np.uint8)
    top = (size - unit * height) // 2
    left = (size - unit * width) // 2
    for i, row in enumerate(rows):
        for j, char in enumerate(row):
            y, x = top + i * unit, left + j * unit
            canvas[y : y + unit, x : x + unit] = _tile(char, unit)
    return canvas


class HeistPixelsEnv(_HeistEnvBase[np.ndarray, PixelAction], PixelEnv[HeistConfig]):
    """Heist with 64x64 RGB observations from llmgym's renderer and ``Discrete(4)`` actions.

    ## Description
    The same levels, rules and config as ``llmgym/Heist-v0`` (see its page), drawn as an image
    of the whole world (procgen's easy and hard modes also show the whole world): walls, floor,
    the agent (orange disc), keys and locked doors in blue, green and red, the gem (yellow).
    Works with gymnasium vector environments.

    ## Action Space
    ``Discrete(4)``: 0 up, 1 down, 2 left, 3 right (names such as ``"move up"`` are accepted
    too). Other values are invalid: nothing happens and ``info["feedback"]`` says why.

    ## Observation Space
    ``Box(0, 255, (64, 64, 3), uint8)``.

    ## Rewards
    ``gem_reward`` (10) on reaching the gem.

    ## Starting State
    As Heist-v0.

    ## Episode End
    As Heist-v0: the gem terminates; ``max_steps`` (1,000) truncates.

    ## Arguments
    As Heist-v0 (``HeistConfig``).

    ## Version History
    * v0: Initial version.
    """

    action_commands = tuple(f"move {direction}" for direction in DIRECTIONS)

    def _invalid(self, message: str) -> Transition[np.ndarray]:
        return self._repeat_frame(f"{message} (or 0-3)")

    def _bump(self, message: str, truncated: bool) -> Transition[np.ndarray]:
        return Transition(
            self._observe(""), invalid=True, truncated=truncated, info={"feedback": message}
        )

    def _observe(self, message: str) -> np.ndarray:
        return render_rgb(self._map_rows())

    def oracle_action(self) -> int:
        path = self.state.shortest_path()
        return list(DIRECTIONS).index(path[0]) if path else 0
