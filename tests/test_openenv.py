"""llmgym in OpenEnv's protocol, driven by OpenEnv's own client (``GenericEnvClient``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import httpx
import pytest

import llmgym  # noqa: F401  (registers the environments)
from tests.extras import need

need("fastapi")
openenv = need("openenv")
try:
    from openenv import GenericEnvClient
    from openenv.validation import Level, ProviderCapability, run_validation
    from openenv.validation.providers import ProviderError
except ImportError as error:  # fastmcp without a compatible mcp (verifiers 0.4 pins mcp 2)
    pytest.skip(f"openenv cannot be imported: {error}", allow_module_level=True)

from llmgym.serving.server import ServerSettings
from llmgym.serving.server.policy import ConfigLimit
from tests.servers import LiveServer, ServeProcess

WORDLE = "llmgym/Wordle-v0"
VALIDATED = (WORDLE, "llmgym/Weather-v0", "llmgym/HeistPixels-v0")
"""A text, a tool and a pixel environment."""


@pytest.fixture(scope="module")
def root_server(hosting):
    """``llmgym serve --protocol openenv --env wordle``: Wordle alone, at the root (sessions in
    the server's process, or in Ray actors)."""
    settings = ServerSettings(protocols=("openenv",), envs=("wordle",), **hosting)
    with LiveServer(settings) as server:
        yield server


@pytest.fixture(scope="module")
def mounted_server(hosting):
    """Plain ``llmgym serve``: every environment also at ``/openenv/<name>``."""
    limits = (ConfigLimit(WORDLE, "max_guesses", maximum=8),)
    envs = (WORDLE, "llmgym/Weather-v0")
    with LiveServer(ServerSettings(envs=envs, config_limits=limits, **hosting)) as s:
        yield s


def local_oracle_run(task_id: str) -> list[tuple[str, str, float, bool]]:
    env = gym.make(WORDLE)
    env.reset(options={"task_id": task_id})
    trajectory, done = [], False
    while not done:
        action = env.unwrapped.oracle_action()
        observation, reward, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
        trajectory.append((action, observation, float(reward), done))
    return trajectory


async def remote_oracle_run(url: str, task_id: str) -> list[tuple[str, str, float, bool]]:
    local = local_oracle_run(task_id)
    trajectory = []
    async with GenericEnvClient(base_url=url) as client:
        result = await client.reset(task_id=task_id)
        assert result.observation["task_id"] == task_id and not result.done
        for action, *_ in local:
            result = await client.step({"action": action})
            trajectory.append((action, result.observation["text"], result.reward, result.done))
    return trajectory


@pytest.mark.parametrize("where", ["root", "mounted"])
def test_wordle_oracle_over_ws_matches_a_local_run(where, root_server, mounted_server):
    url = root_server.url if where == "root" else f"{mounted_server.url}/openenv/wordle"
    remote = asyncio.run(remote_oracle_run(url, "eval/00000"))
    assert remote == local_oracle_run("eval/00000")
    assert remote[-1][2] == 1.0 and remote[-1][3]


def test_sync_client_state_index_and_bad_action(root_server):
    with GenericEnvClient(base_url=root_server.url).sync() as client:
        result = client.reset(split="eval", index=3, seed=0)
        assert result.observation["task_id"] == "eval/00003"
        assert result.reward is None and not result.done
        result = client.step({"action": "not a five letter word!"})
        assert result.observation["invalid_action"] and not result.done
        result = client.step({"action": 12345})  # not text: answered, as its JSON text
        assert result.observation["invalid_action"]
        state = client.state()
        assert state["step_count"] == 2 and state["task_id"] == "eval/00003"


def test_a_horizon_curriculum_truncates_the_episode(root_server):
    from llmgym.wrappers import HorizonCurriculum

    curriculum = HorizonCurriculum(stages=[(0, 2), (1, 4)], unit="episode")
    with GenericEnvClient(base_url=root_server.url).sync() as client:
        for limit in (2, 4):  # the trainer's schedule: 2 turns, then 4
            horizon = curriculum.start_episode()
            assert horizon == limit
            result = client.reset(split="eval", index=0, seed=0, horizon=horizon)
            assert result.observation["info"]["horizon"] == {"limit": limit}
            for _ in range(limit):
                assert not result.done
                result = client.step({"action": "zzzzz"})  # invalid: never solves
            assert result.done and result.observation["truncated"]
            assert result.observation["info"]["truncated_by"] == "horizon"
            with pytest.raises(RuntimeError, match="episode has ended"):
                client.step({"action": "crane"})


def test_two_sessions_stay_independent(root_server):
    async def run() -> None:
        async with (
            GenericEnvClient(base_url=root_server.url) as first,
            GenericEnvClient(base_url=root_server.url) as second,
        ):
            a, b = await asyncio.gather(
                first.reset(task_id="eval/00001"), second.reset(task_id="eval/00002")
            )
            local = local_oracle_run("eval/00001")
            await second.step({"action": "zzzzz"})
            for action, observation, reward, done in local:
                result = await first.step({"action": action})
                assert (result.observation["text"], result.reward, result.done) == (
                    observation,
                    reward,
                    done,
                )
            assert (await second.state())["step_count"] == 1
            assert (await first.state())["task_id"] == "eval/00001"

    asyncio.run(run())


def test_config_over_the_cap_is_refused(mounted_server):
    url = f"{mounted_server.url}/openenv/wordle"
    with GenericEnvClient(base_url=url).sync() as client:
        with pytest.raises(RuntimeError, match="max_guesses"):
            client.reset(config={"max_guesses": 1000})
        result = client.reset(config={"max_guesses": 8})
        assert not result.done


def test_errors_are_error_messages_and_the_session_goes_on(root_server):
    with GenericEnvClient(base_url=root_server.url).sync() as client:
        with pytest.raises(RuntimeError, match="reset"):
            client.step({"action": "crane"})  # before any reset
        with pytest.raises(RuntimeError, match="unknown_option"):
            client.reset(unknown_option=1)
        assert not client.reset(task_id="eval/00000").done


def test_http_routes(root_server, mounted_server):
    for url in (root_server.url, f"{mounted_server.url}/openenv/wordle"):
        assert httpx.get(f"{url}/health").json() == {"status": "healthy"}
        metadata = httpx.get(f"{url}/metadata").json()
        assert metadata["name"] == "wordle" and "Wordle" in metadata["readme_content"]
        schema = httpx.get(f"{url}/schema").json()
        assert schema["action"]["required"] == ["action"]
        assert schema["action"]["properties"]["action"]["type"] == "string"
        observation = schema["observation"]["properties"]
        assert {"text", "reward", "done", "info", "invalid_action", "success", "truncated"} <= set(
            observation
        )
        splits = httpx.get(f"{url}/wordle/splits").json()
        assert [s["name"] for s in splits] == ["train", "eval"]
        count = httpx.post(f"{url}/wordle/num_tasks", json={"split": "eval"}).json()["num_tasks"]
        assert count == len(gym.make(WORDLE).unwrapped.task_ids("eval"))
        task = httpx.post(f"{url}/wordle/task", json={"split": "eval", "index": 2}).json()
        assert task["task"]["task_id"] == "eval/00002"
        tasks = httpx.post(f"{url}/wordle/tasks", json={"split": "eval"}).json()["tasks"]
        assert len(tasks) == count
        page = httpx.post(f"{url}/wordle/task_range", json={"split": "eval", "start": 5, "stop": 7})
        assert [t["task_id"] for t in page.json()["tasks"]] == ["eval/00005", "eval/00006"]
        assert httpx.get(f"{url}/maze/splits").status_code == 404
    assert httpx.get(f"{mounted_server.url}/openenv/nosuch/health").status_code == 404


def test_tool_environment_schema_and_json_replies(mounted_server):
    url = f"{mounted_server.url}/openenv/weather"
    tools = httpx.get(f"{url}/schema").json()["tools"]
    assert any(t["function"]["name"] == "finish" for t in tools)
    local = gym.make("llmgym/Weather-v0")
    local.reset(options={"task_id": "eval/00000"})
    oracle = local.unwrapped.oracle_action()
    with GenericEnvClient(base_url=url).sync() as client:
        result = client.reset(task_id="eval/00000")
        assert result.observation["tools"] == tools
        call = json.loads(oracle) if oracle.lstrip().startswith("{") else None
        # verifiers sends a reply that is a JSON object as the step itself
        result = client.step(call if call is not None else {"action": oracle})
        assert result.observation["text"] == local.step(oracle)[0]


def test_token_and_quota_apply():
    settings = ServerSettings(
        protocols=("openenv",), envs=("wordle",), token="secret", max_sessions_per_client=1
    )
    with LiveServer(settings) as server:
        with pytest.raises(ConnectionError):
            GenericEnvClient(base_url=server.url).sync().connect()
        headers = {"Authorization": "Bearer secret"}
        assert httpx.get(f"{server.url}/schema").status_code == 401
        assert httpx.get(f"{server.url}/schema", headers=headers).status_code == 200

        async def two() -> None:
            async with GenericEnvClient(base_url=server.url, headers=headers) as first:
                await first.reset()
                second = GenericEnvClient(base_url=server.url, headers=headers)
                with pytest.raises(RuntimeError, match="quota|holds"):
                    await second.reset()
                await second.close()

        asyncio.run(two())


def test_export_openenv_writes_a_space(tmp_path):
    out = tmp_path / "space"
    process = subprocess.run(
        [sys.executable, "-m", "llmgym.cli", "export", "openenv", "wordle", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "openenv push" in process.stdout
    manifest = (out / "openenv.yaml").read_text()
    assert "task_api: true" in manifest and "range: [0, 1]" in manifest
    assert "declared_task_count: {train: 1074, eval: 252}" in manifest
    assert "openenv-llmgym-wordle" in (out / "pyproject.toml").read_text()
    assert '"--protocol", "openenv"' in (out / "Dockerfile").read_text()
    assert "sdk: docker" in (out / "README.md").read_text()
    validate = subprocess.run(
        ["openenv", "validate", str(out), "--level", "static", "--skip-build", "--json"],
        capture_output=True,
        text=True,
    )
    if validate.returncode == 0 or validate.stdout.strip().startswith("{"):
        assert json.loads(validate.stdout)["verdict"] == "pass", validate.stdout


def test_serve_cli_checks_protocol_options():
    def run(*args: str) -> Any:
        return subprocess.run(
            [sys.executable, "-m", "llmgym.cli", "serve", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert "--env ID" in run("--protocol", "openenv").stderr
    assert "drop --envs" in run("--env", "wordle", "--envs", "maze").stderr
    assert "known: llmgym, openenv, agentgym, mcp" in run("--protocol", "openenv", "a2a").stderr


# ----------------------------------------------------------------------------- openenv validate
def openenv_validate(url: str) -> dict[str, Any]:
    """``openenv validate --url URL --json`` (OpenEnv's own CLI, of this Python's environment):
    its report, after checking that it exits 0."""
    cli = shutil.which("openenv", path=str(Path(sys.executable).parent)) or "openenv"
    done = subprocess.run(
        [cli, "validate", "--url", url, "--json"], capture_output=True, text=True, timeout=120
    )
    report = json.loads(done.stdout)
    failed = [c for c in report["criteria"] if not c["passed"]]
    assert done.returncode == 0 and not failed, failed
    return report


@pytest.mark.parametrize("env_id", VALIDATED, ids=lambda e: e.split("/")[1])
def test_openenv_validate_passes_on_the_root(env_id) -> None:
    with LiveServer(ServerSettings(protocols=("openenv",), envs=(env_id,))) as server:
        report = openenv_validate(server.url)
    assert report["mode"] == "simulation" and len(report["criteria"]) == 6


def test_openenv_validate_passes_on_every_mount() -> None:
    with LiveServer(ServerSettings(envs=VALIDATED)) as server:
        for env_id in VALIDATED:
            name = env_id.split("/")[1].rsplit("-", 1)[0].lower()
            assert openenv_validate(f"{server.url}/openenv/{name}")["mode"] == "simulation"
            document = httpx.get(f"{server.url}/openenv/{name}/openapi.json").json()
            assert document["servers"] == [{"url": f"/openenv/{name}"}]
        own = httpx.get(f"{server.url}/openapi.json").json()["paths"]
        assert "/sessions" in own and not any(p.startswith(("/openenv", "/mcp")) for p in own)


def test_http_routes_without_a_session_are_stateless(root_server) -> None:
    url, store = root_server.url, root_server.app.state.store
    reset = httpx.post(f"{url}/reset", json={"task_id": "eval/00002", "seed": 0}).json()
    assert reset["observation"]["task_id"] == "eval/00002"
    assert (reset["reward"], reset["done"]) == (None, False)
    assert httpx.post(f"{url}/reset").json()["observation"]["task_id"]  # no body: a reset
    assert not store.sessions  # each made, reset and closed within its request
    state = httpx.get(f"{url}/state").json()
    assert state == {
        "episode_id": None,
        "step_count": 0,
        "env_id": WORDLE,
        "task_id": None,
        "done": False,
    }
    step = httpx.post(f"{url}/step", json={"action": {"action": "crane"}})
    assert step.status_code == 409 and "session_id" in step.json()["message"]
    bad = httpx.post(f"{url}/reset", json={"task_id": "eval/00000", "nosuch": 1})
    assert bad.status_code == 422 and bad.json()["field"] == "nosuch"


def _create_session(url: str) -> str:
    created = httpx.post(
        f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}
    )
    return created.json()["result"]["session_id"]


@pytest.mark.parametrize("where", ["root", "mounted"])
def test_a_named_session_plays_over_http_and_its_websocket(where, root_server, mounted_server):
    from websockets.sync.client import connect

    url = root_server.url if where == "root" else f"{mounted_server.url}/openenv/wordle"
    session_id = _create_session(url)
    reset = httpx.post(f"{url}/reset", json={"session_id": session_id, "task_id": "eval/00000"})
    assert reset.json()["observation"]["task_id"] == "eval/00000"
    local = local_oracle_run("eval/00000")
    for action, observation, reward, done in local[:-1]:
        body = {"session_id": session_id, "action": {"action": action}}
        answer = httpx.post(f"{url}/step", json=body).json()
        assert (answer["observation"]["text"], answer["reward"], answer["done"]) == (
            observation,
            reward,
            done,
        )
    ws_url = url.replace("http://", "ws://") + f"/ws?session_id={session_id}"
    with connect(ws_url) as websocket:  # the same session, attached
        websocket.send(json.dumps({"type": "state"}))
        assert json.loads(websocket.recv())["data"]["step_count"] == len(local) - 1
        websocket.send(json.dumps({"type": "step", "data": {"action": local[-1][0]}}))
        last = json.loads(websocket.recv())["data"]
        assert (last["reward"], last["done"]) == (1.0, True)
    state = httpx.get(f"{url}/state", params={"session_id": session_id}).json()
    assert state["step_count"] == len(local) and state["done"]  # the WebSocket left it open
    ended = httpx.post(f"{url}/step", json={"session_id": session_id, "action": {"action": "x"}})
    assert ended.status_code == 409 and "episode has ended" in ended.json()["message"]
    closed = httpx.post(
        f"{url}/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "openenv/session/close",
            "params": {"session_id": session_id},
        },
    )
    assert closed.json()["result"]["closed"]
    assert httpx.get(f"{url}/state", params={"session_id": session_id}).status_code == 404


class _DockerfileCommand:
    """OpenEnv's validation provider protocol (``openenv.validation.providers``) for a machine
    without Docker's daemon: it runs the exported Space's ``Dockerfile`` command (``llmgym
    serve --protocol openenv --env ID``) as a process on a loopback port instead of building
    and running the image. It enforces no network policy, so OpenEnv skips that check."""

    name = "llmgym-dockerfile-command"
    capabilities = frozenset({ProviderCapability.IMAGE_BUILD})
    supported_network_modes = frozenset({"no-network"})

    def build(self, root: Path, execution: Any) -> str:
        dockerfile = (Path(root) / execution.dockerfile).read_text()
        command = json.loads(
            next(line[4:] for line in dockerfile.splitlines() if line[:4] == "CMD ")
        )
        assert command[:2] == ["llmgym", "serve"]
        self.args: list[str] = []
        given = iter(command[2:])
        for arg in given:
            if arg in ("--host", "--port"):
                next(given)  # the image's address; here a free loopback port
            else:
                self.args.append(arg)
        return "sha256:" + hashlib.sha256(dockerfile.encode()).hexdigest()

    def start(self, spec: Any) -> Any:
        return _Running(ServeProcess(*self.args).start())


class _Running:
    def __init__(self, process: ServeProcess) -> None:
        self.process = process
        self.base_url = process.url

    def inspect(self) -> dict[str, Any]:
        return {"pid": self.process.process.pid}

    def logs(self, max_bytes: int = 65536) -> str:
        return ""

    def exec(self, argv: list[str], timeout_s: float) -> Any:
        raise ProviderError("no sandbox to run commands in")

    def stop(self) -> None:
        self.process.stop()


@pytest.mark.parametrize("env_id", [WORDLE, "llmgym/Weather-v0"], ids=["wordle", "weather"])
def test_an_exported_space_passes_openenv_validate_at_its_runtime_level(env_id, tmp_path):
    out = tmp_path / "space"
    subprocess.run(
        [sys.executable, "-m", "llmgym.cli", "export", "openenv", env_id, str(out)],
        capture_output=True,
        check=True,
    )
    plan = json.loads((out / "validation" / "runtime.json").read_text())
    assert plan["reset"]["options"] == {"task_id": "eval/00000"} and plan["actions"]
    report = run_validation(out, max_level=Level.RUNTIME, provider=_DockerfileCommand())
    status = {result.check_id: result.status.value for result in report.results}
    for check in ("startup", "reward_well_formed", "observation_schema", "state_contract"):
        assert status[f"runtime.{check}"] == "pass", report.results
    assert status["runtime.network_policy"] == "skip"
    # what this OpenEnv build does not implement yet is skipped, which makes the verdict a warning
    assert report.verdict.value in ("pass", "warn") and "fail" not in status.values()
