"""The server's protocols, one table of :class:`ServerProtocol`: settings name them, a server
answers the routes of those it speaks and no others, two that answer one path are refused, and
the modules every protocol shares import none of them."""

from __future__ import annotations

import ast
from pathlib import Path

import httpx
import pytest

from tests.extras import need

need("fastapi")
need("uvicorn")

from fastapi import APIRouter

from llmgym.serving.server import ServerProtocol, ServerSettings, create_app
from llmgym.serving.server import protocols as protocol_table
from llmgym.serving.server.protocols import DEFAULT_PROTOCOLS, register_protocol
from llmgym.serving.server.sessions import SessionStore
from tests.servers import LiveServer

SRC = Path(__file__).resolve().parent.parent / "src" / "llmgym"
MAZE = "llmgym/Maze-v0"


class _HealthProtocol(ServerProtocol):
    """A protocol whose ``/health`` would shadow llmgym's."""

    name = "health-too"
    session_key = "none"

    def routers(self, store: SessionStore) -> list[APIRouter]:
        router = APIRouter()

        @router.get("/health")
        async def health() -> dict[str, str]:
            return {"status": "mine"}

        return [router]


@pytest.fixture
def table(monkeypatch):
    """The protocol table, restored after the test."""
    monkeypatch.setattr(protocol_table, "PROTOCOLS", dict(protocol_table.PROTOCOLS))
    return protocol_table.PROTOCOLS


def test_settings_take_names_of_the_table() -> None:
    assert (
        ServerSettings().protocols == DEFAULT_PROTOCOLS == ("llmgym", "openenv", "agentgym", "mcp")
    )
    assert ServerSettings(protocols=["agentgym", "llmgym", "agentgym"]).protocols == (
        "agentgym",
        "llmgym",
    )
    with pytest.raises(ValueError, match="'a2a' is not a server protocol; known: llmgym, openenv"):
        ServerSettings(protocols=("llmgym", "a2a"))
    with pytest.raises(ValueError, match="non-empty sequence of names"):
        ServerSettings(protocols="openenv")
    with pytest.raises(ValueError, match="non-empty sequence of names"):
        ServerSettings(protocols=())


def test_openenv_alone_needs_one_environment() -> None:
    with pytest.raises(ValueError, match=r"alone serves one environment.*--env ID"):
        create_app(ServerSettings(protocols=("openenv",), envs=(MAZE, "llmgym/Wordle-v0")))


def test_a_server_answers_the_protocols_it_speaks_and_no_others() -> None:
    settings = ServerSettings(envs=(MAZE,), protocols=("agentgym",), token="tok")
    with LiveServer(settings) as server:
        created = httpx.post(f"{server.url}/agentgym/tok/maze/create", timeout=30)
        assert created.status_code == 200, created.text
        header = {"Authorization": "Bearer tok"}
        for path in ("/health", "/environments", "/openenv/maze/schema"):
            answer = httpx.get(f"{server.url}{path}", headers=header)
            assert answer.status_code == 404 and answer.json()["error"] == "not_found", path
    with LiveServer(ServerSettings(envs=(MAZE,), protocols=("llmgym",), token="tok")) as server:
        assert httpx.get(f"{server.url}/health").json()["status"] == "ok"
        # the token travels in the path for AgentGym's clients only, not to every path
        refused = httpx.post(f"{server.url}/agentgym/tok/maze/create")
        assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"
        answer = httpx.post(f"{server.url}/agentgym/maze/create", headers=header)
        assert answer.status_code == 404 and answer.json()["error"] == "not_found"


def test_two_protocols_answering_one_path_are_refused(table) -> None:
    register_protocol(_HealthProtocol())
    with pytest.raises(ValueError, match="llmgym and health-too both answer GET /health"):
        create_app(ServerSettings(envs=(MAZE,), protocols=("llmgym", "health-too")))
    with LiveServer(ServerSettings(envs=(MAZE,), protocols=("health-too",))) as server:
        assert httpx.get(f"{server.url}/health").json() == {"status": "mine"}


def test_registering_a_name_again_replaces_it_with_a_warning(table) -> None:
    register_protocol(_HealthProtocol())
    again = _HealthProtocol()
    with pytest.warns(UserWarning, match="replacing the server protocol 'health-too'"):
        register_protocol(again)
    assert table["health-too"] is again


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.add(node.module)
    return names


@pytest.mark.parametrize(
    "module",
    ["app", "guard", "sessions", "settings", "schemas", "policy", "logs", "protocols", "episodes"],
)
def test_shared_server_modules_import_no_protocol(module: str) -> None:
    names = ("routes", "openenv", "agentgym", "mcp")
    protocols = {f"llmgym.serving.server.{name}" for name in names}
    imported = _imported(SRC / "serving" / "server" / f"{module}.py")
    assert not imported & protocols
    assert not any(name.startswith("llmgym.integrations") for name in imported)


def test_agentgym_integration_does_not_import_the_runner() -> None:
    """The runner's conversions use the AgentGym tables, never the other way round (no cycle)."""
    imported = _imported(SRC / "integrations" / "agentgym.py")
    assert not any(name.startswith("llmgym.runner") for name in imported)
    assert "llmgym.integrations.agentgym" in _imported(SRC / "runner" / "trajectories.py")
