"""AgentGym's clients against ``llmgym serve``'s ``/agentgym/<family>`` routes, and AgentGym's
data files.

:class:`AgentGymClient` does what AgentGym's ``agentenv`` client class of each family does (its
requests, fields, action parsing and observation building), written from AgentGym's protocol as
documented in docs/agentgym.md — not AgentGym's code. Each family plays an oracle episode
through a real ``llmgym serve`` process: a local twin of the environment, stepped with the same
actions, gives the oracle's next action, which is wrapped in the reply format AgentGym's prompt
asks for.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from llmgym.cli import main
from llmgym.envs import get_entry
from llmgym.integrations.agentgym import (
    FAMILIES,
    TRAIN_OFFSET,
    find_family,
    read_task_file,
    split_ids,
    task_id_of,
)
from llmgym.serving.server import ServerSettings
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
        response = self.http.post(f"{self.base}/{path}", json={**data, self.spec.id_field: self.env_id})
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
        return answer[self.spec.state_field], answer[self.spec.reward_field], answer["done"], action

    def close(self) -> None:
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
    index = 3
    reward, done, steps = play_oracle(f"{served.url}/agentgym/{family}", family, index)
    assert done and steps >= 1
    assert reward == pytest.approx(1.0) if family != "babyai" else reward > 0.5
