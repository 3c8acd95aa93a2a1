"""The sessions of one server process: :class:`SessionStore` owns every client's environment.

Every session has its own lock, so concurrent requests to one session are applied one at a time
and sessions never share an instance; ``reset`` and ``step`` carry an optional sequence number, so
a client may retry one after a dropped connection without applying it twice.

No environment call runs on the event loop: each runs in a worker thread
(:class:`~llmgym.serving.isolation.Workers`) under a wall-clock limit, and environments that the
table marks ``isolated`` run in a child process per session
(:class:`~llmgym.serving.isolation.ProcessHostedEnv`); with ``ServerSettings.ray`` every session
runs in a Ray actor of its own (:class:`~llmgym.serving.ray_actors.RayHostedEnv`). A call past
its limit, or a child process, actor or node that ends, closes that session only.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from llmgym.envs import get_entry
from llmgym.errors import (
    CallTimeoutError,
    CapacityError,
    EnvProcessError,
    EnvRaisedError,
    HostingError,
    InvalidRequestError,
    OutOfSequenceError,
    QuotaError,
    SessionNotFoundError,
)
from llmgym.serving.hosting import REMOTE_CALLS, HostedEnv
from llmgym.serving.isolation import ProcessHostedEnv, SeparateHostedEnv, Workers
from llmgym.serving.protocol import dumps, raised_message
from llmgym.serving.server.logs import log
from llmgym.serving.server.memory import trim_free_memory
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
from llmgym.serving.server.workers import WorkerPlace

__all__ = [
    "Session",
    "SessionStore",
]

TRIM_DELAY_S = 1.0

Host = HostedEnv | SeparateHostedEnv
"""A session's environment: in this process, or in another of its own (a child process, or a
Ray actor)."""


@dataclass(eq=False)
class Session:
    """One client's environment and its bookkeeping."""

    id: str
    host: Host
    client: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    created: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    seq: int = 0
    last_reply: bytes | None = None
    last_request: tuple[str, BaseModel] | None = None
    """The operation and the request of the last applied ``seq``."""

    def replay(self, seq: int | None, operation: str, request: BaseModel) -> bytes | None:
        """The stored reply when ``seq`` repeats the last applied request (a client retry);
        ``None`` when the request is the next one. Anything else is out of sequence, and so is
        a repeated ``seq`` whose request is not the one applied."""
        if seq is None or seq == self.seq + 1:
            return None
        if seq == self.seq and self.last_reply is not None and self.last_request is not None:
            applied, applied_request = self.last_request
            if applied != operation:
                raise OutOfSequenceError(
                    f"request seq={seq} was a {applied}, not a {operation}: a retry repeats "
                    f"the request; a new one takes seq={seq + 1}",
                    field="seq",
                )
            if _canonical(applied_request) != _canonical(request):
                raise OutOfSequenceError(
                    f"request seq={seq} was applied with another {operation} request: a retry "
                    f"repeats the request; a new one takes seq={seq + 1}",
                    field="seq",
                )
            return self.last_reply
        raise OutOfSequenceError(
            f"request seq={seq} does not follow the last applied one (seq={self.seq})",
            field="seq",
        )


def _canonical(request: BaseModel) -> bytes:
    return dumps(request.model_dump(exclude={"seq"}))


class SessionStore:
    """The sessions of one server process, touched only from the event loop."""

    def __init__(self, settings: ServerSettings, place: WorkerPlace | None = None) -> None:
        self.settings = settings
        self.place = place
        """Where this process stands among the server's workers (``None``: it is the only
        one); its session ids say so."""
        self.peer_loads: Callable[[], Coroutine[Any, Any, list[dict[str, Any]]]] | None = None
        """The other workers' loads, for ``/health``."""
        self.served = settings.served()
        self.policy = settings.policy()
        self.workers = Workers(settings.worker_threads)
        self.sessions: dict[str, Session] = {}
        self.per_client: collections.Counter[str] = collections.Counter()
        """Sessions held and being made, by client address."""
        self.ended: collections.OrderedDict[str, tuple[str, str]] = collections.OrderedDict()
        """Why recent sessions ended (expired, or lost to a limit or a crash): their 404."""
        self.creating = 0
        self.memory_budget_mb = settings.memory_budget_mb()
        self.memory_mb = 0.0
        """The memory reserved by the sessions held and being made (declared costs)."""
        self.instance_id = secrets.token_hex(8) if place is None else place.instance_id
        self.started = time.time()
        self.steps = 0
        self._background: set[asyncio.Task[Any]] = set()
        self._trim_pending = False

    def get(self, session_id: str) -> Session:
        """The live session ``session_id`` (its idle clock restarts), or a 404 that says
        whether it expired, was lost, or never existed here."""
        session = self.sessions.get(session_id)
        if session is not None and not session.lock.locked() and self._idle(session):
            self._expire(session)
            session = None
        if session is None:
            ended = self.ended.get(session_id)
            if ended is not None:
                code, message = ended
                raise SessionNotFoundError(message, code=code)
            raise SessionNotFoundError(
                f"no session {session_id!r} on this server (instance {self.instance_id}): it was "
                "closed, or it belonged to a server process that has since restarted"
            )
        session.last_used = time.monotonic()
        return session

    def _live(self, session: Session) -> None:
        """Raise the session's 404 if it ended while a request waited for its lock."""
        if self.sessions.get(session.id) is not session:
            self.get(session.id)
            raise SessionNotFoundError(f"session {session.id!r} was closed meanwhile")

    def _idle(self, session: Session) -> bool:
        return time.monotonic() - session.last_used > self.settings.ttl_s

    def forget(self, session: Session, event: str, **fields: Any) -> None:
        """Remove ``session`` (the caller disposes of its environment) and log ``event``."""
        if self.sessions.pop(session.id, None) is None:
            return
        self._release(session.client, session.host.env_id)
        self._trim_soon()
        log(
            logging.WARNING if event == "session.lost" else logging.INFO,
            event,
            session_id=session.id,
            env_id=session.host.env_id,
            steps=session.host.steps,
            age_s=round(time.monotonic() - session.created, 3),
            **fields,
        )

    def _release(self, client: str, env_id: str) -> None:
        """Give back what :meth:`reserve` claimed for a session of ``client``."""
        self.per_client[client] -= 1
        if not self.per_client[client]:
            del self.per_client[client]
        self.memory_mb -= self.settings.session_memory_mb(env_id)

    def _trim_soon(self) -> None:
        """Give the memory environments freed back to the system (:func:`trim_free_memory`)
        a second from now, unless that is already planned: at most once a second while the
        server works, and once after it stops (closed sessions' environments are closed in
        the workers meanwhile). A trim with little to give back takes microseconds."""
        if self._trim_pending:
            return
        self._trim_pending = True

        def trim() -> None:
            self._trim_pending = False
            self._spawn(asyncio.to_thread(trim_free_memory))

        asyncio.get_running_loop().call_later(TRIM_DELAY_S, trim)

    def _end(self, session: Session, event: str, code: str, message: str) -> None:
        """Forget ``session`` and remember why, for the 404 of later requests."""
        self.forget(session, event, **({"reason": message} if event == "session.lost" else {}))
        self.ended[session.id] = (code, message)
        while len(self.ended) > 100_000:
            self.ended.popitem(last=False)

    def _expire(self, session: Session) -> None:
        message = f"session {session.id!r} expired after {self.settings.ttl_s:g} s idle"
        self._end(session, "session.expired", "session_expired", message)
        self._dispose(session.host)

    def _lose(self, session: Session, reason: str) -> None:
        """End ``session`` after its environment overran a limit or its process ended (the
        caller has arranged for the environment to be disposed of)."""
        message = f"session {session.id!r} was closed: {reason}"
        self._end(session, "session.lost", "session_not_found", message)

    def _dispose(self, host: Host) -> None:
        """Close ``host`` in a worker thread, without waiting."""
        self._spawn(self.run(host.env_id, "close", host.close, on_timeout=_killer(host)))

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        async def quietly() -> None:
            with contextlib.suppress(HostingError):  # logged where it was raised
                await work

        task = asyncio.get_running_loop().create_task(quietly())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def capacity(self, local: bool = False) -> dict[str, Any]:
        """The load for ``/health``: ``workers`` (server processes answering), ``sessions``,
        ``max_sessions``, ``free_slots``, ``steps`` (summed over the workers, unless
        ``local``) and, on Ray, the cluster's capacity."""
        held = len(self.sessions) + self.creating
        load: dict[str, Any] = {
            "workers": 1,
            "sessions": len(self.sessions),
            "max_sessions": self.settings.max_sessions,
            "free_slots": max(self.settings.max_sessions - held, 0),
            "steps": self.steps,
        }
        if not local and self.peer_loads is not None:
            for peer in await self.peer_loads():
                for key in ("workers", "sessions", "max_sessions", "free_slots", "steps"):
                    load[key] += peer[key]
        if self.settings.ray is not None:
            from llmgym.serving.ray_actors import cluster_capacity

            load["ray"] = await asyncio.to_thread(cluster_capacity)
        return load

    async def expire_idle(self) -> None:
        """Close every session idle for longer than the TTL (not those in use)."""
        for session in [s for s in self.sessions.values() if self._idle(s)]:
            if not session.lock.locked():
                self._expire(session)

    def reserve(self, client: str, env_id: str) -> None:
        """Claim a slot and ``env_id``'s memory for a new session of ``client``, or raise
        :class:`CapacityError` or :class:`QuotaError`."""
        settings = self.settings
        cost = settings.session_memory_mb(env_id)
        if (
            len(self.sessions) + self.creating >= settings.max_sessions
            or self.memory_mb + cost > self.memory_budget_mb
        ):
            for session in [s for s in self.sessions.values() if self._idle(s)]:
                if not session.lock.locked():
                    self._expire(session)
        if self.memory_mb + cost > self.memory_budget_mb:
            log(
                logging.WARNING,
                "memory.rejected",
                env_id=env_id,
                reserved_mb=round(self.memory_mb),
                budget_mb=round(self.memory_budget_mb),
            )
            raise CapacityError(
                f"the server's sessions hold {self.memory_mb:.0f} MiB of its "
                f"{self.memory_budget_mb:.0f} MiB memory budget (--max-memory) and a session of "
                f"{env_id} needs {cost:g} MiB more; close sessions you no longer use, or retry "
                "later"
            )
        if len(self.sessions) + self.creating >= settings.max_sessions:
            log(logging.WARNING, "capacity.rejected", max_sessions=settings.max_sessions)
            raise CapacityError(
                f"the server is at capacity ({settings.max_sessions} sessions); "
                "close sessions you no longer use, or retry later"
            )
        if self.per_client[client] >= settings.max_sessions_per_client:
            log(logging.WARNING, "quota.rejected", client=client)
            raise QuotaError(
                f"this client ({client}) holds {self.per_client[client]} sessions, as many as "
                f"one client may (--max-sessions-per-client {settings.max_sessions_per_client});"
                " close sessions you no longer use"
            )
        self.creating += 1
        self.per_client[client] += 1
        self.memory_mb += cost

    def add(self, host: Host, client: str) -> Session:
        """Register a new session for ``host`` (its slot reserved) under an unguessable id."""
        session_id = secrets.token_urlsafe(16)
        if self.place is not None:
            session_id = self.place.tag(session_id)
        session = Session(id=session_id, host=host, client=client)
        self.sessions[session.id] = session
        return session

    async def run(
        self,
        env_id: str,
        operation: str,
        function: Callable[..., Any],
        *args: Any,
        session: Session | None = None,
        on_timeout: Callable[[], None] | None = None,
        on_late: Callable[[Any], None] | None = None,
    ) -> Any:
        """``function(*args)`` in a worker thread, under the limit of ``operation`` (``step``
        and ``call``: ``step_timeout_s``; anything else: ``reset_timeout_s``). Past the limit,
        or when a child process ends, ``session`` (if given) is closed. Exceptions other than
        :class:`HostingError` become a logged 500; no message shows the directory of client
        files (a client's file is named as it named it)."""
        settings = self.settings
        step_like = operation in ("step", "call")
        limit = settings.step_timeout_s if step_like else settings.reset_timeout_s
        self._trim_soon()
        try:
            return await self.workers.run(
                _guarded,
                env_id,
                operation,
                function,
                *args,
                limit=limit,
                on_timeout=on_timeout,
                on_late=on_late,
            )
        except CallTimeoutError:
            flag = "--step-timeout" if step_like else "--reset-timeout"
            reason = (
                f"its {operation} ran for more than the server's limit of {limit:g} s ({flag}); "
                "its environment is discarded: make a new session"
            )
            log(logging.WARNING, "call.timeout", env_id=env_id, operation=operation, limit_s=limit)
            if session is not None:
                self._lose(session, reason)
            raise CallTimeoutError(f"{env_id}: {reason}") from None
        except EnvProcessError as error:
            log(logging.ERROR, "env.process_ended", env_id=env_id, message=error.message)
            if session is None:
                raise
            reason = f"{error.message}; its environment is gone: make a new session"
            self._lose(session, reason)
            self._dispose(session.host)
            raise EnvProcessError(reason) from None
        except HostingError as error:
            error.message = self.policy.without_file_dir(error.message)
            raise

    async def session_run(
        self, session: Session, operation: str, function: Callable[..., Any], *args: Any
    ) -> Any:
        """:meth:`run` for one of ``session``'s calls: past the limit its environment is
        discarded (a child process is killed at once; either is closed when the call
        returns)."""
        host = session.host
        return await self.run(
            host.env_id,
            operation,
            function,
            *args,
            session=session,
            on_timeout=_killer(host),
            on_late=_closer(host),
        )

    async def close_all(self) -> None:
        for session in list(self.sessions.values()):
            self.forget(session, "session.closed")
            self._dispose(session.host)
        await asyncio.gather(*self._background, return_exceptions=True)

    # -------------------------------------------------------------- session operations
    async def create(self, body: CreateSessionRequest, client: str) -> dict[str, Any]:
        """Make an environment for a new session of ``client`` (an address), and reset it
        unless ``body.reset`` is false; the reply is ``{"session_id", "instance_id", "ttl_s",
        "max_body_bytes", "env", "observation", "info", "seq"}``."""
        try:
            env_id = get_entry(body.env_id).id
        except KeyError as error:
            raise InvalidRequestError(str(error.args[0]), field="env_id") from None
        if env_id not in self.served:
            raise InvalidRequestError(
                f"{env_id} is not served here; served: {', '.join(sorted(self.served))}",
                field="env_id",
            )
        make_kwargs = dict(body.make_kwargs)
        if body.config is not None:
            if "config" in make_kwargs:
                raise InvalidRequestError(
                    "give the config either as `config` or in make_kwargs", field="config"
                )
            make_kwargs["config"] = body.config
        make_kwargs = self.policy.check_make(env_id, make_kwargs)
        fixed = self.settings.original_config(env_id)
        if fixed:
            given = make_kwargs.get("config")
            if given is None or isinstance(given, dict):
                make_kwargs["config"] = {**(given or {}), **fixed}
        if not body.reset and (body.seed, body.task_id, body.split) != (None, None, None):
            raise InvalidRequestError(
                "seed, task_id and split apply to the first reset: set reset=true"
            )
        self.reserve(client, env_id)
        try:
            host, description = await self._make(env_id, make_kwargs)
        except BaseException:
            self._release(client, env_id)
            raise
        finally:
            self.creating -= 1
        session = self.add(host, client)
        log(
            logging.INFO,
            "session.created",
            session_id=session.id,
            env_id=env_id,
            client=client,
            sessions=len(self.sessions),
        )
        reply: dict[str, Any] = {
            "session_id": session.id,
            "instance_id": self.instance_id,
            "ttl_s": self.settings.ttl_s,
            "max_body_bytes": self.settings.max_body_bytes,
            "env": description,
            "observation": None,
            "info": None,
            "seq": 0,
        }
        if body.reset:
            reply.update(await self._first_reset(session, body))
        return reply

    async def _make(self, env_id: str, make_kwargs: dict[str, Any]) -> tuple[Host, dict]:
        """A new environment and its description: in a Ray actor, a child process or this
        one."""
        host = self._separate_host(env_id, make_kwargs)
        if host is None:
            return await self.run(
                env_id, "make", _make_hosted, env_id, make_kwargs, self.served, on_late=_close_made
            )
        try:
            await self.run(env_id, "make", host.start, on_timeout=_killer(host))
        except HostingError:
            self._dispose(host)
            raise
        return host, host.describe()

    def _separate_host(self, env_id: str, make_kwargs: dict[str, Any]) -> SeparateHostedEnv | None:
        """The host of a new session of ``env_id`` in another process (not started yet), or
        ``None`` where it runs in this one."""
        settings = self.settings
        if settings.ray is not None:
            from llmgym.serving.ray_actors import RayHostedEnv

            return RayHostedEnv(
                env_id,
                make_kwargs,
                allowed=self.served,
                memory_mb=settings.ray_memory_mb(env_id),
                num_cpus=settings.ray_cpus,
            )
        if settings.isolated(env_id):
            return ProcessHostedEnv(env_id, make_kwargs, allowed=self.served)
        return None

    async def _first_reset(self, session: Session, body: CreateSessionRequest) -> dict[str, Any]:
        """The reset a new session asks for; a failure closes the session again."""
        asked = {"task_id": body.task_id, "split": body.split}
        request = ResetRequest(
            seed=body.seed, options={k: v for k, v in asked.items() if v is not None} or None
        )
        try:
            async with session.lock:
                payload, reply = await self.session_run(
                    session, "reset", _first_reset_reply, session, request
                )
        except HostingError:
            if self.sessions.get(session.id) is session:
                self.forget(session, "session.closed")
                self._dispose(session.host)
            raise
        session.seq, session.last_reply, session.last_request = 1, reply, ("reset", request)
        return payload

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
                host = session.host
                await self.run(host.env_id, "close", host.close, on_timeout=_killer(host))

    async def _sequenced(
        self,
        session_id: str,
        operation: str,
        request: ResetRequest | StepRequest,
        reply_of: Callable[[Session, Any, int], bytes],
    ) -> bytes:
        """Apply a reset or step under the session's lock, once per sequence number."""
        session = self.get(session_id)
        async with session.lock:
            self._live(session)
            cached = session.replay(request.seq, operation, request)
            if cached is not None:
                return cached
            seq = session.seq + 1
            reply = await self.session_run(session, operation, reply_of, session, request, seq)
            session.seq, session.last_reply = seq, reply
            session.last_request = (operation, request)
            session.last_used = time.monotonic()
            return reply

    async def reset(self, session_id: str, request: ResetRequest) -> bytes:
        """Start an episode; the reply is ``{"observation", "info", "seq"}``."""
        options = request.options
        if isinstance(options, dict) and "config" in options:
            env_id = self.get(session_id).host.env_id
            checked = self.policy.check(env_id, options["config"])
            request = request.model_copy(update={"options": {**options, "config": checked}})
        return await self._sequenced(session_id, "reset", request, _reset_reply)

    async def step(self, session_id: str, request: StepRequest) -> bytes:
        """Apply one action; the reply is ``{"observation", "reward", "terminated",
        "truncated", "info", "seq"}``."""
        reply = await self._sequenced(session_id, "step", request, _step_reply)
        self.steps += 1
        return reply

    async def call(self, session_id: str, request: CallRequest) -> bytes:
        """Call an allow-listed read-only method; the reply is ``{"result": ...}``."""
        session = self.get(session_id)
        request = self._checked_call(session.host.env_id, request)
        async with session.lock:
            self._live(session)
            return await self.session_run(session, "call", _call_reply, session.host, request)

    def _checked_call(self, env_id: str, request: CallRequest) -> CallRequest:
        """The call with its ``config`` argument (``task_ids``) checked against the policy."""
        function = REMOTE_CALLS.get(request.name)
        if function is None or not self.policy.applies(env_id):
            return request
        try:
            bound = inspect.signature(function).bind(None, *request.args, **request.kwargs)
        except TypeError:
            return request  # the environment's host answers it
        if "config" not in bound.arguments:
            return request
        bound.arguments["config"] = self.policy.check(env_id, bound.arguments["config"])
        return request.model_copy(update={"args": list(bound.args[1:]), "kwargs": bound.kwargs})

    async def stream_message(self, session_id: str, data: str | bytes) -> bytes:
        """Answer one message of the WebSocket stream: ``{"op": "reset" | "step" | "call",
        ...the HTTP body}``. Errors are answered too, as the HTTP error body plus
        ``"status"``; the stream stays open."""
        try:
            message = load_json(data, self.settings.max_json_depth)
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


# ------------------------------------------------------------------------------ in the workers
def _guarded(env_id: str, operation: str, function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)``; an exception that is not a :class:`HostingError` is logged with
    its traceback and becomes a 500."""
    try:
        return function(*args)
    except EnvRaisedError as error:
        log(logging.ERROR, "env.error", env_id=env_id, operation=operation, traceback=error.details)
        raise
    except HostingError:
        raise
    except Exception as error:
        log(logging.ERROR, "env.error", env_id=env_id, operation=operation, exc_info=True)
        raise HostingError(raised_message(error)) from error


def _make_hosted(
    env_id: str, make_kwargs: dict[str, Any], served: tuple[str, ...]
) -> tuple[HostedEnv, dict[str, Any]]:
    host = HostedEnv(env_id, make_kwargs, allowed=served)
    return host, host.describe()


def _close_made(made: tuple[HostedEnv, dict[str, Any]] | None) -> None:
    if made is not None:
        made[0].close()


def _killer(host: Host) -> Callable[[], None] | None:
    """What to do when a call of ``host`` overruns: end its process at once (a thread cannot
    be stopped)."""
    return host.kill if isinstance(host, SeparateHostedEnv) else None


def _closer(host: Host) -> Callable[[Any], None]:
    def close(_result: Any) -> None:
        host.close()

    return close


def _reset_payload(session: Session, request: ResetRequest, seq: int) -> dict[str, Any]:
    observation, info = session.host.reset(request.seed, request.options)
    log(logging.DEBUG, "session.reset", session_id=session.id, task_id=info.get("task_id"))
    return {"observation": observation, "info": info, "seq": seq}


def _reset_reply(session: Session, request: ResetRequest, seq: int) -> bytes:
    return dumps(_reset_payload(session, request, seq))


def _first_reset_reply(session: Session, request: ResetRequest) -> tuple[dict[str, Any], bytes]:
    """A new session's first reset: its payload (for the creation's reply) and its reply (for
    a retry of ``seq`` 1)."""
    payload = _reset_payload(session, request, 1)
    return payload, dumps(payload)


def _step_reply(session: Session, request: StepRequest, seq: int) -> bytes:
    observation, reward, terminated, truncated, info = session.host.step(request.action)
    return dumps(
        {
            "observation": observation,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "info": info,
            "seq": seq,
        }
    )


def _call_reply(host: Host, request: CallRequest) -> bytes:
    return dumps({"result": host.call(request.name, request.args, request.kwargs)})
