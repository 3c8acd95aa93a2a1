"""Rollouts: concurrency, determinism, vector environments, error capture, evaluation CLI with
an LLM served by a local chat-completions server."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

from llmgym.agents import Agent, OracleAgent, RandomAgent
from llmgym.cli import main
from llmgym.runner.evaluation import evaluate, wilson_interval
from llmgym.runner.rollout import rollout, rollout_vector
from llmgym.runner.trajectories import read_trajectories
from llmgym.wrappers import OracleHint, ReActWrapper
from tests.chat_server import ChatServer


def _summary(trajectories):
    return [
        (t.task_id, t.seed, t.success, t.total_reward, [turn.reply for turn in t.turns])
        for t in trajectories
    ]


def test_concurrency_does_not_change_results() -> None:
    serial = rollout(
        "llmgym/TextCraft-v0", RandomAgent(seed=5), episodes=12, concurrency=1, progress=False
    )
    parallel = rollout(
        "llmgym/TextCraft-v0", RandomAgent(seed=5), episodes=12, concurrency=4, progress=False
    )
    assert _summary(serial) == _summary(parallel)
    assert len({t.task_id for t in serial}) == 12


def test_task_ids_are_played_in_order_and_cycled() -> None:
    trajectories = rollout(
        "llmgym/Maze-v0",
        OracleAgent(),
        task_ids=["eval/00001", "eval/00002"],
        episodes=3,
        progress=False,
    )
    assert [t.task_id for t in trajectories] == ["eval/00001", "eval/00002", "eval/00001"]
    assert all(t.success for t in trajectories)


def test_evaluate_plays_each_given_task_once() -> None:
    task_ids = [f"eval/{i:05d}" for i in range(60)]  # more than the 50 drawn without task_ids
    result = evaluate("llmgym/Maze-v0", OracleAgent(), task_ids=task_ids, progress=False)
    assert [t.task_id for t in result.trajectories] == task_ids


class Crashing(Agent):
    name = "crashing"

    def act(self, observation, info):
        raise RuntimeError("boom")


def test_an_exception_is_recorded_not_raised() -> None:
    trajectories = rollout("llmgym/Maze-v0", Crashing(), episodes=2, concurrency=2, progress=False)
    assert [t.error for t in trajectories] == ["RuntimeError: boom"] * 2
    assert not any(t.success for t in trajectories)


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_sync_vector_env_all_autoreset_modes(mode) -> None:
    vec = SyncVectorEnv(
        [lambda: ReActWrapper(OracleHint(gym.make("llmgym/Wordle-v0"))) for _ in range(3)],
        autoreset_mode=mode,
    )
    trajectories = rollout_vector(vec, OracleAgent(), episodes=8, seed=0, progress=False)
    assert len(trajectories) == 8 and all(t.success for t in trajectories)
    for t in trajectories:
        # each episode starts from a fresh board and ends with the solving step
        assert t.turns[0].observation.startswith("Guess the hidden")
        assert t.turns[-1].reward == 1.0 and sum(turn.reward for turn in t.turns) == 1.0
    vec.close()


def test_async_vector_env_without_shared_memory() -> None:
    vec = AsyncVectorEnv(
        [lambda: ReActWrapper(OracleHint(gym.make("llmgym/Maze-v0"))) for _ in range(2)],
        shared_memory=False,
    )
    trajectories = rollout_vector(vec, OracleAgent(), episodes=4, seed=1, progress=False)
    vec.close()
    assert len(trajectories) == 4 and all(t.success for t in trajectories)


def test_wilson_interval() -> None:
    low, high = wilson_interval(8, 10)
    assert 0.49 < low < 0.5 and 0.94 < high < 0.95
    assert wilson_interval(0, 0) == (0.0, 0.0)


def _maze_model(messages):
    """A scripted "LLM": walk towards the goal using the last observation, ReAct-formatted."""
    text = messages[-1]["content"]
    found = re.findall(
        r"goal is at row (\d+), column (\d+)\. You are at row (\d+), column (\d+)\.(.*)", text
    )
    if not found:
        return "Thought: I lost track.\nAction: move up"
    gr, gc, r, c, walls = found[-1]
    options = []
    if int(gr) > int(r):
        options.append(("down", "below you"))
    if int(gr) < int(r):
        options.append(("up", "above you"))
    if int(gc) > int(c):
        options.append(("right", "to your right"))
    if int(gc) < int(c):
        options.append(("left", "to your left"))
    options += [
        ("down", "below you"),
        ("right", "to your right"),
        ("up", "above you"),
        ("left", "to your left"),
    ]
    move = next((m for m, phrase in options if phrase not in walls), "up")
    return f"Thought: The goal is at ({gr}, {gc}); I am at ({r}, {c}).\nAction: move {move}"


def test_evaluate_with_an_llm_agent_over_http() -> None:
    from llmgym.agents import OpenAIChatAgent

    with ChatServer(_maze_model) as server:
        agent = OpenAIChatAgent("scripted", base_url=server.base_url)
        result = evaluate(
            "llmgym/Maze-v0",
            agent,
            episodes=6,
            concurrency=3,
            progress=False,
            make_kwargs={"width": 3, "height": 3},
        )
    summary = result.summary()
    assert summary["episodes"] == 6 and summary["tokens"] > 0 and summary["errors"] == 0
    assert summary["format_errors"] == 0 and summary["agent"] == "openai:scripted"
    assert len(server.requests) == sum(len(t.turns) for t in result.trajectories)
    first = server.requests[0]["body"]["messages"]
    assert first[0]["role"] == "system" and "Thought:" in first[0]["content"]


def test_native_function_calling_solves_a_tool_task(capsys) -> None:
    """The agent sends the environment's tools; the server answers with ``tool_calls`` (content
    null, arguments a JSON string, as OpenAI does), which become the actions."""
    from llmgym.envs.tools import parse_tool_call

    task = "eval/00003"
    twin = gym.make("llmgym/Weather-v0")  # plays the same task in lockstep, for the answers
    twin.reset(options={"task_id": task})

    def model(messages):
        action = twin.unwrapped.oracle_action()
        twin.step(action)
        call = parse_tool_call(action)
        function = {"name": call.name, "arguments": json.dumps(call.arguments)}
        return {
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": function}],
        }

    with ChatServer(model) as server:
        code = main(
            ["eval", "llmgym/Weather-v0", "--agent", "openai:scripted", "--base-url",
             server.base_url, "--native-tools", "--task-ids", task, "--quiet"]
        )  # fmt: skip
        bodies = [r["body"] for r in server.requests]
    assert code == 0 and re.search(
        r"llmgym/Weather-v0 +openai:scripted +1 +1\.000", capsys.readouterr().out
    )
    assert all(b["tools"] == twin.unwrapped.tool_schemas() for b in bodies)


def test_cli_eval_openai_agent_with_faults_and_garbage(tmp_path, capsys) -> None:
    replies = iter(["no idea, sorry"] * 2 + ["Thought: fine\nAction: move up"] * 1000)
    faults = ["500", "garbage", ("slow", 0.5)]  # an error, a garbage body, a slow answer
    out = tmp_path / "results.json"
    traj = tmp_path / "traj.jsonl"
    with ChatServer(lambda m: next(replies), faults=faults) as server:
        code = main(
            [
                "eval", "llmgym/Maze-v0", "--agent", "openai:scripted",
                "--base-url", server.base_url,
                "--episodes", "2", "--quiet", "--json", str(out), "--trajectories", str(traj),
            ]
        )  # fmt: skip
    assert code == 0
    table = capsys.readouterr().out
    assert "format_errors" in table and "tokens" in table
    row = json.loads(out.read_text())["results"][0]
    assert row["episodes"] == 2 and row["format_errors"] >= 2 and row["tokens"] > 0
    assert len(row["per_episode"]) == 2 and {"turns", "tokens", "format_errors"} <= set(
        row["per_episode"][0]
    )
    assert len(list(read_trajectories(traj))) == 2


def test_cli_collect_is_resumable_and_convert(tmp_path, capsys) -> None:
    out = tmp_path / "expert.jsonl"
    assert (
        main(
            [
                "collect",
                "--envs",
                "Wordle-v0",
                "Maze-v0",
                "--episodes",
                "3",
                "-o",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "collect",
                "--envs",
                "Wordle-v0",
                "Maze-v0",
                "--episodes",
                "5",
                "-o",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    trajectories = list(read_trajectories(out))
    keys = [(t.env_id, t.task_id) for t in trajectories]
    assert len(keys) == 10 == len(set(keys)) and all(
        t.split == "train" and t.success for t in trajectories
    )
    assert "3 of 5 tasks already in" in capsys.readouterr().out
    messages = tmp_path / "sft.jsonl"
    assert main(["convert", str(out), "-o", str(messages), "--format", "messages"]) == 0
    rows = [json.loads(line) for line in messages.read_text().splitlines()]
    assert len(rows) == 10 and rows[0]["messages"][0]["role"] == "system"


def test_cli_suite_smoke(capsys) -> None:
    assert main(["eval", "--suite", "smoke", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "llmgym/Wordle-v0" in out and "llmgym/TextCraft-v0" in out
