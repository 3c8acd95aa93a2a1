"""The spreadsheet service's tools, after AgentGym's Google-Sheets tools: reading the workbook,
editing the open sheet and computing over its cells, three toolkits over the episode's
:class:`~llmgym.envs.tools.sheet.workbook.Workbook`. A value starting with ``=`` is a formula,
evaluated once when written."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from llmgym.envs.tools import Toolkit, tool
from llmgym.envs.tools.sheet.cells import (
    MAX_COLUMNS,
    MAX_ROWS,
    Cell,
    FormulaBudget,
    apply_operator,
    as_number,
    cells_equal,
    column_letters,
    entered,
    parse_position,
    put,
    resolve,
    sort_key,
    trimmed,
)
from llmgym.envs.tools.sheet.workbook import Workbook
from llmgym.errors import ToolError

__all__ = ["SheetComputing", "SheetEditing", "SheetReading"]


class _SheetTools(Toolkit[Workbook]):
    """What the sheet toolkits share: the descriptions of their common parameters."""

    parameter_docs: ClassVar[Mapping[str, str]] = {
        "position": "A cell in A1 notation, e.g. 'B3' (columns are letters, rows start at 1).",
        "operator": "The operation.",
        "start_position": "The first cell of a range (with end_position).",
        "end_position": "The last cell of a range (with start_position).",
        "position_list": "A list of cells in A1 notation (instead of a range).",
    }


class SheetReading(_SheetTools):
    """List and open the sheets, read values and positions."""

    @tool
    def list_sheets(self) -> list[str]:
        """List the names of the sheets in the workbook.

        Returns:
            An array of sheet names.
        """
        return list(self.state.sheets)

    @tool
    def open_sheet(self, name: str) -> str:
        """Open a sheet by name; the other tools work on the open sheet.

        Args:
            name: The name of the sheet.

        Returns:
            A confirmation with the sheet's size.
        """
        wanted = " ".join(name.split()).casefold()
        for sheet in self.state.sheets:
            if sheet.casefold() == wanted:
                self.state.opened = sheet
                self.state.frozen_rows = 0
                rows = trimmed(self.state.sheets[sheet])
                width = len(rows[0]) if rows else 0
                return f"Opened the sheet {sheet} ({len(rows)} rows x {width} columns)."
        raise ToolError(
            f"there is no sheet named {name.strip()[:60]!r}; the sheets are "
            + ", ".join(repr(s) for s in self.state.sheets)
        )

    @tool
    def get_all_values(self) -> list[list[Cell]]:
        """Get every value of the open sheet.

        Returns:
            An array of rows (arrays of values).
        """
        return self.state.values()

    @tool
    def get_range_values(self, start_position: str, end_position: str) -> list[list[Cell]]:
        """Get the values of a rectangular range of the open sheet.

        Args:
            start_position: The top-left cell, in A1 notation.
            end_position: The bottom-right cell, in A1 notation.

        Returns:
            An array of rows (arrays of values).
        """
        grid = self.state.grid()
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
        return self.state.cells(None, None, [position])[0]

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


class SheetEditing(_SheetTools):
    """Change the open sheet: cells, ranges, rows and columns, frozen rows, sorting."""

    @tool
    def update_cell(self, position: str, value: str | float) -> list[list[Cell]]:
        """Set the value of one cell (a value starting with '=' is a formula).

        Args:
            value: The new value: text, a number or a formula such as '=SUM(B2:B5)'.

        Returns:
            The sheet's values after the update.
        """
        grid = self.state.grid()
        row, column = parse_position(position)
        put(grid, row, column, resolve(value, grid, FormulaBudget()))
        return self.state.values()

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
        grid = self.state.grid()
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
        resolved = [[resolve(v, grid, budget) for v in row] for row in values_list]
        for i, row in enumerate(resolved):
            for j, value in enumerate(row):
                put(grid, r1 + i, c1 + j, value)
        return self.state.values()

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
        grid = self.state.grid()
        height = len(trimmed(grid))
        if not 1 <= row_idx <= height + 1:
            raise ToolError(f"row_idx must be between 1 and {height + 1} (to append)")
        if not values_list or len(grid) + len(values_list) > MAX_ROWS:
            raise ToolError(f"insert 1 to {MAX_ROWS - len(grid)} rows")
        width = max([len(r) for r in grid] + [len(r) for r in values_list])
        if width > MAX_COLUMNS:
            raise ToolError(f"the sheet is limited to {MAX_COLUMNS} columns")
        budget = FormulaBudget()
        rows = [[resolve(v, grid, budget) for v in row] for row in values_list]
        for row in grid:
            row.extend([""] * (width - len(row)))
        grid[row_idx - 1 : row_idx - 1] = [row + [""] * (width - len(row)) for row in rows]
        return self.state.values()

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
        grid = self.state.grid()
        width = max((len(r) for r in trimmed(grid)), default=0)
        if not 1 <= col_idx <= width + 1:
            raise ToolError(f"col_idx must be between 1 and {width + 1} (to append)")
        if not values_list or width + len(values_list) > MAX_COLUMNS:
            raise ToolError(f"insert 1 to {MAX_COLUMNS - width} columns")
        height = max([len(grid)] + [len(c) for c in values_list])
        if height > MAX_ROWS:
            raise ToolError(f"the sheet is limited to {MAX_ROWS} rows")
        budget = FormulaBudget()
        columns = [[resolve(v, grid, budget) for v in column] for column in values_list]
        while len(grid) < height:
            grid.append([""] * width)
        for r, row in enumerate(grid):
            row.extend([""] * (width - len(row)))
            new = [column[r] if r < len(column) else "" for column in columns]
            row[col_idx - 1 : col_idx - 1] = new
        return self.state.values()

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
        grid = self.state.grid()
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
        return self.state.values()

    @tool
    def freeze_data(self, dimension: Literal["rows", "columns"], num: int) -> str:
        """Freeze the first rows or columns of the open sheet (frozen rows stay put when sorting).

        Args:
            dimension: 'rows' or 'columns'.
            num: How many rows or columns to freeze (0 unfreezes).

        Returns:
            A confirmation.
        """
        self.state.grid()
        if not 0 <= num <= MAX_ROWS:
            raise ToolError(f"num must be between 0 and {MAX_ROWS}")
        if dimension == "rows":
            self.state.frozen_rows = num
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
        grid = self.state.grid()
        rows = trimmed(grid)
        width = len(rows[0]) if rows else 0
        if not 1 <= col_num <= width:
            raise ToolError(f"col_num must be between 1 and {width}")
        fixed, body = rows[: self.state.frozen_rows], rows[self.state.frozen_rows :]
        body.sort(key=lambda row: sort_key(row[col_num - 1]), reverse=order == "desc")
        grid[:] = fixed + body
        return self.state.values()


class SheetComputing(_SheetTools):
    """Compute over the open sheet's cells, write a computed value, find cells."""

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
        put(self.state.grid(), row, column, value)
        return self.state.values()

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
        wanted = entered(query)
        found = []
        for r, row in enumerate(self.state.values(), start=1):
            if in_row is not None and r != in_row:
                continue
            for c, value in enumerate(row, start=1):
                if in_column is not None and c != in_column:
                    continue
                if value != "" and cells_equal(value, wanted):
                    found.append(f"{column_letters(c)}{r}")
        return found

    def _formula_value(
        self,
        operator: str,
        start_position: str | None,
        end_position: str | None,
        position_list: list[str] | None,
    ) -> float:
        cells = self.state.cells(start_position, end_position, position_list)
        numbers = [n for n in (as_number(c) for c in cells) if n is not None]
        if operator != "COUNT" and not numbers:
            raise ToolError(f"{operator}: the selected cells hold no numbers")
        value = apply_operator(operator, numbers, len(numbers))
        return int(value) if float(value).is_integer() else round(value, 10)
