"""The Household data: receptacle and object kinds, room types, and the six task types.

The vocabulary lives in ``envs/data/household.json`` (llmgym's own data, with ALFWorld's
single-word type names such as ``sinkbasin`` and ``coffeemachine``); this module loads it into
frozen dataclasses once and holds the rules that are code rather than data: the task types and
which appliance heats, cools or cleans.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = [
    "LAMP_KINDS",
    "ROOM_TYPES",
    "TASK_TYPES",
    "TREATMENTS",
    "Catalog",
    "ReceptacleKind",
    "RoomKind",
    "Treatment",
    "load_catalog",
]

TASK_TYPES: tuple[str, ...] = (
    "pick_and_place",
    "examine_in_light",
    "clean",
    "heat",
    "cool",
    "pick_two",
)
"""ALFWorld's six task types (its ``pick_and_place_simple``, ``look_at_obj_in_light``,
``pick_clean_then_place_in_recep``, ``pick_heat_then_place_in_recep``,
``pick_cool_then_place_in_recep`` and ``pick_two_obj_and_place``)."""

ROOM_TYPES: tuple[str, ...] = ("kitchen", "bedroom", "bathroom", "livingroom")
LAMP_KINDS: tuple[str, ...] = ("desklamp", "floorlamp")


@dataclass(frozen=True)
class Treatment:
    """Changing an object's state with an appliance: heat, cool or clean."""

    verb: str
    adjective: str
    """The state it gives, also the word in instructions: ``put a hot apple in fridge``."""
    property: str
    """What an object kind must be to take the treatment (``heatable``)."""
    appliances: tuple[str, ...]
    """Receptacle kinds that apply it, in the order the oracle prefers them."""


TREATMENTS: dict[str, Treatment] = {
    "heat": Treatment("heat", "hot", "heatable", ("microwave", "stoveburner")),
    "cool": Treatment("cool", "cool", "coolable", ("fridge",)),
    "clean": Treatment("clean", "clean", "cleanable", ("sinkbasin", "bathtubbasin")),
}


@dataclass(frozen=True)
class ReceptacleKind:
    """A kind of receptacle: whether it opens, and whether things go ``in`` or ``on`` it.
    A ``lamp`` receptacle (the floor lamp) is a place to go to that holds nothing."""

    name: str
    openable: bool
    preposition: str
    lamp: bool = False


@dataclass(frozen=True)
class RoomKind:
    """A room type: furniture with count ranges, lamps, and where each object kind may lie."""

    name: str
    receptacles: dict[str, tuple[int, int]]
    """Receptacle kind -> (fewest, most) of it in a room of this type."""
    one_of: tuple[tuple[str, ...], ...]
    """Groups of kinds of which every room has at least one (a desk or a side table...)."""
    lamps: dict[str, tuple[int, int]]
    """Lamp kind -> (fewest, most); a room type with lamps always gets at least one."""
    objects: dict[str, tuple[str, ...]]
    """Object kind -> the receptacle kinds where it plausibly lies (and may be put)."""

    @property
    def essentials(self) -> frozenset[str]:
        """Receptacle kinds that every room of this type has."""
        return frozenset(kind for kind, (low, _) in self.receptacles.items() if low > 0)


@dataclass(frozen=True)
class Catalog:
    """Everything ``household.json`` describes."""

    receptacles: dict[str, ReceptacleKind]
    objects: dict[str, frozenset[str]]
    """Object kind -> its properties (``heatable``, ``coolable``, ``cleanable``)."""
    desklamp_stands_on: tuple[str, ...]
    rooms: dict[str, RoomKind]
    spaced_names: tuple[str, ...]
    """Kind names as people write them in two or more words (``desk lamp`` for ``desklamp``)."""

    def has_property(self, object_kind: str, prop: str) -> bool:
        return prop in self.objects[object_kind]


@cache
def load_catalog() -> Catalog:
    """Load ``envs/data/household.json`` once."""
    source = resources.files("llmgym.envs") / "data" / "household.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    receptacles = {
        name: ReceptacleKind(name, row["openable"], row["preposition"], row.get("lamp", False))
        for name, row in data["receptacles"].items()
    }
    rooms = {
        name: RoomKind(
            name=name,
            receptacles={kind: (low, high) for kind, (low, high) in row["receptacles"].items()},
            one_of=tuple(tuple(group) for group in row["one_of"]),
            lamps={kind: (low, high) for kind, (low, high) in row["lamps"].items()},
            objects={kind: tuple(places) for kind, places in row["objects"].items()},
        )
        for name, row in data["rooms"].items()
    }
    return Catalog(
        receptacles=receptacles,
        objects={name: frozenset(props) for name, props in data["objects"].items()},
        desklamp_stands_on=tuple(data["desklamp_stands_on"]),
        rooms=rooms,
        spaced_names=tuple(data["spaced_names"]),
    )
