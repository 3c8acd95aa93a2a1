"""RemoteEnv against a real server on 127.0.0.1: the same trajectories as the local environment
(every registered one), the same exceptions, rollouts and the oracle through it, and clear,
bounded failures when the server restarts, stops, hangs or is full. Against a hostile server
(:class:`HostileServer`), every misbehaviour is an llmgym error: oversized replies, replies that
are not the protocol, absurd spaces, streams closed together with a reply."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
import tracemalloc

import gymnasium as gym
import httpx
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

from tests.extras import need

need("fastapi")
need("uvicorn")

from llmgym import ConfigError
from llmgym.agents import OracleAgent
from llmgym.cli import main
from llmgym.core.env import text_space, unwrapped_text_env
from llmgym.errors import (
    AuthenticationError,
    ChatError,
    EpisodeEndedError,
    RemoteEnvError,
    ServerBusyError,
    ServerUnavailableError,
    SessionLostError,
)
from llmgym.runner.evaluation import evaluate
from llmgym.runner.rollout import play_episode, rollout
from llmgym.serving.client import RemoteEnv, remote_env_factory
from llmgym.serving.protocol import PROTOCOL_VERSION, dumps, space_to_dict
from llmgym.serving.server import ServerSettings
from llmgym.testing import HOSTILE_ACTIONS
from llmgym.wrappers import ChatHistory, InstructionSampler, OracleHint, ReActWrapper
from tests.environments import environment_params
from tests.servers import LiveServer
from tests.test_conformance import SLOW_IDS


@pytest.fixture(scope="module")
def server():
    with LiveServer() as live:
        yield live


def _exact(value: object) -> object:
    if isinstance(value, np.ndarray):  # dtype, shape and every byte
        return {"dtype": value.dtype.str, "shape": value.shape, "bytes": value.tobytes().hex()}
    return repr(value)


def _normal(value: object) -> str:
    """``value`` (an observation or an info dict) as a string that differs when any part does,
    numpy arrays included; JSON's own changes (tuples to lists) do not count."""
    return json.dumps(value, sort_keys=True, default=_exact)


def _play_locally(env: gym.Env, seed: int, options: dict, steps: int) -> tuple[list, list]:
    """A mixed policy (oracle, random valid, hostile); returns the actions and the record."""
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=seed, options=options)
    record, actions = [(_normal(observation), _normal(info))], []
    for turn in range(steps):
        roll = rng.random()
        if roll < 0.5:
            action = env.unwrapped.oracle_action()
        elif roll < 0.8:
            action = env.unwrapped.sample_action(rng)
        else:
            action = HOSTILE_ACTIONS[turn % len(HOSTILE_ACTIONS)]
        actions.append(action)
        observation, reward, terminated, truncated, info = env.step(action)
        record.append((_normal(observation), reward, terminated, truncated, _normal(info)))
        if terminated or truncated:
            break
    return actions, record


@pytest.mark.parametrize("env_id", environment_params(SLOW_IDS))
def test_remote_trajectories_equal_local_ones(server, env_id: str) -> None:
    local = gym.make(env_id)
    remote = gym.make("llmgym/Remote-v0", url=server.url, env_id=env_id)
    assert remote.observation_space == local.observation_space
    assert remote.action_space == local.action_space
    assert remote.unwrapped.task_ids("eval")[:5] == list(local.unwrapped.task_ids("eval")[:5])
    assert len(remote.unwrapped.task_ids("train")) == len(local.unwrapped.task_ids("train"))
    assert remote.unwrapped.example == local.unwrapped.example
    cases = [(0, {"split": "train"}), (1, {"task_id": local.unwrapped.task_ids("eval")[3]})]
    for seed, options in cases:
        actions, expected = _play_locally(local, seed, options, steps=40)
        observation, info = remote.reset(seed=seed, options=options)
        played = [(_normal(observation), _normal(info))]
        assert remote.unwrapped.rules() == local.unwrapped.rules()
        assert remote.unwrapped.task.config.to_dict() == local.unwrapped.task.config.to_dict()
        for action in actions:
            observation, reward, terminated, truncated, info = remote.step(action)
            played.append((_normal(observation), reward, terminated, truncated, _normal(info)))
        assert played == expected, f"{env_id} {options}: the remote trajectory differs"
    remote.close()


def test_gymnasium_env_checker_accepts_remote_env(server) -> None:
    env = RemoteEnv(server.url, "llmgym/Maze-v0", width=6, height=6)
    check_env(env, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("transport", ["http", "websocket"])
def test_pixel_env_frames_and_actions_are_those_of_the_local_env(server, transport: str) -> None:
    local = gym.make("llmgym/HeistPixels-v0", render_mode="rgb_array")
    remote = RemoteEnv(
        server.url, "llmgym/HeistPixels-v0", render_mode="rgb_array", transport=transport
    )
    assert remote.metadata["render_modes"] == ["rgb_array"]
    actions = [
        remote.action_space.sample(),  # a numpy integer, as RL agents send them
        np.int32(3),
        7,
        -1,
        2.5,
        np.array([1]),
        np.array(2),
        "move down",
    ]
    for seed in (0, 1):
        expected = [_normal(local.reset(seed=seed)[0])]
        frame, _ = remote.reset(seed=seed)
        played = [_normal(frame)]
        for action in actions:
            expected.append(_normal(local.step(action)))
            step = remote.step(action)
            played.append(_normal(step))
            assert step[0].dtype == np.uint8 and step[0].flags.writeable
            assert remote.observation_space.contains(step[0])
        assert played == expected
        assert np.array_equal(remote.render(), local.render())
    remote.close()


def test_gymnasium_env_checker_accepts_a_remote_pixel_env(server) -> None:
    env = RemoteEnv(server.url, "llmgym/HeistPixels-v0")
    check_env(env, skip_render_check=True)
    env.close()


def test_render_modes_follow_the_served_observations(server) -> None:
    before = len(server.app.state.store.sessions)
    with pytest.raises(ValueError, match="allowed: rgb_array"):
        RemoteEnv(server.url, "llmgym/HeistPixels-v0", render_mode="ansi")
    with pytest.raises(ValueError, match="allowed: ansi, human"):
        RemoteEnv(server.url, "llmgym/Wordle-v0", render_mode="rgb_array")
    assert len(server.app.state.store.sessions) == before  # the refused sessions were closed


def test_oracle_agent_and_evaluate_through_remote(server) -> None:
    make = remote_env_factory(server.url, "llmgym/TextCraft-v0")
    through_server = rollout(make, OracleAgent(), episodes=4, concurrency=2, progress=False)
    local = rollout("llmgym/TextCraft-v0", OracleAgent(), episodes=4, progress=False)

    def summary(trajectories):
        return [
            (t.env_id, t.task_id, t.success, [turn.reply for turn in t.turns]) for t in trajectories
        ]

    assert summary(through_server) == summary(local)
    assert all(t.success for t in through_server)
    assert through_server[0].config == local[0].config
    result = evaluate(make, OracleAgent(), episodes=2, progress=False)
    assert result.env_id == "llmgym/TextCraft-v0" and result.success_rate == 1.0


def test_wrappers_read_the_served_environment_as_a_local_one(server) -> None:
    """The wrappers' typed access (``unwrapped_text_env``) accepts a remote proxy: hints, task
    draws, prompts and messages are those of the local stack."""

    def stack(env: gym.Env) -> gym.Env:
        sampler = InstructionSampler(OracleHint(env), split="eval", seed=5)
        return ChatHistory(ReActWrapper(sampler))

    remote_env = RemoteEnv(server.url, "llmgym/Maze-v0")
    assert unwrapped_text_env(remote_env, "test") is remote_env
    records = []
    for env in (stack(gym.make("llmgym/Maze-v0")), stack(remote_env)):
        record = []
        observation, info = env.reset(seed=1)
        for _ in range(3):
            record.append((observation, info["messages"], info["oracle_action"]))
            reply = f"Thought: follow the hint\nAction: {info['oracle_action']}"
            observation, _, terminated, truncated, info = env.step(reply)
            if terminated or truncated:
                break
        records.append(record)
        env.close()
    assert records[0] == records[1]


def test_exceptions_match_the_local_environment(server) -> None:
    with pytest.raises(ConfigError) as caught:
        RemoteEnv(server.url, "llmgym/Maze-v0", width=1000)
    assert caught.value.field == "MazeConfig.width" and "[2, 30]" in str(caught.value)
    env = RemoteEnv(server.url, "llmgym/Wordle-v0", render_mode="ansi")
    with pytest.raises(ResetNeeded):
        env.task  # noqa: B018
    with pytest.raises(ResetNeeded):
        env.step("crane")
    with pytest.raises(ConfigError, match="word_length"):
        env.reset(options={"config": {"word_length": 9}})
    with pytest.raises(ValueError, match="unknown key 'colour'"):
        env.reset(options={"colour": "red"})
    observation, _ = env.reset(seed=0)
    assert env.render() == observation
    for _ in range(6):
        *_, terminated, _, info = env.step(env.oracle_action())
        if terminated:
            break
    assert info["success"]
    with pytest.raises(EpisodeEndedError) as ended:
        env.step("crane")
    assert isinstance(ended.value, ResetNeeded)
    env.close()
    env.close()


def test_non_text_actions_are_invalid_as_locally(server) -> None:
    env = RemoteEnv(server.url, "llmgym/Wordle-v0")
    env.reset(seed=0)
    for action in (None, 42, b"bytes", ["move", "up"], {"action": "x"}, object()):
        observation, _, terminated, _, info = env.step(action)
        assert info["invalid_action"] and not terminated and observation
    env.close()


def test_closed_sessions_are_freed(server) -> None:
    before = len(server.app.state.store.sessions)
    envs = [RemoteEnv(server.url, "llmgym/Wordle-v0") for _ in range(3)]
    assert len(server.app.state.store.sessions) == before + 3
    for env in envs:
        env.close()
    assert len(server.app.state.store.sessions) == before


def test_server_restart_is_a_clear_error() -> None:
    with LiveServer() as live:
        env = RemoteEnv(live.url, "llmgym/Wordle-v0", backoff=0.05)
        env.reset(seed=0)
        env.step("crane")
        live.restart()
        start = time.monotonic()
        with pytest.raises(SessionLostError, match="restarted"):
            env.step("crane")
        assert time.monotonic() - start < 10


def test_stopped_server_is_a_clear_error_after_retries() -> None:
    with LiveServer() as live:
        env = RemoteEnv(live.url, "llmgym/Wordle-v0", retries=2, backoff=0.05)
        env.reset(seed=0)
    start = time.monotonic()
    with pytest.raises(ServerUnavailableError, match="after 3 attempt"):
        env.step("crane")
    assert time.monotonic() - start < 10


def test_a_server_gone_mid_episode_stops_the_run_as_a_gone_model_server_does() -> None:
    """One ``ServerUnavailableError`` for both servers a run depends on: an episode whose
    environment server stopped answering is not recorded as failed (with every later one after
    it); the error propagates, and it is the class a gone model server raises."""
    with LiveServer() as live:
        env = RemoteEnv(live.url, "llmgym/Wordle-v0", retries=1, backoff=0.05)

        class StopsTheServer(OracleAgent):
            def act(self, observation: str, info: dict) -> str:
                live.stop()
                return super().act(observation, info)

        with pytest.raises(ServerUnavailableError, match="after 2 attempt") as gone:
            play_episode(env, StopsTheServer(), task_id="eval/00000", seed=0)
    assert isinstance(gone.value, ChatError) and isinstance(gone.value, RemoteEnvError)


def test_hung_server_times_out() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # accepts connections, never answers
    port = listener.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(ServerUnavailableError, match="did not answer"):
        RemoteEnv(f"http://127.0.0.1:{port}", "llmgym/Wordle-v0", timeout=0.5)
    assert time.monotonic() - start < 10
    listener.close()


def test_expired_full_and_unauthorized(monkeypatch) -> None:
    settings = ServerSettings(max_sessions=1, ttl_s=0.4, token="tok")
    with LiveServer(settings) as live:
        with pytest.raises(AuthenticationError):
            RemoteEnv(live.url, "llmgym/Wordle-v0")
        monkeypatch.setenv("LLMGYM_SERVER_TOKEN", "tok")
        env = RemoteEnv(live.url, "llmgym/Wordle-v0")
        env.reset(seed=0)
        with pytest.raises(ServerBusyError, match="capacity"):
            RemoteEnv(live.url, "llmgym/Wordle-v0")
        time.sleep(0.6)
        with pytest.raises(SessionLostError, match="expired"):
            env.step("crane")


def test_concurrent_calls_on_one_session_are_serialised(server) -> None:
    env = RemoteEnv(server.url, "llmgym/Maze-v0")
    env.reset(seed=0)
    errors: list[Exception] = []

    def oracle_calls() -> None:
        try:
            for _ in range(20):
                env.unwrapped.oracle_action()
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=oracle_calls) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    env.close()


def test_eval_command_with_remote(server, tmp_path, capsys) -> None:
    out = tmp_path / "results.json"
    code = main(
        [
            *("eval", "llmgym/Maze-v0", "--remote", server.url),
            *("--episodes", "2", "--quiet", "--json", str(out)),
        ]
    )
    assert code == 0, capsys.readouterr().err
    row = json.loads(out.read_text())["results"][0]
    assert row["env_id"] == "llmgym/Maze-v0" and row["success_rate"] == 1.0


@pytest.mark.parametrize("transport", ["http", "websocket"])
def test_both_transports_give_the_local_trajectory(server, transport: str) -> None:
    local = gym.make("llmgym/TextCraft-v0")
    remote = RemoteEnv(server.url, "llmgym/TextCraft-v0", transport=transport)
    assert remote.transport == transport
    options = {"task_id": local.unwrapped.task_ids("eval")[2]}
    actions, expected = _play_locally(local, 5, options, steps=25)
    observation, info = remote.reset(seed=5, options=options)
    played = [(_normal(observation), _normal(info))]
    for action in actions:
        observation, reward, terminated, truncated, info = remote.step(action)
        played.append((_normal(observation), reward, terminated, truncated, _normal(info)))
    assert played == expected
    remote.close()


def test_stream_answers_bad_messages_and_stays_open(server) -> None:
    from websockets.sync.client import connect

    session = httpx.post(
        f"{server.url}/sessions", json={"env_id": "llmgym/Wordle-v0", "reset": False}
    )
    stream_url = f"ws{server.url[4:]}/sessions/{session.json()['session_id']}/stream"
    with connect(stream_url) as stream:

        def ask(message: str) -> dict:
            stream.send(message)
            return json.loads(stream.recv(timeout=30))

        assert ask("{not json")["status"] == 422
        assert ask('{"op": "fly"}')["field"] == "op"
        assert ask('{"op": "step", "action": "crane", "bogus": 1}')["error"] == "invalid_request"
        assert ask('{"op": "step", "action": "crane"}')["error"] == "reset_needed"
        assert ask('{"op": "reset", "seed": 0, "seq": 1}')["seq"] == 1
        assert ask('{"op": "step", "action": "crane", "seq": 2}')["info"]["invalid_action"] is False
        assert ask('{"op": "call", "name": "oracle_action"}')["result"]
    with connect(f"ws{server.url[4:]}/sessions/nope/stream") as stream:
        stream.send('{"op": "step", "action": "crane"}')
        assert json.loads(stream.recv(timeout=30))["error"] == "session_not_found"


def test_stream_requires_the_token_and_limits_message_size() -> None:
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect

    settings = ServerSettings(token="tok", max_body_bytes=16 * 1024)
    with LiveServer(settings) as live:
        env = RemoteEnv(live.url, "llmgym/Wordle-v0", token="tok", transport="websocket")
        env.reset(seed=0)
        assert env.step("crane")[4]["invalid_action"] is False
        with (
            pytest.raises(InvalidStatus) as refused,
            connect(f"ws{live.url[4:]}/sessions/{env.session_id}/stream"),
        ):
            pass
        assert refused.value.response.status_code == 403
        # the client knows the server's limit and refuses before sending; the episode goes on
        with pytest.raises(RemoteEnvError, match="payload_too_large.*max_body_bytes=16384"):
            env.step("x" * 20_000)
        assert env.step("slate")[4]["invalid_action"] is False
        # the server enforces it on its own: a raw oversized message closes the stream
        stream = connect(
            f"ws{live.url[4:]}/sessions/{env.session_id}/stream",
            additional_headers={"Authorization": "Bearer tok"},
        )
        with stream, pytest.raises(ConnectionClosed) as closed:
            stream.send(json.dumps({"op": "step", "action": "x" * 20_000}))
            stream.recv(timeout=5)
        # the close frame, unless a connection reset overtook it
        assert closed.value.rcvd is None or closed.value.rcvd.code == 1009
        assert env.step("plant")[4]["invalid_action"] is False
        env.close()


def test_a_stream_closed_while_the_client_idles_reopens_on_the_next_step() -> None:
    # the server pings every 0.1 s; an idle client answers none, so the server hangs up
    with LiveServer(ws_ping_interval=0.1, ws_ping_timeout=0.1) as live:
        env = RemoteEnv(live.url, "llmgym/Wordle-v0", transport="websocket")
        local = gym.make("llmgym/Wordle-v0")
        assert env.reset(seed=3)[0] == local.reset(seed=3)[0]
        assert env.step("crane")[0] == local.step("crane")[0]
        stream = env._stream
        time.sleep(0.6)
        assert env.step("slate")[0] == local.step("slate")[0]
        assert env._stream is not stream  # it was reopened
        status = httpx.get(f"{live.url}/sessions/{env.session_id}").json()
        assert status["steps"] == 2 and status["seq"] == 3
        env.close()


@pytest.mark.parametrize("transport", ["http", "websocket"])
def test_a_step_resent_after_a_lost_answer_is_applied_once(server, transport: str) -> None:
    env = RemoteEnv(server.url, "llmgym/Wordle-v0", transport=transport)
    env.reset(seed=0)
    # the step reaches the server, but its answer is lost on the way back ...
    lost = httpx.post(
        f"{server.url}/sessions/{env.session_id}/step", json={"action": "crane", "seq": 2}
    )
    # ... so the client sends it again, with the same sequence number
    observation, *_ = env.step("crane")
    assert observation == lost.json()["observation"]
    status = httpx.get(f"{server.url}/sessions/{env.session_id}").json()
    assert status["steps"] == 1 and status["seq"] == 2
    if transport == "websocket":  # a broken stream is reopened, transparently
        env._stream.sock.shutdown(socket.SHUT_RDWR)
        assert env.step("slate")[4]["invalid_action"] is False
    env.close()


# ------------------------------------------------------------------------- a hostile server
def _fair_reply(operation: str, message: dict) -> bytes:
    """What an honest server answers (a fake environment that accepts everything)."""
    if operation == "reset":
        return dumps({"observation": "ready", "info": {}, "seq": message["seq"]})
    if operation == "step":
        return dumps(
            {
                "observation": f"you said {message['action']}",
                "reward": 0.0,
                "terminated": False,
                "truncated": False,
                "info": {},
                "seq": message["seq"],
            }
        )
    return dumps({"result": None})


class HostileServer:
    """A loopback server that speaks just enough of llmgym's protocol for a :class:`RemoteEnv`
    (``POST /sessions``, ``DELETE``, ``/health``, ``reset``, ``step`` and ``call`` over HTTP
    and over the session's WebSocket), and misbehaves as told.

    Args:
        description: Replaces keys of the environment's description (absurd spaces, ...).
        reply: ``(operation, message) -> bytes``: the body of each reset, step or call reply.
        framing: How HTTP replies are framed: ``"length"`` (``Content-Length``), ``"chunked"``
            (no length), ``"truncated"`` (a length, half the body, then the connection closes).
        close_with_reply: Send a WebSocket close frame in the same write as each reply (what a
            server that shuts down between two messages does).
    """

    def __init__(
        self,
        *,
        description: dict | None = None,
        reply=_fair_reply,
        framing: str = "length",
        close_with_reply: bool = False,
    ) -> None:
        space = space_to_dict(text_space(1000))
        self.description = {
            "protocol": PROTOCOL_VERSION,
            "env_id": "llmgym/Hostile-v0",
            "observation_space": space,
            "action_space": space,
            "render_modes": ["ansi", "human"],
            "example": "anything",
            "skills": [],
            "config": {},
            "max_episode_steps": None,
            **(description or {}),
        }
        self.reply = reply
        self.framing = framing
        self.close_with_reply = close_with_reply
        self.streams = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        buffer = b""
        with connection, contextlib.suppress(OSError):
            while True:
                while b"\r\n\r\n" not in buffer:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    buffer += chunk
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                method, path, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
                if b"upgrade: websocket" in head.lower():
                    self._stream(connection, head + b"\r\n\r\n" + buffer, path)
                    return
                declared = re.search(rb"(?i)content-length: *(\d+)", head)
                length = int(declared[1]) if declared else 0
                while len(buffer) < length:
                    buffer += connection.recv(65536)
                body, buffer = buffer[:length], buffer[length:]
                if not self._answer(connection, method, path, body):
                    return

    def _answer(self, connection: socket.socket, method: str, path: str, body: bytes) -> bool:
        """Answer one HTTP request; ``False`` when the connection is to end."""
        if method == "POST" and path == "/sessions":
            reply = dumps(
                {
                    "session_id": "s1",
                    "instance_id": "i1",
                    "ttl_s": 60.0,
                    "seq": 0,
                    "env": self.description,
                }
            )
        elif method == "DELETE":
            connection.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")
            return True
        elif path == "/health":
            reply = b'{"instance_id": "i1"}'
        else:
            reply = self.reply(path.rsplit("/", 1)[1], json.loads(body))
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        if self.framing == "chunked":
            connection.sendall(
                f"{head}Transfer-Encoding: chunked\r\n\r\n".encode()
                + b"".join(
                    f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
                    for piece in (reply[i : i + 65536] for i in range(0, len(reply), 65536))
                )
                + b"0\r\n\r\n"
            )
            return True
        connection.sendall(f"{head}Content-Length: {len(reply)}\r\n\r\n".encode())
        if self.framing == "truncated" and not path.endswith("/sessions"):
            connection.sendall(reply[: len(reply) // 2])
            return False
        connection.sendall(reply)
        return True

    def _stream(self, connection: socket.socket, request: bytes, path: str) -> None:
        from websockets.frames import Opcode
        from websockets.http11 import Request
        from websockets.server import ServerProtocol

        self.streams += 1
        protocol = ServerProtocol(max_size=None)
        protocol.receive_data(request)
        [handshake] = [event for event in protocol.events_received() if isinstance(event, Request)]
        protocol.send_response(protocol.accept(handshake))
        connection.sendall(b"".join(protocol.data_to_send()))
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                return
            protocol.receive_data(chunk)
            for event in protocol.events_received():
                if event.opcode not in (Opcode.TEXT, Opcode.BINARY):
                    continue
                message = json.loads(event.data)
                protocol.send_binary(self.reply(message.pop("op"), message))
                if self.close_with_reply:
                    protocol.send_close(1012, "going away")  # in the reply's write
            outgoing = list(protocol.data_to_send())
            connection.sendall(b"".join(outgoing))
            if outgoing and outgoing[-1] == b"":  # the server ends the connection
                return


def _hostile_env(server: HostileServer, **kwargs) -> RemoteEnv:
    return RemoteEnv(server.url, "llmgym/Hostile-v0", backoff=0.01, retries=2, **kwargs)


def test_a_close_frame_that_comes_with_a_reply_reopens_the_stream() -> None:
    # websockets' InvalidState('connection is closing') used to escape the next step
    with HostileServer(close_with_reply=True) as hostile:
        env = _hostile_env(hostile, transport="websocket")
        assert env.reset(seed=0)[0] == "ready"
        for word in ("crane", "slate", "pride"):
            assert env.step(word)[0] == f"you said {word}"
        assert hostile.streams == 4  # a fresh stream for every message
        env.close()


@pytest.mark.parametrize(
    ("transport", "framing"), [("websocket", "length"), ("http", "length"), ("http", "chunked")]
)
def test_a_reply_over_max_reply_bytes_is_refused(transport: str, framing: str) -> None:
    def huge_steps(operation: str, message: dict) -> bytes:
        if operation == "step":
            return dumps(
                {**json.loads(_fair_reply(operation, message)), "info": {"x": "x" * 2**21}}
            )
        return _fair_reply(operation, message)

    with HostileServer(reply=huge_steps, framing=framing) as hostile:
        default = RemoteEnv(hostile.url, "x")
        assert default.max_reply_bytes == 64 * 2**20
        default.close()
        env = _hostile_env(hostile, transport=transport, max_reply_bytes=2**20)
        env.reset(seed=0)
        with pytest.raises(RemoteEnvError, match="over max_reply_bytes=1048576") as refused:
            env.step("crane")
        assert not isinstance(refused.value, (SessionLostError, ServerUnavailableError))
        assert env.reset(seed=1)[0] == "ready"  # the session goes on
        env.close()


NOT_THE_PROTOCOL = {
    "html": b"<html>502 Bad Gateway</html>",
    "cut_json": b'{"observation": "x", "info": {',
    "a_list": b"[1, 2, 3]",
    "no_keys": b"{}",
    "seq_text": b'{"observation": "x", "info": {}, "seq": "two"}',
    "info_list": b'{"observation": "x", "info": [], "seq": 1}',
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "bad_array": b'{"observation": {"__ndarray__": "!", "dtype": "uint8", "shape": [1]}}',
}


@pytest.mark.parametrize("transport", ["websocket", "http"])
@pytest.mark.parametrize("body", list(NOT_THE_PROTOCOL.values()), ids=list(NOT_THE_PROTOCOL))
def test_a_reply_that_is_not_the_protocol_is_server_unavailable(
    transport: str, body: bytes
) -> None:
    with HostileServer(reply=lambda operation, message: body) as hostile:
        env = _hostile_env(hostile, transport=transport)
        with pytest.raises(ServerUnavailableError, match="not llmgym's protocol"):
            env.reset(seed=0)
        env.close()


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_a_reply_cut_mid_message_is_retried_then_server_unavailable(transport: str) -> None:
    def cut(operation: str, message: dict) -> bytes:
        raise ConnectionResetError  # the hostile server drops the connection mid-exchange

    framing = "truncated" if transport == "http" else "length"
    reply = _fair_reply if transport == "http" else cut
    with HostileServer(reply=reply, framing=framing) as hostile:
        env = _hostile_env(hostile, transport=transport)
        with pytest.raises(ServerUnavailableError, match="after 3 attempt"):
            env.reset(seed=0)
        env.close()


ABSURD_SPACES = {
    "box_9_gib": (
        {"type": "Box", "shape": [100_000, 100_000], "dtype": "float32", "low": 0, "high": 1},
        "Box.shape",
    ),
    "text_billions": (
        {"type": "Text", "max_length": 5 * 10**9, "min_length": 0, "charset": "ab"},
        "Text.max_length",
    ),
    "discrete_negative": ({"type": "Discrete", "n": -1, "start": 0, "dtype": "int64"}, "n"),
    "multibinary_huge": ({"type": "MultiBinary", "n": [2**20, 2**20]}, "MultiBinary.n"),
    "no_dtype": ({"type": "Box", "shape": [2], "low": 0, "high": 1}, "dtype"),
    "not_an_object": ("Box", "JSON object"),
}


@pytest.mark.parametrize(("space", "field"), list(ABSURD_SPACES.values()), ids=list(ABSURD_SPACES))
def test_absurd_spaces_from_the_server_are_refused_before_allocating(space, field: str) -> None:
    with HostileServer(description={"observation_space": space}) as hostile:
        tracemalloc.start()
        try:
            with pytest.raises(RemoteEnvError, match="observation_space") as refused:
                _hostile_env(hostile)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert field in str(refused.value)
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MiB allocated"


def test_a_description_without_its_keys_is_refused() -> None:
    with HostileServer() as hostile:
        hostile.description.pop("action_space")
        with pytest.raises(RemoteEnvError, match="has no action_space"):
            _hostile_env(hostile)
