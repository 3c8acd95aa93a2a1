"""OpenEnv's protocol (``openenv`` 0.10) on the ``llmgym serve`` server: :class:`OpenEnvProtocol`.

OpenEnv clients (``GenericEnvClient``, TRL's examples, verifiers' ``OpenEnvTaskset``, NeMo-Gym,
SkyRL) open a WebSocket at ``/ws`` and send ``{"type": "reset" | "step" | "state" | "close",
"data": {...}}``; each connection is one session with an environment of its own. They also read
``/health``, ``/metadata``, ``/schema`` and, since 0.10, the task API (``/{env}/splits``,
``/{env}/tasks``, ``num_tasks``, ``task``, ``task_range``). This module answers all of it for one
environment per mount point, with the server's own sessions
(:class:`~llmgym.serving.server.sessions.SessionStore`), so that every limit of ``llmgym serve``
applies unchanged: the time limit of each call, worker threads and child processes, config
caps, per-client quotas, the session cap, the idle TTL, the message size and JSON depth limits,
the bearer token.

Where: every served environment at ``/openenv/<name>`` (``/openenv/wordle/ws``); on a server
that speaks OpenEnv's protocol alone (``llmgym serve --protocol openenv --env ID``), its one
environment at the root, as OpenEnv's own servers and Spaces answer.

What maps to what:

* ``reset`` takes ``seed``, ``task_id``, ``split``, ``index`` (the ``index``-th task id of
  ``split``), ``config`` (overrides for the episode, checked against the server's caps) and
  ``episode_id``;
* ``step`` takes ``{"action": text}``. A step without an ``action`` field is itself the action
  (verifiers sends a reply that is a JSON object, a tool call, as the step); an action that is
  not text is sent to the environment as its JSON text. Either way the environment answers it:
  an action it cannot use is an observation with ``invalid_action``, never an error;
* an observation is ``{"text", "info", "invalid_action", "success", "terminated", "truncated",
  "task_id"}`` (plus ``instruction`` and, for tool environments, ``tools`` after a reset), with
  OpenEnv's ``reward`` and ``done`` (``terminated or truncated``) beside it.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import gymnasium as gym
from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import llmgym
from llmgym.core.env import TextEnv
from llmgym.core.registry import EnvEntry
from llmgym.core.tasks import SPLITS, TaskIdRange
from llmgym.envs import get_entry
from llmgym.errors import EpisodeStateError, HostingError, InvalidRequestError
from llmgym.serving.protocol import dumps, loads
from llmgym.serving.server.logs import log
from llmgym.serving.server.protocols import ServerProtocol
from llmgym.serving.server.schemas import (
    CallRequest,
    CreateSessionRequest,
    ResetRequest,
    Seed,
    StepRequest,
    client_address,
    error_reply,
    load_json,
    parse_body,
    reply,
    validation_error,
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

DOCS_URL = "https://github.com/llmgym/llmgym/tree/main/docs/environments"


def openenv_name(env_id: str) -> str:
    """The environment's OpenEnv name: ``"wordle"`` for ``"llmgym/Wordle-v0"``."""
    return get_entry(env_id).name.lower()


# ----------------------------------------------------------------------------- the messages
class OpenEnvAction(BaseModel):
    """An action: one required text field, ``action`` (verifiers' OpenEnv taskset fills the
    single required field with the model's reply)."""

    model_config = ConfigDict(extra="forbid", title="LlmgymAction")

    action: str = Field(
        description="The action as text: a command, a word, or for a tool environment a tool "
        'call, {"name": TOOL, "arguments": {...}} as JSON (see the schema\'s "tools").'
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Ignored.")


class OpenEnvObservation(BaseModel):
    """What a reset or step answers (``reward`` and ``done`` also travel beside it)."""

    model_config = ConfigDict(title="LlmgymObservation")

    done: bool = Field(False, description="terminated or truncated.")
    reward: float | None = Field(None, description="The step's reward (none after a reset).")
    text: str | Any = Field(description="The observation (text; an encoded array for pixels).")
    info: dict[str, Any] = Field(description="llmgym's info dict, as the local env returns it.")
    invalid_action: bool = Field(description="The environment could not use the action.")
    success: bool | None = Field(description="The episode's goal is reached.")
    terminated: bool = Field(description="The episode ended (goal reached or failed).")
    truncated: bool = Field(description="The turn limit ended the episode.")
    task_id: str | None = Field(description="The episode's task, e.g. eval/00042.")
    instruction: str | None = Field(None, description="The task's instruction (after a reset).")
    tools: list[dict[str, Any]] | None = Field(
        None, description="A tool environment's tools, OpenAI function format (after a reset)."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)


class OpenEnvReset(BaseModel):
    """The ``data`` of a reset message."""

    model_config = ConfigDict(extra="forbid")

    seed: Seed | None = None
    episode_id: str | None = Field(None, max_length=256)
    task_id: str | None = Field(None, pattern=r"^(train|eval)/\S+$")
    split: str | None = Field(None, description="train or eval.")
    index: int | None = Field(None, ge=0, description="The index-th task of split.")
    config: dict[str, Any] | None = Field(None, description="Config overrides (the episode).")
    horizon: int | None = Field(
        None,
        ge=1,
        description="Turns this episode may last (a trainer's horizon curriculum, e.g. "
        "llmgym.wrappers.HorizonCurriculum.start_episode()); truncated there.",
    )


class OpenEnvState(BaseModel):
    """What a state message answers."""

    model_config = ConfigDict(extra="allow", title="LlmgymState")

    episode_id: str | None = None
    step_count: int = 0
    env_id: str
    task_id: str | None = None
    done: bool = False


class _TaskQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    split: str
    index: int = Field(0, ge=0)
    start: int | None = Field(None, ge=0)
    stop: int | None = Field(None, ge=0)


# ----------------------------------------------------------------------------- the protocol
class OpenEnvProtocol(ServerProtocol):
    """OpenEnv's protocol: every served environment at ``/openenv/<name>``, or, on a server that
    speaks it alone, its one environment at the root (an OpenEnv Space)."""

    name = "openenv"
    session_key = "the WebSocket connection to /ws: one session per connection"
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
            return [openenv_routes(store, store.served[0])]
        return [openenv_routes(store)]


def _alone(settings: ServerSettings) -> bool:
    return settings.protocols == (OpenEnvProtocol.name,)


# ----------------------------------------------------------------------------- the routes
def openenv_routes(store: SessionStore, env_id: str | None = None) -> APIRouter:
    """OpenEnv's routes: for ``env_id`` at the root (``llmgym serve --protocol openenv --env
    ID``), or, without it, for every served environment at ``/openenv/<name>``
    (``/openenv/wordle/ws``).
    They speak OpenEnv's protocol, described by OpenEnv and by their own ``/schema``, so they stay
    out of llmgym's OpenAPI document."""
    catalog = {openenv_name(e): e for e in store.served}
    if env_id is None:
        router = APIRouter(prefix="/openenv/{served_name}", include_in_schema=False)

        def served(scope: Request | WebSocket) -> str | None:
            return catalog.get(scope.path_params.get("served_name", "").lower())

    else:
        router = APIRouter(include_in_schema=False)
        fixed = get_entry(env_id).id

        def served(scope: Request | WebSocket) -> str | None:
            return fixed

    describe = _Descriptions(store)

    def require(request: Request) -> str:
        found = served(request)
        if found is None:
            raise _not_found(f"no environment {request.path_params.get('served_name')!r} here")
        return found

    def require_task_env(request: Request) -> str:
        found = require(request)
        if request.path_params["env_name"].lower() != openenv_name(found):
            raise _not_found(f"unknown environment {request.path_params['env_name']!r}")
        return found

    @router.get("/health")
    async def health(request: Request) -> Response:
        """OpenEnv's health check."""
        require(request)
        return reply({"status": "healthy"})

    @router.get("/metadata")
    async def metadata(request: Request) -> Response:
        """Name, description and the environment's documentation (its docstring)."""
        return reply(await describe.metadata(require(request)))

    @router.get("/schema")
    async def schema(request: Request) -> Response:
        """JSON Schemas of the action, the observation and the state, and the tools."""
        return reply(await describe.schema(require(request)))

    @router.get("/list_environments")
    async def list_environments(request: Request) -> Response:
        return reply([openenv_name(require(request))])

    @router.get("/{env_name}/splits")
    async def splits(request: Request) -> Response:
        require_task_env(request)
        return reply([{"name": "train", "type": "train"}, {"name": "eval", "type": "test"}])

    @router.post("/{env_name}/tasks")
    async def tasks(request: Request) -> Response:
        env = require_task_env(request)
        query = await parse_body(request, _TaskQuery, store.settings.max_json_depth)
        ids = await describe.task_ids(env, query.split)
        listed = [_task(ids, i) for i in range(min(len(ids), MAX_LISTED_TASKS))]
        return reply({"tasks": listed, "env_name": openenv_name(env)})

    @router.post("/{env_name}/num_tasks")
    async def num_tasks(request: Request) -> Response:
        env = require_task_env(request)
        query = await parse_body(request, _TaskQuery, store.settings.max_json_depth)
        return reply({"num_tasks": len(await describe.task_ids(env, query.split))})

    @router.post("/{env_name}/task")
    async def task(request: Request) -> Response:
        env = require_task_env(request)
        query = await parse_body(request, _TaskQuery, store.settings.max_json_depth)
        ids = await describe.task_ids(env, query.split)
        if query.index >= len(ids):
            return error_reply(400, {"error": "invalid_request", "message": "Invalid task index"})
        return reply({"task": _task(ids, query.index)})

    @router.post("/{env_name}/task_range")
    async def task_range(request: Request) -> Response:
        env = require_task_env(request)
        query = await parse_body(request, _TaskQuery, store.settings.max_json_depth)
        ids = await describe.task_ids(env, query.split)
        start, stop = query.start or 0, min(len(ids), query.stop or len(ids))
        stop = min(stop, start + MAX_LISTED_TASKS)
        return reply({"tasks": [_task(ids, i) for i in range(start, stop)]})

    @router.websocket("/ws")
    async def sessions(websocket: WebSocket) -> None:
        """One session per connection: reset, step, state and close messages."""
        env = served(websocket)
        if env is None:
            await websocket.close(code=1008)
            return
        await websocket.accept()
        with contextlib.suppress(WebSocketDisconnect):
            await _Connection(store, describe, env, websocket).serve()

    return router


class _NotFoundError(HostingError):
    status = 404
    code = "not_found"


def _not_found(message: str) -> HostingError:
    return _NotFoundError(message)


def _task(ids: TaskIdRange | list[str], index: int) -> dict[str, Any]:
    task_id = ids[index]
    return {"task_id": task_id, "split": task_id.split("/", 1)[0], "index": index}


# ----------------------------------------------------------------------------- descriptions
class _Descriptions:
    """What the read-only routes answer, worked out once per environment (in a worker)."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._metadata: dict[str, dict[str, Any]] = {}
        self._schemas: dict[str, dict[str, Any]] = {}
        self._task_ids: dict[tuple[str, str], TaskIdRange | list[str]] = {}

    async def metadata(self, env_id: str) -> dict[str, Any]:
        if env_id not in self._metadata:
            entry = get_entry(env_id)
            doc = await self.store.run(env_id, "schema", _docstring, entry)
            self._metadata[env_id] = {
                "name": openenv_name(env_id),
                "description": entry.summary,
                "readme_content": doc,
                "version": llmgym.__version__,
                "author": "llmgym",
                "documentation_url": f"{DOCS_URL}/{openenv_name(env_id)}.md",
                "env_id": env_id,
                "max_episode_steps": entry.max_episode_steps,
            }
        return self._metadata[env_id]

    async def schema(self, env_id: str) -> dict[str, Any]:
        if env_id not in self._schemas:
            tools = await self.store.run(env_id, "schema", _tool_schemas, get_entry(env_id))
            self._schemas[env_id] = openenv_schema(tools)
        return self._schemas[env_id]

    async def task_ids(self, env_id: str, split: str) -> TaskIdRange | list[str]:
        if split not in SPLITS:
            raise InvalidRequestError(
                f"split={split!r} is not allowed; allowed: {', '.join(SPLITS)}", field="split"
            )
        key = (env_id, split)
        if key not in self._task_ids:
            self._task_ids[key] = await self.store.run(env_id, "make", _task_ids, env_id, split)
        return self._task_ids[key]


def openenv_schema(tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    """``GET /schema``: the action, observation and state schemas, and a tool environment's
    tools (OpenAI function format)."""
    action = OpenEnvAction.model_json_schema()
    return {
        "action": action,
        "observation": OpenEnvObservation.model_json_schema(),
        "reset_observation": OpenEnvObservation.model_json_schema(),
        "state": OpenEnvState.model_json_schema(),
        "tools": tools or [],
    }


def _env_class(entry: EnvEntry) -> type:
    module, _, name = entry.entry_point.partition(":")
    return getattr(importlib.import_module(module), name)


def _docstring(entry: EnvEntry) -> str:
    return inspect.getdoc(_env_class(entry)) or entry.summary


def _tool_schemas(entry: EnvEntry) -> list[dict[str, Any]] | None:
    schemas = getattr(_env_class(entry), "tool_schemas", None)
    return schemas() if callable(schemas) else None


def _task_ids(env_id: str, split: str) -> TaskIdRange | list[str]:
    env = gym.make(env_id, disable_env_checker=True)
    try:
        ids = cast(TextEnv, env.unwrapped).task_ids(split)
        return ids if isinstance(ids, TaskIdRange) else list(ids)
    finally:
        env.close()


# ----------------------------------------------------------------------------- one connection
@dataclass
class _Episode:
    episode_id: str | None = None
    task_id: str | None = None
    steps: int = 0
    done: bool = False
    horizon: int | None = None


class _Connection:
    """One WebSocket: a session of the store, made when it opens and closed when it ends."""

    def __init__(
        self, store: SessionStore, describe: _Descriptions, env_id: str, websocket: WebSocket
    ) -> None:
        self.store = store
        self.describe = describe
        self.env_id = env_id
        self.websocket = websocket
        self.client = client_address(websocket)
        self.session_id: str | None = None
        self.episode = _Episode()
        self.operations: dict[str, Callable[[dict[str, Any]], Any]] = {
            "reset": self.reset,
            "step": self.step,
            "state": self.state,
        }

    async def serve(self) -> None:
        try:
            request = CreateSessionRequest.model_validate({"env_id": self.env_id, "reset": False})
            created = await self.store.create(request, self.client)
        except HostingError as error:  # capacity, quota, a failed make: say why, then close
            await self.websocket.send_text(_error(error))
            await self.websocket.close(code=1013 if error.status in (429, 503) else 1011)
            return
        self.session_id = created["session_id"]
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
            with contextlib.suppress(HostingError):
                await self.store.close(self.session_id)

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
            log(
                logging.WARNING if error.status < 500 else logging.ERROR,
                "openenv.failed",
                session_id=self.session_id,
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
        try:
            asked = OpenEnvReset.model_validate(data)
        except ValidationError as error:
            raise validation_error(error.errors()) from None
        assert self.session_id is not None
        options: dict[str, Any] = {}
        if asked.config is not None:
            options["config"] = asked.config
        if asked.task_id is not None:
            options["task_id"] = asked.task_id
        elif asked.index is not None:
            options["task_id"] = await self._task_id(asked.split or "train", asked.index, asked)
        elif asked.split is not None:
            options["split"] = asked.split
        answer = loads(
            await self.store.reset(
                self.session_id, ResetRequest(seed=asked.seed, options=options or None)
            )
        )
        info = answer["info"]
        self.episode = _Episode(
            episode_id=asked.episode_id or secrets.token_hex(8),
            task_id=info.get("task_id"),
            horizon=asked.horizon,
        )
        if asked.horizon is not None:
            info["horizon"] = {"limit": asked.horizon}
        tools = await self._tools()
        observation = _observation(answer["observation"], False, False, info, self.episode)
        observation["instruction"] = info.get("instruction")
        if tools:
            observation["tools"] = tools
        return _observation_message(observation, None, False)

    async def _task_id(self, split: str, index: int, asked: OpenEnvReset) -> str:
        assert self.session_id is not None
        kwargs: dict[str, Any] = {"split": split}
        if asked.config is not None:
            kwargs["config"] = asked.config
        found = loads(
            await self.store.call(self.session_id, CallRequest(name="task_ids", kwargs=kwargs))
        )["result"]
        if isinstance(found, dict):
            count, width = found["task_id_range"]["count"], found["task_id_range"]["width"]
            ids: TaskIdRange | list[str] = TaskIdRange(split, count, width)
        else:
            ids = found
        if index >= len(ids):
            raise InvalidRequestError(
                f"index={index} is past the {len(ids)} tasks of split {split!r}", field="index"
            )
        return ids[index]

    async def _tools(self) -> list[dict[str, Any]]:
        return (await self.describe.schema(self.env_id))["tools"]

    async def step(self, data: dict[str, Any]) -> str:
        assert self.session_id is not None
        if self.episode.done:  # also after a horizon the environment itself does not know of
            raise EpisodeStateError("the episode has ended; send a reset")
        action = data["action"] if "action" in data else _without_metadata(data)
        if not isinstance(action, str):
            action = dumps(action).decode()
        answer = loads(await self.store.step(self.session_id, StepRequest(action=action)))
        terminated, truncated = answer["terminated"], answer["truncated"]
        self.episode.steps += 1
        horizon = self.episode.horizon
        if horizon is not None and self.episode.steps >= horizon and not (terminated or truncated):
            truncated = True
            answer["info"]["truncated_by"] = "horizon"
        self.episode.done = terminated or truncated
        observation = _observation(
            answer["observation"], terminated, truncated, answer["info"], self.episode
        )
        return _observation_message(observation, answer["reward"], self.episode.done)

    async def state(self, _data: dict[str, Any]) -> str:
        episode = self.episode
        state = {
            "episode_id": episode.episode_id,
            "step_count": episode.steps,
            "env_id": self.env_id,
            "task_id": episode.task_id,
            "done": episode.done,
        }
        return dumps({"type": "state", "data": state}).decode()


def _without_metadata(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "metadata"}


def _observation(
    observation: Any, terminated: bool, truncated: bool, info: dict[str, Any], episode: _Episode
) -> dict[str, Any]:
    return {
        "text": observation,
        "info": info,
        "invalid_action": bool(info.get("invalid_action", False)),
        "success": info.get("success"),
        "terminated": terminated,
        "truncated": truncated,
        "task_id": episode.task_id,
        "metadata": {},
    }


def _observation_message(observation: dict[str, Any], reward: float | None, done: bool) -> str:
    metadata = {
        "truncated": observation["truncated"],
        "terminated": observation["terminated"],
        "task_id": observation["task_id"],
    }
    data = {"observation": observation, "reward": reward, "done": done, "metadata": metadata}
    return dumps({"type": "observation", "data": data}).decode()


def _error(error: HostingError) -> str:
    data = {
        "message": error.message,
        "code": error.code,
        "status": error.status,
        "field": error.field,
    }
    return dumps({"type": "error", "data": data}).decode()
