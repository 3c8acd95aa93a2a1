"""Tolerant reading of designer replies, and validation of the configs they propose.

LLMs wrap JSON in prose and code fences, leave trailing commas and comments, write Python's
``True``/``None``, quote numbers, or emit one fenced block per environment (as EnvGen's prompt
asked). All of that is accepted; what is still invalid is reported field by field, with the
allowed range, so that it can be sent back to the model.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmgym.core.config import EnvConfig
from llmgym.errors import ConfigError

__all__ = ["Design", "ParsedReply", "extract_json", "parse_designs", "validate_overrides"]

_FENCE = re.compile(r"```(?:json|JSON|python|js|javascript)?[ \t]*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_LINE_COMMENT = re.compile(r"(?m)(^|[^:\"'\\])//[^\n]*")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_MAX_REPLY = 200_000


@dataclass(frozen=True)
class Design:
    """One designed environment: why it exists, and its config overrides (validated)."""

    purpose: str
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"purpose": self.purpose, "config": self.config}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Design:
        return cls(str(data.get("purpose", "")), dict(data.get("config", {})))


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    cleaned = _TRAILING_COMMA.sub(r"\1", _LINE_COMMENT.sub(r"\1", text))
    for python, json_word in _PY_LITERALS.items():
        cleaned = re.sub(rf"\b{python}\b", json_word, cleaned)
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError:
        pass
    try:  # single-quoted, Python-style literals; literal_eval never runs code
        return ast.literal_eval(_TRAILING_COMMA.sub(r"\1", _LINE_COMMENT.sub(r"\1", text)))
    except (ValueError, SyntaxError, MemoryError, RecursionError) as error:
        raise ValueError(f"not valid JSON ({type(error).__name__})") from None


def _outermost(text: str) -> str | None:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    end = max(text.rfind("}"), text.rfind("]"))
    return text[start : end + 1] if end > start else None


def extract_json(reply: str) -> Any:
    """The JSON value in a reply: fenced blocks (several are collected into a list), or the
    outermost ``{...}``/``[...]`` span. Raises ``ValueError`` saying why when there is none."""
    text = _THINK.sub("", reply[:_MAX_REPLY])
    blocks = [b for b in _FENCE.findall(text) if b.strip()]
    if blocks:
        values = []
        for block in blocks:
            try:
                values.append(_loads(block.strip()))
            except ValueError:
                continue
        if len(values) == 1:
            return values[0]
        if values:
            return values
    span = _outermost(text)
    if span is None:
        raise ValueError("the reply contains no JSON object")
    return _loads(span)


def _items(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        for key in ("environments", "envs", "configs", "designs"):
            if isinstance(value.get(key), list):
                return list(value[key])
        if "config" in value or "purpose" in value:
            return [value]
        if (
            value
            and all(isinstance(v, Mapping) for v in value.values())
            and all(re.match(r"(?i)env", str(k)) for k in value)
        ):
            return list(value.values())  # {"Environment 1": {...}, ...}
        return [value]
    if isinstance(value, list):
        return value
    return [value]


def _coerce(value: Any) -> Any:
    """Numbers and booleans written as strings become numbers and booleans."""
    if isinstance(value, Mapping):
        return {str(k): _coerce(v) for k, v in value.items()}
    if isinstance(value, str):
        stripped = value.strip()
        lowered = stripped.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        try:
            number = float(stripped)
        except ValueError:
            return value
        return int(number) if number.is_integer() and "." not in stripped else number
    return value


def validate_overrides(
    config_class: type[EnvConfig], overrides: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """Check every field on its own (so all problems are reported at once) and then together.
    Returns the valid overrides and the error messages."""
    base = config_class()
    clean: dict[str, Any] = {}
    errors: list[str] = []
    for key, value in overrides.items():
        try:
            base.merged({key: value})
        except ConfigError as error:
            errors.append(str(error))
        else:
            clean[key] = value
    try:
        base.merged(clean)
    except ConfigError as error:  # the valid fields conflict with each other: nothing to salvage
        errors.append(str(error))
        clean = {}
    return clean, errors


@dataclass
class ParsedReply:
    """What a designer reply yielded.

    Attributes:
        designs: Designs whose every value is valid.
        partial: Designs that had invalid values, with those values removed.
        problems: One message per problem, naming the environment, field and allowed range.
    """

    designs: list[Design] = field(default_factory=list)
    partial: list[Design] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def parse_designs(reply: str, config_class: type[EnvConfig]) -> ParsedReply:
    """Read the designs of a reply and validate each config against ``config_class``."""
    result = ParsedReply()
    try:
        value = extract_json(reply)
    except ValueError as error:
        result.problems.append(
            f"Could not read the reply: {error}. Send the environments as one JSON object."
        )
        return result
    for number, item in enumerate(_items(value), start=1):
        if not isinstance(item, Mapping):
            result.problems.append(
                f"Environment {number}: expected an object with 'purpose' and 'config', "
                f"got {item!r:.80}"
            )
            continue
        if "config" in item:
            purpose, config = str(item.get("purpose", "")), item.get("config")
        else:
            purpose = str(item.get("purpose", ""))
            config = {k: v for k, v in item.items() if k != "purpose"}
        if not isinstance(config, Mapping):
            result.problems.append(
                f"Environment {number}: 'config' must be an object, got {config!r:.80}"
            )
            continue
        if not config:
            result.problems.append(
                f"Environment {number}: 'config' sets no parameter (that is the original game)"
            )
            continue
        clean, errors = validate_overrides(config_class, _coerce(config))
        if errors:
            result.problems += [f"Environment {number}: {message}" for message in errors]
            if clean:
                result.partial.append(Design(purpose, clean))
            continue
        result.designs.append(Design(purpose, clean))
    return result
