"""ReAct reply parsing (a corpus of real-looking replies, hostile ones) and the ReAct wrapper."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import llmgym
from llmgym.wrappers import ReActWrapper, format_reply, parse_reply
from llmgym.wrappers.react import ParsedReply
from tests.stopwatch import Stopwatch

CORPUS_PATH = Path(__file__).parent / "data" / "react_replies.jsonl"
CORPUS = [json.loads(line) for line in CORPUS_PATH.read_text(encoding="utf-8").splitlines()]
"""Replies as LLMs write them, one JSON object a line: ``id``, ``env`` (the environment whose
actions it uses), ``kind`` (what it exercises), ``mode`` (``react``: labels required, ``action``:
a bare reply is the action), ``reply``, and the expected ``thought``, ``action`` (``null`` for
none) and ``format_error``."""

KINDS = {
    "plain",
    "fenced_reply",
    "stray_fence",
    "fenced_action",
    "emphasis",
    "heading",
    "spelling",
    "quotes",
    "several_actions",
    "json",
    "think",
    "no_label",
    "empty",
    "multiline",
    "prose",
}


def test_corpus_is_large_and_varied() -> None:
    assert len(CORPUS) >= 200
    assert len({case["id"] for case in CORPUS}) == len(CORPUS)
    assert {case["kind"] for case in CORPUS} == KINDS
    assert len({case["env"] for case in CORPUS}) >= 15
    assert sum(case["format_error"] for case in CORPUS) >= 20
    assert sum(case["mode"] == "action" for case in CORPUS) >= 10


@pytest.mark.parametrize("case", CORPUS, ids=lambda case: case["id"])
def test_corpus_reply(case: dict) -> None:
    parsed = parse_reply(case["reply"], require_label=case["mode"] == "react")
    assert parsed.action == case["action"]
    assert (parsed.action is None) == case["format_error"] == bool(parsed.error)
    assert parsed.thought == case["thought"]


@pytest.mark.parametrize(
    "case", [case for case in CORPUS if case["action"]], ids=lambda case: case["id"]
)
def test_canonical_replies_parse_back(case: dict) -> None:
    """What the oracle agent sends (:func:`format_reply`) gives back its action and thought."""
    thought = "I know what to do."
    assert parse_reply(format_reply(case["action"], thought)) == ParsedReply(
        thought, case["action"]
    )
    assert parse_reply(format_reply(case["action"], react=False), require_label=False) == (
        ParsedReply("", case["action"])
    )


def test_the_first_action_after_the_last_thought_counts() -> None:
    rethought = "Thought: left\nAction: move left\nThought: no, a wall\nAction: move down"
    assert parse_reply(rethought) == ParsedReply("no, a wall", "move down")
    plan = "Thought: two steps\nAction 1: move left\nAction 2: move down"
    assert parse_reply(plan) == ParsedReply("two steps", "move left")
    imagined = "Thought: a\nAction: move up\nObservation: ok\nThought: b\nAction: move down"
    assert parse_reply(imagined) == ParsedReply("a", "move up")


@pytest.mark.parametrize(
    "reply",
    [
        " " * 20_000 + "x",
        "Action" + " " * 20_000,
        "'`" * 10_000,
        "```\n" * 5_000,
        "Action: x\n" * 2_000,
        "Action: f(" + "(" * 20_000,
        "Action: " + "[" * 20_000,
        "[" * 20_000,
        "Action: x" + " </s>" * 4_000,
        "<think>" * 3_000,
        "Action: SELECT\n" + "x\n" * 10_000,
        "x" * 50_000,
    ],
    ids=lambda reply: repr(reply[:12]),
)
def test_hostile_replies_parse_quickly(reply: str) -> None:
    # a parse that grows quadratically with the reply spends seconds on these (each takes a few ms)
    watch = Stopwatch()
    for require_label in (True, False):
        parsed = parse_reply(reply, require_label=require_label)
        assert (parsed.action is None) == bool(parsed.error)
    assert watch.cpu < 0.5


def test_non_text_reply_is_an_error() -> None:
    parsed = parse_reply(None)  # type: ignore[arg-type]
    assert parsed.action is None and "must be text" in parsed.error


def test_format_errors_say_what_is_missing() -> None:
    assert parse_reply("").error == "the reply is empty"
    assert parse_reply("I am not sure.").error == "the reply has no 'Action:' line"
    assert parse_reply("Thought: x\nAction:").error == "the 'Action:' line is empty"
    assert "never closed" in parse_reply("<think>Action: move up").error
    assert "only reasoning" in parse_reply("<think>hmm</think>").error


def _react_env(**kwargs) -> ReActWrapper:
    return ReActWrapper(gym.make("llmgym/Maze-v0"), **kwargs)


def test_prompt_has_rules_format_example_instruction_and_observation() -> None:
    env = _react_env()
    prompt, info = env.reset(seed=0)
    inner = env.unwrapped
    assert inner.rules() in prompt and inner.example in prompt
    assert "Thought: <your reasoning" in prompt and info["instruction"] in prompt
    assert prompt.endswith(info["env_observation"])
    assert info["system_prompt"] == env.system_prompt and prompt.startswith(env.system_prompt)


def test_parsed_action_reaches_the_environment() -> None:
    env = _react_env()
    env.reset(seed=0)
    action = env.unwrapped.oracle_action()
    prompt, reward, terminated, truncated, info = env.step(
        f"Thought: follow the plan\nAction: {action}"
    )
    assert info["parsed_action"] == action and info["thought"] == "follow the plan"
    assert not info["format_error"] and not info["invalid_action"]
    assert prompt.endswith(info["env_observation"])


def test_format_errors_do_not_step_penalise_and_truncate() -> None:
    env = _react_env(format_penalty=-0.1, max_format_errors=3)
    env.reset(seed=0)
    position = env.unwrapped._position
    moves = env.unwrapped._moves
    for count in (1, 2):
        prompt, reward, terminated, truncated, info = env.step("I am not sure what to do.")
        assert reward == -0.1 and not terminated and not truncated
        assert (
            info["format_error"]
            and info["format_errors"] == count
            and info["parsed_action"] is None
        )
        assert "Format error" in prompt and "Thought: <reasoning>" in prompt
    assert env.unwrapped._position == position and env.unwrapped._moves == moves
    *_, truncated, info = env.step("still nothing")
    assert truncated and info["format_errors"] == 3


def test_a_good_reply_resets_the_format_error_count() -> None:
    env = _react_env(max_format_errors=2)
    env.reset(seed=0)
    env.step("nothing")
    *_, info = env.step(f"Action: {env.unwrapped.oracle_action()}")
    assert info["format_errors"] == 0
    *_, truncated, info = env.step("nothing")
    assert not truncated


def test_action_only_mode_prompt_and_parsing() -> None:
    env = _react_env(react=False)
    prompt, _ = env.reset(seed=0)
    assert "Reply with exactly one line" in prompt and "Thought:" not in prompt.split("Example:")[0]
    *_, info = env.step(env.unwrapped.oracle_action())
    assert not info["format_error"]


@pytest.mark.parametrize("entry", llmgym.ENVIRONMENTS, ids=lambda e: e.name)
def test_react_wrapper_works_on_every_environment(entry) -> None:
    if not entry.available:
        pytest.skip(f"needs {entry.install_hint}")
    made = gym.make(entry.id)
    if not isinstance(made.observation_space, gym.spaces.Text):
        with pytest.raises(TypeError, match="needs a text environment"):
            ReActWrapper(made)
        return
    env = ReActWrapper(made)
    prompt, info = env.reset(seed=1, options={"split": "eval"})
    assert env.unwrapped.rules() in prompt
    for _ in range(3):
        reply = f"Thought: the oracle knows.\nAction: {env.unwrapped.oracle_action()}"
        prompt, reward, terminated, truncated, info = env.step(reply)
        assert not info["format_error"] and not info["invalid_action"], prompt[-500:]
        if terminated or truncated:
            break
