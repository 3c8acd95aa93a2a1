"""AgentGym's clients against ``llmgym serve``'s ``/agentgym/<family>`` routes, and AgentGym's
data files.

:class:`AgentGymClient` does what AgentGym's ``agentenv`` client class of each family does (its
requests, fields, action parsing and observation building), written from AgentGym's protocol
(docs/agentgym.md lists its fields) — not AgentGym's code. Each family plays an oracle episode
through a real ``llmgym serve`` process: a local twin of the environment, stepped with the same
actions, gives the oracle's next action, which is wrapped in the reply format AgentGym's prompt
asks for.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import httpx
import pytest

from tests.extras import need

need("fastapi")
need("uvicorn")

from llmgym.cli import main
from llmgym.envs import get_entry
from llmgym.integrations.agentgym import (
    FAMILIES,
    TRAIN_OFFSET,
    family_for_env,
    find_family,
    read_task_file,
    split_ids,
    task_id_of,
)
from llmgym.serving.server import ServerSettings
from llmgym.suites import load_suite
from tests.servers import LiveServer, ServeProcess


# ----------------------------------------------------------------------------- AgentGym's clients
def parse_react(reply: str) -> str:
    """WebShop's, ALFWorld's and SciWorld's adapters: the text after the last ``Action:``; with
    none, the whole reply if it holds ``search[``/``click[``, else nothing."""
    head, marker, action = reply.rpartition("Action:")
    if not marker:
        return reply.strip() if "search[" in reply or "click[" in reply else ""
    return action.strip()


def parse_one_line(reply: str) -> str | None:
    """BabyAI's and TextCraft's clients: the one ``Action:`` line (``None``: several, an error
    the client answers itself), stripped to letters, digits, commas and single spaces."""
    found = re.findall(r"Action:\s*(.*?)(?=\n|$)", reply, re.DOTALL)
    if len(found) > 1:
        return None
    action = re.sub(r"[^A-Za-z0-9, ]+", "", found[-1] if found else "")
    return " ".join(action.split())


def parse_first(reply: str) -> str:
    """Maze's and Wordle's clients: the text after the first ``Action:``, else the reply."""
    reply = reply.removesuffix("</s>")
    parts = reply.split("Action:")
    return (parts[1] if len(parts) > 1 else parts[0]).strip()


def parse_sql(reply: str) -> str:
    """SQLGym's client: the last ```sql block."""
    return reply.split("```sql")[-1].split("```")[0].strip()


def react_reply(action: str) -> str:
    return f"Thought:\nI know what to do next.\n\nAction:\n{action}"


def line_reply(action: str) -> str:
    return f"Thought: I know what to do next.\nAction: {action}"


@dataclass(frozen=True)
class ClientSpec:
    """How one AgentGym client class talks to its server."""

    id_field: str
    task_field: str
    parse: Callable[[str], str | None]
    reply: Callable[[str], str]
    create_body: dict[str, Any] | None = None
    create_id: Callable[[Any], int] = lambda answer: int(answer["id"])
    observe: str = "cached"
    reward_field: str = "reward"
    state_field: str = "observation"
    done_field: str = "done"
    reset_extra: dict[str, Any] = field(default_factory=dict)


def _tool_spec() -> ClientSpec:
    return ClientSpec(
        "env_idx",
        "id",
        parse=lambda reply: reply,
        reply=lambda action: f"Thought: I will use a tool.\n\nAction: {action}",
        create_body={"id": 0},
        create_id=int,
        observe="get",
    )


CLIENTS: dict[str, ClientSpec] = {
    "webshop": ClientSpec(
        "env_idx",
        "session_id",
        parse_react,
        react_reply,
        create_id=int,
        observe="get",
        state_field="state",
    ),
    "alfworld": ClientSpec(
        "id",
        "game",
        parse_react,
        react_reply,
        observe="alfworld",
        reset_extra={"world_type": "Text"},
    ),
    "babyai": ClientSpec("id", "data_idx", parse_one_line, line_reply, reward_field="score"),
    "sciworld": ClientSpec(
        "id", "data_idx", parse_react, react_reply, observe="sciworld", reward_field="score"
    ),
    "textcraft": ClientSpec(
        "id",
        "data_idx",
        parse_one_line,
        line_reply,
        create_body={"commands": None, "goal": None, "minecraft_dir": "agentenv_textcraft/"},
    ),
    "maze": ClientSpec("id", "game", parse_first, react_reply),
    "wordle": ClientSpec("id", "seed", parse_first, react_reply, observe="wordle"),
    "weather": _tool_spec(),
    "movie": _tool_spec(),
    "academia": _tool_spec(),
    "todo": _tool_spec(),
    "sheet": _tool_spec(),
    "sqlgym": ClientSpec(
        "env_idx",
        "item_id",
        parse_sql,
        lambda action: f"Let me write the query.\n{action}",
        create_id=int,
        observe="get",
        state_field="state",
    ),
    "searchqa": ClientSpec(
        "env_idx",
        "id",
        parse=lambda reply: reply,
        reply=lambda action: f"<think>I should look this up.</think>\n{action}",
        create_body={"id": 0},
        create_id=int,
        observe="get",
    ),
    "webarena": ClientSpec(
        "env_idx",
        "idx",
        parse=lambda reply: reply if re.findall(r"```(.*?)```", reply, re.DOTALL) else None,
        reply=lambda action: (
            "Let's think step-by-step. In summary, the next action I will perform is "
            f"```{action}```"
        ),
        create_id=lambda answer: int(answer["env_idx"]),
        observe="get",
        done_field="terminated",
        reset_extra={"seed": 0},
    ),
}


class AgentGymClient:
    """One AgentGym client object: it creates its instance on construction, as theirs do, and
    asserts a 200 on every request, as theirs do."""

    def __init__(self, base: str, family: str) -> None:
        self.base = base
        self.spec = CLIENTS[family]
        self.http = httpx.Client(timeout=120)
        kwargs = {} if self.spec.create_body is None else {"json": self.spec.create_body}
        created = self.http.post(f"{base}/create", **kwargs)
        assert created.status_code == 200, created.text
        self.env_id = self.spec.create_id(created.json())
        self.info: dict[str, Any] = {}
        self.vocab: list[str] = []
        if self.spec.observe == "wordle":
            self.vocab = self._get("filtered_vocab")

    def _post(self, path: str, data: dict[str, Any]) -> Any:
        response = self.http.post(
            f"{self.base}/{path}", json={**data, self.spec.id_field: self.env_id}
        )
        assert response.status_code == 200, response.text
        return response.json()

    def _get(self, path: str) -> Any:
        response = self.http.get(f"{self.base}/{path}?{self.spec.id_field}={self.env_id}")
        assert response.status_code == 200, response.text
        return response.json()

    def reset(self, index: int) -> Any:
        answer = self._post("reset", {self.spec.task_field: index, **self.spec.reset_extra})
        if isinstance(answer, dict):
            self.info = dict(answer)
            if self.spec.observe == "sciworld":
                self.info["observation"] = f"{answer['task_description']}\n{answer['observation']}"
        return answer

    def observe(self) -> str:
        kind = self.spec.observe
        if kind == "get":
            return self._get("observation")
        if kind == "alfworld":
            actions = ",".join(self.info["available_actions"])
            return f"{self.info['observation']}\nAVAILABLE ACTIONS: {actions}"
        if kind == "wordle":
            return "Here is the complete list of valid vocabulary words:\n" + "\n".join(self.vocab)
        return self.info["observation"]

    def step(self, reply: str) -> tuple[str, float, bool, str | None]:
        """The client's ``step``: the state, reward and done it returns, and the action it sent
        (``None``: it answered an error itself)."""
        action = self.spec.parse(reply.removesuffix("</s>"))
        if action is None:
            return "Error: Only one 'Action' is allowed per response.", 0.0, False, None
        answer = self._post("step", {"action": action})
        self.info.update(answer)
        state, done = answer[self.spec.state_field], answer[self.spec.done_field]
        return state, answer[self.spec.reward_field], done, action

    def close(self) -> None:
        """The client's ``close`` (AgentGym's evaluation loop never calls it)."""
        self._post("close", {})
        self.http.close()


# ----------------------------------------------------------------------------- the server
def _available(env_id: str) -> bool:
    try:
        return get_entry(env_id).available
    except KeyError:
        return False


FAST = [f for f in FAMILIES if f != "sciworld" and _available(FAMILIES[f].env_id)]


@pytest.fixture(scope="module")
def served():
    envs = [FAMILIES[f].env_id for f in FAMILIES if _available(FAMILIES[f].env_id)]
    with ServeProcess("--envs", *envs) as server:
        yield server


def play_oracle(base: str, family_name: str, index: int) -> tuple[float, bool, int]:
    """An oracle episode of ``family_name`` on task ``index``, driven by AgentGym's client; a
    local twin of the environment gives each next action. Returns the reward AgentGym's loop
    keeps (the last step's), ``done`` and the steps taken."""
    family = FAMILIES[family_name]
    twin = gym.make(family.env_id, config=dict(family.config), disable_env_checker=True)
    inner = twin.unwrapped
    eval_ids, train_ids = split_ids(family.env_id)
    twin_observation, _ = twin.reset(options={"task_id": task_id_of(index, eval_ids, train_ids)})
    client = AgentGymClient(base, family_name)
    try:
        client.reset(index)
        first = client.observe()
        assert first.strip(), f"{family_name}: empty first observation"
        if family.compose == "plain" and client.spec.observe in ("get", "cached"):
            assert str(twin_observation) in first
        reward, done, steps = 0.0, False, 0
        limit = get_entry(family.env_id).max_episode_steps or 200
        while not done and steps < limit:
            reply = client.spec.reply(inner.oracle_action())
            state, reward, done, sent = client.step(reply)
            assert sent is not None
            expected, _, terminated, truncated, _ = twin.step(sent)
            assert done == (terminated or truncated), (family_name, state)
            if family.name != "sciworld":
                assert str(expected) == state, (family_name, sent)
            steps += 1
        return float(reward), done, steps
    finally:
        client.close()
        twin.close()


@pytest.mark.parametrize("family", FAST)
def test_oracle_episode_through_agentgym_client(served, family) -> None:
    reward, done, steps = play_oracle(f"{served.url}/agentgym/{family}", family, 3)
    assert done and steps >= 1
    if family == "babyai":  # the client reads the cumulative score: 1 - 0.9 steps/max_steps
        assert 0.5 < reward <= 1.0
    else:
        assert reward == pytest.approx(1.0)


@pytest.mark.slow
def test_sciworld_oracle_scores_100(served) -> None:
    if not _available(FAMILIES["sciworld"].env_id):
        pytest.skip("SciWorld needs the [sciworld] extra (and Java)")
    reward, done, steps = play_oracle(f"{served.url}/agentgym/sciworld", "sciworld", 600)
    assert done and steps >= 2 and reward == pytest.approx(100.0)


def test_train_indices_start_at_one_million(served) -> None:
    base = f"{served.url}/agentgym/maze"
    reward, done, _ = play_oracle(base, "maze", TRAIN_OFFSET + 7)
    assert done and reward == 1.0
    client = AgentGymClient(base, "maze")
    client.reset(TRAIN_OFFSET + 7)
    assert client._get("detail")["task_id"] == "train/00007"
    client.reset(12)
    assert client._get("detail")["task_id"] == "eval/00012"


def test_one_wordle_client_plays_many_items_with_its_first_vocabulary(served) -> None:
    """AgentGym's Wordle client reads filtered_vocab once, right after create: every task's
    answer must be in that list."""
    family = FAMILIES["wordle"]
    client = AgentGymClient(f"{served.url}/agentgym/wordle", "wordle")
    twin = gym.make(family.env_id, config=dict(family.config), disable_env_checker=True)
    eval_ids, train_ids = split_ids(family.env_id)
    assert len(client.vocab) == 40
    for index in (0, 11, TRAIN_OFFSET + 5):
        client.reset(index)
        twin.reset(options={"task_id": task_id_of(index, eval_ids, train_ids)})
        done, sent = False, None
        while not done:
            _, reward, done, sent = client.step(react_reply(twin.unwrapped.oracle_action()))
            twin.step(sent)
        assert reward == 1.0 and sent in client.vocab
    client.close()


def test_lmrlgym_base_url_also_works(served) -> None:
    """AgentGym's scripts point Maze and Wordle at ``<lmrlgym server>/maze`` and ``/wordle``."""
    reward, done, _ = play_oracle(f"{served.url}/agentgym/lmrlgym/wordle", "wordle", 0)
    assert done and reward == 1.0


# ----------------------------------------------------------------------------- the errors
def _error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error"] == code and body["message"], body
    return body


@pytest.fixture
def maze(served):
    with httpx.Client(base_url=f"{served.url}/agentgym/maze", timeout=60) as http:
        handle = http.post("/create").json()["id"]
        yield http, handle


def test_task_index_mapping_and_its_errors(maze) -> None:
    http, handle = maze
    eval_ids, train_ids = split_ids("llmgym/Maze-v0")
    for index, task_id in [
        (0, "eval/00000"),
        (len(eval_ids) - 1, eval_ids[-1]),
        (TRAIN_OFFSET, "train/00000"),
        (TRAIN_OFFSET + len(train_ids) - 1, train_ids[-1]),
    ]:
        assert http.post("/reset", json={"id": handle, "game": index}).status_code == 200
        assert http.get("/detail", params={"id": handle}).json()["task_id"] == task_id
    for index in [-1, len(eval_ids), TRAIN_OFFSET - 1, TRAIN_OFFSET + len(train_ids), True, 1.5]:
        body = _error(
            http.post("/reset", json={"id": handle, "game": index}), 422, "invalid_request"
        )
        assert body["field"] == "game"
    message = _error(http.post("/reset", json={"id": handle, "game": -1}), 422, "invalid_request")
    assert f"eval tasks are 0..{len(eval_ids) - 1}" in message["message"]


def test_errors_are_non_200_with_a_json_body(served, maze) -> None:
    http, handle = maze
    root = f"{served.url}/agentgym"
    _error(http.post(f"{root}/nosuchgym/create"), 404, "not_found")
    _error(http.post("/step", json={"id": handle + 1, "action": "move up"}), 404, "not_found")
    _error(http.post("/step", json={"action": "move up"}), 422, "invalid_request")
    _error(http.post("/step", json={"id": "one", "action": "move up"}), 422, "invalid_request")
    _error(http.post("/step", json={"id": handle, "action": "move up"}), 409, "reset_needed")
    http.post("/reset", json={"id": handle, "game": 0})
    _error(http.post("/step", json={"id": handle, "action": ["x"]}), 422, "invalid_request")
    _error(http.post("/step", json={"id": handle}), 422, "invalid_request")
    _error(http.get("/create"), 404, "not_found")
    _error(http.put("/create"), 405, "method_not_allowed")
    _error(http.get("/filtered_vocab", params={"id": handle}), 404, "not_found")
    other = httpx.post(f"{root}/wordle/create", timeout=60).json()["id"]
    _error(http.post("/reset", json={"id": other, "game": 0}), 404, "not_found")


def test_step_after_the_end_is_a_409(served) -> None:
    base = f"{served.url}/agentgym/sqlgym"
    client = AgentGymClient(base, "sqlgym")
    client.reset(0)
    _, _, done, _ = client.step("```sql\nSELECT 1\n```")
    assert done  # SQLGym episodes are one query
    late = client.http.post(f"{base}/step", json={"env_idx": client.env_id, "action": "SELECT 1"})
    _error(late, 409, "episode_ended")
    client.reset(0)
    assert client.step("```sql\nSELECT 2\n```")[2]


def test_hostile_bodies(served, maze) -> None:
    http, handle = maze
    assert http.post(
        "/reset", json={"id": handle, "game": 1, "world_type": "Text", "x": [1]}
    ).json()
    _error(http.post("/reset", json=[handle]), 422, "invalid_request")
    _error(http.post("/reset", content=b'{"id": '), 422, "invalid_request")
    _error(http.post("/reset", content=b"\xff\xfe"), 422, "invalid_request")
    deep: Any = handle
    for _ in range(100):
        deep = [deep]
    _error(http.post("/reset", json={"id": handle, "game": deep}), 422, "invalid_request")
    _error(http.post("/step", content=b"x" * (2 << 20)), 413, "payload_too_large")
    for action in ["", "\x00\x01<script>", "move up; DROP TABLE", "é" * 50_000, "Action: " * 999]:
        answer = http.post("/step", json={"id": handle, "action": action})
        assert answer.status_code == 200, answer.text
        assert answer.json()["done"] is False and answer.json()["observation"]
    huge_handle = http.post("/step", json={"id": 10**40, "action": "move up"})
    _error(huge_handle, 404, "not_found")
    long_number = http.post("/step", content=b'{"id": ' + b"9" * 5000 + b', "action": "x"}')
    assert "5000 digits" in _error(long_number, 422, "invalid_request")["message"]
    for query in ["9" * 5000, "१२३", "0x10", " 1", ""]:
        body = _error(http.get("/observation", params={"id": query}), 422, "invalid_request")
        assert body["field"] == "id"


def test_handles_are_private_and_listed_per_client(served) -> None:
    base = f"{served.url}/agentgym/textcraft"
    first, second = AgentGymClient(base, "textcraft"), AgentGymClient(base, "textcraft")
    assert first.env_id != second.env_id
    first.reset(0)
    second.reset(5)
    first.step("Action: inventory")
    assert first._get("detail")["steps"] == 1 and second._get("detail")["steps"] == 0
    assert {first.env_id, second.env_id} <= set(httpx.get(f"{base}/list_envs").json())
    first._post("close", {})
    assert second.step("Action: inventory")[0]
    gone = first.http.post(f"{base}/step", json={"id": first.env_id, "action": "inventory"})
    _error(gone, 404, "not_found")


def test_concurrent_steps_on_one_handle_apply_one_at_a_time(served) -> None:
    base = f"{served.url}/agentgym/maze"
    client = AgentGymClient(base, "maze")
    client.reset(2)
    body = {"id": client.env_id, "action": "move up"}
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: httpx.post(f"{base}/step", json=body), range(16)))
    applied = [a for a in answers if a.status_code == 200]
    assert all(a.status_code in (200, 409) for a in answers)
    assert client._get("detail")["steps"] == len(applied) >= 1
    client.close()


# ----------------------------------------------------------------------------- limits and the token
def test_handles_outlive_the_session_ttl() -> None:
    # a TTL that a loaded machine's step gaps stay well under, and a sleep well past it
    settings = ServerSettings(envs=("llmgym/Maze-v0",), ttl_s=2.0)
    with LiveServer(settings) as server:
        base = f"{server.url}/agentgym/maze"
        client = AgentGymClient(base, "maze")
        client.reset(4)
        client.step(react_reply("move up"))
        time.sleep(3.0)  # the session expires under the client, as in an hours-long run
        late = client.http.post(f"{base}/step", json={"id": client.env_id, "action": "move up"})
        assert "reset" in _error(late, 404, "session_expired")["message"]
        assert client.observe()  # the last observation is still there
        client.reset(4)  # a new session, transparently
        reward, done, _ = play_oracle(base, "maze", 4)
        assert done and reward == 1.0


def test_handles_count_against_max_sessions() -> None:
    settings = ServerSettings(envs=("llmgym/Maze-v0",), max_sessions=2)
    with LiveServer(settings) as server:
        base = f"{server.url}/agentgym/maze"
        first, second = AgentGymClient(base, "maze"), AgentGymClient(base, "maze")
        first.reset(4)
        second.reset(4)
        refused = httpx.post(f"{base}/create", timeout=30)
        _error(refused, 503, "at_capacity")
        second._post("close", {})
        assert httpx.post(f"{base}/create", timeout=30).status_code == 200


def test_dormant_handles_are_forgotten_oldest_first_past_the_table_size() -> None:
    """The handle table holds 4 x --max-sessions; past it, the handles whose session has ended
    go first, the longest unused first."""
    settings = ServerSettings(envs=("llmgym/Maze-v0",), ttl_s=0.1, max_sessions=1)
    with LiveServer(settings) as server:
        base = f"{server.url}/agentgym/maze"
        handles = []
        for _ in range(5):
            handles.append(httpx.post(f"{base}/create", timeout=30).json()["id"])
            time.sleep(0.25)  # its session expires, so the next create finds room
        forgotten = httpx.post(f"{base}/reset", json={"id": handles[0], "game": 0}, timeout=30)
        _error(forgotten, 404, "not_found")
        for handle in handles[1:]:
            kept = httpx.post(f"{base}/reset", json={"id": handle, "game": 0}, timeout=30)
            assert kept.status_code == 200, kept.text
            time.sleep(0.25)


def test_token_in_the_path(caplog) -> None:
    settings = ServerSettings(envs=("llmgym/Maze-v0",), token="s3cr3t-token")
    with LiveServer(settings) as server, caplog.at_level(logging.WARNING, "llmgym.serving"):
        reward, done, _ = play_oracle(f"{server.url}/agentgym/s3cr3t-token/maze", "maze", 2)
        assert done and reward == 1.0
        _error(httpx.post(f"{server.url}/agentgym/maze/create"), 401, "unauthorized")
        _error(httpx.post(f"{server.url}/agentgym/s3cr3t-tokeN/maze/create"), 401, "unauthorized")
        _error(httpx.post(f"{server.url}/agentgym/s3cr3t-token/create"), 404, "not_found")
        header = {"Authorization": "Bearer s3cr3t-token"}
        assert httpx.post(f"{server.url}/agentgym/maze/create", headers=header).status_code == 200
    rejected = [r.fields["path"] for r in caplog.records if r.getMessage() == "auth.rejected"]
    assert rejected == ["/agentgym/maze/create", "/agentgym/***/maze/create"]


def test_access_log_never_shows_the_token() -> None:
    command = [sys.executable, "-m", "llmgym.cli", "serve", "--port", "0", "--envs", "maze"]
    command += ["--token", "pathtoken123", "--access-log"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        while "listening on " not in line:
            line = process.stdout.readline()
            assert line, "llmgym serve did not start"
        url = line.rsplit("listening on ", 1)[1].strip()
        assert httpx.post(f"{url}/agentgym/pathtoken123/maze/create").status_code == 200
        assert httpx.post(f"{url}/agentgym/pathtoken12/maze/create").status_code == 401
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    assert "/agentgym/maze/create" in output and "/agentgym/***/maze/create" in output
    assert "pathtoken12" not in output


# ----------------------------------------------------------------------------- data files
def test_export_agenteval_writes_agentgym_test_files(tmp_path, capsys) -> None:
    assert main(["export", "agenteval", "--format", "agentgym", "--out", str(tmp_path)]) == 0
    suite = load_suite("agenteval")
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == len(suite) and "alfworld_test.json" in files
    for env_id, task_ids in suite.items():
        name = family_for_env(env_id)
        items = json.loads((tmp_path / f"{name}_test.json").read_text())
        assert isinstance(items, list) and len(items) == len(task_ids)
        assert all(set(i) == {"item_id", "conversations"} for i in items)
        indices = [int(item["item_id"].split("_")[-1]) for item in items]  # AgentGym's parse
        eval_ids, train_ids = split_ids(env_id)
        assert [task_id_of(i, eval_ids, train_ids) for i in indices] == task_ids
        assert read_task_file(tmp_path / f"{name}_test.json") == [(env_id, task_ids)]


def test_eval_plays_a_task_file(tmp_path, capsys) -> None:
    items = [{"item_id": "maze_5", "conversations": []}, {"item_id": "maze_1000002"}]
    path = tmp_path / "maze_test.json"
    path.write_text(json.dumps(items))
    out = tmp_path / "results.json"
    assert main(["eval", "--task-file", str(path), "--agent", "oracle", "--json", str(out)]) == 0
    result = json.loads(out.read_text())["results"][0]
    assert result["env_id"] == "llmgym/Maze-v0" and result["episodes"] == 2
    assert result["success_rate"] == 1.0
    path.write_text(json.dumps([{"item_id": "maze_99999"}]))
    assert main(["eval", "--task-file", str(path), "--agent", "oracle"]) == 2
    assert "item 0 ('maze_99999'): index=99999 names no task" in capsys.readouterr().err


def test_convert_writes_agenttraj_json_arrays(tmp_path) -> None:
    trajectories = tmp_path / "t.jsonl"
    assert (
        main(
            [
                "eval",
                "household",
                "--task-ids",
                "eval/00004",
                "train/00002",
                "--agent",
                "oracle",
                "--trajectories",
                str(trajectories),
            ]
        )
        == 0
    )
    out = tmp_path / "alfworld_train.json"
    assert main(["convert", str(trajectories), "-o", str(out), "--format", "agentgym"]) == 0
    records = json.loads(out.read_text())
    assert [r["item_id"] for r in records] == ["alfworld_4", f"alfworld_{TRAIN_OFFSET + 2}"]
    for record in records:
        turns = record["conversations"]
        assert [t["from"] for t in turns[:2]] == ["human", "gpt"] and turns[1]["loss"] is False
        assert all(set(t) == {"from", "loss", "value"} for t in turns)
        assert all(t["loss"] is True for t in turns[2:] if t["from"] == "gpt")
        assert all(t["loss"] is None for t in turns if t["from"] == "human")
        assert int(record["item_id"].split("_")[-1]) >= 0


def test_docs_table_lists_each_family_fields() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "agentgym.md").read_text()
    section = text.split("### The protocol, family by family")[1].split("## Task indices")[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| `")]
    for family in FAMILIES.values():
        cells = next([c.strip() for c in r] for r in rows if f"`{family.name}`" in r[0])
        assert cells[1:3] == [f"`{family.handle_field}`", f"`{family.task_field}`"]
        assert cells[5] == "`{" + ", ".join(family.step) + "}`", family.name


def test_task_file_errors_name_the_item(tmp_path) -> None:
    for content, expected in [
        ("{}", "JSON array"),
        ('[{"item_id": "chess_3"}]', "chess_3"),
        ('[{"item_id": "webshop_x"}]', "webshop_x"),
        ("not json", "not a readable JSON file"),
    ]:
        path = tmp_path / "items.json"
        path.write_text(content)
        with pytest.raises(ValueError, match=expected):
            read_task_file(path)
    assert find_family("lmrlgym_maze") is FAMILIES["maze"]
