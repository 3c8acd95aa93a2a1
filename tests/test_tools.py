"""The shared machinery of the tool-use environments: call parsing (ReAct and JSON function
calls), argument validation and its feedback, tool schemas, answer checking and the episode loop
(exercised through the Weather environment)."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from datetime import date
from typing import Literal

import gymnasium as gym
import numpy as np
import pytest

import llmgym
from llmgym.envs.tools import (
    AGENTGYM_FORMAT_ERROR,
    Answer,
    ArgType,
    CurrentDate,
    ToolCall,
    ToolEnv,
    Toolkit,
    answers_match,
    call,
    format_call,
    format_react,
    parse_tool_call,
    tool,
)
from llmgym.envs.tools.answers import holds_answer
from llmgym.envs.tools.weather import WeatherEnv, cities
from llmgym.envs.tools.weather.toolkit import Places, WeatherQueries, WeatherState
from llmgym.errors import ToolError
from llmgym.testing import check_conformance

TOOL_ENVS = ["llmgym/Weather-v0", "llmgym/Movie-v0", "llmgym/Academia-v0", "llmgym/Sheet-v0",
             "llmgym/Todo-v0"]  # fmt: skip


# ------------------------------------------------------------------------------ parsing
@pytest.mark.parametrize(
    ("text", "name", "arguments", "form"),
    [
        ('Action: get_elevation with Action Input: {"latitude": 1.5, "longitude": 2}',
         "get_elevation", {"latitude": 1.5, "longitude": 2}, "react"),
        ('Thought: I need the date.\n\nAction: get_user_current_date with Action Input: {}',
         "get_user_current_date", {}, "react"),
        ("Action: get_user_current_date", "get_user_current_date", {}, "react"),
        ("Action: `get_user_current_date()`", "get_user_current_date", {}, "react"),
        ('get_tasks with Action Input: {"project_id": "pr1"}', "get_tasks",
         {"project_id": "pr1"}, "react"),
        ("get_projects", "get_projects", {}, "react"),
        ('Action: get_tasks\nAction Input: {"project_id": "pr1"}', "get_tasks",
         {"project_id": "pr1"}, "react"),
        ('action: finish with action input: {"answer": 3}\nObservation: 3', "finish",
         {"answer": 3}, "react"),
        ('Action: finish with Action Input: ```json\n{"answer": "yes"}\n```', "finish",
         {"answer": "yes"}, "react"),
        ('{"name": "get_projects", "arguments": {}}', "get_projects", {}, "json"),
        ('{"name": "get_tasks", "arguments": "{\\"project_id\\": \\"pr1\\"}"}', "get_tasks",
         {"project_id": "pr1"}, "json"),
        ('{"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", '
         '"arguments": "{\\"x\\": 1}"}}]}', "f", {"x": 1}, "json"),
        ('{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}', "f",
         {"x": 1}, "json"),
        ('[{"name": "f", "parameters": {"x": 1}}]', "f", {"x": 1}, "json"),
        ('{"thought": "t", "function_name": "f", "arguments": {"x": [1, 2]}}', "f",
         {"x": [1, 2]}, "json"),
        ('Here is my call:\n```json\n{"name": "f", "arguments": {}}\n```', "f", {}, "json"),
        ('Action: {"name": "f", "arguments": {"x": 1}}', "f", {"x": 1}, "json"),
    ],
)  # fmt: skip
def test_both_call_forms_parse(text: str, name: str, arguments: dict, form: str) -> None:
    assert parse_tool_call(text) == ToolCall(name, arguments, form)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "No tool call found"),
        ("I think the answer is 4.", "No tool call found"),
        ("Thought: hmm\nAction:", "not followed by a tool call"),
        ("Action: a with Action Input: {}\nAction: b with Action Input: {}", "one action per turn"),
        ("Action: f with Action Input: {'a': 1}", "double-quoted keys"),
        ('Action: f with Action Input: {"a": NaN}', "NaN is not a valid JSON number"),
        ('Action: f with Action Input: {"a": 1} please', "Unexpected text after"),
        ("Action: two words with Action Input: {}", "is not a tool name"),
        ('{"action": "noop", "arguments": {"x": 1}}', 'needs a "name"'),
        ('[{"name": "a"}, {"name": "b"}]', "exactly one function call"),
        ('{"tool_calls": []}', "exactly one tool call"),
        ('{"name": "f", "arguments": "{oops"}', '"arguments" string of f is not valid JSON'),
        ("[" * 20_000 + "]" * 20_000, "nested too deeply"),
        ("x" * 200_000, "too long"),
    ],
)
def test_unparseable_replies_get_a_reason(text: str, says: str) -> None:
    result = parse_tool_call(text)
    assert isinstance(result, str) and says in result, result


def test_parsing_never_evaluates_code() -> None:
    marker = "llmgym_eval_marker"
    hostile = f'Action: f with Action Input: __import__("builtins").setattr(None, "{marker}", 1)'
    assert isinstance(parse_tool_call(hostile), str)
    assert isinstance(parse_tool_call('Action: f with Action Input: {"a": 1 + 1}'), str)


def test_formatted_calls_round_trip() -> None:
    call = ToolCall("update_cell", {"position": "B2", "value": "Zoë"})
    assert parse_tool_call(format_react(call)) == call
    assert parse_tool_call(format_call(call)) == call
    assert format_react(call) == f"Action: {format_call(call)}"


# ------------------------------------------------------------------------------ argument types
def test_types_come_from_annotations() -> None:
    assert ArgType.from_annotation(float) == (ArgType("number"), False)
    assert ArgType.from_annotation(int | None) == (ArgType("integer"), True)
    assert ArgType.from_annotation(Literal["asc", "desc"])[0].enum == ("asc", "desc")
    nested, _ = ArgType.from_annotation(list[list[str | float]])
    assert nested.name == "array[array[string | number]]"
    assert nested.schema() == {
        "type": "array",
        "items": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
    }


def test_coercion_is_strict_but_not_pedantic() -> None:
    integer, number = ArgType("integer"), ArgType("number")
    assert integer.coerce(3.0) == 3 and isinstance(integer.coerce(3.0), int)
    assert number.coerce(3) == 3
    assert ArgType("string", enum=("asc", "desc")).coerce("DESC") == "desc"
    for bad_type, value in ((integer, 3.5), (integer, "3"), (number, True), (number, "1.5"),
                            (ArgType("string"), 7), (ArgType("boolean"), "true")):  # fmt: skip
        with pytest.raises(ValueError):
            bad_type.coerce(value)
    with pytest.raises(ValueError, match="item 1 must be an integer, got string"):
        ArgType("array", items=integer).coerce([1, "2"])


def test_feedback_names_tool_argument_and_type() -> None:
    tool_ = WeatherEnv.tools["get_historical_temp"]
    _, problems = tool_.bind({"latitude": "31.2", "longitude": 121.4, "start_date": "2021-01-01"})
    assert problems == [
        "get_historical_temp: argument 'latitude' must be a number, got string \"31.2\".",
        "get_historical_temp: missing required argument 'end_date' (string): The last day "
        "(YYYY-MM-DD), at most 92 days after start_date.",
    ]
    _, problems = WeatherEnv.tools["get_elevation"].bind({"lat": 1, "latitude": 1, "longitude": 2})
    assert problems == [
        'get_elevation: unknown argument "lat"; it takes latitude (number), longitude (number).'
    ]
    _, problems = WeatherEnv.tools["get_elevation"].bind([1, 2])
    assert "must be a JSON object of arguments, got array of 2 items" in problems[0]


def test_optional_arguments_take_their_defaults() -> None:
    from llmgym.envs.tools.todo import TodoEnv

    bound, problems = TodoEnv.tools["create_task"].bind({"project_id": "p", "content": "c"})
    assert not problems
    assert bound == {
        "project_id": "p",
        "content": "c",
        "due_date": None,
        "priority": 1,
        "description": "",
        "duration": None,
    }


def test_tool_declarations_are_checked_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match="parameter 'x' has no description"):

        class Undocumented(Toolkit):
            @tool
            def f(self, x: int) -> int:
                """A tool."""
                return x

    with pytest.raises(TypeError, match="descriptions for unknown parameters"):

        class Misdocumented(Toolkit):
            @tool
            def f(self, x: int) -> int:
                """A tool.

                Args:
                    x: A number.
                    y: Another number.
                """
                return x


def test_tools_are_described_by_their_docstrings() -> None:
    class Adder(Toolkit):
        @tool
        def add(self, x: int, y: int = 1) -> int:
            """Add two numbers
            (a wrapped description).

            Args:
                x: The first number.
                y: The second number, a description that goes on
                    over two lines.

            Returns:
                The sum.
            """
            return x + y

    class Documented(ToolEnv):
        toolkits = (Adder,)

    added = Documented.tools["add"]
    assert Adder.tools == {"add": added}
    assert added.description == "Add two numbers (a wrapped description)."
    assert [(p.name, p.description, p.required) for p in added.params] == [
        ("x", "The first number.", True),
        ("y", "The second number, a description that goes on over two lines.", False),
    ]
    assert added.returns == "The sum."
    assert list(Documented.tools) == ["add", "check_valid_actions", "finish"]


# ------------------------------------------------------------------------------ toolkits
def test_a_toolkit_lists_and_calls_its_tools_by_name() -> None:
    oslo = next(c for c in cities() if c.name == "Oslo")
    places = Places(WeatherState(date(2022, 3, 14), oslo))
    assert list(Places.tools) == [
        "get_user_current_location",
        "get_latitude_longitude",
        "get_elevation",
        "get_distance",
    ]
    assert [s["function"]["name"] for s in Places.schemas()] == list(Places.tools)
    assert places.call("get_user_current_location", {}) == "Oslo"
    where = {"latitude": oslo.latitude, "longitude": oslo.longitude}
    assert places.call("get_elevation", where)["elevation"] == oslo.elevation
    assert CurrentDate(places.state).call("get_user_current_date", {}) == "2022-03-14"


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("get_weather", {}, "unknown tool 'get_weather'; the tools are get_user_current_location"),
        ("get_elevation", {"latitude": 1}, "get_elevation: missing required argument 'longitude'"),
        ("get_elevation", [1, 2], "must be a JSON object of arguments, got array of 2 items"),
        ("get_latitude_longitude", {"name": "Atlantis"}, "no place named 'Atlantis'"),
    ],
)
def test_a_toolkit_call_says_what_is_wrong(name: str, arguments: object, says: str) -> None:
    places = Places(WeatherState(date(2022, 3, 14), cities()[0]))
    with pytest.raises(ToolError, match=re.escape(says)):
        places.call(name, arguments)


def test_a_toolkit_call_gives_what_the_environment_shows(weather: WeatherEnv) -> None:
    oslo = next(c for c in cities() if c.name == "Oslo")
    today = weather._state.today.isoformat()
    arguments = {"latitude": oslo.latitude, "longitude": oslo.longitude, "current_date": today}
    observation, *_ = weather.step(json.dumps({"name": "get_current_temp", "arguments": arguments}))
    direct = WeatherQueries(weather._state).call("get_current_temp", arguments)
    assert json.loads(observation) == direct


def test_an_environment_lists_its_toolkits_tools_in_order() -> None:
    toolkits = (CurrentDate, Places, WeatherQueries)
    assert WeatherEnv.toolkits == toolkits
    declared = [name for kit in toolkits for name in kit.tools]
    assert list(WeatherEnv.tools) == [*declared, "check_valid_actions", "finish"]
    schemas = [schema for kit in toolkits for schema in kit.schemas()]
    assert WeatherEnv.tool_schemas()[: len(declared)] == schemas


def test_a_tool_name_belongs_to_one_toolkit() -> None:
    with pytest.raises(TypeError, match="more than one tool is named 'get_user_current_date'"):

        class Twice(ToolEnv):
            toolkits = (CurrentDate, CurrentDate)


# ------------------------------------------------------------------------------ schemas, rules
@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_every_tool_is_described_in_the_rules_and_schemas(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    rules = env.rules()
    schemas = env.tool_schemas()
    json.dumps(schemas)
    assert [s["function"]["name"] for s in schemas] == list(env.tools)
    for spec in env.tools.values():
        assert f"Name: {spec.signature}" in rules
        for param in spec.params:
            assert f"- {param.name} (Type: {param.type.name}" in rules
    assert "check_valid_actions" in env.tools and "finish" in env.tools
    assert "Action: TOOL with Action Input:" in rules


def test_check_valid_actions_lists_the_tools() -> None:
    env = gym.make("llmgym/Movie-v0").unwrapped
    env.reset(seed=1)
    observation, *_ = env.step("Action: check_valid_actions with Action Input: {}")
    assert json.loads(observation) == list(env.tools)


# ------------------------------------------------------------------------------ the episode loop
@pytest.fixture
def weather() -> WeatherEnv:
    env = gym.make("llmgym/Weather-v0").unwrapped
    env.reset(options={"task_id": "eval/00002"})
    return env


def test_invalid_calls_change_nothing_and_say_why(weather: WeatherEnv) -> None:
    observation, reward, terminated, _, info = weather.step(
        'Action: get_weather with Action Input: {"city": "Oslo"}'
    )
    assert info["invalid_action"] and not terminated and reward == 0
    assert observation.startswith('Unknown tool "get_weather". The tools are: ')
    observation, *_, info = weather.step('{"name": "get_elevation", "arguments": {"latitude": 1}}')
    assert info["invalid_action"]
    assert "get_elevation: missing required argument 'longitude' (number)" in observation
    assert "Call it as: Action: get_elevation with Action Input:" in observation
    observation, *_, info = weather.step(
        'Action: get_latitude_longitude with Action Input: {"name": "Atlantis"}'
    )
    assert info["invalid_action"] and "no place named 'Atlantis'" in observation
    # nothing moved: the oracle still plays its first step
    assert weather.oracle_action() == format_call(weather._episode.plan[0])


def test_valid_calls_report_the_call_in_info(weather: WeatherEnv) -> None:
    oslo = next(c for c in cities() if c.name == "Oslo")
    observation, _, _, _, info = weather.step(
        f'{{"name": "get_elevation", "arguments": {{"latitude": {oslo.latitude}, '
        f'"longitude": {oslo.longitude}}}}}'
    )
    assert not info["invalid_action"]
    assert info["tool_call"] == {
        "name": "get_elevation",
        "arguments": {"latitude": oslo.latitude, "longitude": oslo.longitude},
    }
    assert json.loads(observation)["elevation"] == oslo.elevation


def test_the_action_format_knob_restricts_call_forms() -> None:
    env = gym.make("llmgym/Weather-v0", action_format="json").unwrapped
    env.reset(seed=0)
    observation, *_, info = env.step("Action: get_user_current_date with Action Input: {}")
    assert info["invalid_action"] and "only in the form" in observation
    observation, *_, info = env.step('{"name": "get_user_current_date", "arguments": {}}')
    assert not info["invalid_action"]


def test_finish_scores_the_answer_and_ends_the_episode() -> None:
    env = gym.make("llmgym/Weather-v0").unwrapped
    env.reset(options={"task_id": "eval/00002"})
    truth = env._episode.answer
    assert truth is not None and truth.kind == "number"
    wrong = float(truth.value) + 5
    _, reward, terminated, _, info = env.step(
        f'Action: finish with Action Input: {{"answer": {wrong}}}'
    )
    assert terminated and reward == 0.0 and not info["success"]
    assert info["expected_answer"] == truth.shown()
    env.reset(options={"task_id": "eval/00002"})
    _, reward, terminated, _, info = env.step(
        f'Action: finish with Action Input: {{"answer": "{truth.value} °C"}}'
    )
    assert terminated and reward == 1.0 and info["success"]


def test_finish_needs_an_answer_for_questions() -> None:
    env = gym.make("llmgym/Movie-v0").unwrapped
    env.reset(seed=3)
    observation, _, terminated, _, info = env.step("Action: finish with Action Input: {}")
    assert info["invalid_action"] and not terminated
    assert "missing required argument 'answer'" in observation


# ------------------------------------------------------------------------------ answers
@pytest.mark.parametrize(
    ("given", "answer", "expected"),
    [
        (12.34, Answer(12.3, "number"), True),
        ("12.5 °C", Answer(12.5, "number"), True),
        ("about 1,234,000 dollars", Answer(1_234_000, "number"), True),
        ([7], Answer(7, "number"), True),
        (12.5, Answer(12.3, "number"), False),
        ("between 3 and 4", Answer(3, "number"), False),
        (True, Answer(1, "number"), False),
        ("Yes.", Answer("yes", "text"), True),
        (True, Answer("yes", "text"), True),
        ("são paulo", Answer("Sao Paulo", "text"), True),
        ("Lisbon, Portugal", Answer("Lisbon", "text", ("Lisbon, Portugal",)), True),
        ("Porto", Answer("Lisbon", "text", ("Lisbon, Portugal",)), False),
        ("It was on 2023-03-08.", Answer("2023-03-08", "date"), True),
        ("2023-03-09", Answer("2023-03-08", "date"), False),
        (["Drama", "action"], Answer(("Action", "Drama"), "list"), True),
        ("Action, Drama", Answer(("Action", "Drama"), "list"), True),
        ("Action and Drama", Answer(("Action", "Drama"), "list"), True),
        (["Action"], Answer(("Action", "Drama"), "list"), False),
        ({"a": 1}, Answer("a", "text"), False),
    ],
)
def test_answers_match(given: object, answer: Answer, expected: bool) -> None:
    assert answers_match(given, answer, 0.1, 0.01) is expected


def test_numbers_use_the_larger_of_both_tolerances() -> None:
    assert answers_match(1010, Answer(1000, "number"), 0.1, 0.01)
    assert not answers_match(1011, Answer(1000, "number"), 0.1, 0.01)
    assert answers_match(0.05, Answer(0.0, "number"), 0.1, 0.01)


# ------------------------------------------------------------------------------ the oracle
_FORGED = "a forged answer key"


def _oracle_episode(env: ToolEnv, task_id: str, forge_key: bool) -> tuple[list[str], bool]:
    """Play the oracle on ``task_id``; return its actions and whether it succeeded. With
    ``forge_key``, every stored truth the oracle could read (the goal's answer, a ``finish``
    call holding it, the goal state of an operation) is replaced by a forgery for the whole
    play, and put back only to judge ``finish``."""
    env.reset(options={"task_id": task_id})
    truth = env._episode
    if forge_key:
        forged_plan = [
            call("finish", answer=_FORGED)
            if isinstance(step, ToolCall) and step.name == "finish" and truth.answer is not None
            else step
            for step in truth.plan
        ]
        forged_answer = None if truth.answer is None else Answer(_FORGED, "text")
        forged_state = None if truth.goal_state is None else type(truth.goal_state)()
        env._episode = dataclasses.replace(
            truth, plan=forged_plan, answer=forged_answer, goal_state=forged_state
        )
    actions = []
    for _ in range(40):
        actions.append(env.oracle_action())
        if actions[-1].startswith("finish "):
            env._episode = truth
        *_, terminated, truncated, info = env.step(actions[-1])
        if terminated or truncated:
            return actions, bool(info["success"])
    return actions, False


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_the_oracle_reads_its_answer_off_the_tools_on_every_eval_task(env_id: str) -> None:
    """The oracle's answer comes from the results its tool calls returned: with the stored
    answer key forged, it plays the same actions and still solves every eval task."""
    env = gym.make(env_id).unwrapped
    for task_id in env.task_ids("eval"):
        actions, solved = _oracle_episode(env, task_id, forge_key=False)
        assert solved, f"{env_id} {task_id}: the oracle failed"
        forged_actions, solved = _oracle_episode(env, task_id, forge_key=True)
        assert forged_actions == actions, f"{env_id} {task_id}: the oracle read the answer key"
        assert solved, f"{env_id} {task_id}: the oracle failed with a forged key"


def test_tool_environments_are_registered() -> None:
    ids = {entry.id for entry in llmgym.ENVIRONMENTS}
    assert set(TOOL_ENVS) <= ids


def test_tool_environments_doc_example_runs_and_conforms(capsys, monkeypatch) -> None:
    import re
    import sys
    import types
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "docs" / "tool-environments.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.DOTALL)
    assert len(blocks) == 2
    module = types.ModuleType("tool_environments_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for block in blocks:
        exec(compile(block, str(doc), "exec"), module.__dict__)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "get_capital: argument 'country' must be a string, got integer 7."
    assert printed[-1] == "{'oracle_success_rate': 1.0}"  # check_env's render check prints between


_EXTREMES = {
    "string": [
        "",
        " ",
        "x" * 5000,
        "Zoë 中文 \u202e",
        "2024-02-30",
        "=1/0",
        "ZZ9999",
        "9999-12-31",
    ],
    "integer": [0, -1, 10**18, 2**70],
    "number": [0.0, -1e308, 1e308, 1e-300, 91.0, -181],
    "boolean": [True, False],
}


def _extreme(arg_type: ArgType, rng: np.random.Generator) -> object:
    if arg_type.enum:
        return arg_type.enum[int(rng.integers(len(arg_type.enum)))]
    if arg_type.kind == "union":
        return _extreme(arg_type.options[int(rng.integers(len(arg_type.options)))], rng)
    if arg_type.kind == "array":
        size = int(rng.choice([0, 1, 3, 300]))
        items = arg_type.items or ArgType("string")
        return [_extreme(items, rng) for _ in range(size)]
    pool = _EXTREMES.get(arg_type.kind, ["x"])
    return pool[int(rng.integers(len(pool)))]


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_well_typed_calls_with_extreme_values_never_raise(env_id: str) -> None:
    """Tools must turn every well-typed but odd argument into feedback, never an exception."""
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    tools = [t for t in env.tools.values() if t.name != "finish"]
    for _ in range(400):
        selected = tools[int(rng.integers(len(tools)))]
        arguments = {}
        for param in selected.params:
            if param.required or rng.random() < 0.5:
                realistic = rng.random() < 0.5
                arguments[param.name] = (
                    env._sample_value(param, rng) if realistic else _extreme(param.type, rng)
                )
        call_text = json.dumps({"name": selected.name, "arguments": arguments})
        observation, _, terminated, truncated, info = env.step(call_text)
        assert env.observation_space.contains(observation)
        assert isinstance(info["invalid_action"], bool)
        if terminated or truncated:
            env.reset()


_UNUSABLE_NUMBERS = {  # JSON text -> what the feedback names
    "1e309": "inf",
    "-1e309": "-inf",
    "1" + "0" * 400: "an integer of 401 digits",
    "-" + "9" * 320: "an integer of 320 digits",
    "[1, [2, 1e999]]": "inf",
    '{"deep": [[' + "7" * 400 + "]]}": "an integer of 400 digits",
}


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_unusable_numbers_anywhere_in_arguments_are_feedback(env_id: str) -> None:
    """Huge or non-finite numbers used to raise OverflowError (Movie's and Academia's finish,
    Weather's latitude, Sheet's values); now every argument of every tool refuses them."""
    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for selected in env.tools.values():
        for param in selected.params:
            for number, named in _UNUSABLE_NUMBERS.items():
                fields = [
                    f"{json.dumps(other.name)}: {json.dumps(env._sample_value(other, rng))}"
                    for other in selected.params
                    if other.required and other is not param
                ]
                text = "{" + ", ".join([*fields, f'"{param.name}": {number}']) + "}"
                for action in (
                    f"Action: {selected.name} with Action Input: {text}",
                    f'{{"name": "{selected.name}", "arguments": {text}}}',
                ):
                    observation, _, terminated, _, info = env.step(action)
                    assert info["invalid_action"] and not terminated, (action[:80], observation)
                    assert f"argument '{param.name}' holds {named}" in observation, observation
    for accepted in ("-0", "-0.0", "1e308", str(2**1000)):  # numbers in range still work
        finish = f'{{"name": "finish", "arguments": {{"answer": {accepted}}}}}'
        _, _, terminated, _, info = env.step(finish)
        assert not info["invalid_action"] and terminated
        env.reset(seed=0)


# ------------------------------------------------------------------------------ AgentGym variant
def _play_oracle(env: ToolEnv, task_id: str) -> list[tuple[float, dict]]:
    env.reset(options={"task_id": task_id})
    steps = []
    while True:
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        steps.append((reward, info))
        if terminated or truncated:
            return steps


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_agentgym_prompt_style_wraps_every_observation(env_id: str) -> None:
    env = gym.make(env_id, prompt_style="agentgym").unwrapped
    observation, info = env.reset(options={"task_id": "eval/00005"})
    assert observation == (
        "Now new trial starts.\nYou should perform actions to accomplish the goal: "
        f"{info['instruction']}\nGive me one action."
    )
    observation, *_ = env.step(env.oracle_action())
    assert observation.startswith("Observation: ") and observation.endswith("\nGive me one action.")
    observation, *_, info = env.step("I think I should look something up.")
    assert info["invalid_action"] and observation == AGENTGYM_FORMAT_ERROR
    assert AGENTGYM_FORMAT_ERROR.startswith('Format error, please response in the format of  "')
    observation, *_, info = env.step('Action: no_such_tool with Action Input: {"a": 1}')
    assert info["invalid_action"] and "Unknown tool" in observation


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_defaults_keep_the_finish_reward_and_llmgym_wording(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    observation, _ = env.reset(options={"task_id": "eval/00005"})
    assert observation.startswith("Goal: ") and "Available tools: " in observation
    steps = _play_oracle(env, "eval/00005")
    assert all("progress" not in info for _, info in steps)
    assert [reward for reward, _ in steps[:-1]] == [0.0] * (len(steps) - 1)


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_progress_rate_rises_to_one_on_the_oracle_path(env_id: str) -> None:
    env = gym.make(env_id, reward="progress").unwrapped
    for index in range(8):
        steps = _play_oracle(env, f"eval/{index:05d}")
        rates = [info["progress"] for _, info in steps]
        assert rates == sorted(rates) and rates[-1] == 1.0 and steps[-1][1]["success"]
        assert all(reward >= 0 for reward, _ in steps)
        assert sum(reward for reward, _ in steps) == pytest.approx(1.0)


def test_movie_and_academia_report_the_subgoal_rate_as_it_is() -> None:
    for env_id in ("llmgym/Movie-v0", "llmgym/Academia-v0"):
        env = gym.make(env_id, reward="progress").unwrapped
        task_id = next(
            f"eval/{i:05d}"
            for i in range(50)
            if env.reset(options={"task_id": f"eval/{i:05d}"}) and len(env._progress.subgoals) >= 3
        )
        steps = _play_oracle(env, task_id)
        assert steps[0][1]["progress"] == pytest.approx(1 / len(env._progress.subgoals))


def test_weather_counts_any_progress_as_one() -> None:
    env = gym.make("llmgym/Weather-v0", reward="progress").unwrapped
    env.reset(options={"task_id": "eval/00003"})
    assert len(env._progress.subgoals) > 1
    _, reward, *_, info = env.step(env.oracle_action())
    assert reward == 1.0 and info["progress"] == 1.0


def test_todo_progress_needs_every_subgoal_and_the_goal_state() -> None:
    env = gym.make("llmgym/Todo-v0", reward="progress").unwrapped
    operation = next(
        f"eval/{i:05d}"
        for i in range(50)
        if env.reset(options={"task_id": f"eval/{i:05d}"}) and env._episode.goal_state is not None
    )
    steps = _play_oracle(env, operation)
    rates = [info["progress"] for _, info in steps]
    assert rates[0] == 0.0 and rates[-1] == 1.0 and set(rates) == {0.0, 1.0}
    question = next(
        f"eval/{i:05d}"
        for i in range(50)
        if env.reset(options={"task_id": f"eval/{i:05d}"}) and env._episode.goal_state is None
    )
    env.reset(options={"task_id": question})
    env._state.tasks[0]["is_completed"] = not env._state.tasks[0][
        "is_completed"
    ]  # the list was changed
    plan_steps = len(env._episode.plan)
    for _ in range(plan_steps):
        *_, terminated, _, info = env.step(env.oracle_action())
    assert terminated and info["progress"] == 0.0


def test_sheet_progress_is_the_cell_match_fraction() -> None:
    env = gym.make("llmgym/Sheet-v0", reward="progress", partial_credit=False).unwrapped
    env.reset(options={"task_id": "eval/00002"})
    fraction, success = env._cell_match()
    assert 0 < fraction < 1 and not success
    _, reward, *_, info = env.step(env.oracle_action())
    assert reward == info["progress"] == pytest.approx(fraction)
    steps = _play_oracle(env, "eval/00002")
    assert steps[-1][1]["progress"] == 1.0


def test_a_tool_result_holding_the_answer_meets_the_answer_subgoal() -> None:
    answer = Answer(12.5, "number")
    assert holds_answer({"daily": {"rain_sum": [0.0, 12.5]}}, answer, 0.01, 0.01)
    assert not holds_answer({"daily": {"rain_sum": [0.0, 13.5]}}, answer, 0.01, 0.01)
    names = Answer(("Ada", "Bo"), "list")
    assert holds_answer({"results": [{"authors": ["Bo", "Ada"]}]}, names, 0.01, 0.01)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"reward": "rate"}, "WeatherConfig.reward.*'finish', 'progress'"),
        ({"prompt_style": "agentbench"}, "WeatherConfig.prompt_style.*'llmgym', 'agentgym'"),
    ],
)
def test_variant_options_are_validated(config: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gym.make("llmgym/Weather-v0", **config)


@pytest.mark.parametrize("env_id", TOOL_ENVS)
def test_the_agentgym_variant_conforms(env_id: str) -> None:
    make = functools.partial(gym.make, env_id, reward="progress", prompt_style="agentgym")
    assert (
        check_conformance(make, oracle_episodes=20, hostile_count=100)["oracle_success_rate"] == 1.0
    )
