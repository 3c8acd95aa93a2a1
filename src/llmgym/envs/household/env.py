"""``llmgym/Household-v0``: ALFWorld's household tasks in procedurally generated rooms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmgym.core import EnvConfig, Task, TaskIdRange, TextEnv, Transition, knob
from llmgym.envs.household.catalog import ROOM_TYPES, TASK_TYPES
from llmgym.envs.household.generation import (
    TASKS_PER_LAYOUT,
    Layout,
    Room,
    build_world,
    layout_pool,
    room_task_types,
)
from llmgym.envs.household.planner import next_action
from llmgym.envs.household.world import World
from llmgym.errors import ConfigError

__all__ = ["HouseholdConfig", "HouseholdEnv"]


def _weights(names: tuple[str, ...], doc: str) -> Any:
    """A knob of relative frequencies over ``names`` (each 0-100; all 1 by default)."""
    return knob(
        default_factory=lambda: dict.fromkeys(names, 1), low=0, high=100, choices=names, doc=doc
    )


@dataclass(frozen=True)
class HouseholdConfig(EnvConfig):
    """Difficulty knobs of :class:`HouseholdEnv`."""

    task_types: dict[str, float] = _weights(
        TASK_TYPES,
        "Relative frequency of ALFWorld's six task types; a type left out or at 0 never "
        "appears. Each type is set in a room that supports it: heat and cool in kitchens, "
        "clean in kitchens and bathrooms, examine_in_light in bedrooms and living rooms, "
        "pick_and_place and pick_two anywhere.",
    )
    room_types: dict[str, float] = _weights(
        ROOM_TYPES,
        "Relative frequency of the room types among those that support a task's type; a "
        "type left out or at 0 never appears.",
    )
    extra_receptacles: int = knob(
        12,
        low=2,
        high=30,
        doc="Optional receptacles (more cabinets, drawers, shelves, tables...) added to a room's "
        "essential furniture, between half this and this many: more places to search. A small "
        "room (a bathroom) stops three short of its largest furnishing, so rooms keep varying.",
    )
    distractor_objects: int = knob(
        12, low=0, high=40, doc="Objects unrelated to the task, scattered over the room."
    )
    start_open: float = knob(
        0.1,
        low=0.0,
        high=1.0,
        doc="Chance that an openable receptacle (cabinet, drawer, fridge, microwave, safe) "
        "starts open, showing what is inside.",
    )

    def validate(self) -> None:
        for field, weights, names in (
            ("task_types", self.task_types, TASK_TYPES),
            ("room_types", self.room_types, ROOM_TYPES),
        ):
            if not any(weight > 0 for weight in weights.values()):
                raise ConfigError(
                    f"HouseholdConfig.{field}",
                    f"{weights!r} gives no type a positive weight; allowed: a mapping with at "
                    f"least one positive weight, keys among {', '.join(names)}",
                )
        if not any(
            self.room_types.get(room, 0) > 0
            for task_type, weight in self.task_types.items()
            if weight > 0
            for room in ROOM_TYPES
            if task_type in room_task_types(room)
        ):
            raise ConfigError(
                "HouseholdConfig.task_types",
                f"no room allowed by room_types={self.room_types!r} supports a task type "
                f"allowed by task_types={self.task_types!r}; the rooms support "
                + "; ".join(f"{room}: {', '.join(room_task_types(room))}" for room in ROOM_TYPES),
            )


class HouseholdEnv(TextEnv[HouseholdConfig]):
    """ALFWorld's household tasks in procedurally generated rooms, in pure Python.

    ## Description
    The six task types of ALFWorld — put an object somewhere (``pick_and_place``), look at an
    object under a lamp (``examine_in_light``), put a clean, hot or cool object somewhere
    (``clean``, ``heat``, ``cool``) and put two objects in the same place (``pick_two``) — in
    generated kitchens, bedrooms, bathrooms and living rooms. A room is a set of numbered
    receptacles (``cabinet 1``, ``countertop 2``, ``fridge 1``, ``microwave 1``,
    ``sinkbasin 1``, ...) holding numbered objects placed by plausible rules from llmgym's own
    data file (``envs/data/household.json``: 30 receptacle kinds, 53 object kinds and desk
    lamps, where each kind lies in each room type). Nothing is compiled or downloaded.

    The rules follow ALFWorld's text engine. ``go to`` reaches any receptacle in one step.
    Closed receptacles (cabinets, drawers, fridges, microwaves, safes) hide their contents until
    opened, and nothing can be taken from or put into them while closed. The agent carries one
    object at a time. Heating needs a microwave or a stove burner, cooling a fridge, cleaning a
    sink basin (or bathtub basin), each done while holding the object at the appliance (as in
    ALFWorld, the appliance need not be open); only heatable, coolable or cleanable kinds take
    the treatment. Examining in light means holding the object where a lamp of the named kind
    (a desk lamp on its desk or side table, or a floor lamp) is switched on.

    ## Action Space
    Text commands in ALFWorld's grammar (case-insensitive; ``the``, and words such as
    ``desk lamp`` for ``desklamp``, are tolerated; a bare kind such as ``fridge`` names the only
    one of its kind):

    * ``go to X`` — walk to receptacle X.
    * ``open X`` / ``close X`` — the receptacle where you are.
    * ``take X from Y`` — pick up object X from receptacle Y, where you are.
    * ``put X in/on Y`` — put the object you carry in or on receptacle Y (``in``, ``on`` and
      ``in/on`` are all accepted).
    * ``heat X with Y``, ``cool X with Y``, ``clean X with Y`` — treat the object you carry with
      the appliance where you are.
    * ``use X`` or ``toggle X`` — switch a lamp where you are on or off.
    * ``examine X`` — the receptacle where you are, an object there or the one you carry.
    * ``inventory``, ``look``.

    ``info["admissible_actions"]`` lists every command that applies, in ALFWorld's forms
    (AgentGym's client appends them to the first observation as ``AVAILABLE ACTIONS:``).

    ## Observation Space
    Text in ALFWorld's style. On reset: ``You are in the middle of a room. Looking quickly
    around you, you see a cabinet 1, a countertop 1, ... \\n\\nYour task is to: put a clean mug in
    coffeemachine.`` After a command: its outcome, e.g. ``You arrive at countertop 1. On the
    countertop 1, you see a apple 1, and a mug 2.``, ``The cabinet 3 is closed.``, ``You heat the
    potato 1 using the microwave 1.`` A command that does not apply answers ``Nothing happens.``
    followed by the reason and what would work (``The drawer 2 is closed; open it first``).

    ## Rewards
    ``1.0`` on the step that completes the task, ``0.0`` otherwise (ALFWorld's ``won``).

    ## Starting State
    The agent stands in the middle of the room carrying nothing; lamps are off; openable
    receptacles are closed except for a ``start_open`` share. The task's object lies (in one to
    three copies; two or three for ``pick_two``) anywhere it plausibly belongs except in a
    receptacle of the goal's kind.

    ## Episode End
    Terminates when the task is complete (``info["success"] = True``): the object, in the
    required state, is in or on a receptacle of the named kind (two of them in the same
    receptacle for ``pick_two``), or is held where a lamp of the named kind is on. Truncated by
    the registered turn limit (50, ALFWorld's). A command that does not apply changes nothing and
    sets ``info["invalid_action"]``.

    ## Arguments
    ``gymnasium.make("llmgym/Household-v0", task_types={"heat": 1, "cool": 1},
    room_types={"kitchen": 1}, extra_receptacles=20, distractor_objects=20)``; see
    :class:`HouseholdConfig`. Each of 2,500 seeds draws a task type, a room type that supports
    it and the room's furniture (its layout); repeats are dropped, and a layout goes to train or
    eval by a hash of its content, so eval rooms have furniture never seen in train. Each layout
    carries four tasks (``env.unwrapped.rooms(split)`` lists them, to pick tasks by type).
    ``skills`` are the six task types; ``skills_achieved()`` holds the episode's type once it is
    solved.

    ## Version History
    * v0: Initial version.
    """

    config_class = HouseholdConfig
    env_name = "household"
    skills = TASK_TYPES
    rules_text = (
        "You are in a household room with numbered receptacles (cabinet 1, countertop 2, "
        "fridge 1, ...) and numbered objects (apple 1, mug 2, ...); complete the task given "
        "after 'Your task is to:'. Commands: go to X; open X; close X; take X from Y; put X "
        "in/on Y; heat X with Y (microwave or stoveburner); cool X with Y (fridge); clean X "
        "with Y (sinkbasin); use X (switch a desklamp or floorlamp); examine X; inventory; "
        "look. You must be at a receptacle to use it, open closed ones before taking from or "
        "putting into them, and hold the object you heat, cool, clean or examine under a "
        "lamp. You can carry one object at a time. A command that does not apply answers "
        "'Nothing happens.' with the reason."
    )
    example = (
        "Observation: You are in the middle of a room. Looking quickly around you, you see a "
        "cabinet 1, a countertop 1, a fridge 1, a microwave 1, and a sinkbasin 1.\n\n"
        "Your task is to: put a hot potato in fridge.\n"
        "Thought: Potatoes are usually on the countertop or in the fridge. I check the "
        "countertop first.\n"
        "Action: go to countertop 1"
    )

    world: World | None = None
    """The room of the current episode (after :meth:`reset`)."""
    layout: Layout | None = None
    """The layout of that room (after :meth:`reset`)."""

    # ------------------------------------------------------------------ tasks
    def task_ids(self, split: str = "train", config: HouseholdConfig | None = None) -> TaskIdRange:
        return TaskIdRange(split, len(self.rooms(split, config)) * TASKS_PER_LAYOUT)

    def rooms(
        self, split: str = "train", config: HouseholdConfig | None = None
    ) -> tuple[Room, ...]:
        """The rooms (a layout and a task type) behind the task ids of ``split``: task
        ``"<split>/<i>"`` is set in room ``i // 4``, so ``rooms(split)[i // 4].task_type`` is
        its type, for picking the tasks of one type."""
        config = config or self.config
        task_types = tuple((t, float(config.task_types.get(t, 0))) for t in TASK_TYPES)
        room_types = tuple((r, float(config.room_types.get(r, 0))) for r in ROOM_TYPES)
        return layout_pool(task_types, room_types, config.extra_receptacles).get(split, ())

    @property
    def task_type(self) -> str:
        """The current episode's task type."""
        return self._world.goal.task_type

    @property
    def _world(self) -> World:
        return self.after_reset(self.world)

    def instance_key(self) -> str:
        assert self.layout is not None
        return f"{self.layout.instance_key}\n{self._world.instance_key()}"

    def _reset_task(self, task: Task[HouseholdConfig]) -> tuple[str, str]:
        config = task.config
        room = self.rooms(task.split, config)[task.index // TASKS_PER_LAYOUT]
        self.layout = room.layout
        self.world = build_world(
            room.layout,
            room.task_type,
            task.rng(),
            distractors=config.distractor_objects,
            start_open=config.start_open,
        )
        return self.world.intro(), self.world.goal.instruction

    # ------------------------------------------------------------------ dynamics
    def _step(self, action: str) -> Transition:
        world = self._world
        observation, valid = world.step(action)
        if not valid:
            return self.invalid(observation)
        if world.solved:
            return Transition(observation, reward=1.0, terminated=True, success=True)
        return Transition(observation)

    def admissible_actions(self) -> list[str]:
        return self._world.admissible_actions()

    def oracle_action(self) -> str:
        return next_action(self._world)

    def skills_achieved(self) -> frozenset[str]:
        world = self.world
        if world is None or not world.solved:
            return frozenset()
        return frozenset({world.goal.task_type})
