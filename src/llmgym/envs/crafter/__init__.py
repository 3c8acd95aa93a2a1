"""Crafter for LLM agents (text) and small RL agents (pixels), on the ``crafter`` package's engine.

``llmgym.envs.crafter.score`` and the achievement list need no third-party package; the
environments themselves (:class:`CrafterEnv`, :class:`CrafterPixelsEnv`,
:class:`CrafterSymbolicEnv`, :class:`CrafterSymbolicVectorEnv`,
:class:`CrafterBatchedVectorEnv`) need ``crafter`` (``pip install -e '.[crafter]'``) and are
imported on first use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ACHIEVEMENTS",
    "ACTIONS",
    "CrafterBatchedVectorEnv",
    "CrafterConfig",
    "CrafterEnv",
    "CrafterPixelsEnv",
    "CrafterSymbolicEnv",
    "CrafterSymbolicVectorEnv",
    "score",
]

ACHIEVEMENTS: tuple[str, ...] = (
    "collect_coal",
    "collect_diamond",
    "collect_drink",
    "collect_iron",
    "collect_sapling",
    "collect_stone",
    "collect_wood",
    "defeat_skeleton",
    "defeat_zombie",
    "eat_cow",
    "eat_plant",
    "make_iron_pickaxe",
    "make_iron_sword",
    "make_stone_pickaxe",
    "make_stone_sword",
    "make_wood_pickaxe",
    "make_wood_sword",
    "place_furnace",
    "place_plant",
    "place_stone",
    "place_table",
    "wake_up",
)
"""Crafter's 22 achievements, in crafter's order (``crafter/data.yaml``)."""

ACTIONS: tuple[str, ...] = (
    "noop",
    "move_left",
    "move_right",
    "move_up",
    "move_down",
    "do",
    "sleep",
    "place_stone",
    "place_table",
    "place_furnace",
    "place_plant",
    "make_wood_pickaxe",
    "make_stone_pickaxe",
    "make_iron_pickaxe",
    "make_wood_sword",
    "make_stone_sword",
    "make_iron_sword",
)
"""Crafter's 17 actions; the index is the ``Discrete(17)`` action of ``CrafterPixels-v0``."""


def score(success_rates: Mapping[str, float]) -> float:
    """Crafter's score, in percent: ``exp(mean_i ln(1 + s_i)) - 1`` over the 22 achievements.

    Args:
        success_rates: Achievement name -> success rate **in percent** (0-100): the share of
            episodes in which it was unlocked at least once. Missing achievements count as 0.

    Raises:
        ValueError: For an unknown achievement name or a rate outside [0, 100].
    """
    unknown = sorted(set(success_rates) - set(ACHIEVEMENTS))
    if unknown:
        raise ValueError(f"unknown achievement {unknown[0]!r}; known: {', '.join(ACHIEVEMENTS)}")
    total = 0.0
    for name in ACHIEVEMENTS:
        rate = float(success_rates.get(name, 0.0))
        if not 0.0 <= rate <= 100.0:
            raise ValueError(f"success rate of {name} is {rate!r}; it must be a percentage 0-100")
        total += math.log(1.0 + rate)
    return math.exp(total / len(ACHIEVEMENTS)) - 1.0


def __getattr__(name: str) -> Any:
    if name == "CrafterConfig":
        from llmgym.envs.crafter.config import CrafterConfig

        return CrafterConfig
    if name in ("CrafterEnv", "CrafterPixelsEnv", "CrafterSymbolicEnv"):
        from llmgym.envs.crafter import env

        return getattr(env, name)
    if name == "CrafterBatchedVectorEnv":
        from llmgym.envs.crafter.batched import CrafterBatchedVectorEnv

        return CrafterBatchedVectorEnv
    if name == "CrafterSymbolicVectorEnv":
        from llmgym.envs.crafter.vector import CrafterSymbolicVectorEnv

        return CrafterSymbolicVectorEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
