"""A horizon curriculum: the number of turns an episode may last grows in stages during training.

AgentGym-RL's ScalingInter-RL (arXiv 2509.08755) starts RL with short interactions and allows
longer ones as training goes on, which kept long-horizon training stable. Here that is two
pieces any trainer can use:

* :class:`HorizonCurriculum` — the schedule: ``stages=[(0, 5), (100, 10), (300, 20)]`` allows
  5 turns from position 0, 10 from position 100 and 20 from 300. The position is the training
  step (the trainer sets it, e.g. with :func:`llmgym.integrations.trl.horizon_callback`) or the
  number of episodes started (counted by the wrapper), as ``unit`` says.
* :class:`HorizonLimit` — a wrapper that truncates each episode at the horizon in force when it
  started, with ``info["truncated_by"] = "horizon"``; ``info["horizon"]`` (from reset on) holds
  the horizon and the schedule, and :class:`~llmgym.runner.trajectories.TrajectoryBuilder` keeps
  it in the trajectory's ``metadata``.

Several environments (one per rollout worker) can share one curriculum.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any, Literal, SupportsFloat

import gymnasium as gym

from llmgym.wrappers.base import TextEnvWrapper

__all__ = ["HorizonCurriculum", "HorizonLimit"]

Unit = Literal["step", "episode"]


class HorizonCurriculum:
    """A staged schedule of the allowed number of turns per episode.

    Args:
        stages: ``(start, horizon)`` pairs: from position ``start`` on, episodes may last
            ``horizon`` turns. Starts strictly increase, the first is 0, horizons are positive.
        unit: ``"step"`` — the position is the training step, set by the trainer with
            :meth:`set_position`; ``"episode"`` — the position is the number of episodes started
            under the curriculum, counted by :class:`HorizonLimit`.
    """

    def __init__(self, stages: Sequence[tuple[int, int]], unit: Unit = "step") -> None:
        stages = [(int(start), int(horizon)) for start, horizon in stages]
        if not stages or stages[0][0] != 0:
            raise ValueError("HorizonCurriculum: the first stage must start at position 0")
        starts = [start for start, _ in stages]
        if any(later <= earlier for earlier, later in itertools.pairwise(starts)):
            raise ValueError(f"HorizonCurriculum: stage starts must increase, got {starts}")
        if any(horizon < 1 for _, horizon in stages):
            raise ValueError("HorizonCurriculum: every horizon must be at least 1 turn")
        if unit not in ("step", "episode"):
            raise ValueError(f"HorizonCurriculum: unit must be 'step' or 'episode', got {unit!r}")
        self.stages: tuple[tuple[int, int], ...] = tuple(stages)
        self.unit: Unit = unit
        self._position = 0
        self._lock = threading.Lock()

    @property
    def position(self) -> int:
        """The current training step or episode count."""
        return self._position

    def set_position(self, position: int) -> None:
        """Move the schedule to ``position`` (the trainer's step, for ``unit="step"``)."""
        if position < 0:
            raise ValueError(f"HorizonCurriculum: position must be >= 0, got {position}")
        self._position = int(position)

    def start_episode(self) -> int:
        """Called once per reset: the horizon of the episode that starts (and, for
        ``unit="episode"``, count it)."""
        with self._lock:
            horizon = self.horizon()
            if self.unit == "episode":
                self._position += 1
            return horizon

    def horizon(self, position: int | None = None) -> int:
        """The horizon at ``position`` (default: the current one)."""
        at = self._position if position is None else position
        return next(horizon for start, horizon in reversed(self.stages) if at >= start)

    def describe(self) -> dict[str, Any]:
        """The schedule and where it stands (``stages``, ``unit``, ``position``), as recorded in
        ``info`` and trajectories."""
        return {
            "stages": [list(stage) for stage in self.stages],
            "unit": self.unit,
            "position": self._position,
        }

    def __repr__(self) -> str:
        return f"HorizonCurriculum(stages={list(self.stages)}, unit={self.unit!r})"

    def __deepcopy__(self, memo: dict[int, Any]) -> HorizonCurriculum:
        """A schedule at the same position that counts on its own (``env.spec`` records one).
        Pickling still fails: a copy in another process would silently stop following the
        trainer's :meth:`set_position`."""
        twin = HorizonCurriculum(self.stages, self.unit)
        twin._position = self._position
        return twin


class HorizonLimit(TextEnvWrapper):
    """Truncates each episode after the number of turns its curriculum allows when it starts.

    ``reset`` puts ``info["horizon"] = {"limit": N, "stages": ..., "unit": ..., "position": ...}``
    (the position before this episode was counted); the step that reaches the limit without
    ending the episode returns ``truncated=True`` and ``info["truncated_by"] = "horizon"``.
    The wrapped environment's own ends are passed through unchanged.
    """

    def __init__(self, env: gym.Env, curriculum: HorizonCurriculum) -> None:
        super().__init__(env, curriculum=curriculum)
        self.curriculum = curriculum
        self.limit = curriculum.horizon()
        self.turns = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        described = self.curriculum.describe()
        self.limit = self.curriculum.start_episode()
        self.turns = 0
        info = dict(info)
        info["horizon"] = {"limit": self.limit, **described}
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.turns += 1
        if self.turns >= self.limit and not (terminated or truncated):
            truncated = True
            info = dict(info)
            info["truncated_by"] = "horizon"
        return observation, reward, terminated, truncated, info
