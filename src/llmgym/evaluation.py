"""Evaluation: run an agent on a split's tasks and summarise success, reward and length."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym
from tqdm.auto import tqdm

from llmgym.agents.base import Agent
from llmgym.core.tasks import TaskRng

__all__ = ["EpisodeRecord", "EvalResult", "choose_tasks", "evaluate", "play_episode"]


@dataclass
class EpisodeRecord:
    """The outcome of one episode."""

    env_id: str
    task_id: str
    seed: int
    success: bool
    reward: float
    steps: int
    invalid_actions: int
    truncated: bool


@dataclass
class EvalResult:
    """Summary of an agent on one environment and split."""

    env_id: str
    agent: str
    split: str
    records: list[EpisodeRecord] = field(default_factory=list)

    @property
    def episodes(self) -> int:
        return len(self.records)

    @property
    def success_rate(self) -> float:
        return statistics.fmean(r.success for r in self.records) if self.records else 0.0

    @property
    def mean_reward(self) -> float:
        return statistics.fmean(r.reward for r in self.records) if self.records else 0.0

    @property
    def mean_steps(self) -> float:
        return statistics.fmean(r.steps for r in self.records) if self.records else 0.0

    def summary(self) -> dict[str, Any]:
        """The JSON summary row: env id, agent, split, episodes and the means."""
        return {
            "env_id": self.env_id,
            "agent": self.agent,
            "split": self.split,
            "episodes": self.episodes,
            "success_rate": self.success_rate,
            "mean_reward": self.mean_reward,
            "mean_steps": self.mean_steps,
        }

    def to_dict(self) -> dict[str, Any]:
        """The summary plus every episode's record."""
        return {**self.summary(), "per_episode": [asdict(r) for r in self.records]}


def choose_tasks(env: gym.Env, split: str, episodes: int, seed: int) -> list[str]:
    """``episodes`` task ids of ``split``: a seeded sample without replacement (cycling through
    the whole split first when more episodes than tasks are asked for)."""
    ids = env.unwrapped.task_ids(split)  # type: ignore[attr-defined]
    rng = TaskRng("evaluation", split, seed)
    chosen: list[str] = []
    while len(chosen) < episodes:
        take = min(len(ids), episodes - len(chosen))
        chosen += [ids[i] for i in rng.sample(range(len(ids)), take)]
    return chosen


def play_episode(
    env: gym.Env, agent: Agent, *, task_id: str, seed: int, env_id: str = ""
) -> EpisodeRecord:
    """Play one episode of ``task_id`` with ``agent``."""
    observation, info = env.reset(seed=seed, options={"task_id": task_id})
    agent.reset(env)
    total, steps, invalid = 0.0, 0, 0
    terminated = truncated = False
    while not (terminated or truncated):
        action = agent.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        steps += 1
        invalid += bool(info.get("invalid_action"))
    return EpisodeRecord(
        env_id=env_id or (env.spec.id if env.spec else type(env.unwrapped).__name__),
        task_id=task_id,
        seed=seed,
        success=bool(info.get("success")),
        reward=total,
        steps=steps,
        invalid_actions=invalid,
        truncated=bool(truncated and not terminated),
    )


def evaluate(
    env_id: str,
    agent: Agent | Callable[[], Agent],
    *,
    split: str = "eval",
    episodes: int = 50,
    seed: int = 0,
    task_ids: Sequence[str] | None = None,
    progress: bool = True,
    make_kwargs: dict[str, Any] | None = None,
) -> EvalResult:
    """Evaluate ``agent`` on ``episodes`` tasks of ``split`` (or on ``task_ids``).

    Episode ``i`` is played with seed ``seed + i``; the tasks come from :func:`choose_tasks`, so
    the same arguments always play the same episodes.
    """
    env = gym.make(env_id, **(make_kwargs or {}))
    player = agent() if callable(agent) and not isinstance(agent, Agent) else agent
    tasks = list(task_ids) if task_ids is not None else choose_tasks(env, split, episodes, seed)
    result = EvalResult(env_id=env_id, agent=player.name, split=split)
    bar = tqdm(
        tasks, desc=f"{env_id} [{player.name}]", unit="ep", disable=not progress, leave=False
    )
    for index, task_id in enumerate(bar):
        result.records.append(
            play_episode(env, player, task_id=task_id, seed=seed + index, env_id=env_id)
        )
        bar.set_postfix(success=f"{result.success_rate:.0%}", refresh=False)
    env.close()
    return result
