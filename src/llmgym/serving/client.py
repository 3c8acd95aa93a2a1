"""Environments that live elsewhere, behind the ``gymnasium.Env`` API.

:class:`RemoteEnv` talks to a server started with ``llmgym serve``
(see :mod:`llmgym.serving.server`)::

    env = RemoteEnv("http://trainer-box:8000", "llmgym/Wordle-v0", token="...")
    env = gymnasium.make("llmgym/Remote-v0", url="http://...", env_id="llmgym/Wordle-v0")

It has the served environment's spaces, returns the same observations, rewards and ``info``
(through JSON: tuples arrive as lists, numpy scalars as Python numbers; numpy arrays — a pixel
environment's frames — arrive exactly, with their dtype, shape and bytes) and raises what the
local environment raises: a bad config is a :class:`~llmgym.ConfigError` naming the field, bad
reset options a ``ValueError``, a step after the episode's end a
``gymnasium.error.ResetNeeded``. ``env.unwrapped`` answers ``task_ids``, ``oracle_action``,
``admissible_actions``, ``rules``, ... through the server, so :func:`llmgym.runner.rollout.rollout`,
:func:`llmgym.runner.evaluation.evaluate` and :class:`~llmgym.agents.OracleAgent` work unchanged.

``reset``, ``step`` and calls travel over one WebSocket per session when the ``websockets``
package is installed (it comes with ``llmgym[serve]``), otherwise as one HTTP request each
(``transport="http"`` forces that); both give identical results, the stream at a fraction of
the cost per step.

Failures are explicit and never hang: requests have timeouts; a request that could not reach
the server, or whose connection dropped before the answer, is retried with exponential backoff
(``reset`` and ``step`` carry a sequence number, so a retry is never applied twice); then
:class:`ServerUnavailableError`. A session that expired, was closed, or was lost in a server
restart raises :class:`SessionLostError` saying which. Whatever the transport raises (a
connection reset, a stream closed mid-message, a reply that is not llmgym's JSON) comes out as
one of these two, never as an exception of ``httpx`` or ``websockets``. The client does not
trust the server: a reply over ``max_reply_bytes`` is refused, and so is a description of a
space with absurd sizes.

:class:`ProxyEnv` is the transport-independent part, shared with the Ray actors of
:mod:`llmgym.serving.ray_actors`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, SupportsFloat

import gymnasium as gym
import httpx
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from llmgym.core.tasks import TaskIdRange
from llmgym.errors import (
    AuthenticationError,
    ConfigError,
    EpisodeEndedError,
    MissingDependencyError,
    RemoteEnvError,
    ServerBusyError,
    ServerUnavailableError,
    SessionLostError,
)
from llmgym.serving.protocol import PROTOCOL_VERSION, dumps, loads, space_from_dict

if TYPE_CHECKING:
    from websockets.frames import Frame

__all__ = [
    "ProxyEnv",
    "RemoteConfig",
    "RemoteEnv",
    "RemoteTask",
    "remote_env_factory",
]

TOKEN_VARIABLE = "LLMGYM_SERVER_TOKEN"
"""Environment variable read for the server's token when none is passed."""


def raise_remote_error(code: str, message: str, field: str | None = None) -> NoReturn:
    """Raise the client-side exception for a server error ``code`` (what the local environment
    would raise where there is a local equivalent)."""
    if code == "invalid_config" and field:
        raise ConfigError(field, message)
    if code in ("invalid_request", "invalid_array"):
        raise ValueError(message)
    if code in ("episode_ended", "reset_needed"):
        raise EpisodeEndedError(message)
    if code in ("session_not_found", "session_expired", "session_lost"):
        raise SessionLostError(message)
    if code in ("at_capacity", "quota_exceeded"):
        raise ServerBusyError(message)
    if code == "unauthorized":
        raise AuthenticationError(message)
    raise RemoteEnvError(f"{code}: {message}")


class RemoteConfig(Mapping[str, Any]):
    """A read-only view of a remote environment's config: ``config["width"]``,
    ``config.width`` and ``config.to_dict()`` (the class itself may not be installed here)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_data"][name]
        except KeyError:
            raise AttributeError(name) from None

    def to_dict(self) -> dict[str, Any]:
        """A copy of the fields, as ``EnvConfig.to_dict`` gives them."""
        return json.loads(json.dumps(self._data))

    def __repr__(self) -> str:
        return f"RemoteConfig({self._data!r})"


@dataclass(frozen=True)
class RemoteTask:
    """The current task of a remote environment (mirrors :class:`llmgym.Task`)."""

    env_name: str
    task_id: str
    split: str
    config: RemoteConfig


_DESCRIPTION_KEYS = (
    "env_id",
    "observation_space",
    "action_space",
    "render_modes",
    "example",
    "skills",
    "config",
    "max_episode_steps",
)
"""The keys of a served environment's description that a client reads."""


def _space(description: Mapping[str, Any], key: str) -> gym.Space:
    """The space under ``key`` of a served environment's description; a malformed or absurd one
    (see :func:`~llmgym.serving.protocol.space_from_dict`) is a :class:`RemoteEnvError`."""
    try:
        return space_from_dict(description[key])
    except ValueError as error:
        raise RemoteEnvError(f"the server's {key} is refused: {error}") from None


class ProxyEnv(gym.Env[Any, Any]):
    """A ``gymnasium.Env`` whose environment lives elsewhere; subclasses provide the transport
    (:meth:`_remote_reset`, :meth:`_remote_step`, :meth:`_remote_call`, :meth:`_remote_close`).

    It mirrors the served environment's spaces, ``example``, ``skills`` and ``config``, and
    answers the llmgym contract's read-only methods (``task_ids``, ``oracle_action``,
    ``admissible_actions``, ``sample_action``, ``rules``, ``instance_key``,
    ``skills_achieved``, ``config_schema``, ``task``, ``instruction``, ``success``) remotely.
    ``render`` works locally from the latest observation: ``"ansi"`` (the text) and ``"human"``
    (print it) for text environments, ``"rgb_array"`` (a copy of the frame) for pixel ones.
    """

    # gymnasium's Env declares it an instance attribute
    metadata: dict[str, Any] = {  # noqa: RUF012
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 4,
    }

    def _mirror(self, description: Mapping[str, Any], render_mode: str | None) -> None:
        if description.get("protocol") != PROTOCOL_VERSION:
            raise RemoteEnvError(
                f"the server speaks protocol {description.get('protocol')}, this client "
                f"{PROTOCOL_VERSION}: install the same llmgym version on both sides"
            )
        missing = [key for key in _DESCRIPTION_KEYS if key not in description]
        if missing:
            raise RemoteEnvError(
                f"the server's description of the environment has no {', '.join(missing)}"
            )
        self.env_id: str = description["env_id"]
        self.observation_space = _space(description, "observation_space")
        self.action_space = _space(description, "action_space")
        if isinstance(self.observation_space, spaces.Text):
            modes = ["ansi", "human"]
        else:  # the frame is the observation: what the pixel environments render
            modes = [m for m in ("rgb_array",) if m in description["render_modes"]]
        self.metadata = {**self.metadata, "render_modes": modes}
        if render_mode is not None and render_mode not in modes:
            raise ValueError(
                f"render_mode={render_mode!r} is not supported by {self.env_id}; "
                f"allowed: {', '.join(modes) or 'none'}"
            )
        self.render_mode = render_mode
        self.example: str = description["example"]
        self.skills: tuple[str, ...] = tuple(description["skills"])
        self.config = RemoteConfig(description["config"])
        self.max_episode_steps: int | None = description["max_episode_steps"]
        self._last_observation: Any = None
        self._task_ids: dict[tuple[str, str], Sequence[str]] = {}
        self._schema: dict[str, Any] | None = None
        if self.env_id in gym.registry:  # the served environment's spec: rollouts record its id
            self.spec = gym.spec(self.env_id)

    # ---------------------------------------------------------------- transport (subclasses)
    def _remote_reset(
        self, seed: int | None, options: dict[str, Any] | None
    ) -> tuple[Any, dict[str, Any]]:
        raise NotImplementedError

    def _remote_step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        raise NotImplementedError

    def _remote_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def _remote_close(self) -> None:
        raise NotImplementedError

    # ---------------------------------------------------------------- gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start an episode remotely (``seed`` and ``options`` as for the local environment)."""
        super().reset(seed=seed)
        observation, info = self._remote_reset(seed, options)
        self._last_observation = observation
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one action remotely: text, an index of a ``Discrete`` action space (a Python or
        numpy integer), an array. The environment answers invalid ones, as it does locally."""
        observation, reward, terminated, truncated, info = self._remote_step(action)
        self._last_observation = observation
        if self.render_mode == "human":
            self.render()
        return observation, reward, terminated, truncated, info

    def render(self) -> Any:
        """``"ansi"``: the latest observation as a string; ``"human"``: print it;
        ``"rgb_array"``: a copy of the latest frame."""
        if self.render_mode == "rgb_array":
            return np.array(self._last_observation)
        if self.render_mode == "ansi":
            return self._last_observation
        if self.render_mode == "human":
            print(self._last_observation)
        return None

    def close(self) -> None:
        """Release the remote environment (safe to call twice)."""
        self._remote_close()

    # ---------------------------------------------------------------- llmgym contract
    def task_ids(self, split: str = "train", config: Any = None) -> Sequence[str]:
        """The task ids of ``split`` (a lazy :class:`~llmgym.core.TaskIdRange` where the
        environment numbers its tasks)."""
        overrides = config.to_dict() if hasattr(config, "to_dict") else config
        key = (split, json.dumps(overrides, sort_keys=True))
        if key not in self._task_ids:
            ids = self._remote_call("task_ids", split, overrides)
            if isinstance(ids, Mapping):
                ids = TaskIdRange(**ids["task_id_range"])
            self._task_ids[key] = ids
        return self._task_ids[key]

    def oracle_action(self) -> Any:
        """The oracle's next action, computed where the environment lives."""
        return self._remote_call("oracle_action")

    def admissible_actions(self) -> list[str] | None:
        """The valid actions now, where the environment can list them."""
        return self._remote_call("admissible_actions")

    def sample_action(self, rng: np.random.Generator) -> Any:
        """A random valid action, drawn remotely with a seed taken from ``rng``."""
        return self._remote_call("sample_action", seed=int(rng.integers(2**63)))

    def rules(self) -> str:
        """The task description and action grammar under the current config."""
        return self._remote_call("rules")

    def instance_key(self) -> str:
        """The string that identifies the current instance's content."""
        return self._remote_call("instance_key")

    def skills_achieved(self) -> frozenset[str]:
        """The skills shown so far in this episode."""
        return frozenset(self._remote_call("skills_achieved"))

    def config_schema(self) -> dict[str, Any]:
        """JSON Schema of the environment's config."""
        if self._schema is None:
            self._schema = self._remote_call("config_schema")
        return self._schema

    @property
    def task(self) -> RemoteTask:
        """The current task (after :meth:`reset`)."""
        data = self._remote_call("task")
        if data is None:
            raise ResetNeeded("Call reset() before using the environment.")
        return RemoteTask(**{**data, "config": RemoteConfig(data["config"])})

    @property
    def instruction(self) -> str:
        """The current task's instruction."""
        return self._remote_call("instruction")

    @property
    def success(self) -> bool:
        """Whether the current episode's task is solved."""
        return self._remote_call("success")


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default context, built once: loading the CA bundle is slow each time."""
    return httpx.create_ssl_context()


DIRECT_STREAM_ATTEMPTS = 8
"""Connections a :class:`RemoteEnv` tries for a stream straight to the server's worker that
holds its session (of 2 workers, all 8 miss it 1 time in 256), before it takes a relayed one."""


class _Stream:
    """A WebSocket connection driven from the calling thread: websockets' sans-I/O protocol on
    a plain socket. The ``websockets.sync`` client reads in a background thread per connection,
    which costs a thread hand-off on every message; a step here is one ``sendall`` and the
    ``recv`` calls its reply needs. Pings are answered whenever the connection is read; one
    left unanswered while the client is idle makes the server close the stream, and the next
    message reconnects (resends carry the same sequence number).

    Its methods raise ``OSError`` (``TimeoutError`` when the time is up, ``ConnectionError``
    when the server closed the stream), ``EOFError`` or websockets' exceptions
    (``PayloadTooBig`` for a message over ``max_size`` bytes)."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        timeout: float,
        ssl_context: ssl.SSLContext,
        max_size: int,
    ) -> None:
        from websockets.client import ClientProtocol
        from websockets.exceptions import PayloadTooBig
        from websockets.frames import Frame, Opcode
        from websockets.protocol import State
        from websockets.uri import parse_uri

        self._frame: type[Frame] = Frame
        self._too_big = PayloadTooBig
        self._data_opcodes = (Opcode.TEXT, Opcode.BINARY, Opcode.CONT)
        self._open = State.OPEN
        self._closed = State.CLOSED
        uri = parse_uri(url)
        self._protocol = ClientProtocol(uri, max_size=max_size)
        self.sock = socket.create_connection((uri.host, uri.port), timeout=timeout)
        try:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if uri.secure:
                self.sock = ssl_context.wrap_socket(self.sock, server_hostname=uri.host)
            request = self._protocol.connect()
            request.headers.update(headers)
            self._protocol.send_request(request)
            self._flush()
            deadline = time.monotonic() + timeout
            while (
                self._protocol.state is State.CONNECTING
                and self._protocol.handshake_exc is None
                and self._read(deadline)
            ):
                pass
            if self._protocol.handshake_exc is not None:
                raise self._protocol.handshake_exc
            if self._protocol.state is not State.OPEN:
                raise ConnectionError("the server closed the connection during the handshake")
            self._protocol.events_received()  # the handshake reply (the server speaks when asked)
        except BaseException:
            self.sock.close()
            raise

    def send(self, data: bytes) -> None:
        # a close frame may have come with the previous reply: the server is closing the stream
        if self._protocol.state is not self._open:
            raise ConnectionError("the server closed the stream")
        self._protocol.send_binary(data)
        self._flush()

    def recv(self, timeout: float) -> bytes:
        """The next data message (fragments joined); ``TimeoutError`` after ``timeout`` s,
        ``ConnectionClosed`` when the connection ends, ``PayloadTooBig`` for a message over
        ``max_size`` bytes (refused from its header, before it is read)."""
        deadline = time.monotonic() + timeout
        fragments: list[bytes | bytearray | memoryview] = []
        while True:
            for event in self._protocol.events_received():
                if isinstance(event, self._frame) and event.opcode in self._data_opcodes:
                    fragments.append(event.data)
                    if event.fin:
                        return b"".join(fragments)
            if isinstance(self._protocol.parser_exc, self._too_big):
                raise self._protocol.parser_exc
            if self._protocol.state is self._closed or not self._read(deadline):
                raise self._closed_error()

    def _closed_error(self) -> Exception:
        if self._protocol.state is self._closed:
            return self._protocol.close_exc
        return ConnectionError("the server closed the connection")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._protocol.send_close()
            self._flush()
        with contextlib.suppress(OSError):
            self.sock.close()

    def _read(self, deadline: float) -> bool:
        """Feed one read from the socket to the protocol; ``False`` at end of stream."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no reply in time")
        self.sock.settimeout(remaining)
        chunk = self.sock.recv(65536)  # TimeoutError when ``remaining`` passes
        if chunk:
            self._protocol.receive_data(chunk)
        else:
            self._protocol.receive_eof()
        self._flush()  # pongs and the closing handshake
        return bool(chunk)

    def _flush(self) -> None:
        for chunk in self._protocol.data_to_send():
            if chunk:
                self.sock.sendall(chunk)


_REPLY_KEYS: dict[str, tuple[str, ...]] = {
    "create": ("session_id", "instance_id", "ttl_s", "seq", "env"),
    "reset": ("observation", "info", "seq"),
    "step": ("observation", "reward", "terminated", "truncated", "info", "seq"),
    "call": ("result",),
}
"""The keys of each operation's reply (errors aside)."""

_REPLY_TYPES: dict[str, tuple[type, ...]] = {
    "seq": (int,),
    "ttl_s": (int, float),
    "info": (dict,),
    "env": (dict,),
    "terminated": (bool,),
    "truncated": (bool,),
}
"""The types of the reply values the client computes with."""


class RemoteEnv(ProxyEnv):
    """An environment served by ``llmgym serve``, as a local ``gymnasium.Env``.

    Args:
        url: The server's root, e.g. ``"http://10.0.0.5:8000"``.
        env_id: The environment to make there, e.g. ``"llmgym/Wordle-v0"``.
        token: The server's token (default: ``$LLMGYM_SERVER_TOKEN``, else none).
        timeout: Seconds to wait for an answer (an engine's reset may be slow).
        connect_timeout: Seconds to wait for a connection.
        retries: Retries of a request that could not reach the server or lost its connection.
        backoff: Seconds before the first retry; doubled for each further one.
        transport: How ``reset``, ``step`` and calls travel: ``"websocket"`` (one stream per
            session, several times cheaper per step; needs the ``websockets`` package, which
            ``llmgym[serve]`` installs), ``"http"`` (a request each), or ``"auto"`` (the stream
            when ``websockets`` is installed and the server offers it). Results are identical.
        max_reply_bytes: The largest reply accepted from the server, over either transport (a
            WebSocket message, an HTTP response body); a larger one is a
            :class:`RemoteEnvError`, refused before it is read whole.
        render_mode: ``"ansi"`` or ``"human"``, rendered here.
        **make_kwargs: Keyword arguments for ``gymnasium.make`` on the server (``config=...``,
            knob overrides).
    """

    def __init__(
        self,
        url: str,
        env_id: str,
        *,
        token: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        retries: int = 3,
        backoff: float = 0.2,
        transport: str = "auto",
        max_reply_bytes: int = 64 * 2**20,
        render_mode: str | None = None,
        **make_kwargs: Any,
    ) -> None:
        if transport not in ("auto", "http", "websocket"):
            raise ValueError(f"transport={transport!r}; allowed: auto, http, websocket")
        if isinstance(max_reply_bytes, bool) or not (
            isinstance(max_reply_bytes, int) and max_reply_bytes > 0
        ):
            raise ValueError(f"max_reply_bytes must be a positive integer, got {max_reply_bytes!r}")
        has_websockets = importlib.util.find_spec("websockets") is not None
        if transport == "websocket" and not has_websockets:
            raise MissingDependencyError(
                "websockets is not installed; it is needed by RemoteEnv(transport='websocket'). "
                "Install it with: pip install websockets"
            )
        self.transport = "websocket" if transport != "http" and has_websockets else "http"
        self._stream: _Stream | None = None
        self._stream_lock = threading.Lock()
        self.url = url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_reply_bytes = max_reply_bytes
        token = token if token is not None else os.environ.get(TOKEN_VARIABLE)
        self._headers = {"Content-Type": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeouts = {
            "connect": connect_timeout,
            "read": timeout,
            "write": timeout,
            "pool": timeout,
        }
        # requests go straight to the transport: httpx's client layers (auth flows, redirects,
        # cookies, hooks) are unused here and cost a third of the time of a step
        self._transport = httpx.HTTPTransport(
            verify=_ssl_context(),
            limits=httpx.Limits(max_connections=4, keepalive_expiry=30.0),
        )
        self.session_id: str | None = None
        self._max_request_bytes: int | None = None  # the server says it when the session is made
        try:
            created = self._checked(
                self._send(
                    "POST",
                    "/sessions",
                    {"env_id": env_id, "make_kwargs": make_kwargs, "reset": False},
                ),
                "create",
            )
        except BaseException:
            self._transport.close()
            raise
        self.session_id = str(created["session_id"])
        self.instance_id: str = created["instance_id"]
        self.ttl_s: float = created["ttl_s"]
        # an older server does not say: its limit then shows as a 413 or a closed stream
        limit = created.get("max_body_bytes")
        if isinstance(limit, int) and limit > 0:
            self._max_request_bytes = limit
        self._seq: int = created["seq"]
        try:
            self._mirror(created["env"], render_mode)
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"<RemoteEnv {getattr(self, 'env_id', '?')} at {self.url} session={self.session_id}>"

    # ---------------------------------------------------------------- transport
    def _remote_reset(
        self, seed: int | None, options: dict[str, Any] | None
    ) -> tuple[Any, dict[str, Any]]:
        reply = self._sequenced("reset", {"seed": seed, "options": options})
        return reply["observation"], reply["info"]

    def _remote_step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if isinstance(action, np.generic):
            action = action.item()  # Discrete.sample() gives numpy integers
        elif not isinstance(action, (str, int, float, bool, list, dict, np.ndarray, type(None))):
            action = None  # not JSON: the environment answers it as a non-text action
        reply = self._sequenced("step", {"action": action})
        return (
            reply["observation"],
            reply["reward"],
            reply["terminated"],
            reply["truncated"],
            reply["info"],
        )

    def _remote_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._exchange("call", {"name": name, "args": list(args), "kwargs": kwargs})[
            "result"
        ]

    def _remote_close(self) -> None:
        try:
            self._drop_stream()
            if self.session_id is not None:
                with contextlib.suppress(SessionLostError, ServerUnavailableError):  # gone
                    self._send("DELETE", f"/sessions/{self.session_id}", retries=0)
                self.session_id = None
        finally:
            self._transport.close()

    def _sequenced(self, operation: str, payload: dict[str, Any]) -> dict[str, Any]:
        if self.session_id is None:
            raise RemoteEnvError("this RemoteEnv is closed")
        payload["seq"] = self._seq + 1
        reply = self._exchange(operation, payload)
        self._seq = reply["seq"]
        return reply

    def _exchange(self, operation: str, payload: dict[str, Any]) -> dict[str, Any]:
        if self.transport == "websocket":
            reply = self._stream_exchange({"op": operation, **payload})
            if reply is not None:
                return self._checked(reply, operation)
        reply = self._send("POST", f"/sessions/{self.session_id}/{operation}", payload)
        return self._checked(reply, operation)

    def _checked(self, reply: Any, operation: str) -> dict[str, Any]:
        """``reply`` if it is an object with the keys of ``operation``'s reply."""
        if not isinstance(reply, dict):
            raise self._malformed(operation, "it is not a JSON object")
        keys = _REPLY_KEYS[operation]
        missing = [key for key in keys if key not in reply]
        if missing:
            raise self._malformed(operation, f"it has no {', '.join(missing)}")
        for key in keys:
            value, types = reply[key], _REPLY_TYPES.get(key, (object,))
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise self._malformed(operation, f"its {key} is {type(value).__name__}")
        return reply

    def _malformed(self, what: str, problem: str) -> ServerUnavailableError:
        return ServerUnavailableError(
            f"{self.url} answered {what} with a reply that is not llmgym's protocol ({problem}): "
            "is something other than an llmgym server of this version answering there?"
        )

    def _decoded(self, raw: bytes, what: str) -> Any:
        """The JSON value of a reply (see :func:`~llmgym.serving.protocol.loads`)."""
        try:
            return loads(raw)
        except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
            raise self._malformed(what, f"{type(error).__name__}: {error}") from None

    def _refuse_oversized(self, data: bytes, what: str) -> None:
        """Refuse a message over the server's size limit before it is sent: the server would
        hang up on it, and a connection reset can arrive before its answer does."""
        limit = self._max_request_bytes
        if limit is not None and len(data) > limit:
            raise RemoteEnvError(
                f"payload_too_large: the {what} message is {len(data)} bytes; the server "
                f"accepts at most max_body_bytes={limit}"
            )

    def _too_large(self, what: str) -> RemoteEnvError:
        return RemoteEnvError(
            f"reply_too_large: the server's answer to {what} is over max_reply_bytes="
            f"{self.max_reply_bytes}; it was refused unread (raise max_reply_bytes to accept it)"
        )

    def _open_stream(self) -> _Stream:
        """The session's stream. A server of several workers relays a stream that reaches a
        worker other than the session's; asked to, it answers 421 instead, and a new
        connection may reach the session's worker: a few are tried before the relay is taken."""
        from websockets.exceptions import InvalidStatus

        headers = {k: v for k, v in self._headers.items() if k == "Authorization"}
        url = f"ws{self.url[4:]}/sessions/{self.session_id}/stream"
        for _ in range(DIRECT_STREAM_ATTEMPTS):
            try:
                return _Stream(
                    url,
                    {**headers, "X-Llmgym-Direct": "1"},
                    self.connect_timeout,
                    _ssl_context(),
                    self.max_reply_bytes,
                )
            except InvalidStatus as error:
                if error.response.status_code != 421:
                    raise
        return _Stream(url, headers, self.connect_timeout, _ssl_context(), self.max_reply_bytes)

    def _drop_stream(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def _stream_exchange(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """One message over the session's WebSocket, reconnecting with backoff when the
        connection fails (a resent reset or step carries the same sequence number). ``None``
        when the server offers no stream: the caller then uses HTTP from now on."""
        from websockets.exceptions import (
            ConnectionClosed,
            InvalidStatus,
            PayloadTooBig,
            WebSocketException,
        )

        operation = message["op"]
        data = dumps(message)
        self._refuse_oversized(data, operation)
        with self._stream_lock:
            attempt = 0
            while True:
                connecting = self._stream is None
                try:
                    if self._stream is None:
                        self._stream = self._open_stream()
                    connecting = False
                    self._stream.send(data)
                    raw = self._stream.recv(timeout=self.timeout)
                    break
                except TimeoutError as error:
                    self._drop_stream()
                    if not connecting:
                        raise ServerUnavailableError(
                            f"{self.url} did not answer {operation} within {self.timeout:g} s"
                        ) from error
                    failure: Exception = error
                except InvalidStatus as error:
                    self._drop_stream()
                    status = error.response.status_code
                    if status == 403:
                        raise AuthenticationError(
                            "the server refused the token (set token= or $LLMGYM_SERVER_TOKEN)"
                        ) from error
                    if status == 404:
                        self.transport = "http"
                        return None
                    if status < 500:
                        raise RemoteEnvError(
                            f"{self.url} refused the stream: HTTP {status}"
                        ) from error
                    failure = error  # a server starting or stopping, or a proxy without one
                except PayloadTooBig as error:
                    self._drop_stream()
                    raise self._too_large(operation) from error
                except ConnectionClosed as error:
                    self._drop_stream()
                    if error.rcvd is not None and error.rcvd.code == 1009:
                        raise RemoteEnvError(
                            "payload_too_large: the message is over the server's size limit"
                        ) from error
                    failure = error
                except (OSError, EOFError, WebSocketException) as error:
                    # a reset or refused connection, a stream closed mid-message, a handshake
                    # answered by something else than the server
                    self._drop_stream()
                    failure = error
                except BaseException:  # interrupted: the reply may still come, on no stream
                    self._drop_stream()
                    raise
                self._back_off(attempt, self.retries, failure)
                attempt += 1
        reply = self._decoded(raw, operation)
        if isinstance(reply, dict) and "error" in reply:
            self._raise_error(reply)
        return reply

    def _send(
        self, method: str, path: str, payload: Any = None, *, retries: int | None = None
    ) -> Any:
        """One request with retries on connection errors; an error status raises."""
        content = dumps(payload) if payload is not None else None
        if content is not None:
            self._refuse_oversized(content, f"{method} {path}")
        # a request that may have reached the server is retried only when repeating it is safe
        repeatable = method != "POST" or path.endswith(("/reset", "/step", "/call"))
        allowed = self.retries if retries is None else retries
        attempt = 0
        while True:
            try:
                status, body = self._request(method, path, content)
                break
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as error:
                failure: Exception = error
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as error:
                if not repeatable:
                    raise ServerUnavailableError(
                        f"the connection to {self.url} dropped during {method} {path}: {error}"
                    ) from error
                failure = error
            except httpx.TimeoutException as error:
                raise ServerUnavailableError(
                    f"{self.url} did not answer {method} {path} within {self.timeout:g} s"
                ) from error
            except (httpx.HTTPError, OSError) as error:  # anything else the transport raises
                raise ServerUnavailableError(
                    f"{method} {path} to {self.url} failed ({type(error).__name__}: {error})"
                ) from error
            self._back_off(attempt, allowed, failure)
            attempt += 1
        if status >= 400:
            self._raise_for(status, body)
        return self._decoded(body, f"{method} {path}") if body else None

    def _back_off(self, attempt: int, allowed: int, failure: Exception) -> None:
        """Wait before the next attempt (exponential backoff), or raise
        :class:`ServerUnavailableError` when ``attempt`` was the last one ``allowed``."""
        if attempt >= allowed:
            raise ServerUnavailableError(
                f"cannot reach the llmgym server at {self.url} ({type(failure).__name__}: "
                f"{failure}) after {attempt + 1} attempt(s)"
            ) from failure
        time.sleep(self.backoff * 2**attempt)

    def _request(self, method: str, path: str, content: bytes | None) -> tuple[int, bytes]:
        """The status and body of one request; a body over ``max_reply_bytes`` is refused as
        soon as its length is known (from ``Content-Length``, else while it arrives)."""
        request = httpx.Request(
            method,
            self.url + path,
            content=content,
            headers=self._headers,
            extensions={"timeout": self._timeouts},
        )
        response = self._transport.handle_request(request)
        try:
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > self.max_reply_bytes:
                raise self._too_large(f"{method} {path}")
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > self.max_reply_bytes:
                    raise self._too_large(f"{method} {path}")
        finally:
            response.close()
        return response.status_code, bytes(body)

    def _raise_for(self, status: int, body: bytes) -> NoReturn:
        try:
            reply = json.loads(body)
        except (ValueError, RecursionError):
            reply = None
        if not isinstance(reply, dict) or "error" not in reply:
            text = body[:300].decode("utf-8", "replace")
            if status in (502, 503, 504):  # a proxy whose server is down or restarting
                raise ServerUnavailableError(f"{self.url} answered HTTP {status}: {text}")
            raise RemoteEnvError(f"{self.url} answered HTTP {status}: {text}")
        self._raise_error(reply)

    def _raise_error(self, reply: Mapping[str, Any]) -> NoReturn:
        """Raise the exception of an error reply ``{"error": code, "message": ...,
        "field": ...}``."""
        code, message = str(reply["error"]), str(reply.get("message", ""))
        field = reply.get("field") if isinstance(reply.get("field"), str) else None
        if code == "session_not_found":
            message = self._explain_lost_session(message)
        elif code == "session_expired":
            message = (
                f"{message} (the server closes sessions idle for {self.ttl_s:g} s): "
                "make a new environment"
            )
        raise_remote_error(code, message, field)

    def _explain_lost_session(self, message: str) -> str:
        try:
            health = json.loads(self._request("GET", "/health", None)[1])
        except (httpx.HTTPError, OSError, RemoteEnvError, ValueError, RecursionError):
            return message
        instance = health.get("instance_id") if isinstance(health, dict) else None
        if instance != getattr(self, "instance_id", None):
            return (
                f"the llmgym server at {self.url} restarted (instance {self.instance_id} is now "
                f"{instance}); session {self.session_id} and its episode are "
                "gone: make a new environment"
            )
        return message


def remote_env_factory(
    url: str,
    env_id: str,
    *,
    react: bool = True,
    token: str | None = None,
    timeout: float = 60.0,
    **make_kwargs: Any,
) -> Callable[[], gym.Env]:
    """A zero-argument factory of :class:`RemoteEnv` wrapped for an LLM agent (as
    :func:`~llmgym.wrappers.make_chat_env` does), for :func:`llmgym.runner.rollout.rollout` and
    :func:`llmgym.runner.evaluation.evaluate`; trajectories record ``env_id``."""
    from llmgym.wrappers import wrap_chat_env

    def make() -> gym.Env:
        env = RemoteEnv(url, env_id, token=token, timeout=timeout, **make_kwargs)
        return wrap_chat_env(env, react=react)

    return make
