"""The server's request bodies and replies (its OpenAPI schema), and parsing a request into them.

Hot endpoints parse their body with :func:`parse_body` rather than FastAPI's dependency
machinery: much cheaper, with the same validation and the same 422 answers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal, TypeVar

from fastapi import Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError
from starlette.requests import HTTPConnection

from llmgym.errors import InvalidRequestError, NestingError, ValidationFailure
from llmgym.serving.protocol import ARRAY_KEY, ArrayDType, dumps, loads

JSON = "application/json"


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


Seed = Annotated[int, Strict(), Field(ge=0)]
"""A seed: a JSON integer (not ``true``, not ``1.0``)."""
Seq = Annotated[
    int, Strict(), Field(ge=1, description="Sequence number of this request (retries).")
]
TaskId = Annotated[
    str,
    Field(pattern=r"^(train|eval)/\S+$", description="A task id, e.g. eval/00042."),
]


class CreateSessionRequest(_Body):
    env_id: str = Field(description="A registered environment id, e.g. llmgym/Wordle-v0.")
    make_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments for gymnasium.make (knobs, ...)."
    )
    config: dict[str, Any] | None = Field(
        None, description="Config overrides for the environment (the make argument `config`)."
    )
    reset: bool = Field(True, description="Reset once and return the first observation.")
    seed: Seed | None = Field(None, description="Seed of the first reset.")
    task_id: TaskId | None = Field(None, description="Task of the first reset, e.g. eval/00042.")
    split: Literal["train", "eval"] | None = Field(None, description="Split of the first reset.")


class ResetRequest(_Body):
    seed: Seed | None = None
    options: dict[str, Any] | None = Field(
        None, description="task_id, split and/or config (overrides for this episode)."
    )
    seq: Seq | None = None


class StepRequest(_Body):
    action: Any = Field(
        description=(
            "The action: text, an integer for a Discrete action space, an encoded array for an "
            "array space. Any other value is answered by the environment as an invalid action, "
            "as it is locally (an index out of range too)."
        ),
    )
    seq: Seq | None = None


class CallRequest(_Body):
    name: str = Field(description="An allow-listed read-only method, e.g. oracle_action.")
    args: list[Any] = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)


STREAM_OPERATIONS: dict[str, tuple[type[BaseModel], str]] = {
    "reset": (ResetRequest, "reset"),
    "step": (StepRequest, "step"),
    "call": (CallRequest, "call"),
}
"""The WebSocket stream's operations: the request model and the :class:`SessionStore` method."""


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
    max_body_bytes: int
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
    game: str | None
    available: bool
    summary: str


class EnvironmentList(BaseModel):
    environments: list[EnvironmentRow]


class EnvironmentDetail(EnvironmentRow):
    config_schema: dict[str, Any]


class RayCapacity(BaseModel):
    """The Ray cluster under a server started with ``--ray``."""

    nodes: int
    cpus: float
    free_cpus: float
    memory_mb: int
    free_memory_mb: int


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    protocol: int
    instance_id: str
    workers: int
    sessions: int
    max_sessions: int
    free_slots: int
    ttl_s: float
    uptime_s: float
    steps: int
    ray: RayCapacity | None = None


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    descriptions = {
        401: "Missing or wrong bearer token.",
        404: "Unknown, closed or expired session.",
        409: "Step before reset, after the episode ended, or out of sequence.",
        413: "Request body over the size limit.",
        422: "Invalid request: malformed body, unknown environment, bad config or options, a "
        "config value over the server's limits.",
        429: "This client holds as many sessions as one client may.",
        502: "The session's environment process ended (exit, crash); the session is closed.",
        503: "At capacity: too many sessions.",
        504: "The call overran the server's time limit; the session is closed.",
    }
    return {s: {"model": ErrorBody, "description": descriptions[s]} for s in statuses}


M = TypeVar("M", bound=BaseModel)


def load_json(data: str | bytes, max_depth: int) -> Any:
    """A request body or stream message (UTF-8 JSON nested at most ``max_depth`` deep), with
    its encoded arrays decoded; else a 422."""
    try:
        return loads(data, max_depth=max_depth)
    except NestingError:
        problem = {
            "loc": (),
            "msg": f"JSON nested more than {max_depth} deep (the server's --max-json-depth)",
            "type": "json_too_deep",
        }
        raise validation_error([problem]) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        problem = {"loc": (), "msg": f"JSON decode error: {error}", "type": "json_invalid"}
        raise validation_error([problem]) from None
    except ValueError as error:
        raise InvalidRequestError(f"invalid array: {error}", code="invalid_array") from None


async def parse_body(request: Request, model: type[M], max_depth: int) -> M:
    """The request's JSON body as ``model``, or a 422 (see :func:`load_json`). (Bodies are
    parsed here rather than by FastAPI's dependency machinery: much cheaper, with the same
    validation, and the nesting limit before any parsing.)"""
    data = load_json(await request.body(), max_depth)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise validation_error(error.errors()) from None


def client_address(connection: HTTPConnection) -> str:
    """The address of a request's or a WebSocket's client: whom the per-client quota counts."""
    return connection.client.host if connection.client is not None else "unknown"


def validation_error(problems: Sequence[Any]) -> ValidationFailure:
    """A 422 from pydantic's error list (locations relative to the body)."""
    detail = []
    for problem in problems:
        location = list(problem.get("loc", ()))
        if location[:1] == ["body"]:
            location = location[1:]
        detail.append({"loc": location, "msg": problem.get("msg"), "type": problem.get("type")})
    first = detail[0] if detail else {"loc": [], "msg": "invalid request"}
    field = ".".join(str(part) for part in first["loc"]) or None
    return ValidationFailure(f"{field or 'body'}: {first['msg']}", field, detail)


def body_schema(model: type[BaseModel], *, required: bool = True) -> dict[str, Any]:
    """OpenAPI for a body parsed by :func:`parse_body` (one that may be left out when not
    ``required``)."""
    schema = model.model_json_schema()
    return {
        "requestBody": {"required": required, "content": {JSON: {"schema": schema}}},
    }


def reply(payload: Any, status: int = 200) -> Response:
    """A JSON response of ``payload`` (written by :func:`llmgym.serving.protocol.dumps`)."""
    return Response(dumps(payload), status_code=status, media_type=JSON)


def error_reply(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Response:
    """An error response: ``status`` and the JSON error ``body``."""
    return Response(dumps(body), status_code=status, media_type=JSON, headers=headers)
