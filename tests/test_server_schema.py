"""A bounded schemathesis run against the server's OpenAPI spec: generated requests, valid and
invalid, get documented status codes and bodies, and never a server error."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import positive_data_acceptance  # noqa: E402

from llmgym.serving.protocol import ARRAY_KEY  # noqa: E402
from llmgym.serving.server import ServerSettings, create_app  # noqa: E402
from tests.servers import LiveServer  # noqa: E402

SETTINGS = ServerSettings(max_sessions=64, ttl_s=60)
SCHEMA = schemathesis.openapi.from_dict(create_app(SETTINGS).openapi())
OPERATIONS = {result.ok().label: result.ok() for result in SCHEMA.get_all_operations()}
SEMANTIC = {
    "POST /sessions",
    "POST /sessions/{session_id}/reset",
    "POST /sessions/{session_id}/call",
}
"""Operations whose bodies are also checked against the environment (its config's fields and
ranges, its task ids, which method names it allows): a schema-valid body may still be a 422
there, so schemathesis's "valid data is accepted" check does not apply to them."""


def _holds_an_array(body: object) -> bool:
    """Whether a generated body holds an encoded array: one whose bytes do not fill its shape
    is a 422, which the schema cannot say."""
    if isinstance(body, dict):
        return ARRAY_KEY in body or any(_holds_an_array(v) for v in body.values())
    if isinstance(body, list):
        return any(_holds_an_array(v) for v in body)
    return False


@pytest.fixture(scope="module")
def server():
    with LiveServer(SETTINGS) as live:
        yield live


@pytest.mark.slow
@pytest.mark.parametrize("label", sorted(OPERATIONS))
def test_operation_conforms_to_the_spec(server, label: str) -> None:
    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=OPERATIONS[label].as_strategy())
    def check(case) -> None:
        semantic = label in SEMANTIC or _holds_an_array(case.body)
        excluded = [positive_data_acceptance] if semantic else []
        case.call_and_validate(base_url=server.url, timeout=30, excluded_checks=excluded)

    check()
