"""Pixel variants of llmgym games: RGB frames and ``Discrete`` actions over the same rules.

A pixel variant (``CrafterPixels-v0``, ``HeistPixels-v0``, ``ProcgenHeist-v0``) plays the game
that its text sibling plays; only the interface differs. :class:`PixelEnv` is that interface:
a ``Box`` observation space of frames, a ``Discrete`` action space whose indices stand for the
commands the game's :meth:`~llmgym.core.env.TextEnv._step` reads, ``rgb_array`` rendering, and
invalid actions explained in ``info["feedback"]`` (an image cannot say why).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeAlias

import numpy as np
from gymnasium import spaces

from llmgym.core.config import ConfigT, EnvConfig
from llmgym.core.env import TextEnv, Transition

__all__ = ["FRAME_SHAPE", "PixelAction", "PixelEnv"]

FRAME_SHAPE = (64, 64, 3)
"""The shape of every pixel variant's observation: a 64x64 RGB image."""

PixelAction: TypeAlias = int | np.integer[Any] | str
"""A pixel variant's action: an index into its ``Discrete`` space, or the command's name."""


class PixelEnv(TextEnv[ConfigT, np.ndarray, PixelAction]):
    """Base of the pixel variants: :data:`FRAME_SHAPE` RGB observations, ``Discrete`` actions.

    A subclass lists the command of each action index in ``action_commands``. Names are
    accepted as actions too; an index outside the range, text that is not a command, and any
    other object are invalid: the state is unchanged, the last frame is shown again and
    ``info["feedback"]`` says why.
    """

    # gymnasium's Env declares it an instance attribute
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 15}  # noqa: RUF012
    action_commands: ClassVar[tuple[str, ...]] = ()
    """The command :meth:`_step` reads for each action index."""

    def __init__(self, config: EnvConfig | Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self.observation_space = spaces.Box(0, 255, FRAME_SHAPE, np.uint8)
        self.action_space = spaces.Discrete(len(self.action_commands))

    def _command(self, action: PixelAction) -> str:
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            count = len(self.action_commands)
            return self.action_commands[int(action)] if 0 <= action < count else str(int(action))
        return action if isinstance(action, str) else self.quote(action)

    def _repeat_frame(self, feedback: str) -> Transition[np.ndarray]:
        """An invalid action's transition: the last frame again, ``feedback`` in ``info``
        (rendering anew could draw from the game's random stream)."""
        return Transition(
            np.array(self._last_observation), invalid=True, info={"feedback": feedback}
        )

    def sample_action(self, rng: np.random.Generator) -> int:
        return int(rng.integers(len(self.action_commands)))

    def pixel_frame(self) -> np.ndarray | None:
        """The latest frame (the observation itself)."""
        last = self._last_observation
        return np.array(last) if isinstance(last, np.ndarray) else None

    def render(self) -> np.ndarray | None:
        """The latest frame (``render_mode="rgb_array"``)."""
        if self.render_mode == "rgb_array":
            return np.array(self._last_observation)
        return None
