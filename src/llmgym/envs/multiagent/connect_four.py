"""Connect Four in text: a board rendering with coordinates, moves by column or landing cell.

PettingZoo conventions: ``env()`` (AEC, order-enforced), ``raw_env`` and ``parallel_env``;
:class:`ConnectFourEnv` is the single-agent environment ``llmgym/ConnectFour-v0``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmgym.core import Task, TaskIdRange, knob, normalize_command, quote_action
from llmgym.core.cache import bounded_cache
from llmgym.core.text import join_names
from llmgym.envs.multiagent.api import pettingzoo_api
from llmgym.envs.multiagent.game import Game, GameConfig
from llmgym.envs.multiagent.versus import VersusEnv, versus_config
from llmgym.errors import ConfigError, IllegalMove

__all__ = [
    "ConnectFourConfig",
    "ConnectFourEnv",
    "ConnectFourGame",
    "ConnectFourVersusConfig",
    "env",
    "parallel_env",
    "raw_env",
]

MARKS = ("X", "O")
_MOVE_WORDS = re.compile(
    r"^(?:(?:drop|play|move|put|place|column|col|in|into|at|on|the|my|a disc|disc)\b[ :]*)+"
)


@dataclass(frozen=True)
class ConnectFourConfig(GameConfig):
    """Board size, line length and openings of Connect Four."""

    rows: int = knob(6, low=4, high=10, doc="Rows of the board.")
    columns: int = knob(7, low=4, high=10, doc="Columns of the board (named a, b, c, ...).")
    connect: int = knob(4, low=3, high=6, doc="Discs in a line needed to win.")
    opening_plies: int = knob(
        4,
        low=0,
        high=4,
        doc="Random discs dropped (alternately) before play starts; the tasks are the distinct "
        "opening positions (0: only the empty board, which is a train task).",
    )

    def validate(self) -> None:
        if self.connect > max(self.rows, self.columns):
            raise ConfigError(
                f"{type(self).__name__}.connect",
                f"{self.connect} does not fit on a {self.rows}x{self.columns} board; "
                f"allowed: at most max(rows, columns) = {max(self.rows, self.columns)}",
            )


class Board:
    """Bitboard geometry of a rows x columns board (column-major, one spare bit per column)."""

    def __init__(self, rows: int, columns: int, connect: int) -> None:
        self.rows, self.columns, self.connect = rows, columns, connect
        self.height = rows + 1
        self.bottom = [1 << (c * self.height) for c in range(columns)]
        self.top = [1 << (c * self.height + rows - 1) for c in range(columns)]
        centre = (columns - 1) / 2
        self.order = sorted(range(columns), key=lambda c: (abs(c - centre), c))
        self.shifts = (1, self.height, self.height - 1, self.height + 1)
        windows = []
        for c in range(columns):
            for r in range(rows):
                for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                    cells = [(c + i * dc, r + i * dr) for i in range(connect)]
                    if all(0 <= cc < columns and 0 <= rr < rows for cc, rr in cells):
                        windows.append(sum(1 << (cc * self.height + rr) for cc, rr in cells))
        self.windows = tuple(windows)
        self.letters = tuple(chr(ord("a") + c) for c in range(columns))
        self.row_cells = tuple(tuple(self.cell(c, r) for c in range(columns)) for r in range(rows))
        self.header = "    " + " ".join(self.letters)
        centre = (columns - 1) / 2
        self.centrality = tuple(columns - abs(c - centre) for c in range(columns))

    def legal(self, mask: int) -> list[int]:
        """Columns that are not full, centre first."""
        return [c for c in self.order if not mask & self.top[c]]

    def drop(self, mask: int, column: int) -> int:
        """The occupancy after a disc is dropped in ``column``."""
        return mask | (mask + self.bottom[column])

    def landing_row(self, mask: int, column: int) -> int:
        """The row (0 = bottom) a disc dropped in ``column`` lands on."""
        return ((mask >> (column * self.height)) & ((1 << self.rows) - 1)).bit_count()

    def wins(self, stones: int) -> bool:
        """Whether ``stones`` hold a line of ``connect``."""
        for shift in self.shifts:
            line = stones
            for i in range(1, self.connect):
                line &= stones >> (i * shift)
                if not line:
                    break
            if line:
                return True
        return False

    def cell(self, column: int, row: int) -> int:
        return 1 << (column * self.height + row)

    def name(self, column: int, row: int | None = None) -> str:
        """``"d"`` for column 3, ``"d1"`` for column 3, row 0."""
        letter = self.letters[column]
        return letter if row is None else f"{letter}{row + 1}"


@bounded_cache(64)
def board_geometry(rows: int, columns: int, connect: int) -> Board:
    """The shared :class:`Board` of a size."""
    return Board(rows, columns, connect)


@bounded_cache(16)
def _openings(rows: int, columns: int, connect: int, plies: int) -> dict[str, tuple[str, ...]]:
    """The distinct positions after ``plies`` random discs, as move strings (``"dcde"``),
    split by content: positions sorted by their board, every fifth one in eval."""
    board = board_geometry(rows, columns, connect)
    level: dict[tuple[int, int], str] = {(0, 0): ""}
    for _ in range(plies):
        following: dict[tuple[int, int], str] = {}
        for (mover, mask), moves in level.items():
            for column in range(columns):
                if mask & board.top[column]:
                    continue
                new_mask = board.drop(mask, column)
                placed = mover | (new_mask ^ mask)
                key = (new_mask ^ placed, new_mask)
                following.setdefault(key, moves + board.name(column))
        level = following
    ordered = sorted(level.items(), key=lambda item: (item[0][1], item[0][0]))
    splits: dict[str, list[str]] = {"train": [], "eval": []}
    for index, (_, moves) in enumerate(ordered):
        splits["eval" if index % 5 == 4 else "train"].append(moves)
    return {split: tuple(moves) for split, moves in splits.items()}


class ConnectFourGame(Game[ConnectFourConfig]):
    """Rules of Connect Four for :class:`raw_env`, :class:`parallel_env` and
    :class:`ConnectFourEnv`."""

    name = "connect_four"
    config_class = ConnectFourConfig
    policies = ("random", "greedy", "cautious", "oracle")
    default_policy = "greedy"
    example = (
        "Observation: You are X. player_1 (O) dropped a disc in column d; it landed on d2.\n"
        "    a b c d e f g\n 2  . . . O . . .\n 1  . . X X X . O\n"
        "Columns you can play: d, c, e, b, f, a, g.\n"
        "Thought: X has c1, d1 and e1; a disc in b lands on b1 and makes four in a row.\n"
        "Action: b"
    )

    @classmethod
    def task_ids(cls, split: str, config: ConnectFourConfig) -> TaskIdRange:
        c = config
        return TaskIdRange(
            split, len(_openings(c.rows, c.columns, c.connect, c.opening_plies)[split])
        )

    def __init__(self, task: Task[ConnectFourConfig]) -> None:
        super().__init__(task)
        c = self.config
        self.board = board_geometry(c.rows, c.columns, c.connect)
        self.stones = [0, 0]
        self.mask = 0
        self.turn = 0
        self.history: list[tuple[int, int, int]] = []  # (player index, column, row)
        self.result = ""
        self._drawing: tuple[int, str] = (-1, "")
        opening = _openings(c.rows, c.columns, c.connect, c.opening_plies)[task.split]
        self.opening = opening[task.index]
        for letter in self.opening:
            self._drop(ord(letter) - ord("a"))
        self.opening_length = len(self.history)

    # ------------------------------------------------------------------ rules
    def _drop(self, column: int) -> None:
        row = self.board.landing_row(self.mask, column)
        new_mask = self.board.drop(self.mask, column)
        self.stones[self.turn] |= new_mask ^ self.mask
        self.mask = new_mask
        self.history.append((self.turn, column, row))
        self.turn = 1 - self.turn

    def to_act(self) -> list[str]:
        return [] if self.finished else [self.players[self.turn]]

    def parse(self, player: str, action: str) -> int:
        text = _MOVE_WORDS.sub("", normalize_command(action, max_length=60)).strip()
        columns = self.board.columns
        last = self.board.name(columns - 1)
        grammar = (
            f"Reply with a column letter a-{last} (or the cell where the disc lands, e.g. d1)."
        )
        column: int | None = None
        row: int | None = None
        if len(text) == 1 and "a" <= text <= last:
            column = ord(text) - ord("a")
        elif text.isascii() and text.isdigit() and 1 <= int(text) <= columns:
            column = int(text) - 1
        elif (
            len(text) >= 2
            and "a" <= text[0] <= last
            and text[1:].isascii()
            and text[1:].isdigit()
            and len(text) <= 3
        ):
            column, row = ord(text[0]) - ord("a"), int(text[1:]) - 1
        if column is None:
            raise IllegalMove(f"{quote_action(action)} is not a column. {grammar}")
        name = self.board.name(column)
        if self.mask & self.board.top[column]:
            raise IllegalMove(
                f"column {name} is full. Columns you can play: {self._open_columns()}."
            )
        landing = self.board.landing_row(self.mask, column)
        if row is not None and row != landing:
            raise IllegalMove(
                f"a disc dropped in column {name} lands on {self.board.name(column, landing)}, "
                f"not {self.board.name(column, row)}. {grammar}"
            )
        return column

    def apply(self, moves: Mapping[str, Any]) -> dict[str, float]:
        player = self.players[self.turn]
        mover = self.turn
        self._drop(moves[player])
        if self.board.wins(self.stones[mover]):
            self.finished = True
            self.result = f"{player} ({MARKS[mover]}) connected {self.board.connect} and won."
            return {player: 1.0, self.players[1 - mover]: -1.0}
        if not self.board.legal(self.mask):
            self.finished = True
            self.result = "The board is full: a draw."
        return {}

    def eliminate(self, player: str) -> dict[str, float]:
        rewards = super().eliminate(player)
        winner = self.live[0]
        rewards[winner] = 1.0
        self.result = f"{player} ({MARKS[self.players.index(player)]}) forfeited; {winner} wins."
        return rewards

    # ------------------------------------------------------------------ text
    def draw(self) -> str:
        """The board with coordinates (rows numbered from the bottom)."""
        if self._drawing[0] != self.mask:
            board = self.board
            crosses = self.stones[0]
            lines = [board.header]
            for row in range(board.rows - 1, -1, -1):
                cells = [
                    ("X" if crosses & bit else "O") if self.mask & bit else "."
                    for bit in board.row_cells[row]
                ]
                lines.append(f"{row + 1:>2}  " + " ".join(cells))
            self._drawing = (self.mask, "\n".join(lines))
        return self._drawing[1]

    def _open_columns(self) -> str:
        legal = self.board.legal(self.mask)
        return ", ".join(self.board.name(c) for c in sorted(legal))

    def _last_move(self) -> str:
        if len(self.history) == self.opening_length:
            if not self.opening_length:
                return "The board is empty."
            cells = join_names(f"{MARKS[p]} on {self.board.name(c, r)}" for p, c, r in self.history)
            return f"The game starts from an opening of {self.opening_length} discs ({cells})."
        mover, column, row = self.history[-1]
        return (
            f"{self.players[mover]} ({MARKS[mover]}) dropped a disc in column "
            f"{self.board.name(column)}; it landed on {self.board.name(column, row)}."
        )

    def observe(self, player: str) -> str:
        index = self.players.index(player)
        other = self.players[1 - index]
        lines = [
            f"You are {MARKS[index]} ({player}); {other} is {MARKS[1 - index]}. "
            f"{self._last_move()}",
            self.draw(),
        ]
        if self.finished:
            outcome = self.outcome(player)
            verdict = {"win": "You won.", "loss": "You lost.", "draw": "It is a draw."}[outcome]
            lines.append(f"Game over: {self.result} {verdict}")
        elif self.turn == index:
            lines.append(f"Your move. Columns you can play: {self._open_columns()}.")
        else:
            lines.append(f"Waiting for {other} ({MARKS[1 - index]}) to move.")
        return "\n".join(lines)

    def instruction(self, player: str) -> str:
        mark = MARKS[self.players.index(player)]
        return f"Play Connect Four as {mark}: get {self.board.connect} of your discs in a line."

    @classmethod
    def rules(cls, config: ConnectFourConfig) -> str:
        c = config
        last = chr(ord("a") + c.columns - 1)
        return (
            f"Connect Four on a board of {c.rows} rows and {c.columns} columns. Two players, X "
            f"and O, take turns dropping a disc into a column; it falls to the lowest empty "
            f"cell. The first to get {c.connect} discs in a row horizontally, vertically or "
            f"diagonally wins; a full board is a draw. Columns are named a-{last} from left to "
            f"right and rows 1-{c.rows} from the bottom, so a cell is written like d1. "
            f"Action: the column to drop a disc in, e.g. 'd' (or the cell where it lands, "
            f"e.g. 'd1')."
        )

    def render(self) -> str:
        status = self.result or f"{self.players[self.turn]} ({MARKS[self.turn]}) to move."
        return f"{self.draw()}\n{status}"

    def instance_key(self) -> str:
        return f"{self.board.rows}x{self.board.columns}/{self.board.connect}:{self.opening}"

    # ------------------------------------------------------------------ players
    def legal_actions(self, player: str) -> list[str] | None:
        if self.finished or self.players[self.turn] != player:
            return None
        return [self.board.name(c) for c in sorted(self.board.legal(self.mask))]

    def sample_action(self, player: str, rng: np.random.Generator) -> str:
        legal = sorted(self.board.legal(self.mask))
        return self.board.name(legal[int(rng.integers(len(legal)))])

    def policy_action(
        self, player: str, policy: str, rng: np.random.Generator, pending: Mapping[str, Any]
    ) -> str:
        if policy in ("greedy", "cautious"):
            me = self._sides(player)[0]
            choices = _candidates(self.board, me, self.mask, cautious=policy == "cautious")
            weights = [self.board.centrality[c] for c in choices]
            point = rng.random() * sum(weights)
            for column, weight in zip(choices, weights, strict=True):
                point -= weight
                if point < 0:
                    return self.board.name(column)
            return self.board.name(choices[-1])
        return super().policy_action(player, policy, rng, pending)

    def oracle_action(self, player: str, pending: Mapping[str, Any]) -> str:
        me, _ = self._sides(player)
        b = self.board
        return b.name(_best_column(b.rows, b.columns, b.connect, me, self.mask))

    def _sides(self, player: str) -> tuple[int, int]:
        index = self.players.index(player)
        return self.stones[index], self.stones[1 - index]


# ---------------------------------------------------------------------- players
def _forced(board: Board, me: int, mask: int) -> tuple[str, list[int]]:
    """``("win", [c])`` when the side to move (stones ``me``) wins at once, ``("block", cs)``
    for the columns that stop the other side's immediate win, else ``("", legal columns)``."""
    legal = board.legal(mask)
    for column in legal:
        if board.wins(me | (board.drop(mask, column) ^ mask)):
            return "win", [column]
    other = me ^ mask
    blocks = [c for c in legal if board.wins(other | (board.drop(mask, c) ^ mask))]
    return ("block", blocks) if blocks else ("", legal)


def _candidates(board: Board, me: int, mask: int, *, cautious: bool) -> list[int]:
    """The greedy player's choices: win, else block (the first threat), else any column
    (``cautious``: except those that let the other side win at once)."""
    kind, columns = _forced(board, me, mask)
    if kind:
        return columns[:1]
    if not cautious:
        return columns
    safe = []
    for column in columns:
        after = board.drop(mask, column)
        other = after ^ (me | (after ^ mask))
        if not any(board.wins(other | (board.drop(after, c) ^ after)) for c in board.legal(after)):
            safe.append(column)
    return safe or columns


_WIN = 1_000_000
_SEARCH_DEPTH = 3


def _evaluate(board: Board, me: int, other: int) -> int:
    score = 0
    for window in board.windows:
        mine, theirs = window & me, window & other
        if mine and not theirs:
            score += mine.bit_count() ** 2
        elif theirs and not mine:
            score -= theirs.bit_count() ** 2
    return score


def _search(board: Board, me: int, mask: int, depth: int, alpha: int, beta: int) -> int:
    """Negamax with alpha-beta for the side to move (stones ``me``); forced wins and blocks
    prune the tree, and the leaves are scored by open lines."""
    kind, columns = _forced(board, me, mask)
    if kind == "win":
        return _WIN + depth
    if not columns:
        return 0
    if depth == 0:
        return _evaluate(board, me, me ^ mask)
    best = -_WIN * 2
    for column in columns:
        after = board.drop(mask, column)
        mine = me | (after ^ mask)
        value = -_search(board, after ^ mine, after, depth - 1, -beta, -alpha)
        if value > best:
            best = value
        alpha = max(alpha, value)
        if alpha >= beta:
            break
    return best


@bounded_cache(8192)
def _best_column(rows: int, columns: int, connect: int, me: int, mask: int) -> int:
    board = board_geometry(rows, columns, connect)
    kind, choices = _forced(board, me, mask)
    if kind or len(choices) == 1:
        return choices[0]
    best, best_value, alpha = choices[0], -_WIN * 4, -_WIN * 4
    for column in choices:
        after = board.drop(mask, column)
        mine = me | (after ^ mask)
        value = -_search(board, after ^ mine, after, _SEARCH_DEPTH - 1, -_WIN * 4, -alpha)
        if value > best_value:
            best, best_value = column, value
        alpha = max(alpha, value)
    return best


# ---------------------------------------------------------------------- PettingZoo
raw_env, parallel_env, env = pettingzoo_api(ConnectFourGame, "Connect Four")
ConnectFourVersusConfig = versus_config(ConnectFourConfig, ConnectFourGame, max_players=2)


class ConnectFourEnv(VersusEnv):
    """Connect Four against a fixed opponent: drop discs, connect four to win.

    ## Description
    The single-agent view of the multi-agent game `llmgym.envs.multiagent.connect_four`
    (PettingZoo: `raw_env`, `env()`, `parallel_env`). The agent plays one colour on a 6 x 7
    board (configurable) against a scripted opponent or any llmgym agent; the opponent moves
    inside `step()`, and the observation shows its move and the board. Each task starts from a
    distinct opening of `opening_plies` random discs; the agent's colour is drawn per task
    (`seat`). The default opponent is `greedy`: it wins when it can, blocks an immediate threat,
    and otherwise drops a disc at random, weighted towards the centre. `cautious` also avoids
    columns that hand over an immediate win; `oracle` is the search player; `random` drops
    anywhere.

    ## Action Space
    Text: a column letter (`d`), a column number (`4`), or the cell where the disc lands
    (`d1`); `column d`, `drop d` and `play d` also work. Columns are `a`.. from the left, rows
    `1`.. from the bottom.

    ## Observation Space
    Text: your colour, the opponent's last move, the board with coordinates (`X`, `O`, `.`)
    and the columns you can play, e.g.

    ```text
    You are X (player_0); player_1 is O. player_1 (O) dropped a disc in column d; it landed on d2.
        a b c d e f g
     6  . . . . . . .
     ...
     1  . . X X O . .
    Your move. Columns you can play: a, b, c, d, e, f, g.
    ```

    ## Rewards
    `+1` for a win, `-1` for a loss (including a forfeit), `0` for a draw, given when the game
    ends.

    ## Starting State
    The task's opening position; if the opponent moves first it has already moved.

    ## Episode End
    Terminates when a player connects four, the board is full, or a player forfeits. Success
    (`info["success"]`) means winning; a draw is not a success. An invalid move (full column,
    unknown column, the wrong landing cell) changes nothing and is answered with feedback; with
    `agent_invalid_move_retries` set, running out of retries forfeits (or plays a default move,
    per `invalid_move_policy`). Truncated by the table's turn limit (60 steps).

    ## Arguments
    `gymnasium.make("llmgym/ConnectFour-v0", opponent="cautious", rows=6, columns=7)`; see
    `ConnectFourVersusConfig`. `opponent=` also accepts an llmgym `Agent` object (e.g.
    `OpenAIChatAgent`), which then plays from its own prompts. `reset(options=...)` takes
    `task_id`, `split` and `config`.

    ## Version History
    * v0: Initial version.
    """

    raw_env_class = raw_env
    config_class = ConnectFourVersusConfig
