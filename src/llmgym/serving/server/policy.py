"""What a client may ask of a server's environments, whatever their configs allow: limits on the
config fields that raise the server's resource use, and no file paths unless the operator allows
a directory.

Config overrides reach an environment in three places — the ``config`` and knob arguments of a
new session, a reset's ``options.config`` and the ``config`` argument of a remote ``task_ids``
call — and :class:`ConfigPolicy` checks all three before the environment sees them. A refused
value is a 422 ``invalid_config`` naming the field (``SQLConfig.time_limit_ms``) and the server's
limit. A path outside the allowed directory gets the same answer whether it exists or not.
"""

from __future__ import annotations

import functools
import importlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from llmgym.envs import get_entry
from llmgym.errors import InvalidRequestError
from llmgym.originals import GENERATED, sources_of_env

__all__ = ["DEFAULT_CONFIG_LIMITS", "ConfigLimit", "ConfigPolicy", "config_class"]


@dataclass(frozen=True)
class ConfigLimit:
    """A server's limit on one config field of one environment: a ``maximum``, or the only
    ``values`` a client may choose (the environment's own checks still apply on top).

    Attributes:
        env_id: ``"llmgym/SQL-v0"``.
        field: A field of the environment's config, ``"time_limit_ms"``.
        maximum: The largest number a client may set.
        values: The values a client may set (each new value may build and keep something big,
            as a WebShop catalogue).
    """

    env_id: str
    field: str
    maximum: float | None = None
    values: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        if (self.maximum is None) == (self.values is None):
            raise ValueError(f"{self.name}: give either a maximum or the allowed values")
        if self.maximum is not None and not math.isfinite(self.maximum):
            raise ValueError(f"{self.name}: the maximum must be a finite number")
        object.__setattr__(self, "env_id", get_entry(self.env_id).id)

    @property
    def name(self) -> str:
        """``llmgym/SQL-v0.time_limit_ms``."""
        return f"{self.env_id}.{self.field}"

    @property
    def flag(self) -> str:
        """The ``llmgym serve`` flag that sets this limit, as a template."""
        if self.maximum is not None:
            return f"--config-max {self.name}=N"
        return f"--config-values {self.name}=V[,V...]"

    @classmethod
    def parse(cls, text: str, kind: Literal["maximum", "values"]) -> ConfigLimit:
        """A limit from a flag's value: ``ENV_ID.FIELD=N`` (a maximum) or
        ``ENV_ID.FIELD=V[,V...]`` (the allowed values; numbers where they parse as numbers).

        Raises:
            ValueError: Not of that form, or an unknown environment.
        """
        target, equals, value = text.partition("=")
        env_id, dot, field = target.rpartition(".")
        if not (equals and dot and env_id and field and value):
            raise ValueError(f"{text!r}: expected ENV_ID.FIELD=VALUE, e.g. llmgym/SQL-v0.field=5")
        try:
            get_entry(env_id)
        except KeyError as error:
            raise ValueError(str(error.args[0])) from None
        if kind == "maximum":
            try:
                return cls(env_id, field, maximum=float(value))
            except ValueError:
                raise ValueError(f"{text!r}: the maximum must be a number") from None
        return cls(env_id, field, values=tuple(_number_or_text(v) for v in value.split(",")))

    def refusal(self, value: Any) -> str | None:
        """Why ``value`` is over this limit, or ``None`` when it is within it (values of the
        wrong type are left to the environment's config, which refuses them)."""
        if self.maximum is not None:
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if number and value > self.maximum:
                return (
                    f"{value!r} is over this server's limit; allowed here: at most "
                    f"{self.maximum:g} (the server's operator sets it with {self.flag})"
                )
            return None
        allowed = self.values or ()
        if not any(_same(value, v) for v in allowed):
            return (
                f"{value!r} is not allowed by this server; allowed here: "
                f"{', '.join(map(repr, allowed))} (the server's operator sets them with "
                f"{self.flag})"
            )
        return None


def _number_or_text(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _same(value: Any, allowed: Any) -> bool:
    if isinstance(value, bool) or isinstance(allowed, bool):
        return value is allowed
    return bool(value == allowed)


DEFAULT_CONFIG_LIMITS: tuple[ConfigLimit, ...] = (
    ConfigLimit("llmgym/SQL-v0", "time_limit_ms", maximum=1000),
    ConfigLimit("llmgym/WebShop-v0", "catalogue_size", values=(10_000,)),
    ConfigLimit("llmgym/WebShop-v0", "catalogue_seed", values=(0,)),
    ConfigLimit("llmgym/WebArena-v0", "data_seed", values=(0,)),
    ConfigLimit("llmgym/SearchQA-v0", "corpus_seed", values=(0,)),
)
"""The limits of a server started without ``--config-max``/``--config-values``: a SQL query
runs for at most the default second, and WebShop, WebArena and SearchQA serve their default
data only: each new catalogue size or seed, WebArena data seed (seconds of CPU and tens of MB
for its sites' databases and task instances) or SearchQA corpus seed builds data and keeps it
(in bounded caches, but an operator who allows more should allow few)."""


@functools.cache
def config_class(env_id: str) -> Any:
    """The config class of a registered environment (imported, not instantiated)."""
    module, _, name = get_entry(env_id).entry_point.partition(":")
    return getattr(importlib.import_module(module), name).config_class


class ConfigPolicy:
    """Checks a client's config overrides against the server's limits and file rules.

    Args:
        limits: The limits (at most one per environment and field).
        file_dir: The directory whose files clients may name in a config field that names a
            file (the environment table's ``file_fields``); ``None``: no paths at all.
        originals: The original dataset each environment plays (``{"llmgym/SQL-v0":
            "bird"}``, from ``llmgym serve --data``); the others play generated tasks. Which
            dataset an environment reads, and from which directory, only the operator sets: a
            client's ``source`` must be the one served and its ``data_dir`` the ``""`` clients
            are shown (both are then dropped, as they change nothing); any other value is
            refused.
    """

    def __init__(
        self,
        limits: Iterable[ConfigLimit],
        file_dir: str | None = None,
        *,
        originals: Mapping[str, str] | None = None,
    ) -> None:
        self.originals = dict(originals or {})
        self.limits: dict[str, dict[str, ConfigLimit]] = {}
        for limit in limits:
            self.limits.setdefault(limit.env_id, {})[limit.field] = limit
        self.file_dir = os.path.realpath(file_dir) if file_dir is not None else None

    def validate(self) -> None:
        """Check every limit against its environment's config schema (the field exists, a
        maximum is a number within the field's own range); environments whose extra is not
        installed are skipped.

        Raises:
            ValueError: A limit that cannot apply.
        """
        for env_id, limits in self.limits.items():
            if not get_entry(env_id).available:
                continue
            properties = config_class(env_id).json_schema()["properties"]
            for field, limit in limits.items():
                if field not in properties:
                    raise ValueError(
                        f"{limit.name}: {env_id}'s config has no field {field!r}; its fields: "
                        f"{', '.join(properties)}"
                    )
                numeric = [
                    s
                    for s in [properties[field], *properties[field].get("anyOf", ())]
                    if s.get("type") in ("integer", "number")
                ]
                if limit.maximum is not None:
                    if not numeric:
                        raise ValueError(f"{limit.name} is not a number: give --config-values")
                    top = numeric[0].get("maximum")
                    if top is not None and limit.maximum > top:
                        raise ValueError(
                            f"{limit.name}={limit.maximum:g} is above what the environment "
                            f"allows ({top:g})"
                        )

    def applies(self, env_id: str) -> bool:
        """Whether any limit or file rule concerns ``env_id``'s config."""
        limits, file_fields = self._rules(env_id)
        return bool(limits or file_fields or self._operator_values(env_id))

    def check_make(self, env_id: str, make_kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """A new session's ``gymnasium.make`` arguments, checked: its ``config`` and any knob
        given as an argument. Returns them with file paths resolved.

        Raises:
            InvalidRequestError: A value over a limit, or a file path (``invalid_config``).
        """
        kwargs = dict(make_kwargs)
        if self.applies(env_id):
            if "config" in kwargs:
                kwargs["config"] = self.check(env_id, kwargs["config"])
            kwargs.update(self.check(env_id, kwargs))
        return kwargs

    def check(self, env_id: str, overrides: Any) -> Any:
        """Config overrides (a mapping of fields; anything else is left to the environment's
        config to refuse), checked; returned with file paths resolved.

        Raises:
            InvalidRequestError: A value over a limit, or a file path (``invalid_config``).
        """
        limits, file_fields = self._rules(env_id)
        operator_values = self._operator_values(env_id)
        ruled = limits or file_fields or operator_values
        if not isinstance(overrides, Mapping) or not ruled:
            return overrides
        checked = dict(overrides)
        for field, value in overrides.items():
            limit = limits.get(field)
            problem = limit.refusal(value) if limit is not None else None
            if field in operator_values:
                if _same(value, operator_values[field]):
                    del checked[field]
                    continue
                problem = (
                    f"{value!r}: the dataset and its directory are set by this server's operator "
                    f"(llmgym serve --data FAMILY=DIR), not by clients; this server's "
                    f"{field} is {operator_values[field]!r} as its clients see it"
                )
            if field in file_fields and isinstance(value, str):
                resolved = self._resolve(value)
                if resolved is None:
                    problem = self._path_refusal()
                checked[field] = resolved
            if problem is not None:
                raise InvalidRequestError(
                    problem,
                    field=f"{config_class(env_id).__name__}.{field}",
                    code="invalid_config",
                )
        return checked

    def _operator_values(self, env_id: str) -> dict[str, str]:
        """The operator-only fields of ``env_id``'s config with the values clients see (none
        where the environment reads no original data)."""
        env_id = get_entry(env_id).id
        if not sources_of_env(env_id):
            return {}
        return {"source": self.originals.get(env_id, GENERATED), "data_dir": ""}

    def _rules(self, env_id: str) -> tuple[dict[str, ConfigLimit], tuple[str, ...]]:
        entry = get_entry(env_id)
        return self.limits.get(entry.id, {}), entry.file_fields

    def _resolve(self, path: str) -> str | None:
        """The real path of ``path`` (relative ones from the allowed directory) when it lies
        inside the allowed directory; else ``None``. Never looks at whether it exists."""
        if self.file_dir is None:
            return None
        try:
            resolved = os.path.realpath(os.path.join(self.file_dir, path))
        except (ValueError, OSError):  # a NUL byte, a path too long
            return None
        inside = os.path.commonpath([resolved, self.file_dir]) == self.file_dir
        return resolved if inside and resolved != self.file_dir else None

    def without_file_dir(self, message: str) -> str:
        """``message`` with the allowed directory's path left out: a file in it is named by
        its path from there (as clients name it)."""
        if self.file_dir in (None, os.sep):
            return message
        return message.replace(self.file_dir + os.sep, "").replace(self.file_dir, ".")

    def _path_refusal(self) -> str:
        if self.file_dir is None:
            return (
                "this server does not take file paths from clients (its operator can allow a "
                "directory with --allow-files DIR)"
            )
        return (
            "must be a path inside the directory this server allows for client files "
            "(relative paths are taken from it)"
        )
