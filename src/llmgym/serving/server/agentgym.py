"""AgentGym's protocol on the ``llmgym serve`` server, ``/agentgym/<family>/...``:
:class:`AgentGymProtocol`.

AgentGym (WooooDyy/AgentGym) runs one HTTP server per environment family; its ``agentenv``
client classes (``WebshopEnvClient``, ``AlfWorldEnvClient``, ...) POST ``create``, ``reset``
and ``step`` with an integer instance id and read family-specific replies. These routes answer
them for every family of :data:`llmgym.integrations.agentgym.FAMILIES`, so that AgentGym's own,
unmodified clients and evaluation scripts run against llmgym: the base URL of a family is
``http://HOST:PORT/agentgym/<family>`` (``/agentgym/<TOKEN>/<family>`` on a server with a token,
since AgentGym's clients send no headers; the guard checks it).

What maps to what:

* ``create`` makes a session of the server's store (:class:`SessionStore`), so every limit of
  ``llmgym serve`` holds: ``--max-sessions`` and the per-client quota count it, each call runs in
  a worker under the server's time limits, one session's failure is never another's. The reply
  carries a *handle*, a random integer (as AgentGym's WebShop server draws), private to the
  caller: instances are never shared;
* the task index of ``reset`` (``data_idx``, ``game``, ``seed``, ``session_id``, ``item_id`` or
  ``id``, by family) maps to a task id: ``i`` is ``task_ids("eval")[i]`` for ``0 <= i <
  len(eval)``, ``task_ids("train")[i - 1_000_000]`` from 1,000,000 on; anything else is a 422;
* ``step`` sends the text as the action (tool families and SearchQA parse AgentGym's raw reply
  themselves, as AgentGym's servers do); ``done`` is ``terminated or truncated``; ``reward`` is
  the step's reward and ``score`` the episode's so far (ScienceWorld's own 0-100 score);
* handles outlive the session's idle limit: a handle whose session expired (``--ttl``) or was
  lost gets a new session on its next ``reset``, transparently (AgentGym's scripts hold one
  client for hours and reset it before every episode); a ``step`` on it is a 404 that says to
  reset. A handle lives until ``close`` or the server stops;
* every error is a 4xx/5xx status with the JSON body ``{"error", "message", "field"}``, never
  AgentGym's 200 with ``{"error"}``: a stepped-past-the-end episode is a 409, so a failure is
  loud.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import Response

from llmgym.core.tasks import TaskIdRange
from llmgym.errors import (
    DataError,
    HostingError,
    InvalidRequestError,
    NestingError,
    SessionNotFoundError,
)
from llmgym.integrations.agentgym import (
    FAMILIES,
    Family,
    Shape,
    find_family,
    task_id_of,
)
from llmgym.originals import get_source
from llmgym.serving.protocol import loads
from llmgym.serving.server.logs import log
from llmgym.serving.server.policy import config_class
from llmgym.serving.server.protocols import ServerProtocol
from llmgym.serving.server.schemas import (
    CallRequest,
    CreateSessionRequest,
    ResetRequest,
    StepRequest,
    client_address,
    load_json,
    reply,
)
from llmgym.serving.server.sessions import SessionStore
from llmgym.serving.server.settings import ServerSettings

__all__ = ["AGENTGYM_PREFIX", "AgentGymProtocol", "agentgym_routes"]

AGENTGYM_PREFIX = "/agentgym/"

MOVES = ["move up", "move down", "move left", "move right"]


class _NotFoundError(HostingError):
    status = 404
    code = "not_found"


# ----------------------------------------------------------------------------- one instance
@dataclass(eq=False)
class _Handle:
    """One AgentGym instance: its session and what AgentGym's replies need of its episode."""

    number: int
    family: Family
    client: str
    session_id: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    task_index: int | None = None
    task_id: str | None = None
    instruction: str = ""
    first_observation: str = ""
    observation: str = ""
    task_description: str = ""
    reward: float = 0.0
    total: float = 0.0
    score: float | None = None
    done: bool = False
    terminated: bool = False
    truncated: bool = False
    steps: int = 0
    actions: list[str] = field(default_factory=list)

    def field_value(self, name: str) -> Any:
        """The value of one reply field (see :data:`FIELDS`)."""
        return FIELDS[name](self)

    def answer(self, shape: Shape) -> Any:
        """A reply of ``shape``: the handle, the observation, ``[observation, null]`` or an
        object of fields."""
        if shape == "handle":
            return self.number
        if shape == "text":
            return self.observation
        if shape == "pair":
            return [self.observation, None]
        return {name: self.field_value(name) for name in shape}

    def see(self, observation: Any, info: dict[str, Any], first: bool) -> None:
        """Take in an observation of the environment and its ``info``."""
        self.actions = [str(a) for a in info.get("admissible_actions") or ()]
        text = str(observation)
        if self.family.compose == "sciworld" and first:
            description = self.instruction
            if description and text.startswith(description):
                text = text[len(description) :].lstrip("\n")
            else:
                description = ""
            self.task_description = description
        self.observation = text

    def current_score(self) -> float:
        """The ``score`` field: the environment's own (``info["score"]``) or the rewards so
        far."""
        return self.score if self.score is not None else self.total


FIELDS: dict[str, Callable[[_Handle], Any]] = {
    "id": lambda h: h.number,
    "env_idx": lambda h: h.number,
    "observation": lambda h: h.observation,
    "state": lambda h: h.observation,
    "reward": lambda h: h.reward,
    "done": lambda h: h.done,
    "terminated": lambda h: h.done,
    "truncated": lambda h: h.truncated,
    "sites": lambda h: re.findall(r"^URL: https?://([^/\s]+)", h.first_observation, re.M)[:1],
    "object": lambda h: h.instruction,
    "score": _Handle.current_score,
    "info": lambda h: None,
    "deleted": lambda h: False,
    "available_actions": lambda h: h.actions,
    "task_type": lambda h: h.instruction,
    "task_description": lambda h: h.task_description,
    "task_name": lambda h: h.task_id,
    "var_num": lambda h: h.task_index,
}
"""What each field of AgentGym's replies holds. ``terminated``, ``truncated``, ``sites`` and
``object`` are WebArena's: its client ends an episode on ``terminated`` alone, so that is
true on truncation too; ``sites`` is the host of the task's start page and ``object`` the
objective. ``task_type``, ``task_name`` and
``var_num`` (ALFWorld's and ScienceWorld's bookkeeping, which AgentGym's clients do not read)
hold the instruction, the task id and the index."""


# ----------------------------------------------------------------------------- the handles
class _Handles:
    """The server's AgentGym instances, by handle."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.handles: dict[int, _Handle] = {}
        self.task_ids: dict[str, tuple[Any, Any]] = {}
        self.capacity = 4 * store.settings.max_sessions
        self.families = {name: _with_originals(f, store.settings) for name, f in FAMILIES.items()}

    def get(self, family: Family, number: Any) -> _Handle:
        if isinstance(number, str) and re.fullmatch(r"-?[0-9]{1,20}", number):
            number = int(number)
        if isinstance(number, bool) or not isinstance(number, int):
            raise InvalidRequestError(
                f"{family.handle_field} must be the integer that create returned, got {number!r}",
                field=family.handle_field,
            )
        handle = self.handles.get(number)
        if handle is None or handle.family is not family:
            raise _NotFoundError(
                f"no {family.name} environment {number} here: it was never created, it was "
                "closed, or the server has restarted since; create a new one",
                field=family.handle_field,
            )
        handle.last_used = time.monotonic()
        return handle

    async def create(self, family: Family, client: str) -> _Handle:
        self._make_room()
        session_id = await self._new_session(family, client)
        number = self._new_number()
        while number in self.handles:
            number = self._new_number()
        handle = _Handle(number, family, client, session_id)
        self.handles[number] = handle
        return handle

    def _new_number(self) -> int:
        """An unguessable handle; on one of several workers, one whose remainder by the worker
        count is this worker's index (so that any worker can tell whose it is)."""
        number = secrets.randbelow(1 << 53)
        place = self.store.place
        return number if place is None else number - number % place.count + place.index

    def _make_room(self) -> None:
        """Forget the longest-unused handles whose session has ended, when the table is full
        (live ones are bounded by ``--max-sessions`` already)."""
        if len(self.handles) < self.capacity:
            return
        dormant = sorted(
            (h for h in self.handles.values() if h.session_id not in self.store.sessions),
            key=lambda h: h.last_used,
        )
        for handle in dormant[: len(self.handles) - self.capacity + 1]:
            del self.handles[handle.number]

    async def _new_session(self, family: Family, client: str) -> str:
        config = dict(family.config) or None
        request = CreateSessionRequest.model_validate(
            {"env_id": family.env_id, "config": config, "reset": False}
        )
        created = await self.store.create(request, client)
        return str(created["session_id"])

    async def _live_session(self, handle: _Handle) -> str:
        """The handle's session, made anew if it expired or was lost."""
        try:
            self.store.get(handle.session_id)
        except SessionNotFoundError:
            handle.session_id = await self._new_session(handle.family, handle.client)
        return handle.session_id

    async def _task_ids(self, handle: _Handle) -> tuple[Any, Any]:
        family = handle.family
        original = self.store.settings.original_config(family.env_id)
        if original and family.name not in self.task_ids:
            # AgentGym's item i of the original data: every index names a task directly
            source = get_source(original["source"])
            try:
                items = await asyncio.to_thread(
                    source.agentgym_task_ids, Path(original["data_dir"])
                )
            except DataError as error:
                log(logging.ERROR, "agentgym.items", family=family.name, message=str(error))
                raise HostingError(
                    f"this server's {source.name} data cannot be numbered as AgentGym's "
                    f"{family.name} items (the server's log says why; its operator can run "
                    f"`llmgym data check {source.name} DIR`)"
                ) from None
            self.task_ids[family.name] = (items, ())
        if family.name not in self.task_ids:
            found = []
            for split in ("eval", "train"):
                call = CallRequest(name="task_ids", kwargs={"split": split})
                ids = loads(await self.store.call(handle.session_id, call))["result"]
                if isinstance(ids, dict):
                    spec = ids["task_id_range"]
                    ids = TaskIdRange(spec["split"], spec["count"], spec["width"])
                found.append(ids)
            self.task_ids[family.name] = (found[0], found[1])
        return self.task_ids[family.name]

    async def reset(self, handle: _Handle, index: Any) -> None:
        """Start an episode on task ``index`` (``None``: the handle's task again, else the
        first eval task)."""
        family = handle.family
        async with handle.lock:
            session_id = await self._live_session(handle)
            if index is None:
                index = handle.task_index if handle.task_index is not None else 0
            eval_ids, train_ids = await self._task_ids(handle)
            try:
                task_id = task_id_of(index, eval_ids, train_ids, name=family.task_field)
            except ValueError as error:
                raise InvalidRequestError(str(error), field=family.task_field) from None
            request = ResetRequest(options={"task_id": task_id})
            answer = loads(await self.store.reset(session_id, request))
            info = answer["info"]
            handle.task_index, handle.task_id = index, task_id
            handle.instruction = str(info.get("instruction") or "")
            handle.reward, handle.total, handle.steps = 0.0, 0.0, 0
            handle.done = handle.terminated = handle.truncated = False
            handle.score = None
            handle.see(answer["observation"], info, first=True)
            handle.first_observation = handle.observation

    async def step(self, handle: _Handle, action: str) -> None:
        async with handle.lock:
            try:
                answer = loads(await self.store.step(handle.session_id, StepRequest(action=action)))
            except SessionNotFoundError as error:
                raise SessionNotFoundError(
                    f"{handle.family.name} environment {handle.number}: its episode is gone "
                    f"({error.message}); reset it to start a new one",
                    code=error.code,
                ) from None
            info = answer["info"]
            handle.total += float(answer["reward"])
            reported = info.get(handle.family.reward_info or "")
            numeric = isinstance(reported, (int, float)) and not isinstance(reported, bool)
            handle.reward = float(reported) if numeric else float(answer["reward"])
            handle.terminated, handle.truncated = answer["terminated"], answer["truncated"]
            handle.done = bool(handle.terminated or handle.truncated)
            handle.steps += 1
            score = info.get("score")
            if handle.family.score == "info" and isinstance(score, (int, float)):
                handle.score = float(score)
            handle.see(answer["observation"], info, first=False)

    async def call(self, handle: _Handle, name: str) -> Any:
        async with handle.lock:
            request = CallRequest(name=name)
            return loads(await self.store.call(handle.session_id, request))["result"]

    async def close(self, handle: _Handle) -> None:
        async with handle.lock:
            self.handles.pop(handle.number, None)
            with contextlib.suppress(SessionNotFoundError):  # it expired: nothing to free
                await self.store.close(handle.session_id)


# ----------------------------------------------------------------------------- the routes
Operation = Callable[[_Handles, Family, Request, dict[str, Any]], Awaitable[Any]]


async def _create(handles: _Handles, family: Family, request: Request, body: dict) -> Any:
    handle = await handles.create(family, client_address(request))
    if family.reset_on_create:
        index = body.get(family.create_task_field) if family.create_task_field else None
        try:
            await handles.reset(handle, index)
        except HostingError:
            await handles.close(handle)
            raise
    return handle.answer(family.create)


async def _reset(handles: _Handles, family: Family, request: Request, body: dict) -> Any:
    handle = handles.get(family, body.get(family.handle_field))
    await handles.reset(handle, body.get(family.task_field))
    return handle.answer(family.reset)


async def _step(handles: _Handles, family: Family, request: Request, body: dict) -> Any:
    handle = handles.get(family, body.get(family.handle_field))
    action = body.get("action")
    if not isinstance(action, str):
        raise InvalidRequestError(
            f"action must be the reply text, got {type(action).__name__}", field="action"
        )
    await handles.step(handle, action)
    return handle.answer(family.step)


async def _close(handles: _Handles, family: Family, request: Request, body: dict) -> Any:
    handle = handles.get(family, body.get(family.handle_field))
    await handles.close(handle)
    return {family.handle_field: handle.number, "closed": True}


def _queried(handles: _Handles, family: Family, request: Request) -> _Handle:
    return handles.get(family, request.query_params.get(family.handle_field))


async def _observation(handles: _Handles, family: Family, request: Request, body: dict) -> Any:
    handle = _queried(handles, family, request)
    if family.observation == "state":
        return {name: handle.field_value(name) for name in ("observation", "reward", "score")}
    return handle.first_observation if family.observation == "first" else handle.observation


async def _available_actions(
    handles: _Handles, family: Family, request: Request, body: dict
) -> Any:
    if family.actions == "moves":
        return MOVES
    handle = _queried(handles, family, request)
    if family.actions == "webshop":
        clickables = [a[6:-1] for a in handle.actions if a.startswith("click[") and a[-1] == "]"]
        return {"has_search_bar": not clickables, "clickables": clickables}
    return handle.actions


async def _detail(handles: _Handles, family: Family, request: Request, body: dict) -> Any:
    handle = _queried(handles, family, request)
    return {
        family.handle_field: handle.number,
        "env_id": family.env_id,
        "task_index": handle.task_index,
        "task_id": handle.task_id,
        "steps": handle.steps,
        "reward": handle.reward,
        "score": handle.current_score(),
        "done": handle.done,
    }


async def _list_envs(handles: _Handles, family: Family, request: Request, body: dict) -> Any:
    client = client_address(request)
    return [h.number for h in handles.handles.values() if h.family is family and h.client == client]


async def _root(handles: _Handles, family: Family, request: Request, body: dict) -> Any:
    return "ok"


def _extra(source: str) -> Operation:
    """A ``GET`` route answering the task's instruction or a call of the environment."""

    async def answer(handles: _Handles, family: Family, request: Request, body: dict) -> Any:
        handle = _queried(handles, family, request)
        if source == "instruction":
            return handle.instruction
        return await handles.call(handle, source)

    return answer


_OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", ""): _root,
    ("POST", "create"): _create,
    ("POST", "reset"): _reset,
    ("POST", "step"): _step,
    ("POST", "close"): _close,
    ("GET", "observation"): _observation,
    ("GET", "available_actions"): _available_actions,
    ("GET", "detail"): _detail,
    ("GET", "list_envs"): _list_envs,
}
"""The routes every family answers (plus its ``extra_routes``)."""


class AgentGymProtocol(ServerProtocol):
    """AgentGym's protocol: every family at ``/agentgym/<family>``; its clients send no headers,
    so the token may also be the path's first segment, ``/agentgym/<token>/<family>``."""

    name = "agentgym"
    session_key = "the integer handle that POST create answers, in the id or env_idx field"
    token_prefix = AGENTGYM_PREFIX

    def routers(self, store: SessionStore) -> list[APIRouter]:
        return [agentgym_routes(store)]

    def names_route(self, segment: str) -> bool:
        return segment == "lmrlgym" or find_family(segment) is not None

    def session_in_body(self, scope: dict[str, Any]) -> bool:
        return scope.get("method") == "POST" and scope["path"].startswith(AGENTGYM_PREFIX)

    def session_of(self, scope: dict[str, Any], body: bytes | None) -> int | None:
        """The handle in the family's handle field (``id`` or ``env_idx``), in the query or the
        JSON body."""
        path = scope["path"]
        if not path.startswith(AGENTGYM_PREFIX):
            return None
        segments = [s for s in path[len(AGENTGYM_PREFIX) :].split("/") if s]
        if segments[:1] == ["lmrlgym"]:
            segments = segments[1:]
        family = find_family(segments[0]) if segments else None
        if family is None:
            return None
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        value: Any = (query.get(family.handle_field) or [None])[0]
        if value is None and body:
            with contextlib.suppress(ValueError, NestingError):
                parsed = loads(body, max_depth=64)
                value = parsed.get(family.handle_field) if isinstance(parsed, dict) else None
        if isinstance(value, str) and re.fullmatch(r"[0-9]{1,20}", value):
            value = int(value)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


def agentgym_routes(store: SessionStore) -> APIRouter:
    """``/agentgym/<family>/<route>`` for every AgentGym family (``/agentgym/lmrlgym/maze/...``
    too, as AgentGym's LMRL-Gym server nests Maze and Wordle); not in llmgym's OpenAPI
    document, since they speak AgentGym's protocol."""
    router = APIRouter(include_in_schema=False)
    handles = _Handles(store)

    @router.api_route(AGENTGYM_PREFIX + "{path:path}", methods=["GET", "POST"])
    async def dispatch(path: str, request: Request) -> Response:
        family, route = _family_route(store, handles.families, path)
        operation = _OPERATIONS.get((request.method, route))
        if operation is None and request.method == "GET" and route in family.extra_routes:
            operation = _extra(family.extra_routes[route])
        if operation is None:
            routes = [r for _, r in _OPERATIONS if r] + list(family.extra_routes)
            raise _NotFoundError(
                f"{family.name} has no route {request.method} {route!r}; its routes: "
                f"{', '.join(routes)}",
                code="not_found",
            )
        body = await _body(request, store.settings.max_json_depth)
        return reply(await operation(handles, family, request, body))

    return router


def _with_originals(family: Family, settings: ServerSettings) -> Family:
    """``family`` as this server plays it: on the environment of an original dataset the
    operator gave for it (``--data alfworld=DIR`` plays ALFWorld-v0, not Household-v0)."""
    for name, _ in settings.data:
        source = get_source(name)
        if source.agentgym_family == family.name:
            fields = config_class(source.env_id).json_schema()["properties"]
            wording = {k: v for k, v in family.config.items() if k in fields}
            config = {**wording, **source.agentgym_config}
            return dataclasses.replace(family, env_id=source.env_id, config=config)
    return family


def _family_route(
    store: SessionStore, families: Mapping[str, Family], path: str
) -> tuple[Family, str]:
    name, _, route = path.partition("/")
    if name == "lmrlgym" and route:
        name, _, route = route.partition("/")
    found = find_family(name)
    family = families[found.name] if found is not None else None
    if family is None:
        raise _NotFoundError(
            f"no AgentGym family {name!r}; served here: "
            f"{', '.join(f for f, v in FAMILIES.items() if v.env_id in store.served)}",
            code="not_found",
        )
    if family.env_id not in store.served:
        raise _NotFoundError(
            f"{family.name} is {family.env_id}, which this server does not serve (its extra is "
            "not installed, or --envs leaves it out)",
            code="family_unavailable",
        )
    return family, route.strip("/")


async def _body(request: Request, max_depth: int) -> dict[str, Any]:
    """The request's JSON object; an empty body is ``{}`` (AgentGym's clients create with no
    body), and fields the route does not read are ignored (they send extra ones)."""
    if request.method != "POST":
        return {}
    data = await request.body()
    if not data.strip():
        return {}
    body = load_json(data, max_depth)
    if not isinstance(body, dict):
        raise InvalidRequestError("the body must be a JSON object", field="body")
    return body
