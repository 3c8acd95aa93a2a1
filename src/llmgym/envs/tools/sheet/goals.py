"""The spreadsheet service's goals: 11 templates at three levels that edit one sheet of a
generated workbook (set or rename a cell, add or delete rows, sort, add a computed column or a
summary row, raise prices, delete rows by a condition and sort the rest). Each template fixes
the workbook it starts from and returns the target sheet's goal grid as the goal state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llmgym.core import Task
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import Episode, Goals, PlanStep, call, goal_template, load_data
from llmgym.envs.tools.sheet.cells import Cell, Grid, as_number, column_letters, sort_key, trimmed
from llmgym.envs.tools.sheet.workbook import KINDS, Table, Workbook, generate_table

__all__ = ["SheetGoals"]


class SheetGoals(Goals[Workbook]):
    """Edits of one sheet, judged on the final workbook."""

    def __init__(self, state: Workbook, task: Task[Any]) -> None:
        super().__init__(state, task)
        self._tables: dict[str, Table] = {}
        """The generated sheets, by kind."""

    def _table(self, kind: str) -> Table:
        """The sheet of ``kind`` for this task (generated on first use, from its own stream)."""
        if kind not in self._tables:
            config = self.task.config
            title = f"{load_data('sheets')['kinds'][kind]} {self.state.places[kind]}"
            grid = generate_table(kind, config.rows, self.task.rng("sheet", title))
            self._tables[kind] = Table(kind, title, grid)
        return self._tables[kind]

    def _workbook(self, target: str, rng: TaskRng) -> Table:
        """Fix the workbook: the target table plus ``other_sheets`` others, in a random order."""
        config = self.task.config
        others = rng.sample([k for k in KINDS if k != target], config.other_sheets)
        kinds = [target, *others]
        rng.shuffle(kinds)
        tables = [self._table(k) for k in kinds]
        self.state.sheets = {t.name: [list(r) for r in t.grid] for t in tables}
        self.state.initial = {
            name: [list(r) for r in grid] for name, grid in self.state.sheets.items()
        }
        self.state.target = self._table(target).name
        return self._table(target)

    def _edit(self, goal: str, table: Table, expected: Grid, calls: list[PlanStep]) -> Episode:
        plan = [call("open_sheet", name=table.name), call("get_all_values"), *calls, call("finish")]
        return Episode(goal, plan, goal_state={table.name: trimmed(expected)})

    def _set_cell(self, goal: str, table: Table, row: int, column: int, value: Cell) -> Episode:
        """A goal met by setting one cell (``row`` and ``column`` from 1) to ``value``."""
        expected = [list(r) for r in table.grid]
        expected[row - 1][column - 1] = value
        position = f"{column_letters(column)}{row}"
        return self._edit(
            goal, table, expected, [call("update_cell", position=position, value=value)]
        )

    def _delete_rows(self, goal: str, table: Table, rows: list[int]) -> Episode:
        """A goal met by deleting ``rows`` (numbered from 1)."""
        expected = [r for i, r in enumerate(table.grid, start=1) if i not in set(rows)]
        return self._edit(
            goal, table, expected, [call("delete_batch_data", dimension="row", index_list=rows)]
        )

    def _add_column(
        self, goal: str, table: Table, values: list[Cell], formulas: list[Cell]
    ) -> Episode:
        """A goal met by a new last column: ``values`` from the header down, written as
        ``formulas``."""
        grid = table.grid
        expected = [[*row, value] for row, value in zip(grid, values, strict=True)]
        insert = call("insert_cols", values_list=[formulas], col_idx=len(grid[0]) + 1)
        return self._edit(goal, table, expected, [insert])

    def _add_row(
        self, goal: str, table: Table, values: list[Cell], formulas: list[Cell]
    ) -> Episode:
        """A goal met by a new last row: ``values``, written as ``formulas``."""
        insert = call("insert_rows", values_list=[formulas], row_idx=len(table.grid) + 1)
        return self._edit(goal, table, [*table.grid, values], [insert])

    def _target_table(self, rng: TaskRng, kinds: Sequence[str] = KINDS) -> Table:
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
            if as_number(values[0]) is not None
            else ("in reverse alphabetical order" if descending else "in alphabetical order")
        )
        body = sorted(table.grid[1:], key=lambda r: sort_key(r[column - 1]), reverse=descending)
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
