"""Wrappers that turn environments into an LLM agent loop.

* :class:`ReActWrapper` — the prompt in, the model's raw reply out; parses ``Thought:``/``Action:``.
* :class:`ChatHistory` — the conversation as OpenAI-style messages in ``info["messages"]``.
* :class:`InstructionSampler` — each reset draws a task from a split, uniformly or by weights.
* :class:`RecordTrajectory` — finished episodes appended to a JSON-lines file.
* :class:`OracleHint` — the oracle's next action in ``info["oracle_action"]``.
* :class:`HorizonLimit` — episodes truncated at the turn limit a :class:`HorizonCurriculum`
  allows, which grows in stages during training (AgentGym-RL's ScalingInter-RL).
* :class:`TextEnvWrapper` — their base: arguments recorded in ``env.spec``, the llmgym
  environment inside typed as :attr:`~TextEnvWrapper.text_env`.
* :func:`make_chat_env` — the standard stack, ``ChatHistory(ReActWrapper(gymnasium.make(id)))``;
  :func:`wrap_chat_env` puts the same stack around an environment you already have.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from llmgym.wrappers.base import TextEnvWrapper
from llmgym.wrappers.chat import ChatHistory
from llmgym.wrappers.horizon import HorizonCurriculum, HorizonLimit
from llmgym.wrappers.oracle import OracleHint
from llmgym.wrappers.react import ReActWrapper, format_reply, parse_reply, system_prompt
from llmgym.wrappers.recording import RecordTrajectory
from llmgym.wrappers.sampling import InstructionSampler

__all__ = [
    "ChatHistory",
    "HorizonCurriculum",
    "HorizonLimit",
    "InstructionSampler",
    "OracleHint",
    "ReActWrapper",
    "RecordTrajectory",
    "TextEnvWrapper",
    "format_reply",
    "make_chat_env",
    "parse_reply",
    "system_prompt",
    "wrap_chat_env",
]


def make_chat_env(
    env_id: str,
    *,
    react: bool = True,
    history_window: int | None = None,
    format_penalty: float = 0.0,
    max_format_errors: int | None = 3,
    **make_kwargs: Any,
) -> gym.Env:
    """``gymnasium.make(env_id, **make_kwargs)`` wrapped for an LLM agent: a
    :class:`ReActWrapper` (``react=False`` asks for the action alone) inside a
    :class:`ChatHistory`."""
    return wrap_chat_env(
        gym.make(env_id, **make_kwargs),
        react=react,
        history_window=history_window,
        format_penalty=format_penalty,
        max_format_errors=max_format_errors,
    )


def wrap_chat_env(
    env: gym.Env,
    *,
    react: bool = True,
    history_window: int | None = None,
    format_penalty: float = 0.0,
    max_format_errors: int | None = 3,
) -> gym.Env:
    """``env`` wrapped for an LLM agent, as :func:`make_chat_env` does (for environments made
    another way: a :class:`~llmgym.serving.client.RemoteEnv`, a Ray-hosted one)."""
    env = ReActWrapper(
        env, react=react, format_penalty=format_penalty, max_format_errors=max_format_errors
    )
    return ChatHistory(env, window=history_window)
