"""``llmgym serve --workers 2``: two server processes on one port. Sessions made on either
worker play over HTTP (each request on a new connection, so half of them reach the other
worker and are forwarded) and over WebSocket from many clients at once, with the trajectories
of local runs; AgentGym's handles route too; ``/health`` sums the workers; MCP and OpenEnv,
whose session ids the MCP SDK makes, are refused."""

from __future__ import annotations

import json
import threading
from typing import Any

import gymnasium as gym
import httpx
import pytest

from tests.extras import need

need("fastapi")
need("uvicorn")

from llmgym.cli import main
from llmgym.serving.client import RemoteEnv
from tests.servers import ServeProcess
from tests.test_agentgym import play_oracle

WORDLE = "llmgym/Wordle-v0"


@pytest.fixture(scope="module")
def server():
    args = ("--envs", "wordle", "maze", "--workers", "2", "--max-sessions", "40")
    with ServeProcess(*args) as served:
        yield served


def _oracle_episode(env: Any, seed: int) -> list[tuple]:
    """An episode by the oracle: every step's (observation, reward, terminated, truncated)."""
    observation, _ = env.reset(seed=seed)
    steps = [(observation,)]
    while True:
        observation, reward, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
        steps.append((observation, reward, terminated, truncated))
        if terminated or truncated:
            return steps


def test_health_sums_the_workers(server) -> None:
    health = httpx.get(f"{server.url}/health", timeout=60).json()
    assert health["workers"] == 2 and health["max_sessions"] == 40
    assert health["free_slots"] == 40 - health["sessions"]


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_many_clients_play_local_trajectories(server, transport) -> None:
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def play(seed: int) -> None:
        try:
            with RemoteEnv(server.url, WORDLE, transport=transport) as env:
                results[seed] = _oracle_episode(env, seed)
        except BaseException as error:  # reported by the test's thread
            errors.append(error)

    threads = [threading.Thread(target=play, args=(seed,)) for seed in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors[0]
    for seed, played in results.items():
        assert played == _oracle_episode(gym.make(WORDLE), seed)
    assert len(results) == 12


def test_http_requests_reach_the_session_from_either_worker(server) -> None:
    created = [
        httpx.post(
            f"{server.url}/sessions", json={"env_id": WORDLE, "seed": seed}, timeout=60
        ).json()
        for seed in range(16)
    ]
    assert {c["session_id"].rsplit(".", 1)[1] for c in created} == {"0", "1"}
    assert len({c["instance_id"] for c in created}) == 1
    for c in created:  # a new connection per request: the kernel picks the worker
        session = c["session_id"]
        for seq in range(2, 6):
            reply = httpx.post(
                f"{server.url}/sessions/{session}/step",
                json={"action": "crane", "seq": seq},
                timeout=60,
            )
            assert reply.status_code == 200 and reply.json()["seq"] == seq, reply.text[:300]
        status = httpx.get(f"{server.url}/sessions/{session}", timeout=60).json()
        assert status["steps"] == 4 and status["seq"] == 5
    assert httpx.get(f"{server.url}/health", timeout=60).json()["sessions"] >= 16
    for c in created:
        assert (
            httpx.delete(f"{server.url}/sessions/{c['session_id']}", timeout=60).status_code == 204
        )
        step = f"{server.url}/sessions/{c['session_id']}/step"
        gone = httpx.post(step, json={"action": "x"}, timeout=60)
        assert gone.status_code == 404 and gone.json()["error"] == "session_not_found"


class _NewConnectionEachTime:
    """An HTTP client that opens a new connection for every request."""

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return httpx.post(url, timeout=60, **kwargs)

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return httpx.get(url, timeout=60, **kwargs)

    def close(self) -> None:
        pass


def test_agentgym_handles_reach_their_worker(server, monkeypatch) -> None:
    monkeypatch.setattr(httpx, "Client", lambda **_: _NewConnectionEachTime())
    for index in range(4):
        reward, done, _ = play_oracle(f"{server.url}/agentgym/maze", "maze", index)
        assert done and reward == 1.0


@pytest.mark.parametrize("protocol", ["mcp", "openenv"])
def test_protocols_of_one_worker_are_refused(capsys, protocol) -> None:
    assert main(["serve", "--workers", "2", "--protocol", "llmgym", protocol]) == 2
    assert f"{protocol} sessions cannot be routed between workers" in capsys.readouterr().err


def test_a_stream_to_the_wrong_worker_is_relayed_or_refused_with_421_if_asked(server) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    body = {"env_id": WORDLE, "seed": 1}
    session = httpx.post(f"{server.url}/sessions", json=body, timeout=60).json()
    url = f"ws{server.url[4:]}/sessions/{session['session_id']}/stream"
    outcomes = set()
    for _ in range(24):  # a new connection each time: the kernel picks the worker
        try:
            with connect(url, additional_headers={"X-Llmgym-Direct": "1"}) as stream:
                stream.send('{"op": "call", "name": "rules"}')
                assert b"result" in stream.recv(timeout=30)
                outcomes.add("direct")
        except InvalidStatus as error:
            assert error.response.status_code == 421
            outcomes.add("misdirected")
        with connect(url) as stream:  # without asking: relayed when need be
            stream.send('{"op": "step", "action": "crane"}')
            assert json.loads(stream.recv(timeout=30))["info"]["invalid_action"] is False
            stream.send('{"op": "reset"}')
            stream.recv(timeout=30)
    assert outcomes == {"direct", "misdirected"}
