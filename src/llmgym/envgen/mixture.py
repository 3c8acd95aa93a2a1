"""Training on designed environments: a mixture of the designs and the original environment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym

from llmgym.envgen.parsing import Design
from llmgym.wrappers.sampling import EpisodeChoiceWrapper

__all__ = ["ConfigMixture", "make_mixture_vector_env"]


class ConfigMixture(EpisodeChoiceWrapper):
    """Each episode is drawn from the designed configs (with probability ``ratio``, uniformly
    among them) or from the original environment. ``info["design"]`` is the index of the design
    used, ``-1`` for the original.

    :meth:`set_designs` swaps in new designs between training cycles; in a vector environment,
    call it through the vector API (``vec_env.call("set_designs", designs)``, or
    stable-baselines3's ``env_method``), so worker processes keep running.

    Args:
        env: The environment (its reset must accept ``options={"config": {...}}``).
        designs: :class:`~llmgym.envgen.Design` objects or config-override dicts.
        ratio: Probability that an episode uses a design (``1.0``: designs only).
        seed: Seeds the draws (``reset(seed=...)`` re-seeds them).
    """

    def __init__(
        self,
        env: gym.Env,
        designs: Sequence[Design | Mapping[str, Any]] = (),
        *,
        ratio: float = 0.5,
        seed: int | None = None,
    ) -> None:
        super().__init__(env, seed, designs=designs, ratio=ratio)
        if not 0.0 <= ratio <= 1.0:
            raise ValueError(f"ratio={ratio} must be in [0, 1]")
        self.ratio = ratio
        self.configs: list[dict[str, Any]] = []
        self.set_designs(designs)

    def set_designs(self, designs: Sequence[Design | Mapping[str, Any]]) -> None:
        """Replace the designed configs (takes effect at the next reset)."""
        self.configs = [dict(d.config) if isinstance(d, Design) else dict(d) for d in designs]

    def _reset_with(self, seed: int | None, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        index = -1
        if self.configs and "config" not in options and self._rng.random() < self.ratio:
            index = int(self._rng.integers(len(self.configs)))
            options["config"] = self.configs[index]
        observation, info = self.env.reset(seed=seed, options=options or None)
        return observation, {**info, "design": index}


def make_mixture_vector_env(
    env_id: str,
    num_envs: int,
    designs: Sequence[Design | Mapping[str, Any]] = (),
    *,
    ratio: float = 0.5,
    asynchronous: bool = True,
    seed: int = 0,
    **make_kwargs: Any,
) -> gym.vector.VectorEnv:
    """A gymnasium vector environment of :class:`ConfigMixture` copies (worker ``i`` seeded
    ``seed + i``). Update designs with ``vec_env.call("set_designs", designs)``."""

    def make(index: int) -> gym.Env:
        return ConfigMixture(
            gym.make(env_id, **make_kwargs), designs, ratio=ratio, seed=seed + index
        )

    factories = [lambda index=i: make(index) for i in range(num_envs)]
    if not asynchronous:
        return gym.vector.SyncVectorEnv(factories)
    return gym.vector.AsyncVectorEnv(factories)
