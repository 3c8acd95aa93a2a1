"""The agent protocol and the built-in agents that need no model."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["Agent", "OracleAgent", "RandomAgent", "make_agent"]


class Agent:
    """Base class of agents.

    ``reset(env)`` is called at the start of every episode with the environment being played
    (agents that read the true state, like the oracle, keep it); ``act(observation, info)`` returns
    the next action as text.
    """

    name: str = "agent"

    def reset(self, env: gym.Env) -> None:
        """Start of an episode in ``env``."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The next action."""
        raise NotImplementedError


class OracleAgent(Agent):
    """Plays the environment's own oracle (a planner that reads the true state)."""

    name = "oracle"

    def __init__(self) -> None:
        self._env: gym.Env | None = None

    def reset(self, env: gym.Env) -> None:
        self._env = env.unwrapped

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._env is None:
            raise RuntimeError("OracleAgent.act() called before reset(env)")
        return self._env.oracle_action()  # type: ignore[attr-defined]


class RandomAgent(Agent):
    """Uniformly random valid actions: the admissible ones where the environment lists them."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)
        self._env: gym.Env | None = None

    def reset(self, env: gym.Env) -> None:
        self._env = env.unwrapped

    def act(self, observation: str, info: dict[str, Any]) -> str:
        actions = info.get("admissible_actions")
        if actions:
            return actions[int(self._rng.integers(len(actions)))]
        if self._env is None:
            raise RuntimeError("RandomAgent.act() called before reset(env)")
        return self._env.sample_action(self._rng)  # type: ignore[attr-defined]


def make_agent(spec: str, *, seed: int | None = None) -> Agent:
    """Build an agent from its command-line name: ``oracle`` or ``random``."""
    if spec == "oracle":
        return OracleAgent()
    if spec == "random":
        return RandomAgent(seed)
    raise ValueError(f"unknown agent {spec!r}; choose from: oracle, random")
