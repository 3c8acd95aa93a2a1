"""llmgym as a verifiers v1 taskset, evaluated by verifiers' own ``vf-eval``.

The model is the local chat-completions server (tests/chat_server.py) answering each turn with
the oracle action of the task being played; ``vf-eval`` runs in a subprocess with verifiers'
own loader, eval runner, interception server and chat harness (``null``, in the ``subprocess``
runtime), so nothing of verifiers is re-implemented here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.extras import need

need("verifiers.v1")
# verifiers pins mcp==2.0.0; the openenv package ([all]) installs mcp<2, which breaks vf-eval
need("mcp.server.mcpserver")

import gymnasium as gym

from llmgym.integrations.verifiers import LlmgymTaskset, LlmgymTasksetConfig
from llmgym.wrappers.react import parse_reply
from tests.chat_server import ChatServer

PLUGIN = """from llmgym.integrations.verifiers import LlmgymEnv, LlmgymTaskset

__all__ = ["LlmgymEnv", "LlmgymTaskset"]
"""


class OracleModel:
    """Answers with the oracle action of the task being played, replaying the conversation's
    earlier actions on a shadow environment. The tasks are played one at a time (``-c 1``) in
    load order, so a conversation that opens (no assistant message yet) is the next task."""

    def __init__(self, env_id: str, task_ids: list[str]) -> None:
        self.env_id = env_id
        self.pending = list(task_ids)
        self.current = ""
        self.lock = threading.Lock()

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        with self.lock:
            if not any(m["role"] == "assistant" for m in messages):
                self.current = self.pending.pop(0)
            task_id = self.current
        env = gym.make(self.env_id)
        env.reset(options={"task_id": task_id})
        for message in messages:
            if message["role"] == "assistant":
                env.step(parse_reply(message["content"]).action)
        return f"Thought: the oracle says so.\nAction: {env.unwrapped.oracle_action()}"


def vf_eval(tmp_path: Path, base_url: str, env_id: str, n: int) -> list[dict[str, Any]]:
    """Run ``vf-eval`` on the first ``n`` eval tasks of ``env_id``; its traces."""
    (tmp_path / "llmgym_tasks.py").write_text(PLUGIN)
    root = Path(__file__).resolve().parents[1]
    path = [str(tmp_path), str(root / "src"), str(root), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    env["OPENAI_API_KEY"] = "unused"
    out = tmp_path / "out"
    command = [
        str(Path(sys.executable).with_name("vf-eval")),
        "llmgym-tasks",
        *("-m", "oracle", "--client.base-url", base_url),
        *("-n", str(n), "-r", "1", "-c", "1", "--no-push", "--no-rich", "-o", str(out)),
        *("--env.taskset.env-id", env_id, "--env.taskset.split", "eval"),
        *("--env.player.max-turns", "12"),
    ]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    (traces,) = out.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    return [trace for episode in episodes for trace in episode["traces"]]


def local_oracle_steps(env_id: str, task_id: str) -> int:
    env = gym.make(env_id)
    env.reset(options={"task_id": task_id})
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
        steps, done = steps + 1, terminated or truncated
    return steps


@pytest.mark.parametrize(
    ("env_id", "n"), [("llmgym/Wordle-v0", 3), ("llmgym/Weather-v0", 2)], ids=["text", "tools"]
)
def test_vf_eval_with_an_oracle_model_scores_every_task_1(tmp_path, env_id, n) -> None:
    taskset = LlmgymTaskset(LlmgymTasksetConfig(id="llmgym-tasks", env_id=env_id, num_tasks=n))
    task_ids = [task.data.id for task in taskset]
    assert task_ids == list(gym.make(env_id).unwrapped.task_ids("eval")[:n])
    with ChatServer(OracleModel(env_id, [str(t) for t in task_ids])) as server:
        traces = vf_eval(tmp_path, server.base_url, env_id, n)
    assert sorted(t["task"]["data"]["id"] for t in traces) == task_ids
    for trace in traces:
        task_id = trace["task"]["data"]["id"]
        assert trace["ok"], trace["errors"]
        assert trace["rewards"]["llmgym_return"]["score"] == 1.0
        assert trace["metrics"]["success"] == 1.0
        outcome = trace["info"]["llmgym"]
        assert outcome["task_id"] == task_id and outcome["terminated"]
        assert outcome["steps"] == local_oracle_steps(env_id, task_id)


def test_tasks_carry_the_rules_instruction_and_first_observation() -> None:
    config = LlmgymTasksetConfig(id="llmgym-tasks", env_id="llmgym/Maze-v0", split="train")
    (task,) = LlmgymTaskset(config).take(1)
    env = gym.make("llmgym/Maze-v0")
    observation, info = env.reset(options={"task_id": task.data.id})
    assert task.data.id == env.unwrapped.task_ids("train")[0]
    assert env.unwrapped.rules().strip() in task.data.system_prompt
    assert task.data.prompt.endswith(f"Observation:\n{observation}")
    assert info["instruction"] in task.data.prompt
    assert task.data.info["env_id"] == "llmgym/Maze-v0"
