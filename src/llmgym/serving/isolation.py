"""Keeping one environment from stalling or killing the others: calls off the event loop with a
wall-clock limit, and environments in a child process of their own.

* :class:`Workers` runs environment calls in threads for an asyncio event loop. A call that
  overruns its limit is abandoned: the caller gets :class:`CallTimeoutError` at once, the
  thread is replaced at once (so a runaway call never holds up other calls), and an optional
  callback runs when the abandoned call finally returns (a Python thread cannot be killed: its
  environment is discarded then).
* :class:`ProcessHostedEnv` is a :class:`~llmgym.serving.hosting.HostedEnv` in a child process,
  with the same methods. An engine that calls ``exit()``, crashes or hangs ends that child only
  (:class:`EnvProcessError`), and :meth:`ProcessHostedEnv.kill` stops it, engine subprocesses
  (a JVM) included. Its base, :class:`SeparateHostedEnv`, is any host in another process that
  answers :func:`answer_request`'s messages (a Ray actor too).
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import multiprocessing
import os
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from llmgym.envs import get_entry
from llmgym.errors import (
    CallTimeoutError,
    EnvProcessError,
    EnvRaisedError,
    EpisodeStateError,
    HostingError,
    InvalidRequestError,
)
from llmgym.serving.hosting import HostedEnv
from llmgym.serving.protocol import dumps, loads, raised_message

__all__ = [
    "ProcessHostedEnv",
    "SeparateHostedEnv",
    "Workers",
    "answer_request",
]


# ------------------------------------------------------------------------------ threads
@dataclass(eq=False)
class _Job:
    function: Callable[..., Any]
    args: tuple[Any, ...]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    limit: float
    on_late: Callable[[Any], None] | None
    started: float | None = None
    abandoned: bool = False
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)


class Workers:
    """Threads that run blocking calls for an event loop, each call under a wall-clock limit.

    Threads start on demand, up to ``threads`` at once; the limit of a call counts from when a
    thread starts it, not while it waits for one. The thread of an abandoned call leaves the
    pool (a new one takes its place when there is work) and ends when the call returns.
    """

    def __init__(self, threads: int = 64) -> None:
        self.threads = threads
        self.abandoned = 0
        """Abandoned calls whose thread has not finished yet (the call, then ``on_late``)."""
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._running = 0  # threads in the pool
        self._idle = 0  # of them, waiting for a job nobody has claimed
        self._backlog = 0  # jobs queued with no thread claimed for them

    async def run(
        self,
        function: Callable[..., Any],
        *args: Any,
        limit: float,
        on_timeout: Callable[[], None] | None = None,
        on_late: Callable[[Any], None] | None = None,
    ) -> Any:
        """``function(*args)`` in a thread. Past ``limit`` seconds of running:
        ``on_timeout()`` runs (on the event loop), then :class:`CallTimeoutError` is raised;
        ``on_late(result)`` runs in the thread when the abandoned call returns (``result`` is
        ``None`` when it raised)."""
        loop = asyncio.get_running_loop()
        job = _Job(function, args, loop.create_future(), loop, limit, on_late)
        job.timer = loop.call_later(limit, self._check, job, on_timeout)
        with self._lock:
            if self._idle:
                self._idle -= 1
                start = False
            else:
                start = self._running < self.threads
                if start:
                    self._running += 1
                else:
                    self._backlog += 1
        self._jobs.put(job)
        if start:
            self._start_thread()
        try:
            return await job.future
        finally:
            job.timer.cancel()

    def _start_thread(self) -> None:
        threading.Thread(target=self._work, name="llmgym-env-call", daemon=True).start()

    def _check(self, job: _Job, on_timeout: Callable[[], None] | None) -> None:
        """The limit's timer (on the event loop): abandon the job if it has run for too long."""
        if job.future.done():
            return
        started = job.started
        remaining = job.limit if started is None else started + job.limit - time.monotonic()
        if remaining > 0:  # still queued, or started late: check again when it may be over
            job.timer = job.loop.call_later(remaining, self._check, job, on_timeout)
            return
        with self._lock:
            job.abandoned = True
            self.abandoned += 1
            replace = self._backlog > 0
            if replace:  # its thread takes a queued job's place
                self._backlog -= 1
            else:
                self._running -= 1
        if replace:
            self._start_thread()
        if on_timeout is not None:
            on_timeout()
        job.future.set_exception(
            CallTimeoutError(f"the call ran for more than the server's limit of {job.limit:g} s")
        )

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            job.started = time.monotonic()
            result: Any = None
            outcome: tuple[bool, Any]
            try:
                result = job.function(*job.args)
                outcome = (True, result)
            except BaseException as error:  # the caller's to handle
                outcome = (False, error)
            with self._lock:
                abandoned = job.abandoned
                if not abandoned:
                    if self._backlog:
                        self._backlog -= 1  # this thread takes the next queued job
                    else:
                        self._idle += 1
            if abandoned:
                if job.on_late is not None:
                    with contextlib.suppress(Exception):
                        job.on_late(result)
                with self._lock:
                    self.abandoned -= 1
                return
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                job.loop.call_soon_threadsafe(_settle, job.future, outcome)


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # cancelled, or abandoned meanwhile
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


# ------------------------------------------------------------------------------ processes
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["llmgym.serving.hosting"])


class SeparateHostedEnv(abc.ABC):
    """A :class:`~llmgym.serving.hosting.HostedEnv` in another process: the same ``reset``,
    ``step``, ``call``, ``describe`` and ``close``, and the same episode state (``started``,
    ``episode_over``, ``steps``), mirrored after every call.

    Nothing runs until :meth:`start` (blocking: it starts the process and makes the
    environment). Every call blocks until the other process answers (:func:`answer_request`);
    when it ends instead (its engine called ``exit()``, crashed, its machine went away, or
    :meth:`kill` stopped it) the call raises :class:`EnvProcessError`, and so does every later
    one. Subclasses say how a request travels: :class:`ProcessHostedEnv` (a child process) and
    :class:`~llmgym.serving.ray_actors.RayHostedEnv` (a Ray actor).
    """

    def __init__(
        self,
        env_id: str,
        make_kwargs: Mapping[str, Any] | None = None,
        *,
        allowed: Collection[str] | None = None,
    ) -> None:
        self.entry = get_entry(env_id)
        self.env_id = self.entry.id
        self.started = False
        self.episode_over = False
        self.steps = 0
        self._make = (self.entry.id, dict(make_kwargs or {}), tuple(allowed or ()) or None)
        self._description: dict[str, Any] = {}

    def start(self) -> None:
        """Start the process and make the environment in it (the make's errors are raised)."""
        self._open()
        self._description = self._request("make", *self._make)

    def describe(self) -> dict[str, Any]:
        """What a client needs to mirror the environment (see ``HostedEnv.describe``)."""
        return self._description

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> tuple:
        """``HostedEnv.reset`` in the other process."""
        return tuple(self._request("reset", seed, options))

    def step(self, action: Any) -> tuple:
        """``HostedEnv.step`` in the other process."""
        return tuple(self._request("step", action))

    def call(
        self, name: str, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None
    ) -> Any:
        """``HostedEnv.call`` in the other process."""
        return self._request("call", name, list(args), dict(kwargs or {}))

    @abc.abstractmethod
    def close(self) -> None:
        """Close the environment and end its process (at most a few seconds)."""

    @abc.abstractmethod
    def kill(self, reason: str = "it was stopped") -> None:
        """End the process now (safe from any thread, at any time)."""

    @abc.abstractmethod
    def _open(self) -> None:
        """Start the process that will answer."""

    @abc.abstractmethod
    def _exchange(self, operation: str, *args: Any) -> list[Any]:
        """Send one request and wait for its answer ``[status, value, state]``; raise
        :class:`EnvProcessError` when the process is gone."""

    def _request(self, operation: str, *args: Any) -> Any:
        status, value, state = self._exchange(operation, *args)
        if state is not None:
            self.started, self.episode_over, self.steps = state
        if status == "ok":
            return value
        if status == "hosting":
            error_class = _ERRORS_BY_STATUS.get(value["status"], HostingError)
            raise error_class(value["message"], field=value["field"], code=value["error"])
        message, details = value
        raise EnvRaisedError(message, details)


class ProcessHostedEnv(SeparateHostedEnv):
    """A :class:`SeparateHostedEnv` in a child process of this one, which :meth:`kill` stops
    with everything it started (a JVM)."""

    def __init__(
        self,
        env_id: str,
        make_kwargs: Mapping[str, Any] | None = None,
        *,
        allowed: Collection[str] | None = None,
    ) -> None:
        super().__init__(env_id, make_kwargs, allowed=allowed)
        self._lock = threading.Lock()
        self._process: Any = None
        self._connection: Connection | None = None
        self._ended: str | None = None  # why the child is gone

    def _open(self) -> None:
        parent, child = _CONTEXT.Pipe()
        process = _CONTEXT.Process(target=_child, args=(child, *self._make), daemon=True)
        with self._lock:
            if self._ended is not None:
                raise EnvProcessError(f"{self.env_id}: {self._ended}")
            process.start()
            self._process, self._connection = process, parent
        child.close()

    def close(self) -> None:
        """Close the environment and end the child (at most a few seconds)."""
        with contextlib.suppress(HostingError):
            if self._ended is None and self._connection is not None:
                self._connection.send_bytes(dumps(["close"]))
                if self._connection.poll(5.0):
                    self._connection.recv_bytes()
        self.kill("it was closed")
        if self._process is not None:
            self._process.join(5.0)
            with contextlib.suppress(ValueError):
                self._process.close()

    def kill(self, reason: str = "it was stopped") -> None:
        """Stop the child and everything it started, now (safe from any thread, at any time)."""
        with self._lock:
            if self._ended is None:
                self._ended = f"the environment's process ended: {reason}"
            process = self._process
        if process is not None:
            with contextlib.suppress(ValueError, ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # with what it started (a JVM)
            with contextlib.suppress(ValueError):  # also before the child made its group
                process.kill()
        if self._connection is not None:
            with contextlib.suppress(OSError):
                self._connection.close()

    def _exchange(self, operation: str, *args: Any) -> list[Any]:
        connection = self._connection
        try:
            if connection is None or self._ended is not None:
                raise EOFError
            if operation != "make":  # the child makes the environment as it starts
                connection.send_bytes(dumps([operation, *args]))
            return loads(connection.recv_bytes())
        except (EOFError, OSError):
            raise EnvProcessError(
                f"{self.env_id}: during {operation}, {self._why_ended()}"
            ) from None

    def _why_ended(self) -> str:
        with self._lock:
            if self._ended is not None:
                return self._ended
            self._ended = "the environment's process ended"
        process = self._process
        if process is not None:
            process.join(2.0)
            code = process.exitcode
            if code is not None:
                signalled = f"signal {-code}" if code < 0 else f"exit code {code}"
                self._ended = f"the environment's process ended ({signalled})"
        return self._ended


_ERRORS_BY_STATUS: dict[int, type[HostingError]] = {
    error.status: error for error in (EpisodeStateError, InvalidRequestError)
}
"""The errors a child reports by status (their code travels too); any other is a 500."""


def answer_request(host: HostedEnv | None, function: Callable[..., Any], *args: Any) -> list:
    """The far side of a :class:`SeparateHostedEnv`'s request: ``function(*args)`` answered as
    ``[status, value, state]``, where ``status`` is ``"ok"`` (``value`` is the result),
    ``"hosting"`` (a :class:`HostingError`'s body and status) or ``"raised"`` (any other
    exception: its message and traceback), and ``state`` is ``host``'s episode state
    ``[started, episode_over, steps]`` after the call (``None`` before there is a host)."""
    try:
        status, value = "ok", function(*args)
    except HostingError as error:
        status, value = "hosting", {**error.to_dict(), "status": error.status}
    except Exception as error:
        status, value = "raised", [raised_message(error), traceback.format_exc()]
    state = None if host is None else [host.started, host.episode_over, host.steps]
    return [status, value, state]


def _child(
    connection: Connection,
    env_id: str,
    make_kwargs: dict[str, Any],
    allowed: tuple[str, ...] | None,
) -> None:
    """The child's loop: make the environment, then answer ``[operation, *args]`` messages
    (:func:`answer_request`) until ``close`` or EOF."""
    os.setsid()  # its own process group: kill() stops what the engine started too
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server stops its children itself
    host: HostedEnv | None = None

    def make() -> dict[str, Any]:
        nonlocal host
        host = HostedEnv(env_id, make_kwargs, allowed=allowed)
        return host.describe()

    connection.send_bytes(dumps(answer_request(None, make)))
    if host is None:
        return
    operations: dict[str, Callable[..., Any]] = {
        "reset": host.reset,
        "step": host.step,
        "call": host.call,
    }
    while True:
        try:
            operation, *args = loads(connection.recv_bytes())
        except EOFError:
            break
        if operation == "close":
            with contextlib.suppress(Exception):
                host.close()
            connection.send_bytes(dumps(answer_request(host, lambda: None)))
            break
        connection.send_bytes(dumps(answer_request(host, operations[operation], *args)))
