"""Household: ALFWorld's six household task types in procedurally generated rooms.

* :mod:`~llmgym.envs.household.catalog` — the receptacle, object and room data.
* :mod:`~llmgym.envs.household.world` — a room's state, the command grammar and the rules.
* :mod:`~llmgym.envs.household.generation` — layouts, the train/eval layout pools, tasks.
* :mod:`~llmgym.envs.household.planner` — the oracle.
* :mod:`~llmgym.envs.household.env` — :class:`HouseholdEnv` and :class:`HouseholdConfig`.
"""

from llmgym.envs.household.env import HouseholdConfig, HouseholdEnv
from llmgym.envs.household.world import Goal, Item, Receptacle, World

__all__ = ["Goal", "HouseholdConfig", "HouseholdEnv", "Item", "Receptacle", "World"]
