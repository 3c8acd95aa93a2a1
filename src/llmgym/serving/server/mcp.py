"""MCP (the Model Context Protocol) on ``llmgym serve``: :class:`McpProtocol`, and the endpoint
that OpenEnv's ``/mcp`` is too (:class:`McpEndpoint`).

An agent framework or a trainer that calls tools over MCP reaches an environment at
``/mcp/<name>`` (``/mcp/weather``), streamable HTTP, with the ``mcp`` SDK's own server
(``pip install 'llmgym[mcp]'``). Each MCP session is one session of the server, made when the
client initializes and closed when it ends (the client's ``DELETE``, the server's TTL idle, the
server stopping), so every limit of ``llmgym serve`` applies unchanged: the token and the body
size (the guard in front of every route), the JSON depth, the time limit of each call, worker
threads and child processes, config caps, the per-client quota and the session cap.

The tools (``tools/list``):

* a tool environment's own tools (Weather, Movie, Academia, Sheet, Todo), with their JSON
  schemas, from the environment's ``tool_schemas()`` (:func:`env_tools`, the one place that
  knows that surface); a call is the environment's step with the call as its action;
* for every other environment one tool, ``act(action)``: the action as text (an index too, for
  a discrete action space);
* ``reset`` (a task by ``task_id``, or by ``split`` and ``index``; ``seed``, ``config``,
  ``horizon``) and ``tasks`` (a split's task ids, paged), in every environment.

A call's result (``tools/call``): the observation as its content (text, or a PNG for a pixel
environment's frame) and, in its structured content, ``observation`` (exactly, arrays encoded as
:mod:`llmgym.serving.protocol` encodes them), ``reward``, ``done`` (``terminated or
truncated``), ``terminated``, ``truncated``, ``invalid_action``, ``success``, ``task_id`` and
``info``; after ``reset`` also ``instruction``. An action the environment cannot use is answered
as it is locally (``invalid_action``), not as an error. JSON-RPC errors answer what is not a step:
an unknown tool, arguments that are not an object, a step before ``reset`` or after the episode
ended, a reset the server refuses, a session lost to a time limit; the session stays usable
unless it was lost.

Served as OpenEnv's ``/mcp`` (:mod:`~llmgym.serving.server.openenv`), the endpoint also answers
OpenEnv's own JSON-RPC over plain POSTs (what ``openenv validate`` probes and OpenEnv's
``MCPToolClient`` sends): ``openenv/session/create`` and ``openenv/session/close``, and
``tools/list`` and ``tools/call`` with a ``session_id`` in their params, on the same tools. A
POST without an MCP session that is not MCP's ``initialize`` is OpenEnv's; everything else is
MCP's.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.metadata
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

import llmgym
from llmgym.core.registry import install_command
from llmgym.errors import HostingError, InvalidRequestError, JsonRpcError
from llmgym.runner.frames import encode_png
from llmgym.serving.protocol import dumps
from llmgym.serving.server.episodes import (
    Descriptions,
    EpisodeSession,
    OpenEnvReset,
    SessionRegistry,
    openenv_name,
)
from llmgym.serving.server.logs import log
from llmgym.serving.server.protocols import ServerProtocol
from llmgym.serving.server.schemas import JSON, client_address, load_json, validation_error
from llmgym.serving.server.sessions import SessionStore

try:
    import anyio
    from mcp import types as mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.shared.exceptions import McpError

    if not importlib.metadata.version("mcp").startswith("1."):  # [mcp] pins the SDK's API
        raise ImportError("the mcp 1 SDK")
except ImportError:  # without the [mcp] extra, MCP's requests are answered with how to add it
    mcp_types = None  # type: ignore[assignment]

__all__ = [
    "McpEndpoint",
    "McpProtocol",
    "Toolbox",
    "env_tools",
    "mcp_router",
    "mcp_tools",
    "tool_call_action",
]

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR, SERVER_ERROR = -32603, -32000
"""JSON-RPC's error codes (SERVER_ERROR: the server is at capacity or the client at its quota)."""

CONTROL_TOOLS = ("reset", "tasks")
MAX_TASKS_PER_CALL = 1000
SESSION_HEADER = "mcp-session-id"


def _rpc_error(error: HostingError) -> JsonRpcError:
    """The JSON-RPC error of a server error; ``data`` is its JSON error body and status."""
    if error.status in (400, 404, 413, 422):
        code = INVALID_PARAMS
    elif error.status in (429, 503):
        code = SERVER_ERROR
    elif error.status >= 500:
        code = INTERNAL_ERROR
    else:
        code = INVALID_REQUEST
    return JsonRpcError(code, error.message, {**error.to_dict(), "status": error.status})


# ----------------------------------------------------------------------------- the tools
class _TasksArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")

    split: Literal["train", "eval"] = Field("train", description="The split.")
    start: int = Field(0, ge=0, description="The index of the first task id listed.")
    count: int = Field(100, ge=1, le=MAX_TASKS_PER_CALL, description="How many to list.")


def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    return schema


RESET_TOOL = {
    "name": "reset",
    "description": "Start an episode, the first one or the next after one ended. The task: "
    "task_id (e.g. eval/00042), or split and index (the index-th task of the split), or none "
    "(the next one of the split). config overrides the environment's config for this episode "
    "(within the server's caps); seed seeds it; horizon limits its turns. Answers the first "
    "observation; the instruction and the task id are in the structured content.",
    "inputSchema": _input_schema(OpenEnvReset),
}
TASKS_TOOL = {
    "name": "tasks",
    "description": "List the task ids of a split (train or eval), count of them from start; "
    "the structured content also holds how many the split has. reset takes a task id.",
    "inputSchema": _input_schema(_TasksArguments),
}


def env_tools(tool_schemas: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """A tool environment's tools (``tool_schemas()``: OpenAI's function format) as MCP tool
    definitions. A call of one is the environment's action ``{"name": TOOL, "arguments":
    {...}}`` (:func:`tool_call_action`): together, the adapter between an environment's tools
    and MCP."""
    return [
        {
            "name": tool["function"]["name"],
            "description": tool["function"].get("description", ""),
            "inputSchema": tool["function"].get("parameters") or {"type": "object"},
        }
        for tool in tool_schemas or []
    ]


def tool_call_action(name: str, arguments: dict[str, Any]) -> str:
    """The environment's action for a call of its tool ``name``: a JSON function call."""
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def _action_schema(space: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of ``act``'s action for an action space (as llmgym's protocol describes
    it): text, or for a discrete space also the action's index."""
    if space["type"] == "Text":
        return {"type": "string", "maxLength": space["max_length"], "description": "The action."}
    if space["type"] == "Discrete":
        low, high = space["start"], space["start"] + space["n"] - 1
        return {
            "anyOf": [{"type": "string"}, {"type": "integer", "minimum": low, "maximum": high}],
            "description": f"The action: its text, or its index ({low}-{high}).",
        }
    return {"description": "The action, as the environment's action space takes it."}


def mcp_tools(
    tool_schemas: list[dict[str, Any]] | None, action_space: dict[str, Any]
) -> list[dict[str, Any]]:
    """The MCP tools of an environment: its own tools (a tool environment) or ``act``, then
    ``reset`` and ``tasks``."""
    tools = env_tools(tool_schemas)
    if not tools:
        act = {
            "type": "object",
            "properties": {"action": _action_schema(action_space)},
            "required": ["action"],
            "additionalProperties": False,
        }
        tools = [
            {
                "name": "act",
                "description": "Take one action in the environment: a step. Answers the next "
                "observation; reward and done are in the structured content.",
                "inputSchema": act,
            }
        ]
    clashing = {t["name"] for t in tools}.intersection(CONTROL_TOOLS)
    if clashing:
        raise ValueError(f"an environment's tool may not be named {', '.join(sorted(clashing))}")
    return [*tools, RESET_TOOL, TASKS_TOOL]


def _content(observation: Any) -> dict[str, Any]:
    """An observation as MCP content: text, or a frame as a PNG image."""
    if isinstance(observation, str):
        return {"type": "text", "text": observation}
    if isinstance(observation, np.ndarray):
        frame = observation.ndim == 2 or (observation.ndim == 3 and observation.shape[2] == 3)
        if observation.dtype == np.uint8 and frame:
            png = base64.b64encode(encode_png(observation)).decode()
            return {"type": "image", "data": png, "mimeType": "image/png"}
        return {"type": "text", "text": json.dumps(observation.tolist())}
    return {"type": "text", "text": dumps(observation).decode()}


def _tool_result(answer: dict[str, Any]) -> dict[str, Any]:
    """An MCP tool result (``CallToolResult``) of a reset's or a step's answer
    (:class:`~llmgym.serving.server.episodes.EpisodeSession`'s)."""
    observation = answer["observation"]
    structured = {
        "observation": observation["text"],
        "reward": answer["reward"],
        "done": answer["done"],
        "terminated": observation["terminated"],
        "truncated": observation["truncated"],
        "invalid_action": observation["invalid_action"],
        "success": observation["success"],
        "task_id": observation["task_id"],
        "info": observation["info"],
    }
    if "instruction" in observation:
        structured["instruction"] = observation["instruction"]
    return {
        "content": [_content(observation["text"])],
        "structuredContent": json.loads(dumps(structured)),  # arrays encoded, as JSON
        "isError": False,
    }


class Toolbox:
    """The MCP tools of one session (:func:`mcp_tools`) and their calls."""

    def __init__(self, session: EpisodeSession, tool_schemas: list[dict[str, Any]] | None):
        self.session = session
        self.tools = mcp_tools(tool_schemas, session.environment["action_space"])
        self.env_tool_names = {t["name"] for t in env_tools(tool_schemas)}
        self.names = [t["name"] for t in self.tools]

    async def call(self, name: Any, arguments: Any) -> dict[str, Any]:
        """The result of calling tool ``name`` with ``arguments``.

        Raises:
            JsonRpcError: What is not a step: an unknown tool, arguments that are not an
                object, or an error of the server (a step before ``reset``, ...).
        """
        if name not in self.names:
            raise JsonRpcError(
                INVALID_PARAMS, f"unknown tool {name!r}; tools: {', '.join(self.names)}"
            )
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise JsonRpcError(INVALID_PARAMS, f"{name}: arguments must be an object")
        try:
            if name == "reset":
                return _tool_result(await self.session.reset(arguments))
            if name == "tasks":
                return await self._tasks(arguments)
            if name in self.env_tool_names:
                return _tool_result(await self.session.step(tool_call_action(name, arguments)))
            return _tool_result(await self.session.step(_act_action(arguments)))
        except HostingError as error:
            log(
                logging.WARNING if error.status < 500 else logging.ERROR,
                "mcp.failed",
                session_id=self.session.session_id,
                tool=name,
                status=error.status,
                error=error.code,
                message=error.message,
            )
            raise _rpc_error(error) from None

    async def _tasks(self, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            asked = _TasksArguments.model_validate(arguments)
        except ValidationError as error:
            raise validation_error(error.errors()) from None
        ids = await self.session.describe.task_ids(self.session.env_id, asked.split)
        listed = [ids[i] for i in range(asked.start, min(len(ids), asked.start + asked.count))]
        text = f"{len(ids)} tasks in {asked.split}"
        if listed:
            text += f"; from index {asked.start}: {', '.join(listed)}"
        structured = {"split": asked.split, "count": len(ids), "start": asked.start}
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {**structured, "task_ids": listed},
            "isError": False,
        }


def _act_action(arguments: dict[str, Any]) -> Any:
    if set(arguments) != {"action"}:
        raise InvalidRequestError(
            f"act takes one argument, action; got {sorted(arguments) or 'none'}", field="action"
        )
    return arguments["action"]


# ----------------------------------------------------------------------------- the endpoint
@dataclass
class _Opening:
    """A session made for an MCP client's ``initialize``, until the MCP session takes it."""

    toolbox: Toolbox
    claimed: bool = False


_OPENING: ContextVar[_Opening | None] = ContextVar("llmgym_mcp_opening", default=None)
"""The session made for the ``initialize`` being served. The SDK starts each MCP session's
server task from the task that serves its opening request, so the task inherits this value and
the session's lifespan (:meth:`McpEndpoint._session`) takes the session from it."""


class McpEndpoint:
    """MCP over streamable HTTP for the environments of one router: an ASGI application.

    Args:
        store: The server's sessions.
        describe: What the router's routes read about environments.
        served: The environment a request's scope names (``None``: none here, a 404).
        registry: Also answer OpenEnv's JSON-RPC (see the module), with these sessions.
    """

    def __init__(
        self,
        store: SessionStore,
        describe: Descriptions,
        served: Callable[[Scope], str | None],
        registry: SessionRegistry | None = None,
    ) -> None:
        self.store = store
        self.describe = describe
        self.served = served
        self.registry = registry
        self.manager = None if mcp_types is None else self._manager()

    def _manager(self) -> Any:
        settings = self.store.settings
        server: Any = Server(
            "llmgym",
            version=llmgym.__version__,
            instructions="Call reset to start an episode (a task by task_id, or split and "
            "index; tasks lists them), then the environment's tools (act, or a tool "
            "environment's own) until done; reset again for the next episode.",
            lifespan=self._session,
        )

        async def list_tools(_request: Any) -> Any:
            toolbox: Toolbox = server.request_context.lifespan_context
            tools = [mcp_types.Tool(**tool) for tool in toolbox.tools]
            return mcp_types.ServerResult(mcp_types.ListToolsResult(tools=tools))

        async def call_tool(request: Any) -> Any:
            toolbox: Toolbox = server.request_context.lifespan_context
            try:
                result = await toolbox.call(request.params.name, request.params.arguments)
            except JsonRpcError as error:
                raise McpError(mcp_types.ErrorData(**error.to_dict())) from None
            return mcp_types.ServerResult(mcp_types.CallToolResult(**result))

        # registered as handlers of the requests rather than through the SDK's decorators,
        # which would answer errors as tool results, check arguments against the schema
        # before the environment could answer them, and cache tools across sessions
        server.request_handlers[mcp_types.ListToolsRequest] = list_tools
        server.request_handlers[mcp_types.CallToolRequest] = call_tool
        return StreamableHTTPSessionManager(
            server,
            json_response=True,
            session_idle_timeout=settings.ttl_s,
            max_request_body_size=settings.max_body_bytes,
            max_sessions=settings.max_sessions,
        )

    @contextlib.asynccontextmanager
    async def _session(self, _server: Any) -> AsyncIterator[Toolbox]:
        """One MCP session's lifespan: it holds the session made for its ``initialize``."""
        opening = _OPENING.get()
        if opening is None:
            raise RuntimeError("an MCP session starts with an initialize that McpEndpoint serves")
        opening.claimed = True
        try:
            yield opening.toolbox
        finally:
            with anyio.CancelScope(shield=True):
                await opening.toolbox.session.close()

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Any) -> AsyncIterator[None]:
        """Run the MCP sessions while the server runs (a router's lifespan)."""
        if self.manager is None:
            yield
            return
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        env_id = self.served(scope)
        if env_id is None:
            await _rpc_reply(
                scope, send, 404, None, JsonRpcError(INVALID_REQUEST, "no environment here")
            )
            return
        opens = SESSION_HEADER.encode() not in dict(scope["headers"])
        if scope["method"] == "POST":
            body = await _read_body(receive)
            try:
                message = load_json(body, self.store.settings.max_json_depth)
            except HostingError as error:
                status = 200 if opens and self.registry is not None else 400
                await _rpc_reply(
                    scope, send, status, None, JsonRpcError(PARSE_ERROR, error.message)
                )
                return
            receive = _replayed(body, receive)
            if opens and _method(message) == "initialize":
                await self._open(env_id, scope, receive, send)
                return
            if opens and self.registry is not None:
                await self._openenv(message, env_id, scope, send)
                return
            request_id = _request_id(message)
        else:
            request_id = None
        if opens:  # only an initialize opens an MCP session
            refusal = JsonRpcError(INVALID_REQUEST, "no Mcp-Session-Id: initialize first")
            await _rpc_reply(scope, send, 400, request_id, refusal)
            return
        if self.manager is None:
            await _missing_sdk(scope, send)
            return
        await self.manager.handle_request(scope, receive, send)

    async def _open(self, env_id: str, scope: Scope, receive: Any, send: Any) -> None:
        """Serve an ``initialize``: a new session of the server, then a new MCP session."""
        if self.manager is None:
            await _missing_sdk(scope, send)
            return
        try:
            tool_schemas = await self.describe.tools(env_id)
            client = client_address(HTTPConnection(scope))
            session = await EpisodeSession.create(self.store, self.describe, env_id, client)
        except HostingError as error:
            headers = {"Retry-After": "5"} if error.status in (429, 503) else None
            await _rpc_reply(scope, send, error.status, None, _rpc_error(error), headers)
            return
        opening = _Opening(Toolbox(session, tool_schemas))
        token = _OPENING.set(opening)
        try:
            await self.manager.handle_request(scope, receive, send)
        finally:
            _OPENING.reset(token)
            if not opening.claimed:  # refused before its MCP session started
                await session.close()

    # ------------------------------------------------------------------ OpenEnv's JSON-RPC
    async def _openenv(self, message: Any, env_id: str, scope: Scope, send: Any) -> None:
        """Answer OpenEnv's JSON-RPC (always HTTP 200, as OpenEnv's servers answer it)."""
        request_id = _request_id(message)
        try:
            result = await self._openenv_result(message, env_id, scope)
        except JsonRpcError as error:
            await _rpc_reply(scope, send, 200, request_id, error)
            return
        payload = {"jsonrpc": "2.0", "id": request_id, "result": result}
        await Response(dumps(payload), media_type=JSON)(scope, _no_body, send)

    async def _openenv_result(self, message: Any, env_id: str, scope: Scope) -> dict[str, Any]:
        assert self.registry is not None
        method = _method(message)
        if method is None or message.get("jsonrpc") != "2.0":
            raise JsonRpcError(
                INVALID_REQUEST,
                'a JSON-RPC 2.0 request: {"jsonrpc": "2.0", "method": ..., "params": {...}, '
                '"id": ...}',
            )
        params = message.get("params") or {}
        if not isinstance(params, dict):
            raise JsonRpcError(INVALID_PARAMS, "params must be an object")
        session_id = params.get("session_id")
        try:
            if method == "openenv/session/create":
                client = client_address(HTTPConnection(scope))
                created = await self.registry.create(env_id, client)
                return {"session_id": created.session_id}
            if method == "tools/list" and session_id is None:
                environment = await self.describe.environment(env_id)
                tool_schemas = await self.describe.tools(env_id)
                return {"tools": mcp_tools(tool_schemas, environment["action_space"])}
            if method not in ("openenv/session/close", "tools/list", "tools/call"):
                raise JsonRpcError(
                    METHOD_NOT_FOUND,
                    f"method {method!r} is not one of OpenEnv's: openenv/session/create, "
                    "openenv/session/close, tools/list, tools/call (an MCP client initializes "
                    "first)",
                )
            if not isinstance(session_id, str):
                raise JsonRpcError(
                    INVALID_PARAMS,
                    f"{method} needs params.session_id, from openenv/session/create",
                )
            if method == "openenv/session/close":
                await self.registry.close(session_id, env_id)
                return {"session_id": session_id, "closed": True}
            session = self.registry.get(session_id, env_id)
            toolbox = Toolbox(session, await self.describe.tools(env_id))
            if method == "tools/list":
                return {"tools": toolbox.tools}
            result = await toolbox.call(params.get("name"), params.get("arguments"))
            return {**result, "data": result["structuredContent"]}  # MCPToolClient reads data
        except HostingError as error:
            raise _rpc_error(error) from None


def _request_id(message: Any) -> Any:
    return message.get("id") if isinstance(message, dict) else None


def _method(message: Any) -> str | None:
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None


async def _read_body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replayed(body: bytes, receive: Any) -> Any:
    """A ``receive`` that gives ``body`` again, then what ``receive`` gives (a disconnect)."""
    given = False

    async def replay() -> dict[str, Any]:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _no_body() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _rpc_reply(
    scope: Scope,
    send: Any,
    status: int,
    request_id: Any,
    error: JsonRpcError,
    headers: dict[str, str] | None = None,
) -> None:
    payload = {"jsonrpc": "2.0", "id": request_id, "error": error.to_dict()}
    response = Response(dumps(payload), status_code=status, media_type=JSON, headers=headers)
    await response(scope, _no_body, send)


async def _missing_sdk(scope: Scope, send: Any) -> None:
    message = f"this server's MCP endpoint needs the mcp 1 SDK: {install_command('mcp')}"
    await _rpc_reply(scope, send, 501, None, JsonRpcError(INTERNAL_ERROR, message))


# ----------------------------------------------------------------------------- the protocol
class McpProtocol(ServerProtocol):
    """MCP: every served environment at ``/mcp/<name>`` (streamable HTTP)."""

    single_worker = True  # the MCP SDK names its sessions: they cannot say their worker
    name = "mcp"
    session_key = "the Mcp-Session-Id header that initialize answers: one session per MCP session"

    def routers(self, store: SessionStore) -> list[APIRouter]:
        catalog = {openenv_name(e): e for e in store.served}

        def served(scope: Scope) -> str | None:
            return catalog.get(scope["path_params"].get("served_name", "").lower())

        endpoint = McpEndpoint(store, Descriptions(store), served)
        return [mcp_router("/mcp/{served_name}", endpoint)]


def mcp_router(path: str, endpoint: McpEndpoint) -> APIRouter:
    """A router with ``endpoint`` at ``path``, and its lifespan. Streamable HTTP's ``POST``
    and ``DELETE``; a ``GET`` (a stream for messages the server starts) is a 405, as MCP allows
    a server that starts none."""
    router = APIRouter(lifespan=endpoint.lifespan)
    router.routes.append(Route(path, endpoint, methods=["POST", "DELETE"], include_in_schema=False))
    return router
