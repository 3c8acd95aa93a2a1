"""Procedural rooms and tasks: layouts (the furniture of a room), the layout pools of the two
splits, and the task built on a layout.

A *layout* is a room type with its numbered receptacles and lamps. Layouts are drawn from
:data:`LAYOUT_SEEDS` seeds, identified by their content (:attr:`Layout.instance_key`), and assigned
to train or eval by a hash of that content, so an eval room's furniture never appears in train.
A *task* puts objects into a layout's receptacles by the plausible placements of the data file
and picks a goal that the room supports.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from llmgym.core.cache import bounded_cache
from llmgym.core.tasks import TaskRng, split_of
from llmgym.envs.household.catalog import (
    LAMP_KINDS,
    TASK_TYPES,
    TREATMENTS,
    Catalog,
    RoomKind,
    load_catalog,
)
from llmgym.envs.household.world import Goal, Item, Receptacle, World

__all__ = [
    "LAYOUT_SEEDS",
    "TASKS_PER_LAYOUT",
    "Layout",
    "Room",
    "build_world",
    "goal_options",
    "layout_pool",
    "make_layout",
    "room_task_types",
]

LAYOUT_SEEDS = 2500
"""Layouts drawn per config; duplicates (same content) are dropped."""
TASKS_PER_LAYOUT = 4
"""Tasks per layout: task ``i`` of a split lies in layout ``i // TASKS_PER_LAYOUT``."""
OPTIONAL_LEFT_EMPTY = 3
"""Optional receptacle slots a room always leaves unused, so that rooms keep varying."""

_INSTRUCTIONS = {
    "pick_and_place": ("put a {o} {p} {g}.", "put some {o} {p} {g}."),
    "examine_in_light": ("look at {o} under the {g}.", "examine the {o} with the {g}."),
    "clean": ("put a clean {o} {p} {g}.", "clean some {o} and put it {p} {g}."),
    "heat": ("put a hot {o} {p} {g}.", "heat some {o} and put it {p} {g}."),
    "cool": ("put a cool {o} {p} {g}.", "cool some {o} and put it {p} {g}."),
    "pick_two": ("put two {o} {p} {g}.", "find two {o} and put them {p} {g}."),
}


@dataclass(frozen=True)
class Layout:
    """A room's furniture: numbered receptacles (floor lamps included) and desk lamps.

    Attributes:
        room: The room type.
        receptacles: ``(kind, count)`` pairs, alphabetical; receptacles are numbered from 1.
        desklamps: The receptacle each desk lamp stands on (``desklamp 1`` first).
    """

    room: str
    receptacles: tuple[tuple[str, int], ...]
    desklamps: tuple[str, ...]

    @property
    def instance_key(self) -> str:
        """The layout's content as text; equal keys mean the same furniture."""
        furniture = ",".join(f"{kind}={count}" for kind, count in self.receptacles)
        return f"{self.room}|{furniture}|desklamps on {','.join(self.desklamps)}"

    @property
    def names(self) -> list[str]:
        """Receptacle names in listing order: ``cabinet 1, cabinet 2, ..., toaster 1``."""
        return [f"{kind} {n}" for kind, count in self.receptacles for n in range(1, count + 1)]

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(kind for kind, _ in self.receptacles)

    @property
    def lamp_kinds(self) -> frozenset[str]:
        kinds = {"desklamp"} if self.desklamps else set()
        return frozenset(kinds | (self.kinds & set(LAMP_KINDS)))


def make_layout(room: RoomKind, rng: TaskRng, extra: int, catalog: Catalog) -> Layout:
    """Draw a layout of ``room``: its essential furniture plus between ``extra / 2`` and
    ``extra`` optional receptacles, drawn from the free slots of the room's count ranges (so a
    kind with many free slots, such as cabinets in a kitchen, comes up most)."""
    counts = {kind: low for kind, (low, _) in room.receptacles.items()}
    for group in room.one_of:
        if not any(counts[kind] for kind in group):
            counts[rng.choice(group)] = 1
    free = [
        kind for kind, (_, high) in room.receptacles.items() for _ in range(high - counts[kind])
    ]
    wanted = rng.randint((extra + 1) // 2, extra)
    for kind in rng.sample(free, max(0, min(wanted, len(free) - OPTIONAL_LEFT_EMPTY))):
        counts[kind] += 1
    lamps = {kind: rng.randint(low, high) for kind, (low, high) in room.lamps.items()}
    if room.lamps and not any(lamps.values()):
        lamps[rng.choice(list(room.lamps))] = 1
    counts["floorlamp"] = lamps.get("floorlamp", 0)
    supports = [
        f"{kind} {n}"
        for kind in catalog.desklamp_stands_on
        for n in range(1, counts.get(kind, 0) + 1)
    ]
    desklamps = tuple(rng.choice(supports) for _ in range(lamps.get("desklamp", 0)) if supports)
    receptacles = tuple(sorted((kind, count) for kind, count in counts.items() if count))
    return Layout(room.name, receptacles, desklamps)


def goal_options(
    room: RoomKind,
    kinds: frozenset[str],
    lamp_kinds: frozenset[str],
    task_type: str,
    catalog: Catalog,
) -> list[tuple[str, str]]:
    """The ``(object kind, target kind)`` goals of ``task_type`` that a room with receptacle
    ``kinds`` and ``lamp_kinds`` supports: the object lies somewhere other than its target,
    and the room has the appliance the task needs."""
    treatment = TREATMENTS.get(task_type)
    if treatment is not None and not kinds.intersection(treatment.appliances):
        return []
    options = []
    for obj, places in room.objects.items():
        if treatment is not None and treatment.property not in catalog.objects[obj]:
            continue
        present = [place for place in places if place in kinds]
        if not present:
            continue
        if task_type == "examine_in_light":
            options += [(obj, lamp) for lamp in LAMP_KINDS if lamp in lamp_kinds]
            continue
        for target in present:
            if treatment is not None and target in treatment.appliances:
                continue
            if any(place != target for place in present):
                options.append((obj, target))
    return options


@cache
def room_task_types(room_name: str) -> tuple[str, ...]:
    """Task types that every room of this type supports (checked on its essential furniture)."""
    catalog = load_catalog()
    room = catalog.rooms[room_name]
    lamp_kinds = frozenset(room.lamps)
    return tuple(
        task_type
        for task_type in TASK_TYPES
        if goal_options(room, room.essentials, lamp_kinds, task_type, catalog)
    )


@dataclass(frozen=True)
class Room:
    """One entry of a layout pool: a layout and the task type of its tasks."""

    layout: Layout
    task_type: str


@bounded_cache(8)
def layout_pool(
    task_types: tuple[tuple[str, float], ...],
    room_types: tuple[tuple[str, float], ...],
    extra: int,
) -> dict[str, tuple[Room, ...]]:
    """The rooms of each split. Each seed draws a task type by its weight in ``task_types``,
    then a room type that supports it by its weight in ``room_types``, then the furniture.
    Task types that no allowed room supports are left out. Duplicates are dropped, and a
    layout's split is a hash of its content, so the splits never share furniture."""
    catalog = load_catalog()
    room_weights = dict(room_types)
    choices = []
    for task_type, weight in task_types:
        rooms = [r for r, w in room_types if w > 0 and task_type in room_task_types(r)]
        if weight > 0 and rooms:
            choices.append((task_type, weight, rooms, [room_weights[r] for r in rooms]))
    pool: dict[str, list[Room]] = {"train": [], "eval": []}
    seen: set[tuple[str, str]] = set()
    for seed in range(LAYOUT_SEEDS):
        rng = TaskRng("household-layout", seed)
        task_type, _, rooms, weights = rng.weighted_choice(choices, [c[1] for c in choices])
        room = catalog.rooms[rng.weighted_choice(rooms, weights)]
        layout = make_layout(room, rng, extra, catalog)
        key = layout.instance_key
        if (key, task_type) in seen:
            continue
        seen.add((key, task_type))
        pool[split_of(f"household:{key}")].append(Room(layout, task_type))
    return {split: tuple(rooms) for split, rooms in pool.items()}


@bounded_cache(4096)
def _layout_goals(layout: Layout, task_type: str) -> list[tuple[str, str]]:
    catalog = load_catalog()
    room = catalog.rooms[layout.room]
    return goal_options(room, layout.kinds, layout.lamp_kinds, task_type, catalog)


@bounded_cache(4096)
def _placements(layout: Layout) -> tuple[list[str], dict[str, list[str]]]:
    """The layout's receptacle names, and for each object kind of its room the receptacles
    where that kind may lie."""
    names = layout.names
    room = load_catalog().rooms[layout.room]
    places = {
        kind: [name for name in names if name.split(" ", 1)[0] in spots]
        for kind, spots in room.objects.items()
    }
    return names, places


def build_world(
    layout: Layout, task_type: str, rng: TaskRng, *, distractors: int, start_open: float
) -> World:
    """A task of ``task_type`` on ``layout``: a goal the room supports, one to three objects
    for it, ``distractors`` unrelated objects, and closed or open receptacles."""
    catalog = load_catalog()
    room = catalog.rooms[layout.room]
    obj, target = rng.choice(_layout_goals(layout, task_type))
    names, places = _placements(layout)
    starts = [n for n in places[obj] if n.split(" ", 1)[0] != target]
    copies = rng.randint(2, 3) if task_type == "pick_two" else rng.randint(1, 3)
    placements = [(obj, rng.choice(starts)) for _ in range(copies)]
    others = [kind for kind in room.objects if kind != obj and places[kind]]
    for _ in range(distractors if others else 0):
        kind = rng.choice(others)
        placements.append((kind, rng.choice(places[kind])))
    rng.shuffle(placements)

    receptacles = []
    for name in names:
        kind_name, number = name.split(" ")
        receptacle_kind = catalog.receptacles[kind_name]
        is_open = receptacle_kind.openable and rng.random() < start_open
        receptacles.append(Receptacle.of_kind(receptacle_kind, int(number), is_open=is_open))
    by_name = {r.name: r for r in receptacles}
    items: list[Item] = []
    numbers: dict[str, int] = {}
    for kind, place in placements:
        numbers[kind] = numbers.get(kind, 0) + 1
        item = Item(f"{kind} {numbers[kind]}", kind, place, catalog.objects[kind])
        items.append(item)
        by_name[place].contents.append(item.name)
    lamps = {name: name for name in names if by_name[name].lamp}
    for lamp_number, support in enumerate(layout.desklamps, start=1):
        lamp = Item(f"desklamp {lamp_number}", "desklamp", support, pickupable=False)
        items.append(lamp)
        contents = by_name[support].contents
        contents.insert(rng.randint(0, len(contents)), lamp.name)
        lamps[lamp.name] = support

    template = rng.choice(_INSTRUCTIONS[task_type])
    preposition = catalog.receptacles[target].preposition if target in catalog.receptacles else ""
    instruction = template.format(o=obj, p=preposition, g=target)
    goal = Goal(task_type, obj, target, instruction)
    return World(receptacles, items, goal, lamps)
