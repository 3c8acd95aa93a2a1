"""Sheet: A1 notation, the formula evaluator, the spreadsheet tools and the state-based reward."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest

from llmgym.envs.tools.sheet import (
    MAX_FORMULA_WORK,
    FormulaBudget,
    SheetEnv,
    cell_fraction,
    column_letters,
    evaluate_formula,
    parse_position,
)
from llmgym.errors import ToolError
from tests.stopwatch import Stopwatch

GRID = [["Item", "Price", "Stock"], ["Pen", 2.5, 10], ["Ink", 4, 0], ["Pad", 3.25, 7]]


def test_a1_notation() -> None:
    assert [column_letters(i) for i in (1, 26, 27, 52, 53)] == ["A", "Z", "AA", "AZ", "BA"]
    assert parse_position("b3") == (3, 2) and parse_position(" Z200 ") == (200, 26)
    for bad in ("3B", "A0", "A", "", "A1:B2", "ABC1"):
        with pytest.raises(ToolError, match="not a cell in A1 notation"):
            parse_position(bad)
    for outside in ("AA10", "A201", "ZZ9999"):
        with pytest.raises(ToolError, match="outside the sheet: at most 200 rows"):
            parse_position(outside)


@pytest.mark.parametrize(
    ("formula", "value"),
    [
        ("=1+2*3", 7),
        ("=(1+2)*3", 9),
        ("=-B2+10", 7.5),
        ("=SUM(B2:B4)", 9.75),
        ("=AVERAGE(C2:C4)", 17 / 3),
        ("=COUNT(A1:C4)", 6),
        ("=MAX(B2:C4, 11)", 11),
        ("=MIN(B2, C3)", 0),
        ("=MINUS(C2, C4)", 3),
        ("=PRODUCT(B2:B3)", 10),
        ("=ROUND(B4*1.1, 2)", 3.58),
        ("=ABS(C4-C2)", 3),
        ("=SUM(B2:B4)/COUNT(B2:B4)", 3.25),
        ("=E9+1", 1),
    ],
)
def test_formulas(formula: str, value: float) -> None:
    assert evaluate_formula(formula, GRID) == pytest.approx(value)


@pytest.mark.parametrize(
    ("formula", "says"),
    [
        ("=1/0", "division by zero"),
        ("=A2*2", "holds text"),
        ("=SUM(B2:B4", "expected ',' or ')'"),
        ("=FOO(B2)", "unknown function FOO"),
        ("=__import__('os')", "formula"),
        ("=1 +", "incomplete"),
        ("=2 3", "unexpected"),
        ("=ROUND(1, 1" + "0" * 400 + ")", "ROUND's number of digits is not a finite number"),
        ("=" + "(" * 41 + "1" + ")" * 41, "nested more than 40 levels deep"),
        ("=" + "1+" * 250 + "1", "longer than 500 characters"),
    ],
)
def test_bad_formulas_are_refused(formula: str, says: str) -> None:
    with pytest.raises(ToolError, match=re.escape(says)):
        evaluate_formula(formula, GRID)


def test_cell_fraction() -> None:
    assert cell_fraction(GRID, GRID) == (12, 12)
    changed = [list(r) for r in GRID]
    changed[1][1] = 2.504  # within 0.01
    changed[2][0] = " ink "
    assert cell_fraction(changed, GRID) == (12, 12)
    changed[3][2] = 8
    assert cell_fraction(changed, GRID) == (11, 12)
    assert cell_fraction([*GRID, ["x"]], GRID) == (14, 15)


@pytest.fixture
def env() -> SheetEnv:
    env = gym.make("llmgym/Sheet-v0").unwrapped
    env.reset(options={"task_id": "train/00001"})
    return env


def act(env: SheetEnv, tool_name: str, /, **arguments) -> tuple[object, bool]:
    observation, _, _, _, info = env.step(
        f"Action: {tool_name} with Action Input: {json.dumps(arguments)}"
    )
    try:
        return json.loads(observation), info["invalid_action"]
    except json.JSONDecodeError:
        return observation, info["invalid_action"]


def open_target(env: SheetEnv) -> list[list]:
    act(env, "open_sheet", name=env._state.target.upper())
    values, _ = act(env, "get_all_values")
    return values


def test_a_sheet_must_be_opened(env: SheetEnv) -> None:
    result, invalid = act(env, "get_all_values")
    assert invalid and "no sheet is open" in result
    result, invalid = act(env, "open_sheet", name="Nope")
    assert invalid and "there is no sheet named 'Nope'; the sheets are" in result
    sheets, _ = act(env, "list_sheets")
    assert env._state.target in sheets and len(sheets) == 3
    assert open_target(env) == env._state.initial[env._state.target]


def test_cell_and_range_edits(env: SheetEnv) -> None:
    values = open_target(env)
    height, width = len(values), len(values[0])
    values, invalid = act(env, "update_cell", position="B2", value="12.5")
    assert not invalid and values[1][1] == 12.5
    values, _ = act(env, "update_cell", position="A1", value="=SUM(B2, 1)")
    assert values[0][0] == 13.5
    result, invalid = act(
        env, "update_range", start_position="A2", end_position="B3", values_list=[["x"]]
    )
    assert invalid and "is 2 rows x 2 columns, but values_list has 1 rows" in result
    values, invalid = act(env, "update_range", start_position="A2", end_position="B3",
                          values_list=[["x", 1], ["y", "=2*3"]])  # fmt: skip
    assert not invalid and [values[1][:2], values[2][:2]] == [["x", 1], ["y", 6]]
    values, _ = act(env, "insert_rows", values_list=[["new"]], row_idx=height + 1)
    assert values[-1][0] == "new" and len(values) == height + 1
    values, _ = act(env, "insert_cols", values_list=[["C0", "c1"]], col_idx=1)
    assert values[0][0] == "C0" and values[1][0] == "c1" and len(values[0]) == width + 1
    values, _ = act(env, "delete_batch_data", dimension="col", index_list=[1])
    assert len(values[0]) == width
    values, _ = act(env, "delete_batch_data", dimension="row", index_list=[2, 3])
    assert len(values) == height - 1
    result, invalid = act(env, "delete_batch_data", dimension="row", index_list=[99])
    assert invalid and "between 1 and" in result
    assert act(env, "get_A1_annotation", row=3, col=26) == ("Z3", False)
    assert act(env, "get_A1_annotation", row=3, col=27)[1]


def test_sorting_keeps_only_frozen_rows_in_place(env: SheetEnv) -> None:
    values = open_target(env)
    header = values[0]
    unfrozen, _ = act(env, "sort_sheet_by_col", col_num=1, order="asc")
    assert header in unfrozen  # AgentGym's semantics: without freezing, the header is sorted too
    env.reset(options={"task_id": "train/00001"})
    open_target(env)
    act(env, "freeze_data", dimension="rows", num=1)
    result, _ = act(env, "sort_sheet_by_col", col_num=1, order="DESC")
    assert result[0] == header
    keys = [row[0] for row in result[1:]]
    assert keys == sorted(keys, key=str.casefold, reverse=True)


def test_formula_tools(env: SheetEnv) -> None:
    values = open_target(env)
    column = next(c for c in range(len(values[0])) if isinstance(values[1][c], (int, float)))
    letter = column_letters(column + 1)
    numbers = [row[column] for row in values[1:]]
    total, invalid = act(env, "get_value_by_formula", operator="SUM", start_position=f"{letter}2",
                         end_position=f"{letter}{len(values)}")  # fmt: skip
    assert not invalid and total == pytest.approx(sum(numbers))
    result, invalid = act(env, "get_value_by_formula", operator="MAX")
    assert invalid and "either position_list or both start_position and end_position" in result
    cells = [f"{letter}2", f"{letter}3"]
    values, _ = act(env, "update_cell_by_formula", operator="MAX", position_list=cells,
                    result_position="H1")  # fmt: skip
    assert values[0][7] == max(numbers[:2])
    found, _ = act(env, "filter_cells", query=values[1][0])
    assert "A2" in found


def test_reward_is_the_fraction_of_matching_cells() -> None:
    env = gym.make("llmgym/Sheet-v0").unwrapped
    env.reset(options={"task_id": "eval/00000"})
    expected = env._episode.goal_state[env._state.target]
    good, total = cell_fraction(env._state.initial[env._state.target], expected)
    _, reward, terminated, _, info = env.step("Action: finish with Action Input: {}")
    assert terminated and not info["success"]
    assert reward == pytest.approx(good / total) and 0 < reward < 1
    binary = gym.make("llmgym/Sheet-v0", partial_credit=False).unwrapped
    binary.reset(options={"task_id": "eval/00000"})
    assert binary.step("Action: finish with Action Input: {}")[1] == 0.0


def test_changing_another_sheet_costs_success() -> None:
    env = gym.make("llmgym/Sheet-v0").unwrapped
    env.reset(options={"task_id": "eval/00003"})
    plan = env._episode.plan
    for _ in plan[:-1]:
        env.step(env.oracle_action())
    other = next(name for name in env._state.sheets if name != env._state.target)
    act(env, "open_sheet", name=other)
    act(env, "update_cell", position="A1", value="oops")
    _, reward, _, _, info = env.step("Action: finish with Action Input: {}")
    assert not info["success"] and reward < 1


def test_eval_sheets_have_eval_names() -> None:
    from llmgym.envs.tools.sheet.workbook import sheet_places

    env = gym.make("llmgym/Sheet-v0").unwrapped
    train_places = set(sheet_places("train"))
    for index in range(30):
        env.reset(options={"task_id": f"eval/{index:05d}"})
        for name in env._state.sheets:
            assert name.split(" ", 1)[1] not in train_places


def test_the_formula_work_of_one_call_is_bounded(env: SheetEnv) -> None:
    """A 17 KB call of 34 long formulas took 14 s and a sheet of 5,200 whole-sheet sums a
    minute; now a call's formulas share one budget of tokens and cells read."""
    values = open_target(env)
    long_formula = "=" + "+".join(["SUM(A1:Z200)"] * 38)  # 500 characters
    whole_sheet = [["=SUM(A1:Z200)"] * 26 for _ in range(200)]
    for end, values_list in (("B17", [[long_formula] * 2] * 17), ("Z200", whole_sheet)):
        watch = Stopwatch()
        result, invalid = act(
            env, "update_range", start_position="A1", end_position=end, values_list=values_list
        )
        assert watch.cpu < 1.0
        assert invalid and f"at most {MAX_FORMULA_WORK:,} tokens and cells" in result
        assert act(env, "get_all_values")[0] == values  # nothing changed
    result, invalid = act(  # within the budget: 19 sums of the whole sheet
        env, "update_range", start_position="H1", end_position="H19",
        values_list=[["=SUM(A1:G200)"]] * 19,
    )  # fmt: skip
    assert not invalid and result[18][7] == result[0][7]


def test_a_budget_is_shared_by_the_formulas_it_is_given() -> None:
    budget = FormulaBudget(17)
    assert evaluate_formula("=SUM(B2:C4)", GRID, budget) == 26.75  # 3 tokens + 6 cells
    assert budget.left == 8
    with pytest.raises(ToolError, match="tokens and cells in all"):
        evaluate_formula("=SUM(B2:C4)", GRID, budget)
