"""Chat history: the conversation as OpenAI-style messages in ``info["messages"]``."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym

from llmgym.wrappers.base import TextEnvWrapper

__all__ = ["ChatHistory"]


class ChatHistory(TextEnvWrapper):
    """Keeps the episode's conversation as ``[{"role": ..., "content": ...}]`` messages.

    ``info["messages"]`` holds, ready to send to a chat-completions endpoint: the system prompt
    (from a :class:`~llmgym.wrappers.ReActWrapper` inside, else the environment's rules), the
    first user turn (the task and first observation), then alternating ``assistant`` replies (the
    actions passed to :meth:`step`) and ``user`` observations.

    Args:
        env: The environment (usually a ``ReActWrapper``).
        window: Keep only the last ``window`` assistant/user exchanges after the first user turn,
            which is always kept since it states the task (``None``: keep everything).
    """

    def __init__(self, env: gym.Env, window: int | None = None) -> None:
        super().__init__(env, window=window)
        if window is not None and window < 0:
            raise ValueError(f"window={window} must be >= 0 or None")
        self.window = window
        self._head: list[dict[str, str]] = []
        self._turns: list[dict[str, str]] = []

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        system = info.get("system_prompt") or self.text_env.rules()
        instruction = info.get("instruction", "")
        first = str(info.get("env_observation", observation))
        task = f"Your task: {instruction}\n\n" if instruction else ""
        self._head = [
            {"role": "system", "content": system},
            {"role": "user", "content": f"{task}Observation:\n{first}"},
        ]
        self._turns = []
        return observation, {**info, "messages": self.messages}

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._turns.append(
            {"role": "assistant", "content": action if isinstance(action, str) else repr(action)}
        )
        self._turns.append(
            {"role": "user", "content": str(info.get("env_observation", observation))}
        )
        return observation, reward, terminated, truncated, {**info, "messages": self.messages}

    @property
    def messages(self) -> list[dict[str, str]]:
        """The current conversation (a fresh list), windowed."""
        turns = self._turns
        if self.window is not None:
            turns = turns[len(turns) - 2 * self.window :] if self.window else []
        return [*self._head, *turns]
