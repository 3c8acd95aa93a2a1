"""MCP on ``llmgym serve`` (``/mcp/<name>``), driven by the ``mcp`` SDK's own client over
streamable HTTP, by a hostile client speaking raw JSON-RPC, and by OpenEnv's own MCP client
(``MCPToolClient``) through OpenEnv's ``/mcp``."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import gymnasium as gym
import httpx
import numpy as np
import pytest

import llmgym  # noqa: F401  (registers the environments)
from tests.extras import need

need("fastapi")
need("mcp")

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from llmgym.serving.protocol import loads
from llmgym.serving.server import ServerSettings
from llmgym.serving.server.policy import ConfigLimit
from tests.servers import LiveServer

WORDLE, WEATHER, HEIST, SQL = (
    "llmgym/Wordle-v0",
    "llmgym/Weather-v0",
    "llmgym/HeistPixels-v0",
    "llmgym/SQL-v0",
)
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
ENDLESS_QUERY = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)


@pytest.fixture(scope="module")
def server(hosting):
    """Plain ``llmgym serve``: MCP at ``/mcp/<name>`` among its default protocols (sessions in
    the server's process, or in Ray actors)."""
    with LiveServer(ServerSettings(envs=(WORDLE, WEATHER, HEIST), **hosting)) as live:
        yield live


@contextlib.asynccontextmanager
async def connected(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Any]:
    """An initialized MCP session of the ``mcp`` SDK's client."""
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def oracle_call(action: str) -> tuple[str, dict[str, Any]]:
    """The oracle's ``TOOL with Action Input: {...}`` as a tool name and its arguments."""
    name, _, arguments = action.partition(" with Action Input: ")
    return name, json.loads(arguments)


def test_weather_oracle_episode_over_mcp(server) -> None:
    local = gym.make(WEATHER)
    local.reset(options={"task_id": "eval/00000"})
    schemas = local.unwrapped.tool_schemas()

    async def play() -> list[tuple[float, bool]]:
        async with connected(f"{server.url}/mcp/weather") as session:
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert list(listed) == [s["function"]["name"] for s in schemas] + ["reset", "tasks"]
            for schema in schemas:
                function = schema["function"]
                assert listed[function["name"]].inputSchema == function["parameters"]
            first = await session.call_tool("reset", {"task_id": "eval/00000"})
            assert first.structuredContent["task_id"] == "eval/00000"
            assert first.structuredContent["instruction"].startswith("Will it snow")
            steps, done = [], False
            while not done:
                action = local.unwrapped.oracle_action()
                observation, reward, terminated, truncated, _ = local.step(action)
                result = await session.call_tool(*oracle_call(action))
                assert result.content[0].text == observation and not result.isError
                structured = result.structuredContent
                assert (structured["reward"], structured["terminated"]) == (reward, terminated)
                done = structured["done"]
                assert done == (terminated or truncated)
                steps.append((structured["reward"], done))
            return steps

    steps = asyncio.run(play())
    assert steps[-1] == (1.0, True) and len(steps) == 4


def test_wordle_oracle_episode_through_act(server) -> None:
    local = gym.make(WORDLE)
    local.reset(options={"task_id": "eval/00003"})

    async def play() -> list[tuple[str, float, bool]]:
        async with connected(f"{server.url}/mcp/wordle") as session:
            tools = (await session.list_tools()).tools
            assert [t.name for t in tools] == ["act", "reset", "tasks"]
            assert tools[0].inputSchema["required"] == ["action"]
            first = await session.call_tool("reset", {"split": "eval", "index": 3, "seed": 0})
            assert first.structuredContent["task_id"] == "eval/00003"
            trajectory, done = [], False
            while not done:
                action = local.unwrapped.oracle_action()
                result = await session.call_tool("act", {"action": action})
                done = result.structuredContent["done"]
                text = result.content[0].text
                trajectory.append((text, result.structuredContent["reward"], done))
            return trajectory

    remote = asyncio.run(play())
    replay = gym.make(WORDLE)
    replay.reset(options={"task_id": "eval/00003"})
    expected, done = [], False
    while not done:
        observation, reward, terminated, truncated, _ = replay.step(
            replay.unwrapped.oracle_action()
        )
        done = terminated or truncated
        expected.append((observation, reward, done))
    assert remote == expected and remote[-1][1:] == (1.0, True)


def test_a_pixel_frame_is_an_image_and_exact_in_the_structured_content(server) -> None:
    local = gym.make(HEIST)
    frame, _ = local.reset(options={"task_id": "eval/00000"})

    async def play() -> tuple[Any, Any]:
        async with connected(f"{server.url}/mcp/heistpixels") as session:
            act = (await session.list_tools()).tools[0]
            assert act.inputSchema["properties"]["action"]["anyOf"][1]["maximum"] == 3
            first = await session.call_tool("reset", {"task_id": "eval/00000"})
            stepped = await session.call_tool("act", {"action": 1})  # an index
            return first, stepped

    first, stepped = asyncio.run(play())
    image = first.content[0]
    assert image.type == "image" and image.mimeType == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")
    exact = loads(json.dumps(first.structuredContent["observation"]))
    assert np.array_equal(exact, frame)
    assert not stepped.structuredContent["invalid_action"]
    assert np.array_equal(
        loads(json.dumps(stepped.structuredContent["observation"])), local.step(1)[0]
    )


def test_tasks_lists_a_split(server) -> None:
    count = len(gym.make(WORDLE).unwrapped.task_ids("eval"))

    async def listed() -> Any:
        async with connected(f"{server.url}/mcp/wordle") as session:
            return await session.call_tool("tasks", {"split": "eval", "start": 5, "count": 2})

    result = asyncio.run(listed())
    assert result.structuredContent == {
        "split": "eval",
        "count": count,
        "start": 5,
        "task_ids": ["eval/00005", "eval/00006"],
    }


WITHOUT_THE_SDK = """
import sys
sys.modules["mcp"] = None  # as in an install without the [mcp] extra
from fastapi.testclient import TestClient
from llmgym.serving.server import ServerSettings, create_app
with TestClient(create_app(ServerSettings(envs=("llmgym/Wordle-v0",)))) as http:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    refused = http.post("/mcp/wordle", json=hello)
    print(refused.status_code, refused.json()["error"]["message"])
    print(http.post("/openenv/wordle/mcp", json={}).json()["error"]["code"])
"""


def test_without_the_sdk_mcp_says_how_to_add_it_and_openenv_still_answers() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_THE_SDK], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    refused, openenv_code = done.stdout.strip().splitlines()
    assert refused.startswith("501") and "pip install -e '.[mcp]'" in refused
    assert openenv_code == "-32600"  # OpenEnv's JSON-RPC needs no SDK


@pytest.mark.parametrize("env_id", ["Weather", "Movie", "Academia", "Sheet", "Todo"])
def test_every_tool_environment_lists_its_tools(env_id) -> None:
    from llmgym.serving.protocol import space_to_dict
    from llmgym.serving.server.mcp import mcp_tools

    env = gym.make(f"llmgym/{env_id}-v0")
    schemas = env.unwrapped.tool_schemas()
    tools = mcp_tools(schemas, space_to_dict(env.action_space))
    names = [tool["name"] for tool in tools]
    assert names == [s["function"]["name"] for s in schemas] + ["reset", "tasks"]
    assert len(set(names)) == len(names)
    assert all(tool["inputSchema"]["type"] == "object" for tool in tools)


class RawMcp:
    """A client that speaks MCP's JSON-RPC by hand, to say what a real client would not."""

    def __init__(self, http: httpx.Client, path: str) -> None:
        self.http, self.path, self.next_id = http, path, 0
        opened = self.post({"method": "initialize", "params": _INITIALIZE})
        assert opened.status_code == 200, opened.text
        self.headers = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        assert self.post({"method": "notifications/initialized"}, request=False).is_success

    def post(self, message: dict[str, Any], *, request: bool = True) -> httpx.Response:
        body = {"jsonrpc": "2.0", **message}
        if request:
            self.next_id += 1
            body["id"] = self.next_id
        return self.send(json.dumps(body).encode())

    def send(self, content: bytes) -> httpx.Response:
        headers = getattr(self, "headers", HEADERS)
        answer = self.http.post(self.path, headers=headers, content=content)
        assert answer.status_code < 500, answer.text
        return answer

    def call(self, name: Any, arguments: Any) -> dict[str, Any]:
        answer = self.post(
            {"method": "tools/call", "params": {"name": name, "arguments": arguments}}
        )
        assert answer.status_code == 200, answer.text
        return answer.json()


_INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "hostile", "version": "0"},
}


def test_a_hostile_client_gets_json_rpc_errors_and_others_play_on(server) -> None:
    local = gym.make(WORDLE)
    local.reset(options={"task_id": "eval/00001"})
    with httpx.Client(base_url=server.url, timeout=60) as http:
        victim, hostile = RawMcp(http, "/mcp/wordle"), RawMcp(http, "/mcp/wordle")
        assert "result" in victim.call("reset", {"task_id": "eval/00001"})

        def error_of(answer: dict[str, Any]) -> dict[str, Any]:
            assert "result" not in answer, answer
            return answer["error"]

        assert error_of(hostile.call("act", {"action": "crane"}))["data"]["status"] == 409
        assert error_of(hostile.call("nosuch", {}))["code"] == -32602
        assert error_of(hostile.call("act", [1, 2]))["code"] == -32602  # not an object
        assert error_of(hostile.call("act", {"action": "crane", "more": 1}))["code"] == -32602
        assert error_of(hostile.call("reset", {"bogus": 1}))["data"]["field"] == "bogus"
        unknown = hostile.post({"method": "resources/list", "params": {}}).json()
        assert error_of(unknown)["code"] == -32601
        for garbage in (b"{not json", b"[" * 100 + b"]" * 100, b'{"foo": "bar"}'):
            answer = hostile.send(garbage)
            assert answer.status_code == 400 and answer.json()["error"]["code"] in (-32700, -32602)
        assert "result" in hostile.call("reset", {"task_id": "eval/00000"})
        huge = hostile.call("act", {"action": "x" * 900_000})  # under the body limit
        assert huge["result"]["structuredContent"]["invalid_action"]
        too_large = hostile.send(json.dumps({"x": "y" * 2_000_000}).encode())
        assert too_large.status_code == 413  # the server's limit, as on every route
        for word in ("crane", "again", "abcde", "zzzzz", "plumb", "fjord"):
            answer = hostile.call("act", {"action": word})
            if "error" in answer or answer["result"]["structuredContent"]["done"]:
                break
        assert error_of(hostile.call("act", {"action": "crane"}))["message"].startswith(
            "the episode has ended"
        )
        opening = http.post("/mcp/wordle", headers=HEADERS, json={"jsonrpc": "2.0", "id": 1})
        assert opening.status_code == 400 and opening.json()["error"]["code"] == -32600
        assert http.delete("/mcp/wordle", headers=HEADERS).status_code == 400  # no session
        assert http.get("/mcp/wordle", headers=victim.headers).status_code == 405
        done = False
        while not done:  # the victim's episode went on through all of it
            action = local.unwrapped.oracle_action()
            observation, reward, terminated, truncated, _ = local.step(action)
            structured = victim.call("act", {"action": action})["result"]["structuredContent"]
            assert (structured["observation"], structured["reward"]) == (observation, reward)
            done = structured["done"]
        assert structured["reward"] == 1.0
        for client in (victim, hostile):
            assert http.delete("/mcp/wordle", headers=client.headers).status_code == 200
        gone = victim.post({"method": "tools/list", "params": {}})
        assert gone.status_code == 404


def test_limits_apply_token_quota_and_session_end() -> None:
    settings = ServerSettings(envs=(WORDLE,), token="secret", max_sessions_per_client=1)
    auth = {"Authorization": "Bearer secret"}
    with LiveServer(settings) as live, httpx.Client(base_url=live.url, timeout=60) as http:
        refused = http.post("/mcp/wordle", headers=HEADERS, json={"jsonrpc": "2.0", "id": 1})
        assert refused.status_code == 401

        async def two() -> None:
            async with connected(f"{live.url}/mcp/wordle", auth) as session:
                assert http.get("/health").json()["sessions"] == 1
                await session.call_tool("reset", {})
                second = http.post(
                    "/mcp/wordle",
                    headers={**HEADERS, **auth},
                    json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _INITIALIZE},
                )
                assert second.status_code == 429 and second.headers["Retry-After"]
                assert second.json()["error"]["data"]["error"] == "quota_exceeded"
            # the client's DELETE closes it; the server releases the slot in the background
            deadline = time.monotonic() + 30
            while http.get("/health").json()["sessions"] and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert http.get("/health").json()["sessions"] == 0
            async with connected(f"{live.url}/mcp/wordle", auth) as again:
                assert (await again.call_tool("reset", {})).structuredContent["task_id"]

        asyncio.run(two())


def test_a_step_over_the_time_limit_ends_only_its_session() -> None:
    settings = ServerSettings(
        envs=(SQL, WORDLE),
        step_timeout_s=1.0,
        config_limits=(ConfigLimit(SQL, "time_limit_ms", maximum=10_000),),
    )
    config = {"mode": "explore", "max_queries": 50, "time_limit_ms": 10_000}

    async def run(url: str) -> None:
        async with connected(f"{url}/mcp/sql") as slow, connected(f"{url}/mcp/wordle") as other:
            await slow.call_tool("reset", {"seed": 0, "config": config})
            await other.call_tool("reset", {"seed": 0})
            with pytest.raises(McpError, match="limit of 1 s") as lost:
                await slow.call_tool("act", {"action": ENDLESS_QUERY})
            assert lost.value.error.data["status"] == 504
            with pytest.raises(McpError, match="was closed"):
                await slow.call_tool("act", {"action": "SELECT 1"})
            assert not (await other.call_tool("act", {"action": "crane"})).isError

    with LiveServer(settings) as live:
        asyncio.run(run(live.url))


# ----------------------------------------------------------------------------- OpenEnv's /mcp
MOVIE = "llmgym/Movie-v0"


@pytest.fixture(scope="module")
def movie_urls():
    """Movie in OpenEnv's protocol at the root (a Space) and at its mount of a plain server."""
    alone = ServerSettings(envs=(MOVIE,), protocols=("openenv",))
    with LiveServer(alone) as root, LiveServer(ServerSettings(envs=(MOVIE,))) as plain:
        yield {"root": (root, root.url), "mounted": (plain, f"{plain.url}/openenv/movie")}


@pytest.mark.parametrize("where", ["root", "mounted"])
def test_openenv_mcp_tool_client_plays_the_oracle_episode(movie_urls, where) -> None:
    """OpenEnv's ``MCPToolClient``: a session by ``openenv/session/create``, its WebSocket
    attached for reset and state, the tools called over HTTP ``/mcp``. (Movie: its tools have
    no argument called ``name``, which ``MCPToolClient.call_tool(name, **arguments)`` takes.)"""
    need("openenv")
    from openenv.core.mcp_client import MCPToolClient

    local = gym.make(MOVIE)
    local.reset(options={"task_id": "eval/00000"})

    async def play(url: str) -> tuple[dict[str, Any], Any]:
        async with MCPToolClient(base_url=url) as env:
            reset = await env.reset(task_id="eval/00000")
            assert reset.metadata["task_id"] == "eval/00000"
            names = [tool.name for tool in await env.list_tools()]
            assert names[-2:] == ["reset", "tasks"] and "finish" in names
            done = False
            while not done:
                action = local.unwrapped.oracle_action()
                observation = local.step(action)[0]
                name, arguments = oracle_call(action)
                data = await env.call_tool(name, **arguments)
                assert data["observation"] == observation
                done = data["done"]
            return data, await env.state()

    live, url = movie_urls[where]
    last, state = asyncio.run(play(url))
    assert last["reward"] == 1.0 and state.step_count == 5
    assert not live.app.state.store.sessions  # openenv/session/close ended the session


def test_openenv_mcp_tool_client_plays_a_text_environment_through_act(server) -> None:
    need("openenv")
    from openenv.core.mcp_client import MCPToolClient

    expected = gym.make(WORDLE)
    expected.reset(options={"task_id": "eval/00002"})

    async def play() -> list[tuple[str, float, bool]]:
        async with MCPToolClient(base_url=f"{server.url}/openenv/wordle") as env:
            await env.reset(task_id="eval/00002")
            trajectory, done = [], False
            while not done:
                action = expected.unwrapped.oracle_action()
                observation, reward, terminated, truncated, _ = expected.step(action)
                data = await env.call_tool("act", action=action)
                assert data["observation"] == observation
                done = data["done"]
                trajectory.append((action, data["reward"], done))
            return trajectory

    trajectory = asyncio.run(play())
    assert trajectory[-1][1:] == (1.0, True)


def test_openenv_json_rpc_sessions(server) -> None:
    url = f"{server.url}/openenv/wordle/mcp"

    def rpc(method: str, **params: Any) -> dict[str, Any]:
        answer = httpx.post(
            url, json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        )
        assert answer.status_code == 200 and answer.json()["jsonrpc"] == "2.0"
        return answer.json()

    probe = httpx.post(url, json={})  # what `openenv validate` sends
    assert probe.status_code == 200 and probe.json()["error"]["code"] == -32600
    assert [t["name"] for t in rpc("tools/list")["result"]["tools"]] == ["act", "reset", "tasks"]
    session_id = rpc("openenv/session/create")["result"]["session_id"]
    assert (
        rpc("tools/call", name="act", arguments={"action": "crane"}, session_id=session_id)[
            "error"
        ]["data"]["status"]
        == 409
    )
    reset = rpc(
        "tools/call", name="reset", arguments={"task_id": "eval/00000"}, session_id=session_id
    )
    assert reset["result"]["data"]["task_id"] == "eval/00000"
    step = rpc("tools/call", name="act", arguments={"action": "crane"}, session_id=session_id)
    assert step["result"]["data"]["reward"] == 0.0 and not step["result"]["isError"]
    assert (
        "session_id" in rpc("tools/call", name="act", arguments={"action": "x"})["error"]["message"]
    )
    assert rpc("nosuch/method")["error"]["code"] == -32601
    assert rpc("openenv/session/close", session_id=session_id)["result"]["closed"]
    gone = rpc("tools/call", name="act", arguments={"action": "crane"}, session_id=session_id)
    assert gone["error"]["data"]["status"] == 404
