"""Maze: text navigation through procedurally generated mazes (LMRL-Gym style)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from llmgym.core import (
    EnvConfig,
    Task,
    TaskIdRange,
    TextEnv,
    Transition,
    knob,
    normalize_command,
    split_of,
)
from llmgym.core.cache import bounded_cache
from llmgym.core.tasks import TaskRng
from llmgym.core.text import join_names

__all__ = ["MazeConfig", "MazeEnv"]

Cell = tuple[int, int]

# direction name -> (row delta, column delta); the order is the order of every listing
MOVES: dict[str, Cell] = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
_WALL_PHRASE = {
    "up": "above you",
    "down": "below you",
    "left": "to your left",
    "right": "to your right",
}
_AGENTGYM_ORDER = ("right", "left", "up", "down")  # LMRL-Gym lists walls in this order
_ALIASES = {
    **{f"move {d}": d for d in MOVES},
    **{d: d for d in MOVES},
    **{f"go {d}": d for d in MOVES},
    "north": "up", "south": "down", "west": "left", "east": "right",
    "move north": "up", "move south": "down", "move west": "left", "move east": "right",
}  # fmt: skip


@dataclass(frozen=True)
class MazeConfig(EnvConfig):
    """Difficulty knobs of :class:`MazeEnv`."""

    width: int = knob(6, low=2, high=30, doc="Maze width in cells.")
    height: int = knob(6, low=2, high=30, doc="Maze height in cells.")
    loopiness: float = knob(
        0.1,
        low=0.0,
        high=1.0,
        doc="Fraction of the remaining inner walls removed to create loops (0: a perfect maze).",
    )
    observability: str = knob(
        "local",
        choices=("local", "full"),
        doc="'local': only the walls around the agent are described; "
        "'full': the whole map is shown every turn.",
    )
    step_limit: int = knob(
        100,
        low=1,
        high=100_000,
        doc="Moves (including bumps into walls) before the episode is truncated.",
    )
    wording: str = knob(
        "llmgym",
        choices=("llmgym", "agentgym"),
        doc="'llmgym': 'row r, column c' and explained bumps; 'agentgym': AgentGym's LMRL maze "
        "text ('position x, y', 'Success', 'Failure').",
    )


_BIT = {"up": 1, "down": 2, "left": 4, "right": 8}


@dataclass(frozen=True)
class _Layout:
    """A generated maze: per cell, a bit mask of its open sides; a start and a goal."""

    width: int
    height: int
    open_sides: tuple[int, ...]
    start: Cell
    goal: Cell
    distance_to_goal: tuple[int, ...]

    def is_open(self, cell: Cell, direction: str) -> bool:
        return bool(self.open_sides[cell[0] * self.width + cell[1]] & _BIT[direction])

    def distance(self, cell: Cell) -> int:
        return self.distance_to_goal[cell[0] * self.width + cell[1]]

    def instance_key(self) -> str:
        return _instance_key(self.width, self.open_sides, self.goal) + f"|{self.start}"


def _instance_key(width: int, open_sides: tuple[int, ...] | list[int], goal: Cell) -> str:
    return f"{width}|{bytes(open_sides).hex()}|{goal}"


class MazeEnv(TextEnv[MazeConfig]):
    """Find the way to the goal through a maze, one move at a time.

    ## Description
    The agent stands in a rectangular maze of ``width`` x ``height`` cells and must reach the goal
    cell. Each turn it is told its position, the goal's position and which neighbouring cells are
    blocked by walls (or, with ``observability="full"``, shown the whole map). Mazes are generated
    from the task id: a random spanning tree (a perfect maze) with a fraction ``loopiness`` of the
    remaining walls knocked down, and a start far enough from the goal. This follows LMRL-Gym's
    maze task, which AgentGym serves as MAZE, with procedurally generated mazes instead of one
    fixed map.

    ## Action Space
    Text. ``move up``, ``move down``, ``move left`` or ``move right`` (case-insensitive; ``up``,
    ``go up`` and compass words ``north``/``south``/``west``/``east`` are accepted). Rows grow
    downwards and columns to the right.

    ## Observation Space
    Text such as ``"The goal is at row 4, column 5. You are at row 0, column 2. There are walls
    above you and to your left."`` With ``observability="full"`` a map follows, ``#`` for walls,
    ``@`` for the agent and ``G`` for the goal.

    With ``wording="agentgym"`` the text is worded as AgentGym's LMRL-Gym maze server words it:
    ``The goal is at position 4, 5. Your current position is at position 0, 2. There are walls
    to your left, above you.`` and a newline. A position ``x, y`` is ``row, column`` (0-based
    cells, the same numbers as the default wording): ``move down`` increases x by 1, ``move
    right`` increases y by 1, as AgentGym's maze prompt says; a number of two digits is written
    digit by digit (``1 2`` for 12), as LMRL-Gym writes it. Walls are listed in LMRL-Gym's order
    (right, left, above, below), comma-separated; ``There is a wall above you.`` for one and
    ``There are no walls near you.`` for none. A bump into a wall or an unknown command shows
    the unchanged position text with no explanation (still ``info["invalid_action"]``),
    reaching the goal shows ``Success`` and the move that hits ``step_limit`` shows ``Failure``
    (each with a newline).
    What still differs from AgentGym: the mazes are generated per task (AgentGym has one 10x13
    map with 25 start cells, whose coordinates count its wall border), the reward on ``Failure``
    stays ``0.0`` (AgentGym's is ``-1``) and the episode is then truncated, not terminated, on
    the move that reaches ``step_limit`` (AgentGym answers the action after its 50th move with
    ``Failure`` and does not make it); set ``step_limit=50`` for AgentGym's cap.

    ## Rewards
    ``1.0`` on the step that reaches the goal, ``0.0`` otherwise.

    ## Starting State
    The agent stands at the task's start cell; the goal is at least half the maze's
    width + height moves away when the maze allows it.

    ## Episode End
    Terminates when the goal is reached (``info["success"] = True``). Truncated after
    ``step_limit`` moves (``100`` by default). Moving into a wall or an unknown command leaves the
    position unchanged, sets ``info["invalid_action"]`` and counts as a move.

    ## Arguments
    ``gymnasium.make("llmgym/Maze-v0", config=MazeConfig(...))`` or keyword overrides such as
    ``gymnasium.make("llmgym/Maze-v0", width=8, observability="full")``; see :class:`MazeConfig`
    (``width`` and ``height`` 2-30, ``loopiness`` 0-1, ``observability``, ``step_limit``,
    ``wording``: ``"llmgym"`` or ``"agentgym"``).
    ``reset(options=...)`` takes ``task_id``, ``split`` and ``config``.

    ## Version History
    * v0: Initial version; the ``wording`` option (AgentGym's text) was added later, its default
      keeps the original play.
    """

    config_class = MazeConfig
    env_name = "maze"
    rules_text = (
        "You are in a maze of cells. Reach the goal cell. Each turn you learn your position "
        "(row, column), the goal's position and where the walls around you are. Rows grow "
        "downwards, columns to the right. Actions: move up, move down, move left, move right."
    )
    example = (
        "Observation: The goal is at row 2, column 1. You are at row 0, column 0. "
        "There are walls above you, to your left and to your right.\n"
        "Thought: Only down is open, so I go down towards row 2.\n"
        "Action: move down"
    )
    train_size = 10_000
    eval_size = 1_000

    _layout: _Layout | None = None
    _position: Cell = (0, 0)
    _moves = 0

    def rules(self) -> str:
        config = self.task.config if self._task else self.config
        if config.wording == "agentgym":
            return (
                "You are in a maze of cells. Reach the goal cell. Each turn you learn your "
                "position x, y, the goal's position and where the walls around you are: move "
                "down increases x by 1, move right increases y by 1. Actions: move up, move "
                "down, move left, move right."
            )
        return self.rules_text

    def task_ids(self, split: str = "train", config: MazeConfig | None = None) -> TaskIdRange:
        return TaskIdRange(split, self.train_size if split == "train" else self.eval_size)

    def instance_key(self) -> str:
        assert self._layout is not None
        return self._layout.instance_key()

    def _reset_task(self, task: Task[MazeConfig]) -> tuple[str, str]:
        config = task.config
        self._layout = _generate(
            task.env_name, task.task_id, task.split, config.width, config.height, config.loopiness
        )
        self._position = self._layout.start
        self._moves = 0
        goal = self._layout.goal
        instruction = f"Reach the goal at row {goal[0]}, column {goal[1]}."
        if config.wording == "agentgym":
            instruction = f"Reach the goal at position {goal[0]}, {goal[1]}."
        return self._describe(), instruction

    def _step(self, action: str) -> Transition:
        layout = self._layout
        assert layout is not None
        self._moves += 1
        truncated = self._moves >= self.task.config.step_limit
        direction = _ALIASES.get(normalize_command(action))
        if self.task.config.wording == "agentgym":
            return self._agentgym_step(direction, truncated)
        if direction is None:
            return Transition(
                observation=f"Unknown action {self.quote(action)}. Valid actions: move up, "
                f"move down, move left, move right.\n{self._describe()}",
                invalid=True,
                truncated=truncated,
            )
        if not layout.is_open(self._position, direction):
            return Transition(
                observation=f"You cannot move {direction}: there is a wall.\n{self._describe()}",
                invalid=True,
                truncated=truncated,
            )
        dr, dc = MOVES[direction]
        self._position = (self._position[0] + dr, self._position[1] + dc)
        if self._position == layout.goal:
            return Transition(
                observation="You reached the goal. Success!",
                reward=1.0,
                terminated=True,
                success=True,
            )
        return Transition(observation=self._describe(), truncated=truncated)

    def _agentgym_step(self, direction: str | None, truncated: bool) -> Transition:
        layout = self._layout
        assert layout is not None
        moved = direction is not None and layout.is_open(self._position, direction)
        if moved:
            assert direction is not None
            dr, dc = MOVES[direction]
            self._position = (self._position[0] + dr, self._position[1] + dc)
            if self._position == layout.goal:
                return Transition(
                    observation="Success\n", reward=1.0, terminated=True, success=True
                )
        observation = "Failure\n" if truncated else self._describe()
        return Transition(observation=observation, invalid=not moved, truncated=truncated)

    def admissible_actions(self) -> list[str]:
        layout = self._layout
        assert layout is not None
        return [f"move {d}" for d in MOVES if layout.is_open(self._position, d)]

    def oracle_action(self) -> str:
        layout = self._layout
        assert layout is not None
        row, col = self._position
        best = min(
            (d for d in MOVES if layout.is_open(self._position, d)),
            key=lambda d: layout.distance((row + MOVES[d][0], col + MOVES[d][1])),
        )
        return f"move {best}"

    # ------------------------------------------------------------------ text
    def _describe(self) -> str:
        agentgym = self.task.config.wording == "agentgym"
        text = self._describe_agentgym() if agentgym else self._describe_llmgym()
        if self.task.config.observability == "full":
            text += ("" if agentgym else "\n") + self._draw()  # AgentGym's text ends with "\n"
        return text

    def _describe_agentgym(self) -> str:
        layout = self._layout
        assert layout is not None
        (gr, gc), (r, c) = layout.goal, self._position
        blocked = [
            _WALL_PHRASE[d] for d in _AGENTGYM_ORDER if not layout.is_open(self._position, d)
        ]
        if not blocked:
            walls = "There are no walls near you."
        elif len(blocked) == 1:
            walls = f"There is a wall {blocked[0]}."
        else:
            walls = f"There are walls {', '.join(blocked)}."
        return (
            f"The goal is at position {_digits(gr)}, {_digits(gc)}. Your current position is at "
            f"position {_digits(r)}, {_digits(c)}. {walls}\n"
        )

    def _describe_llmgym(self) -> str:
        layout = self._layout
        assert layout is not None
        (gr, gc), (r, c) = layout.goal, self._position
        blocked = [_WALL_PHRASE[d] for d in MOVES if not layout.is_open(self._position, d)]
        if not blocked:
            walls = "There are no walls around you."
        elif len(blocked) == 1:
            walls = f"There is a wall {blocked[0]}."
        else:
            walls = f"There are walls {join_names(blocked)}."
        return f"The goal is at row {gr}, column {gc}. You are at row {r}, column {c}. {walls}"

    def _draw(self) -> str:
        layout = self._layout
        assert layout is not None
        rows = [["#"] * (2 * layout.width + 1) for _ in range(2 * layout.height + 1)]
        for r in range(layout.height):
            for c in range(layout.width):
                rows[2 * r + 1][2 * c + 1] = " "
        for index, sides in enumerate(layout.open_sides):
            r, c = divmod(index, layout.width)
            if sides & _BIT["down"]:
                rows[2 * r + 2][2 * c + 1] = " "
            if sides & _BIT["right"]:
                rows[2 * r + 1][2 * c + 2] = " "
        gr, gc = layout.goal
        rows[2 * gr + 1][2 * gc + 1] = "G"
        r, c = self._position
        rows[2 * r + 1][2 * c + 1] = "@"
        return "\n".join("".join(row) for row in rows)


def _digits(number: int) -> str:
    """A coordinate as LMRL-Gym writes it: digit by digit (``12`` is ``1 2``)."""
    return " ".join(str(number))


@bounded_cache(4096)
def _generate(
    env_name: str, task_id: str, split: str, width: int, height: int, loopiness: float
) -> _Layout:
    """The maze of ``task_id``: the first candidate (by attempt number) whose walls and goal hash
    into ``split``, so that no maze and goal appear in both splits."""
    attempt = 0
    while True:
        rng = TaskRng(env_name, task_id, width, height, loopiness, attempt)
        open_sides = _carve(rng, width, height, loopiness)
        goal = (rng.randbelow(height), rng.randbelow(width))
        if split_of(_instance_key(width, open_sides, goal), eval_fraction=0.5) == split:
            break
        attempt += 1
    distance = _distances(goal, open_sides, width)
    wanted = min(max(distance), max(1, (width + height) // 2))
    candidates = [i for i, d in enumerate(distance) if d >= wanted]
    start_index = rng.choice(candidates)
    start = divmod(start_index, width)
    return _Layout(width, height, tuple(open_sides), start, goal, tuple(distance))


def _carve(rng: TaskRng, width: int, height: int, loopiness: float) -> list[int]:
    """Kruskal's algorithm over shuffled walls, then knock down a share of the rest."""
    size = width * height
    walls = [(i, i + 1, 8, 4) for i in range(size) if i % width != width - 1]
    walls += [(i, i + width, 2, 1) for i in range(size - width)]
    rng.shuffle(walls)
    parent = list(range(size))
    open_sides = [0] * size

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b, side_a, side_b in walls:
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[root_a] = root_b
        elif rng.random() >= loopiness:
            continue
        open_sides[a] |= side_a
        open_sides[b] |= side_b
    return open_sides


def _distances(goal: Cell, open_sides: list[int], width: int) -> list[int]:
    steps = ((1, -width), (2, width), (4, -1), (8, 1))
    distance = [-1] * len(open_sides)
    first = goal[0] * width + goal[1]
    distance[first] = 0
    queue = deque([first])
    while queue:
        cell = queue.popleft()
        for bit, delta in steps:
            if open_sides[cell] & bit and distance[cell + delta] < 0:
                distance[cell + delta] = distance[cell] + 1
                queue.append(cell + delta)
    return distance
