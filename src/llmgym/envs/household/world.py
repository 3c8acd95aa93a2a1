"""One room's state, ALFWorld's command grammar and rules, and the text the agent reads.

A :class:`World` is a room of numbered receptacles (``cabinet 1``, ``countertop 2``) holding
numbered objects (``apple 1``), an agent that stands in the middle of the room or at one
receptacle and carries at most one object, lamps that are on or off, and a :class:`Goal`.
:meth:`World.step` applies one command and answers in ALFWorld's words; a command that does not
apply changes nothing and answers ``Nothing happens.`` followed by the reason.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from llmgym.core.text import join_names, normalize_command, quote_action
from llmgym.envs.household.catalog import TREATMENTS, ReceptacleKind, load_catalog

__all__ = ["COMMANDS", "Goal", "Item", "Receptacle", "World"]

COMMANDS = (
    "go to X, open X, close X, take X from Y, put X in/on Y, heat X with Y, cool X with Y, "
    "clean X with Y, use X (toggle X), examine X, inventory, look"
)
"""The grammar, as shown in feedback for a command that is not understood."""

_NAME = r"(?:the |a |an |some )?([a-z]+(?: ?[0-9]+)?)"
_GO = re.compile(rf"(?:go to|goto|go|walk to|move to|navigate to) {_NAME}")
_TAKE = re.compile(rf"(?:take|pick up|pickup|get|grab) {_NAME}(?: (?:from|off|out of) {_NAME})?")
_PUT = re.compile(rf"(?:put|place|move) {_NAME} (?:in ?/ ?on|in|on|into|onto|inside|to) {_NAME}")
_TREAT = re.compile(
    rf"(heat|warm|microwave|cool|chill|refrigerate|clean|wash|rinse) {_NAME} "
    rf"(?:with|using|in|on|at) {_NAME}"
)
_ONE_THING = re.compile(
    rf"(open|close|toggle|use|turn on|switch on|turn off|switch off|examine|inspect|look at|"
    rf"check) {_NAME}"
)
_NUMBERED = re.compile(r"([a-z]+) ?([0-9]+)")
_SPACED = re.compile(
    r"\b(" + "|".join(sorted(load_catalog().spaced_names, key=len, reverse=True)) + r")\b"
)
_TREAT_VERBS = {
    "heat": "heat", "warm": "heat", "microwave": "heat",
    "cool": "cool", "chill": "cool", "refrigerate": "cool",
    "clean": "clean", "wash": "clean", "rinse": "clean",
}  # fmt: skip
_SWITCH_VERBS = {
    "toggle": None, "use": None,
    "turn on": True, "switch on": True, "turn off": False, "switch off": False,
}  # fmt: skip
_STATES = ("clean", "hot", "cool")


@dataclass(slots=True)
class Receptacle:
    """A numbered piece of furniture or appliance; ``contents`` lists object names in order."""

    name: str
    kind: str
    openable: bool
    preposition: str
    is_open: bool = True
    lamp: bool = False
    """A floor lamp: a place to go to and switch on, that holds nothing."""
    contents: list[str] = field(default_factory=list)

    @classmethod
    def of_kind(cls, kind: ReceptacleKind, number: int, *, is_open: bool = False) -> Receptacle:
        """Receptacle ``number`` of ``kind``, empty; only an openable one can be closed."""
        return cls(
            f"{kind.name} {number}",
            kind.name,
            kind.openable,
            kind.preposition,
            is_open=is_open or not kind.openable,
            lamp=kind.lamp,
        )


@dataclass(slots=True)
class Item:
    """A numbered object; ``location`` is a receptacle name, or ``None`` while carried."""

    name: str
    kind: str
    location: str | None
    properties: frozenset[str] = frozenset()
    pickupable: bool = True
    hot: bool = False
    cool: bool = False
    clean: bool = False


@dataclass(frozen=True)
class Goal:
    """What solves the task.

    Attributes:
        task_type: One of :data:`~llmgym.envs.household.catalog.TASK_TYPES`.
        object_kind: The kind of object to handle (``mug``).
        target_kind: The receptacle kind to put it in (``coffeemachine``), or for
            ``examine_in_light`` the lamp kind (``desklamp``).
        instruction: The task in words: ``put a clean mug in coffeemachine.``
    """

    task_type: str
    object_kind: str
    target_kind: str
    instruction: str

    @property
    def condition(self) -> str | None:
        """The state the object must be in (``"hot"``), for heat, cool and clean tasks."""
        treatment = TREATMENTS.get(self.task_type)
        return treatment.adjective if treatment else None


class _Refusal(Exception):
    """A command that does not apply; the message says why."""


def _listing(names: Sequence[str]) -> str:
    """ALFWorld's enumeration: ``a apple 1``, ``a apple 1, and a mug 2``, ``a x, a y, and a z``."""
    if not names:
        return "nothing"
    if len(names) == 1:
        return f"a {names[0]}"
    return ", ".join(f"a {name}" for name in names[:-1]) + f", and a {names[-1]}"


def _join_words(match: re.Match[str]) -> str:
    return match.group(0).replace(" ", "")


def _canonical(name: str) -> str:
    """``"apple1"`` and ``"apple 01"`` -> ``"apple 1"``; a bare kind stays as it is."""
    match = _NUMBERED.fullmatch(name)
    return f"{match.group(1)} {int(match.group(2))}" if match else name


class World:
    """The state of one room and the rules that change it."""

    def __init__(
        self,
        receptacles: Sequence[Receptacle],
        items: Sequence[Item],
        goal: Goal,
        lamps: dict[str, str],
    ) -> None:
        """Args:
        receptacles: In the order the room lists them.
        items: Every object, desk lamps included; each is already in its receptacle's contents.
        goal: What solves the task.
        lamps: Lamp name -> the receptacle where it is switched (a desk lamp's desk, or the
            floor lamp itself). Every lamp starts off.
        """
        self.receptacles = {r.name: r for r in receptacles}
        self.items = {i.name: i for i in items}
        self.goal = goal
        self.lamp_at = dict(lamps)
        self.lamp_on = dict.fromkeys(lamps, False)
        self.location: str | None = None
        self.held: str | None = None
        self.solved = False
        self._by_kind: dict[str, list[str]] = {}
        for name, receptacle in self.receptacles.items():
            self._by_kind.setdefault(receptacle.kind, []).append(name)
        self._lamps_at: dict[str, list[str]] = {}
        for lamp, place in self.lamp_at.items():
            self._lamps_at.setdefault(place, []).append(lamp)
        self._go_to = [f"go to {name}" for name in self.receptacles]

    # ------------------------------------------------------------------ text
    def intro(self) -> str:
        """The first observation: the room at a glance and the task."""
        return f"{self._overview()}\n\nYour task is to: {self.goal.instruction}"

    def _overview(self) -> str:
        return (
            "You are in the middle of a room. Looking quickly around you, you see "
            f"{_listing(list(self.receptacles))}."
        )

    def describe(self, receptacle: Receptacle) -> str:
        """What the agent sees at a receptacle."""
        name = receptacle.name
        if receptacle.lamp:
            return f"The {name} is {'on' if self.lamp_on[name] else 'off'}."
        if not receptacle.is_open:
            return f"The {name} is closed."
        seen = _listing(receptacle.contents)
        if receptacle.openable:
            return f"The {name} is open. In it, you see {seen}."
        return f"{receptacle.preposition.capitalize()} the {name}, you see {seen}."

    def instance_key(self) -> str:
        """The instance's content: goal, where every object lies, what is open."""
        parts = [self.goal.instruction]
        for receptacle in self.receptacles.values():
            state = "open" if receptacle.is_open else "closed"
            parts.append(f"{receptacle.name}({state}): {', '.join(receptacle.contents)}")
        return "\n".join(parts)

    def clone(self) -> World:
        """An independent copy of the state (the room's fixed parts are shared), for search."""
        twin = copy.copy(self)
        twin.receptacles = {
            name: dataclasses.replace(r, contents=list(r.contents))
            for name, r in self.receptacles.items()
        }
        twin.items = {name: dataclasses.replace(i) for name, i in self.items.items()}
        twin.lamp_on = dict(self.lamp_on)
        return twin

    def snapshot(self) -> tuple:
        """Every piece of mutable state, comparable with ``==`` (for tests and debugging)."""
        return (
            self.location,
            self.held,
            self.solved,
            tuple(sorted(self.lamp_on.items())),
            tuple((r.name, r.is_open, tuple(r.contents)) for r in self.receptacles.values()),
            tuple((i.name, i.location, i.hot, i.cool, i.clean) for i in self.items.values()),
        )

    # ------------------------------------------------------------------ commands
    def step(self, command: str) -> tuple[str, bool]:
        """Apply one command (any text). Returns ``(observation, valid)``; an invalid command
        changes nothing and its observation starts with ``Nothing happens.``"""
        text = _SPACED.sub(_join_words, normalize_command(command))
        try:
            return self._dispatch(text, command), True
        except _Refusal as refusal:
            return f"Nothing happens. {refusal}", False

    def _dispatch(self, text: str, command: str) -> str:
        if not command.strip():
            raise _Refusal(f"You gave no command. Commands: {COMMANDS}.")
        if text in ("look", "l", "look around"):
            return self._look()
        if text in ("inventory", "inv", "i", "check inventory"):
            return self._inventory()
        if match := _GO.fullmatch(text):
            return self._go(_canonical(match.group(1)))
        if match := _TAKE.fullmatch(text):
            source = match.group(2)
            return self._take(_canonical(match.group(1)), source and _canonical(source))
        if match := _PUT.fullmatch(text):
            return self._put(_canonical(match.group(1)), _canonical(match.group(2)))
        if match := _TREAT.fullmatch(text):
            verb = _TREAT_VERBS[match.group(1)]
            return self._treat(verb, _canonical(match.group(2)), _canonical(match.group(3)))
        if match := _ONE_THING.fullmatch(text):
            verb, name = match.group(1), _canonical(match.group(2))
            if verb == "open":
                return self._open(name, True)
            if verb == "close":
                return self._open(name, False)
            if verb in _SWITCH_VERBS:
                return self._switch(name, _SWITCH_VERBS[verb])
            return self._examine(name)
        raise _Refusal(
            f"The command {quote_action(command)} is not understood. Commands: {COMMANDS}."
        )

    def _look(self) -> str:
        if self.location is None:
            return self._overview()
        return f"You are facing the {self.location}. {self.describe(self._here())}"

    def _inventory(self) -> str:
        if self.held is None:
            return "You are not carrying anything."
        return f"You are carrying: a {self.held}."

    def _go(self, name: str) -> str:
        receptacle = self._receptacle(name)
        if receptacle.name == self.location:
            raise _Refusal(f"You are already at the {receptacle.name}.")
        self.location = receptacle.name
        self._check_light()
        return f"You arrive at {receptacle.name}. {self.describe(receptacle)}"

    def _open(self, name: str, opening: bool) -> str:
        receptacle = self._receptacle_here(name)
        if not receptacle.openable:
            raise _Refusal(f"The {receptacle.name} cannot be opened or closed.")
        if receptacle.is_open == opening:
            state = "open" if opening else "closed"
            raise _Refusal(f"The {receptacle.name} is already {state}.")
        receptacle.is_open = opening
        if opening:
            return f"You open the {receptacle.name}. {self.describe(receptacle)}"
        return f"You close the {receptacle.name}."

    def _take(self, name: str, source: str | None) -> str:
        if source is None:
            if self.location is None:
                raise _Refusal(
                    "You are in the middle of the room; go to a receptacle first, then "
                    "take X from it."
                )
            receptacle = self._here()
        else:
            receptacle = self._receptacle_here(source)
        self._require_open(receptacle)
        if self.held is not None:
            raise _Refusal(
                f"You are already carrying the {self.held}, and you can carry one object at a "
                "time. Put it somewhere first (put X in/on Y)."
            )
        item = self._item_among(name, receptacle.contents, receptacle)
        if not item.pickupable:
            raise _Refusal(f"The {item.name} cannot be picked up.")
        receptacle.contents.remove(item.name)
        item.location = None
        self.held = item.name
        self._check_light()
        return f"You pick up the {item.name} from the {receptacle.name}."

    def _put(self, name: str, target: str) -> str:
        item = self._held_item(name)
        receptacle = self._receptacle_here(target)
        if receptacle.lamp:
            raise _Refusal(f"You cannot put anything on the {receptacle.name}.")
        self._require_open(receptacle)
        self.held = None
        item.location = receptacle.name
        receptacle.contents.append(item.name)
        self._check_placed(item, receptacle)
        return f"You put the {item.name} {receptacle.preposition} the {receptacle.name}."

    def _treat(self, verb: str, name: str, appliance: str) -> str:
        treatment = TREATMENTS[verb]
        receptacle = self._receptacle_here(appliance)
        if receptacle.kind not in treatment.appliances:
            tools = join_names([f"a {kind}" for kind in treatment.appliances], "or")
            raise _Refusal(f"You cannot {verb} things with the {receptacle.name}; use {tools}.")
        item = self._held_item(name)
        if treatment.property not in item.properties:
            raise _Refusal(f"The {item.name} cannot be {verb}ed.")
        if verb == "heat":
            item.hot, item.cool = True, False
        elif verb == "cool":
            item.cool, item.hot = True, False
        else:
            item.clean = True
        return f"You {verb} the {item.name} using the {receptacle.name}."

    def _switch(self, name: str, turn_on: bool | None) -> str:
        lamp = self._lamp_here(name)
        on = self.lamp_on[lamp]
        if turn_on is not None and on == turn_on:
            raise _Refusal(f"The {lamp} is already {'on' if on else 'off'}.")
        self.lamp_on[lamp] = not on
        self._check_light()
        return f"You turn {'off' if on else 'on'} the {lamp}."

    def _examine(self, name: str) -> str:
        here = self.receptacles[self.location] if self.location is not None else None
        if here is not None and name in (here.name, here.kind):
            return self.describe(here)
        visible = list(here.contents) if here is not None and here.is_open else []
        if self.held is not None:
            visible.append(self.held)
        try:
            item = self._item_among(name, visible, here)
        except _Refusal:
            if name in self.receptacles or name in self._by_kind:
                target = f"the {name}" if name in self.receptacles else f"a {name}"
                raise _Refusal(f"You are not at {target}; go there first.") from None
            raise
        if item.name in self.lamp_on:
            return f"The {item.name} is {'on' if self.lamp_on[item.name] else 'off'}."
        states = [state for state in _STATES if getattr(item, state)]
        if states:
            return f"The {item.name} is {join_names(states)}."
        return f"There's nothing special about the {item.name}."

    # ------------------------------------------------------------------ lookups
    def _here(self) -> Receptacle:
        assert self.location is not None
        return self.receptacles[self.location]

    def _receptacle(self, name: str) -> Receptacle:
        receptacle = self.receptacles.get(name)
        if receptacle is not None:
            return receptacle
        names = self._by_kind.get(name)
        if names and len(names) == 1:
            return self.receptacles[names[0]]
        if names:
            raise _Refusal(
                f"There are several of them ({join_names(names)}); name one with its number."
            )
        if name in self.items or any(item.kind == name for item in self.items.values()):
            raise _Refusal(f"The {name} is an object, not a receptacle.")
        raise _Refusal(f"There is no {name} in this room.")

    def _receptacle_here(self, name: str) -> Receptacle:
        receptacle = self._receptacle(name)
        if receptacle.name != self.location:
            raise _Refusal(f"You are not at the {receptacle.name}; go to {receptacle.name} first.")
        return receptacle

    def _require_open(self, receptacle: Receptacle) -> None:
        if not receptacle.is_open:
            raise _Refusal(
                f"The {receptacle.name} is closed; open it first (open {receptacle.name})."
            )

    def _item_among(self, name: str, names: Iterable[str], place: Receptacle | None) -> Item:
        """The object called ``name`` (or the only one of that kind) among ``names``."""
        names = list(names)
        if name in names:
            return self.items[name]
        matches = [n for n in names if self.items[n].kind == name]
        if len(matches) == 1:
            return self.items[matches[0]]
        if matches:
            raise _Refusal(
                f"There are several of them ({join_names(matches)}); name one with its number."
            )
        where = f"{place.preposition} the {place.name}" if place is not None else "here"
        raise _Refusal(f"You do not see a {name} {where}.")

    def _held_item(self, name: str) -> Item:
        if self.held is None:
            raise _Refusal("You are not carrying anything; take an object first.")
        item = self.items[self.held]
        if name not in (item.name, item.kind):
            raise _Refusal(f"You are not carrying a {name}; you are carrying the {item.name}.")
        return item

    def _lamp_kinds(self) -> set[str]:
        return {lamp.split(" ", 1)[0] for lamp in self.lamp_on}

    def _lamp_here(self, name: str) -> str:
        here = self._lamps_at.get(self.location or "", [])
        matches = [lamp for lamp in here if name in (lamp, lamp.split(" ", 1)[0])]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise _Refusal(
                f"There are several of them ({join_names(matches)}); name one with its number."
            )
        if name in self.lamp_on or name in self._lamp_kinds():
            raise _Refusal(f"You do not see a {name} here; go to it first.")
        known = (
            name in self.receptacles
            or name in self._by_kind
            or name in self.items
            or any(item.kind == name for item in self.items.values())
        )
        if not known:
            raise _Refusal(f"There is no {name} here.")
        raise _Refusal(f"The {name} cannot be switched on or off; only lamps can.")

    # ------------------------------------------------------------------ goal
    def _check_placed(self, item: Item, receptacle: Receptacle) -> None:
        goal = self.goal
        if item.kind != goal.object_kind or receptacle.kind != goal.target_kind:
            return
        condition = goal.condition
        if condition is not None and not getattr(item, condition):
            return
        if goal.task_type == "pick_two":
            same = sum(self.items[n].kind == goal.object_kind for n in receptacle.contents)
            if same < 2:
                return
        self.solved = True

    def _check_light(self) -> None:
        goal = self.goal
        if goal.task_type != "examine_in_light" or self.held is None:
            return
        if self.items[self.held].kind != goal.object_kind:
            return
        for lamp in self._lamps_at.get(self.location or "", ()):
            if self.lamp_on[lamp] and lamp.split(" ", 1)[0] == goal.target_kind:
                self.solved = True

    # ------------------------------------------------------------------ listing
    def receptacles_of(self, kind: str) -> list[str]:
        """The receptacles of ``kind``, in listing order."""
        return self._by_kind.get(kind, [])

    def admissible_actions(self) -> list[str]:
        """Every command that applies now, in ALFWorld's forms."""
        where = self.location
        if where is None:
            actions = list(self._go_to)
        else:
            here = f"go to {where}"
            actions = [action for action in self._go_to if action != here]
        held = self.held
        if where is not None:
            receptacle = self.receptacles[where]
            if receptacle.openable:
                actions.append(f"{'close' if receptacle.is_open else 'open'} {where}")
            if receptacle.is_open:
                if held is None:
                    actions += [
                        f"take {name} from {where}"
                        for name in receptacle.contents
                        if self.items[name].pickupable
                    ]
                elif not receptacle.lamp:
                    actions.append(f"put {held} in/on {where}")
            if held is not None:
                properties = self.items[held].properties
                for treatment in TREATMENTS.values():
                    if receptacle.kind in treatment.appliances and treatment.property in properties:
                        actions.append(f"{treatment.verb} {held} with {where}")
            actions += [f"use {lamp}" for lamp in self._lamps_at.get(where, ())]
            actions.append(f"examine {where}")
        if held is not None:
            actions.append(f"examine {held}")
        actions += ["inventory", "look"]
        return actions
