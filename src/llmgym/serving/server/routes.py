"""llmgym's own protocol (:class:`LlmgymProtocol`): one router per resource, the server itself,
environments, sessions.

Each router is built over the process's :class:`~llmgym.serving.server.sessions.SessionStore`;
the handlers stay thin and leave the work to the store.
"""

from __future__ import annotations

import contextlib
import importlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response
from pydantic import BaseModel

import llmgym
from llmgym.envs import get_entry
from llmgym.serving.hosting import REMOTE_CALLS
from llmgym.serving.protocol import ARRAY_KEY, PROTOCOL_VERSION
from llmgym.serving.server.protocols import ServerProtocol
from llmgym.serving.server.schemas import (
    JSON,
    CallReply,
    CallRequest,
    CreateSessionRequest,
    EnvironmentDetail,
    EnvironmentList,
    Health,
    ResetReply,
    ResetRequest,
    SessionCreated,
    SessionStatus,
    StepReply,
    StepRequest,
    body_schema,
    client_address,
    error_reply,
    error_responses,
    parse_body,
    reply,
)
from llmgym.serving.server.sessions import SessionStore
from llmgym.serving.server.workers import LOCAL_HEADER

__all__ = ["LlmgymProtocol", "environment_routes", "server_routes", "session_routes"]


class LlmgymProtocol(ServerProtocol):
    """llmgym's own protocol, at the root: ``/health``, ``/environments`` and ``/sessions``
    (over HTTP, or a WebSocket stream per session); the one :class:`~llmgym.serving.client.
    RemoteEnv` speaks, described by the server's OpenAPI document."""

    name = "llmgym"
    session_key = "the session_id that POST /sessions answers, in the path: /sessions/{session_id}"
    open_paths = frozenset({"/health"})

    def routers(self, store: SessionStore) -> list[APIRouter]:
        return [server_routes(store), environment_routes(store), session_routes(store)]

    def session_of(self, scope: dict[str, Any], body: bytes | None) -> str | None:
        """The ``{session_id}`` of ``/sessions/{session_id}[/...]``."""
        parts = scope["path"].split("/", 3)
        if len(parts) >= 3 and parts[1] == "sessions" and parts[2]:
            return parts[2]
        return None

    def amend_openapi(self, schema: dict[str, Any], store: SessionStore) -> None:
        """The served environment ids, the remote calls, and that an action is any JSON value
        but a malformed encoded array."""
        paths = schema["paths"]

        def body(path: str) -> dict[str, Any]:
            return paths[path]["post"]["requestBody"]["content"][JSON]["schema"]

        body("/sessions")["properties"]["env_id"]["enum"] = list(store.served)
        body("/sessions/{session_id}/call")["properties"]["name"]["enum"] = sorted(REMOTE_CALLS)
        body("/sessions/{session_id}/step")["properties"]["action"]["anyOf"] = [
            {"not": {"type": "object", "required": [ARRAY_KEY]}},
            {"$ref": "#/components/schemas/NDArray"},
        ]


def server_routes(store: SessionStore) -> APIRouter:
    """``GET /health``."""
    router = APIRouter(tags=["server"])

    @router.get("/health", response_model=Health)
    async def health(request: Request) -> Response:
        """Liveness and live capacity: sessions held and free slots (and, on Ray, the
        cluster's nodes, CPUs and memory). ``instance_id`` changes when the server restarts."""
        return reply(
            {
                "status": "ok",
                "version": llmgym.__version__,
                "protocol": PROTOCOL_VERSION,
                "instance_id": store.instance_id,
                "uptime_s": round(time.time() - store.started, 3),
                "ttl_s": store.settings.ttl_s,
                **await store.capacity(local=LOCAL_HEADER in request.headers),
            }
        )

    return router


def environment_routes(store: SessionStore) -> APIRouter:
    """``GET /environments`` and ``GET /environments/{env_id}``."""
    router = APIRouter(tags=["envs"])
    served = store.served

    @router.get("/environments", response_model=EnvironmentList, responses=error_responses(401))
    async def list_environments() -> Response:
        """The environments this server serves."""
        return reply({"environments": [get_entry(e).as_dict() for e in served]})

    @router.get(
        "/environments/{env_id:path}",
        response_model=EnvironmentDetail,
        responses=error_responses(401, 404),
    )
    async def describe_environment(env_id: str) -> Response:
        """One environment's table row and its config's JSON Schema."""
        try:
            entry = get_entry(env_id)
        except KeyError:
            entry = None
        if entry is None or entry.id not in served:
            return error_reply(
                404,
                {
                    "error": "not_found",
                    "message": f"{env_id!r} is not served here; served: {', '.join(served)}",
                    "field": "env_id",
                },
            )
        schema = await store.run(entry.id, "schema", _config_schema, entry.id)
        return reply({**entry.as_dict(), "config_schema": schema})

    return router


def session_routes(store: SessionStore) -> APIRouter:
    """Create, reset, step, call, inspect, stream and close sessions."""
    router = APIRouter(prefix="/sessions", tags=["sessions"])
    episode_errors = error_responses(401, 404, 409, 413, 422, 502, 504)

    @router.post(
        "",
        status_code=201,
        response_model=SessionCreated,
        responses=error_responses(401, 413, 422, 429, 502, 503, 504),
        openapi_extra=body_schema(CreateSessionRequest),
    )
    async def create_session(request: Request) -> Response:
        """Make an environment for this client (and reset it, unless ``reset`` is false)."""
        body = await parse_body(request, CreateSessionRequest, store.settings.max_json_depth)
        return reply(await store.create(body, client_address(request)), 201)

    for operation, request_model, reply_model, doc in _EPISODE_OPERATIONS:
        router.post(
            f"/{{session_id}}/{operation}",
            name=f"{operation}_session",
            response_model=reply_model,
            responses=episode_errors,
            openapi_extra=body_schema(request_model),
        )(_episode_handler(store, operation, request_model, doc))

    @router.get("/{session_id}", response_model=SessionStatus, responses=error_responses(401, 404))
    async def session_status(session_id: str) -> Response:
        """A session's state: its episode, step count and idle time."""
        return reply(store.status(session_id))

    @router.websocket("/{session_id}/stream")
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

    @router.delete("/{session_id}", status_code=204, responses=error_responses(401, 404, 502, 504))
    async def close_session(session_id: str) -> Response:
        """Close the session and free its environment."""
        await store.close(session_id)
        return Response(status_code=204)

    return router


_EPISODE_OPERATIONS: tuple[tuple[str, type[BaseModel], type[BaseModel], str], ...] = (
    (
        "reset",
        ResetRequest,
        ResetReply,
        "Start an episode: ``seed`` and ``options`` as in ``env.reset``.",
    ),
    (
        "step",
        StepRequest,
        StepReply,
        "Apply one action. Hostile text is answered by the environment, not rejected.",
    ),
    (
        "call",
        CallRequest,
        CallReply,
        "Call a read-only method of the environment (``task_ids``, ``oracle_action``,\n"
        "``admissible_actions``, ``rules``, ...; see ``llmgym.serving.hosting.REMOTE_CALLS``).",
    ),
)
"""The operations on a session's episode: ``POST /sessions/{id}/<operation>`` with the request
model, answered by :class:`SessionStore`'s method of that name with the reply model."""


def _episode_handler(
    store: SessionStore, operation: str, request_model: type[BaseModel], doc: str
) -> Callable[[str, Request], Awaitable[Response]]:
    apply = getattr(store, operation)
    max_depth = store.settings.max_json_depth

    async def handle(session_id: str, request: Request) -> Response:
        body = await parse_body(request, request_model, max_depth)
        return Response(await apply(session_id, body), media_type=JSON)

    handle.__doc__ = doc
    return handle


def _config_schema(env_id: str) -> dict[str, Any]:
    module, _, name = get_entry(env_id).entry_point.partition(":")
    return getattr(importlib.import_module(module), name).config_schema()
