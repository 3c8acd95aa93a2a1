"""Recording: every finished episode appended to a JSON-lines trajectory file."""

from __future__ import annotations

import os
from typing import Any, SupportsFloat

import gymnasium as gym

from llmgym.runner.frames import frame_source
from llmgym.runner.trajectories import TrajectoryBuilder, append_trajectory
from llmgym.wrappers.base import TextEnvWrapper

__all__ = ["RecordTrajectory"]


class RecordTrajectory(TextEnvWrapper):
    """Appends each finished episode to ``path`` in llmgym's trajectory schema
    (:mod:`llmgym.runner.trajectories`). Put it outermost, so it sees the agent's raw replies and
    the ``thought``/``parsed_action`` a :class:`~llmgym.wrappers.ReActWrapper` extracts.

    Args:
        env: The environment.
        path: The JSON-lines file (created if missing, appended to otherwise).
        agent: A name recorded with each trajectory.
        frames: Also record a frame of the reset and of every step, PNG-encoded in a file
            beside ``path`` (``path + ".frames"``; see :mod:`llmgym.runner.frames`): a pixel
            environment's observations, or the picture a text environment draws of its state
            (:meth:`~llmgym.TextEnv.pixel_frame`; Crafter-v0 and Heist-v0 draw one).
            ``llmgym view`` replays them and ``llmgym render`` makes a GIF of them.
    """

    def __init__(
        self,
        env: gym.Env,
        path: str | os.PathLike[str],
        agent: str = "",
        *,
        frames: bool = False,
    ) -> None:
        super().__init__(env, path=os.fspath(path), agent=agent, frames=frames)
        self.path = os.fspath(path)
        env_id = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
        self._builder = TrajectoryBuilder(env_id, agent, frame_source(env) if frames else None)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        task = getattr(self.env.unwrapped, "task", None)
        config = task.config.to_dict() if task is not None else {}
        self._builder.start(observation, info, seed=seed, config=config)
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        finished = self._builder.add(
            action, observation, float(reward), terminated, truncated, info
        )
        if finished is not None:
            append_trajectory(self.path, finished)
        return observation, reward, terminated, truncated, info
