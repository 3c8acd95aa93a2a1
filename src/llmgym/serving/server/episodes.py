"""A session of the server played episode by episode, as OpenEnv's and MCP's clients play it.

OpenEnv's WebSocket (a session per connection), OpenEnv's HTTP routes (``/reset``, ``/step``,
``/state``) and the MCP endpoint's tools all reach the server's sessions
(:class:`~llmgym.serving.server.sessions.SessionStore`) through an :class:`EpisodeSession`:

* a reset takes OpenEnv's arguments (:class:`OpenEnvReset`): ``seed``, ``task_id``, ``split``,
  ``index`` (the ``index``-th task id of ``split``), ``config`` (overrides for the episode,
  checked against the server's caps), ``episode_id`` and ``horizon`` (the turns the episode may
  last);
* a step is answered as the environment answers it (an action it cannot use is an observation
  with ``invalid_action``, never an error); the episode ends with ``done`` (``terminated or
  truncated``), and a step after that is refused until the next reset;
* an observation is ``{"text", "info", "invalid_action", "success", "terminated", "truncated",
  "task_id"}`` (plus ``instruction`` and, for tool environments, ``tools`` after a reset), with
  ``reward`` and ``done`` beside it; the state is the episode id and its step count.

:class:`Descriptions` is what these clients read about an environment (metadata, schemas, task
ids, its spaces), worked out once per environment. :class:`SessionRegistry` holds the sessions
that clients create by id (OpenEnv's ``openenv/session/create``) and then reach from several
places: OpenEnv's WebSocket (``/ws?session_id=``), its HTTP routes and its MCP tools.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import secrets
from dataclasses import dataclass
from typing import Any, cast

import gymnasium as gym
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import llmgym
from llmgym.core.env import TextEnv
from llmgym.core.registry import EnvEntry
from llmgym.core.tasks import SPLITS, TaskIdRange
from llmgym.envs import get_entry
from llmgym.errors import EpisodeStateError, HostingError, InvalidRequestError, SessionNotFoundError
from llmgym.serving.hosting import HostedEnv
from llmgym.serving.protocol import loads
from llmgym.serving.server.schemas import (
    CallRequest,
    CreateSessionRequest,
    ResetRequest,
    Seed,
    StepRequest,
    validation_error,
)
from llmgym.serving.server.sessions import SessionStore

__all__ = [
    "Descriptions",
    "Episode",
    "EpisodeSession",
    "OpenEnvAction",
    "OpenEnvObservation",
    "OpenEnvReset",
    "OpenEnvResult",
    "OpenEnvState",
    "SessionRegistry",
    "fresh_state",
    "openenv_name",
    "openenv_schema",
]

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


class OpenEnvResult(BaseModel):
    """OpenEnv's answer to a reset or a step: the observation, with the reward and ``done``."""

    observation: OpenEnvObservation
    reward: float | None = Field(description="The step's reward (none after a reset).")
    done: bool = Field(description="terminated or truncated: the episode has ended.")
    metadata: dict[str, Any] = Field(description="truncated, terminated and task_id.")


class OpenEnvReset(BaseModel):
    """The arguments of a reset."""

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


def openenv_schema(tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    """``GET /schema``: the action, observation and state schemas, and a tool environment's
    tools (OpenAI function format)."""
    return {
        "action": OpenEnvAction.model_json_schema(),
        "observation": OpenEnvObservation.model_json_schema(),
        "reset_observation": OpenEnvObservation.model_json_schema(),
        "state": OpenEnvState.model_json_schema(),
        "tools": tools or [],
    }


# ----------------------------------------------------------------------------- descriptions
class Descriptions:
    """What OpenEnv's and MCP's clients read about an environment, worked out once per
    environment (in a worker thread, under the server's time limits)."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._metadata: dict[str, dict[str, Any]] = {}
        self._schemas: dict[str, dict[str, Any]] = {}
        self._task_ids: dict[tuple[str, str], TaskIdRange | list[str]] = {}
        self._environments: dict[str, dict[str, Any]] = {}

    async def metadata(self, env_id: str) -> dict[str, Any]:
        """``GET /metadata``: name, description, the environment's docstring, version."""
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
        """``GET /schema`` (:func:`openenv_schema`)."""
        if env_id not in self._schemas:
            tools = await self.store.run(env_id, "schema", _tool_schemas, get_entry(env_id))
            self._schemas[env_id] = openenv_schema(tools)
        return self._schemas[env_id]

    async def tools(self, env_id: str) -> list[dict[str, Any]]:
        """A tool environment's tools in OpenAI's function format (none for the others)."""
        tools: list[dict[str, Any]] = (await self.schema(env_id))["tools"]
        return tools

    async def task_ids(self, env_id: str, split: str) -> TaskIdRange | list[str]:
        """The task ids of ``split``; a 422 for a split that is not one."""
        if split not in SPLITS:
            raise InvalidRequestError(
                f"split={split!r} is not allowed; allowed: {', '.join(SPLITS)}", field="split"
            )
        key = (env_id, split)
        if key not in self._task_ids:
            self._task_ids[key] = await self.store.run(env_id, "make", _task_ids, env_id, split)
        return self._task_ids[key]

    async def environment(self, env_id: str) -> dict[str, Any]:
        """What llmgym's protocol says of a new session of ``env_id`` (its spaces, ...), from
        an environment made with the default config."""
        if env_id not in self._environments:
            made = await self.store.run(env_id, "make", _describe, env_id)
            self._environments[env_id] = made
        return self._environments[env_id]


def _env_class(entry: EnvEntry) -> type:
    module, _, name = entry.entry_point.partition(":")
    return cast(type, getattr(importlib.import_module(module), name))


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


def _describe(env_id: str) -> dict[str, Any]:
    host = HostedEnv(env_id)
    try:
        return host.describe()
    finally:
        host.close()


# ----------------------------------------------------------------------------- a session
@dataclass
class Episode:
    """The episode a session is in: what OpenEnv's state says, and whether it has ended."""

    episode_id: str | None = None
    task_id: str | None = None
    steps: int = 0
    done: bool = False
    horizon: int | None = None


class EpisodeSession:
    """A session of the store, played episode by episode (see the module). Its methods answer
    OpenEnv's data: :meth:`reset` and :meth:`step` ``{"observation", "reward", "done",
    "metadata"}``, :meth:`state` ``{"episode_id", "step_count", ...}``; errors are the store's
    :class:`~llmgym.serving.protocol.HostingError`."""

    def __init__(
        self,
        store: SessionStore,
        describe: Descriptions,
        env_id: str,
        session_id: str,
        environment: dict[str, Any],
    ) -> None:
        self.store = store
        self.describe = describe
        self.env_id = env_id
        self.session_id = session_id
        self.environment = environment
        """What the store said of the new session's environment (its spaces, config, ...)."""
        self.episode = Episode()
        self.closed = False

    @classmethod
    async def create(
        cls, store: SessionStore, describe: Descriptions, env_id: str, client: str
    ) -> EpisodeSession:
        """A new session of ``env_id`` for ``client`` (an address: the per-client quota counts
        it), not reset yet."""
        request = CreateSessionRequest.model_validate({"env_id": env_id, "reset": False})
        created = await store.create(request, client)
        return cls(store, describe, env_id, created["session_id"], created["env"])

    async def reset(self, data: dict[str, Any]) -> dict[str, Any]:
        """Start an episode; ``data`` holds the reset's arguments (:class:`OpenEnvReset`)."""
        try:
            asked = OpenEnvReset.model_validate(data)
        except ValidationError as error:
            raise validation_error(error.errors()) from None
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
        self.episode = Episode(
            episode_id=asked.episode_id or secrets.token_hex(8),
            task_id=info.get("task_id"),
            horizon=asked.horizon,
        )
        if asked.horizon is not None:
            info["horizon"] = {"limit": asked.horizon}
        tools = await self.describe.tools(self.env_id)
        observation = _observation(answer["observation"], False, False, info, self.episode)
        observation["instruction"] = info.get("instruction")
        if tools:
            observation["tools"] = tools
        return _result(observation, None, False)

    async def _task_id(self, split: str, index: int, asked: OpenEnvReset) -> str:
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

    async def step(self, action: Any) -> dict[str, Any]:
        """Apply ``action`` (any value: the environment answers one it cannot use)."""
        if self.episode.done:  # also after a horizon the environment itself does not know of
            raise EpisodeStateError("the episode has ended; reset before the next step")
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
        return _result(observation, answer["reward"], self.episode.done)

    def state(self) -> dict[str, Any]:
        """OpenEnv's state of the session (:class:`OpenEnvState`)."""
        episode = self.episode
        return {
            "episode_id": episode.episode_id,
            "step_count": episode.steps,
            "env_id": self.env_id,
            "task_id": episode.task_id,
            "done": episode.done,
        }

    async def close(self) -> None:
        """Close the session (once; a session the store has already ended is left be)."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(HostingError):
            await self.store.close(self.session_id)


def fresh_state(env_id: str) -> dict[str, Any]:
    """The state of a session no episode has started in."""
    return {"episode_id": None, "step_count": 0, "env_id": env_id, "task_id": None, "done": False}


def _observation(
    observation: Any, terminated: bool, truncated: bool, info: dict[str, Any], episode: Episode
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


def _result(observation: dict[str, Any], reward: float | None, done: bool) -> dict[str, Any]:
    metadata = {
        "truncated": observation["truncated"],
        "terminated": observation["terminated"],
        "task_id": observation["task_id"],
    }
    return {"observation": observation, "reward": reward, "done": done, "metadata": metadata}


# ----------------------------------------------------------------------------- by id
class SessionRegistry:
    """Sessions that clients create by id (OpenEnv's ``openenv/session/create``), for one
    router: each may then be reached by id from OpenEnv's WebSocket, its HTTP routes and its
    MCP tools, until it is closed, expires (the server's TTL) or is lost (a time limit)."""

    def __init__(self, store: SessionStore, describe: Descriptions) -> None:
        self.store = store
        self.describe = describe
        self._sessions: dict[str, EpisodeSession] = {}

    async def create(self, env_id: str, client: str) -> EpisodeSession:
        """A new session of ``env_id`` for ``client``, under the server's quotas."""
        for stale in [s for s in self._sessions if s not in self.store.sessions]:
            del self._sessions[stale]  # expired or lost meanwhile
        session = await EpisodeSession.create(self.store, self.describe, env_id, client)
        self._sessions[session.session_id] = session
        return session

    def get(self, session_id: str, env_id: str) -> EpisodeSession:
        """The session ``session_id`` of ``env_id``, or the store's 404 (it never existed
        here, was closed, expired or was lost)."""
        session = self._sessions.get(session_id)
        if session is None or session.env_id != env_id:
            raise SessionNotFoundError(
                f"no session {session_id!r} of {env_id} was created here "
                "(openenv/session/create), or it was closed"
            )
        try:
            self.store.get(session_id)
        except HostingError:
            del self._sessions[session_id]
            raise
        return session

    async def close(self, session_id: str, env_id: str) -> None:
        """Close the session (the store's 404 if there is none)."""
        session = self.get(session_id, env_id)
        del self._sessions[session_id]
        await session.close()
