"""Typed, validated environment configurations with a JSON Schema derived from the code.

Every environment describes its difficulty knobs as a frozen dataclass deriving from
:class:`EnvConfig`, declaring each field with :func:`knob`::

    @dataclass(frozen=True)
    class WordleConfig(EnvConfig):
        word_length: int = knob(5, low=4, high=6, doc="Letters per word.")
        hard_mode: bool = knob(False, doc="Revealed hints must be used in later guesses.")

Values are checked when the config is built, and a bad value raises :class:`ConfigError` naming
the field, the value and what is allowed. :meth:`EnvConfig.json_schema` turns the same metadata
into JSON Schema, which is what LLM-driven configuration (EnvGen) reads.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from llmgym.errors import ConfigError

__all__ = ["ConfigError", "ConfigT", "EnvConfig", "describe_allowed", "knob"]

_MISSING = dataclasses.MISSING
C = TypeVar("C", bound="EnvConfig")
ConfigT = TypeVar("ConfigT", bound="EnvConfig")
"""An environment's config class, as in ``class MazeEnv(TextEnv[MazeConfig])``."""


def knob(
    default: Any = _MISSING,
    *,
    default_factory: Any = _MISSING,
    low: float | None = None,
    high: float | None = None,
    choices: Sequence[Any] | None = None,
    doc: str = "",
) -> Any:
    """Declare a config field with its allowed values.

    Args:
        default: The default value (use ``default_factory`` for nested configs or mappings).
        default_factory: A zero-argument callable that builds the default.
        low: Inclusive lower bound for numbers (and for the values of a mapping field).
        high: Inclusive upper bound for numbers (and for the values of a mapping field).
        choices: The allowed values. A field typed ``str | float`` with both ``choices`` and a
            range accepts either one of the choices or a number in the range.
        doc: One sentence describing the knob; it becomes the schema's ``description``.
    """
    metadata = {
        "low": low,
        "high": high,
        "choices": tuple(choices) if choices else None,
        "doc": doc,
    }
    if default_factory is not _MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _type_parts(annotation: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _describe_range(meta: Mapping[str, Any]) -> str:
    parts = []
    if meta["choices"] is not None:
        parts.append("one of " + ", ".join(repr(c) for c in meta["choices"]))
    if meta["low"] is not None or meta["high"] is not None:
        low = "-inf" if meta["low"] is None else meta["low"]
        high = "inf" if meta["high"] is None else meta["high"]
        parts.append(f"a number in [{low}, {high}]")
    return " or ".join(parts)


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    """Base class of every environment's configuration (a frozen, validated dataclass)."""

    description: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = self._check_field(field, getattr(self, field.name))
            object.__setattr__(self, field.name, value)
        self.validate()

    def validate(self) -> None:
        """Cross-field checks; override and raise :class:`ConfigError` on a violation."""

    def require_at_most(self, name: str, limit: str) -> None:
        """A cross-field check for :meth:`validate`: raise :class:`ConfigError` unless the field
        ``name`` is at most the field ``limit`` (``min_depth <= max_depth``)."""
        value, bound = getattr(self, name), getattr(self, limit)
        if value > bound:
            raise ConfigError(
                f"{type(self).__name__}.{name}",
                f"{value} is larger than {limit}={bound}; allowed: {name} <= {limit}",
            )

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_dict(cls: type[C], data: Mapping[str, Any] | None) -> C:
        """Build a config from a (JSON-like) mapping; unknown keys raise :class:`ConfigError`."""
        data = dict(data or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"{cls.__name__}.{unknown[0]}",
                f"unknown field; the fields are {', '.join(sorted(known)) or '(none)'}",
            )
        return cls(**data)

    @classmethod
    def coerce(cls: type[C], value: EnvConfig | Mapping[str, Any] | None) -> C:
        """Accept an instance of this class, a mapping of fields, or ``None`` (the defaults)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls.from_dict(value)
        raise ConfigError(
            cls.__name__, f"expected {cls.__name__} or a dict, got {type(value).__name__}"
        )

    def merged(self: C, overrides: EnvConfig | Mapping[str, Any] | None) -> C:
        """A copy with ``overrides`` applied: a mapping changes only the fields it names
        (nested configs merge recursively); an instance of this class replaces everything."""
        if overrides is None:
            return self
        if isinstance(overrides, type(self)):
            return overrides
        if not isinstance(overrides, Mapping):
            raise ConfigError(
                type(self).__name__, f"expected a dict of overrides, got {type(overrides).__name__}"
            )
        known = {f.name for f in dataclasses.fields(self)}
        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            if key not in known:
                raise ConfigError(
                    f"{type(self).__name__}.{key}",
                    f"unknown field; the fields are {', '.join(sorted(known))}",
                )
            current = getattr(self, key)
            if isinstance(current, EnvConfig) and isinstance(value, Mapping):
                value = current.merged(value)
            changes[key] = value
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict of every field."""
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, EnvConfig):
                value = value.to_dict()
            elif isinstance(value, Mapping):
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[field.name] = value
        return out

    # -- schema --------------------------------------------------------------------------------
    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """JSON Schema (draft 2020-12) of this config, derived from the field declarations."""
        hints = _hints(cls)
        properties = {}
        for field in dataclasses.fields(cls):
            properties[field.name] = _field_schema(field, hints[field.name])
        schema: dict[str, Any] = {
            "title": cls.__name__,
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
        doc = cls.description or (cls.__doc__ or "").strip().split("\n\n")[0]
        if doc:
            schema["description"] = " ".join(doc.split())
        return schema

    # -- validation ------------------------------------------------------------------------------
    def _check_field(self, field: dataclasses.Field, value: Any) -> Any:
        name = f"{type(self).__name__}.{field.name}"
        meta = _meta(field)
        annotation = _hints(type(self))[field.name]
        parts = _type_parts(annotation)
        nested = [p for p in parts if isinstance(p, type) and issubclass(p, EnvConfig)]
        if nested:
            config_cls = nested[0]
            if isinstance(value, config_cls):
                return value
            if isinstance(value, Mapping):
                try:
                    return config_cls.from_dict(value)
                except ConfigError as error:
                    raise ConfigError(
                        f"{name}.{error.field.split('.', 1)[-1]}", str(error).split(": ", 1)[-1]
                    ) from None
            raise ConfigError(name, f"expected a {config_cls.__name__} or a dict, got {value!r}")
        if any(typing.get_origin(p) in (dict, Mapping) or p in (dict, Mapping) for p in parts):
            return _check_mapping(name, value, meta)
        if value is None:
            if type(None) in parts:
                return None
            raise ConfigError(name, f"must not be None; allowed: {_allowed(parts, meta)}")
        if meta["choices"] is not None and _is_hashable(value) and value in meta["choices"]:
            return value
        if isinstance(value, bool):
            if bool in parts:
                return value
            raise ConfigError(name, f"{value!r} is not allowed; allowed: {_allowed(parts, meta)}")
        if isinstance(value, (int, float)) and (int in parts or float in parts):
            if int in parts and float not in parts:
                if isinstance(value, float) and not value.is_integer():
                    raise ConfigError(
                        name, f"{value!r} is not an integer; allowed: {_allowed(parts, meta)}"
                    )
                value = int(value)
            elif isinstance(value, int):
                value = float(value)
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(name, f"{value!r} is not a finite number")
            low, high = meta["low"], meta["high"]
            if (low is not None and value < low) or (high is not None and value > high):
                raise ConfigError(
                    name,
                    f"{value!r} is outside the allowed range; allowed: {_allowed(parts, meta)}",
                )
            return value
        if isinstance(value, str) and str in parts and meta["choices"] is None:
            return value
        raise ConfigError(name, f"{value!r} is not allowed; allowed: {_allowed(parts, meta)}")


def _is_hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _allowed(parts: tuple[Any, ...], meta: Mapping[str, Any]) -> str:
    described = _describe_range(meta)
    if described:
        return described
    if bool in parts:
        return "true or false"
    names = [getattr(p, "__name__", str(p)) for p in parts]
    return "a value of type " + " | ".join(names)


def _check_mapping(name: str, value: Any, meta: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(name, f"expected a mapping of names to numbers, got {value!r}")
    allowed_keys = meta["choices"]
    out: dict[str, Any] = {}
    for key, amount in value.items():
        if allowed_keys is not None and key not in allowed_keys:
            raise ConfigError(
                f"{name}.{key}", f"unknown key; allowed keys: {', '.join(allowed_keys)}"
            )
        if isinstance(amount, bool) or not isinstance(amount, (int, float)):
            raise ConfigError(f"{name}.{key}", f"{amount!r} is not a number")
        low, high = meta["low"], meta["high"]
        if (low is not None and amount < low) or (high is not None and amount > high):
            raise ConfigError(
                f"{name}.{key}", f"{amount!r} is outside the allowed range [{low}, {high}]"
            )
        out[str(key)] = amount
    return out


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, computed once per class."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _meta(field: dataclasses.Field) -> Mapping[str, Any]:
    defaults = {"low": None, "high": None, "choices": None, "doc": ""}
    return {**defaults, **field.metadata}


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _field_schema(field: dataclasses.Field, annotation: Any) -> dict[str, Any]:
    meta = _meta(field)
    parts = _type_parts(annotation)
    schema: dict[str, Any]
    nested = [p for p in parts if isinstance(p, type) and issubclass(p, EnvConfig)]
    if nested:
        schema = nested[0].json_schema()
    elif any(typing.get_origin(p) in (dict, Mapping) or p in (dict, Mapping) for p in parts):
        values: dict[str, Any] = {"type": "integer"}
        if meta["low"] is not None:
            values["minimum"] = meta["low"]
        if meta["high"] is not None:
            values["maximum"] = meta["high"]
        schema = {"type": "object", "additionalProperties": values}
        if meta["choices"] is not None:
            schema["propertyNames"] = {"enum": list(meta["choices"])}
    else:
        options: list[dict[str, Any]] = []
        if meta["choices"] is not None:
            options.append({"enum": list(meta["choices"])})
        numeric = [p for p in parts if p in (int, float)]
        if numeric and (
            meta["low"] is not None or meta["high"] is not None or meta["choices"] is None
        ):
            number: dict[str, Any] = {"type": "number" if float in numeric else "integer"}
            if meta["low"] is not None:
                number["minimum"] = meta["low"]
            if meta["high"] is not None:
                number["maximum"] = meta["high"]
            options.append(number)
        for part in parts:
            if part in (bool, str) and meta["choices"] is None:
                options.append({"type": _JSON_TYPES[part]})
        if type(None) in parts:
            options.append({"type": "null"})
        schema = options[0] if len(options) == 1 else {"anyOf": options}
    if field.default is not _MISSING:
        default = field.default
        schema["default"] = list(default) if isinstance(default, tuple) else default
    elif field.default_factory is not _MISSING:
        default = field.default_factory()
        schema["default"] = default.to_dict() if isinstance(default, EnvConfig) else default
    if meta["doc"]:
        schema["description"] = meta["doc"]
    return schema


def describe_allowed(schema: Mapping[str, Any]) -> str:
    """A short human (and LLM) readable description of what one field of a config's JSON Schema
    accepts: ``2..30``, ``"local", "full"``, ``"rare", "common" or 0.0..1.0``,
    ``keys wood, stone; values 0..9``."""
    if "anyOf" in schema:
        return " or ".join(describe_allowed(option) for option in schema["anyOf"])
    if "enum" in schema:
        return ", ".join(json.dumps(v) for v in schema["enum"])
    if schema.get("type") == "object":
        if "properties" in schema:
            return "an object with " + ", ".join(schema["properties"])
        keys = schema.get("propertyNames", {}).get("enum")
        values = schema.get("additionalProperties", {})
        low, high = values.get("minimum", "-inf"), values.get("maximum", "inf")
        return (f"keys {', '.join(keys)}; " if keys else "") + f"values {low}..{high}"
    if "minimum" in schema or "maximum" in schema:
        low, high = schema.get("minimum", "-inf"), schema.get("maximum", "inf")
        return f"{schema.get('type', 'number')} {low}..{high}"
    return str(schema.get("type", "any value"))
