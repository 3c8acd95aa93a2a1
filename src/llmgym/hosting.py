"""Hosting an environment for a client elsewhere, independent of the transport.

:class:`HostedEnv` is one environment instance owned on behalf of a remote client: it makes the
environment, tracks whether an episode is running, answers ``reset``/``step`` with plain data and
exposes an allow-list of read-only methods (:data:`REMOTE_CALLS`: ``task_ids``,
``oracle_action``, ``admissible_actions``, ...) so that agents and rollouts that read the
environment object work through a proxy. The HTTP server (:mod:`llmgym.server`) and the Ray
actors (:mod:`llmgym.distributed`) both wrap it; :class:`HostingError` and its subclasses carry
the status and the machine-readable code that each transport reports.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from llmgym.core.config import ConfigError, EnvConfig
from llmgym.core.registry import MissingDependencyError
from llmgym.core.tasks import SPLITS, TaskIdRange
from llmgym.envs import get_entry

__all__ = [
    "PROTOCOL_VERSION",
    "REMOTE_CALLS",
    "EpisodeStateError",
    "HostedEnv",
    "HostingError",
    "InvalidRequestError",
    "dumps",
    "space_from_dict",
    "space_to_dict",
]

PROTOCOL_VERSION = 1
"""Bumped when requests or responses change incompatibly; clients check it."""


class HostingError(Exception):
    """A request that cannot be served; ``status`` is its HTTP status, ``code`` a stable name."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code  # type: ignore[misc]

    def to_dict(self) -> dict[str, Any]:
        """The JSON error body: ``{"error": code, "message": ..., "field": ...}``."""
        return {"error": self.code, "message": self.message, "field": self.field}

    def __reduce__(self) -> tuple[Any, ...]:  # keep field and code across pickling (Ray)
        return (_rebuild_error, (type(self), self.message, self.field, self.code))


def _rebuild_error(
    cls: type[HostingError], message: str, field: str | None, code: str
) -> HostingError:
    return cls(message, field=field, code=code)


class InvalidRequestError(HostingError):
    """The request is malformed or names something that does not exist (HTTP 422)."""

    status = 422
    code = "invalid_request"


class EpisodeStateError(HostingError):
    """``step`` before the first ``reset`` or after the episode ended (HTTP 409)."""

    status = 409
    code = "episode_ended"


def _config_error(error: ConfigError) -> InvalidRequestError:
    """A bad config value, with the field and the message without the field's prefix."""
    message = str(error).removeprefix(f"{error.field}: ")
    return InvalidRequestError(message, field=error.field, code="invalid_config")


def _encode_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, EnvConfig):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    return repr(value)


def dumps(payload: Any) -> bytes:
    """Compact JSON of ``payload``: numpy values, sets and configs become plain JSON; anything
    else that JSON cannot hold becomes its ``repr``. Non-ASCII text is escaped, so lone
    surrogates in hostile text survive the round trip."""
    return json.dumps(payload, separators=(",", ":"), default=_encode_default).encode()


def space_to_dict(space: gym.Space) -> dict[str, Any]:
    """A JSON description of a :class:`gymnasium.spaces.Text` space."""
    if not isinstance(space, spaces.Text):
        raise InvalidRequestError(f"only Text spaces can be served, not {type(space).__name__}")
    return {
        "type": "Text",
        "min_length": space.min_length,
        "max_length": space.max_length,
        "charset": "".join(sorted(space.character_set)),
    }


def space_from_dict(data: Mapping[str, Any]) -> spaces.Text:
    """The space described by :func:`space_to_dict` (llmgym's own Text space class when the
    charset is llmgym's, so it prints the same)."""
    from llmgym.core.env import text_space
    from llmgym.core.text import CHARSET

    if set(data["charset"]) == set(CHARSET):
        return text_space(data["max_length"], data["min_length"])
    return spaces.Text(
        max_length=data["max_length"], min_length=data["min_length"], charset=data["charset"]
    )


# ------------------------------------------------------------------------------ remote calls
def _task_ids(env: Any, split: str = "train", config: Mapping[str, Any] | None = None) -> Any:
    if split not in SPLITS:
        raise InvalidRequestError(f"split={split!r} is not allowed; allowed: {', '.join(SPLITS)}")
    ids = env.task_ids(split, env.config.merged(config) if config is not None else None)
    if isinstance(ids, TaskIdRange):
        return {"task_id_range": {"split": ids.split, "count": ids.count, "width": ids.width}}
    return list(ids)


def _sample_action(env: Any, seed: int | None = None) -> str:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidRequestError(f"seed must be a non-negative integer, got {seed!r}")
    return env.sample_action(np.random.default_rng(seed))


def _task(env: Any) -> dict[str, Any] | None:
    task = env._task
    if task is None:
        return None
    return {
        "env_name": task.env_name,
        "task_id": task.task_id,
        "split": task.split,
        "config": task.config.to_dict(),
    }


REMOTE_CALLS: dict[str, Callable[..., Any]] = {
    "task_ids": _task_ids,
    "oracle_action": lambda env: env.oracle_action(),
    "admissible_actions": lambda env: env.admissible_actions(),
    "sample_action": _sample_action,
    "rules": lambda env: env.rules(),
    "task_signature": lambda env: env.task_signature(),
    "skills_achieved": lambda env: sorted(env.skills_achieved()),
    "config_schema": lambda env: env.config_schema(),
    "task": _task,
    "instruction": lambda env: env.instruction,
    "success": lambda env: env.success,
}
"""Read-only methods and properties of the environment (``env.unwrapped``) that a client may
call by name. Nothing else on the environment object is reachable remotely."""


class HostedEnv:
    """One environment made for a remote client, with the episode's state.

    Args:
        env_id: A registered environment id (``"llmgym/Wordle-v0"`` or ``"Wordle-v0"``).
        make_kwargs: Keyword arguments for ``gymnasium.make`` (``config``, knob overrides, ...).
        allowed: If given, only these environment ids may be made.

    Raises:
        InvalidRequestError: Unknown or not-allowed id, bad config (with ``field``), a missing
            extra, or arguments the environment does not take.
    """

    def __init__(
        self,
        env_id: str,
        make_kwargs: Mapping[str, Any] | None = None,
        *,
        allowed: Collection[str] | None = None,
    ) -> None:
        try:
            entry = get_entry(env_id)
        except KeyError as error:
            raise InvalidRequestError(str(error.args[0]), field="env_id") from None
        if entry.kind != "task":
            raise InvalidRequestError(
                f"{entry.id} is a client, not an environment that can be served", field="env_id"
            )
        if allowed is not None and entry.id not in allowed:
            raise InvalidRequestError(
                f"{entry.id} is not served here; served: {', '.join(sorted(allowed))}",
                field="env_id",
            )
        kwargs = dict(make_kwargs or {})
        if kwargs.get("render_mode") not in (None, "ansi"):
            raise InvalidRequestError(
                "render_mode: only 'ansi' (or none) can be served; render on the client",
                field="make_kwargs.render_mode",
            )
        # gymnasium's passive checker breaks a session whose first reset failed (it then raises
        # TypeError on every step); the environments are checked by the conformance suite
        kwargs.setdefault("disable_env_checker", True)
        try:
            self.env = gym.make(entry.id, **kwargs)
        except ConfigError as error:
            raise _config_error(error) from None
        except MissingDependencyError as error:
            raise InvalidRequestError(str(error), field="env_id") from None
        except (TypeError, ValueError) as error:
            raise InvalidRequestError(f"cannot make {entry.id}: {error}") from None
        self.env_id = entry.id
        self.entry = entry
        self.started = False
        self.episode_over = False
        self.steps = 0

    @property
    def unwrapped(self) -> Any:
        """The environment object itself (an :class:`llmgym.TextEnv`)."""
        return self.env.unwrapped

    def describe(self) -> dict[str, Any]:
        """What a client needs to mirror the environment: spaces, limits, example, skills."""
        inner = self.unwrapped
        return {
            "env_id": self.env_id,
            "protocol": PROTOCOL_VERSION,
            "observation_space": space_to_dict(self.env.observation_space),
            "action_space": space_to_dict(self.env.action_space),
            "max_episode_steps": self.entry.max_episode_steps,
            "render_modes": list(inner.metadata.get("render_modes", [])),
            "config": inner.config.to_dict(),
            "example": getattr(inner, "example", ""),
            "skills": list(getattr(inner, "skills", ())),
        }

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> tuple:
        """``env.reset``; bad seeds, options or configs raise :class:`InvalidRequestError`."""
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise InvalidRequestError(
                f"seed must be a non-negative integer or null, got {seed!r}", field="seed"
            )
        if options is not None and not isinstance(options, Mapping):
            raise InvalidRequestError("options must be an object or null", field="options")
        try:
            observation, info = self.env.reset(seed=seed, options=dict(options or {}))
        except ConfigError as error:
            raise _config_error(error) from None
        except (ValueError, TypeError) as error:
            raise InvalidRequestError(str(error), field="options") from None
        self.started, self.episode_over, self.steps = True, False, 0
        return observation, info

    def step(self, action: Any) -> tuple:
        """``env.step``. Any action is accepted (the environment answers hostile text and
        non-text as invalid); stepping before a reset or after the end is an
        :class:`EpisodeStateError`."""
        if not self.started:
            raise EpisodeStateError("call reset before the first step", code="reset_needed")
        if self.episode_over:
            raise EpisodeStateError("the episode has ended; call reset before step")
        try:
            observation, reward, terminated, truncated, info = self.env.step(action)
        except Exception:
            self.episode_over = True  # the state is unknown: only a reset may follow
            raise
        self.steps += 1
        self.episode_over = bool(terminated or truncated)
        return observation, float(reward), bool(terminated), bool(truncated), info

    def call(
        self, name: str, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None
    ) -> Any:
        """Call an allow-listed read-only method of the environment (:data:`REMOTE_CALLS`)."""
        function = REMOTE_CALLS.get(name)
        if function is None:
            raise InvalidRequestError(
                f"{name!r} cannot be called remotely; allowed: {', '.join(sorted(REMOTE_CALLS))}",
                field="name",
            )
        kwargs = dict(kwargs or {})
        try:
            inspect.signature(function).bind(self.unwrapped, *args, **kwargs)
        except TypeError as error:
            raise InvalidRequestError(f"{name}: {error}", field="args") from None
        try:
            return function(self.unwrapped, *args, **kwargs)
        except ConfigError as error:
            raise _config_error(error) from None
        except ResetNeeded as error:
            raise EpisodeStateError(str(error), code="reset_needed") from None

    def close(self) -> None:
        """Close the environment."""
        self.env.close()
