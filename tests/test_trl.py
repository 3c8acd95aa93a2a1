"""llmgym.integrations.trl: TRL environment classes, task datasets, GRPO end to end."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from llmgym.envs.tools import parse_tool_call
from llmgym.integrations.trl import (
    LlmgymTRLEnv,
    environment_factories,
    environment_factory,
    mixed_task_dataset,
    task_dataset,
)
from llmgym.wrappers import HorizonCurriculum
from tests.extras import need

transformers_utils = need("transformers.utils")
get_json_schema = transformers_utils.get_json_schema

TOOL_ENVS = ["Weather", "Movie", "Academia", "Sheet", "Todo"]


def tools_of(environment: LlmgymTRLEnv) -> dict[str, Any]:
    """The tools TRL's GRPOTrainer finds on an environment (its discovery rule)."""
    return {
        name: getattr(environment, name)
        for name, _ in inspect.getmembers(type(environment), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


def test_text_environment_plays_through_act() -> None:
    wordle = environment_factory("llmgym/Wordle-v0")()
    assert type(wordle).__name__ == "WordleEnv"
    assert list(tools_of(wordle)) == ["act"]
    schema = get_json_schema(wordle.act)["function"]
    assert schema["parameters"]["required"] == ["action"]
    assert schema["parameters"]["properties"]["action"]["type"] == "string"

    first = wordle.reset(task_id="train/00003", split="train", config="", prompt=[], extra=1)
    local = gym.make("llmgym/Wordle-v0")
    observation, info = local.reset(options={"task_id": "train/00003"})
    assert info["instruction"] in first and observation in first

    assert "[Invalid action: nothing changed.]" in wordle.act("zzzzz")
    while not wordle.done:
        text = wordle.act(wordle.env.unwrapped.oracle_action())
    assert "[Episode over: solved. Return: 1.]" in text
    assert wordle.get_reward() == 1.0 and wordle.success
    assert "episode is over" in wordle.act("crane")
    assert wordle.get_reward() == 1.0

    wordle.reset(task_id="train/00004")
    assert wordle.get_reward() == 0.0 and not wordle.done


@pytest.mark.parametrize("name", TOOL_ENVS)
def test_tool_environment_exposes_its_tools(name: str) -> None:
    environment = environment_factory(f"llmgym/{name}-v0")()
    environment.reset(task_id="train/00001")
    expected = {
        s["function"]["name"]: s["function"] for s in environment.env.unwrapped.tool_schemas()
    }
    tools = tools_of(environment)
    assert set(tools) == set(expected)
    for tool_name, method in tools.items():
        schema = get_json_schema(method)["function"]
        want = expected[tool_name]
        assert schema["description"] == " ".join(want["description"].split())
        parameters = schema["parameters"]
        assert sorted(parameters.get("required", [])) == sorted(want["parameters"]["required"])
        assert set(parameters["properties"]) == set(want["parameters"]["properties"])
        for param, wanted in want["parameters"]["properties"].items():
            got = parameters["properties"][param]
            if "type" in wanted and isinstance(wanted["type"], str):
                assert got["type"] == wanted["type"], (tool_name, param)
            if "enum" in wanted:
                assert got["enum"] == wanted["enum"]


@pytest.mark.parametrize("name", TOOL_ENVS)
def test_oracle_calls_through_the_tools_solve_the_task(name: str) -> None:
    environment = environment_factory(f"llmgym/{name}-v0")()
    environment.reset(task_id="train/00002")
    tools = tools_of(environment)
    while not environment.done:
        call = parse_tool_call(environment.env.unwrapped.oracle_action())
        assert not isinstance(call, str)
        text = tools[call.name](**call.arguments)
    assert "[Episode over: solved" in text
    assert environment.get_reward() == 1.0


def test_bad_tool_call_is_an_observation() -> None:
    weather = environment_factory("llmgym/Weather-v0")()
    weather.reset(task_id="train/00000")
    text = weather.get_elevation(latitude=1000.0, longitude="x")
    assert "[Invalid action: nothing changed.]" in text and not weather.done


def test_curriculum_truncates_with_a_note() -> None:
    curriculum = HorizonCurriculum([(0, 1), (5, 6)])
    wordle = environment_factory("llmgym/Wordle-v0", curriculum=curriculum)()
    wordle.reset(task_id="train/00000")
    assert wordle.info["horizon"]["limit"] == 1
    text = wordle.act("crane")
    assert "the curriculum's limit of 1 turns was reached" in text and wordle.done
    curriculum.set_position(5)
    wordle.reset(task_id="train/00000")
    assert wordle.info["horizon"]["limit"] == 6


def test_task_dataset_rows_reset_their_task() -> None:
    need("datasets")
    rows = task_dataset("llmgym/Maze-v0", n=3, config={"width": 7})
    assert rows.column_names == ["prompt", "task_id", "split", "config"]
    assert (
        rows["task_id"] == list(gym.make("llmgym/Maze-v0", width=7).unwrapped.task_ids("train"))[:3]
    )
    assert (
        rows[0]["prompt"][0]["role"] == "user" and "`act` tool" in rows[0]["prompt"][0]["content"]
    )
    maze = environment_factory("llmgym/Maze-v0")()
    maze.reset(**rows[1])
    assert maze.info["task_id"] == rows[1]["task_id"]
    assert maze.env.unwrapped.task.config.width == 7
    assert json.loads(rows[1]["config"]) == {"width": 7}
    assert len(task_dataset("llmgym/Wordle-v0", split="eval")) == len(
        gym.make("llmgym/Wordle-v0").unwrapped.task_ids("eval")
    )


def test_tool_environment_prompt_asks_for_native_calls() -> None:
    need("datasets")
    prompt = task_dataset("llmgym/Weather-v0", n=1)[0]["prompt"][0]["content"]
    assert "finish" in prompt and "Action Input" not in prompt


def test_several_environments_mix() -> None:
    need("datasets")
    ids = ["llmgym/Wordle-v0", "llmgym/Weather-v0"]
    factories = environment_factories(ids)
    assert list(factories) == ["wordle", "weather"]
    rows = mixed_task_dataset(ids, n=2)
    assert sorted(rows["environment"]) == ["weather", "weather", "wordle", "wordle"]
    for row in rows:
        environment = factories[row["environment"]]()
        environment.reset(**{k: v for k, v in row.items() if k != "environment"})
        assert environment.info["task_id"] == row["task_id"]


@pytest.mark.slow
def test_grpo_tiny_runs_two_steps_on_a_text_and_a_tool_environment(tmp_path: Path) -> None:
    need("trl")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import trl_grpo

    out = tmp_path / "trl_grpo.json"
    assert trl_grpo.main(["--tiny", "--out", str(out)]) == 0
    results = json.loads(out.read_text())["environments"]
    assert [r["env_id"] for r in results] == ["llmgym/Wordle-v0", "llmgym/Weather-v0"]
    for result in results:
        assert result["reward_funcs"] == [result["reward_column"]]
        assert [s["step"] for s in result["steps"]] == [1, 2]
        for step in result["steps"]:
            assert step["reward"] == pytest.approx(0.5)  # oracle rollouts 1, random ones 0
            assert step["tool_call_rate"] > 0 and step["tool_failure_rate"] == 0
            assert step["grad_norm"] > 0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--num-generations", "1"], "argument --num-generations: 1 is outside the allowed range"),
        (["--num-generations", "3"], "--num-generations: 3 does not divide the batch of 2"),
        (["--steps", "0"], "argument --steps: 0 is outside the allowed range [1, inf)"),
    ],
)
def test_grpo_script_names_a_bad_knob_and_its_range(flags, message, capsys) -> None:
    need("trl")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import trl_grpo

    with pytest.raises(SystemExit):
        trl_grpo.parse_args(["--tiny", *flags])
    assert message in capsys.readouterr().err
