"""The sessions of one server process: :class:`SessionStore` owns every client's environment.

Every session has its own lock, so concurrent requests to one session are applied one at a time
and sessions never share an instance; ``reset`` and ``step`` carry an optional sequence number, so
a client may retry one after a dropped connection without applying it twice.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import ValidationError

from llmgym.envs import ENVIRONMENTS
from llmgym.serving.hosting import HostedEnv
from llmgym.serving.protocol import HostingError, InvalidRequestError, dumps
from llmgym.serving.server.logs import log
from llmgym.serving.server.schemas import (
    STREAM_OPERATIONS,
    CallRequest,
    CreateSessionRequest,
    ResetRequest,
    StepRequest,
    load_json,
    validation_error,
)
from llmgym.serving.server.settings import ServerSettings

__all__ = [
    "CapacityError",
    "OutOfSequenceError",
    "Session",
    "SessionNotFoundError",
    "SessionStore",
]


class SessionNotFoundError(HostingError):
    """The session does not exist here: never created, closed, expired, or a restart (404)."""

    status = 404
    code = "session_not_found"


class CapacityError(HostingError):
    """Every session slot is taken (503, with ``Retry-After``)."""

    status = 503
    code = "at_capacity"


class OutOfSequenceError(HostingError):
    """A request's ``seq`` neither follows nor repeats the last applied one (409)."""

    status = 409
    code = "out_of_sequence"


@dataclass(eq=False)
class Session:
    """One client's environment and its bookkeeping."""

    id: str
    host: HostedEnv
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    created: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    seq: int = 0
    last_reply: bytes | None = None

    def replay(self, seq: int | None) -> bytes | None:
        """The stored reply when ``seq`` repeats the last applied request (a client retry);
        ``None`` when the request is the next one. Anything else is out of sequence."""
        if seq is None or seq == self.seq + 1:
            return None
        if seq == self.seq and self.last_reply is not None:
            return self.last_reply
        raise OutOfSequenceError(
            f"request seq={seq} does not follow the last applied one (seq={self.seq})",
            field="seq",
        )


class SessionStore:
    """The sessions of one server process, touched only from the event loop."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.served = settings.envs or tuple(e.id for e in ENVIRONMENTS if e.available)
        self.sessions: dict[str, Session] = {}
        self.expired: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.creating = 0
        self.instance_id = uuid.uuid4().hex[:16]
        self.started = time.time()
        self.steps = 0
        self._costs: dict[tuple[str, str], float] = {}

    def get(self, session_id: str) -> Session:
        """The live session ``session_id`` (its idle clock restarts), or a 404 that says
        whether it expired or never existed here."""
        session = self.sessions.get(session_id)
        if session is not None and not session.lock.locked() and self._idle(session):
            self.forget(session, "session.expired")
            session.host.close()
            session = None
        if session is None:
            if session_id in self.expired:
                raise SessionNotFoundError(
                    f"session {session_id!r} expired after {self.settings.ttl_s:g} s idle",
                    code="session_expired",
                )
            raise SessionNotFoundError(
                f"no session {session_id!r} on this server (instance {self.instance_id}): it was "
                "closed, or it belonged to a server process that has since restarted"
            )
        session.last_used = time.monotonic()
        return session

    def _idle(self, session: Session) -> bool:
        return time.monotonic() - session.last_used > self.settings.ttl_s

    def forget(self, session: Session, event: str) -> None:
        """Remove ``session`` (the caller closes its environment) and log ``event``."""
        self.sessions.pop(session.id, None)
        if event == "session.expired":
            self.expired[session.id] = None
            while len(self.expired) > 100_000:
                self.expired.popitem(last=False)
        log(
            logging.INFO,
            event,
            session_id=session.id,
            env_id=session.host.env_id,
            steps=session.host.steps,
            age_s=round(time.monotonic() - session.created, 3),
        )

    async def expire_idle(self) -> None:
        """Close every session idle for longer than the TTL (not those in use)."""
        for session in [s for s in self.sessions.values() if self._idle(s)]:
            if not session.lock.locked():
                self.forget(session, "session.expired")
                await anyio.to_thread.run_sync(session.host.close)

    def reserve(self) -> None:
        """Claim a slot for a new session, or raise :class:`CapacityError`."""
        if len(self.sessions) + self.creating >= self.settings.max_sessions:
            for session in [s for s in self.sessions.values() if self._idle(s)]:
                if not session.lock.locked():
                    self.forget(session, "session.expired")
                    session.host.close()
        if len(self.sessions) + self.creating >= self.settings.max_sessions:
            log(logging.WARNING, "capacity.rejected", max_sessions=self.settings.max_sessions)
            raise CapacityError(
                f"the server is at capacity ({self.settings.max_sessions} sessions); "
                "close sessions you no longer use, or retry later"
            )
        self.creating += 1

    def add(self, host: HostedEnv) -> Session:
        """Register a new session for ``host`` under an unguessable id."""
        session = Session(id=secrets.token_urlsafe(16), host=host)
        self.sessions[session.id] = session
        return session

    async def run(self, key: tuple[str, str], function: Callable[..., Any], *args: Any) -> Any:
        """Call ``function(*args)`` on the event loop when calls under ``key`` (env id,
        operation) are cheap on average, else in a worker thread. Exceptions other than
        :class:`HostingError` become a logged 500."""
        cost = self._costs.get(key)
        inline = cost is not None and cost < self.settings.inline_call_s

        def timed() -> tuple[Any, float]:
            start = time.perf_counter()
            try:
                return function(*args), time.perf_counter() - start
            except HostingError:
                raise
            except Exception as error:
                log(logging.ERROR, "env.error", env_id=key[0], operation=key[1], exc_info=True)
                message = f"the environment raised {type(error).__name__}: {error}"
                raise HostingError(message) from error

        result, spent = timed() if inline else await anyio.to_thread.run_sync(timed)
        self._costs[key] = spent if cost is None else 0.9 * cost + 0.1 * spent
        return result

    async def close_all(self) -> None:
        for session in list(self.sessions.values()):
            self.forget(session, "session.closed")
            await anyio.to_thread.run_sync(session.host.close)

    # -------------------------------------------------------------- session operations
    async def create(self, body: CreateSessionRequest) -> dict[str, Any]:
        """Make an environment for a new session (and reset it, unless ``body.reset`` is
        false); the reply is ``{"session_id", "instance_id", "ttl_s", "env", "observation",
        "info", "seq"}``."""
        make_kwargs = dict(body.make_kwargs)
        if body.config is not None:
            if "config" in make_kwargs:
                raise InvalidRequestError(
                    "give the config either as `config` or in make_kwargs", field="config"
                )
            make_kwargs["config"] = body.config
        if not body.reset and (body.seed, body.task_id, body.split) != (None, None, None):
            raise InvalidRequestError(
                "seed, task_id and split apply to the first reset: set reset=true"
            )
        self.reserve()
        try:
            host = await self.run(
                (body.env_id, "make"),
                functools.partial(HostedEnv, allowed=self.served),
                body.env_id,
                make_kwargs,
            )
        finally:
            self.creating -= 1
        session = self.add(host)
        log(
            logging.INFO,
            "session.created",
            session_id=session.id,
            env_id=host.env_id,
            sessions=len(self.sessions),
        )
        reply: dict[str, Any] = {
            "session_id": session.id,
            "instance_id": self.instance_id,
            "ttl_s": self.settings.ttl_s,
            "env": host.describe(),
            "observation": None,
            "info": None,
            "seq": 0,
        }
        if body.reset:
            reply.update(await self._first_reset(session, body))
        return reply

    async def _first_reset(self, session: Session, body: CreateSessionRequest) -> dict[str, Any]:
        """The reset a new session asks for; a failure closes the session again."""
        host = session.host
        asked = {"task_id": body.task_id, "split": body.split}
        options = {key: value for key, value in asked.items() if value is not None}
        try:
            async with session.lock:
                observation, info = await self.run(
                    (host.env_id, "reset"), host.reset, body.seed, options
                )
        except HostingError:
            self.forget(session, "session.closed")
            host.close()
            raise
        first = {"observation": observation, "info": info, "seq": 1}
        session.seq = 1
        session.last_reply = dumps(first)
        return first

    def status(self, session_id: str) -> dict[str, Any]:
        """A session's state: its episode, step count and age."""
        session = self.get(session_id)
        host = session.host
        episode = "ended" if host.episode_over else ("running" if host.started else "not_started")
        return {
            "session_id": session.id,
            "env_id": host.env_id,
            "episode": episode,
            "steps": host.steps,
            "seq": session.seq,
            "age_s": round(time.monotonic() - session.created, 3),
            "ttl_s": self.settings.ttl_s,
        }

    async def close(self, session_id: str) -> None:
        """Close the session and free its environment."""
        session = self.get(session_id)
        async with session.lock:
            if self.sessions.get(session_id) is session:
                self.forget(session, "session.closed")
                await anyio.to_thread.run_sync(session.host.close)

    async def _sequenced(
        self, session_id: str, seq: int | None, operation: Callable[[Session], Awaitable[dict]]
    ) -> bytes:
        """Apply a reset or step under the session's lock, once per sequence number."""
        session = self.get(session_id)
        async with session.lock:
            if self.sessions.get(session_id) is not session:
                raise SessionNotFoundError(f"session {session_id!r} was closed meanwhile")
            cached = session.replay(seq)
            if cached is not None:
                return cached
            payload = await operation(session)
            session.seq += 1
            payload["seq"] = session.seq
            session.last_reply = dumps(payload)
            session.last_used = time.monotonic()
            return session.last_reply

    async def reset(self, session_id: str, request: ResetRequest) -> bytes:
        """Start an episode; the reply is ``{"observation", "info", "seq"}``."""

        async def operation(session: Session) -> dict:
            host = session.host
            observation, info = await self.run(
                (host.env_id, "reset"), host.reset, request.seed, request.options
            )
            log(logging.DEBUG, "session.reset", session_id=session.id, task_id=info["task_id"])
            return {"observation": observation, "info": info}

        return await self._sequenced(session_id, request.seq, operation)

    async def step(self, session_id: str, request: StepRequest) -> bytes:
        """Apply one action; the reply is ``{"observation", "reward", "terminated",
        "truncated", "info", "seq"}``."""

        async def operation(session: Session) -> dict:
            host = session.host
            observation, reward, terminated, truncated, info = await self.run(
                (host.env_id, "step"), host.step, request.action
            )
            self.steps += 1
            return {
                "observation": observation,
                "reward": reward,
                "terminated": terminated,
                "truncated": truncated,
                "info": info,
            }

        return await self._sequenced(session_id, request.seq, operation)

    async def call(self, session_id: str, request: CallRequest) -> bytes:
        """Call an allow-listed read-only method; the reply is ``{"result": ...}``."""
        session = self.get(session_id)
        async with session.lock:
            key = (session.host.env_id, f"call:{request.name}")
            result = await self.run(
                key, session.host.call, request.name, request.args, request.kwargs
            )
        return dumps({"result": result})

    async def stream_message(self, session_id: str, data: str | bytes) -> bytes:
        """Answer one message of the WebSocket stream: ``{"op": "reset" | "step" | "call",
        ...the HTTP body}``. Errors are answered too, as the HTTP error body plus
        ``"status"``; the stream stays open."""
        try:
            message = load_json(data)
            if not isinstance(message, dict) or message.get("op") not in STREAM_OPERATIONS:
                raise InvalidRequestError(
                    "a stream message is an object with op: reset, step or call", field="op"
                )
            model, method = STREAM_OPERATIONS[message.pop("op")]
            try:
                request = model.model_validate(message)
            except ValidationError as error:
                raise validation_error(error.errors()) from None
            return await getattr(self, method)(session_id, request)
        except HostingError as error:
            log(
                logging.WARNING if error.status < 500 else logging.ERROR,
                "stream.failed",
                session_id=session_id,
                status=error.status,
                error=error.code,
                message=error.message,
            )
            return dumps({**error.to_dict(), "status": error.status})
