"""The spreadsheet service's state: a workbook of generated sheets (an inventory, class grades,
quarterly sales, staff, expenses), the sheet that is open and the rows frozen in it."""

from __future__ import annotations

from dataclasses import dataclass, field

from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import ItemSplit, load_data
from llmgym.envs.tools.sheet.cells import Cell, Grid, parse_position, trimmed
from llmgym.errors import ToolError

__all__ = ["KINDS", "Table", "Workbook", "generate_table", "sheet_places"]

KINDS = ("inventory", "grades", "sales", "staff", "expenses")
"""The kinds of sheet a workbook can hold."""


@dataclass
class Workbook:
    """The sheets of one episode, by name, and what the agent has opened and frozen."""

    places: dict[str, str]
    """The place in the name of each kind of sheet (drawn per task)."""
    sheets: dict[str, Grid] = field(default_factory=dict)
    """Each sheet's grid, by name (set when the goal fixes the workbook)."""
    initial: dict[str, Grid] = field(default_factory=dict)
    """The sheets as the episode starts."""
    target: str = ""
    """The name of the sheet the goal is about."""
    opened: str | None = None
    frozen_rows: int = 0

    def grid(self) -> Grid:
        """The open sheet's grid; :class:`ToolError` when no sheet is open."""
        if self.opened is None:
            raise ToolError("no sheet is open; call open_sheet with a sheet name first")
        return self.sheets[self.opened]

    def values(self) -> list[list[Cell]]:
        """The open sheet's values, without empty trailing rows and columns."""
        return trimmed(self.grid())

    def cells(
        self,
        start_position: str | None,
        end_position: str | None,
        position_list: list[str] | None,
    ) -> list[Cell]:
        """The values of the cells of ``position_list``, or else of the range from
        ``start_position`` to ``end_position``."""
        grid = self.grid()
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


@dataclass
class Table:
    """A generated sheet: its kind (``inventory``, ``grades``, ...), name and values."""

    kind: str
    name: str
    grid: Grid


sheet_places = ItemSplit(
    "sheet", lambda: sorted({row[0] for row in load_data("cities")["cities"]}), str
)
"""The city names that name the sheets of each split."""


def generate_table(kind: str, rows: int, rng: TaskRng) -> Grid:
    """A sheet of ``kind`` with a header row and ``rows`` data rows."""
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
