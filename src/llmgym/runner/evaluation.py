"""Evaluation: run an agent on a split's tasks (or a suite) and summarise the outcome; the
overall score of several environments; the size of a run, estimated before it starts."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmgym.agents.base import Agent
from llmgym.runner.rollout import EnvSource, episode_specs, is_server_error, rollout
from llmgym.runner.trajectories import Trajectory
from llmgym.wrappers import make_chat_env

__all__ = [
    "EvalResult",
    "RunEstimate",
    "estimate_run",
    "evaluate",
    "overall_score",
    "wilson_interval",
]


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
        ``format_errors`` (replies without a parseable action), ``server_errors`` (episodes
        ended by a model request that failed for good), ``invalid_actions``, ``tokens`` and
        ``errors`` (episodes that ended in an error of any kind, server errors included)."""
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
            "server_errors": sum(map(is_server_error, runs)),
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
    history_window: int | None = None,
    record_frames: bool = False,
) -> EvalResult:
    """Evaluate ``agent`` on ``episodes`` tasks of ``split`` (default 50), or on exactly
    ``task_ids`` (each once unless ``episodes`` says otherwise).

    ``env`` is an environment id — made with ReAct prompting and chat history matching
    ``agent.react`` (the last ``history_window`` exchanges of it, if given) — or a factory of a
    ready environment. Episode ``i`` is reset with ``seed + i`` and the tasks are a seeded sample
    of the split, so the same arguments always play the same episodes, whatever ``concurrency``
    is. See :func:`llmgym.runner.rollout.rollout` (``record_frames`` too).
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
        history_window=history_window,
        record_frames=record_frames,
    )
    env_id = env if isinstance(env, str) else (trajectories[0].env_id if trajectories else "")
    return EvalResult(env_id=env_id, agent=agent.name, split=split, trajectories=trajectories)


def overall_score(
    results: Sequence[EvalResult], *, suite: str | None = None, skipped: int = 0
) -> dict[str, Any]:
    """The mean success rate over environments (each counts once, as AgentGym reports), and the
    line that names it: the ``suite`` score only when no environment of the suite was
    ``skipped`` and no episode was lost to a model server error.

    Returns:
        ``{"mean_success", "environments", "planned", "server_errors", "suite_score", "label"}``
        where ``suite_score`` is the mean when it deserves that name, else ``None``.
    """
    played = [r for r in results if r.episodes]
    mean = statistics.fmean(r.success_rate for r in played) if played else 0.0
    lost = sum(r.summary()["server_errors"] for r in results)
    planned = len(played) + skipped
    if suite is not None and not skipped and not lost and played:
        label = (
            f"suite score ({suite}): {mean:.3f}, the mean success over {len(played)} environments"
        )
    elif suite is not None and skipped:
        label = (
            f"partial: {len(played)} of {planned} environments of {suite} ({skipped} skipped), "
            f"mean success {mean:.3f}; not a suite score"
        )
    else:
        label = f"mean success over {len(played)} environments: {mean:.3f}"
    if lost:
        episodes = "episode" if lost == 1 else "episodes"
        label += f"; {lost} {episodes} ended by model server errors" + (
            ", not a suite score" if suite is not None and not skipped else ""
        )
    return {
        "mean_success": mean,
        "environments": len(played),
        "planned": planned,
        "server_errors": lost,
        "suite_score": mean if label.startswith("suite score") else None,
        "label": label,
    }


@dataclass
class RunEstimate:
    """What a run of one environment will send, estimated before it starts (``--dry-run``).

    Tokens are counted as characters / 4. An episode is assumed to use every turn up to
    ``turns`` (its limit, or ``assumed_turns`` where the environment has none), each later
    observation as long as the first, and replies of ``reply_tokens`` tokens.
    """

    env_id: str
    episodes: int
    turns: int
    turn_limit: int | None
    first_prompt_tokens: int
    """Tokens of the first request (system prompt, task and first observation), on average."""
    turn_tokens: int
    """Tokens each exchange adds to the conversation (a reply and an observation)."""
    reply_tokens: int
    """The reply length assumed in ``turn_tokens``."""

    def prompt_tokens(self, window: int | None = None) -> int:
        """Prompt tokens of the whole run, keeping the last ``window`` exchanges (``None``:
        the whole history)."""
        kept = sum(t if window is None else min(t, window) for t in range(self.turns))
        per_episode = self.turns * self.first_prompt_tokens + kept * self.turn_tokens
        return self.episodes * per_episode


def estimate_run(
    env: EnvSource,
    *,
    react: bool = True,
    split: str = "eval",
    episodes: int | None = None,
    task_ids: Sequence[str] | None = None,
    seed: int = 0,
    reply_tokens: int = 64,
    assumed_turns: int = 50,
    sample: int = 20,
    make_kwargs: Mapping[str, Any] | None = None,
) -> RunEstimate:
    """Estimate a run of :func:`evaluate` with the same arguments without contacting a model:
    the episodes it plays and, from the first observation of up to ``sample`` of its tasks,
    the prompt tokens it sends (see :class:`RunEstimate`)."""
    chat = env() if callable(env) else make_chat_env(env, react=react, **(make_kwargs or {}))
    try:
        specs = episode_specs(chat, split, episodes, task_ids, seed)
        first, growth = [], []
        for spec in specs[:sample]:
            _, info = chat.reset(seed=spec.seed, options={"task_id": spec.task_id})
            messages = info.get("messages") or []
            first.append(sum(len(m["content"]) for m in messages) // 4)
            growth.append(len(str(info.get("env_observation", ""))) // 4 + reply_tokens)
        limit = chat.spec.max_episode_steps if chat.spec is not None else None
        env_id = env if isinstance(env, str) else (chat.spec.id if chat.spec else "")
    finally:
        chat.close()
    return RunEstimate(
        env_id=env_id,
        episodes=len(specs),
        turns=limit or assumed_turns,
        turn_limit=limit,
        first_prompt_tokens=round(statistics.fmean(first)) if first else 0,
        turn_tokens=round(statistics.fmean(growth)) if growth else 0,
        reply_tokens=reply_tokens,
    )
