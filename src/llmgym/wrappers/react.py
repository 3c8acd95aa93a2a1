"""ReAct prompting: the observation becomes the prompt an LLM sees; the action is its raw reply.

Parsing rules for a reply (:func:`parse_reply`), tolerant of what models actually write:

* ``<think>...</think>`` blocks are read as the thought and removed.
* Labels are found case-insensitively, with or without markdown (``**Action:**``,
  ``### Action``, ``Action :``, ``Action 1:``).
* **The first ``Action:`` counts.** Models that keep writing the transcript after acting produce
  ``Observation: ...`` and further ``Action:`` lines of their own; everything from the first
  ``Observation:`` after the action on is ignored, and so are later actions.
* The action is the text after the label up to the next label: a fenced code block there gives
  its content (an SQL query spanning lines, a JSON call; an ``sql`` block keeps its fence); a
  command followed by a fenced block keeps both (``submit`` and the query); text beginning with
  ``{`` or holding ``Action Input`` keeps every line (tool calls); otherwise the first non-empty
  line, stripped of quotes, backticks and emphasis.
* The thought is the text after ``Thought:`` up to the action (or the text before the action when
  there is no ``Thought:`` label).
* In ``react`` format a reply with no ``Action:`` label is a format error. In ``action`` format
  (no thought asked for) a bare reply is the action itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, SupportsFloat

import gymnasium as gym

__all__ = ["ParsedReply", "ReActWrapper", "format_reply", "parse_reply", "system_prompt"]

_LABEL = r"(?:^|\n)[ \t>#*_]*{name}[ \t*_]*:[ \t*_]*"
_ACTION = re.compile(_LABEL.format(name=r"action(?:[ \t]*[0-9]+)?"), re.IGNORECASE)
_THOUGHT = re.compile(_LABEL.format(name="(?:thought|reasoning|thinking)"), re.IGNORECASE)
_STOP = re.compile(
    _LABEL.format(name=r"(?:observation|thought|action|result)(?:[ \t]*[0-9]+)?"), re.IGNORECASE
)
_THINK_BLOCK = re.compile(r"<think>(.*?)(?:</think>|$)", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)
_HEADING = re.compile(
    r"^[ \t]*#{1,6}[ \t]*(thought|reasoning|action|observation)[ \t]*:?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_WRAP = " \t\r\n`'\"*_."
_MAX_REPLY = 20_000


@dataclass(frozen=True)
class ParsedReply:
    """A model reply split into its parts; ``action`` is ``None`` when none could be found."""

    thought: str
    action: str | None
    error: str = ""


def parse_reply(reply: str, *, require_label: bool = True) -> ParsedReply:
    """Extract the thought and the action from a ReAct reply (rules in the module docstring)."""
    if not isinstance(reply, str):
        return ParsedReply("", None, f"the reply must be text, got {type(reply).__name__}")
    text = reply[:_MAX_REPLY].replace("\r\n", "\n")
    think_parts = [m.strip() for m in _THINK_BLOCK.findall(text)]
    text = _THINK_BLOCK.sub("\n", text)
    text = _HEADING.sub(r"\1:", text)
    action_label = _ACTION.search(text)
    if action_label is None:
        if require_label:
            return ParsedReply(_thought(text, think_parts), None, "the reply has no 'Action:' line")
        action = _action_text(text)
        return ParsedReply(
            " ".join(think_parts), action or None, "" if action else "the reply is empty"
        )
    body = text[action_label.end() :]
    stop = _STOP.search(body)
    if stop is not None:
        body = body[: stop.start()]
    action = _action_text(body)
    thought = _thought(text[: action_label.start()], think_parts)
    if not action:
        return ParsedReply(thought, None, "the 'Action:' line is empty")
    return ParsedReply(thought, action)


def _thought(before_action: str, think_parts: list[str]) -> str:
    label = _THOUGHT.search(before_action)
    body = before_action[label.end() :] if label else before_action
    parts = [*think_parts, body.strip()]
    return "\n".join(p for p in parts if p).strip()


def _action_text(body: str) -> str:
    stripped = body.strip()
    if not stripped:
        return ""
    fence = _FENCE.match(stripped)
    if stripped.startswith("```") and fence:
        language = stripped[3 : stripped.find("\n")].strip().lower() if "\n" in stripped else ""
        content = fence.group(1).strip()
        return f"```{language}\n{content}\n```" if language == "sql" else content
    if stripped.startswith("{") or "action input" in stripped.lower():
        return stripped
    if "```" in stripped:  # a command followed by a code block ("submit" + an SQL query)
        start = stripped.index("```")
        end = stripped.find("```", start + 3)
        block = stripped[start : end + 3] if end > 0 else stripped[start:] + "\n```"
        return f"{stripped[:start].strip(_WRAP)}\n{block}".strip()
    first_line = next(line for line in stripped.split("\n") if line.strip())
    return first_line.strip(_WRAP)


def format_reply(action: str, thought: str = "", *, react: bool = True) -> str:
    """The canonical reply for ``action``: ``Thought: ...\\nAction: ...`` (or ``Action: ...``)."""
    if not react or not thought:
        return f"Action: {action}"
    return f"Thought: {thought}\nAction: {action}"


def system_prompt(rules: str, example: str = "", *, react: bool = True) -> str:
    """The instructions an LLM agent receives: the environment's rules, the reply format and a
    worked example."""
    if react:
        reply_format = (
            "Reply in exactly this format:\nThought: <your reasoning about what to do next>\n"
            "Action: <one action>"
        )
    else:
        reply_format = "Reply with exactly one line:\nAction: <one action>"
    parts = [rules.strip(), reply_format]
    if example:
        parts.append("Example:\n" + example.strip())
    return "\n\n".join(parts)


class ReActWrapper(gym.Wrapper):
    """Turns an environment into a prompt-in, reply-out loop for LLM agents.

    The observation is the full prompt: the environment's rules and action grammar, the reply
    format, a worked example, the task's instruction and the latest observation. The action is the
    model's raw reply; the wrapper extracts ``Thought:`` and ``Action:`` (see :func:`parse_reply`)
    and passes only the action to the environment. ``info`` gains ``thought``,
    ``parsed_action``, ``format_error`` (bool), ``format_errors`` (consecutive count) and
    ``env_observation`` (the inner environment's own observation).

    A reply without a parseable action never reaches the environment: the observation explains
    the expected format, ``format_penalty`` is added to the reward, and after
    ``max_format_errors`` consecutive errors the episode is truncated.

    Args:
        env: Any llmgym environment (or a wrapper around one).
        react: ``True`` asks for ``Thought:`` and ``Action:``; ``False`` for ``Action:`` alone
            (then a bare reply also counts as the action).
        format_penalty: Reward added on a format error (e.g. ``-0.1``); ``0.0`` by default.
        max_format_errors: Consecutive format errors that truncate the episode (``None``: never).
        include_example: Whether the prompt shows the environment's worked example.
    """

    def __init__(
        self,
        env: gym.Env,
        *,
        react: bool = True,
        format_penalty: float = 0.0,
        max_format_errors: int | None = 3,
        include_example: bool = True,
    ) -> None:
        if not isinstance(env.observation_space, gym.spaces.Text):
            name = env.spec.id if env.spec else type(env.unwrapped).__name__
            raise TypeError(
                f"ReActWrapper needs a text environment; {name} observes "
                f"{type(env.observation_space).__name__} (pixel variants are for RL agents; use "
                "the text environment, e.g. llmgym/Crafter-v0)"
            )
        super().__init__(env)
        self.react = react
        self.format_penalty = format_penalty
        self.max_format_errors = max_format_errors
        self.include_example = include_example
        self.system_prompt = ""
        self._instruction = ""
        self._last_observation = ""
        self._format_errors = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        inner = self.env.unwrapped
        example = getattr(inner, "example", "") if self.include_example else ""
        rules = inner.rules() if hasattr(inner, "rules") else ""
        self.system_prompt = system_prompt(rules, example, react=self.react)
        self._instruction = info.get("instruction", "")
        self._last_observation = observation
        self._format_errors = 0
        info = {**info, "env_observation": observation, "system_prompt": self.system_prompt}
        return self.prompt(observation), info

    def prompt(self, observation: str) -> str:
        """The full prompt for the current turn."""
        task = f"Your task: {self._instruction}\n\n" if self._instruction else ""
        return f"{self.system_prompt}\n\n{task}Observation:\n{observation}"

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        parsed = parse_reply(action, require_label=self.react)
        if parsed.action is None:
            self._format_errors += 1
            truncated = (
                self.max_format_errors is not None and self._format_errors >= self.max_format_errors
            )
            expected = (
                "Thought: <reasoning>\nAction: <one action>"
                if self.react
                else "Action: <one action>"
            )
            feedback = (
                f"Format error: {parsed.error}. Reply in the format:\n{expected}\n"
                f"(consecutive format errors: {self._format_errors}"
                + (f" of {self.max_format_errors} allowed)" if self.max_format_errors else ")")
                + f"\n\nLatest observation:\n{self._last_observation}"
            )
            info = {
                "thought": parsed.thought,
                "parsed_action": None,
                "format_error": True,
                "format_errors": self._format_errors,
                "invalid_action": True,
                "success": self.env.unwrapped.success,
                "env_observation": feedback,
            }
            return self.prompt(feedback), self.format_penalty, False, truncated, info
        self._format_errors = 0
        observation, reward, terminated, truncated, info = self.env.step(parsed.action)
        self._last_observation = observation
        info = {
            **info,
            "thought": parsed.thought,
            "parsed_action": parsed.action,
            "format_error": False,
            "format_errors": 0,
            "env_observation": observation,
        }
        return self.prompt(observation), reward, terminated, truncated, info
