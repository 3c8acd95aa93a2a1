"""Inputs that once made `llmgym serve` answer 500, over real HTTP on 127.0.0.1: each is now a
4xx naming the field, and no error message shows a path of the server's file system."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.extras import need

need("fastapi")
need("uvicorn")

from llmgym.envs import get_entry
from llmgym.serving.protocol import raised_message
from llmgym.serving.server import ServerSettings
from tests.servers import LiveServer


def _error(response: httpx.Response, status: int, code: str, field: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == code and body["field"] == field
    return body["message"]


def test_the_passive_checker_cannot_be_turned_on() -> None:
    with LiveServer() as live, httpx.Client(base_url=live.url, timeout=60) as http:
        body = {"env_id": "llmgym/Wordle-v0", "make_kwargs": {"disable_env_checker": False}}
        message = _error(
            http.post("/sessions", json=body),
            422,
            "invalid_request",
            "make_kwargs.disable_env_checker",
        )
        assert "only true is served" in message
        # the server's own sessions survive a failed reset: the next reset and step answer
        created = http.post("/sessions", json={"env_id": "llmgym/Wordle-v0", "reset": False})
        session = created.json()["session_id"]
        failed = http.post(f"/sessions/{session}/reset", json={"options": {"task_id": "no/1"}})
        assert failed.status_code == 422
        assert http.post(f"/sessions/{session}/reset", json={"seed": 1}).status_code == 200
        step = http.post(f"/sessions/{session}/step", json={"action": "crane"})
        assert step.status_code == 200 and step.json()["info"]["invalid_action"] is False


@pytest.mark.skipif(not get_entry("llmgym/SciWorld-v0").available, reason="needs [sciworld]")
def test_sciworld_simplifications_given_twice_are_refused(tmp_path: Path) -> None:
    repeated = "teleportAction," * 30
    with LiveServer() as live, httpx.Client(base_url=live.url, timeout=120) as http:
        for body in (
            {"env_id": "llmgym/SciWorld-v0", "config": {"simplifications": repeated}},
            {"env_id": "llmgym/SciWorld-v0", "make_kwargs": {"simplifications": repeated}},
        ):
            message = _error(
                http.post("/sessions", json=body),
                422,
                "invalid_config",
                "SciWorldConfig.simplifications",
            )
            assert message == (
                "'teleportAction' is given twice; allowed: each simplification at most once"
            )


@pytest.mark.skipif(not get_entry("llmgym/TextWorld-v0").available, reason="needs [textworld]")
def test_textworld_game_files_are_named_as_the_client_named_them(tmp_path: Path) -> None:
    allowed = tmp_path / "games"
    allowed.mkdir()
    (allowed / "notes.txt").write_text("not a game")
    cases = {
        "a" * 5000 + ".z5": "cannot be a file here (File name too long)",
        ("b" * 200 + "/") * 30 + "g.z5": "cannot be a file here (File name too long)",
        "missing.z5": "'missing.z5' does not exist",
        "notes.txt": "'notes.txt' is not a Z-machine game",
    }
    settings = ServerSettings(file_dir=str(allowed))
    with LiveServer(settings) as live, httpx.Client(base_url=live.url, timeout=120) as http:
        for game_file, expected in cases.items():
            body = {"env_id": "llmgym/TextWorld-v0", "config": {"game_file": game_file}}
            response = http.post("/sessions", json=body)
            message = _error(response, 422, "invalid_config", "TextWorldConfig.game_file")
            assert expected in message
            assert str(tmp_path) not in response.text and str(allowed) not in response.text


def test_an_os_error_is_told_without_its_file_names() -> None:
    error = OSError(36, "File name too long", "/srv/cache/gold/" + "x" * 300)
    assert raised_message(error) == "the environment raised OSError: File name too long"
    assert raised_message(ValueError("bad")) == "the environment raised ValueError: bad"
