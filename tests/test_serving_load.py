"""Load and fault tests of ``llmgym serve`` as a real subprocess on 127.0.0.1 (slow).

* 64 concurrent clients x 500 steps: every session's trajectory equals a local replay of the
  same seeds and actions, so no session was mixed up with another or lost.
* The server restarted while clients step: each client gets a clear error, none hangs.
* Connections cut at random moments (mid-message, by FIN or reset) between clients and server:
  each client goes on with the same trajectory or gets a clear error, never a transport's own.

Every loop is bounded in count and in time.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import struct
import threading
import time

import gymnasium as gym
import httpx
import numpy as np
import pytest

from tests.extras import need

need("fastapi")
need("uvicorn")

from llmgym.errors import RemoteEnvError, ServerUnavailableError, SessionLostError
from llmgym.serving.client import RemoteEnv
from llmgym.testing import HOSTILE_ACTIONS
from tests.servers import ServeProcess

pytestmark = pytest.mark.slow

CLIENTS = 64
STEPS = 500
DEADLINE_S = 900.0
ENV_IDS = ("llmgym/Wordle-v0", "llmgym/Maze-v0")


def _normal(info: dict) -> str:
    return json.dumps(info, sort_keys=True, default=repr)


class Client:
    """One session's episodes: ``[(seed, [(action, observation, reward, te, tr, info)])]``."""

    def __init__(self, url: str, index: int, words: list[str]) -> None:
        self.url = url
        self.index = index
        self.env_id = ENV_IDS[index % len(ENV_IDS)]
        self.words = words
        self.episodes: list[tuple[int, list[tuple]]] = []
        self.error: BaseException | None = None

    def _action(self, rng: np.random.Generator, info: dict, step: int) -> str:
        if rng.random() < 0.1:
            return HOSTILE_ACTIONS[step % len(HOSTILE_ACTIONS)]
        choices = info.get("admissible_actions") or self.words
        return str(choices[int(rng.integers(len(choices)))])

    def run(self, deadline: float) -> None:
        try:
            rng = np.random.default_rng(self.index)
            env = RemoteEnv(self.url, self.env_id, timeout=120)
            steps, episode = 0, 0
            while steps < STEPS and time.monotonic() < deadline:
                seed = 1000 * self.index + episode
                observation, info = env.reset(seed=seed)
                record = [("", observation, 0.0, False, False, _normal(info))]
                self.episodes.append((seed, record))
                done = False
                while not done and steps < STEPS and time.monotonic() < deadline:
                    action = self._action(rng, info, steps)
                    observation, reward, terminated, truncated, info = env.step(action)
                    record.append(
                        (action, observation, reward, terminated, truncated, _normal(info))
                    )
                    done = terminated or truncated
                    steps += 1
                episode += 1
            env.close()
            if steps < STEPS:
                raise TimeoutError(f"client {self.index} made only {steps} steps in time")
        except BaseException as error:
            self.error = error


def _replay(env_id: str, seed: int, record: list[tuple]) -> list[tuple]:
    env = gym.make(env_id)
    observation, info = env.reset(seed=seed)
    replayed = [("", observation, 0.0, False, False, _normal(info))]
    for action, *_ in record[1:]:
        observation, reward, terminated, truncated, info = env.step(action)
        replayed.append((action, observation, reward, terminated, truncated, _normal(info)))
    return replayed


def test_64_clients_500_steps_each_match_local_replays() -> None:
    words_env = gym.make("llmgym/Wordle-v0")
    words_env.reset(seed=0)
    words = [words_env.unwrapped.sample_action(np.random.default_rng(i)) for i in range(200)]
    with ServeProcess("--envs", *ENV_IDS, "--max-sessions", str(2 * CLIENTS)) as server:
        clients = [Client(server.url, i, words) for i in range(CLIENTS)]
        deadline = time.monotonic() + DEADLINE_S
        threads = [threading.Thread(target=c.run, args=(deadline,)) for c in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=max(1.0, deadline - time.monotonic() + 60))
        assert not any(thread.is_alive() for thread in threads), "a client hung"
        failures = [f"client {c.index}: {c.error!r}" for c in clients if c.error is not None]
        assert not failures, "\n".join(failures[:5])
        health = httpx.get(f"{server.url}/health", timeout=30).json()
        assert health["sessions"] == 0, "sessions were left open"
        assert health["steps"] == CLIENTS * STEPS
    steps = 0
    for client in clients:
        for seed, record in client.episodes:
            steps += len(record) - 1
            assert _replay(client.env_id, seed, record) == record, (
                f"client {client.index} ({client.env_id}) episode seed={seed} differs locally"
            )
    assert steps == CLIENTS * STEPS


def test_restart_mid_run_gives_every_client_a_clear_error() -> None:
    server = ServeProcess("--envs", "llmgym/Wordle-v0").start()
    outcomes: dict[int, BaseException | None] = {}
    stepping = threading.Barrier(9)

    def client(index: int) -> None:
        env = RemoteEnv(server.url, "llmgym/Wordle-v0", timeout=20, retries=3, backoff=0.2)
        env.reset(seed=index)
        stepping.wait(timeout=120)
        try:
            for _ in range(100_000):
                *_, terminated, truncated, _ = env.step("crane")
                if terminated or truncated:
                    env.reset()
            outcomes[index] = None
        except BaseException as error:
            outcomes[index] = error

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    try:
        for thread in threads:
            thread.start()
        stepping.wait(timeout=120)
        time.sleep(0.5)
        server.stop()
        server = ServeProcess("--envs", "llmgym/Wordle-v0", port=server.port).start()
        start = time.monotonic()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads), "a client hung"
        assert time.monotonic() - start < 120
    finally:
        server.stop()
    assert len(outcomes) == 8
    for error in outcomes.values():
        assert isinstance(error, (SessionLostError, ServerUnavailableError)), repr(error)
        assert isinstance(error, RemoteEnvError)
        if isinstance(error, SessionLostError):
            assert "restarted" in str(error)


class ChaosProxy:
    """A TCP proxy on 127.0.0.1 in front of ``upstream`` that cuts every connection after a
    random number of bytes up to ``most_bytes`` (both directions together; often mid-message),
    half the time with a reset instead of a clean close. A connection that creates a session
    (which the client does not retry) first gets the bytes of that exchange."""

    def __init__(self, upstream_port: int, seed: int, most_bytes: int) -> None:
        self.upstream_port = upstream_port
        self.rng = random.Random(seed)
        self.most_bytes = most_bytes
        self.cuts = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            first = client.recv(65536)
            upstream.sendall(first)
            with self._lock:
                budget = [self.rng.randint(1, self.most_bytes)]
                reset = self.rng.random() < 0.5
            if first.startswith(b"POST /sessions "):
                budget[0] += 30_000
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(
                    target=self._pump, args=(source, target, budget, reset, client), daemon=True
                ).start()

    def _pump(self, source, target, budget: list[int], reset: bool, client) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                with self._lock:
                    allowed = min(len(chunk), budget[0])
                    budget[0] -= allowed
                target.sendall(chunk[:allowed])
                if budget[0] <= 0:
                    with self._lock:
                        self.cuts += 1
                    if reset:  # close with an RST rather than a FIN
                        client.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                    break
        for sock in (source, target):  # shutdown wakes the other direction's blocked recv
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RD if reset and sock is client else socket.SHUT_RDWR)
            sock.close()


def test_connections_cut_at_random_moments_give_the_same_trajectories_or_clear_errors() -> None:
    steps_per_client = 100
    with ServeProcess("--envs", "llmgym/Wordle-v0") as server:
        proxy = ChaosProxy(server.port, seed=7, most_bytes=8_000)  # a step's reply: < 1 KB
        records: dict[int, list] = {}
        outcomes: dict[int, BaseException | None] = {}

        def client(index: int) -> None:
            record: list = []
            records[index] = record
            try:
                env = RemoteEnv(
                    proxy.url,
                    "llmgym/Wordle-v0",
                    transport=("websocket", "http")[index % 2],
                    timeout=20,
                    retries=6,
                    backoff=0.01,
                )
                seed = index
                record.append(("reset", seed, env.reset(seed=seed)[0]))
                for turn in range(steps_per_client):
                    step = env.step(("crane", "slate", "pride", "xyz")[turn % 4])
                    record.append(("step", step[0], step[1], step[2], step[3]))
                    if step[2] or step[3]:
                        seed += 100
                        record.append(("reset", seed, env.reset(seed=seed)[0]))
                env.close()
                outcomes[index] = None
            except BaseException as error:
                outcomes[index] = error

        threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=180)
        proxy.close()
        assert not any(thread.is_alive() for thread in threads), "a client hung"
    assert proxy.cuts > 40, "the proxy cut too few connections to test anything"
    for index, error in outcomes.items():
        assert error is None or isinstance(error, (SessionLostError, ServerUnavailableError)), (
            f"client {index}: {error!r}"
        )
    assert sum(error is None for error in outcomes.values()) >= 4, outcomes
    for index, record in records.items():  # every answer the client got is the local one
        local = gym.make("llmgym/Wordle-v0")
        for entry in record:
            if entry[0] == "reset":
                assert local.reset(seed=entry[1])[0] == entry[2], f"client {index}"
            else:
                turn = sum(1 for e in record[: record.index(entry)] if e[0] == "step")
                step = local.step(("crane", "slate", "pride", "xyz")[turn % 4])
                assert tuple(step[:4]) == entry[1:], f"client {index}"
