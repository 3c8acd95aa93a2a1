"""Sheet: edit a spreadsheet with the tools of a simulated spreadsheet service (cells, ranges,
rows, columns, sorting and formulas, as in AgentGym's Google-Sheets tools); success is judged on
the final state of the workbook."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from llmgym.core import Task, knob
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools.base import (
    Episode,
    ItemSplit,
    PlanStep,
    Tool,
    ToolCall,
    ToolConfig,
    ToolEnv,
    call,
    format_call,
    goal_template,
    load_data,
    prompt_texts,
    tool,
)
from llmgym.errors import ToolError

__all__ = [
    "FormulaBudget",
    "SheetConfig",
    "SheetEnv",
    "cell_fraction",
    "column_letters",
    "evaluate_formula",
    "parse_position",
]

Cell = str | int | float
Grid = list[list[Cell]]
MAX_ROWS = 200
MAX_COLUMNS = 26
NUMERIC_TOLERANCE = 0.01
MAX_FORMULA_DEPTH = 40
MAX_FORMULA_LENGTH = 500
MAX_FORMULA_WORK = 100_000
"""Tokens read plus cells read by all the formulas of one tool call (tens of milliseconds): a
call that writes a sheet full of formulas over whole-sheet ranges is refused, not run for a
minute."""
_POSITION = re.compile(r"^([A-Za-z]{1,2})([0-9]{1,4})$")
_NUMERIC = re.compile(r"^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")
_TOKEN = re.compile(
    r"\s*(?:(?P<range>[A-Za-z]{1,2}[0-9]{1,4}:[A-Za-z]{1,2}[0-9]{1,4})"
    r"|(?P<func>[A-Za-z]+)\s*\(|(?P<cell>[A-Za-z]{1,2}[0-9]{1,4})"
    r"|(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)|(?P<op>[-+*/(),]))"
)
OPERATORS = ("SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT")


# ------------------------------------------------------------------------------ cells
def column_letters(index: int) -> str:
    """``1`` -> ``"A"``, ``27`` -> ``"AA"``."""
    letters = ""
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def parse_position(position: str, argument: str = "position") -> tuple[int, int]:
    """A1 notation -> ``(row, column)``, both 1-based; :class:`ToolError` when malformed or
    outside the sheet's limits (200 rows, columns A-Z)."""
    match = _POSITION.match(position.strip())
    if match is None or int(match[2]) == 0:
        raise ToolError(
            f"{argument} {json.dumps(position[:20])} is not a cell in A1 notation (e.g. 'B3')"
        )
    column = 0
    for letter in match[1].upper():
        column = column * 26 + ord(letter) - 64
    row = int(match[2])
    if row > MAX_ROWS or column > MAX_COLUMNS:
        raise ToolError(
            f"{argument} {position.strip().upper()} is outside the sheet: at most {MAX_ROWS} rows "
            f"and {MAX_COLUMNS} columns (A-Z)"
        )
    return row, column


def _number(value: Cell) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _entered(value: Cell) -> Cell:
    """A value as the sheet stores it: numeric text becomes a number (as a user typing it)."""
    if isinstance(value, str):
        text = value.strip()
        if _NUMERIC.match(text):
            number = float(text)
            return int(number) if number.is_integer() and "." not in text else number
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def cells_equal(a: Cell, b: Cell) -> bool:
    """Numbers within 0.01; text ignoring case and surrounding or repeated spaces."""
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return abs(x - y) <= NUMERIC_TOLERANCE + 1e-9
    if x is not None or y is not None:
        return False
    return " ".join(str(a).split()).casefold() == " ".join(str(b).split()).casefold()


def _trimmed(grid: Grid) -> Grid:
    """A copy of ``grid`` without empty trailing rows and columns, every row as wide."""
    height = len(grid)
    while height and all(c == "" for c in grid[height - 1]):
        height -= 1
    width = 0
    for row in grid[:height]:
        last = len(row)
        while last > width and row[last - 1] == "":
            last -= 1
        width = max(width, last)
    return [row[:width] + [""] * (width - len(row)) for row in grid[:height]]


def cell_fraction(actual: Grid, expected: Grid) -> tuple[int, int]:
    """``(matching cells, cells)`` over the union of the two grids' non-empty extents."""
    a, e = _trimmed(actual), _trimmed(expected)
    height = max(len(a), len(e))
    width = max(max((len(r) for r in a), default=0), max((len(r) for r in e), default=0))
    if a == e:
        return height * width, height * width
    matched = 0
    for r in range(height):
        for c in range(width):
            x = a[r][c] if r < len(a) and c < len(a[r]) else ""
            y = e[r][c] if r < len(e) and c < len(e[r]) else ""
            matched += cells_equal(x, y)
    return matched, height * width


# ------------------------------------------------------------------------------ formulas
class FormulaBudget:
    """The formula work one tool call may still do: :data:`MAX_FORMULA_WORK` steps (a token
    read or a cell read), shared by every formula the call writes."""

    def __init__(self, steps: int = MAX_FORMULA_WORK) -> None:
        self.left = steps

    def spend(self, steps: int) -> None:
        """Count ``steps`` more; :class:`ToolError` when the budget is spent."""
        self.left -= steps
        if self.left < 0:
            raise ToolError(
                f"formula: the formulas of one call may read at most {MAX_FORMULA_WORK:,} "
                "tokens and cells in all, and these read more. Write fewer formulas per call "
                "or use smaller ranges."
            )


class _Formula:
    """A recursive-descent evaluator of spreadsheet formulas over a grid (no ``eval``)."""

    def __init__(self, text: str, grid: Grid, budget: FormulaBudget) -> None:
        self.grid = grid
        self.budget = budget
        self.depth = 0
        self.tokens: list[tuple[str, str]] = []
        position = 0
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None or match.end() == position:
                if not text[position:].strip():
                    break
                raise ToolError(f"formula: cannot read {text[position : position + 12]!r}")
            kind = match.lastgroup or ""
            self.tokens.append((kind, match.group(kind)))
            position = match.end()
        budget.spend(len(self.tokens))
        self.index = 0

    def _peek(self) -> tuple[str, str]:
        return self.tokens[self.index] if self.index < len(self.tokens) else ("end", "")

    def _take(self) -> tuple[str, str]:
        token = self._peek()
        self.index += 1
        return token

    def evaluate(self) -> float:
        value = self._expression()
        if self._peek()[0] != "end":
            raise ToolError(f"formula: unexpected {self._peek()[1]!r}")
        return value

    def _expression(self) -> float:
        value = self._term()
        while self._peek() in (("op", "+"), ("op", "-")):
            value = value + self._term() if self._take()[1] == "+" else value - self._term()
        return value

    def _term(self) -> float:
        value = self._factor()
        while self._peek() in (("op", "*"), ("op", "/")):
            if self._take()[1] == "*":
                value *= self._factor()
            else:
                divisor = self._factor()
                if divisor == 0:
                    raise ToolError("formula: division by zero")
                value /= divisor
        return value

    def _factor(self) -> float:
        self.depth += 1
        if self.depth > MAX_FORMULA_DEPTH:
            raise ToolError(f"formula: nested more than {MAX_FORMULA_DEPTH} levels deep")
        try:
            return self._operand()
        finally:
            self.depth -= 1

    def _operand(self) -> float:
        kind, text = self._take()
        if (kind, text) == ("op", "-"):
            return -self._factor()
        if kind == "number":
            return float(text)
        if kind == "cell":
            value = self._cell(text)
            if isinstance(value, str) and value != "":
                raise ToolError(f"formula: cell {text.upper()} holds text, not a number")
            return float(value or 0)
        if (kind, text) == ("op", "("):
            value = self._expression()
            if self._take() != ("op", ")"):
                raise ToolError("formula: missing ')'")
            return value
        if kind == "func":
            return self._function(text.upper())
        raise ToolError(f"formula: unexpected {text!r}" if text else "formula: incomplete")

    def _function(self, name: str) -> float:
        values: list[float] = []
        counted = 0
        while True:
            if self._peek()[0] == "range":
                for cell in self._range(self._take()[1]):
                    number = _number(cell)
                    if number is not None:
                        values.append(number)
                        counted += 1
            else:
                values.append(self._expression())
                counted += 1
            separator = self._take()
            if separator == ("op", ")"):
                break
            if separator != ("op", ","):
                raise ToolError(f"formula: expected ',' or ')' in {name}(...)")
        return _apply(name, values, counted)

    def _cell(self, position: str) -> Cell:
        self.budget.spend(1)
        return self._value(*parse_position(position, "formula cell"))

    def _value(self, row: int, column: int) -> Cell:
        if row <= len(self.grid) and column <= len(self.grid[row - 1]):
            return self.grid[row - 1][column - 1]
        return ""

    def _range(self, text: str) -> list[Cell]:
        start, end = text.split(":")
        (r1, c1), (r2, c2) = (
            parse_position(start, "formula range"),
            parse_position(end, "formula range"),
        )
        rows = range(min(r1, r2), max(r1, r2) + 1)
        columns = range(min(c1, c2), max(c1, c2) + 1)
        self.budget.spend(len(rows) * len(columns))
        return [self._value(r, c) for r in rows for c in columns]


def _apply(name: str, values: list[float], counted: int) -> float:
    if name == "ROUND":
        if len(values) not in (1, 2):
            raise ToolError("formula: ROUND takes a value and a number of digits")
        digits = values[1] if len(values) == 2 else 0
        if not math.isfinite(digits):
            raise ToolError("formula: ROUND's number of digits is not a finite number")
        return round(values[0], int(digits))
    if name == "ABS" and len(values) == 1:
        return abs(values[0])
    if name == "COUNT":
        return float(counted)
    if not values and name in OPERATORS:
        raise ToolError(f"formula: {name} of no numbers")
    if name == "SUM":
        return sum(values)
    if name == "AVERAGE":
        return sum(values) / len(values)
    if name == "MAX":
        return max(values)
    if name == "MIN":
        return min(values)
    if name == "PRODUCT":
        return math.prod(values)
    if name == "MINUS":
        return values[0] - sum(values[1:])
    raise ToolError(f"formula: unknown function {name}; known: {', '.join(OPERATORS)}, ROUND, ABS")


def evaluate_formula(formula: str, grid: Grid, budget: FormulaBudget | None = None) -> float:
    """The value of ``formula`` (with or without the leading ``=``) over ``grid``: numbers, cell
    references, ``+ - * /``, parentheses and SUM, AVERAGE, COUNT, MAX, MIN, MINUS, PRODUCT,
    ROUND and ABS over cells and ranges (``SUM(B2:B9)``). At most
    :data:`MAX_FORMULA_LENGTH` characters, :data:`MAX_FORMULA_DEPTH` levels of nesting and the
    steps left in ``budget`` (a fresh :class:`FormulaBudget` if none)."""
    text = formula.strip().removeprefix("=")
    if len(text) > MAX_FORMULA_LENGTH:
        raise ToolError(f"formula: longer than {MAX_FORMULA_LENGTH} characters")
    value = _Formula(text, grid, budget or FormulaBudget()).evaluate()
    if not math.isfinite(value):
        raise ToolError("formula: the result is not a finite number")
    return round(value, 10)


# ------------------------------------------------------------------------------ tables
@dataclass
class _Table:
    kind: str
    name: str
    grid: Grid


_sheet_places = ItemSplit(
    "sheet", lambda: sorted({row[0] for row in load_data("cities")["cities"]}), str
)
"""The city names that name the sheets of each split."""


def _generate(kind: str, rows: int, rng: TaskRng) -> Grid:
    words = load_data("sheets")
    names = load_data("names")
    if kind == "inventory":
        products = [
            (item, category) for category, items in words["products"].items() for item in items
        ]
        chosen = rng.sample(products, rows)
        body: list[list[Cell]] = [
            [
                item,
                category,
                round(rng.uniform(2, 200), 2),
                0 if rng.random() < 0.2 else rng.randint(1, 120),
            ]
            for item, category in chosen
        ]
        return [["Item", "Category", "Price", "Stock"], *body]
    if kind == "grades":
        subjects = rng.sample(words["subjects"], 3)
        students = rng.sample(names["first_names"], rows)
        body = [[student, *(rng.randint(40, 100) for _ in subjects)] for student in students]
        return [["Student", *subjects], *body]
    if kind == "sales":
        body = [
            [person, rng.choice(words["regions"]), *(rng.randint(10, 200) * 100 for _ in range(4))]
            for person in _full_names(rng, rows)
        ]
        return [["Salesperson", "Region", "Q1", "Q2", "Q3", "Q4"], *body]
    if kind == "staff":
        body = [
            [
                person,
                rng.choice(words["departments"]),
                rng.randint(300, 1500) * 100,
                rng.randint(0, 30),
            ]
            for person in _full_names(rng, rows)
        ]
        return [["Name", "Department", "Salary", "Years"], *body]
    items = [(d, c) for c, descriptions in words["expense_items"].items() for d in descriptions]
    days = sorted(rng.sample(range(1, 29), min(rows, 28)))
    body = [
        [f"2024-03-{day:02d}", category, description, round(rng.uniform(3, 400), 2)]
        for day, (description, category) in zip(days, rng.sample(items, len(days)), strict=True)
    ]
    return [["Date", "Category", "Description", "Amount"], *body]


def _full_names(rng: TaskRng, count: int) -> list[str]:
    """``count`` people with different first names."""
    names = load_data("names")
    return [
        f"{f} {rng.choice(names['last_names'])}" for f in rng.sample(names["first_names"], count)
    ]


@dataclass(frozen=True)
class SheetConfig(ToolConfig):
    """Difficulty knobs of :class:`SheetEnv`."""

    rows: int = knob(8, low=4, high=18, doc="Data rows in each sheet (below the header row).")
    other_sheets: int = knob(
        2, low=0, high=4, doc="Sheets in the workbook besides the one the goal is about."
    )
    partial_credit: bool = knob(
        True,
        doc="Reward the fraction of matching cells (AgentGym's Sheet reward); false: 1 only for "
        "a full match.",
    )


_KINDS = ("inventory", "grades", "sales", "staff", "expenses")


class SheetEnv(ToolEnv[SheetConfig]):
    """Edit a spreadsheet with the tools of a spreadsheet service until it matches the goal.

    ## Description
    AgentGym's Sheet environment (Google Sheets) rebuilt offline. Each task has a workbook of
    generated sheets (an inventory, class grades, quarterly sales, staff, expenses; names such as
    ``Inventory Lisbon``) and a goal (11 templates at three levels) that edits one of them: set or
    rename a cell, add or delete rows, sort by a column, add a computed column or a summary row,
    raise prices by a percentage, delete rows by a condition and sort the rest. The tools follow
    AgentGym's: open a sheet, read all values, a range or a cell, update cells and ranges, insert
    rows and columns, delete rows or columns, freeze header rows, sort by a column, compute
    SUM/AVERAGE/COUNT/MAX/MIN/MINUS/ PRODUCT over cells, and find cells. A value starting with ``=``
    is a formula (``=SUM(C2:F2)``, ``=ROUND(C3*1.1, 2)``), evaluated once when written; the cell
    keeps the result. A formula has at most 500 characters and 40 levels of nesting, and the
    formulas one call writes may read at most 100,000 tokens and cells in all (a call over the
    bound is refused with feedback). Eval tasks use sheets (and names) that no train task uses.

    ## Action Space
    Text: one tool call per turn, ``Action: TOOL with Action Input: {JSON}`` or a JSON function
    call. Tools: ``list_sheets``, ``open_sheet(name)``, ``get_all_values``,
    ``get_range_values``, ``get_cell_value``, ``get_A1_annotation``, ``update_cell``,
    ``update_range``, ``insert_rows``, ``insert_cols``, ``delete_batch_data``, ``freeze_data``,
    ``sort_sheet_by_col``, ``get_value_by_formula``, ``update_cell_by_formula``,
    ``filter_cells``, ``check_valid_actions`` and ``finish()``; ``rules()`` lists their
    arguments. Malformed calls, unknown tools, bad cell positions, and missing, unknown or
    mistyped arguments get precise feedback, set ``info["invalid_action"]`` and change nothing.

    ## Observation Space
    Text. On reset: ``Goal: ...`` and the tool signatures. After a call: its result; edits return
    the sheet's values (a JSON array of rows).

    With ``prompt_style="agentgym"`` the reset and step texts are worded as AgentGym's tool
    servers word them (``Now new trial starts. ...``, ``Observation: ...`` then ``Give me one
    action.``); docs/tool-environments.md gives them exactly.

    ## Rewards
    On ``finish``: the fraction of matching cells between the workbook and the goal's workbook,
    over the target sheet and every sheet the agent changed (AgentGym's Sheet reward; numbers
    match within 0.01, text ignoring case and spacing). With ``partial_credit=False`` the reward
    is 1 only for a full match. Success means a full match.

    With ``reward="progress"`` the rewards pay out AgentGym's progress rate (subgoals met by any
    tool result, as defined in docs/tool-environments.md; ``info["progress"]`` holds the rate);
    here the rate is the cell-match fraction above (whatever ``partial_credit`` says; no
    subgoals), as AgentGym's Sheet server does.

    ## Starting State
    A workbook of ``1 + other_sheets`` sheets with ``rows`` data rows each; no sheet is open and
    no rows are frozen.

    ## Episode End
    Terminates when ``finish`` is called. Truncated by the registered turn limit (15 turns, as in
    AgentGym).

    ## Arguments
    ``gymnasium.make("llmgym/Sheet-v0", rows=8, other_sheets=2, partial_credit=True,
    min_level=1, max_level=3)``; see :class:`SheetConfig`. ``reward``: ``"finish"`` or
    ``"progress"``; ``prompt_style``: ``"llmgym"`` or ``"agentgym"``.

    ## Version History
    * v0: Initial version; the ``reward`` and ``prompt_style`` options (AgentGym's variant)
      were added later, their defaults keep the original play.
    """

    config_class = SheetConfig
    env_name = "sheet"
    answer_required = False
    finish_description = "Finish the task when the sheet is done."
    answer_description = "Optional; not needed for sheet edits."
    service, notes, example = prompt_texts("sheet")
    parameter_docs: ClassVar[Mapping[str, str]] = {
        "position": "A cell in A1 notation, e.g. 'B3' (columns are letters, rows start at 1).",
        "operator": "The operation.",
        "start_position": "The first cell of a range (with end_position).",
        "end_position": "The last cell of a range (with start_position).",
        "position_list": "A list of cells in A1 notation (instead of a range).",
    }

    _places: dict[str, str]
    """The place in the name of each kind of sheet."""
    _tables: dict[str, _Table]
    """The generated sheets, by kind."""
    _sheets: dict[str, Grid]
    """The workbook: each sheet's grid, by name."""
    _initial: dict[str, Grid]
    _expected: dict[str, Grid]
    """The goal's grids of the sheets it changes."""
    _target: str
    _open: str | None
    _frozen_rows: int

    # ------------------------------------------------------------------ state
    def _setup(self, task: Task[SheetConfig], rng: TaskRng) -> None:
        self._places = dict(
            zip(_KINDS, rng.sample(_sheet_places(task.split), len(_KINDS)), strict=True)
        )
        self._tables = {}
        self._open = None
        self._frozen_rows = 0

    def _table(self, kind: str) -> _Table:
        """The sheet of ``kind`` for this task (generated on first use, from its own stream)."""
        if kind not in self._tables:
            config = self.task.config
            title = f"{load_data('sheets')['kinds'][kind]} {self._places[kind]}"
            grid = _generate(kind, config.rows, self.task.rng("sheet", title))
            self._tables[kind] = _Table(kind, title, grid)
        return self._tables[kind]

    def _workbook(self, target: str, rng: TaskRng) -> _Table:
        """Fix the workbook: the target table plus ``other_sheets`` others, in a random order."""
        config = self.task.config
        others = rng.sample([k for k in _KINDS if k != target], config.other_sheets)
        kinds = [target, *others]
        rng.shuffle(kinds)
        tables = [self._table(k) for k in kinds]
        self._sheets = {t.name: [list(r) for r in t.grid] for t in tables}
        self._initial = {name: [list(r) for r in grid] for name, grid in self._sheets.items()}
        self._target = self._table(target).name
        return self._table(target)

    def _state_key(self) -> str:
        return json.dumps(self._initial, sort_keys=True)

    def _grid(self) -> Grid:
        if self._open is None:
            raise ToolError("no sheet is open; call open_sheet with a sheet name first")
        return self._sheets[self._open]

    def _values(self) -> list[list[Cell]]:
        return _trimmed(self._grid())

    def _set(self, grid: Grid, row: int, column: int, value: Cell) -> None:
        if row > MAX_ROWS or column > MAX_COLUMNS:
            raise ToolError(f"the sheet is limited to {MAX_ROWS} rows and {MAX_COLUMNS} columns")
        while len(grid) < row:
            grid.append([""] * (len(grid[0]) if grid else 0))
        width = max(column, max(len(r) for r in grid))
        for r in grid:
            r.extend([""] * (width - len(r)))
        grid[row - 1][column - 1] = value

    def _resolve(self, value: Cell, grid: Grid, budget: FormulaBudget) -> Cell:
        if isinstance(value, str) and value.strip().startswith("="):
            result = evaluate_formula(value, grid, budget)
            return int(result) if result.is_integer() else result
        return _entered(value)

    def _cells(
        self,
        start_position: str | None,
        end_position: str | None,
        position_list: list[str] | None,
    ) -> list[Cell]:
        grid = self._grid()
        if position_list:
            positions = [parse_position(p, "position_list item") for p in position_list]
        elif start_position and end_position:
            (r1, c1) = parse_position(start_position, "start_position")
            (r2, c2) = parse_position(end_position, "end_position")
            positions = [
                (r, c)
                for r in range(min(r1, r2), max(r1, r2) + 1)
                for c in range(min(c1, c2), max(c1, c2) + 1)
            ]
        else:
            raise ToolError("give either position_list or both start_position and end_position")
        return [
            grid[r - 1][c - 1] if r <= len(grid) and c <= len(grid[r - 1]) else ""
            for r, c in positions
        ]

    def _formula_value(
        self,
        operator: str,
        start_position: str | None,
        end_position: str | None,
        position_list: list[str] | None,
    ) -> float:
        cells = self._cells(start_position, end_position, position_list)
        numbers = [n for n in (_number(c) for c in cells) if n is not None]
        if operator != "COUNT" and not numbers:
            raise ToolError(f"{operator}: the selected cells hold no numbers")
        value = _apply(operator, numbers, len(numbers))
        return int(value) if float(value).is_integer() else round(value, 10)

    # ------------------------------------------------------------------ tools
    @tool
    def list_sheets(self) -> list[str]:
        """List the names of the sheets in the workbook.

        Returns:
            An array of sheet names.
        """
        return list(self._sheets)

    @tool
    def open_sheet(self, name: str) -> str:
        """Open a sheet by name; the other tools work on the open sheet.

        Args:
            name: The name of the sheet.

        Returns:
            A confirmation with the sheet's size.
        """
        wanted = " ".join(name.split()).casefold()
        for sheet in self._sheets:
            if sheet.casefold() == wanted:
                self._open = sheet
                self._frozen_rows = 0
                rows = _trimmed(self._sheets[sheet])
                width = len(rows[0]) if rows else 0
                return f"Opened the sheet {sheet} ({len(rows)} rows x {width} columns)."
        raise ToolError(
            f"there is no sheet named {name.strip()[:60]!r}; the sheets are "
            + ", ".join(repr(s) for s in self._sheets)
        )

    @tool
    def get_all_values(self) -> list[list[Cell]]:
        """Get every value of the open sheet.

        Returns:
            An array of rows (arrays of values).
        """
        return self._values()

    @tool
    def get_range_values(self, start_position: str, end_position: str) -> list[list[Cell]]:
        """Get the values of a rectangular range of the open sheet.

        Args:
            start_position: The top-left cell, in A1 notation.
            end_position: The bottom-right cell, in A1 notation.

        Returns:
            An array of rows (arrays of values).
        """
        grid = self._grid()
        (r1, c1) = parse_position(start_position, "start_position")
        (r2, c2) = parse_position(end_position, "end_position")
        return [
            [
                grid[r - 1][c - 1] if r <= len(grid) and c <= len(grid[r - 1]) else ""
                for c in range(min(c1, c2), max(c1, c2) + 1)
            ]
            for r in range(min(r1, r2), max(r1, r2) + 1)
        ]

    @tool
    def get_cell_value(self, position: str) -> Cell:
        """Get the value of one cell.

        Returns:
            The cell's value.
        """
        return self._cells(None, None, [position])[0]

    @tool
    def get_A1_annotation(self, row: int, col: int) -> str:
        """Translate a (row, column) position into A1 notation.

        Args:
            row: The row number, from 1.
            col: The column number, from 1.

        Returns:
            The position in A1 notation.
        """
        if not (1 <= row <= MAX_ROWS and 1 <= col <= MAX_COLUMNS):
            raise ToolError(f"row must be 1-{MAX_ROWS} and col 1-{MAX_COLUMNS}")
        return f"{column_letters(col)}{row}"

    @tool
    def update_cell(self, position: str, value: str | float) -> list[list[Cell]]:
        """Set the value of one cell (a value starting with '=' is a formula).

        Args:
            value: The new value: text, a number or a formula such as '=SUM(B2:B5)'.

        Returns:
            The sheet's values after the update.
        """
        grid = self._grid()
        row, column = parse_position(position)
        self._set(grid, row, column, self._resolve(value, grid, FormulaBudget()))
        return self._values()

    @tool
    def update_range(
        self, start_position: str, end_position: str, values_list: list[list[str | float]]
    ) -> list[list[Cell]]:
        """Set the values of a rectangular range.

        Args:
            start_position: The top-left cell of the range, in A1 notation.
            end_position: The bottom-right cell of the range, in A1 notation.
            values_list: The new values, one array per row of the range (formulas allowed).

        Returns:
            The sheet's values after the update.
        """
        grid = self._grid()
        (r1, c1) = parse_position(start_position, "start_position")
        (r2, c2) = parse_position(end_position, "end_position")
        height, width = r2 - r1 + 1, c2 - c1 + 1
        if height < 1 or width < 1:
            raise ToolError("end_position must be below and to the right of start_position")
        shape = [len(row) for row in values_list]
        if len(values_list) != height or any(n != width for n in shape):
            raise ToolError(
                f"the range {start_position.upper()}:{end_position.upper()} is {height} rows x "
                f"{width} columns, but values_list has {len(values_list)} rows of lengths {shape}"
            )
        budget = FormulaBudget()
        resolved = [[self._resolve(v, grid, budget) for v in row] for row in values_list]
        for i, row in enumerate(resolved):
            for j, value in enumerate(row):
                self._set(grid, r1 + i, c1 + j, value)
        return self._values()

    @tool
    def insert_rows(
        self, values_list: list[list[str | float]], row_idx: int = 1
    ) -> list[list[Cell]]:
        """Insert rows before a row index (use the row after the last one to append).

        Args:
            values_list: The rows to insert, one array of values per row (formulas allowed).
            row_idx: The row index the first new row gets (1 inserts at the top).

        Returns:
            The sheet's values after the insertion.
        """
        grid = self._grid()
        height = len(_trimmed(grid))
        if not 1 <= row_idx <= height + 1:
            raise ToolError(f"row_idx must be between 1 and {height + 1} (to append)")
        if not values_list or len(grid) + len(values_list) > MAX_ROWS:
            raise ToolError(f"insert 1 to {MAX_ROWS - len(grid)} rows")
        width = max([len(r) for r in grid] + [len(r) for r in values_list])
        if width > MAX_COLUMNS:
            raise ToolError(f"the sheet is limited to {MAX_COLUMNS} columns")
        budget = FormulaBudget()
        rows = [[self._resolve(v, grid, budget) for v in row] for row in values_list]
        for row in grid:
            row.extend([""] * (width - len(row)))
        grid[row_idx - 1 : row_idx - 1] = [row + [""] * (width - len(row)) for row in rows]
        return self._values()

    @tool
    def insert_cols(
        self, values_list: list[list[str | float]], col_idx: int = 1
    ) -> list[list[Cell]]:
        """Insert columns before a column index (use the column after the last one to append).

        Args:
            values_list: The columns to insert, one array of values per column, top to bottom.
            col_idx: The column index the first new column gets (1 inserts at the left).

        Returns:
            The sheet's values after the insertion.
        """
        grid = self._grid()
        width = max((len(r) for r in _trimmed(grid)), default=0)
        if not 1 <= col_idx <= width + 1:
            raise ToolError(f"col_idx must be between 1 and {width + 1} (to append)")
        if not values_list or width + len(values_list) > MAX_COLUMNS:
            raise ToolError(f"insert 1 to {MAX_COLUMNS - width} columns")
        height = max([len(grid)] + [len(c) for c in values_list])
        if height > MAX_ROWS:
            raise ToolError(f"the sheet is limited to {MAX_ROWS} rows")
        budget = FormulaBudget()
        columns = [[self._resolve(v, grid, budget) for v in column] for column in values_list]
        while len(grid) < height:
            grid.append([""] * width)
        for r, row in enumerate(grid):
            row.extend([""] * (width - len(row)))
            new = [column[r] if r < len(column) else "" for column in columns]
            row[col_idx - 1 : col_idx - 1] = new
        return self._values()

    @tool
    def delete_batch_data(
        self, dimension: Literal["row", "col"], index_list: list[int]
    ) -> list[list[Cell]]:
        """Delete rows or columns.

        Args:
            dimension: 'row' to delete rows, 'col' to delete columns.
            index_list: The indexes (from 1) of the rows or columns to delete.

        Returns:
            The sheet's values after the deletion.
        """
        grid = self._grid()
        size = len(grid) if dimension == "row" else max((len(r) for r in grid), default=0)
        bad = [i for i in index_list if not 1 <= i <= size]
        if not index_list or bad:
            raise ToolError(f"index_list must hold {dimension} indexes between 1 and {size}")
        doomed = set(index_list)
        if dimension == "row":
            grid[:] = [row for i, row in enumerate(grid, start=1) if i not in doomed]
        else:
            for row in grid:
                row[:] = [c for i, c in enumerate(row, start=1) if i not in doomed]
        return self._values()

    @tool
    def freeze_data(self, dimension: Literal["rows", "columns"], num: int) -> str:
        """Freeze the first rows or columns of the open sheet (frozen rows stay put when sorting).

        Args:
            dimension: 'rows' or 'columns'.
            num: How many rows or columns to freeze (0 unfreezes).

        Returns:
            A confirmation.
        """
        self._grid()
        if not 0 <= num <= MAX_ROWS:
            raise ToolError(f"num must be between 0 and {MAX_ROWS}")
        if dimension == "rows":
            self._frozen_rows = num
        return f"Froze {num} {dimension}."

    @tool
    def sort_sheet_by_col(self, col_num: int, order: Literal["asc", "desc"]) -> list[list[Cell]]:
        """Sort the rows below the frozen rows by one column.

        Args:
            col_num: The index (from 1) of the column to sort by.
            order: 'asc' (smallest first) or 'desc' (largest first).

        Returns:
            The sheet's values after sorting.
        """
        grid = self._grid()
        rows = _trimmed(grid)
        width = len(rows[0]) if rows else 0
        if not 1 <= col_num <= width:
            raise ToolError(f"col_num must be between 1 and {width}")
        fixed, body = rows[: self._frozen_rows], rows[self._frozen_rows :]
        body.sort(key=lambda row: _sort_key(row[col_num - 1]), reverse=order == "desc")
        grid[:] = fixed + body
        return self._values()

    @tool
    def get_value_by_formula(
        self,
        operator: Literal["SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT"],
        start_position: str | None = None,
        end_position: str | None = None,
        position_list: list[str] | None = None,
    ) -> float:
        """Compute SUM, AVERAGE, COUNT, MAX, MIN, MINUS (the first minus the others) or PRODUCT over
        cells given as a list or as a range.

        Returns:
            The computed number.
        """
        return self._formula_value(operator, start_position, end_position, position_list)

    @tool
    def update_cell_by_formula(
        self,
        operator: Literal["SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT"],
        result_position: str,
        start_position: str | None = None,
        end_position: str | None = None,
        position_list: list[str] | None = None,
    ) -> list[list[Cell]]:
        """Compute SUM, AVERAGE, COUNT, MAX, MIN, MINUS or PRODUCT over cells and write the result
        into a cell.

        Args:
            result_position: The cell that receives the result, in A1 notation.

        Returns:
            The sheet's values after the update.
        """
        value = self._formula_value(operator, start_position, end_position, position_list)
        row, column = parse_position(result_position, "result_position")
        self._set(self._grid(), row, column, value)
        return self._values()

    @tool
    def filter_cells(
        self, query: str | float, in_row: int | None = None, in_column: int | None = None
    ) -> list[str]:
        """Find the cells whose value equals the query (text ignoring case), optionally within one
        row or column.

        Args:
            query: The value to look for.
            in_row: Only search this row (from 1).
            in_column: Only search this column (from 1).

        Returns:
            An array of matching positions in A1 notation.
        """
        wanted = _entered(query)
        found = []
        for r, row in enumerate(self._values(), start=1):
            if in_row is not None and r != in_row:
                continue
            for c, value in enumerate(row, start=1):
                if in_column is not None and c != in_column:
                    continue
                if value != "" and cells_equal(value, wanted):
                    found.append(f"{column_letters(c)}{r}")
        return found

    # ------------------------------------------------------------------ judging
    def _progress_rate(self) -> float:
        """AgentGym's Sheet server: the fraction of matching cells (1.0 when all match)."""
        fraction, success = self._cell_match()
        return 1.0 if success else fraction

    def _judge(self, answer: Any) -> tuple[float, bool]:
        fraction, success = self._cell_match()
        if not self.task.config.partial_credit:
            return float(success), success
        return (1.0 if success else fraction), success

    def _cell_match(self) -> tuple[float, bool]:
        """The fraction of the judged cells that match the goal (the target sheet's, and any
        other sheet's that no longer matches), and whether every sheet matches."""
        matched = total = 0
        success = True
        for name, grid in self._sheets.items():
            expected = self._expected.get(name, self._initial[name])
            good, cells = cell_fraction(grid, expected)
            if good < cells:
                success = False
            if name == self._target or good < cells:
                matched, total = matched + good, total + cells
        return matched / max(total, 1), success

    # ------------------------------------------------------------------ goals
    def _edit(self, goal: str, table: _Table, expected: Grid, calls: list[PlanStep]) -> Episode:
        self._expected = {table.name: _trimmed(expected)}
        plan = [call("open_sheet", name=table.name), call("get_all_values"), *calls, call("finish")]
        return Episode(goal, plan)

    def _set_cell(self, goal: str, table: _Table, row: int, column: int, value: Cell) -> Episode:
        """A goal met by setting one cell (``row`` and ``column`` from 1) to ``value``."""
        expected = [list(r) for r in table.grid]
        expected[row - 1][column - 1] = value
        position = f"{column_letters(column)}{row}"
        return self._edit(
            goal, table, expected, [call("update_cell", position=position, value=value)]
        )

    def _delete_rows(self, goal: str, table: _Table, rows: list[int]) -> Episode:
        """A goal met by deleting ``rows`` (numbered from 1)."""
        expected = [r for i, r in enumerate(table.grid, start=1) if i not in set(rows)]
        return self._edit(
            goal, table, expected, [call("delete_batch_data", dimension="row", index_list=rows)]
        )

    def _add_column(
        self, goal: str, table: _Table, values: list[Cell], formulas: list[Cell]
    ) -> Episode:
        """A goal met by a new last column: ``values`` from the header down, written as
        ``formulas``."""
        grid = table.grid
        expected = [[*row, value] for row, value in zip(grid, values, strict=True)]
        insert = call("insert_cols", values_list=[formulas], col_idx=len(grid[0]) + 1)
        return self._edit(goal, table, expected, [insert])

    def _add_row(
        self, goal: str, table: _Table, values: list[Cell], formulas: list[Cell]
    ) -> Episode:
        """A goal met by a new last row: ``values``, written as ``formulas``."""
        insert = call("insert_rows", values_list=[formulas], row_idx=len(table.grid) + 1)
        return self._edit(goal, table, [*table.grid, values], [insert])

    def _target_table(self, rng: TaskRng, kinds: Sequence[str] = _KINDS) -> _Table:
        return self._workbook(rng.choice(list(kinds)), rng)

    @goal_template(level=1)
    def _goal_set_cell(self, rng: TaskRng, split: str) -> Episode:
        table = self._target_table(rng, ("inventory", "grades", "staff"))
        grid = table.grid
        row = rng.randint(2, len(grid))
        column = rng.randint(3 if table.kind != "grades" else 2, len(grid[0]))
        old = _numeric(grid[row - 1][column - 1])
        value = old + rng.randint(1, 9) if isinstance(old, int) else round(float(old) * 1.5, 2)
        header, key = grid[0][column - 1], grid[row - 1][0]
        goal = f"In the sheet '{table.name}', set the {header} of {key} to {value}."
        return self._set_cell(goal, table, row, column, value)

    @goal_template(level=1)
    def _goal_rename_column(self, rng: TaskRng, split: str) -> Episode:
        table = self._target_table(rng)
        column = rng.randint(1, len(table.grid[0]))
        old = table.grid[0][column - 1]
        new = rng.choice(["Total", "Value", "Notes", "Count", "Label"]) + f" {old}"
        goal = f"In the sheet '{table.name}', rename the column '{old}' to '{new}'."
        return self._set_cell(goal, table, 1, column, new)

    @goal_template(level=1)
    def _goal_delete_row(self, rng: TaskRng, split: str) -> Episode:
        table = self._target_table(rng, ("inventory", "grades", "sales", "staff"))
        row = rng.randint(2, len(table.grid))
        goal = f"In the sheet '{table.name}', delete the row of {table.grid[row - 1][0]}."
        return self._delete_rows(goal, table, [row])

    @goal_template(level=1)
    def _goal_append_row(self, rng: TaskRng, split: str) -> Episode:
        table = self._target_table(rng, ("inventory", "staff"))
        taken = {r[0] for r in table.grid}
        names = load_data("names")
        row: list[Cell]
        if table.kind == "inventory":
            products = load_data("sheets")["products"]
            category = rng.choice(sorted(products))
            item = rng.choice([p for p in products[category] if p not in taken] or ["Gift Card"])
            row = [item, category, round(rng.uniform(2, 200), 2), rng.randint(1, 120)]
            goal = (
                f"In the sheet '{table.name}', add a row at the bottom for {item} (category "
                f"{category}, price {row[2]}, stock {row[3]})."
            )
        else:
            person = f"{rng.choice(names['first_names'])} {rng.choice(names['last_names'])}"
            department = rng.choice(load_data("sheets")["departments"])
            row = [person, department, rng.randint(300, 1500) * 100, 0]
            goal = (
                f"In the sheet '{table.name}', add a row at the bottom for the new employee "
                f"{person} ({department} department, salary {row[2]}, 0 years)."
            )
        return self._add_row(goal, table, row, row)

    @goal_template(level=2, weight=1.5)
    def _goal_sort(self, rng: TaskRng, split: str) -> Episode | None:
        table = self._target_table(rng)
        unique = [
            c
            for c in range(1, len(table.grid[0]) + 1)
            if len({r[c - 1] for r in table.grid[1:]}) == len(table.grid) - 1
        ]
        if not unique:
            return None
        column = rng.choice(unique)
        values = [r[column - 1] for r in table.grid[1:]]
        descending = rng.random() < 0.5
        header = table.grid[0][column - 1]
        order = (
            ("from largest to smallest" if descending else "from smallest to largest")
            if _number(values[0]) is not None
            else ("in reverse alphabetical order" if descending else "in alphabetical order")
        )
        body = sorted(table.grid[1:], key=lambda r: _sort_key(r[column - 1]), reverse=descending)
        goal = (
            f"In the sheet '{table.name}', sort the rows by {header} {order}, keeping the header "
            "row at the top."
        )
        calls = _sorting(column, descending)
        return self._edit(goal, table, [table.grid[0], *body], calls)

    @goal_template(level=2)
    def _goal_total_column(self, rng: TaskRng, split: str) -> Episode:
        table = self._target_table(rng, ("grades", "sales"))
        grid = table.grid
        first = 2 if table.kind == "grades" else 3
        name = "Total" if table.kind == "grades" else "Year Total"
        summed = _header(grid)[first - 1 :]
        span = f"{column_letters(first)}{{r}}:{column_letters(len(grid[0]))}{{r}}"
        totals = [sum(_numeric(cell) for cell in row[first - 1 :]) for row in grid[1:]]
        formulas = [f"=SUM({span.format(r=r)})" for r in range(2, len(grid) + 1)]
        goal = (
            f"In the sheet '{table.name}', add a column '{name}' after the last column holding "
            f"each row's sum of {', '.join(summed)}."
        )
        return self._add_column(goal, table, [name, *totals], [name, *formulas])

    @goal_template(level=2)
    def _goal_delete_where(self, rng: TaskRng, split: str) -> Episode | None:
        table = self._target_table(rng, ("inventory", "staff", "grades"))
        grid = table.grid
        if table.kind == "inventory":
            doomed = [i for i, r in enumerate(grid[1:], start=2) if r[3] == 0]
            goal = f"In the sheet '{table.name}', delete every item whose Stock is 0."
        elif table.kind == "staff":
            limit = rng.randint(3, 10)
            doomed = [i for i, r in enumerate(grid[1:], start=2) if _numeric(r[3]) < limit]
            goal = (
                f"In the sheet '{table.name}', delete every employee with fewer than {limit} Years."
            )
        else:
            subject = grid[0][rng.randint(2, len(grid[0])) - 1]
            column = grid[0].index(subject)
            limit = rng.choice([50, 55, 60])
            doomed = [i for i, r in enumerate(grid[1:], start=2) if _numeric(r[column]) < limit]
            goal = (
                f"In the sheet '{table.name}', delete every student who scored below {limit} in "
                f"{subject}."
            )
        if not doomed or len(doomed) == len(grid) - 1:
            return None
        return self._delete_rows(goal, table, doomed)

    @goal_template(level=2)
    def _goal_raise_prices(self, rng: TaskRng, split: str) -> Episode | None:
        table = self._target_table(rng, ("inventory", "staff"))
        grid = table.grid
        group_column, value_column = 1, 2  # zero-based: category / department, price / salary
        group = rng.choice(sorted({r[group_column] for r in grid[1:]}))
        rows = [i for i, r in enumerate(grid[1:], start=2) if r[group_column] == group]
        if len(rows) > 6:  # one update per row; keep the plan within the turn limit
            return None
        percent = rng.choice([5, 10, 15, 20, 25])
        expected = [list(r) for r in grid]
        calls: list[PlanStep] = []
        for row in rows:
            expected[row - 1][value_column] = round(
                _numeric(grid[row - 1][value_column]) * (1 + percent / 100), 2
            )
            position = f"C{row}"
            calls.append(
                call(
                    "update_cell",
                    position=position,
                    value=f"=ROUND({position}*{1 + percent / 100:g}, 2)",
                )
            )
        what = (
            "price of every item in the category"
            if table.kind == "inventory"
            else "salary of everyone in the department"
        )
        goal = (
            f"In the sheet '{table.name}', raise the {what} {group} by {percent}% (round to cents)."
        )
        return self._edit(goal, table, expected, calls)

    @goal_template(level=3)
    def _goal_average_row(self, rng: TaskRng, split: str) -> Episode:
        table = self._target_table(rng, ("grades", "sales"))
        grid = table.grid
        first = 2 if table.kind == "grades" else 3
        height = len(grid)
        summary: list[Cell] = ["Average", *[""] * (first - 2)]
        formulas: list[Cell] = ["Average", *[""] * (first - 2)]
        for column in range(first, len(grid[0]) + 1):
            values = [_numeric(r[column - 1]) for r in grid[1:]]
            summary.append(sum(values) / len(values))
            letter = column_letters(column)
            formulas.append(f"=AVERAGE({letter}2:{letter}{height})")
        goal = (
            f"In the sheet '{table.name}', add a row at the bottom with 'Average' in the first "
            f"column and the average of each of {', '.join(_header(grid)[first - 1 :])} below "
            "its column."
        )
        return self._add_row(goal, table, summary, formulas)

    @goal_template(level=3)
    def _goal_delete_then_sort(self, rng: TaskRng, split: str) -> Episode | None:
        table = self._target_table(rng, ("inventory",))
        grid = table.grid
        doomed = [i for i, r in enumerate(grid[1:], start=2) if r[3] == 0]
        prices = [r[2] for r in grid[1:]]
        if not doomed or len(doomed) == len(grid) - 1 or len(set(prices)) < len(prices):
            return None
        descending = rng.random() < 0.5
        kept = [r for i, r in enumerate(grid[1:], start=2) if i not in set(doomed)]
        body = sorted(kept, key=lambda r: _numeric(r[2]), reverse=descending)
        order = "highest to lowest" if descending else "lowest to highest"
        goal = (
            f"In the sheet '{table.name}', delete the items that are out of stock (Stock 0), then "
            f"sort the remaining rows by Price from {order}, keeping the header row at the top."
        )
        calls = [
            call("delete_batch_data", dimension="row", index_list=doomed),
            *_sorting(3, descending),
        ]
        return self._edit(goal, table, [grid[0], *body], calls)

    @goal_template(level=3)
    def _goal_difference_column(self, rng: TaskRng, split: str) -> Episode:
        table = self._target_table(rng, ("sales",))
        grid = table.grid
        growth = [_numeric(row[5]) - _numeric(row[2]) for row in grid[1:]]
        formulas = [f"=F{r}-C{r}" for r in range(2, len(grid) + 1)]
        goal = (
            f"In the sheet '{table.name}', add a column 'Growth' after the last column holding "
            "each salesperson's Q4 minus Q1."
        )
        return self._add_column(goal, table, ["Growth", *growth], ["Growth", *formulas])

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        if param == "name":
            return list(self._sheets)
        if param in ("position", "start_position", "result_position"):
            return ["A1", "B2", "C3", "B4", "D2"]
        if param == "end_position":
            return ["D5", "E9", "C4"]
        if param == "position_list":
            return [["B2", "C3"], ["C2", "C3", "C4"]]
        if param in ("row_idx", "col_idx", "col_num", "row", "col"):
            return [1, 2, 3]
        if param == "index_list":
            return [[2], [3, 4]]
        if param == "values_list":
            return [[["x", 1]], [["=SUM(C2:C3)"]]]
        if param == "num":
            return [0, 1]
        return None

    def _sample_arguments(self, selected: Tool, rng: np.random.Generator) -> dict[str, Any]:
        arguments = super()._sample_arguments(selected, rng)
        if selected.name == "update_range":
            arguments["values_list"] = [["x"] * 2 for _ in range(2)]
            arguments["start_position"], arguments["end_position"] = "B2", "C3"
        if selected.name in ("get_value_by_formula", "update_cell_by_formula"):
            arguments["position_list"] = ["C2", "C3"]
        return arguments

    def sample_action(self, rng: np.random.Generator) -> str:
        """A random call; until a sheet is open, mostly ``open_sheet`` (other tools need one)."""
        if self._open is None and rng.random() < 0.7:
            name = list(self._sheets)[int(rng.integers(len(self._sheets)))]
            return format_call(ToolCall("open_sheet", {"name": name}))
        return super().sample_action(rng)


def _numeric(cell: Cell) -> int | float:
    """A cell of a generated table's numeric column, as stored (an int stays an int)."""
    if isinstance(cell, str):
        raise TypeError(f"expected a number, got {cell!r}")
    return cell


def _header(grid: Grid) -> list[str]:
    return [str(cell) for cell in grid[0]]


def _sorting(column: int, descending: bool) -> list[PlanStep]:
    """Freeze the header row, then sort the rest by ``column`` (from 1)."""
    return [
        call("freeze_data", dimension="rows", num=1),
        call("sort_sheet_by_col", col_num=column, order="desc" if descending else "asc"),
    ]


def _sort_key(value: Cell) -> tuple[int, float, str]:
    """Numbers before text, empty cells last (as spreadsheets sort)."""
    number = _number(value)
    if number is not None:
        return (0, number, "")
    if value == "":
        return (2, 0.0, "")
    return (1, 0.0, str(value).casefold())
