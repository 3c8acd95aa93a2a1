"""Tool calls as an agent writes them: :func:`parse_tool_call` reads one call from a reply,
:func:`format_call` and :func:`format_react` write one.

Calls are accepted in AgentGym's ReAct form (``Action: get_elevation with Action Input:
{"latitude": 1.5, "longitude": 2}``) and as native JSON function calls (``{"name": ...,
"arguments": {...}}``, OpenAI ``tool_calls`` included). Both are parsed with :mod:`json` only;
nothing is ever evaluated. A reply that holds no readable call gets a message saying why.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from llmgym.envs.tools.schema import describe_value

__all__ = ["ToolCall", "format_call", "format_react", "parse_tool_call"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_ACTION_MARK = re.compile(r"(?<![A-Za-z])action\s*:", re.IGNORECASE)
_WITH_INPUT = re.compile(r"(?:\s+with)?\s+action\s+input\s*:", re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)```", re.DOTALL)
_MAX_ACTION_CHARS = 100_000


@dataclass(frozen=True)
class ToolCall:
    """One parsed tool call: the tool's name, its arguments and the form it was written in
    (``"react"`` or ``"json"``)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    form: str = "react"


def format_call(call: ToolCall) -> str:
    """``NAME with Action Input: {JSON}`` — a call as the action of a ReAct reply (the reply's
    ``Action:`` label comes before it; :class:`~llmgym.wrappers.ReActWrapper` adds it)."""
    return f"{call.name} with Action Input: {json.dumps(call.arguments, ensure_ascii=False)}"


def format_react(call: ToolCall) -> str:
    """``Action: NAME with Action Input: {JSON}`` — AgentGym's whole ReAct action line."""
    return f"Action: {format_call(call)}"


_FORMAT_HINT = (
    'Reply with "Action: TOOL with Action Input: {JSON arguments}" or a JSON function call '
    '{"name": "TOOL", "arguments": {...}}.'
)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _loads_prefix(text: str) -> tuple[Any, str]:
    """Decode the JSON value at the start of ``text``; return it and the text after it."""
    try:
        value, end = _DECODER.raw_decode(text)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    return value, text[end:]


def _json_error(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at character {error.pos + 1}"
    return str(error)


def _unfence(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        match = _FENCE.match(stripped)
        if match:
            return match.group(1).strip()
    return stripped


def _clean_name(text: str) -> str:
    name = text.strip().strip("`'\"*").strip()
    if name.endswith("()"):
        name = name[:-2].rstrip()
    return name


def parse_tool_call(text: str) -> ToolCall | str:
    """Parse one tool call from an agent's reply; return it, or a message saying what is wrong.

    Accepted: ``Action: NAME with Action Input: {JSON}`` anywhere in the reply (a thought may
    precede it; ``Action Input:`` may also start the next line, as in LangChain's ReAct;
    ``Action: NAME`` alone is a call without arguments), the same without the ``Action:`` label
    (``NAME with Action Input: {JSON}``, or a bare ``NAME``), or a JSON function call as
    the whole reply or in a fenced code block — ``{"name": ..., "arguments": {...}}`` (arguments
    may be a JSON-encoded string, as OpenAI sends them), ``{"function": {...}}``,
    ``{"tool_calls": [...]}`` with one call, or a one-element list of calls.
    """
    if len(text) > _MAX_ACTION_CHARS:
        return f"The reply is too long ({len(text):,} characters). {_FORMAT_HINT}"
    text = text.replace("\x00", "").removesuffix("</s>")
    marks = list(_ACTION_MARK.finditer(text))
    if marks:
        segments = [
            text[m.end() : (marks[i + 1].start() if i + 1 < len(marks) else len(text))]
            for i, m in enumerate(marks)
        ]
        segments = [s for s in segments if s.strip()]
        if not segments:
            return f"'Action:' is not followed by a tool call. {_FORMAT_HINT}"
        if len(segments) > 1:
            return f"Only one action per turn is allowed; the reply has {len(segments)}."
        return _parse_react_segment(segments[0])
    candidate = _unfence(text)
    if not candidate.startswith(("{", "[")):
        if _WITH_INPUT.search(candidate) or _NAME.fullmatch(_clean_name(candidate)):
            return _parse_react_segment(candidate)
        fenced = _FENCE.search(text)
        if fenced is None or not fenced.group(1).strip().startswith(("{", "[")):
            return f"No tool call found. {_FORMAT_HINT}"
        candidate = fenced.group(1).strip()
    try:
        value, rest = _loads_prefix(candidate)
    except ValueError as error:
        return f"The function call is not valid JSON ({_json_error(error)}). {_FORMAT_HINT}"
    if rest.strip():
        return f"Unexpected text after the JSON function call. {_FORMAT_HINT}"
    return _call_from_json(value)


def _parse_react_segment(segment: str) -> ToolCall | str:
    split = _WITH_INPUT.search(segment)
    if split is None:
        head = segment.strip()
        if head.startswith(("{", "[")):  # "Action: {"name": ..., "arguments": ...}"
            try:
                value, rest = _loads_prefix(head)
            except ValueError as error:
                return f"The function call is not valid JSON ({_json_error(error)})."
            if rest.strip() and not rest.lstrip(" \t").startswith("\n"):
                return f"Unexpected text after the JSON function call. {_FORMAT_HINT}"
            return _call_from_json(value)
        first_line = head.split("\n", 1)[0]
        name = _clean_name(first_line)
        if _NAME.fullmatch(name):
            return ToolCall(name, {}, "react")
        return f"Could not read the action {json.dumps(first_line[:60])}. {_FORMAT_HINT}"
    name = _clean_name(segment[: split.start()])
    if not _NAME.fullmatch(name):
        return f"{json.dumps(name[:60])} is not a tool name. {_FORMAT_HINT}"
    raw = segment[split.end() :].strip()
    raw = _unfence(raw) if raw.startswith("```") else raw
    if not raw:
        return ToolCall(name, {}, "react")
    try:
        arguments, rest = _loads_prefix(raw)
    except ValueError as error:
        return (
            f"The Action Input of {name} is not valid JSON ({_json_error(error)}). Write a JSON "
            'object with double-quoted keys, e.g. {"name": "value", "count": 3}.'
        )
    if rest.strip() and not rest.lstrip(" \t").startswith("\n"):
        return f"Unexpected text after the Action Input of {name}: {json.dumps(rest.strip()[:40])}."
    return ToolCall(name, arguments, "react")


def _only_item(value: Any) -> tuple[Any, int]:
    """``value``, or the one item of a list; and how many items there were (1 for a non-list)."""
    if isinstance(value, list):
        return (value[0] if len(value) == 1 else None), len(value)
    return value, 1


def _call_from_json(value: Any) -> ToolCall | str:
    value, count = _only_item(value)
    if count != 1:
        return f"Send exactly one function call per turn; got a list of {count}."
    if not isinstance(value, dict):
        return f"A JSON function call must be an object, got {describe_value(value)}."
    for wrapper in ("tool_calls", "function_call"):
        if wrapper in value:
            inner, count = _only_item(value[wrapper])
            if count != 1:
                return f"Send exactly one tool call per turn; got {count}."
            if not isinstance(inner, dict):
                return f'"{wrapper}" must hold a function call object.'
            value = inner
    if isinstance(value.get("function"), dict):
        value = value["function"]
    name = next(
        (value[k] for k in ("name", "function_name", "function", "tool") if k in value), None
    )
    if not isinstance(name, str) or not _NAME.fullmatch(name.strip()):
        return (
            'A JSON function call needs a "name" naming the tool, e.g. '
            '{"name": "TOOL", "arguments": {...}}.'
        )
    arguments: Any = {}
    for key in ("arguments", "parameters", "input", "args"):
        if key in value:
            arguments = value[key]
            break
    if isinstance(arguments, str):
        if not arguments.strip():
            arguments = {}
        else:
            try:
                arguments, rest = _loads_prefix(arguments.strip())
            except ValueError as error:
                return f'The "arguments" string of {name} is not valid JSON ({_json_error(error)}).'
            if rest.strip():
                return f'Unexpected text after the "arguments" JSON of {name}.'
    return ToolCall(name.strip(), arguments, "json")
