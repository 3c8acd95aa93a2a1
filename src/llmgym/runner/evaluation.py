"""Evaluation: run an agent on a split's tasks (or a suite) and summarise the outcome."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmgym.agents.base import Agent
from llmgym.runner.rollout import EnvSource, rollout
from llmgym.runner.trajectories import Trajectory

__all__ = ["EvalResult", "evaluate", "wilson_interval"]


def wilson_interval(successes: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95% for ``z=1.96``)."""
    if total == 0:
        return (0.0, 0.0)
    rate = successes / total
    denominator = 1 + z * z / total
    centre = (rate + z * z / (2 * total)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class EvalResult:
    """An agent's results on one environment: the trajectories and their summary."""

    env_id: str
    agent: str
    split: str
    trajectories: list[Trajectory] = field(default_factory=list)

    @property
    def episodes(self) -> int:
        return len(self.trajectories)

    def _mean(self, values: Sequence[float]) -> float:
        return statistics.fmean(values) if values else 0.0

    @property
    def success_rate(self) -> float:
        return self._mean([t.success for t in self.trajectories])

    def summary(self) -> dict[str, Any]:
        """One results row: ``env_id``, ``agent``, ``split``, ``episodes``, ``success_rate``
        (with its 95% Wilson interval), ``mean_reward``, ``mean_steps``, ``mean_turns``,
        ``format_errors``, ``invalid_actions``, ``tokens`` and ``errors`` (episodes that hit an
        exception or a failed model request)."""
        runs = self.trajectories
        low, high = wilson_interval(sum(t.success for t in runs), len(runs))
        return {
            "env_id": self.env_id,
            "agent": self.agent,
            "split": self.split,
            "episodes": len(runs),
            "success_rate": self.success_rate,
            "success_ci95": [low, high],
            "mean_reward": self._mean([t.total_reward for t in runs]),
            "mean_steps": self._mean([t.steps for t in runs]),
            "mean_turns": self._mean([len(t.turns) for t in runs]),
            "format_errors": sum(t.format_errors for t in runs),
            "invalid_actions": sum(t.invalid_actions for t in runs),
            "tokens": sum(t.usage.get("total_tokens", 0) for t in runs),
            "errors": sum(t.error is not None for t in runs),
        }

    def per_episode(self) -> list[dict[str, Any]]:
        """One compact record per episode (the full turns are in the trajectories)."""
        return [
            {
                "task_id": t.task_id,
                "seed": t.seed,
                "success": t.success,
                "reward": t.total_reward,
                "steps": t.steps,
                "turns": len(t.turns),
                "invalid_actions": t.invalid_actions,
                "format_errors": t.format_errors,
                "tokens": t.usage.get("total_tokens", 0),
                "truncated": t.truncated,
                "error": t.error,
            }
            for t in self.trajectories
        ]

    def to_dict(self) -> dict[str, Any]:
        """The summary plus ``per_episode`` records."""
        return {**self.summary(), "per_episode": self.per_episode()}


def evaluate(
    env: EnvSource,
    agent: Agent,
    *,
    split: str = "eval",
    episodes: int | None = None,
    seed: int = 0,
    task_ids: Sequence[str] | None = None,
    concurrency: int = 1,
    progress: bool = True,
    on_trajectory: Callable[[Trajectory], None] | None = None,
    make_kwargs: Mapping[str, Any] | None = None,
) -> EvalResult:
    """Evaluate ``agent`` on ``episodes`` tasks of ``split`` (default 50), or on exactly
    ``task_ids`` (each once unless ``episodes`` says otherwise).

    ``env`` is an environment id — made with ReAct prompting and chat history matching
    ``agent.react`` — or a factory of a ready environment. Episode ``i`` is reset with
    ``seed + i`` and the tasks are a seeded sample of the split, so the same arguments always
    play the same episodes, whatever ``concurrency`` is. See :func:`llmgym.runner.rollout.rollout`.
    """
    trajectories = rollout(
        env,
        agent,
        split=split,
        episodes=episodes,
        task_ids=task_ids,
        seed=seed,
        concurrency=concurrency,
        progress=progress,
        on_trajectory=on_trajectory,
        make_kwargs=make_kwargs,
    )
    env_id = env if isinstance(env, str) else (trajectories[0].env_id if trajectories else "")
    return EvalResult(env_id=env_id, agent=agent.name, split=split, trajectories=trajectories)
