"""``CrafterConfig``: the world and episode knobs of Crafter (EnvGen's and ours)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmgym.core import EnvConfig, knob
from llmgym.envs.crafter import ACHIEVEMENTS
from llmgym.errors import ConfigError

__all__ = ["BIOMES", "ITEMS", "MATERIAL_ITEMS", "RARITIES", "TOOL_ITEMS", "CrafterConfig"]

BIOMES = ("natural", "grassland", "mountain", "beaches")
MATERIAL_ITEMS = ("sapling", "wood", "stone", "coal", "iron", "diamond")
TOOL_ITEMS = (
    "wood_pickaxe",
    "stone_pickaxe",
    "iron_pickaxe",
    "wood_sword",
    "stone_sword",
    "iron_sword",
)
ITEMS = MATERIAL_ITEMS + TOOL_ITEMS
RARITY_LEVELS = ("very common", "common", "rare")

RARITIES: dict[str, dict[str, float]] = {
    "coal": {"very common": 0.75, "common": 0.85, "rare": 0.95},
    "iron": {"very common": 0.65, "common": 0.75, "rare": 0.85},
    "diamond": {"very common": 0.85, "common": 0.90, "rare": 0.994},
    "tree": {"very common": 0.70, "common": 0.80, "rare": 0.90},
}
"""EnvGen's rarity levels as crafter's thresholds (a candidate cell holds the resource when a
uniform draw exceeds the threshold). Crafter's own values are coal, iron and tree ``common`` and
diamond ``rare``: the defaults."""


def _rarity(default: str, resource: str, where: str) -> Any:
    levels = RARITIES[resource]
    return knob(
        default,
        choices=RARITY_LEVELS,
        low=0.0,
        high=1.0,
        doc=f"How often {resource} appears {where}: 'very common', 'common' or 'rare' "
        f"(EnvGen's levels: {1 - levels['very common']:.3g}, {1 - levels['common']:.3g} or "
        f"{1 - levels['rare']:.3g} of candidate cells), or a number, the fraction of candidate "
        f"cells (0-1). Crafter's own value is '{default}'.",
    )


def _density(creature: str) -> Any:
    return knob(
        1.0,
        low=0.0,
        high=10.0,
        doc=f"Multiplier of Crafter's {creature} spawn rates (0: no {creature}s).",
    )


@dataclass(frozen=True)
class CrafterConfig(EnvConfig):
    """World and episode knobs of Crafter: EnvGen's (biome, resource rarity, starting
    inventory) and llmgym's (task target, creature densities, episode length, night)."""

    target: str = knob(
        "task",
        choices=("task", "none", *ACHIEVEMENTS),
        doc="The achievement that counts as success: 'task' (each task id names one of the 22, "
        "drawn from the id), an achievement name (every task), or 'none' (no target: success "
        "means surviving until the episode length, as in plain Crafter).",
    )
    end_on_target: bool = knob(
        True, doc="End the episode (terminated, success) as soon as the target is unlocked."
    )
    target_biome: str = knob(
        "natural",
        choices=BIOMES,
        doc="EnvGen's biome bias: 'natural' (Crafter's world), 'grassland' (little water and "
        "mountain), 'mountain' (mountains everywhere, start on a path), 'beaches' (more water "
        "and sand, little mountain).",
    )
    coal_rarity: str | float = _rarity("common", "coal", "in mountains")
    iron_rarity: str | float = _rarity("common", "iron", "in mountains")
    diamond_rarity: str | float = _rarity("rare", "diamond", "deep in mountains")
    tree_rarity: str | float = _rarity("common", "tree", "on grassland")
    inventory: dict[str, int] = knob(
        default_factory=dict,
        low=0,
        high=9,
        choices=ITEMS,
        doc="Starting items: materials (sapling, wood, stone, coal, iron, diamond) 0-9, tools "
        "(wood/stone/iron pickaxe and sword) 0-1. Starting items never count as achievements.",
    )
    cow_density: float = _density("cow")
    zombie_density: float = _density("zombie")
    skeleton_density: float = _density("skeleton")
    length: int = knob(
        10_000, low=1, high=1_000_000, doc="Steps before the episode is truncated (Crafter: 10000)."
    )
    night: bool = knob(
        True, doc="Whether night falls (darker view, more zombies); False keeps full daylight."
    )
    show_grid: bool = knob(
        False,
        doc="Text observations also draw the 9x7 local view as a character grid (with a legend).",
    )

    def validate(self) -> None:
        for name, amount in self.inventory.items():
            if not float(amount).is_integer():
                raise ConfigError(
                    f"CrafterConfig.inventory.{name}", f"{amount!r} is not a whole number"
                )
        object.__setattr__(self, "inventory", {k: int(v) for k, v in self.inventory.items()})
        for tool in TOOL_ITEMS:
            if self.inventory.get(tool, 0) > 1:
                raise ConfigError(
                    f"CrafterConfig.inventory.{tool}",
                    f"{self.inventory[tool]!r} is outside the allowed range; tools take 0 or 1",
                )

    def threshold(self, resource: str) -> float:
        """Crafter's threshold for ``resource`` (coal, iron, diamond or tree) under this config."""
        value = getattr(self, f"{resource}_rarity")
        if isinstance(value, str):
            return RARITIES[resource][value]
        return 1.0 - float(value)

    @classmethod
    def from_envgen(cls, settings: Mapping[str, Any], **overrides: Any) -> CrafterConfig:
        """Build a config from one environment of EnvGen's LLM output:
        ``{"environment_settings": {...}, "inventory_settings": {...}}``.

        Rarity values are accepted with a space or an underscore (``"very_common"``), and
        ``target_biome`` as EnvGen writes it. Unknown keys raise :class:`ConfigError`.
        """
        known = {"environment_settings", "inventory_settings"}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ConfigError(
                f"CrafterConfig.from_envgen.{unknown[0]}",
                f"unknown section; the sections are {', '.join(sorted(known))}",
            )
        fields: dict[str, Any] = {}
        for key, value in dict(settings.get("environment_settings") or {}).items():
            if key.endswith("_rarity") and isinstance(value, str):
                value = value.replace("_", " ").strip().lower()
            fields[key] = value
        inventory = dict(settings.get("inventory_settings") or {})
        if inventory:
            fields["inventory"] = inventory
        return cls.from_dict({**fields, **overrides})
