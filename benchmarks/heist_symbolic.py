"""Heist games stepped in one process with one symbolic observation batch, for the PPO of
``benchmarks/ppo_torch.py`` (``envgen_crafter.py --obs symbolic --env llmgym/Heist-v0``).

Each game is a ``llmgym/Heist-v0`` environment (its levels, rules and config); the observation
is its map one-hot per cell over 10 kinds (wall, floor, agent, gem, blue/green/red key,
blue/green/red locked door), padded to a 13x13 world (procgen's hard distribution; the easy one
is 9x9), then the keys held (3 values). The batch follows the protocol of
``CrafterSymbolicVectorEnv``: finished games reset in the same step, ``infos`` carries
``final_obs``, ``episode``, ``achievements`` (over Heist's skills) and ``design`` for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

import llmgym  # noqa: F401
from llmgym.envs.heist.env import HEIST_SKILLS, HeistConfig

GRID = 13
KINDS = "#.@$bgrBGR"
OBS_SIZE = GRID * GRID * len(KINDS) + 3
MOVES = ("move up", "move down", "move left", "move right")
_LOOKUP = np.full(128, -1, np.int64)
for _index, _char in enumerate(KINDS):
    _LOOKUP[ord(_char)] = _index


class HeistSymbolicVectorEnv:
    """``num_envs`` Heist games with one ``(num_envs, OBS_SIZE)`` observation array per step."""

    def __init__(
        self,
        num_envs: int,
        config: Mapping[str, Any] | None = None,
        *,
        designs: Sequence[Any] = (),
        ratio: float = 0.0,
        seed: int | None = None,
    ) -> None:
        self.num_envs = num_envs
        self.config = HeistConfig.from_dict(dict(config or {}))
        self.single_observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        self.single_action_space = spaces.Discrete(len(MOVES))
        self.ratio = ratio
        self._designs: list[dict[str, Any]] = []
        self.set_designs(designs)
        self._rng = np.random.default_rng(seed)
        self._envs = [gym.make("llmgym/Heist-v0").unwrapped for _ in range(num_envs)]
        self._observations = np.zeros((num_envs, OBS_SIZE), np.float32)
        self.design_indices = np.full(num_envs, -1, np.int64)
        self._returns = np.zeros(num_envs)
        self._lengths = np.zeros(num_envs, np.int64)

    def set_designs(self, designs: Sequence[Any]) -> None:
        """Replace the designs (validated: a level larger than the 13x13 grid is refused)."""
        merged = []
        for design in designs:
            overrides = dict(getattr(design, "config", design))
            config = self.config.merged(overrides)
            if config.world_size() > GRID:
                raise ValueError(f"a design's world ({config.world_size()}) exceeds {GRID}x{GRID}")
            merged.append(config.to_dict())
        self._designs = merged

    def _start(self, index: int) -> None:
        config, design = self.config.to_dict(), -1
        if self._designs and self._rng.random() < self.ratio:
            design = int(self._rng.integers(len(self._designs)))
            config = self._designs[design]
        env = self._envs[index]
        task = int(self._rng.integers(env.train_size))
        env.reset(options={"task_id": f"train/{task:05d}", "config": config})
        self.design_indices[index] = design
        self._returns[index] = 0.0
        self._lengths[index] = 0
        self._observe(index)

    def _observe(self, index: int) -> None:
        env = self._envs[index]
        rows = env._map_rows()
        size = len(rows)
        codes = np.frombuffer("".join(rows).encode(), np.uint8).reshape(size, size)
        out = self._observations[index]
        out.fill(0.0)
        grid = out[: GRID * GRID * len(KINDS)].reshape(GRID, GRID, len(KINDS))
        kinds = _LOOKUP[codes]
        rr, cc = np.nonzero(kinds >= 0)
        grid[rr, cc, kinds[rr, cc]] = 1.0
        held = env.state.keys_held
        start = GRID * GRID * len(KINDS)
        out[start : start + len(held)] = held

    def reset(self, *, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        for index in range(self.num_envs):
            self._start(index)
        return self._observations.copy(), {"design": self.design_indices.copy()}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        count = self.num_envs
        rewards = np.zeros(count, np.float32)
        terminated = np.zeros(count, bool)
        truncated = np.zeros(count, bool)
        finished = []
        for index, action in enumerate(np.asarray(actions).tolist()):
            env = self._envs[index]
            _, reward, ended, cut, _ = env.step(MOVES[action])
            rewards[index], terminated[index], truncated[index] = reward, ended, cut
            self._returns[index] += reward
            self._lengths[index] += 1
            self._observe(index)
            if ended or cut:
                finished.append(index)
        infos: dict[str, Any] = {}
        if finished:
            mask = np.zeros(count, bool)
            mask[finished] = True
            achievements = np.zeros((count, len(HEIST_SKILLS)), bool)
            for index in finished:
                done = self._envs[index].skills_achieved()
                achievements[index] = [skill in done for skill in HEIST_SKILLS]
            infos = {
                "final_obs": np.where(mask[:, None], self._observations, 0.0),
                "_final_obs": mask,
                "episode": {
                    "r": np.where(mask, self._returns, 0.0),
                    "l": np.where(mask, self._lengths, 0),
                },
                "_episode": mask,
                "achievements": achievements,
                "design": np.where(mask, self.design_indices, -1),
            }
            for index in finished:
                self._start(index)
        return self._observations.copy(), rewards, terminated, truncated, infos
