"""Cells and formulas of the spreadsheet service: A1 positions, values as the sheet stores
them, how cells are compared (numbers within 0.01, text ignoring case and spacing) and a
recursive-descent evaluator of formulas over a grid (no ``eval``), bounded in length, nesting
and work."""

from __future__ import annotations

import json
import math
import re

from llmgym.errors import ToolError

__all__ = [
    "MAX_COLUMNS",
    "MAX_FORMULA_WORK",
    "MAX_ROWS",
    "OPERATORS",
    "Cell",
    "FormulaBudget",
    "Grid",
    "apply_operator",
    "as_number",
    "cell_fraction",
    "cells_equal",
    "column_letters",
    "entered",
    "evaluate_formula",
    "parse_position",
    "put",
    "resolve",
    "sort_key",
    "trimmed",
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


def as_number(value: Cell) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def entered(value: Cell) -> Cell:
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
    x, y = as_number(a), as_number(b)
    if x is not None and y is not None:
        return abs(x - y) <= NUMERIC_TOLERANCE + 1e-9
    if x is not None or y is not None:
        return False
    return " ".join(str(a).split()).casefold() == " ".join(str(b).split()).casefold()


def trimmed(grid: Grid) -> Grid:
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
    a, e = trimmed(actual), trimmed(expected)
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
                    number = as_number(cell)
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
        return apply_operator(name, values, counted)

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


def apply_operator(name: str, values: list[float], counted: int) -> float:
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


def put(grid: Grid, row: int, column: int, value: Cell) -> None:
    """Set the cell at ``row`` and ``column`` (from 1), growing the grid to reach it."""
    if row > MAX_ROWS or column > MAX_COLUMNS:
        raise ToolError(f"the sheet is limited to {MAX_ROWS} rows and {MAX_COLUMNS} columns")
    while len(grid) < row:
        grid.append([""] * (len(grid[0]) if grid else 0))
    width = max(column, max(len(r) for r in grid))
    for r in grid:
        r.extend([""] * (width - len(r)))
    grid[row - 1][column - 1] = value


def resolve(value: Cell, grid: Grid, budget: FormulaBudget) -> Cell:
    """A value as written into ``grid``: a formula's result, or the value as entered."""
    if isinstance(value, str) and value.strip().startswith("="):
        result = evaluate_formula(value, grid, budget)
        return int(result) if result.is_integer() else result
    return entered(value)


def sort_key(value: Cell) -> tuple[int, float, str]:
    """Numbers before text, empty cells last (as spreadsheets sort)."""
    number = as_number(value)
    if number is not None:
        return (0, number, "")
    if value == "":
        return (2, 0.0, "")
    return (1, 0.0, str(value).casefold())
