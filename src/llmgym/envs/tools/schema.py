"""What a tool is, as data: the JSON types of its arguments (:class:`ArgType`), its parameters
(:class:`Param`) and the tool itself (:class:`Tool`), with its JSON Schema, the way it is listed
in the rules and the checking of a call's arguments against it.

A call whose arguments are missing, unknown or mistyped is answered with one message per
problem, naming the tool, the argument and the expected type; so is a number no tool can
compute with, at any depth of an argument (NaN, an infinity such as JSON's ``1e309``, an
integer beyond the float range such as ``10**400``).
"""

from __future__ import annotations

import json
import math
import sys
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = ["ArgType", "Param", "Tool", "describe_value"]

_LARGEST_INTEGER = int(sys.float_info.max)


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
            raise ValueError(f"must be {self.name}, got {describe_value(value)}")
        if kind == "any":
            if isinstance(value, dict) or value is None:
                got = describe_value(value)
                raise ValueError(f"must be a string, number or array, got {got}")
            return value
        if kind == "string" and isinstance(value, str):
            if self.enum:
                for allowed in self.enum:
                    if value.strip().lower() == allowed.lower():
                        return allowed
                choices = ", ".join(json.dumps(v) for v in self.enum)
                raise ValueError(f"must be one of {choices}, got {describe_value(value)}")
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
        raise ValueError(f"must be {_with_article(self.name)}, got {describe_value(value)}")

    def sample(self, rng: np.random.Generator) -> Any:
        """A random value of the type (for random calls): small numbers, short strings."""
        if self.enum:
            return self.enum[int(rng.integers(len(self.enum)))]
        if self.kind == "union":
            return self.options[int(rng.integers(len(self.options)))].sample(rng)
        if self.kind == "integer":
            return int(rng.integers(1, 11))
        if self.kind == "number":
            return round(float(rng.uniform(-50, 50)), 2)
        if self.kind == "boolean":
            return bool(rng.integers(2))
        if self.kind == "array":
            items = self.items or ArgType("string")
            return [items.sample(rng) for _ in range(int(rng.integers(1, 3)))]
        return "x" * int(rng.integers(1, 6))

    def placeholder(self) -> Any:
        """An example value of the type, for a reminder of how to call a tool."""
        if self.enum:
            return self.enum[0]
        return {
            "string": "...",
            "integer": 1,
            "number": 1.5,
            "boolean": True,
            "array": [],
            "object": {},
        }.get(self.kind, "...")


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


def describe_value(value: Any) -> str:
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
    A call runs the ``method`` of the toolkit that declares the tool with the call's arguments
    and the ``presets`` (fixed arguments, for tools declared in a
    :class:`~llmgym.envs.tools.toolkit.ToolTable`)."""

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
                f"{describe_value(arguments)}. {self.usage()}"
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
        example = {p.name: p.type.placeholder() for p in self.params if p.required}
        return f"Call it as: Action: {self.name} with Action Input: {json.dumps(example)}"
