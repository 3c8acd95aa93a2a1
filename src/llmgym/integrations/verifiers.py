"""llmgym environments as a verifiers v1 taskset (``verifiers>=0.4``, Python >= 3.11).

verifiers v1 splits an environment in two: a :class:`Taskset` yields tasks (data), and an
:class:`Env` plays one task as one episode, acting as the *user* of the model's conversation:
``interaction.turn(text)`` sends a user message and returns the model's reply. This module
gives both for any llmgym id:

* :class:`LlmgymTaskset` — one task per llmgym task id of a split (``--env.taskset.env-id``,
  ``--env.taskset.split``, ``--env.taskset.config``, ``--env.taskset.num-tasks``). A task's
  prompt is the task's instruction and first observation; its system prompt is the
  environment's rules, the reply format and a worked example (as :class:`~llmgym.wrappers.
  ReActWrapper` writes them).
* :class:`LlmgymEnv` — the multi-turn loop: each reply goes through
  :class:`~llmgym.wrappers.ReActWrapper` (the action is read with
  :func:`~llmgym.wrappers.react.parse_reply`; a reply without one gets the format feedback),
  the next observation is the next user turn, and the episode ends when llmgym's ends
  (terminated or truncated) or the seat's turn limit (``--env.player.max-turns``) is reached.
  Tool-use environments are played the same way: the action is the JSON function call
  (``{"name": ..., "arguments": {...}}``) that those environments read.
* Rewards on the trace: ``llmgym_return`` (the episode's return, weight 1); metrics ``success``
  (1.0 when llmgym's ``info["success"]``), ``steps`` and ``truncated``; ``trace.info["llmgym"]``
  holds the env id, task id and outcome.

verifiers finds a taskset by import name, and its id must name a top-level module whose
``__all__`` exports exactly one ``Taskset`` subclass (and optionally one ``Env``). Make one
module, e.g. ``llmgym_tasks.py`` on ``PYTHONPATH``::

    from llmgym.integrations.verifiers import LlmgymEnv, LlmgymTaskset

    __all__ = ["LlmgymEnv", "LlmgymTaskset"]

then ``vf-eval llmgym-tasks -m MODEL --client.base-url URL -n 5 --env.taskset.env-id
llmgym/Wordle-v0 --env.taskset.split eval --env.player.max-turns 12``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, Literal, cast

import gymnasium as gym
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.harnesses.null import NullHarnessConfig
from verifiers.v1.runtimes import SubprocessConfig

import llmgym  # noqa: F401  (registers the environments)
from llmgym.core.env import unwrapped_text_env
from llmgym.wrappers.react import ReActWrapper

__all__ = [
    "LlmgymData",
    "LlmgymEnv",
    "LlmgymEnvConfig",
    "LlmgymTask",
    "LlmgymTaskset",
    "LlmgymTasksetConfig",
]


class LlmgymTasksetConfig(vf.TasksetConfig):
    """Which llmgym tasks load (``--env.taskset.*``)."""

    env_id: str = "llmgym/Wordle-v0"
    """A registered llmgym id."""
    split: Literal["train", "eval"] = "eval"
    """The split whose task ids become tasks."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Config overrides (difficulty knobs) passed to every reset."""
    num_tasks: int | None = None
    """Load only the split's first ``num_tasks`` task ids (``None``: all of them)."""
    react: bool = True
    """Ask for ``Thought:``/``Action:`` replies; ``False`` asks for ``Action:`` alone (then a
    bare reply is the action)."""
    max_format_errors: int | None = 3
    """Consecutive replies without an action that end the episode (``None``: never)."""


class LlmgymData(vf.TaskData):
    """One llmgym task: ``info`` holds ``env_id``, ``task_id``, ``config`` and ``react``."""

    info: dict[str, Any]


class LlmgymTask(vf.Task[LlmgymData]):
    """A task of :class:`LlmgymTaskset`; scored by :class:`LlmgymEnv` while it plays."""


class LlmgymTaskset(vf.Taskset[LlmgymTask, LlmgymTasksetConfig]):
    """The tasks of one llmgym environment's split, in llmgym's task-id order."""

    def load(self) -> Iterator[LlmgymTask]:
        config = self.config
        env = _make(config.env_id, react=config.react, max_format_errors=None)
        try:
            task_ids = unwrapped_text_env(env).task_ids(config.split)
            if config.num_tasks is not None:
                task_ids = task_ids[: config.num_tasks]
            for task_id in task_ids:
                _, info = env.reset(options=_options(task_id, config.config))
                yield LlmgymTask(
                    LlmgymData(
                        id=task_id,
                        name=f"{config.env_id}:{task_id}",
                        prompt=_first_prompt(info),
                        system_prompt=info["system_prompt"],
                        info={
                            "env_id": config.env_id,
                            "task_id": task_id,
                            "config": dict(config.config),
                            "react": config.react,
                            "max_format_errors": config.max_format_errors,
                        },
                    ),
                    config.task,
                )
        finally:
            env.close()


class LlmgymEnvConfig(vf.EnvConfig):
    """The seat that plays (``--env.player.*``: model, harness, ``max-turns``)."""

    player: vf.AgentConfig = vf.AgentConfig(
        harness=NullHarnessConfig(id="null"), runtime=SubprocessConfig()
    )


class LlmgymEnv(vf.Env[LlmgymEnvConfig]):
    """Plays one llmgym episode per task: the model acts, llmgym answers as the user."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        info = cast(LlmgymData, task.data).info
        env = _make(
            info["env_id"], react=info["react"], max_format_errors=info["max_format_errors"]
        )
        episode_return, steps = 0.0, 0
        terminated = truncated = False
        step_info: dict[str, Any] = {}
        try:
            await asyncio.to_thread(env.reset, options=_options(info["task_id"], info["config"]))
            async with agents.player.interaction(task) as interaction:
                segment = await interaction.turn()
                while not segment.terminated:
                    _, reward, terminated, truncated, step_info = await asyncio.to_thread(
                        env.step, segment.last_reply
                    )
                    episode_return += float(reward)
                    steps += 1
                    if terminated or truncated:
                        break
                    segment = await interaction.turn(
                        f"Observation:\n{step_info['env_observation']}"
                    )
        finally:
            env.close()
        success = bool(step_info.get("success", False))
        trace = interaction.trace
        trace.record_reward("llmgym_return", episode_return)
        trace.record_metrics(
            {"success": float(success), "steps": float(steps), "truncated": float(truncated)}
        )
        trace.info["llmgym"] = {
            "env_id": info["env_id"],
            "task_id": info["task_id"],
            "return": episode_return,
            "success": success,
            "steps": steps,
            "terminated": bool(terminated),
            "truncated": bool(truncated),
        }


def _make(env_id: str, *, react: bool, max_format_errors: int | None) -> ReActWrapper:
    return ReActWrapper(gym.make(env_id), react=react, max_format_errors=max_format_errors)


def _options(task_id: str, config: dict[str, Any]) -> dict[str, Any]:
    return {"task_id": task_id, "config": config} if config else {"task_id": task_id}


def _first_prompt(info: dict[str, Any]) -> str:
    """The first user turn: the task's instruction and first observation (the rules and the
    reply format are the system prompt)."""
    instruction = info.get("instruction", "")
    task = f"Your task: {instruction}\n\n" if instruction else ""
    return f"{task}Observation:\n{info['env_observation']}"
