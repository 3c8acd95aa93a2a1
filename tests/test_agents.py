"""Built-in agents, the agent protocol's batched/async forms, and docs/agents.md's example."""

from __future__ import annotations

import asyncio
import re
import sys
import types
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.vector import SyncVectorEnv

from llmgym.agents import Agent, HumanAgent, OracleAgent, RandomAgent, make_agent
from llmgym.runner.rollout import rollout, rollout_vector
from llmgym.wrappers import OracleHint, ReActWrapper, make_chat_env, parse_reply

DOC = Path(__file__).resolve().parent.parent / "docs" / "agents.md"


def test_make_agent_names() -> None:
    assert isinstance(make_agent("oracle"), OracleAgent)
    assert isinstance(make_agent("random", seed=1), RandomAgent)
    assert isinstance(make_agent("human"), HumanAgent)
    with pytest.raises(ValueError, match="choose from: oracle, random, human, openai:MODEL"):
        make_agent("gpt")
    with pytest.raises(ValueError):
        make_agent("openai:")


def test_oracle_agent_speaks_react_or_plain() -> None:
    env = make_chat_env("llmgym/Maze-v0")
    observation, info = env.reset(seed=0)
    agent = OracleAgent()
    agent.reset(env)
    parsed = parse_reply(agent.act(observation, info))
    assert parsed.action == env.unwrapped.oracle_action() and parsed.thought
    plain = OracleAgent(react=False)
    plain.reset(env)
    assert plain.act(observation, info) == f"Action: {env.unwrapped.oracle_action()}"


def test_oracle_agent_reads_the_hint_without_an_env() -> None:
    agent = OracleAgent(react=False)
    agent.reset(None)
    assert agent.act("", {"oracle_action": "move up"}) == "Action: move up"
    with pytest.raises(RuntimeError, match="OracleHint"):
        agent.act("", {})


def test_random_agent_is_seeded_per_episode() -> None:
    def replies(seed: int) -> list[str]:
        agent = RandomAgent(seed=7)
        agent.reset(None, seed=seed)
        return [agent.act("", {"admissible_actions": list("abcdefgh")}) for _ in range(10)]

    assert replies(1) == replies(1) and replies(1) != replies(2)


def test_human_agent_prefixes_action() -> None:
    shown: list[str] = []
    agent = HumanAgent(read=lambda prompt: "move up", write=shown.append)
    agent.reset(None)
    assert (
        agent.act("obs", {"admissible_actions": ["move up"], "env_observation": "You are here."})
        == "Action: move up"
    )
    assert shown == ["You are here.", "Valid actions: move up"]
    assert (
        HumanAgent(react=False, read=lambda p: "crane", write=lambda s: None).act("", {}) == "crane"
    )


def test_async_form() -> None:
    agent = OracleAgent(react=False)
    agent.reset(None)
    assert asyncio.run(agent.aact("", {"oracle_action": "inventory"})) == "Action: inventory"


class BatchedOracle(Agent):
    """Answers all sub-environments in one call, as a batched local model would."""

    name = "batched"

    def __init__(self) -> None:
        super().__init__(react=True)
        self.batch_sizes: list[int] = []

    def act(self, observation, info):
        return self.act_batch([observation], [info])[0]

    def act_batch(self, observations, infos):
        self.batch_sizes.append(len(observations))
        return [f"Action: {info['oracle_action']}" for info in infos]

    def fork(self):
        return self


def test_rollout_vector_uses_act_batch() -> None:
    vec = SyncVectorEnv(
        [lambda: ReActWrapper(OracleHint(gym.make("llmgym/Maze-v0"))) for _ in range(4)]
    )
    agent = BatchedOracle()
    trajectories = rollout_vector(vec, agent, episodes=6, seed=0, progress=False)
    assert len(trajectories) == 6 and all(t.success for t in trajectories)
    assert max(agent.batch_sizes) == 4


def test_docs_custom_agent_example_runs() -> None:
    block = next(
        b
        for b in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
        if "class FirstAdmissible" in b
    )
    module = types.ModuleType("agents_doc_example")
    sys.modules[module.__name__] = module
    try:
        exec(compile(block, str(DOC), "exec"), module.__dict__)
        trajectories = rollout(
            "llmgym/Maze-v0", module.FirstAdmissible(), episodes=3, progress=False
        )
    finally:
        del sys.modules[module.__name__]
    assert len(trajectories) == 3 and all(t.format_errors == 0 for t in trajectories)
