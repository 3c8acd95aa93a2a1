"""The machinery every tool-use environment shares: tool declarations, argument validation, the
two action parsers, answer checking and :class:`ToolEnv`, the base class of the five environments.

A tool is a method of the environment, declared with :func:`tool`: its parameters, their JSON
types and whether they are required come from the Python signature; its description, its
parameters' descriptions and its result from its docstring (Google style ``Args:`` and
``Returns:`` sections, as in :meth:`ToolEnv.check_valid_actions`). Tools that differ only in
data (Weather's queries) are rows of a :class:`ToolTable` that call one method with fixed
arguments.

Actions are accepted in AgentGym's ReAct form (``Action: get_elevation with Action Input:
{"latitude": 1.5, "longitude": 2}``) and as native JSON function calls (``{"name": ...,
"arguments": {...}}``, OpenAI ``tool_calls`` included). Both are parsed with :mod:`json` only.
A call that cannot be parsed, names an unknown tool, or has missing, unknown or mistyped arguments
is answered with feedback naming the tool, the argument and the expected type, and so is a number
no tool can compute with, at any depth of an argument (NaN, an infinity such as JSON's ``1e309``,
an integer beyond the float range such as ``10**400``); a tool that refuses its arguments raises
:class:`ToolError`. Either way the action is invalid and nothing changes.
"""

from __future__ import annotations

import copy
import inspect
import json
import math
import re
import sys
import types
import typing
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from importlib import resources
from typing import Any, ClassVar, Generic, Literal, TypeVar

import numpy as np
from typing_extensions import Self

from llmgym.core import EnvConfig, Task, TaskIdRange, TextEnv, Transition, knob, split_of
from llmgym.core.tasks import TaskRng
from llmgym.errors import ConfigError, NoGoal, ToolError

__all__ = [
    "Answer",
    "AnswerKind",
    "ArgType",
    "CurrentDateTool",
    "DerivedCall",
    "Episode",
    "GoalTemplate",
    "ItemSplit",
    "Param",
    "PlanStep",
    "Results",
    "Tool",
    "ToolCall",
    "ToolConfig",
    "ToolEnv",
    "ToolTable",
    "answers_match",
    "finish_with",
    "format_call",
    "format_react",
    "goal_template",
    "load_data",
    "parse_iso_date",
    "parse_tool_call",
    "prompt_texts",
    "search_results",
    "tool",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_ACTION_MARK = re.compile(r"(?<![A-Za-z])action\s*:", re.IGNORECASE)
_WITH_INPUT = re.compile(r"(?:\s+with)?\s+action\s+input\s*:", re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)```", re.DOTALL)
_NUMBER = re.compile(r"[-+\u2212]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_ISO_DATE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})$")
_NOT_ALPHANUMERIC = re.compile(r"[^0-9a-z]+")
_MAX_ACTION_CHARS = 100_000
_LARGEST_INTEGER = int(sys.float_info.max)


@cache
def load_data(name: str) -> Any:
    """A vocabulary file of the tool environments (``envs/data/tools/<name>.json``), loaded once."""
    source = resources.files("llmgym.envs") / "data" / "tools" / f"{name}.json"
    return json.loads(source.read_text(encoding="utf-8"))


def prompt_texts(env_name: str) -> tuple[str, str, str]:
    """``(service, notes, example)`` of a built-in tool environment: what it tells the agent
    besides its tools (``envs/data/tools/prompts.json``)."""
    texts = load_data("prompts")[env_name]
    return texts["service"], texts["notes"], texts["example"]


def parse_iso_date(value: str, argument: str) -> date:
    """``value`` as a date, or :class:`ToolError` naming ``argument`` and the expected form."""
    match = _ISO_DATE.match(value.strip())
    if match:
        try:
            return date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            pass
    shown = value if len(value) <= 40 else value[:37] + "..."
    raise ToolError(f"{argument} {json.dumps(shown)} is not a date in the form YYYY-MM-DD")


_Item = TypeVar("_Item")


class ItemSplit(Generic[_Item]):
    """The items of a generated world (cities, films, papers) divided between the train and eval
    splits by a hash of each item's name, ``split_of(f"{prefix}:{name}")``; computed once per
    split."""

    def __init__(
        self, prefix: str, items: Callable[[], Iterable[_Item]], name: Callable[[_Item], str]
    ) -> None:
        self._prefix, self._items, self._name = prefix, items, name
        self._splits: dict[str, tuple[_Item, ...]] = {}

    def __call__(self, split: str) -> tuple[_Item, ...]:
        """The items of ``split``, in the world's order."""
        if split not in self._splits:
            self._splits[split] = tuple(
                item
                for item in self._items()
                if split_of(f"{self._prefix}:{self._name(item)}") == split
            )
        return self._splits[split]


def search_results(
    found: Sequence[_Item], describe: Callable[[_Item], dict[str, Any]], nothing: str
) -> dict[str, list[dict[str, Any]]]:
    """A search tool's result: ``{"results": [...]}``, each item found as ``describe`` shows it;
    :class:`ToolError` saying ``nothing`` when nothing was found."""
    if not found:
        raise ToolError(nothing)
    return {"results": [describe(item) for item in found]}


# ------------------------------------------------------------------------------ argument types
@dataclass(frozen=True)
class ArgType:
    """The JSON type of a tool argument: ``string``, ``integer``, ``number``, ``boolean``,
    ``array`` (of ``items``), ``object``, ``any`` (a JSON scalar or array) or a ``union`` of
    ``options``; ``enum`` restricts a string to fixed values."""

    kind: str
    items: ArgType | None = None
    options: tuple[ArgType, ...] = ()
    enum: tuple[str, ...] = ()

    @classmethod
    def from_annotation(cls, annotation: Any) -> tuple[ArgType, bool]:
        """The type of a Python annotation and whether it admits ``None`` (an optional value)."""
        origin = typing.get_origin(annotation)
        if origin in (typing.Union, types.UnionType):
            parts = [p for p in typing.get_args(annotation) if p is not type(None)]
            optional = len(parts) < len(typing.get_args(annotation))
            if len(parts) == 1:
                return cls.from_annotation(parts[0])[0], optional
            return cls("union", options=tuple(cls.from_annotation(p)[0] for p in parts)), optional
        if origin is Literal:
            return cls("string", enum=tuple(str(v) for v in typing.get_args(annotation))), False
        if origin is list or annotation is list:
            args = typing.get_args(annotation)
            items = cls.from_annotation(args[0])[0] if args else cls("any")
            return cls("array", items=items), False
        if origin is dict or annotation is dict:
            return cls("object"), False
        simple = {str: "string", int: "integer", float: "number", bool: "boolean", Any: "any"}
        if annotation in simple:
            return cls(simple[annotation]), False
        raise TypeError(f"tool arguments cannot be of type {annotation!r}")

    @property
    def name(self) -> str:
        """How the type is written in tool descriptions: ``array[integer]``, ``string | number``."""
        if self.kind == "array":
            return f"array[{self.items.name if self.items else 'any'}]"
        if self.kind == "union":
            return " | ".join(option.name for option in self.options)
        if self.enum:
            return "string, one of " + ", ".join(json.dumps(v) for v in self.enum)
        return self.kind

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the type (for native function calling)."""
        if self.kind == "union":
            return {"anyOf": [option.schema() for option in self.options]}
        if self.kind == "array":
            return {"type": "array", "items": self.items.schema() if self.items else {}}
        if self.kind == "any":
            return {"type": ["string", "number", "boolean", "array"]}
        schema: dict[str, Any] = {"type": self.kind}
        if self.enum:
            schema["enum"] = list(self.enum)
        return schema

    def coerce(self, value: Any) -> Any:
        """``value`` checked against the type (an integral number is accepted for ``integer``,
        any number for ``number``, an enum value in any case); :class:`ValueError` says what is
        wrong. Numbers out of range are :meth:`Tool.bind`'s to refuse."""
        kind = self.kind
        if kind == "union":
            for option in self.options:
                try:
                    return option.coerce(value)
                except ValueError:
                    continue
            raise ValueError(f"must be {self.name}, got {_describe_value(value)}")
        if kind == "any":
            if isinstance(value, dict) or value is None:
                got = _describe_value(value)
                raise ValueError(f"must be a string, number or array, got {got}")
            return value
        if kind == "string" and isinstance(value, str):
            if self.enum:
                for allowed in self.enum:
                    if value.strip().lower() == allowed.lower():
                        return allowed
                choices = ", ".join(json.dumps(v) for v in self.enum)
                raise ValueError(f"must be one of {choices}, got {_describe_value(value)}")
            return value
        if kind == "boolean" and isinstance(value, bool):
            return value
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind in ("integer", "number") and is_number:
            if kind == "number":
                return value
            if isinstance(value, int) or value.is_integer():
                return int(value)
        if kind == "array" and isinstance(value, list):
            if self.items is None:
                return value
            coerced = []
            for index, item in enumerate(value):
                try:
                    coerced.append(self.items.coerce(item))
                except ValueError as error:
                    raise ValueError(f"item {index} {error}") from None
            return coerced
        if kind == "object" and isinstance(value, dict):
            return value
        raise ValueError(f"must be {_with_article(self.name)}, got {_describe_value(value)}")


def _with_article(name: str) -> str:
    if " " in name or name.startswith("array["):
        return "an " + name if name.startswith("array") else name
    return ("an " if name[0] in "aeiou" else "a ") + name


def _unusable_number(value: Any) -> str | None:
    """The first number in a JSON value (at any depth) that no tool can compute with: NaN, an
    infinity or an integer beyond the float range, described; ``None`` if there is none."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return repr(item)
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) > _LARGEST_INTEGER:
            return f"an integer of {len(str(abs(item)))} digits"
        if isinstance(item, list):
            pending.extend(reversed(item))
        elif isinstance(item, dict):
            pending.extend(reversed(item.values()))
    return None


def _describe_value(value: Any) -> str:
    """A short description of a JSON value for feedback: ``string "abc"``, ``number 3.5``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {json.dumps(value)}"
    if isinstance(value, int):
        return f"integer {value}" if abs(value) < 10**15 else "a very large integer"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {json.dumps(shown, ensure_ascii=False)}"
    if isinstance(value, list):
        return f"array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# ------------------------------------------------------------------------------ tools
@dataclass(frozen=True)
class Param:
    """One argument of a tool."""

    name: str
    type: ArgType
    description: str
    required: bool
    default: Any = None

    def describe(self) -> str:
        """``- latitude (Type: number): The latitude.`` as listed in the rules."""
        extra = "" if self.required else ", optional"
        return f"- {self.name} (Type: {self.type.name}{extra}): {self.description}"


@dataclass(frozen=True)
class Tool:
    """A tool the agent can call: its name, description, parameters and what it returns.
    A call runs the environment's ``method`` with the call's arguments and the ``presets``
    (fixed arguments, for tools declared in a :class:`ToolTable`)."""

    name: str
    description: str
    params: tuple[Param, ...]
    returns: str
    method: str
    presets: tuple[tuple[str, Any], ...] = ()

    @property
    def signature(self) -> str:
        """``get_elevation(latitude, longitude)``."""
        return f"{self.name}({', '.join(p.name for p in self.params)})"

    def describe(self) -> str:
        """The tool as listed in the rules, in AgentGym's layout."""
        lines = [f"Name: {self.signature}", f"Description: {self.description}"]
        if self.params:
            lines += ["Parameters:", *(p.describe() for p in self.params)]
        if self.returns:
            lines.append(f"Returns: {self.returns}")
        return "\n".join(lines)

    def schema(self) -> dict[str, Any]:
        """The tool in OpenAI's function-calling format."""
        properties = {}
        for param in self.params:
            properties[param.name] = {**param.type.schema(), "description": param.description}
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": [p.name for p in self.params if p.required],
                    "additionalProperties": False,
                },
            },
        }

    def bind(self, arguments: Any) -> tuple[dict[str, Any], list[str]]:
        """Check ``arguments`` against the parameters: ``(arguments, [])`` with values coerced and
        defaults filled in, or ``({}, problems)`` with one message per problem."""
        if not isinstance(arguments, dict):
            return {}, [
                f"{self.name}: the Action Input must be a JSON object of arguments, got "
                f"{_describe_value(arguments)}. {self.usage()}"
            ]
        problems = []
        bound: dict[str, Any] = {}
        known = {p.name for p in self.params}
        for key in arguments:
            if key not in known:
                takes = ", ".join(f"{p.name} ({p.type.name})" for p in self.params) or "nothing"
                problems.append(
                    f"{self.name}: unknown argument {json.dumps(str(key)[:40])}; it takes {takes}."
                )
        for param in self.params:
            if param.name not in arguments or (arguments[param.name] is None and param.required):
                if param.required:
                    problems.append(
                        f"{self.name}: missing required argument '{param.name}' "
                        f"({param.type.name}): {param.description}"
                    )
                else:
                    bound[param.name] = param.default
                continue
            value = arguments[param.name]
            if value is None:
                bound[param.name] = param.default
                continue
            unusable = _unusable_number(value)
            if unusable is not None:
                problems.append(
                    f"{self.name}: argument '{param.name}' holds {unusable}; numbers must be "
                    f"finite and at most {sys.float_info.max:.1e} in magnitude."
                )
                continue
            try:
                bound[param.name] = param.type.coerce(value)
            except ValueError as error:
                problems.append(f"{self.name}: argument '{param.name}' {error}.")
        return ({}, problems) if problems else (bound, [])

    def usage(self) -> str:
        """A one-line reminder of how to call the tool."""
        example = {p.name: _placeholder(p.type) for p in self.params if p.required}
        return f"Call it as: Action: {self.name} with Action Input: {json.dumps(example)}"


def _placeholder(arg_type: ArgType) -> Any:
    if arg_type.enum:
        return arg_type.enum[0]
    return {
        "string": "...",
        "integer": 1,
        "number": 1.5,
        "boolean": True,
        "array": [],
        "object": {},
    }.get(arg_type.kind, "...")


_Method = TypeVar("_Method", bound=Callable[..., Any])
_TOOL_MARK = "__llmgym_tool__"
_GOAL_MARK = "__llmgym_goal_template__"


def tool(method: _Method) -> _Method:
    """Declare a method of a :class:`ToolEnv` as a tool. Its docstring describes it: a first
    paragraph (the description), ``Args:`` with one ``name: description`` line per parameter
    (longer descriptions continue on deeper-indented lines; a parameter described in the
    environment's :attr:`~ToolEnv.parameter_docs` may be left out) and ``Returns:`` (what the
    agent gets back). Types and defaults come from the signature."""
    setattr(method, _TOOL_MARK, True)
    return method


def _tool_of(method: Callable[..., Any], shared_docs: Mapping[str, str]) -> Tool:
    """The :class:`Tool` of a method declared with :func:`tool`; ``shared_docs`` describe the
    parameters its docstring leaves out."""
    name = method.__name__
    description, own_docs, returns = _read_docstring(inspect.getdoc(method) or "")
    param_docs = {**shared_docs, **own_docs}
    hints = typing.get_type_hints(method)
    params = []
    for param_name, parameter in inspect.signature(method).parameters.items():
        if param_name == "self":
            continue
        if param_name not in param_docs:
            raise TypeError(f"tool {name}: parameter {param_name!r} has no description")
        arg_type, optional = ArgType.from_annotation(hints[param_name])
        has_default = parameter.default is not inspect.Parameter.empty
        params.append(
            Param(
                name=param_name,
                type=arg_type,
                description=param_docs[param_name],
                required=not has_default and not optional,
                default=parameter.default if has_default else None,
            )
        )
    unknown = set(own_docs) - {p.name for p in params}
    if unknown:
        raise TypeError(f"tool {name}: descriptions for unknown parameters {unknown}")
    return Tool(name, description, tuple(params), returns, name)


def _read_docstring(doc: str) -> tuple[str, dict[str, str], str]:
    """``(description, {parameter: description}, returns)`` of a tool's (cleaned) docstring;
    wrapped lines are joined with single spaces."""
    sections: dict[str, list[str]] = {"": [], "Returns:": []}
    param_docs: dict[str, list[str]] = {}
    section = ""
    for line in doc.splitlines():
        text = line.strip()
        if text in ("Args:", "Returns:"):
            section = text
        elif text and section == "Args:":
            if line.startswith(" " * 8) and param_docs:  # a wrapped description
                list(param_docs.values())[-1].append(text)
            else:
                param_name, _, param_doc = text.partition(": ")
                param_docs[param_name] = [param_doc]
        elif text:
            sections[section].append(text)
    docs = {param_name: " ".join(lines) for param_name, lines in param_docs.items()}
    return " ".join(sections[""]), docs, " ".join(sections["Returns:"])


@dataclass(frozen=True)
class ToolTable:
    """Tools declared as data: tools that differ only in what they read call one method of the
    environment with fixed arguments. As a class attribute of a :class:`ToolEnv`, its tools are
    listed where the attribute stands."""

    tools: tuple[Tool, ...]

    @classmethod
    def from_data(cls, data: Mapping[str, Any], method: str) -> ToolTable:
        """The tools of ``data``: ``parameters`` maps each parameter name to its JSON ``type``
        and ``description``; each row of ``tools`` gives a ``name``, ``description``,
        ``returns``, its (required) ``parameters`` by name and the ``presets`` passed to
        ``method`` with the call's arguments."""
        docs = data["parameters"]
        return cls(
            tuple(
                Tool(
                    name=row["name"],
                    description=row["description"],
                    params=tuple(
                        Param(name, ArgType(docs[name]["type"]), docs[name]["description"], True)
                        for name in row["parameters"]
                    ),
                    returns=row["returns"],
                    method=method,
                    presets=tuple(row["presets"].items()),
                )
                for row in data["tools"]
            )
        )


# ------------------------------------------------------------------------------ parsing
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
        return f"A JSON function call must be an object, got {_describe_value(value)}."
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


# ------------------------------------------------------------------------------ answers
AnswerKind = Literal["number", "text", "date", "list"]


@dataclass(frozen=True)
class Answer:
    """The true answer of a query goal.

    ``kind`` says how a given answer is compared: ``number`` (within the environment's tolerance;
    a number inside a string counts, ``"12.5 °C"``), ``text`` (case, accents, punctuation and
    spacing ignored), ``date`` (``YYYY-MM-DD``) or ``list`` (the same items in any order; a string
    is split at commas, semicolons and "and").
    """

    value: float | str | tuple[str, ...]
    kind: AnswerKind
    alternatives: tuple[str, ...] = ()
    """Other accepted texts (``text`` answers), e.g. ``"Lisbon, Portugal"`` for ``"Lisbon"``."""

    def __post_init__(self) -> None:
        if (self.kind == "list") != isinstance(self.value, tuple):
            raise TypeError(f"a {self.kind} answer cannot be {self.value!r}: lists are tuples")

    def shown(self) -> str:
        """The answer as a person would write it."""
        if isinstance(self.value, tuple):
            return ", ".join(self.value)
        if self.kind == "number":
            number = float(self.value)
            return str(int(number)) if number.is_integer() else f"{number:g}"
        return str(self.value)


def normalize_answer(text: str) -> str:
    """Lower case, accents and punctuation removed, single spaces."""
    if not text.isascii():
        decomposed = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_NOT_ALPHANUMERIC.sub(" ", text.casefold()).split())


def _as_number(given: Any) -> float | None:
    if isinstance(given, bool):
        return None
    if isinstance(given, (int, float)):
        return float(given) if math.isfinite(given) else None
    if isinstance(given, list) and len(given) == 1:
        return _as_number(given[0])
    if isinstance(given, str) and len(given) <= 200:
        found = _NUMBER.findall(given.replace(",", ""))
        if len(found) == 1:
            number = float(found[0].replace("\u2212", "-"))
            return number if math.isfinite(number) else None
    return None


def _as_text(given: Any) -> str | None:
    if isinstance(given, bool):
        return "yes" if given else "no"
    if isinstance(given, float) and given.is_integer():
        return str(int(given))
    if isinstance(given, (int, float, str)):
        return str(given)
    if isinstance(given, list) and len(given) == 1:
        return _as_text(given[0])
    return None


def _as_items(given: Any) -> list[str] | None:
    if isinstance(given, list):
        items = []
        for item in given:
            text = _as_text(item)
            if text is None:
                return None
            items.append(text)
        return items
    if isinstance(given, str):
        return [p for p in re.split(r"\s*(?:[,;\n]|\band\b)\s*", given) if p.strip()]
    return None


def answers_match(given: Any, answer: Answer, abs_tolerance: float, rel_tolerance: float) -> bool:
    """Whether ``given`` (the agent's ``finish`` argument) matches ``answer``. Numbers match when
    ``|given - true| <= max(abs_tolerance, rel_tolerance * |true|)``."""
    if isinstance(answer.value, tuple):  # a list answer
        items = _as_items(given)
        if items is None:
            return False
        expected = sorted(normalize_answer(v) for v in answer.value)
        return sorted(normalize_answer(i) for i in items) == expected
    if answer.kind == "number":
        number = _as_number(given)
        if number is None:
            return False
        truth = float(answer.value)
        return abs(number - truth) <= max(abs_tolerance, rel_tolerance * abs(truth)) + 1e-9
    text = _as_text(given)
    if text is None:
        return False
    if answer.kind == "date":
        found = re.findall(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text)
        return len(found) == 1 and found[0] == answer.value
    given_text = normalize_answer(text)
    return any(
        given_text == normalize_answer(str(accepted))
        for accepted in (answer.value, *answer.alternatives)
    )


# ------------------------------------------------------------------------------ goals
Results = Sequence[Any]
"""What the oracle has seen: the result of each call of the plan so far, in plan order, as the
agent saw it (JSON results parsed, text results as text)."""


@dataclass(frozen=True)
class DerivedCall:
    """A planned call whose arguments the oracle computes from the results of the plan's earlier
    calls (an answer read off a tool's output, a value passed on to the next tool)."""

    name: str
    arguments: Callable[[Results], dict[str, Any]]

    def resolve(self, results: Results) -> ToolCall:
        """The call, with its arguments computed from ``results``."""
        return ToolCall(self.name, self.arguments(results))


PlanStep = ToolCall | DerivedCall


def finish_with(answer: Callable[[Results], Any]) -> DerivedCall:
    """The last step of a question's plan: ``finish`` with the answer that ``answer`` reads off
    the results of the plan's calls (never the stored true answer)."""
    return DerivedCall("finish", lambda results: {"answer": answer(results)})


@dataclass
class Episode:
    """A generated goal: its text, the oracle's plan of tool calls (ending with ``finish``) and,
    for query goals, the true answer (for judging only: the plan derives its answer from what
    its calls return, see :func:`finish_with`)."""

    goal: str
    plan: list[PlanStep]
    answer: Answer | None = None

    @classmethod
    def question(
        cls,
        goal: str,
        plan: Sequence[PlanStep],
        answer: Answer,
        derive: Callable[[Results], Any],
    ) -> Episode:
        """A question: ``plan`` looks the answer up, then ``finish`` submits what ``derive``
        reads off the plan's results; ``answer`` is the truth it is judged against."""
        return cls(goal, [*plan, finish_with(derive)], answer)


@dataclass(frozen=True)
class GoalTemplate:
    """A goal generator (a method of the environment) with its difficulty level and weight."""

    name: str
    level: int
    weight: float


def goal_template(level: int, weight: float = 1.0) -> Callable[[_Method], _Method]:
    """Declare a method ``(self, rng, split) -> Episode | None`` as a goal template of difficulty
    ``level`` (1: one lookup, 2: a few dependent calls, 3: several hops or an aggregate).
    Returning ``None`` (or raising :class:`NoGoal`) means "no suitable instance for this draw;
    draw again"."""

    def mark(method: _Method) -> _Method:
        setattr(method, _GOAL_MARK, (level, weight))
        return method

    return mark


def call(tool_name: str, /, **arguments: Any) -> ToolCall:
    """A planned tool call (for oracle plans)."""
    return ToolCall(tool_name, arguments)


# ------------------------------------------------------------------------------ config and env
@dataclass(frozen=True)
class ToolConfig(EnvConfig):
    """Knobs shared by the tool-use environments."""

    min_level: int = knob(
        1, low=1, high=3, doc="Easiest goal level: 1 one lookup, 2 dependent calls, 3 multi-hop."
    )
    max_level: int = knob(3, low=1, high=3, doc="Hardest goal level (see min_level).")
    action_format: str = knob(
        "any",
        choices=("any", "react", "json"),
        doc="Accepted call form: 'react' (Action: TOOL with Action Input: {...}), 'json' "
        "(a JSON function call) or 'any'.",
    )
    reward: str = knob(
        "finish",
        choices=("finish", "progress"),
        doc="'finish': the reward of finish(answer); 'progress': AgentGym's progress rate "
        "(subgoals met by any tool result so far), paid as its increases.",
    )
    prompt_style: str = knob(
        "llmgym",
        choices=("llmgym", "agentgym"),
        doc="'agentgym': AgentGym's wording ('Now new trial starts...', 'Observation: ...\\n"
        "Give me one action.', its format-error text).",
    )

    def validate(self) -> None:
        if self.min_level > self.max_level:
            raise ConfigError(
                f"{type(self).__name__}.min_level",
                f"{self.min_level} is larger than max_level={self.max_level}; "
                "allowed: min_level <= max_level",
            )


ToolConfigT = TypeVar("ToolConfigT", bound=ToolConfig)
_ANSWER_TYPE, _ = ArgType.from_annotation(str | float | bool | list[Any])
AGENTGYM_FORMAT_ERROR = (
    'Format error, please response in the format of  "Action: [your action] with Action '
    "Input: [your action input]"
)
"""AgentGym's tool servers' reply to a reply without an ``Action: ... with Action Input:``."""
_ANSWER_SUBGOAL = "\x00answer"


class ToolEnv(TextEnv[ToolConfigT]):
    """Base class of the tool-use environments: the agent calls tools of a simulated service and
    ends the episode with ``finish``.

    A subclass names its config (``class WeatherEnv(ToolEnv[WeatherConfig])``), declares its
    tools with :func:`tool` (or a :class:`ToolTable`) and its goal generators with
    :func:`goal_template`, builds its service in :meth:`_setup`, and may override :meth:`_judge`
    (how ``finish`` is scored) and :meth:`_argument_pool` (plausible values for random calls).

    The oracle plays the goal's plan. Each result of a planned call is kept as the agent saw it,
    and the plan's later steps (:class:`DerivedCall`, ending with :func:`finish_with`) compute
    their arguments from those results: the oracle's answer is read off the tools' outputs.
    """

    config_class = ToolConfig
    train_tasks: ClassVar[int] = 1000
    eval_tasks: ClassVar[int] = 200
    answer_required: ClassVar[bool] = True
    """Whether ``finish`` needs an answer (query goals) or may be called without one."""
    finish_description: ClassVar[str] = "Give your answer and end the task."
    answer_description: ClassVar[str] = (
        "The answer to the goal's question (a string, a number or an array)."
    )
    """How the ``finish`` tool and its ``answer`` are described (``finish`` is handled by
    :meth:`_step`, not by a method)."""
    abs_tolerance: ClassVar[float] = 0.01
    rel_tolerance: ClassVar[float] = 0.01
    service: ClassVar[str] = ""
    """The first paragraph of :meth:`rules`: what the service is."""
    notes: ClassVar[str] = ""
    """Usage notes shown after the tool list."""
    parameter_docs: ClassVar[Mapping[str, str]] = {}
    """Descriptions of parameters that several tools share (their docstrings leave them out)."""
    tools: ClassVar[dict[str, Tool]] = {}
    templates: ClassVar[tuple[GoalTemplate, ...]] = ()
    _signatures: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, Tool] = {}
        templates: dict[str, GoalTemplate] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                if getattr(member, _TOOL_MARK, False) is True:
                    found[name] = _tool_of(member, cls.parameter_docs)
                if isinstance(member, ToolTable):
                    found.update((t.name, t) for t in member.tools)
                goal = getattr(member, _GOAL_MARK, None)
                if isinstance(goal, tuple):
                    templates[name] = GoalTemplate(name, *goal)
        # the generic tools come last in listings
        found["check_valid_actions"] = found.pop("check_valid_actions")
        answer = Param("answer", _ANSWER_TYPE, cls.answer_description, cls.answer_required)
        found["finish"] = Tool("finish", cls.finish_description, (answer,), "", "finish")
        cls.tools = found
        cls.templates = tuple(templates.values())
        cls._signatures = ", ".join(t.signature for t in found.values())

    _episode: Episode
    _plan_position = 0
    _results: list[Any]
    """The results of the oracle plan's calls made so far (what later plan steps read)."""
    _subgoals: list[str]
    """``reward="progress"``: the subgoals (canonical JSON of results, or the answer marker)."""
    _met: set[str]
    _progress = 0.0

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the goal, whose plan computes arguments with closures: unpickling
        draws the same goal again from the task."""
        state = super().__getstate__()
        state.pop("_episode", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._task is not None:
            scratch = type(self)(self.config)
            scratch._task = self._task
            scratch._reset_task(self._task)
            self._episode = scratch._episode

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """A deep copy that shares the goal (never changed once drawn) instead of drawing it
        again."""
        copied = type(self).__new__(type(self))
        memo[id(self)] = copied
        state = super().__getstate__()
        if "_episode" in state:
            memo[id(state["_episode"])] = state["_episode"]
        copied.__dict__.update(copy.deepcopy(state, memo))
        return copied

    # ------------------------------------------------------------------ hooks for subclasses
    def _setup(self, task: Task[ToolConfigT], rng: TaskRng) -> None:
        """Build the episode's service state (before a goal is drawn)."""

    def _judge(self, answer: Any) -> tuple[float, bool]:
        """``(reward, success)`` for ``finish(answer)``; by default the answer is compared with
        the goal's true answer."""
        expected = self._episode.answer
        if expected is None:
            return 0.0, False
        correct = answers_match(answer, expected, self.abs_tolerance, self.rel_tolerance)
        return float(correct), correct

    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        """Plausible values of the argument ``param`` for random calls (``None``: by type)."""
        return None

    def _state_key(self) -> str:
        """Text identifying the episode's initial service state, when it is generated per task."""
        return ""

    # ------------------------------------------------------------------ generic tools
    @tool
    def check_valid_actions(self) -> list[str]:
        """List the names of the tools you can call.

        Returns:
            An array of tool names.
        """
        return list(self.tools)

    # ------------------------------------------------------------------ contract
    def task_ids(self, split: str = "train", config: ToolConfigT | None = None) -> TaskIdRange:
        return TaskIdRange(split, self.train_tasks if split == "train" else self.eval_tasks)

    def instance_key(self) -> str:
        return f"{self._episode.goal}\n{self._state_key()}"

    @classmethod
    def tool_schemas(cls) -> list[dict[str, Any]]:
        """Every tool in OpenAI's function-calling format (for native tool-calling agents)."""
        return [t.schema() for t in cls.tools.values()]

    def rules(self) -> str:
        matching = (
            f"numbers within max({self.abs_tolerance:g}, {self.rel_tolerance:.0%} of the true "
            "value); text ignoring case and punctuation; dates as YYYY-MM-DD; lists in any order"
        )
        if self.answer_required:
            answer_rule = f"finish(answer) ends the episode; the answer must be true ({matching})."
        else:
            answer_rule = (
                "finish(answer) ends the episode; the final state is checked, and for a question "
                f"the answer ({matching})."
            )
        calling = (
            "Call exactly one tool per turn. Write a short thought, then the call in either form:\n"
            'Thought: ...\nAction: TOOL with Action Input: {"argument": value}\n'
            'or as a JSON function call: {"name": "TOOL", "arguments": {"argument": value}}\n'
            f"Arguments are JSON: double-quoted strings, unquoted numbers. {answer_rule}"
        )
        tools = [t.describe() for t in self.tools.values()]
        return "\n\n".join(part for part in (self.service, *tools, self.notes, calling) if part)

    def _reset_task(self, task: Task[ToolConfigT]) -> tuple[str, str]:
        config = task.config
        self._setup(task, task.rng("state"))
        eligible = [t for t in self.templates if config.min_level <= t.level <= config.max_level]
        weights = [t.weight for t in eligible]
        rng = task.rng("goal")
        for _ in range(200):
            template = rng.weighted_choice(eligible, weights)
            try:
                episode = getattr(self, template.name)(rng, task.split)
            except NoGoal:
                continue
            if episode is not None:
                break
        else:
            raise RuntimeError(f"{type(self).__name__}: no goal could be generated for {task}")
        for step in episode.plan:
            if isinstance(step, ToolCall):
                self._plan_key(step)  # fails early on an invalid plan
        self._episode = episode
        self._plan_position = 0
        self._results = []
        if config.reward == "progress":
            self._subgoals = self._path_subgoals()
            self._met = set()
            self._progress = 0.0
        if config.prompt_style == "agentgym":
            observation = (
                "Now new trial starts.\nYou should perform actions to accomplish the goal: "
                f"{episode.goal}\nGive me one action."
            )
        else:
            observation = f"Goal: {self._episode.goal}\nAvailable tools: {self._signatures}"
        return observation, self._episode.goal

    # ------------------------------------------------------------------ progress rate
    def _path_subgoals(self) -> list[str]:
        """The progress rate's subgoals: the result of each call on the oracle's path (played
        on a copy of the episode, so nothing here changes) and, for a question, the answer."""
        scratch = copy.deepcopy(self)
        scratch._subgoals, scratch._met = [], set()
        plan = scratch._episode.plan
        for _ in range(2 * len(plan)):
            if scratch._plan_position >= len(plan) - 1:
                break
            scratch._act(scratch.oracle_action())
        subgoals = list(dict.fromkeys(_KEY_ENCODER.encode(r) for r in scratch._results))
        if self._episode.answer is not None:
            subgoals.append(_ANSWER_SUBGOAL)
        return subgoals

    def _subgoal_rate(self) -> float:
        """The fraction of the subgoals met so far (AgentBoard's progress rate)."""
        return len(self._met) / max(len(self._subgoals), 1)

    def _progress_rate(self) -> float:
        """The progress rate after the latest step (before the running maximum); Movie and
        Academia report the subgoal rate as it is, the other environments override this."""
        return self._subgoal_rate()

    def _meet_subgoals(self, result: Any) -> None:
        """Mark the subgoals a tool result (parsed JSON, or text) meets: a path result equal to
        it, and the answer when any value in it matches the answer."""
        key = _KEY_ENCODER.encode(result)
        if key in self._subgoals:
            self._met.add(key)
        answer = self._episode.answer
        tolerances = (self.abs_tolerance, self.rel_tolerance)
        if answer is not None and _holds_answer(result, answer, *tolerances):
            self._met.add(_ANSWER_SUBGOAL)

    def _plan_key(self, planned: ToolCall) -> str:
        arguments, problems = self.tools[planned.name].bind(planned.arguments)
        if problems:
            raise ValueError(f"invalid oracle call {planned}: {problems}")
        return _call_key(planned.name, arguments)

    def _step(self, action: str) -> Transition:
        transition = self._act(action)
        config = self.task.config
        if config.reward == "progress":
            progress = max(self._progress, self._progress_rate())
            transition.reward, self._progress = progress - self._progress, progress
            transition.info = {**(transition.info or {}), "progress": progress}
        if config.prompt_style == "agentgym" and transition.observation != AGENTGYM_FORMAT_ERROR:
            # AgentGym's servers frame every observation but the format error, sent bare
            transition.observation = f"Observation: {transition.observation}\nGive me one action."
        return transition

    def _act(self, action: str) -> Transition:
        """The step itself, rewarded as the ``finish`` reward."""
        parsed = parse_tool_call(action)
        if isinstance(parsed, str):
            if self.task.config.prompt_style == "agentgym":
                return self.invalid(AGENTGYM_FORMAT_ERROR)
            return self.invalid(parsed)
        wanted = self.task.config.action_format
        if wanted != "any" and parsed.form != wanted:
            form = (
                "Action: TOOL with Action Input: {...}"
                if wanted == "react"
                else '{"name": "TOOL", "arguments": {...}}'
            )
            return self.invalid(f"This task accepts tool calls only in the form {form}.")
        selected = self.tools.get(parsed.name)
        if selected is None:
            return self.invalid(
                f"Unknown tool {json.dumps(parsed.name)}. The tools are: {', '.join(self.tools)}."
            )
        arguments, problems = selected.bind(parsed.arguments)
        if problems:
            return self.invalid("\n".join([*problems, selected.usage()]))
        called = {"name": selected.name, "arguments": arguments}
        if selected.name == "finish":
            return self._finish(arguments.get("answer"), called)
        try:
            result = getattr(self, selected.method)(**dict(selected.presets), **arguments)
        except ToolError as error:
            return self.invalid(f"Error from {selected.name}: {error}", tool_call=called)
        observation = _render(result)
        if self.task.config.reward == "progress":
            self._meet_subgoals(result if isinstance(result, str) else json.loads(observation))
        if self._plan_position < len(self._episode.plan) and _call_key(
            selected.name, arguments
        ) == self._plan_key(self._planned_call()):
            self._plan_position += 1
            self._results.append(result if isinstance(result, str) else json.loads(observation))
        return Transition(observation, info={"tool_call": called})

    def _planned_call(self) -> ToolCall:
        """The plan's next call (the last one, ``finish``, once every other call has been seen),
        with derived arguments computed from the results seen so far."""
        plan = self._episode.plan
        step = plan[min(self._plan_position, len(plan) - 1)]
        return step if isinstance(step, ToolCall) else step.resolve(self._results)

    def _finish(self, answer: Any, called: dict[str, Any]) -> Transition:
        reward, success = self._judge(answer)
        expected = self._episode.answer
        progress = self.task.config.reward == "progress"
        if (
            progress
            and expected is not None
            and answers_match(answer, expected, self.abs_tolerance, self.rel_tolerance)
        ):
            self._met.add(_ANSWER_SUBGOAL)
        shown = "" if answer is None else f" Your answer: {_render(answer)}."
        info: dict[str, Any] = {"tool_call": called}
        if self._episode.answer is not None:
            info["expected_answer"] = self._episode.answer.shown()
        return Transition(
            f"Task finished.{shown}", reward=reward, terminated=True, success=success, info=info
        )

    def oracle_action(self) -> str:
        """The next call of the goal's plan: real tool calls whose results carry the answer,
        then ``finish`` with the answer read off those results. Calls it has seen succeed are
        not repeated."""
        return format_call(self._planned_call())

    def sample_action(self, rng: np.random.Generator) -> str:
        """A random, well-typed call of a random tool (arguments from the service where the
        environment lists plausible values), in either call form."""
        names = list(self.tools)
        selected = self.tools[names[int(rng.integers(len(names)))]]
        arguments = self._sample_arguments(selected, rng)
        sampled = ToolCall(selected.name, arguments)
        action_format = self.task.config.action_format
        if action_format == "json" or (action_format == "any" and rng.random() < 0.3):
            return json.dumps({"name": sampled.name, "arguments": arguments})
        return format_call(sampled)

    def _sample_arguments(self, selected: Tool, rng: np.random.Generator) -> dict[str, Any]:
        """Random arguments for ``selected``: every required one, each optional one by a coin."""
        arguments = {}
        for param in selected.params:
            if not param.required and rng.random() < 0.5:
                continue
            arguments[param.name] = self._sample_value(param, rng)
        return arguments

    def _sample_value(self, param: Param, rng: np.random.Generator) -> Any:
        pool = self._argument_pool(param.name)
        if pool:
            return pool[int(rng.integers(len(pool)))]
        return _random_value(param.type, rng)


class CurrentDateTool:
    """For a :class:`ToolEnv` whose user has a current date (``_today``, set in ``_setup``): the
    tool that tells it. List it before the environment's base class to list the tool first."""

    _today: date
    date_call: ClassVar[ToolCall] = ToolCall("get_user_current_date")
    """The plan step that asks for the date (before a question relative to today)."""

    @tool
    def get_user_current_date(self) -> str:
        """Get the user's current date.

        Returns:
            The current date as YYYY-MM-DD.
        """
        return self._today.isoformat()


def _random_value(arg_type: ArgType, rng: np.random.Generator) -> Any:
    if arg_type.enum:
        return arg_type.enum[int(rng.integers(len(arg_type.enum)))]
    if arg_type.kind == "union":
        return _random_value(arg_type.options[int(rng.integers(len(arg_type.options)))], rng)
    if arg_type.kind == "integer":
        return int(rng.integers(1, 11))
    if arg_type.kind == "number":
        return round(float(rng.uniform(-50, 50)), 2)
    if arg_type.kind == "boolean":
        return bool(rng.integers(2))
    if arg_type.kind == "array":
        items = arg_type.items or ArgType("string")
        return [_random_value(items, rng) for _ in range(int(rng.integers(1, 3)))]
    return "x" * int(rng.integers(1, 6))


_KEY_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
_RESULT_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _holds_answer(value: Any, answer: Answer, abs_tolerance: float, rel_tolerance: float) -> bool:
    """Whether a tool result holds the answer: the result itself, or any value nested in it,
    matches it (as :func:`answers_match` compares a ``finish`` answer)."""
    if answers_match(value, answer, abs_tolerance, rel_tolerance):
        return True
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return any(_holds_answer(item, answer, abs_tolerance, rel_tolerance) for item in value)
    return False


def _call_key(name: str, arguments: Mapping[str, Any]) -> str:
    return name + _KEY_ENCODER.encode(arguments)


def _render(result: Any) -> str:
    if isinstance(result, str):
        return result
    return _RESULT_ENCODER.encode(result)
