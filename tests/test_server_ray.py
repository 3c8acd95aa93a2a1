"""``llmgym serve --ray`` on a Ray cluster of two nodes that the test starts on 127.0.0.1 (a head
and a worker, ``ray start``): sessions spread over both nodes, and when the worker node dies
mid-run only its sessions end, with ``session_lost``, while the head's play on; two server
workers share one cluster (slow)."""

from __future__ import annotations

import tempfile
import time

import httpx
import pytest

from tests.extras import need

need("fastapi")
need("uvicorn")
need("ray")

from llmgym.serving.server import ServerSettings
from tests.servers import LiveServer, RayCluster, ServeProcess

pytestmark = pytest.mark.slow

WORDLE = "llmgym/Wordle-v0"


@pytest.fixture
def cluster():
    # Ray's sockets live under its temp dir, whose path must stay short (a socket's path is
    # limited to 107 bytes): not under pytest's tmp_path
    with tempfile.TemporaryDirectory(prefix="ray", dir="/tmp") as temp_dir:
        cluster = RayCluster(temp_dir)
        try:
            cluster.add_node()
            yield cluster
        finally:
            cluster.stop()


def _step(http: httpx.Client, session: str, action: str = "crane") -> httpx.Response:
    return http.post(f"/sessions/{session}/step", json={"action": action})


def test_a_dead_node_ends_only_its_sessions(cluster) -> None:
    worker = cluster.add_node()
    settings = ServerSettings(envs=(WORDLE,), ray=cluster.address)
    with LiveServer(settings) as live, httpx.Client(base_url=live.url, timeout=120) as http:
        health = http.get("/health").json()
        assert health["ray"]["nodes"] == 2 and health["ray"]["cpus"] == 2
        sessions = []
        for seed in range(6):
            created = http.post("/sessions", json={"env_id": WORDLE, "seed": seed})
            assert created.status_code == 201, created.text[:300]
            sessions.append(created.json()["session_id"])
        store = live.app.state.store
        node_of = {s: store.sessions[s].host.node_id for s in sessions}
        assert len(set(node_of.values())) == 2, "the sessions were not spread over both nodes"
        for session in sessions:
            assert _step(http, session).status_code == 200
        cluster.kill(worker)
        lost = set()
        for session in sessions:
            reply = _step(http, session, "slate")
            if reply.status_code != 200:
                assert reply.status_code == 502, reply.text[:300]
                assert reply.json()["error"] == "session_lost"
                lost.add(session)
        assert lost and len(set(node_of[s] for s in lost)) == 1
        survivors = [s for s in sessions if s not in lost]
        assert survivors and not {node_of[s] for s in survivors} & {node_of[s] for s in lost}
        for session in survivors:  # they play on to the end of an episode
            oracle = {"name": "oracle_action"}
            for _ in range(6):
                action = http.post(f"/sessions/{session}/call", json=oracle).json()["result"]
                step = _step(http, session, action).json()
                if step["terminated"] or step["truncated"]:
                    break
            assert step["terminated"] and step["info"]["success"]
        for session in lost:
            gone = _step(http, session)
            assert gone.status_code == 404 and "Ray actor died" in gone.json()["message"]
        for seed in range(4):  # before Ray marks the node dead too: an actor placed there is
            created = http.post("/sessions", json={"env_id": WORDLE, "seed": seed})
            assert created.status_code == 201, created.text[:300]  # replaced by another
        deadline = time.monotonic() + 90  # Ray's health checks mark the node dead
        while http.get("/health").json()["ray"]["nodes"] == 2 and time.monotonic() < deadline:
            time.sleep(1.0)
        created = http.post("/sessions", json={"env_id": WORDLE, "seed": 9})
        assert created.status_code == 201  # new sessions go to the node that lives
        assert http.get("/health").json()["sessions"] == len(survivors) + 5


def test_two_workers_share_one_cluster(cluster) -> None:
    args = ("--envs", "wordle", "--workers", "2", "--ray", cluster.address)
    with ServeProcess(*args) as server:
        health = httpx.get(f"{server.url}/health", timeout=60).json()
        assert health["workers"] == 2 and health["ray"]["nodes"] == 1
        for seed in range(6):  # a new connection each: either worker makes it
            body = {"env_id": WORDLE, "seed": seed}
            created = httpx.post(f"{server.url}/sessions", json=body, timeout=120)
            assert created.status_code == 201, created.text[:300]
            session = created.json()["session_id"]
            for seq in (2, 3):
                step = {"action": "crane", "seq": seq}
                reply = httpx.post(f"{server.url}/sessions/{session}/step", json=step, timeout=60)
                assert reply.status_code == 200 and reply.json()["seq"] == seq
        assert httpx.get(f"{server.url}/health", timeout=60).json()["sessions"] == 6
