"""Agents: anything that turns an observation (and ``info``) into a text reply.

``make_agent("oracle" | "random" | "human" | "openai:MODEL")`` builds the built-in ones by name,
as the command line does.
"""

from __future__ import annotations

from typing import Any

from llmgym.agents.base import Agent, HumanAgent, OracleAgent, RandomAgent
from llmgym.agents.openai import OpenAIChatAgent

__all__ = [
    "AGENT_NAMES",
    "Agent",
    "HumanAgent",
    "OpenAIChatAgent",
    "OracleAgent",
    "RandomAgent",
    "make_agent",
]

AGENT_NAMES = ("oracle", "random", "human", "openai:MODEL")


def make_agent(
    spec: str, *, seed: int | None = None, react: bool = True, **openai_options: Any
) -> Agent:
    """Build an agent from its command-line name.

    Args:
        spec: ``oracle``, ``random``, ``human`` or ``openai:MODEL``.
        seed: Seed of the random agent.
        react: Whether replies use the ``Thought:``/``Action:`` format.
        openai_options: Passed to :class:`OpenAIChatAgent` (``base_url``, ``api_key``,
            ``temperature``, ``max_tokens``, ``timeout``, ``max_retries``, ...).
    """
    if spec == "oracle":
        return OracleAgent(react=react)
    if spec == "random":
        return RandomAgent(seed, react=react)
    if spec == "human":
        return HumanAgent(react=react)
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        return OpenAIChatAgent(spec.split(":", 1)[1], react=react, **openai_options)
    raise ValueError(f"unknown agent {spec!r}; choose from: {', '.join(AGENT_NAMES)}")
