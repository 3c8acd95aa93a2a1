"""OpenEnv's protocol (``openenv`` 0.10) on the ``llmgym serve`` server: :class:`OpenEnvProtocol`.

OpenEnv clients (``GenericEnvClient``, TRL's examples, verifiers' ``OpenEnvTaskset``, NeMo-Gym,
SkyRL) open a WebSocket at ``/ws`` and send ``{"type": "reset" | "step" | "state" | "close",
"data": {...}}``; each connection is one session with an environment of its own. They also read
``/health``, ``/metadata``, ``/schema`` and, since 0.10, the task API (``/{env}/splits``,
``/{env}/tasks``, ``num_tasks``, ``task``, ``task_range``); OpenEnv's tools (``openenv
validate``, its hub's checks) also read ``/openapi.json`` and call the HTTP routes of OpenEnv's
simulation mode (``POST /reset``, ``POST /step``, ``GET /state``) and ``POST /mcp``. This module
answers all of it for one environment per mount point, with the server's own sessions
(:class:`~llmgym.serving.server.sessions.SessionStore`), so that every limit of ``llmgym serve``
applies unchanged: the time limit of each call, worker threads and child processes, config
caps, per-client quotas, the session cap, the idle TTL, the message size and JSON depth limits,
the bearer token.

Where: every served environment at ``/openenv/<name>`` (``/openenv/wordle/ws``), each with an
OpenAPI document of its own routes (``/openenv/wordle/openapi.json``); on a server that speaks
OpenEnv's protocol alone (``llmgym serve --protocol openenv --env ID``), its one environment at
the root, as OpenEnv's own servers and Spaces answer, described by the server's document.

What maps to what (:mod:`~llmgym.serving.server.episodes`):

* ``reset`` takes ``seed``, ``task_id``, ``split``, ``index`` (the ``index``-th task id of
  ``split``), ``config`` (overrides for the episode, checked against the server's caps),
  ``episode_id`` and ``horizon``;
* ``step`` takes ``{"action": text}``. A step without an ``action`` field is itself the action
  (verifiers sends a reply that is a JSON object, a tool call, as the step); an object or a
  list is sent to the environment as its JSON text, a number as it is (a pixel environment's
  action index). Either way the environment answers it: an action it cannot use is an
  observation with ``invalid_action``, never an error;
* an observation is ``{"text", "info", "invalid_action", "success", "terminated", "truncated",
  "task_id"}`` (plus ``instruction`` and, for tool environments, ``tools`` after a reset), with
  OpenEnv's ``reward`` and ``done`` (``terminated or truncated``) beside it.

Sessions, as OpenEnv's reference server has them:

* a WebSocket at ``/ws`` is a session of its own, closed with the connection;
* ``POST /mcp`` with ``{"method": "openenv/session/create"}`` makes a session that lives until
  ``openenv/session/close`` (or the server's TTL idle); its ``session_id`` names it to a
  WebSocket (``/ws?session_id=...``, which then leaves it open when it closes), to MCP's tools
  (``tools/call`` with ``params.session_id``) and to the HTTP routes below;
* the HTTP routes without a ``session_id`` are stateless, as the reference's: ``POST /reset``
  makes an environment, resets it, answers the first observation and closes it; ``GET /state``
  answers the state of a fresh environment; ``POST /step`` cannot step a fresh environment (it
  has no episode) and answers 409, saying how to get a session. With a ``session_id`` (in the
  body; ``GET /state?session_id=``) they reset, step and read that session: a whole episode
  over plain HTTP.

``/mcp`` is also the server's MCP endpoint for this environment (:mod:`~llmgym.serving.server.
mcp`): an MCP client (``initialize``, then ``Mcp-Session-Id``) gets a session per MCP session.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.types import Scope

import llmgym
from llmgym.core.tasks import TaskIdRange
from llmgym.envs import get_entry
from llmgym.errors import EpisodeStateError, HostingError, InvalidRequestError
from llmgym.serving.protocol import dumps
from llmgym.serving.server.episodes import (
    Descriptions,
    EpisodeSession,
    OpenEnvAction,
    OpenEnvObservation,
    OpenEnvReset,
    OpenEnvResult,
    OpenEnvState,
    SessionRegistry,
    fresh_state,
    openenv_name,
)
from llmgym.serving.server.guard import document_bearer
from llmgym.serving.server.logs import log
from llmgym.serving.server.mcp import McpEndpoint, mcp_router
from llmgym.serving.server.protocols import ServerProtocol
from llmgym.serving.server.schemas import (
    ErrorBody,
    body_schema,
    client_address,
    error_reply,
    error_responses,
    load_json,
    parse_body,
    reply,
)
from llmgym.serving.server.sessions import SessionStore
from llmgym.serving.server.settings import ServerSettings

__all__ = [
    "OpenEnvAction",
    "OpenEnvObservation",
    "OpenEnvProtocol",
    "OpenEnvReset",
    "OpenEnvState",
    "openenv_name",
    "openenv_routes",
]

MAX_LISTED_TASKS = 10_000
"""The most tasks ``POST /{env}/tasks`` lists (the first ones); ``task_range`` pages beyond."""


class _TaskQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    split: str
    index: int = Field(0, ge=0)
    start: int | None = Field(None, ge=0)
    stop: int | None = Field(None, ge=0)


_SESSION_ID = Field(
    None,
    description="A session made by POST /mcp openenv/session/create. Without one, a fresh "
    "environment answers, as OpenEnv's reference server's HTTP routes do.",
)


class OpenEnvHttpReset(OpenEnvReset):
    """``POST /reset``: a reset's arguments, and the session to reset."""

    session_id: str | None = _SESSION_ID


class OpenEnvHttpStep(BaseModel):
    """``POST /step``: the action (as a WebSocket step's data) and the session to step."""

    model_config = ConfigDict(extra="forbid")

    action: dict[str, Any] = Field(
        description='The action: {"action": text}, or a tool call object (see /schema).'
    )
    session_id: str | None = _SESSION_ID


class _Health(BaseModel):
    status: str = Field(description="healthy")


# ----------------------------------------------------------------------------- the protocol
class OpenEnvProtocol(ServerProtocol):
    """OpenEnv's protocol: every served environment at ``/openenv/<name>``, or, on a server that
    speaks it alone, its one environment at the root (an OpenEnv Space)."""

    single_worker = True  # the MCP SDK names its sessions: they cannot say their worker
    name = "openenv"
    session_key = (
        "the WebSocket connection to /ws (one session per connection), or the session_id "
        "that POST /mcp openenv/session/create answers"
    )
    open_paths = frozenset({"/health"})

    def check(self, settings: ServerSettings) -> None:
        served = settings.served()
        if _alone(settings) and len(served) != 1:
            raise ValueError(
                "protocols=('openenv',): OpenEnv's protocol alone serves one environment, at "
                "the root, as an OpenEnv Space; set envs to one id (llmgym serve --protocol "
                f"openenv --env ID), not {len(served)}"
            )

    def routers(self, store: SessionStore) -> list[APIRouter]:
        if _alone(store.settings):
            return openenv_routes(store, store.served[0])
        return openenv_routes(store)


def _alone(settings: ServerSettings) -> bool:
    return settings.protocols == (OpenEnvProtocol.name,)


# ----------------------------------------------------------------------------- the routes
def openenv_routes(store: SessionStore, env_id: str | None = None) -> list[APIRouter]:
    """OpenEnv's routers: for ``env_id`` at the root (``llmgym serve --protocol openenv --env
    ID``), described by the server's OpenAPI document; or, without it, for every served
    environment at ``/openenv/<name>`` (``/openenv/wordle/ws``), each described by its own
    document (``/openenv/wordle/openapi.json``), and kept out of llmgym's."""
    describe = Descriptions(store)
    registry = SessionRegistry(store, describe)
    if env_id is None:
        catalog = {openenv_name(e): e for e in store.served}

        def served(scope: Scope) -> str | None:
            return catalog.get(scope["path_params"].get("served_name", "").lower())

        prefix = "/openenv/{served_name}"
    else:
        fixed = get_entry(env_id).id

        def served(scope: Scope) -> str | None:
            return fixed

        prefix = ""
    router = _routes(store, describe, registry, served, prefix, documented=env_id is not None)
    if env_id is None:
        documents: dict[str, dict[str, Any]] = {}

        @router.get("/openapi.json")
        async def openapi(request: Request) -> Response:
            """OpenEnv's routes of this environment, as OpenAPI (what ``openenv validate``
            reads)."""
            env = _require(served, request)
            if env not in documents:
                documented = _routes(store, describe, registry, served, "", documented=True)
                documents[env] = _document(store, documented, f"/openenv/{openenv_name(env)}")
            return reply(documents[env])

    endpoint = McpEndpoint(store, describe, served, registry)
    return [router, mcp_router(f"{prefix}/mcp", endpoint)]


def _document(store: SessionStore, router: APIRouter, mount: str) -> dict[str, Any]:
    """The OpenAPI document of one mount's routes (paths relative to ``mount``)."""
    schema = get_openapi(
        title="llmgym environment server (OpenEnv)",
        version=llmgym.__version__,
        routes=router.routes,
        servers=[{"url": mount}],
    )
    if store.settings.token is not None:
        document_bearer(schema, frozenset())
    return schema


def _require(served: Callable[[Scope], str | None], request: Request) -> str:
    found = served(request.scope)
    if found is None:
        raise _NotFoundError(f"no environment {request.path_params.get('served_name')!r} here")
    return found


def _routes(
    store: SessionStore,
    describe: Descriptions,
    registry: SessionRegistry,
    served: Callable[[Scope], str | None],
    prefix: str,
    *,
    documented: bool,
) -> APIRouter:
    """OpenEnv's HTTP and WebSocket routes at ``prefix`` (in the OpenAPI document when
    ``documented``)."""
    router = APIRouter(prefix=prefix, include_in_schema=documented, tags=["openenv"])
    depth = store.settings.max_json_depth

    def require(request: Request) -> str:
        return _require(served, request)

    def require_task_env(request: Request, env_name: str) -> str:
        found = require(request)
        if env_name.lower() != openenv_name(found):
            raise _NotFoundError(f"unknown environment {env_name!r}")
        return found

    @router.get("/health", response_model=_Health, responses=error_responses(404))
    async def health(request: Request) -> Response:
        """OpenEnv's health check."""
        require(request)
        return reply({"status": "healthy"})

    @router.get("/metadata", response_model=dict[str, Any], responses=error_responses(401, 404))
    async def metadata(request: Request) -> Response:
        """Name, description and the environment's documentation (its docstring)."""
        return reply(await describe.metadata(require(request)))

    @router.get("/schema", response_model=dict[str, Any], responses=error_responses(401, 404))
    async def schema(request: Request) -> Response:
        """JSON Schemas of the action, the observation and the state, and the tools."""
        return reply(await describe.schema(require(request)))

    @router.post(
        "/reset",
        response_model=OpenEnvResult,
        responses=error_responses(401, 404, 409, 413, 422, 429, 502, 503, 504),
        openapi_extra=body_schema(OpenEnvHttpReset, required=False),
    )
    async def reset(request: Request) -> Response:
        """Reset the session ``session_id`` names; without one, a fresh environment (made,
        reset and closed for this request)."""
        env = require(request)
        empty = not (await request.body()).strip()  # OpenEnv's reset body is optional
        asked = (
            OpenEnvHttpReset.model_validate({})
            if empty
            else await parse_body(request, OpenEnvHttpReset, depth)
        )
        data = asked.model_dump(exclude={"session_id"}, exclude_unset=True)
        if asked.session_id is not None:
            return reply(await registry.get(asked.session_id, env).reset(data))
        session = await EpisodeSession.create(store, describe, env, client_address(request))
        try:
            return reply(await session.reset(data))
        finally:
            await session.close()

    @router.post(
        "/step",
        response_model=OpenEnvResult,
        responses=error_responses(401, 404, 409, 413, 422, 502, 504),
        openapi_extra=body_schema(OpenEnvHttpStep),
    )
    async def step(request: Request) -> Response:
        """Step the session ``session_id`` names (a fresh environment has no episode to
        step)."""
        env = require(request)
        asked = await parse_body(request, OpenEnvHttpStep, depth)
        if asked.session_id is None:
            raise EpisodeStateError(
                "POST /step without a session_id would step a fresh environment, which has no "
                "episode: make a session (POST /mcp with openenv/session/create), reset it "
                "and step it by its session_id, or play over the WebSocket at /ws",
                code="reset_needed",
            )
        session = registry.get(asked.session_id, env)
        return reply(await session.step(openenv_action(asked.action)))

    @router.get("/state", response_model=OpenEnvState, responses=error_responses(401, 404))
    async def state(request: Request, session_id: str | None = None) -> Response:
        """The state of the session ``session_id`` names; without one, a fresh
        environment's."""
        env = require(request)
        if session_id is None:
            return reply(fresh_state(env))
        return reply(registry.get(session_id, env).state())

    @router.get("/list_environments", response_model=list[str], responses=error_responses(401))
    async def list_environments(request: Request) -> Response:
        """The environment's OpenEnv name."""
        return reply([openenv_name(require(request))])

    task_errors = error_responses(401, 404, 413, 422)

    @router.get("/{env_name}/splits", response_model=list[dict[str, str]], responses=task_errors)
    async def splits(request: Request, env_name: str) -> Response:
        """The splits: train, and eval (OpenEnv's test)."""
        require_task_env(request, env_name)
        return reply([{"name": "train", "type": "train"}, {"name": "eval", "type": "test"}])

    task_query = body_schema(_TaskQuery)

    @router.post(
        "/{env_name}/tasks",
        response_model=dict[str, Any],
        responses=task_errors,
        openapi_extra=task_query,
    )
    async def tasks(request: Request, env_name: str) -> Response:
        """The tasks of a split (the first ten thousand)."""
        env = require_task_env(request, env_name)
        query = await parse_body(request, _TaskQuery, depth)
        ids = await describe.task_ids(env, query.split)
        listed = [_task(ids, i) for i in range(min(len(ids), MAX_LISTED_TASKS))]
        return reply({"tasks": listed, "env_name": openenv_name(env)})

    @router.post(
        "/{env_name}/num_tasks",
        response_model=dict[str, int],
        responses=task_errors,
        openapi_extra=task_query,
    )
    async def num_tasks(request: Request, env_name: str) -> Response:
        """How many tasks a split has."""
        env = require_task_env(request, env_name)
        query = await parse_body(request, _TaskQuery, depth)
        return reply({"num_tasks": len(await describe.task_ids(env, query.split))})

    @router.post(
        "/{env_name}/task",
        response_model=dict[str, Any],
        responses={**task_errors, 400: {"model": ErrorBody, "description": "No such index."}},
        openapi_extra=task_query,
    )
    async def task(request: Request, env_name: str) -> Response:
        """The ``index``-th task of a split."""
        env = require_task_env(request, env_name)
        query = await parse_body(request, _TaskQuery, depth)
        ids = await describe.task_ids(env, query.split)
        if query.index >= len(ids):
            return error_reply(400, {"error": "invalid_request", "message": "Invalid task index"})
        return reply({"task": _task(ids, query.index)})

    @router.post(
        "/{env_name}/task_range",
        response_model=dict[str, Any],
        responses=task_errors,
        openapi_extra=task_query,
    )
    async def task_range(request: Request, env_name: str) -> Response:
        """The tasks of a split from ``start`` to ``stop`` (ten thousand at most)."""
        env = require_task_env(request, env_name)
        query = await parse_body(request, _TaskQuery, depth)
        ids = await describe.task_ids(env, query.split)
        start, stop = query.start or 0, min(len(ids), query.stop or len(ids))
        stop = min(stop, start + MAX_LISTED_TASKS)
        return reply({"tasks": [_task(ids, i) for i in range(start, stop)]})

    @router.websocket("/ws")
    async def sessions(websocket: WebSocket) -> None:
        """A session per connection (or the session ``?session_id=`` names): reset, step,
        state and close messages."""
        env = served(websocket.scope)
        if env is None:
            await websocket.close(code=1008)
            return
        await websocket.accept()
        with contextlib.suppress(WebSocketDisconnect):
            named = websocket.query_params.get("session_id")
            await _Connection(store, describe, registry, env, websocket, named).serve()

    return router


class _NotFoundError(HostingError):
    status = 404
    code = "not_found"


def _task(ids: TaskIdRange | list[str], index: int) -> dict[str, Any]:
    task_id = ids[index]
    return {"task_id": task_id, "split": task_id.split("/", 1)[0], "index": index}


def openenv_action(data: dict[str, Any]) -> Any:
    """The action of a step's data: its ``action``, or (without one) the data itself, as
    verifiers sends a tool call. An object or a list becomes its JSON text; text and numbers
    (an index of a discrete action space) are the action as they are."""
    action = data["action"] if "action" in data else _without_metadata(data)
    if isinstance(action, (str, int, float)) and not isinstance(action, bool):
        return action
    return dumps(action).decode()


def _without_metadata(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "metadata"}


# ----------------------------------------------------------------------------- one connection
class _Connection:
    """One WebSocket: a session of the store made when it opens and closed when it ends, or
    the session it names by ``session_id`` (left open)."""

    def __init__(
        self,
        store: SessionStore,
        describe: Descriptions,
        registry: SessionRegistry,
        env_id: str,
        websocket: WebSocket,
        named: str | None,
    ) -> None:
        self.store = store
        self.describe = describe
        self.registry = registry
        self.env_id = env_id
        self.websocket = websocket
        self.named = named
        self.session: EpisodeSession | None = None
        self.operations: dict[str, Callable[[dict[str, Any]], Any]] = {
            "reset": self.reset,
            "step": self.step,
            "state": self.state,
        }

    async def serve(self) -> None:
        try:
            if self.named is None:
                client = client_address(self.websocket)
                self.session = await EpisodeSession.create(
                    self.store, self.describe, self.env_id, client
                )
            else:
                self.session = self.registry.get(self.named, self.env_id)
        except HostingError as error:  # capacity, quota, a failed make: say why, then close
            await self.websocket.send_text(_error(error))
            await self.websocket.close(code=1013 if error.status in (429, 503) else 1011)
            return
        try:
            while True:
                message = await self.websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                answer, end = await self.answer(message.get("text") or message.get("bytes") or "")
                if answer is not None:
                    await self.websocket.send_text(answer)
                if end:
                    await self.websocket.close()
                    return
        finally:
            if self.named is None:
                await self.session.close()

    async def answer(self, data: str | bytes) -> tuple[str | None, bool]:
        """The reply to one message (none to ``close``), and whether the connection ends."""
        try:
            message = load_json(data, self.store.settings.max_json_depth)
            kind = message.get("type") if isinstance(message, dict) else None
            if kind == "close":
                return None, True
            operation = self.operations.get(kind) if isinstance(kind, str) else None
            if operation is None:
                raise InvalidRequestError(
                    f"unknown message type {kind!r}: reset, step, state or close",
                    field="type",
                    code="UNKNOWN_TYPE",
                )
            body = message.get("data") or {}
            if not isinstance(body, dict):
                raise InvalidRequestError("data must be an object", field="data")
            return await operation(body), False
        except HostingError as error:
            assert self.session is not None
            log(
                logging.WARNING if error.status < 500 else logging.ERROR,
                "openenv.failed",
                session_id=self.session.session_id,
                status=error.status,
                error=error.code,
                message=error.message,
            )
            lost = error.status in (502, 504) or error.code in (
                "session_not_found",
                "session_expired",
            )
            return _error(error), lost

    async def reset(self, data: dict[str, Any]) -> str:
        assert self.session is not None
        return _message("observation", await self.session.reset(data))

    async def step(self, data: dict[str, Any]) -> str:
        assert self.session is not None
        return _message("observation", await self.session.step(openenv_action(data)))

    async def state(self, _data: dict[str, Any]) -> str:
        assert self.session is not None
        return _message("state", self.session.state())


def _message(kind: str, data: dict[str, Any]) -> str:
    return dumps({"type": kind, "data": data}).decode()


def _error(error: HostingError) -> str:
    data = {
        "message": error.message,
        "code": error.code,
        "status": error.status,
        "field": error.field,
    }
    return _message("error", data)
