"""The oracle: a planner that reads the true state of a :class:`World` and returns the next
command towards its goal, from any state (it also recovers from other agents' detours)."""

from __future__ import annotations

from collections.abc import Callable

from llmgym.envs.household.catalog import TREATMENTS
from llmgym.envs.household.world import Item, World

__all__ = ["next_action"]


def next_action(world: World) -> str:
    """The next command of a short plan that solves ``world``'s goal."""
    goal = world.goal
    held = world.items[world.held] if world.held is not None else None
    if held is not None and held.kind != goal.object_kind:
        return _put_down(world, held)
    if goal.task_type == "examine_in_light":
        return _examine(world, held)
    target = _target(world)
    if held is None:
        if goal.task_type == "pick_two":
            return _fetch(world, lambda item: item.location != target)
        return _fetch(world, lambda item: True)
    treatment = TREATMENTS.get(goal.task_type)
    if treatment is not None and not getattr(held, treatment.adjective):
        appliance = next(
            name for kind in treatment.appliances for name in world.receptacles_of(kind)
        )
        if world.location != appliance:
            return f"go to {appliance}"
        return f"{treatment.verb} {held.name} with {appliance}"
    return _approach(world, target) or f"put {held.name} in/on {target}"


def _target(world: World) -> str:
    """The goal receptacle to fill: for two objects, the one that already holds the most."""
    goal = world.goal
    names = world.receptacles_of(goal.target_kind)
    if goal.task_type != "pick_two":
        return names[0]

    def held_there(name: str) -> int:
        contents = world.receptacles[name].contents
        return sum(world.items[n].kind == goal.object_kind for n in contents)

    return max(names, key=held_there)


def _examine(world: World, held: Item | None) -> str:
    goal = world.goal
    if held is None:
        return _fetch(world, lambda item: True)
    lamps = [lamp for lamp in world.lamp_on if lamp.split(" ", 1)[0] == goal.target_kind]
    lamp = next((lamp for lamp in lamps if world.lamp_on[lamp]), lamps[0])
    place = world.lamp_at[lamp]
    if world.location != place:
        return f"go to {place}"
    return f"use {lamp}" if not world.lamp_on[lamp] else "look"


def _fetch(world: World, wanted: Callable[[Item], bool]) -> str:
    """Go to, open and take the nearest object of the goal's kind that ``wanted`` accepts,
    preferring one that already has the goal's state (hot, clean...) and one in view."""
    goal = world.goal
    condition = goal.condition
    candidates = [
        item
        for item in world.items.values()
        if item.kind == goal.object_kind and item.location is not None and wanted(item)
    ]
    if not candidates:
        return "look"

    def cost(item: Item) -> tuple[bool, bool, bool]:
        assert item.location is not None
        receptacle = world.receptacles[item.location]
        return (
            condition is not None and not getattr(item, condition),
            item.location != world.location,
            not receptacle.is_open,
        )

    item = min(candidates, key=cost)
    assert item.location is not None
    return _approach(world, item.location) or f"take {item.name} from {item.location}"


def _approach(world: World, place: str) -> str | None:
    """The step that brings the agent to ``place`` with it open, or ``None`` when there."""
    if world.location != place:
        return f"go to {place}"
    if not world.receptacles[place].is_open:
        return f"open {place}"
    return None


def _put_down(world: World, held: Item) -> str:
    """Put an object the goal does not need where the agent stands, or on the first open
    receptacle of the room."""
    if world.location is not None:
        here = world.receptacles[world.location]
        if not here.lamp:
            return _approach(world, here.name) or f"put {held.name} in/on {here.name}"
    place = next(r.name for r in world.receptacles.values() if r.is_open and not r.lamp)
    return f"go to {place}"
