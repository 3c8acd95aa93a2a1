"""ReAct reply parsing (good, sloppy and adversarial replies) and the ReAct wrapper."""

from __future__ import annotations

import gymnasium as gym
import pytest

import llmgym
from llmgym.wrappers import ReActWrapper, parse_reply

GOOD = [
    ("Thought: The goal is below me.\nAction: move down", "The goal is below me.", "move down"),
    (
        "Thought:\nI should search first.\n\nAction:\nsearch[red shoes]",
        "I should search first.",
        "search[red shoes]",
    ),
    ("thought: lower case works\naction: move up", "lower case works", "move up"),
    ("THOUGHT: SHOUTING\nACTION: MOVE UP", "SHOUTING", "MOVE UP"),
    ("**Thought:** bold labels\n**Action:** `get 2 oak log`", "bold labels", "get 2 oak log"),
    ("**Thought**: bold outside\n**Action**: crane", "bold outside", "crane"),
    ("### Thought\nMarkdown headings.\n### Action\nmove left", "Markdown headings.", "move left"),
    ("> Thought: quoted\n> Action: move right", "quoted", "move right"),
    ('Thought: x\nAction: "slate"', "x", "slate"),
    ("Thought: trailing period\nAction: inventory.", "trailing period", "inventory"),
    (
        "Let me think about this.\nThe answer is clear.\nAction: crane",
        "Let me think about this.\nThe answer is clear.",
        "crane",
    ),
    ("Action: move up", "", "move up"),
    ("Action 1: move up", "", "move up"),
    ("Action : move up", "", "move up"),
    ("<think>Hidden reasoning.</think>\nAction: crane", "Hidden reasoning.", "crane"),
    (
        "<think>unterminated thinking... Action: move down",
        "unterminated thinking... Action: move down",
        None,
    ),
]

SLOPPY = [
    # the model keeps writing the transcript: the first action counts
    (
        "Thought: go\nAction: move up\nObservation: You moved.\nThought: again\nAction: move up",
        "move up",
    ),
    ("Thought: a\nAction: move up\nAction: move down", "move up"),
    (
        "Thought: trailing prose\nAction: move up\n\nThis should get me closer to the goal.",
        "move up",
    ),
    ("Thought: fenced\nAction:\n```\nmove down\n```", "move down"),
    (
        "Thought: sql\nAction:\n```sql\nSELECT name\nFROM users\nWHERE age > 3;\n```",
        "```sql\nSELECT name\nFROM users\nWHERE age > 3;\n```",
    ),
    (
        'Thought: tool\nAction: get_weather with Action Input: {"city": "Paris",\n "days": 2}',
        'get_weather with Action Input: {"city": "Paris",\n "days": 2}',
    ),
    (
        'Action: {"name": "finish", "arguments": {"answer": "42"}}',
        '{"name": "finish", "arguments": {"answer": "42"}}',
    ),
    ("Thought: windows\r\nAction: move left\r\n", "move left"),
    ("Action: submit\n```sql\nSELECT 1\n```\nDone.", "submit\n```sql\nSELECT 1\n```"),
    (
        "Sure! Here is my answer.\n\nThought: ok\nAction: click[Buy Now]\n\nHope this helps!",
        "click[Buy Now]",
    ),
]

NO_ACTION = [
    "",
    "   \n\t ",
    "I don't know what to do.",
    "Thought: I will move up.",
    "Thought: empty action\nAction:",
    "Thought: empty then observation\nAction:\nObservation: nothing",
    "Actions speak louder than words",
    "The action is move up",
    "x" * 50_000,
]


@pytest.mark.parametrize(("reply", "thought", "action"), GOOD)
def test_good_replies(reply: str, thought: str, action: str | None) -> None:
    parsed = parse_reply(reply)
    assert parsed.action == action
    assert parsed.thought == thought


@pytest.mark.parametrize(("reply", "action"), SLOPPY)
def test_sloppy_replies(reply: str, action: str) -> None:
    assert parse_reply(reply).action == action


@pytest.mark.parametrize("reply", NO_ACTION)
def test_replies_without_an_action(reply: str) -> None:
    parsed = parse_reply(reply)
    assert parsed.action is None and parsed.error


def test_action_only_format_takes_a_bare_reply() -> None:
    assert parse_reply("move up", require_label=False).action == "move up"
    assert (
        parse_reply("  `crane`\nbecause it has common letters", require_label=False).action
        == "crane"
    )
    assert parse_reply("Action: move up", require_label=False).action == "move up"
    assert parse_reply("", require_label=False).action is None


def test_non_text_reply_is_an_error() -> None:
    assert parse_reply(None).action is None  # type: ignore[arg-type]


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
