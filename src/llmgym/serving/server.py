"""``llmgym serve``: every llmgym environment over HTTP, for trainers on other machines.

    pip install 'llmgym[serve]'
    llmgym serve --host 0.0.0.0 --port 8000 --token "$TOKEN"

A client creates a *session* (one environment instance, private to it), resets and steps it, and
closes it; :class:`llmgym.serving.client.RemoteEnv` does this behind the ``gymnasium.Env`` API. The
server is built to be left running:

* every session has its own lock, so concurrent requests to one session are applied one at a
  time and sessions never share an instance;
* idle sessions expire after ``ttl_s`` seconds, and at most ``max_sessions`` exist (503 with
  ``Retry-After`` beyond that);
* every error has its HTTP status and a JSON body ``{"error": code, "message": ..., "field":
  ...}``: 401 (token missing or wrong), 404 (unknown or expired session), 409 (step before reset
  or after the episode ended), 413 (request body over the limit), 422 (invalid request, unknown
  environment, bad config: the ``ConfigError`` message and field), 503 (at capacity) — never a
  200 with an error inside. A hostile *action* is not an error: the environment answers it
  (``info["invalid_action"]``) as it would locally — an action index out of range too;
* observations, ``info`` and actions may hold numpy arrays (pixel environments): they travel
  exactly, as ``{"__ndarray__": base64, "dtype": ..., "shape": [...]}`` (see
  :mod:`llmgym.serving.hosting`);
* ``reset`` and ``step`` carry an optional sequence number, so a client may retry one after a
  dropped connection without applying it twice;
* logs are JSON lines with the session id (logger ``llmgym.serving.server``).

Environment calls that take under ``inline_call_s`` (2 ms) on average run on the event loop;
slower ones (an engine's reset, a big generator) run in worker threads so that they do not hold
up other sessions.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import hmac
import importlib
import json
import logging
import secrets
import socket
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar

from llmgym.core.registry import optional_import

optional_import("fastapi", extra="serve")

import anyio  # noqa: E402
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect  # noqa: E402
from fastapi.exceptions import RequestValidationError  # noqa: E402
from fastapi.responses import Response  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, ValidationError  # noqa: E402
from starlette.exceptions import HTTPException as StarletteHTTPException  # noqa: E402

import llmgym  # noqa: E402
from llmgym.envs import ENVIRONMENTS, get_entry  # noqa: E402
from llmgym.serving.hosting import HostedEnv  # noqa: E402
from llmgym.serving.protocol import (  # noqa: E402
    ARRAY_KEY,
    PROTOCOL_VERSION,
    ArrayDType,
    HostingError,
    InvalidRequestError,
    dumps,
    loads,
)

__all__ = ["ServerSettings", "create_app", "serve"]

logger = logging.getLogger("llmgym.serving.server")
logger.addHandler(logging.NullHandler())

JSON = "application/json"
OPEN_PATHS = frozenset({"/health", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})
"""Paths answered without the token (no session data behind them)."""


class SessionNotFoundError(HostingError):
    status = 404
    code = "session_not_found"


class CapacityError(HostingError):
    status = 503
    code = "at_capacity"


class OutOfSequenceError(HostingError):
    status = 409
    code = "out_of_sequence"


@dataclass(frozen=True)
class ServerSettings:
    """How a server behaves.

    Attributes:
        envs: The environment ids it serves (``None``: every available one).
        max_sessions: Sessions that may exist at once.
        ttl_s: Seconds a session may stay idle before it is closed.
        token: If set, every request except ``/health`` and the API docs must send
            ``Authorization: Bearer <token>``.
        max_body_bytes: Largest request body accepted (larger: 413).
        inline_call_s: Environment calls faster than this on average run on the event loop.
    """

    envs: tuple[str, ...] | None = None
    max_sessions: int = 256
    ttl_s: float = 600.0
    token: str | None = None
    max_body_bytes: int = 1 << 20
    inline_call_s: float = 0.002

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ValueError(f"max_sessions={self.max_sessions} must be at least 1")
        if self.ttl_s <= 0:
            raise ValueError(f"ttl_s={self.ttl_s} must be positive")
        if self.max_body_bytes < 1024:
            raise ValueError(f"max_body_bytes={self.max_body_bytes} must be at least 1024")
        if self.envs is not None:
            object.__setattr__(self, "envs", tuple(get_entry(e).id for e in self.envs))


def _log(level: int, event: str, *, exc_info: bool = False, **fields: Any) -> None:
    if logger.isEnabledFor(level):
        logger.log(level, event, exc_info=exc_info, extra={"fields": fields})


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``event`` and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=repr)


# ------------------------------------------------------------------------------ sessions
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
        _log(
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
            _log(logging.WARNING, "capacity.rejected", max_sessions=self.settings.max_sessions)
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
                _log(logging.ERROR, "env.error", env_id=key[0], operation=key[1], exc_info=True)
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
            _log(logging.DEBUG, "session.reset", session_id=session.id, task_id=info["task_id"])
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
            message = _load_json(data)
            if not isinstance(message, dict) or message.get("op") not in _STREAM_OPERATIONS:
                raise InvalidRequestError(
                    "a stream message is an object with op: reset, step or call", field="op"
                )
            model, method = _STREAM_OPERATIONS[message.pop("op")]
            try:
                request = model.model_validate(message)
            except ValidationError as error:
                raise _validation_error(error.errors()) from None
            return await getattr(self, method)(session_id, request)
        except HostingError as error:
            _log(
                logging.WARNING if error.status < 500 else logging.ERROR,
                "stream.failed",
                session_id=session_id,
                status=error.status,
                error=error.code,
                message=error.message,
            )
            return dumps({**error.to_dict(), "status": error.status})


# ------------------------------------------------------------------------------ request bodies
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateSessionRequest(_Body):
    env_id: str = Field(description="A registered environment id, e.g. llmgym/Wordle-v0.")
    make_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments for gymnasium.make (knobs, ...)."
    )
    config: dict[str, Any] | None = Field(
        None, description="Config overrides for the environment (the make argument `config`)."
    )
    reset: bool = Field(True, description="Reset once and return the first observation.")
    seed: int | None = Field(None, ge=0, description="Seed of the first reset.")
    task_id: str | None = Field(None, description="Task of the first reset, e.g. eval/00042.")
    split: Literal["train", "eval"] | None = Field(None, description="Split of the first reset.")


class ResetRequest(_Body):
    seed: int | None = Field(None, ge=0)
    options: dict[str, Any] | None = Field(
        None, description="task_id, split and/or config (overrides for this episode)."
    )
    seq: int | None = Field(None, ge=1, description="Sequence number of this request (retries).")


class StepRequest(_Body):
    action: Any = Field(
        description=(
            "The action: text, an integer for a Discrete action space, an encoded array for an "
            "array space. Any other value is answered by the environment as an invalid action, "
            "as it is locally (an index out of range too)."
        ),
    )
    seq: int | None = Field(None, ge=1, description="Sequence number of this request (retries).")


class CallRequest(_Body):
    name: str = Field(description="An allow-listed read-only method, e.g. oracle_action.")
    args: list[Any] = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)


_STREAM_OPERATIONS: dict[str, tuple[type[BaseModel], str]] = {
    "reset": (ResetRequest, "reset"),
    "step": (StepRequest, "step"),
    "call": (CallRequest, "call"),
}
"""The WebSocket stream's operations: the request model and the :class:`SessionStore` method."""


# ------------------------------------------------------------------------------ response shapes
class ErrorBody(BaseModel):
    error: str = Field(description="A stable code, e.g. session_not_found or invalid_request.")
    message: str
    field: str | None = None
    detail: list[Any] | None = None


class NDArray(BaseModel):
    """A numpy array, exactly: its bytes in C order and little-endian, base64-encoded."""

    model_config = ConfigDict(extra="forbid")

    data: str = Field(
        alias=ARRAY_KEY,
        pattern=r"^[A-Za-z0-9+/]*={0,2}$",
        description="base64 of the array's bytes (C order, little-endian).",
        json_schema_extra={"contentEncoding": "base64"},
    )
    dtype: ArrayDType
    shape: list[Annotated[int, Field(ge=0)]]


Observation = Annotated[
    str | NDArray, Field(description="Text, or an encoded array (pixel environments).")
]


class TextSpace(BaseModel):
    type: Literal["Text"]
    min_length: int
    max_length: int
    charset: str


class DiscreteSpace(BaseModel):
    type: Literal["Discrete"]
    n: int = Field(ge=1)
    start: int
    dtype: Literal["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


class BoxSpace(BaseModel):
    type: Literal["Box"]
    shape: list[Annotated[int, Field(ge=0)]]
    dtype: ArrayDType
    low: float | NDArray = Field(
        description="The lower bound of every element (when they share one finite bound), or "
        "the array of lower bounds."
    )
    high: float | NDArray = Field(description="The upper bound(s), as `low`.")


class MultiDiscreteSpace(BaseModel):
    type: Literal["MultiDiscrete"]
    nvec: NDArray
    start: NDArray


class MultiBinarySpace(BaseModel):
    type: Literal["MultiBinary"]
    n: int | list[int]


SpaceModel = Annotated[
    TextSpace | DiscreteSpace | BoxSpace | MultiDiscreteSpace | MultiBinarySpace,
    Field(discriminator="type"),
]


class EnvDescription(BaseModel):
    env_id: str
    protocol: int
    observation_space: SpaceModel
    action_space: SpaceModel
    max_episode_steps: int | None
    render_modes: list[str]
    config: dict[str, Any]
    example: str
    skills: list[str]


class ResetReply(BaseModel):
    observation: Observation
    info: dict[str, Any]
    seq: int


class StepReply(BaseModel):
    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    seq: int


class SessionCreated(BaseModel):
    session_id: str
    instance_id: str
    ttl_s: float
    env: EnvDescription
    observation: Observation | None
    info: dict[str, Any] | None
    seq: int


class SessionStatus(BaseModel):
    session_id: str
    env_id: str
    episode: Literal["not_started", "running", "ended"]
    steps: int
    seq: int
    age_s: float
    ttl_s: float


class CallReply(BaseModel):
    result: Any


class EnvironmentRow(BaseModel):
    id: str
    entry_point: str
    max_episode_steps: int | None
    extra: str | None
    kind: str
    available: bool
    summary: str


class EnvironmentList(BaseModel):
    environments: list[EnvironmentRow]


class EnvironmentDetail(EnvironmentRow):
    config_schema: dict[str, Any]


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    protocol: int
    instance_id: str
    sessions: int
    max_sessions: int
    ttl_s: float
    uptime_s: float
    steps: int


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    descriptions = {
        401: "Missing or wrong bearer token.",
        404: "Unknown, closed or expired session.",
        409: "Step before reset, after the episode ended, or out of sequence.",
        413: "Request body over the size limit.",
        422: "Invalid request: malformed body, unknown environment, bad config or options.",
        503: "At capacity: too many sessions.",
    }
    return {s: {"model": ErrorBody, "description": descriptions[s]} for s in statuses}


M = TypeVar("M", bound=BaseModel)


def _load_json(data: str | bytes) -> Any:
    """A request body or stream message, with its encoded arrays decoded; else a 422."""
    try:
        return loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        problem = {"loc": (), "msg": f"JSON decode error: {error}", "type": "json_invalid"}
        raise _validation_error([problem]) from None
    except ValueError as error:
        raise InvalidRequestError(f"invalid array: {error}", code="invalid_array") from None


async def _parse(request: Request, model: type[M]) -> M:
    """The request's JSON body as ``model``, or a 422. (Hot endpoints parse their body here:
    much cheaper than FastAPI's dependency machinery, with the same validation.)"""
    data = _load_json(await request.body())
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise _validation_error(error.errors()) from None


class _ValidationFailure(InvalidRequestError):
    """A body that does not match its schema; ``detail`` lists every problem."""

    def __init__(self, message: str, field: str | None, detail: list[dict[str, Any]]) -> None:
        super().__init__(message, field=field)
        self.detail = detail

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "detail": self.detail}


def _validation_error(problems: Sequence[Any]) -> _ValidationFailure:
    """A 422 from pydantic's error list (locations relative to the body)."""
    detail = []
    for problem in problems:
        location = list(problem.get("loc", ()))
        if location[:1] == ["body"]:
            location = location[1:]
        detail.append({"loc": location, "msg": problem.get("msg"), "type": problem.get("type")})
    first = detail[0] if detail else {"loc": [], "msg": "invalid request"}
    field = ".".join(str(part) for part in first["loc"]) or None
    return _ValidationFailure(f"{field or 'body'}: {first['msg']}", field, detail)


def _body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAPI for a body parsed by :func:`_parse`."""
    schema = model.model_json_schema()
    return {
        "requestBody": {"required": True, "content": {JSON: {"schema": schema}}},
    }


def _reply(payload: Any, status: int = 200) -> Response:
    return Response(dumps(payload), status_code=status, media_type=JSON)


def _error_reply(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Response:
    return Response(dumps(body), status_code=status, media_type=JSON, headers=headers)


# ------------------------------------------------------------------------------ guard middleware
class _BodyTooLarge(Exception):
    pass


class _Guard:
    """Checks the bearer token and the body size before anything else runs (pure ASGI)."""

    def __init__(self, app: Any, settings: ServerSettings) -> None:
        self.app = app
        self.token = f"Bearer {settings.token}".encode() if settings.token else None
        self.limit = settings.max_body_bytes

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "websocket":
            if self.token is None or hmac.compare_digest(
                dict(scope["headers"]).get(b"authorization", b""), self.token
            ):
                await self.app(scope, receive, send)
            else:  # refused before the handshake completes: the client sees HTTP 403
                _log(logging.WARNING, "auth.rejected", path=scope["path"])
                await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if self.token is not None and scope["path"] not in OPEN_PATHS:
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self.token):
                _log(logging.WARNING, "auth.rejected", path=scope["path"])
                body = {
                    "error": "unauthorized",
                    "message": "send the server's token as 'Authorization: Bearer <token>'",
                    "field": None,
                }
                await _error_reply(401, body, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._too_large(scope, receive, send)
            return
        received = 0
        started = False

        async def counting_receive() -> dict:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise _BodyTooLarge
            return message

        async def tracking_send(message: dict) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _BodyTooLarge:
            if not started:
                await self._too_large(scope, receive, send)

    async def _too_large(self, scope: dict, receive: Callable, send: Callable) -> None:
        body = {
            "error": "payload_too_large",
            "message": f"request bodies are limited to {self.limit} bytes",
            "field": None,
        }
        await _error_reply(413, body, {"Connection": "close"})(scope, receive, send)


# ------------------------------------------------------------------------------ the app
def create_app(settings: ServerSettings | None = None) -> FastAPI:
    """The FastAPI application (run it with :func:`serve`, or any ASGI server)."""
    settings = settings or ServerSettings()
    store = SessionStore(settings)
    served = settings.envs or tuple(e.id for e in ENVIRONMENTS if e.available)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):  # type: ignore[no-untyped-def]
        async def sweep() -> None:
            while True:
                await asyncio.sleep(min(settings.ttl_s / 2, 30.0))
                await store.expire_idle()

        sweeper = asyncio.create_task(sweep())
        _log(
            logging.INFO,
            "server.started",
            instance_id=store.instance_id,
            envs=list(served),
            max_sessions=settings.max_sessions,
            ttl_s=settings.ttl_s,
            auth=settings.token is not None,
        )
        try:
            yield
        finally:
            sweeper.cancel()
            await store.close_all()
            _log(logging.INFO, "server.stopped", instance_id=store.instance_id)

    app = FastAPI(
        title="llmgym environment server",
        version=llmgym.__version__,
        description="Sessions of llmgym text environments: create, reset, step, close.",
        lifespan=lifespan,
        redirect_slashes=False,
    )
    app.state.store = store

    @app.exception_handler(HostingError)
    async def hosting_error(request: Request, error: HostingError) -> Response:
        _log(
            logging.WARNING if error.status < 500 else logging.ERROR,
            "request.failed",
            path=request.url.path,
            status=error.status,
            error=error.code,
            message=error.message,
        )
        headers = {"Retry-After": "5"} if error.status == 503 else None
        return _error_reply(error.status, error.to_dict(), headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, error: RequestValidationError) -> Response:
        return await hosting_error(request, _validation_error(error.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        return _error_reply(
            error.status_code,
            {"error": code, "message": str(error.detail), "field": None},
            dict(error.headers or {}),
        )

    @app.get("/health", response_model=Health, tags=["server"])
    async def health() -> Response:
        """Liveness and load. ``instance_id`` changes when the server restarts."""
        return _reply(
            {
                "status": "ok",
                "version": llmgym.__version__,
                "protocol": PROTOCOL_VERSION,
                "instance_id": store.instance_id,
                "sessions": len(store.sessions),
                "max_sessions": settings.max_sessions,
                "ttl_s": settings.ttl_s,
                "uptime_s": round(time.time() - store.started, 3),
                "steps": store.steps,
            }
        )

    @app.get("/environments", response_model=EnvironmentList, responses=_errors(401), tags=["envs"])
    async def list_environments() -> Response:
        """The environments this server serves."""
        return _reply({"environments": [get_entry(e).as_dict() for e in served]})

    @app.get(
        "/environments/{env_id:path}",
        response_model=EnvironmentDetail,
        responses=_errors(401, 404),
        tags=["envs"],
    )
    async def describe_environment(env_id: str) -> Response:
        """One environment's table row and its config's JSON Schema."""
        try:
            entry = get_entry(env_id)
        except KeyError:
            entry = None
        if entry is None or entry.id not in served:
            return _error_reply(
                404,
                {
                    "error": "not_found",
                    "message": f"{env_id!r} is not served here; served: {', '.join(served)}",
                    "field": "env_id",
                },
            )
        schema = await store.run((entry.id, "schema"), _config_schema, entry.id)
        return _reply({**entry.as_dict(), "config_schema": schema})

    @app.post(
        "/sessions",
        status_code=201,
        response_model=SessionCreated,
        responses=_errors(401, 413, 422, 503),
        tags=["sessions"],
    )
    async def create_session(body: CreateSessionRequest) -> Response:
        """Make an environment for this client (and reset it, unless ``reset`` is false)."""
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
        store.reserve()
        try:
            host = await store.run(
                (body.env_id, "make"),
                functools.partial(HostedEnv, allowed=served),
                body.env_id,
                make_kwargs,
            )
        finally:
            store.creating -= 1
        session = store.add(host)
        _log(
            logging.INFO,
            "session.created",
            session_id=session.id,
            env_id=host.env_id,
            sessions=len(store.sessions),
        )
        reply: dict[str, Any] = {
            "session_id": session.id,
            "instance_id": store.instance_id,
            "ttl_s": settings.ttl_s,
            "env": host.describe(),
            "observation": None,
            "info": None,
            "seq": 0,
        }
        if body.reset:
            options = {
                k: v for k, v in (("task_id", body.task_id), ("split", body.split)) if v is not None
            }
            try:
                async with session.lock:
                    observation, info = await store.run(
                        (host.env_id, "reset"), host.reset, body.seed, options
                    )
            except HostingError:
                store.forget(session, "session.closed")
                host.close()
                raise
            session.seq = 1
            reply.update(observation=observation, info=info, seq=1)
            session.last_reply = dumps({"observation": observation, "info": info, "seq": 1})
        return _reply(reply, 201)

    @app.post(
        "/sessions/{session_id}/reset",
        response_model=ResetReply,
        responses=_errors(401, 404, 409, 413, 422),
        tags=["sessions"],
        openapi_extra=_body_schema(ResetRequest),
    )
    async def reset_session(session_id: str, request: Request) -> Response:
        """Start an episode: ``seed`` and ``options`` as in ``env.reset``."""
        body = await _parse(request, ResetRequest)
        return Response(await store.reset(session_id, body), media_type=JSON)

    @app.post(
        "/sessions/{session_id}/step",
        response_model=StepReply,
        responses=_errors(401, 404, 409, 413, 422),
        tags=["sessions"],
        openapi_extra=_body_schema(StepRequest),
    )
    async def step_session(session_id: str, request: Request) -> Response:
        """Apply one action. Hostile text is answered by the environment, not rejected."""
        body = await _parse(request, StepRequest)
        return Response(await store.step(session_id, body), media_type=JSON)

    @app.post(
        "/sessions/{session_id}/call",
        response_model=CallReply,
        responses=_errors(401, 404, 409, 413, 422),
        tags=["sessions"],
        openapi_extra=_body_schema(CallRequest),
    )
    async def call_session(session_id: str, request: Request) -> Response:
        """Call a read-only method of the environment (``task_ids``, ``oracle_action``,
        ``admissible_actions``, ``rules``, ...; see ``llmgym.serving.hosting.REMOTE_CALLS``)."""
        body = await _parse(request, CallRequest)
        return Response(await store.call(session_id, body), media_type=JSON)

    @app.get(
        "/sessions/{session_id}",
        response_model=SessionStatus,
        responses=_errors(401, 404),
        tags=["sessions"],
    )
    async def session_status(session_id: str) -> Response:
        """A session's state: its episode, step count and idle time."""
        session = store.get(session_id)
        host, now = session.host, time.monotonic()
        episode = "ended" if host.episode_over else ("running" if host.started else "not_started")
        return _reply(
            {
                "session_id": session.id,
                "env_id": host.env_id,
                "episode": episode,
                "steps": host.steps,
                "seq": session.seq,
                "age_s": round(now - session.created, 3),
                "ttl_s": settings.ttl_s,
            }
        )

    @app.websocket("/sessions/{session_id}/stream")
    async def stream_session(websocket: WebSocket, session_id: str) -> None:
        """The session's reset, step and call over one WebSocket: each message is
        ``{"op": "reset" | "step" | "call", ...the HTTP body}`` and is answered with the HTTP
        reply's JSON (errors: the error body plus ``"status"``). Several times cheaper per step
        than a request each; :class:`~llmgym.serving.client.RemoteEnv` uses it when it can."""
        await websocket.accept()
        with contextlib.suppress(WebSocketDisconnect):  # the client went away: nothing to do
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                data = message.get("bytes") or message.get("text") or ""
                await websocket.send_bytes(await store.stream_message(session_id, data))

    @app.delete(
        "/sessions/{session_id}", status_code=204, responses=_errors(401, 404), tags=["sessions"]
    )
    async def close_session(session_id: str) -> Response:
        """Close the session and free its environment."""
        session = store.get(session_id)
        async with session.lock:
            if store.sessions.get(session_id) is session:
                store.forget(session, "session.closed")
                await anyio.to_thread.run_sync(session.host.close)
        return Response(status_code=204)

    app.add_middleware(_Guard, settings=settings)
    _complete_openapi(app, settings, served)
    return app


def _config_schema(env_id: str) -> dict[str, Any]:
    module, _, name = get_entry(env_id).entry_point.partition(":")
    return getattr(importlib.import_module(module), name).config_schema()


def _complete_openapi(app: FastAPI, settings: ServerSettings, served: tuple[str, ...]) -> None:
    """Add what the routes cannot say to the OpenAPI document: the served environment ids, that
    an action is any JSON value but a malformed encoded array, and the bearer token (which the
    guard middleware enforces)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            create = schema["components"]["schemas"]["CreateSessionRequest"]
            create["properties"]["env_id"]["enum"] = list(served)
            step = schema["paths"]["/sessions/{session_id}/step"]["post"]["requestBody"]
            step["content"][JSON]["schema"]["properties"]["action"]["anyOf"] = [
                {"not": {"type": "object", "required": [ARRAY_KEY]}},
                {"$ref": "#/components/schemas/NDArray"},
            ]
            if settings.token is not None:
                schema["components"]["securitySchemes"] = {
                    "bearer": {"type": "http", "scheme": "bearer"}
                }
                for path, operations in schema["paths"].items():
                    if path not in OPEN_PATHS:
                        for operation in operations.values():
                            operation["security"] = [{"bearer": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    settings: ServerSettings | None = None,
    *,
    log_level: str = "info",
    access_log: bool = False,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until interrupted. ``port=0`` picks a free port; ``on_ready`` receives the URL."""
    uvicorn = optional_import("uvicorn", extra="serve")
    settings = settings or ServerSettings()
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # connections made from now on wait for uvicorn instead of being refused
    bound_port = sock.getsockname()[1]
    url = f"http://{f'[{host}]' if family == socket.AF_INET6 else host}:{bound_port}"
    if settings.token is None and host not in ("127.0.0.1", "localhost", "::1"):
        _log(
            logging.WARNING,
            "server.open",
            message=f"serving on {host} without a token: anyone who reaches it can use it",
        )
    _log(logging.INFO, "server.listening", url=url)
    if on_ready is not None:
        on_ready(url)
    config = uvicorn_config(
        create_app(settings), settings, log_level=log_level, access_log=access_log
    )
    uvicorn.Server(config).run(sockets=[sock])


def uvicorn_config(app: FastAPI, settings: ServerSettings, **options: Any) -> Any:
    """The uvicorn configuration of a server: keep-alive past the client's (so the server never
    closes a connection the client is about to reuse), WebSocket messages limited like request
    bodies, no compression (text this short is cheaper to send than to deflate)."""
    uvicorn = optional_import("uvicorn", extra="serve")
    defaults = {
        "timeout_keep_alive": 65,
        "ws_max_size": settings.max_body_bytes,
        "ws_per_message_deflate": False,
        "lifespan": "on",
        "log_level": "info",
    }
    return uvicorn.Config(app, **{**defaults, **options})


def configure_logging(level: str = "info", stream: Any = None) -> None:
    """JSON-lines logs from ``llmgym.serving.server`` on ``stream`` (default: stderr)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
