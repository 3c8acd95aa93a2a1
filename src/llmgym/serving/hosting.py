"""Hosting an environment for a client elsewhere, independent of the transport.

:class:`HostedEnv` is one environment instance owned on behalf of a remote client: it makes the
environment, tracks whether an episode is running, answers ``reset``/``step`` with plain data and
exposes an allow-list of read-only methods (:data:`REMOTE_CALLS`: ``task_ids``,
``oracle_action``, ``admissible_actions``, ...) so that agents and rollouts that read the
environment object work through a proxy. The HTTP server (:mod:`llmgym.serving.server`) and the
Ray actors (:mod:`llmgym.serving.ray_actors`) both wrap it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.error import ResetNeeded

from llmgym.core.tasks import SPLITS, TaskIdRange
from llmgym.envs import get_entry
from llmgym.errors import (
    ConfigError,
    DataError,
    EpisodeStateError,
    InvalidRequestError,
    MissingDependencyError,
)
from llmgym.serving.protocol import PROTOCOL_VERSION, config_error, data_error, space_to_dict

__all__ = ["REMOTE_CALLS", "HostedEnv", "client_config"]


# ------------------------------------------------------------------------------ remote calls
def _task_ids(env: Any, split: str = "train", config: Mapping[str, Any] | None = None) -> Any:
    if split not in SPLITS:
        raise InvalidRequestError(f"split={split!r} is not allowed; allowed: {', '.join(SPLITS)}")
    ids = env.task_ids(split, env.config.merged(config) if config is not None else None)
    if isinstance(ids, TaskIdRange):
        return {"task_id_range": {"split": ids.split, "count": len(ids), "width": ids.width}}
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
        "config": client_config(task.config),
    }


def client_config(config: Any) -> dict[str, Any]:
    """A config as clients see it: an original dataset's directory (a path of the machine
    hosting the environment) is shown as ``""``."""
    fields = config.to_dict()
    if fields.get("data_dir"):
        fields["data_dir"] = ""
    return dict(fields)


def _candidate_words(env: Any) -> list[str]:
    words = getattr(env, "candidate_words", None)
    if words is None:
        raise InvalidRequestError(f"{type(env).__name__} has no candidate word list", field="name")
    return list(words())


REMOTE_CALLS: dict[str, Callable[..., Any]] = {
    "task_ids": _task_ids,
    "oracle_action": lambda env: env.oracle_action(),
    "admissible_actions": lambda env: env.admissible_actions(),
    "sample_action": _sample_action,
    "rules": lambda env: env.rules(),
    "instance_key": lambda env: env.instance_key(),
    "skills_achieved": lambda env: sorted(env.skills_achieved()),
    "config_schema": lambda env: env.config_schema(),
    "task": _task,
    "instruction": lambda env: env.instruction,
    "success": lambda env: env.success,
    "candidate_words": _candidate_words,
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
        if kwargs.setdefault("disable_env_checker", True) is not True:
            raise InvalidRequestError(
                "disable_env_checker: only true is served (gymnasium's passive checker would "
                "break the session after a failed reset)",
                field="make_kwargs.disable_env_checker",
            )
        try:
            self.env = gym.make(entry.id, **kwargs)
        except DataError as error:
            raise data_error(error) from None
        except ConfigError as error:
            raise config_error(error) from None
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
            "config": client_config(inner.config),
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
        except DataError as error:
            raise data_error(error) from None
        except ConfigError as error:
            raise config_error(error) from None
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
        except DataError as error:
            raise data_error(error) from None
        except ConfigError as error:
            raise config_error(error) from None
        except ResetNeeded as error:
            raise EpisodeStateError(str(error), code="reset_needed") from None

    def close(self) -> None:
        """Close the environment."""
        self.env.close()
