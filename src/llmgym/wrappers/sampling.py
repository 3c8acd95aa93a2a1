"""Instruction sampling: draw each episode's task from a split, uniformly or by weights."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from llmgym.wrappers.base import TextEnvWrapper

__all__ = ["EpisodeChoiceWrapper", "InstructionSampler"]


class EpisodeChoiceWrapper(TextEnvWrapper):
    """Base of wrappers that make a random choice for each episode (:class:`InstructionSampler`,
    :class:`~llmgym.envgen.ConfigMixture`): their draws come from ``self._rng``, seeded by
    ``seed`` and re-seeded by ``reset(seed=...)``. A subclass implements :meth:`_reset_with`
    and passes its other constructor arguments on by name, to be recorded
    (:class:`~llmgym.wrappers.TextEnvWrapper`).
    """

    def __init__(self, env: gym.Env, seed: int | None = None, **arguments: Any) -> None:
        super().__init__(env, seed=seed, **arguments)
        self._rng = np.random.default_rng(seed)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        return self._reset_with(seed, dict(options or {}))

    def _reset_with(self, seed: int | None, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Reset the wrapped environment: ``options`` is the caller's (a copy, free to change)
        and the choice is made here."""
        raise NotImplementedError


class InstructionSampler(EpisodeChoiceWrapper):
    """Every reset plays a task drawn from ``split`` with a seeded RNG.

    Draws are uniform, or proportional to ``weights`` — a sequence aligned with
    :attr:`task_ids` or a mapping from task id to weight (ids it leaves out get weight 0).
    :meth:`set_weights` changes them while running: the hook curricula and EnvGen use. A
    ``task_id`` passed in ``reset(options=...)`` is played as given.

    Args:
        env: An llmgym environment (or a wrapper around one).
        split: ``"train"`` or ``"eval"``.
        weights: Optional initial weights.
        seed: Seeds the draws; ``reset(seed=...)`` re-seeds them too.
        task_ids: Restrict the draws to these ids of the split (default: all of them).
    """

    def __init__(
        self,
        env: gym.Env,
        split: str = "train",
        weights: Sequence[float] | Mapping[str, float] | None = None,
        seed: int | None = None,
        task_ids: Sequence[str] | None = None,
    ) -> None:
        super().__init__(env, seed, split=split, weights=weights, task_ids=task_ids)
        self.split = split
        self.task_ids: Sequence[str] = (
            task_ids if task_ids is not None else self.text_env.task_ids(split)
        )
        if len(self.task_ids) == 0:
            raise ValueError(f"split {split!r} has no tasks")
        self._probabilities: np.ndarray | None = None
        self.set_weights(weights)

    def set_weights(self, weights: Sequence[float] | Mapping[str, float] | None) -> None:
        """Replace the sampling weights (``None``: uniform)."""
        if weights is None:
            self._probabilities = None
            return
        if isinstance(weights, Mapping):
            index = {task_id: i for i, task_id in enumerate(self.task_ids)}
            unknown = [task_id for task_id in weights if task_id not in index]
            if unknown:
                raise ValueError(
                    f"weights name task ids outside the {self.split!r} split, e.g. {unknown[0]!r}"
                )
            values = np.zeros(len(self.task_ids))
            for task_id, weight in weights.items():
                values[index[task_id]] = weight
        else:
            values = np.asarray(weights, dtype=float)
            if values.shape != (len(self.task_ids),):
                raise ValueError(
                    f"weights must have one entry per task ({len(self.task_ids)}), "
                    f"got {values.shape}"
                )
        if not np.all(np.isfinite(values)) or np.any(values < 0) or values.sum() <= 0:
            raise ValueError("weights must be finite, non-negative, and not all zero")
        self._probabilities = values / values.sum()

    def sample_task(self) -> str:
        """Draw the next task id."""
        if self._probabilities is None:
            return self.task_ids[int(self._rng.integers(len(self.task_ids)))]
        return self.task_ids[int(self._rng.choice(len(self.task_ids), p=self._probabilities))]

    def _reset_with(self, seed: int | None, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        if "task_id" not in options:
            options["task_id"] = self.sample_task()
            options.pop("split", None)
        return self.env.reset(seed=seed, options=options)
