"""``llmgym serve`` over real HTTP on 127.0.0.1: sessions, status codes and JSON error bodies,
limits (token, body size, capacity, TTL), sequence numbers, logs and the OpenAPI spec; each
with sessions hosted in the server's process and (slow) in the actors of a local Ray instance
(``llmgym serve --ray local``)."""

from __future__ import annotations

import base64
import json
import logging
import threading
import time

import gymnasium as gym
import httpx
import numpy as np
import pytest

from tests.extras import need

need("fastapi")
need("uvicorn")

from llmgym.cli import main
from llmgym.envs import get_entry
from llmgym.serving.protocol import SERVABLE_SPACES
from llmgym.serving.server import JsonLogFormatter, ServerSettings
from tests.servers import LiveServer


@pytest.fixture(scope="module")
def server(hosting):
    with LiveServer(ServerSettings(max_body_bytes=64 * 1024, **hosting)) as live:
        yield live


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def _session(http: httpx.Client, **body) -> dict:
    response = http.post("/sessions", json={"env_id": "llmgym/Wordle-v0", **body})
    assert response.status_code == 201, response.text
    return response.json()


def _error(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error"] == code and body["message"]
    return body


def test_health_and_environment_list(http, hosting) -> None:
    health = http.get("/health").json()
    assert health["status"] == "ok" and health["protocol"] == 1 and health["instance_id"]
    assert health["workers"] == 1
    assert health["free_slots"] == health["max_sessions"] - health["sessions"]
    if hosting:
        assert health["ray"]["nodes"] == 1 and health["ray"]["cpus"] == 2
    else:
        assert "ray" not in health
    ids = [row["id"] for row in http.get("/environments").json()["environments"]]
    assert "llmgym/Wordle-v0" in ids and "llmgym/Remote-v0" not in ids
    detail = http.get("/environments/llmgym/Maze-v0").json()
    assert detail["config_schema"]["properties"]["width"]["maximum"] == 30
    _error(http.get("/environments/llmgym/Nope-v0"), 404, "not_found")


def test_create_reset_step_close(http) -> None:
    created = _session(http, seed=3, split="eval")
    session = created["session_id"]
    assert created["seq"] == 1 and created["info"]["split"] == "eval"
    local = gym.make("llmgym/Wordle-v0")
    assert created["env"]["observation_space"]["max_length"] == local.observation_space.max_length
    step = http.post(f"/sessions/{session}/step", json={"action": "crane"}).json()
    assert set(step) == {"observation", "reward", "terminated", "truncated", "info", "seq"}
    assert step["info"]["invalid_action"] is False and step["seq"] == 2
    reset = http.post(f"/sessions/{session}/reset", json={"options": {"task_id": "eval/00007"}})
    assert reset.json()["info"]["task_id"] == "eval/00007"
    status = http.get(f"/sessions/{session}").json()
    assert status["episode"] == "running" and status["steps"] == 0 and status["seq"] == 3
    assert http.delete(f"/sessions/{session}").status_code == 204
    _error(http.post(f"/sessions/{session}/step", json={"action": "x"}), 404, "session_not_found")


def test_hostile_actions_are_normal_steps(http) -> None:
    session = _session(http)["session_id"]
    for action in ["", "'; DROP TABLE x; --", "\ud800 lone surrogate", "x" * 20_000, 42, None, [1]]:
        body = json.dumps({"action": action})  # ASCII-escaped, so lone surrogates travel too
        response = http.post(f"/sessions/{session}/step", content=body)
        assert response.status_code == 200, response.text
        assert response.json()["info"]["invalid_action"] is True


def test_pixel_sessions_send_exact_frames_and_take_action_indices(http) -> None:
    created = _session(http, env_id="llmgym/HeistPixels-v0", seed=2)
    session, env = created["session_id"], created["env"]
    assert env["observation_space"] == {
        "type": "Box",
        "shape": [64, 64, 3],
        "dtype": "uint8",
        "low": 0,
        "high": 255,
    }
    assert env["action_space"] == {"type": "Discrete", "n": 4, "start": 0, "dtype": "int64"}
    local = gym.make("llmgym/HeistPixels-v0")
    frame, _ = local.reset(seed=2)

    def decoded(observation: dict) -> np.ndarray:
        assert observation["dtype"] == "uint8" and observation["shape"] == [64, 64, 3]
        return np.frombuffer(base64.b64decode(observation["__ndarray__"]), np.uint8)

    assert decoded(created["observation"]).tobytes() == frame.tobytes()
    for action in (local.unwrapped.oracle_action(), 9, -1, 1.0, True, "move up"):
        step = http.post(f"/sessions/{session}/step", json={"action": action})
        assert step.status_code == 200, step.text
        frame, reward, terminated, _, info = local.step(action)
        assert decoded(step.json()["observation"]).tobytes() == frame.tobytes()
        assert step.json()["info"] == info and step.json()["reward"] == reward
        if isinstance(action, int) and not 0 <= action < 4:  # out of range: as locally
            assert info["invalid_action"] and "(or 0-3)" in info["feedback"]
    action = {"__ndarray__": base64.b64encode(b"\x01").decode(), "dtype": "uint8", "shape": [1]}
    step = http.post(f"/sessions/{session}/step", json={"action": action}).json()
    assert step["info"] == local.step(np.array([1], np.uint8))[4]
    malformed = {**action, "shape": [2]}
    error = _error(
        http.post(f"/sessions/{session}/step", json={"action": malformed}), 422, "invalid_array"
    )
    assert "has 2 bytes, but __ndarray__ holds 1" in error["message"]


def test_episode_state_conflicts(http) -> None:
    session = _session(http, reset=False)["session_id"]
    _error(http.post(f"/sessions/{session}/step", json={"action": "crane"}), 409, "reset_needed")
    http.post(f"/sessions/{session}/reset", json={"seed": 0})
    oracle = {"name": "oracle_action"}
    for _ in range(6):
        action = http.post(f"/sessions/{session}/call", json=oracle).json()["result"]
        step = http.post(f"/sessions/{session}/step", json={"action": action}).json()
        if step["terminated"]:
            break
    assert step["info"]["success"]
    _error(http.post(f"/sessions/{session}/step", json={"action": "crane"}), 409, "episode_ended")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"env_id": "llmgym/Nope-v0"}, "env_id"),
        ({"env_id": "llmgym/Remote-v0"}, "env_id"),
        ({"env_id": 3}, "env_id"),
        ({"env_id": "llmgym/Maze-v0", "config": {"width": 99}}, "MazeConfig.width"),
        ({"env_id": "llmgym/Maze-v0", "make_kwargs": {"colour": "red"}}, "MazeConfig.colour"),
        ({"env_id": "llmgym/Wordle-v0", "seed": "zero"}, "seed"),
        ({"env_id": "llmgym/Wordle-v0", "seed": -1}, "seed"),
        ({"env_id": "llmgym/Wordle-v0", "split": "test"}, "split"),
        ({"env_id": "llmgym/Wordle-v0", "task_id": "eval/99999999"}, "options"),
        ({"env_id": "llmgym/Wordle-v0", "unknown": 1}, "unknown"),
        ({"env_id": "llmgym/Wordle-v0", "make_kwargs": {"render_mode": "human"}}, None),
    ],
)
def test_invalid_create_requests_are_422(http, body, field) -> None:
    error = _error(http.post("/sessions", json=body), 422, error_code(field))
    if field is not None:
        assert error["field"] == field
    if field == "MazeConfig.width":
        assert error["message"] == "99 is outside the allowed range; allowed: a number in [2, 30]"


def error_code(field: str | None) -> str:
    return "invalid_config" if field and "Config." in field else "invalid_request"


def test_malformed_bodies_are_4xx(http) -> None:
    session = _session(http)["session_id"]
    raw = {"headers": {"content-type": "application/json"}}
    _error(
        http.post(f"/sessions/{session}/step", content=b"{not json", **raw), 422, "invalid_request"
    )
    _error(
        http.post(f"/sessions/{session}/step", content=b"\xff\xfe", **raw), 422, "invalid_request"
    )
    _error(http.post("/sessions", content=b"[1, 2]", **raw), 422, "invalid_request")
    _error(http.post(f"/sessions/{session}/step", json={}), 422, "invalid_request")
    _error(http.post(f"/sessions/{session}/step", json=["crane"]), 422, "invalid_request")
    _error(http.post(f"/sessions/{session}/reset", json={"seed": 1.5}), 422, "invalid_request")
    _error(http.post(f"/sessions/{session}/reset", json={"options": 5}), 422, "invalid_request")
    bad_option = http.post(f"/sessions/{session}/reset", json={"options": {"colour": "red"}})
    assert "unknown key 'colour'" in _error(bad_option, 422, "invalid_request")["message"]
    _error(http.post(f"/sessions/{session}/call", json={"name": "close"}), 422, "invalid_request")
    _error(
        http.post(f"/sessions/{session}/call", json={"name": "task_ids", "args": [1, 2, 3]}),
        422,
        "invalid_request",
    )
    _error(http.get("/no/such/route"), 404, "not_found")


def test_request_bodies_have_a_size_limit(http) -> None:
    session = _session(http)["session_id"]
    huge = json.dumps({"action": "x" * 100_000}).encode()
    _error(http.post(f"/sessions/{session}/step", content=huge), 413, "payload_too_large")

    def chunks():  # no Content-Length: the limit applies while reading
        for _ in range(100):
            yield b"x" * 1024

    streamed = http.post(f"/sessions/{session}/step", content=chunks())
    _error(streamed, 413, "payload_too_large")


def test_remote_calls(http) -> None:
    session = _session(http, task_id="eval/00003")["session_id"]

    def call(name, *args, **kwargs):
        body = {"name": name, "args": list(args), "kwargs": kwargs}
        response = http.post(f"/sessions/{session}/call", json=body)
        assert response.status_code == 200, response.text
        return response.json()["result"]

    assert call("task") == {
        "env_name": "wordle",
        "task_id": "eval/00003",
        "split": "eval",
        "config": {
            "word_length": 5,
            "max_guesses": 6,
            "hard_mode": False,
            "feedback": "verbose",
            "candidates": 0,
        },
    }
    ids = call("task_ids", "eval", {"word_length": 4})
    assert ids["task_id_range"]["split"] == "eval" and ids["task_id_range"]["count"] > 0
    assert call("sample_action", seed=1) == call("sample_action", seed=1)
    assert "5-letter" in call("rules") and call("success") is False


def test_sequence_numbers_make_retries_safe(http) -> None:
    session = _session(http, seed=0)["session_id"]  # seq 1 was the first reset
    first = http.post(f"/sessions/{session}/step", json={"action": "crane", "seq": 2})
    retried = http.post(f"/sessions/{session}/step", json={"action": "crane", "seq": 2})
    assert first.content == retried.content
    assert http.get(f"/sessions/{session}").json()["steps"] == 1
    skipped = http.post(f"/sessions/{session}/step", json={"action": "crane", "seq": 9})
    assert _error(skipped, 409, "out_of_sequence")["field"] == "seq"


def test_token_is_required_when_set(hosting) -> None:
    with (
        LiveServer(ServerSettings(token="s3cret", **hosting)) as live,
        httpx.Client(base_url=live.url, timeout=30) as http,
    ):
        assert http.get("/health").status_code == 200
        assert http.get("/openapi.json").json()["components"]["securitySchemes"]["bearer"]
        denied = http.post("/sessions", json={"env_id": "llmgym/Wordle-v0"})
        _error(denied, 401, "unauthorized")
        assert denied.headers["www-authenticate"] == "Bearer"
        wrong = {"Authorization": "Bearer nope"}
        _error(http.get("/environments", headers=wrong), 401, "unauthorized")
        good = {"Authorization": "Bearer s3cret"}
        created = http.post("/sessions", json={"env_id": "llmgym/Wordle-v0"}, headers=good)
        assert created.status_code == 201


def test_capacity_and_idle_expiry(hosting) -> None:
    ttl = 8.0 if hosting else 0.5  # longer than making two sessions takes
    settings = ServerSettings(max_sessions=2, ttl_s=ttl, **hosting)
    with LiveServer(settings) as live, httpx.Client(base_url=live.url, timeout=30) as http:
        first = _session(http)["session_id"]
        _session(http)
        full = http.post("/sessions", json={"env_id": "llmgym/Wordle-v0"})
        _error(full, 503, "at_capacity")
        assert full.headers["retry-after"]
        time.sleep(ttl + 0.2)
        expired = http.post(f"/sessions/{first}/step", json={"action": "crane"})
        message = _error(expired, 404, "session_expired")["message"]
        assert f"expired after {ttl:g} s idle" in message
        _session(http)  # idle sessions no longer count against the cap
        deadline = time.monotonic() + 2 * ttl + 5
        while live.app.state.store.sessions and time.monotonic() < deadline:
            time.sleep(0.1)  # the sweeper closes the rest without any request
        assert not live.app.state.store.sessions


def test_sessions_are_logged_with_their_ids(http, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="llmgym.serving.server"):
        session = _session(http)["session_id"]
        http.delete(f"/sessions/{session}")
    events = [(r.getMessage(), r.fields.get("session_id")) for r in caplog.records]
    assert ("session.created", session) in events and ("session.closed", session) in events
    line = JsonLogFormatter().format(caplog.records[-1])
    assert json.loads(line)["session_id"] == session


def test_openapi_spec_describes_the_api(http) -> None:
    spec = http.get("/openapi.json").json()
    step = spec["paths"]["/sessions/{session_id}/step"]["post"]
    assert step["requestBody"]["content"]["application/json"]["schema"]["required"] == ["action"]
    assert {"404", "409", "413", "422", "502", "504"} <= set(step["responses"])
    assert {"429", "503"} <= set(spec["paths"]["/sessions"]["post"]["responses"])
    call = spec["paths"]["/sessions/{session_id}/call"]["post"]["requestBody"]
    assert (
        "oracle_action"
        in call["content"]["application/json"]["schema"]["properties"]["name"]["enum"]
    )
    schemas = spec["components"]["schemas"]
    space = schemas["EnvDescription"]["properties"]["observation_space"]
    assert set(space["discriminator"]["mapping"]) == set(SERVABLE_SPACES)
    assert schemas["NDArray"]["required"] == ["__ndarray__", "dtype", "shape"]
    observation = schemas["StepReply"]["properties"]["observation"]["anyOf"]
    assert {"$ref": "#/components/schemas/NDArray"} in observation


def test_serve_command_rejects_bad_settings(capsys) -> None:
    assert main(["serve", "--max-sessions", "0"]) == 2
    assert "argument --max-sessions: expected an integer >= 1" in capsys.readouterr().err
    assert main(["serve", "--envs", "llmgym/Nope-v0"]) == 2
    assert "unknown environment" in capsys.readouterr().err


def test_concurrent_steps_on_one_session_are_applied_one_at_a_time(server) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as setup:
        created = setup.post("/sessions", json={"env_id": "llmgym/Maze-v0", "seed": 0})
        session = created.json()["session_id"]
    replies: list[int] = []

    def hammer() -> None:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            for _ in range(15):  # 60 invalid moves: within the maze's 100-move limit
                reply = http.post(f"/sessions/{session}/step", json={"action": "fly away"})
                replies.append(reply.json()["seq"])

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    status = httpx.get(f"{server.url}/sessions/{session}").json()
    assert status["steps"] == 60 and sorted(replies) == list(range(2, 62))


# ------------------------------------------------------------------------------ protocol edges
def test_deeply_nested_bodies_are_a_json_422(http) -> None:
    session = _session(http)["session_id"]
    raw = {"headers": {"content-type": "application/json"}}
    hostile = b'{"action": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"
    for path in (f"/sessions/{session}/step", "/sessions", f"/sessions/{session}/reset"):
        error = _error(http.post(path, content=hostile, **raw), 422, "invalid_request")
        assert "nested more than 32 deep" in error["message"]
    unclosed = b'{"action": ' + b"[" * 20_000
    _error(http.post(f"/sessions/{session}/step", content=unclosed, **raw), 422, "invalid_request")
    nested: object = "crane"
    for _ in range(30):  # within the limit: an action like any other
        nested = [nested]
    step = http.post(f"/sessions/{session}/step", json={"action": nested})
    assert step.status_code == 200 and step.json()["info"]["invalid_action"] is True


def test_deeply_nested_stream_messages_are_answered_and_the_stream_stays_open(server, http) -> None:
    from websockets.sync.client import connect

    session = _session(http, seed=0)["session_id"]  # a Ray actor may take seconds to start
    with connect(f"ws{server.url[4:]}/sessions/{session}/stream") as stream:
        stream.send('{"op": "step", "action": ' + "[" * 30_000 + "]" * 30_000 + "}")
        error = json.loads(stream.recv(timeout=30))
        assert error["status"] == 422 and "nested more than 32 deep" in error["message"]
        stream.send('{"op": "step", "action": "crane"}')
        assert json.loads(stream.recv(timeout=30))["info"]["invalid_action"] is False


def test_bodies_must_be_utf8_json_with_integer_seeds_and_seqs(http) -> None:
    session = _session(http)["session_id"]
    raw = {"headers": {"content-type": "application/json"}}
    utf16 = json.dumps({"action": "crane"}).encode("utf-16")
    _error(http.post(f"/sessions/{session}/step", content=utf16, **raw), 422, "invalid_request")
    for body in ({"seed": False}, {"seed": 1.0}, {"seq": 2.0}, {"seq": True}):
        error = _error(http.post(f"/sessions/{session}/reset", json=body), 422, "invalid_request")
        assert error["field"] in ("seed", "seq")
    _error(
        http.post("/sessions", json={"env_id": "llmgym/Wordle-v0", "seed": True}),
        422,
        "invalid_request",
    )
    bad_task = http.post("/sessions", json={"env_id": "llmgym/Wordle-v0", "task_id": ""})
    assert _error(bad_task, 422, "invalid_request")["field"] == "task_id"


def test_a_replayed_seq_must_repeat_the_same_request(http) -> None:
    session = _session(http, seed=0)["session_id"]  # seq 1: the first reset
    as_step = http.post(f"/sessions/{session}/step", json={"action": "crane", "seq": 1})
    assert "was a reset, not a step" in _error(as_step, 409, "out_of_sequence")["message"]
    first = http.post(f"/sessions/{session}/step", json={"action": "crane", "seq": 2})
    other = http.post(f"/sessions/{session}/step", json={"action": "slate", "seq": 2})
    assert "another step request" in _error(other, 409, "out_of_sequence")["message"]
    as_reset = http.post(f"/sessions/{session}/reset", json={"seq": 2})
    assert "was a step, not a reset" in _error(as_reset, 409, "out_of_sequence")["message"]
    retried = http.post(f"/sessions/{session}/step", json={"action": "crane", "seq": 2})
    assert retried.content == first.content
    assert http.get(f"/sessions/{session}").json()["steps"] == 1


def test_method_not_allowed_lists_every_method_of_the_path(http) -> None:
    refused = http.request("OPTIONS", "/sessions/abc")
    _error(refused, 405, "method_not_allowed")
    assert refused.headers["allow"] == "GET, DELETE"


# ------------------------------------------------------------------------------ server policy
def test_config_limits_cap_what_clients_may_ask_for(http) -> None:
    over = http.post(
        "/sessions", json={"env_id": "llmgym/SQL-v0", "config": {"time_limit_ms": 10_000}}
    )
    error = _error(over, 422, "invalid_config")
    assert error["field"] == "SQLConfig.time_limit_ms"
    assert error["message"] == (
        "10000 is over this server's limit; allowed here: at most 1000 (the server's operator "
        "sets it with --config-max llmgym/SQL-v0.time_limit_ms=N)"
    )
    as_knob = {"env_id": "llmgym/SQL-v0", "make_kwargs": {"time_limit_ms": 5000.0}}
    _error(http.post("/sessions", json=as_knob), 422, "invalid_config")
    session = _session(http, env_id="llmgym/SQL-v0", config={"time_limit_ms": 500})["session_id"]
    in_reset = {"options": {"config": {"time_limit_ms": 2000}}}
    _error(http.post(f"/sessions/{session}/reset", json=in_reset), 422, "invalid_config")
    lower = http.post(
        f"/sessions/{session}/reset", json={"options": {"config": {"time_limit_ms": 50}}}
    )
    assert lower.status_code == 200
    seed = {"env_id": "llmgym/WebShop-v0", "config": {"catalogue_seed": 7}}
    error = _error(http.post("/sessions", json=seed), 422, "invalid_config")
    assert (
        error["field"] == "WebShopConfig.catalogue_seed" and "allowed here: 0" in error["message"]
    )


@pytest.mark.skipif(not get_entry("llmgym/WebShop-v0").available, reason="needs [webshop]")
def test_config_limits_apply_to_remote_task_ids_calls(http) -> None:
    session = _session(http, env_id="llmgym/WebShop-v0")["session_id"]
    for body in (
        {"name": "task_ids", "args": ["eval", {"catalogue_size": 20_000}]},
        {"name": "task_ids", "kwargs": {"split": "eval", "config": {"catalogue_seed": 3}}},
    ):
        error = _error(http.post(f"/sessions/{session}/call", json=body), 422, "invalid_config")
        assert error["field"].startswith("WebShopConfig.catalogue_")
    same = {"name": "task_ids", "args": ["eval", {"catalogue_seed": 0}]}
    assert http.post(f"/sessions/{session}/call", json=same).status_code == 200


@pytest.mark.skipif(not get_entry("llmgym/TextWorld-v0").available, reason="needs [textworld]")
def test_file_paths_are_refused_without_revealing_whether_they_exist(tmp_path, hosting) -> None:
    allowed, outside = tmp_path / "games", tmp_path / "elsewhere"
    allowed.mkdir()
    outside.mkdir()
    (outside / "real.z5").write_bytes(b"\0" * 64)

    def refusal(http: httpx.Client, path: str) -> dict:
        body = {"env_id": "llmgym/TextWorld-v0", "config": {"game_file": path}}
        error = _error(http.post("/sessions", json=body), 422, "invalid_config")
        assert error["field"] == "TextWorldConfig.game_file"
        return error

    paths = [str(outside / "real.z5"), str(outside / "missing.z5"), "../elsewhere/real.z5"]
    with (
        LiveServer(ServerSettings(**hosting)) as live,
        httpx.Client(base_url=live.url, timeout=60) as http,
    ):
        answers = {refusal(http, path)["message"] for path in [*paths, "/etc/hostname"]}
        assert answers == {
            "this server does not take file paths from clients (its operator can allow a "
            "directory with --allow-files DIR)"
        }
        knob = {"env_id": "llmgym/TextWorld-v0", "make_kwargs": {"game_file": paths[0]}}
        _error(http.post("/sessions", json=knob), 422, "invalid_config")
    with (
        LiveServer(ServerSettings(file_dir=str(allowed), **hosting)) as live,
        httpx.Client(base_url=live.url, timeout=60) as http,
    ):
        answers = {refusal(http, path)["message"] for path in paths}
        assert len(answers) == 1 and "inside the directory this server allows" in answers.pop()


def test_sessions_per_client_are_capped(hosting) -> None:
    settings = ServerSettings(max_sessions_per_client=2, **hosting)
    with LiveServer(settings) as live, httpx.Client(base_url=live.url, timeout=30) as http:
        first = _session(http, reset=False)["session_id"]
        _session(http, reset=False)
        refused = http.post("/sessions", json={"env_id": "llmgym/Wordle-v0"})
        assert "--max-sessions-per-client 2" in _error(refused, 429, "quota_exceeded")["message"]
        assert refused.headers["retry-after"]
        http.delete(f"/sessions/{first}")
        _session(http, reset=False)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--config-max", "llmgym/SQL-v0.time_limit_ms=99999"], "above what the environment"),
        (["--config-max", "llmgym/SQL-v0.colour=3"], "has no field 'colour'"),
        (["--config-max", "llmgym/SQL-v0.time_limit_ms"], "expected ENV_ID.FIELD=VALUE"),
        (["--config-values", "llmgym/Nope-v0.x=1"], "unknown environment"),
        (["--allow-files", "/no/such/dir"], "is not a directory"),
        (["--step-timeout", "0"], "argument --step-timeout: expected a number > 0"),
        (["--max-sessions-per-client", "0"], "--max-sessions-per-client: expected an integer >= 1"),
    ],
)
def test_serve_command_rejects_bad_limits(capsys, flags, message) -> None:
    assert main(["serve", *flags]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("config", [{"source": "bird"}, {"data_dir": "/etc"}])
def test_clients_cannot_choose_original_data_or_its_directory(http, config) -> None:
    body = {"env_id": "llmgym/SQL-v0", "config": config}
    error = _error(http.post("/sessions", json=body), 422, "invalid_config")
    assert error["field"] == f"SQLConfig.{next(iter(config))}"
    assert "set by this server's operator (llmgym serve --data" in error["message"]
    session = _session(http, env_id="llmgym/SQL-v0", seed=0)["session_id"]
    reset = http.post(f"/sessions/{session}/reset", json={"options": {"config": config}})
    assert _error(reset, 422, "invalid_config")["field"] == f"SQLConfig.{next(iter(config))}"


def test_a_client_may_repeat_the_dataset_it_is_shown(http) -> None:
    shown = {"source": "generated", "data_dir": ""}
    created = _session(http, env_id="llmgym/SQL-v0", seed=0, config=shown)
    assert created["observation"]


def test_a_session_the_ray_cluster_has_no_room_for_is_refused_at_once(hosting) -> None:
    if not hosting:
        pytest.skip("Ray hosting only")
    settings = ServerSettings(ray_cpus=3, **hosting)  # the local Ray instance has 2 CPUs
    with LiveServer(settings) as live, httpx.Client(base_url=live.url, timeout=60) as http:
        refused = http.post("/sessions", json={"env_id": "llmgym/Wordle-v0"})
        message = _error(refused, 503, "at_capacity")["message"]
        assert "the Ray cluster has no room for a session of llmgym/Wordle-v0" in message
        assert refused.headers["retry-after"]
        assert http.get("/health").json()["sessions"] == 0
