"""``llmgym/ProcgenHeist-v0``: procgen's own Heist (C++, continuous physics) behind llmgym's API.

Needs the ``[procgen]`` extra: ``procgen-mirror`` 0.10.7 (procgen's wheels stop at Python 3.10),
which pins ``numpy<2`` and needs ``gym3`` and ``gym<1.0`` — install it in its own environment,
since it downgrades numpy. It is therefore not part of ``[all]``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from llmgym.core import EnvConfig, PixelEnv, Task, TaskIdRange, Transition, knob, optional_import
from llmgym.core.text import normalize_command

procgen = optional_import("procgen", extra="procgen", package="procgen-mirror")

__all__ = ["PROCGEN_ACTIONS", "ProcgenHeistConfig", "ProcgenHeistEnv"]

PROCGEN_ACTIONS: tuple[str, ...] = (
    "left down", "left", "left up", "down", "noop", "up", "right down", "right", "right up",
    "d", "a", "w", "s", "q", "e",
)  # fmt: skip
"""procgen's 15 actions; 9-14 are special keys that do nothing in Heist."""
EVAL_LEVEL_BASE = 1_000_000
Cell = tuple[int, int]


class _Gym3Env(Protocol):
    """The part of procgen's gym3 environment that :class:`ProcgenHeistEnv` drives."""

    def act(self, action: np.ndarray) -> None: ...

    def observe(self) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]: ...

    def get_info(self) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class ProcgenHeistConfig(EnvConfig):
    """procgen's options for Heist."""

    distribution: str = knob(
        "easy",
        choices=("easy", "hard", "memory"),
        doc="procgen's distribution_mode: easy (9x9 world), hard (13x13), memory (23x23, "
        "agent-centred view).",
    )
    use_backgrounds: bool = knob(True, doc="procgen's textured floor backgrounds.")
    restrict_themes: bool = knob(False, doc="procgen's restrict_themes (one visual theme).")
    use_monochrome_assets: bool = knob(False, doc="procgen's plain-coloured assets.")


class ProcgenHeistEnv(PixelEnv[ProcgenHeistConfig]):
    """procgen's Heist itself (64x64 RGB, ``Discrete(15)``), for comparison with Heist-v0.

    ## Description
    The game of ``procgen`` (``env_name="heist"``): steal the gem from a maze of locked doors,
    with procgen's continuous movement, assets and level generator. Each task is one procgen
    level (``start_level``, ``num_levels=1``): train task ``n`` is level ``n``, eval task ``n``
    is level ``1,000,000 + n``. Needs the ``procgen`` extra (``procgen-mirror``,
    which pins ``numpy<2``; not included in ``[all]``).

    ## Action Space
    ``Discrete(15)``: procgen's combos (0 left-down, 1 left, 2 left-up, 3 down, 4 noop, 5 up,
    6 right-down, 7 right, 8 right-up, 9-14 unused keys). Names (``"left up"``) are accepted.
    Anything else is invalid: nothing happens and ``info["feedback"]`` says why.

    ## Observation Space
    ``Box(0, 255, (64, 64, 3), uint8)``: procgen's frame.

    ## Rewards
    10 on reaching the gem (procgen's completion bonus).

    ## Starting State
    procgen's level for the task's level seed.

    ## Episode End
    Terminates on reaching the gem (``success``); truncated by procgen's 1,000-step timeout.
    The oracle reads the frame (walls, keys, doors, gem and the agent, by colour; easy and hard
    modes show the whole world) and steers along a breadth-first path. procgen exposes no level
    state, and its continuous movement catches on corners, so this oracle is weaker than
    Heist-v0's: it misses levels (measured: see docs/environments/procgenheist.md).

    ## Arguments
    ``ProcgenHeistConfig``: ``distribution`` and procgen's asset options.

    ## Version History
    * v0: Initial version (procgen-mirror 0.10.7).
    """

    config_class = ProcgenHeistConfig
    env_name = "procgen-heist"
    skills = ("steal_gem",)
    action_commands = PROCGEN_ACTIONS

    _game: _Gym3Env | None = None
    _steps = 0
    _won = False

    def task_ids(
        self, split: str = "train", config: ProcgenHeistConfig | None = None
    ) -> TaskIdRange:
        return TaskIdRange(split, 100_000 if split == "train" else 10_000)

    def level_seed(self, task: Task[ProcgenHeistConfig]) -> int:
        """procgen's level seed of ``task``."""
        return task.index + (EVAL_LEVEL_BASE if task.split == "eval" else 0)

    def instance_key(self) -> str:
        return f"procgen heist level {self.level_seed(self.task)}"

    def _reset_task(self, task: Task[ProcgenHeistConfig]) -> tuple[np.ndarray, str]:
        config = task.config
        game: _Gym3Env = procgen.ProcgenGym3Env(
            num=1,
            env_name="heist",
            distribution_mode=config.distribution,
            start_level=self.level_seed(task),
            num_levels=1,
            use_backgrounds=config.use_backgrounds,
            restrict_themes=config.restrict_themes,
            use_monochrome_assets=config.use_monochrome_assets,
            rand_seed=0,
        )
        self._game = game
        self._steps = 0
        self._won = False
        _, observation, _ = game.observe()
        self._frame = np.array(observation["rgb"][0])
        return self._frame, "Reach the gem, collecting each key before its locked door."

    def _step(self, action: str) -> Transition[np.ndarray]:
        text = normalize_command(action, max_length=100).replace("-", " ")
        if text not in PROCGEN_ACTIONS:
            return self._repeat_frame(
                f"{self.quote(action)} is not a procgen action (0-14 or a name)"
            )
        assert self._game is not None
        self._game.act(np.array([PROCGEN_ACTIONS.index(text)]))
        reward, observation, first = self._game.observe()
        info = self._game.get_info()[0]
        self._steps += 1
        self._frame = np.array(observation["rgb"][0])
        ended = bool(first[0])
        won = ended and bool(info.get("prev_level_complete"))
        return Transition(
            self._frame,
            reward=float(reward[0]),
            terminated=won,
            truncated=ended and not won,
            success=won,
        )

    def _engine_holding_state(self) -> str | None:
        return None if self._game is None else "procgen's game (a C++ gym3 environment)"

    # ------------------------------------------------------------------ oracle
    def oracle_action(self) -> int:
        """Steer towards the next cell of a shortest path read from the frame."""
        config = self.task.config
        world = {"easy": 9, "hard": 13, "memory": 23}[config.distribution]
        return read_frame_and_steer(self._frame, world)


def _cell_of(mask: np.ndarray, cell: float) -> Cell | None:
    ys, xs = np.nonzero(mask)
    if len(ys) == 0:
        return None
    return int(ys.mean() // cell), int(xs.mean() // cell)


def read_frame_and_steer(frame: np.ndarray, world: int) -> int:
    """The oracle's action for a procgen Heist ``frame`` of a ``world`` x ``world`` level: read
    the floor (procgen's pale grey background; walls are textured), the agent (white), the gem
    (yellow), keys (small blue, green or red shapes) and locks (cell-sized ones) by colour, then
    steer along a shortest path to the first key still on the floor, or to the gem."""
    cell = frame.shape[0] / world
    image = frame.astype(np.int32)
    r, g, b = image[..., 0], image[..., 1], image[..., 2]
    white = (r > 240) & (g > 240) & (b > 240)
    agent = _cell_of(white, cell)
    gem = _cell_of((r >= 250) & (g >= 190) & (b <= 140), cell)
    if agent is None or gem is None:
        return PROCGEN_ACTIONS.index("noop")
    ys, xs = np.nonzero(white)
    ay, ax = ys.mean(), xs.mean()
    grid_y, grid_x = np.mgrid[0 : frame.shape[0], 0 : frame.shape[1]]
    away = (grid_y - ay) ** 2 + (grid_x - ax) ** 2 > (0.8 * cell) ** 2  # not the agent's sprite
    away &= ~((grid_y < 0.08 * frame.shape[0]) & (grid_x > 0.75 * frame.shape[1]))  # key ring
    colours = (
        away & (b > r + 80) & (b > g + 20),  # blue
        away & (g > r + 40) & (g > b + 40),  # green
        away & (r > g + 70) & (r > b + 120) & (g > 40),  # red (orange)
    )
    bounds = [(int(i * cell), int((i + 1) * cell)) for i in range(world)]
    medians = np.array(
        [[np.median(image[y0:y1, x0:x1].reshape(-1, 3), axis=0) for x0, x1 in bounds]
         for y0, y1 in bounds]
    )  # fmt: skip
    # the floor looks like the gem's cell (the gem is small); walls have another texture
    walls = np.abs(medians - medians[gem]).sum(axis=2) > 80
    locks: set[Cell] = set()
    keys: list[Cell] = []
    for mask in colours:  # at most one key and one lock of each colour
        leftover = mask.copy()
        for y, (y0, y1) in enumerate(bounds):
            for x, (x0, x1) in enumerate(bounds):
                if mask[y0:y1, x0:x1].mean() > 0.4:  # a lock fills its cell
                    locks.add((y, x))
                    walls[y, x] = False
                    leftover[max(0, y0 - 2) : y1 + 2, max(0, x0 - 2) : x1 + 2] = False
        if leftover.sum() >= 3:
            key = _cell_of(leftover, cell)
            if key is not None:
                keys.append(key)
                walls[key] = False
    walls[agent] = False
    goals = set(keys[:1]) or {gem}
    path = _bfs(walls, locks - goals, agent, goals)
    if not path:  # a lock we cannot see as open yet: walk through locks too
        path = _bfs(walls, set(), agent, goals)
    target = path[1] if len(path) > 1 else agent
    ty, tx = (target[0] + 0.5) * cell, (target[1] + 0.5) * cell
    # one axis at a time, centring on the other first, so the agent (0.75 cells wide) does not
    # catch on corners
    off_x, off_y = tx - ax, ty - ay
    if target[0] != agent[0] and abs(off_x) > 0.12 * cell:
        off_y = 0.0
    elif target[1] != agent[1] and abs(off_y) > 0.12 * cell:
        off_x = 0.0
    dx = 0 if abs(off_x) < cell * 0.1 else (1 if off_x > 0 else -1)
    dy = 0 if abs(off_y) < cell * 0.1 else (1 if off_y > 0 else -1)
    return (dx + 1) * 3 + (1 - dy)  # procgen: vx = a // 3 - 1, vy = a % 3 - 1 (up is +1)


def _bfs(walls: np.ndarray, blocked: set[Cell], start: Cell, goals: set[Cell]) -> list[Cell]:
    queue = deque([start])
    parent: dict[Cell, Cell | None] = {start: None}
    while queue:
        cell = queue.popleft()
        if cell in goals:
            path = [cell]
            previous = parent[cell]
            while previous is not None:
                path.append(previous)
                previous = parent[previous]
            return path[::-1]
        for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nxt = (cell[0] + dy, cell[1] + dx)
            if not (0 <= nxt[0] < walls.shape[0] and 0 <= nxt[1] < walls.shape[1]):
                continue
            if nxt in parent or walls[nxt] or nxt in blocked:
                continue
            parent[nxt] = cell
            queue.append(nxt)
    return []
