"""Hosting an environment for a client elsewhere, independent of the transport.

:class:`HostedEnv` is one environment instance owned on behalf of a remote client: it makes the
environment, tracks whether an episode is running, answers ``reset``/``step`` with plain data and
exposes an allow-list of read-only methods (:data:`REMOTE_CALLS`: ``task_ids``,
``oracle_action``, ``admissible_actions``, ...) so that agents and rollouts that read the
environment object work through a proxy. The HTTP server (:mod:`llmgym.server`) and the Ray
actors (:mod:`llmgym.distributed`) both wrap it; :class:`HostingError` and its subclasses carry
the status and the machine-readable code that each transport reports.

On the wire (:func:`dumps`, :func:`loads`) numpy arrays are exact: an array is written as
``{"__ndarray__": <base64 of its bytes, C order, little-endian>, "dtype": "uint8", "shape":
[64, 64, 3]}`` and read back as an array of the same dtype, shape and bytes. Spaces travel as
the descriptions of :func:`space_to_dict`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import inspect
import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar, Literal, get_args

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from llmgym.core.config import ConfigError, EnvConfig
from llmgym.core.registry import MissingDependencyError
from llmgym.core.tasks import SPLITS, TaskIdRange
from llmgym.envs import get_entry

__all__ = [
    "ARRAY_DTYPES",
    "ARRAY_KEY",
    "PROTOCOL_VERSION",
    "REMOTE_CALLS",
    "SERVABLE_SPACES",
    "ArrayDType",
    "EpisodeStateError",
    "HostedEnv",
    "HostingError",
    "InvalidRequestError",
    "decode_array",
    "dumps",
    "encode_array",
    "loads",
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


ArrayDType = Literal[
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
ARRAY_DTYPES: tuple[str, ...] = get_args(ArrayDType)
"""The dtypes of arrays that travel exactly; arrays of other dtypes become JSON lists."""

ARRAY_KEY = "__ndarray__"
"""The key that marks an encoded array in JSON (its value: the base64 of the array's bytes)."""


def encode_array(array: np.ndarray) -> dict[str, Any]:
    """``{"__ndarray__": base64, "dtype": name, "shape": [...]}``: the array's bytes in C order
    and little-endian (a third more than the raw bytes; a 64x64 RGB frame is 16 KB)."""
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return {
        ARRAY_KEY: base64.b64encode(data).decode("ascii"),
        "dtype": array.dtype.name,
        "shape": list(array.shape),
    }


def decode_array(data: Mapping[str, Any]) -> np.ndarray:
    """The array :func:`encode_array` wrote (writable, native byte order).

    Raises:
        ValueError: ``data`` is not an encoded array, names a dtype not in
            :data:`ARRAY_DTYPES`, or its bytes do not fill its shape.
    """
    if set(data) != {ARRAY_KEY, "dtype", "shape"}:
        raise ValueError(
            f"an encoded array has exactly the keys {ARRAY_KEY}, dtype and shape; "
            f"got {', '.join(sorted(map(str, data)))}"
        )
    name, shape = data["dtype"], data["shape"]
    if name not in ARRAY_DTYPES:
        raise ValueError(f"array dtype {name!r} is not allowed; allowed: {', '.join(ARRAY_DTYPES)}")
    if not isinstance(shape, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise ValueError(f"array shape must be a list of non-negative integers, got {shape!r}")
    try:
        raw = base64.b64decode(data[ARRAY_KEY], validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise ValueError(f"{ARRAY_KEY} must be base64 text") from None
    dtype = np.dtype(name).newbyteorder("<")
    if len(raw) != math.prod(shape) * dtype.itemsize:
        raise ValueError(
            f"an array of shape {shape} and dtype {name} has {math.prod(shape) * dtype.itemsize} "
            f"bytes, but {ARRAY_KEY} holds {len(raw)}"
        )
    try:
        array = np.frombuffer(bytearray(raw), dtype).reshape(shape)
    except ValueError as error:  # more dimensions than numpy allows
        raise ValueError(f"array shape {shape}: {error}") from None
    return array.astype(dtype.newbyteorder("="), copy=False)


def _decode_object(data: dict[str, Any]) -> Any:
    return decode_array(data) if ARRAY_KEY in data else data


def _encode_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return encode_array(value) if value.dtype.name in ARRAY_DTYPES else value.tolist()
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
    """Compact JSON of ``payload``: numpy arrays become encoded arrays (exact, see
    :func:`encode_array`), numpy scalars plain numbers, sets and configs plain JSON; anything else
    that JSON cannot hold becomes its ``repr``. Non-ASCII text is escaped, so lone surrogates in
    hostile text survive the round trip."""
    return json.dumps(payload, separators=(",", ":"), default=_encode_default).encode()


def loads(data: str | bytes) -> Any:
    """The value of JSON written by :func:`dumps`, with encoded arrays decoded.

    Raises:
        json.JSONDecodeError: Not JSON.
        ValueError: A malformed encoded array (see :func:`decode_array`).
    """
    return json.loads(data, object_hook=_decode_object)


# ------------------------------------------------------------------------------ spaces
SERVABLE_SPACES = ("Text", "Discrete", "Box", "MultiDiscrete", "MultiBinary")
"""The gymnasium spaces an environment may have to be served."""


def _bound(bounds: np.ndarray) -> Any:
    """A Box bound: one number when every element has the same finite bound, else the array."""
    if bounds.size:
        first = bounds.flat[0]
        if np.isfinite(first) and np.all(bounds == first):
            return first.item()
    return bounds


def _array(value: Any, dtype: Any = None) -> np.ndarray:
    """An array from a description: encoded (as :func:`dumps` wrote it), decoded, or a list."""
    if isinstance(value, Mapping):
        value = decode_array(value)
    return np.asarray(value, dtype=dtype)


def space_to_dict(space: gym.Space) -> dict[str, Any]:
    """A description of ``space`` (one of :data:`SERVABLE_SPACES`): JSON values and numpy
    arrays, which :func:`dumps` writes exactly. ``type`` names the space; the other keys are
    its constructor's arguments.

    Raises:
        InvalidRequestError: Another kind of space.
    """
    if isinstance(space, spaces.Text):
        return {
            "type": "Text",
            "min_length": space.min_length,
            "max_length": space.max_length,
            "charset": "".join(sorted(space.character_set)),
        }
    if isinstance(space, spaces.Discrete):
        return {
            "type": "Discrete",
            "n": int(space.n),
            "start": int(space.start),
            "dtype": space.dtype.name,
        }
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "shape": list(space.shape),
            "dtype": space.dtype.name,
            "low": _bound(space.low),
            "high": _bound(space.high),
        }
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": space.nvec, "start": space.start}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": space.n if isinstance(space.n, int) else list(space.n)}
    raise InvalidRequestError(
        f"{type(space).__name__} spaces cannot be served; servable: {', '.join(SERVABLE_SPACES)}"
    )


def space_from_dict(data: Mapping[str, Any]) -> gym.Space:
    """The space described by :func:`space_to_dict` (llmgym's own Text space class when the
    charset is llmgym's, so it prints the same).

    Raises:
        ValueError: An unknown ``type`` (a server newer than this client).
    """
    from llmgym.core.env import text_space
    from llmgym.core.text import CHARSET

    kind = data["type"]
    if kind == "Text":
        if set(data["charset"]) == set(CHARSET):
            return text_space(data["max_length"], data["min_length"])
        return spaces.Text(
            max_length=data["max_length"], min_length=data["min_length"], charset=data["charset"]
        )
    if kind == "Discrete":
        # older gymnasium releases take no dtype (and always use int64)
        dtype = {} if data["dtype"] == "int64" else {"dtype": data["dtype"]}
        return spaces.Discrete(data["n"], start=data["start"], **dtype)
    if kind == "Box":
        dtype = np.dtype(data["dtype"])
        low, high = (
            bound if isinstance(bound, (int, float)) else _array(bound, dtype)
            for bound in (data["low"], data["high"])
        )
        return spaces.Box(low, high, shape=tuple(data["shape"]), dtype=dtype)
    if kind == "MultiDiscrete":
        nvec = _array(data["nvec"])
        return spaces.MultiDiscrete(nvec, dtype=nvec.dtype, start=_array(data["start"]))
    if kind == "MultiBinary":
        n = data["n"]
        return spaces.MultiBinary(n if isinstance(n, int) else tuple(n))
    raise ValueError(
        f"the server describes a {kind} space, which this client cannot build: "
        "install the same llmgym version on both sides"
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
    "instance_key": lambda env: env.instance_key(),
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
