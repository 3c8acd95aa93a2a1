"""Oracle hints: the oracle's next action in ``info``, for agents that cannot see the env."""

from __future__ import annotations

from typing import Any, SupportsFloat

from llmgym.wrappers.base import TextEnvWrapper

__all__ = ["OracleHint"]


class OracleHint(TextEnvWrapper):
    """Adds ``info["oracle_action"]`` (the environment's oracle's next action) after every reset
    and every step that does not end the episode. Use it where the agent has no handle on the
    environment: inside the sub-environments of a vector environment, or behind a server."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        return observation, {**info, "oracle_action": self.text_env.oracle_action()}

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if not (terminated or truncated):
            info = {**info, "oracle_action": self.text_env.oracle_action()}
        return observation, reward, terminated, truncated, info
