"""A bounded schemathesis run against the server's OpenAPI spec: generated requests, valid and
invalid (schemathesis's coverage and fuzzing phases, positive and negative data), get documented
status codes and bodies, never a server error; schema-valid requests are accepted and
schema-invalid ones refused (where the schema can say it; see ``SEMANTIC``). Requests to a
session go to a live one, so the handlers behind the 404 are reached too."""

from __future__ import annotations

import httpx
import pytest

from tests.extras import need

need("fastapi")
schemathesis = need("schemathesis")

from schemathesis.checks import positive_data_acceptance
from schemathesis.config import SchemathesisConfig

from llmgym.serving.protocol import ARRAY_KEY
from llmgym.serving.server import ServerSettings, create_app
from tests.servers import LiveServer

SETTINGS = ServerSettings(
    max_sessions=100_000, max_sessions_per_client=100_000, ttl_s=60, max_memory_mb=1e9
)
CONFIG = SchemathesisConfig.from_dict(
    {
        "generation": {"mode": "all", "max-examples": 20},
        "phases": {"examples": {"enabled": False}, "stateful": {"enabled": False}},
        "seed": 15,
    }
)
SCHEMA = schemathesis.openapi.from_dict(create_app(SETTINGS).openapi(), config=CONFIG)
SEMANTIC = {
    "POST /sessions",
    "POST /sessions/{session_id}/reset",
    "POST /sessions/{session_id}/call",
}
"""Operations whose bodies are also checked against the environment (its config's fields and
ranges, its task ids, a method's arguments): a schema-valid body may still be a 422 there, so
schemathesis's "valid data is accepted" check does not apply to them."""


def _holds_an_array(body: object) -> bool:
    """Whether a generated body holds an encoded array: one whose bytes do not fill its shape
    is a 422, which the schema cannot say."""
    if isinstance(body, dict):
        return ARRAY_KEY in body or any(_holds_an_array(v) for v in body.values())
    if isinstance(body, list):
        return any(_holds_an_array(v) for v in body)
    return False


def _integral_float(body: object) -> bool:
    """Whether a generated body holds a float with no fraction (``386.0``): JSON Schema calls it
    an integer, the server's integer fields (seeds, ``seq``) take JSON integers only (a 422)."""
    if isinstance(body, float):
        return body.is_integer()
    if isinstance(body, dict):
        return any(_integral_float(v) for v in body.values())
    if isinstance(body, list):
        return any(_integral_float(v) for v in body)
    return False


OPENENV_SETTINGS = ServerSettings(
    envs=("llmgym/Wordle-v0",),
    protocols=("openenv",),
    max_sessions=100_000,
    max_sessions_per_client=100_000,
    ttl_s=60,
)
OPENENV_SCHEMA = schemathesis.openapi.from_dict(
    create_app(OPENENV_SETTINGS).openapi(), config=CONFIG
)
"""OpenEnv's routes, as a server that speaks OpenEnv's protocol alone documents them (each
mount of a plain server documents the same routes)."""
OPENENV_SEMANTIC = {
    "POST /reset",
    "POST /step",
    "POST /{env_name}/tasks",
    "POST /{env_name}/num_tasks",
    "POST /{env_name}/task",
    "POST /{env_name}/task_range",
}
"""Operations whose bodies name tasks, splits and sessions: a schema-valid body may still be a
422 (no such task or split), a 404 (no such session) or a 409 (a step without a session)."""


@pytest.fixture(scope="module")
def server():
    with LiveServer(SETTINGS) as live:
        yield live


@pytest.fixture(scope="module")
def http(server):
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


@pytest.mark.slow
@SCHEMA.parametrize()
def test_api_conforms_to_its_spec(case, server, http) -> None:
    session = None
    if "session_id" in (case.path_parameters or {}):
        created = http.post("/sessions", json={"env_id": "llmgym/Wordle-v0", "seed": 0})
        session = created.json()["session_id"]
        case.path_parameters["session_id"] = session
    semantic = (
        case.operation.label in SEMANTIC or _holds_an_array(case.body) or _integral_float(case.body)
    )
    excluded = [positive_data_acceptance] if semantic else []
    try:
        response = case.call_and_validate(base_url=server.url, timeout=30, excluded_checks=excluded)
    finally:
        if session is not None:
            http.delete(f"/sessions/{session}")
    if case.operation.label == "POST /sessions" and response.status_code == 201:
        http.delete(f"/sessions/{response.json()['session_id']}")


@pytest.fixture(scope="module")
def openenv_server():
    with LiveServer(OPENENV_SETTINGS) as live:
        yield live


@pytest.mark.slow
@OPENENV_SCHEMA.parametrize()
def test_openenv_api_conforms_to_its_spec(case, openenv_server) -> None:
    semantic = (
        case.operation.label in OPENENV_SEMANTIC
        or _holds_an_array(case.body)
        or _integral_float(case.body)
    )
    excluded = [positive_data_acceptance] if semantic else []
    case.call_and_validate(base_url=openenv_server.url, timeout=30, excluded_checks=excluded)
