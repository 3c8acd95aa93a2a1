"""Sheet: edit a spreadsheet with the tools of a simulated spreadsheet service (cells, ranges,
rows, columns, sorting and formulas, as in AgentGym's Google-Sheets tools); success is judged on
the final state of the workbook."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmgym.core import Task, knob
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import Tool, ToolCall, ToolConfig, ToolEnv, format_call, prompt_texts
from llmgym.envs.tools.sheet.cells import cell_fraction
from llmgym.envs.tools.sheet.goals import SheetGoals
from llmgym.envs.tools.sheet.toolkit import SheetComputing, SheetEditing, SheetReading
from llmgym.envs.tools.sheet.workbook import KINDS, Workbook, sheet_places

__all__ = ["SheetConfig", "SheetEnv"]


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


class SheetEnv(ToolEnv[SheetConfig, Workbook]):
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
    toolkits = (SheetReading, SheetEditing, SheetComputing)
    goals = SheetGoals

    # ------------------------------------------------------------------ state
    def _setup(self, task: Task[SheetConfig], rng: TaskRng) -> Workbook:
        places = rng.sample(sheet_places(task.split), len(KINDS))
        return Workbook(dict(zip(KINDS, places, strict=True)))

    def _state_key(self) -> str:
        return json.dumps(self._state.initial, sort_keys=True)

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
        goal_grids = self._episode.goal_state
        matched = total = 0
        success = True
        for name, grid in self._state.sheets.items():
            expected = goal_grids.get(name, self._state.initial[name])
            good, cells = cell_fraction(grid, expected)
            if good < cells:
                success = False
            if name == self._state.target or good < cells:
                matched, total = matched + good, total + cells
        return matched / max(total, 1), success

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        if param == "name":
            return list(self._state.sheets)
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
        if self._state.opened is None and rng.random() < 0.7:
            name = list(self._state.sheets)[int(rng.integers(len(self._state.sheets)))]
            return format_call(ToolCall("open_sheet", {"name": name}))
        return super().sample_action(rng)
