"""Many Crafter games stepped in one process, with one symbolic observation batch per step.

With a small policy, the per-environment Python overhead of a generic vector environment (a
``gymnasium`` wrapper stack and an ``info`` dict per game per step) costs as much as the game.
:class:`CrafterSymbolicVectorEnv` drives :class:`~llmgym.envs.crafter.game.CrafterGame` objects
directly and writes every observation into one ``(num_envs, 1093)`` array; the games, worlds and
observations are those of ``llmgym/CrafterSymbolic-v0``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from llmgym.envs.crafter import ACHIEVEMENTS, ACTIONS
from llmgym.envs.crafter.config import CrafterConfig
from llmgym.envs.crafter.env import TRAIN_SEEDS
from llmgym.envs.crafter.game import CrafterGame, crafter_world_seed
from llmgym.envs.crafter.symbolic import SYMBOLIC_SIZE, SymbolicObserver
from llmgym.errors import ConfigError

__all__ = ["CrafterSymbolicVectorEnv"]


def _config_dict(design: Any) -> dict[str, Any]:
    """A design's overrides: a :class:`~llmgym.envgen.Design` (its ``config``) or a mapping."""
    config = getattr(design, "config", design)
    if not isinstance(config, Mapping):
        raise TypeError(f"a design is a Design or a mapping of config overrides, not {design!r}")
    return dict(config)


class CrafterSymbolicVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` Crafter games in one process; ``step`` takes an array of action indices and
    returns one ``(num_envs, 1093)`` float32 observation array (the layout of
    ``llmgym/CrafterSymbolic-v0``), rewards, terminations and truncations.

    A finished game is reset within the same step (gymnasium's ``AutoresetMode.SAME_STEP``): the
    returned observation is the new episode's first, and ``infos`` carries, for the games that
    finished (mask ``infos["_episode"]``), ``final_obs``, ``episode`` (``{"r": return, "l":
    length}``), ``achievements`` (a bool array over crafter's 22 achievements, in
    :data:`~llmgym.envs.crafter.ACHIEVEMENTS` order) and ``design`` (the design index the episode
    used, ``-1`` for the base config).

    Each episode plays the world of a train task drawn at random (train task ``n`` is
    ``reset(seed=n)`` of CrafterSymbolic-v0, crafter's seed ``n``) under the base ``config``, or,
    with probability ``ratio``, under one of the ``designs`` (config overrides on top of the base,
    EnvGen's designed environments; drawn uniformly), as :class:`~llmgym.envgen.ConfigMixture`
    does for one environment.

    Args:
        num_envs: The number of games (>= 1).
        config: The base :class:`~llmgym.envs.crafter.config.CrafterConfig` or overrides; the
            target defaults to ``"none"`` as the registered id.
        designs: Config overrides (mappings or ``Design`` objects) for designed episodes.
        ratio: The probability that an episode uses a design, in [0, 1].
        seed: Seeds the draws of worlds and designs.
    """

    # gymnasium's VectorEnv declares it an instance attribute
    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int,
        config: CrafterConfig | Mapping[str, Any] | None = None,
        *,
        designs: Sequence[Any] = (),
        ratio: float = 0.0,
        seed: int | None = None,
    ) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ConfigError("num_envs", f"{num_envs!r} is not an integer >= 1")
        self.num_envs = num_envs
        if isinstance(config, CrafterConfig):
            self.config = config
        else:
            self.config = CrafterConfig.from_dict({"target": "none", **dict(config or {})})
        self.single_observation_space = spaces.Box(0.0, 1.0, (SYMBOLIC_SIZE,), np.float32)
        self.single_action_space = spaces.Discrete(len(ACTIONS))
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.ratio = ratio
        self._designs: list[CrafterConfig] = []
        self.set_designs(designs)
        self._rng = np.random.default_rng(seed)
        self._make_games()
        self._observations = np.zeros((num_envs, SYMBOLIC_SIZE), np.float32)
        self._targets: list[str | None] = [None] * num_envs
        self.design_indices = np.full(num_envs, -1, np.int64)
        """The design each game's current episode plays (``-1``: the base config)."""
        self._returns = np.zeros(num_envs, np.float64)
        self._lengths = np.zeros(num_envs, np.int64)
        self.task_indices = np.zeros(num_envs, np.int64)
        """The train task (crafter seed) each game's current episode plays."""

    @property
    def ratio(self) -> float:
        """The probability that an episode uses a design."""
        return self._ratio

    @ratio.setter
    def ratio(self, value: float) -> None:
        if not 0.0 <= value <= 1.0:
            raise ConfigError("ratio", f"{value!r} is outside the allowed range [0, 1]")
        self._ratio = float(value)

    def set_designs(self, designs: Sequence[Any]) -> None:
        """Replace the designs (validated now; they take effect at each game's next reset)."""
        self._designs = [self.config.merged(_config_dict(design)) for design in designs]

    def _make_games(self) -> None:
        """Create the ``num_envs`` games (their episodes start at :meth:`reset`)."""
        self._games = [CrafterGame() for _ in range(self.num_envs)]
        self._observer = SymbolicObserver()

    # ------------------------------------------------------------------ episodes
    def _start(self, index: int) -> None:
        config, design = self.config, -1
        if self._designs and self._rng.random() < self._ratio:
            design = int(self._rng.integers(len(self._designs)))
            config = self._designs[design]
        task = int(self._rng.integers(TRAIN_SEEDS))
        self._reset_game(index, crafter_world_seed(task), config)
        if config.target == "task":
            target: str | None = str(self._rng.choice(ACHIEVEMENTS))
        else:
            target = None if config.target == "none" else config.target
        self._targets[index] = target
        self.design_indices[index] = design
        self.task_indices[index] = task
        self._returns[index] = 0.0
        self._lengths[index] = 0
        self._observe_started(index)

    def _reset_game(self, index: int, world_seed: int, config: CrafterConfig) -> None:
        """Start game ``index``'s new episode in the world of ``world_seed``."""
        self._games[index].reset(world_seed, config)

    def _observe_started(self, index: int) -> None:
        """Write game ``index``'s first observation of its new episode."""
        self._observer.observe(self._games[index], self._observations[index])

    def _unlocked(self, index: int) -> Collection[str]:
        """The achievements game ``index`` has unlocked in its current episode."""
        return self._games[index].unlocked

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new episode in every game (``seed`` re-seeds the draws)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        for index in range(self.num_envs):
            self._start(index)
        return self._observations.copy(), {"design": self.design_indices.copy()}

    def step(
        self, actions: np.ndarray | Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Advance every game by its action index (0-16)."""
        actions = self._checked(actions)
        count = self.num_envs
        rewards = np.zeros(count, np.float32)
        terminated = np.zeros(count, bool)
        truncated = np.zeros(count, bool)
        finished: list[int] = []
        for index, (game, action) in enumerate(zip(self._games, actions.tolist(), strict=True)):
            result = game.step(action, render=False)
            target = self._targets[index]
            reached = target is not None and target in game.unlocked
            ended = result.dead or (reached and game.config.end_on_target)
            rewards[index] = result.reward
            terminated[index] = ended
            truncated[index] = result.over and not ended
            self._returns[index] += result.reward
            self._lengths[index] += 1
            self._observer.observe(game, self._observations[index])
            if ended or result.over:
                finished.append(index)
        return self._finish_step(finished, rewards, terminated, truncated)

    def _checked(self, actions: np.ndarray | Sequence[int]) -> np.ndarray:
        """``actions`` as an array of ``num_envs`` action indices, or a ValueError."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(
                f"actions must be {self.num_envs} integers, got an array of shape "
                f"{actions.shape} and dtype {actions.dtype}"
            )
        if actions.min() < 0 or actions.max() >= len(ACTIONS):
            raise ValueError(f"action indices must be in 0-{len(ACTIONS) - 1}, got {actions}")
        return actions

    def _finish_step(
        self,
        finished: list[int],
        rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The step's return, after the finished games' final infos and their resets."""
        infos: dict[str, Any] = {}
        if finished:
            infos = self._final_infos(finished)
            for index in finished:
                self._start(index)
        return self._observations.copy(), rewards, terminated, truncated, infos

    def _final_infos(self, finished: list[int]) -> dict[str, Any]:
        count = self.num_envs
        mask = np.zeros(count, bool)
        mask[finished] = True
        final_obs = np.zeros((count, SYMBOLIC_SIZE), np.float32)
        achievements = np.zeros((count, len(ACHIEVEMENTS)), bool)
        for index in finished:
            final_obs[index] = self._observations[index]
            unlocked = self._unlocked(index)
            achievements[index] = [name in unlocked for name in ACHIEVEMENTS]
        return {
            "final_obs": final_obs,
            "_final_obs": mask,
            "episode": {
                "r": np.where(mask, self._returns, 0.0),
                "l": np.where(mask, self._lengths, 0),
            },
            "_episode": mask,
            "achievements": achievements,
            "_achievements": mask,
            "design": np.where(mask, self.design_indices, -1),
            "_design": mask,
        }
