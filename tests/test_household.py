"""Household rules, data, generation and config."""

from __future__ import annotations

import re
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest

from llmgym import ConfigError
from llmgym.envs.household import Goal, HouseholdEnv, Item, Receptacle, World
from llmgym.envs.household.catalog import (
    LAMP_KINDS,
    ROOM_TYPES,
    TASK_TYPES,
    TREATMENTS,
    load_catalog,
)
from llmgym.envs.household.generation import TASKS_PER_LAYOUT, room_task_types

CATALOG = load_catalog()


def make_world(goal: Goal) -> World:
    """A small kitchen-and-study: closed fridge, microwave and cabinet; a desk with a desk lamp;
    a floor lamp; apples, a mug and a book."""
    receptacles = []
    for name in (
        "cabinet 1",
        "countertop 1",
        "countertop 2",
        "desk 1",
        "floorlamp 1",
        "fridge 1",
        "microwave 1",
        "sinkbasin 1",
    ):
        kind, number = name.split()
        receptacles.append(Receptacle.of_kind(CATALOG.receptacles[kind], int(number)))
    by_name = {r.name: r for r in receptacles}
    items = []
    for name, place in (
        ("apple 1", "fridge 1"),
        ("apple 2", "countertop 1"),
        ("mug 1", "cabinet 1"),
        ("book 1", "countertop 1"),
        ("desklamp 1", "desk 1"),
    ):
        kind = name.split()[0]
        properties = CATALOG.objects.get(kind, frozenset())
        items.append(Item(name, kind, place, properties, pickupable=kind != "desklamp"))
        by_name[place].contents.append(name)
    lamps = {"desklamp 1": "desk 1", "floorlamp 1": "floorlamp 1"}
    return World(receptacles, items, goal, lamps)


def play(world: World, *commands: str) -> list[str]:
    """Apply commands that must all be valid; return the observations."""
    observations = []
    for command in commands:
        observation, valid = world.step(command)
        assert valid, f"{command!r} was refused: {observation}"
        observations.append(observation)
    return observations


def refused(world: World, command: str) -> str:
    """Apply a command that must be refused without changing anything; return the feedback."""
    before = world.snapshot()
    observation, valid = world.step(command)
    assert not valid, f"{command!r} was accepted: {observation}"
    assert world.snapshot() == before, f"{command!r} changed the state"
    assert observation.startswith("Nothing happens. ") and len(observation) > 20
    return observation


HEAT_APPLE = Goal("heat", "apple", "countertop", "put a hot apple in countertop.")


# ---------------------------------------------------------------------- data
def test_data_is_consistent() -> None:
    for room in CATALOG.rooms.values():
        for kind, places in room.objects.items():
            assert kind in CATALOG.objects, kind
            for place in places:
                assert place in room.receptacles, f"{room.name}: {kind} lies on a missing {place}"
        for group in room.one_of:
            assert all(kind in room.receptacles for kind in group)
        if "desklamp" in room.lamps:  # a desk lamp always has something to stand on
            supports = set(CATALOG.desklamp_stands_on)
            assert room.essentials & supports or any(set(g) <= supports for g in room.one_of)
        holders = [k for k in room.essentials if not CATALOG.receptacles[k].openable]
        assert holders, f"{room.name} has no always-open receptacle"
        assert set(room.lamps) <= set(LAMP_KINDS)
    for kind, receptacle in CATALOG.receptacles.items():
        assert receptacle.preposition in ("in", "on") or receptacle.lamp, kind
    properties = {t.property for t in TREATMENTS.values()}
    assert all(props <= properties for props in CATALOG.objects.values())
    kinds = set(CATALOG.receptacles) | set(CATALOG.objects) | {"desklamp"}
    assert all(name.replace(" ", "") in kinds for name in CATALOG.spaced_names)


def test_rooms_support_alfworlds_task_types() -> None:
    assert room_task_types("kitchen") == ("pick_and_place", "clean", "heat", "cool", "pick_two")
    assert room_task_types("bathroom") == ("pick_and_place", "clean", "pick_two")
    for room in ("bedroom", "livingroom"):
        assert room_task_types(room) == ("pick_and_place", "examine_in_light", "pick_two")


# ---------------------------------------------------------------------- rules
def test_closed_receptacles_hide_their_contents() -> None:
    world = make_world(HEAT_APPLE)
    assert play(world, "go to fridge 1") == ["You arrive at fridge 1. The fridge 1 is closed."]
    assert "open it first" in refused(world, "take apple 1 from fridge 1")
    assert "take apple 1 from fridge 1" not in world.admissible_actions()
    assert play(world, "open fridge 1") == [
        "You open the fridge 1. The fridge 1 is open. In it, you see a apple 1."
    ]
    assert "take apple 1 from fridge 1" in world.admissible_actions()
    play(world, "take apple 1 from fridge 1", "close fridge 1")
    assert "open it first" in refused(world, "put apple 1 in/on fridge 1")
    assert refused(world, "close fridge 1").endswith("The fridge 1 is already closed.")


def test_alfworld_observations() -> None:
    world = make_world(HEAT_APPLE)
    assert world.intro() == (
        "You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a "
        "countertop 1, a countertop 2, a desk 1, a floorlamp 1, a fridge 1, a microwave 1, and "
        "a sinkbasin 1.\n\nYour task is to: put a hot apple in countertop."
    )
    assert play(world, "go to countertop 1", "take apple 2 from countertop 1", "inventory") == [
        "You arrive at countertop 1. On the countertop 1, you see a apple 2, and a book 1.",
        "You pick up the apple 2 from the countertop 1.",
        "You are carrying: a apple 2.",
    ]
    assert play(world, "go to countertop 2", "put apple 2 in/on countertop 2", "look") == [
        "You arrive at countertop 2. On the countertop 2, you see nothing.",
        "You put the apple 2 on the countertop 2.",
        "You are facing the countertop 2. On the countertop 2, you see a apple 2.",
    ]


def test_one_object_at_a_time() -> None:
    world = make_world(HEAT_APPLE)
    play(world, "go to countertop 1", "take apple 2 from countertop 1")
    assert "one object at a time" in refused(world, "take book 1 from countertop 1")
    assert "you are carrying the apple 2" in refused(world, "put book 1 on countertop 1")
    play(world, "put apple 2 on countertop 1", "take book 1 from countertop 1")
    assert world.held == "book 1" and world.items["apple 2"].location == "countertop 1"


def test_you_must_be_at_a_receptacle_to_use_it() -> None:
    world = make_world(HEAT_APPLE)
    assert "go to countertop 1 first" in refused(world, "take apple 2 from countertop 1")
    assert "go to a receptacle first" in refused(world, "take apple 2")
    play(world, "go to countertop 1")
    assert "go to fridge 1 first" in refused(world, "open fridge 1")
    assert "already at" in refused(world, "go to countertop 1")


@pytest.mark.parametrize(
    ("verb", "appliance", "state"),
    [
        ("heat", "microwave 1", "hot"),
        ("cool", "fridge 1", "cool"),
        ("clean", "sinkbasin 1", "clean"),
    ],
)
def test_treatments_need_their_appliance_and_a_suitable_object(
    verb: str, appliance: str, state: str
) -> None:
    world = make_world(HEAT_APPLE)
    play(world, "go to countertop 1", "take book 1 from countertop 1", f"go to {appliance}")
    assert "cannot be" in refused(world, f"{verb} book 1 with {appliance}")
    play(world, "go to countertop 1", "put book 1 on countertop 1")
    play(world, "take apple 2 from countertop 1")
    wrong = "countertop 1"
    assert f"cannot {verb} things with the countertop 1" in refused(
        world, f"{verb} apple 2 with {wrong}"
    )
    play(world, f"go to {appliance}")
    assert f"{verb} apple 2 with {appliance}" in world.admissible_actions()
    assert play(world, f"{verb} apple 2 with {appliance}") == [
        f"You {verb} the apple 2 using the {appliance}."
    ]
    assert getattr(world.items["apple 2"], state)
    assert play(world, "examine apple 2") == [f"The apple 2 is {state}."]


def test_heating_and_cooling_undo_each_other() -> None:
    world = make_world(HEAT_APPLE)
    play(world, "go to countertop 1", "take apple 2 from countertop 1")
    play(world, "go to fridge 1", "cool apple 2 with fridge 1")
    play(world, "go to microwave 1", "heat apple 2 with microwave 1")
    apple = world.items["apple 2"]
    assert apple.hot and not apple.cool


def test_treated_object_must_reach_the_goal_receptacle_kind() -> None:
    world = make_world(HEAT_APPLE)
    play(world, "go to countertop 1", "take apple 2 from countertop 1", "go to countertop 2")
    play(world, "put apple 2 on countertop 2")
    assert not world.solved, "an apple that is not hot solved a heat task"
    play(world, "take apple 2 from countertop 2", "go to microwave 1")
    play(world, "heat apple 2 with microwave 1", "go to fridge 1", "open fridge 1")
    play(world, "put apple 2 in fridge 1")
    assert not world.solved, "a fridge is not a countertop"
    play(world, "take apple 2 from fridge 1", "go to countertop 2", "put apple 2 on countertop 2")
    assert world.solved


def test_pick_two_needs_both_in_the_same_receptacle() -> None:
    world = make_world(Goal("pick_two", "apple", "countertop", "put two apple in countertop."))
    play(world, "go to fridge 1", "open fridge 1", "take apple 1 from fridge 1")
    play(world, "go to countertop 2", "put apple 1 on countertop 2")
    assert not world.solved, "apples on two different countertops solved pick_two"
    play(world, "take apple 1 from countertop 2", "go to countertop 1")
    play(world, "put apple 1 on countertop 1")
    assert world.solved


def test_examine_in_light_needs_the_object_in_hand_under_a_lit_lamp() -> None:
    goal = Goal("examine_in_light", "book", "desklamp", "look at book under the desklamp.")
    world = make_world(goal)
    play(world, "go to desk 1", "use desklamp 1", "go to countertop 1")
    play(world, "take book 1 from countertop 1")
    assert not world.solved, "the lamp is on at another receptacle"
    play(world, "go to desk 1")
    assert world.solved

    world = make_world(goal)
    play(world, "go to countertop 1", "take book 1 from countertop 1", "go to floorlamp 1")
    play(world, "use floorlamp 1")
    assert not world.solved, "the task names the desk lamp, not the floor lamp"
    play(world, "go to desk 1", "examine desklamp 1", "toggle desk lamp 1")
    assert world.solved


def test_lamps_switch_and_cannot_be_taken() -> None:
    world = make_world(HEAT_APPLE)
    play(world, "go to desk 1")
    assert "use desklamp 1" in world.admissible_actions()
    assert "cannot be picked up" in refused(world, "take desklamp 1 from desk 1")
    assert play(world, "turn on desklamp 1", "toggle desklamp 1") == [
        "You turn on the desklamp 1.",
        "You turn off the desklamp 1.",
    ]
    assert "already off" in refused(world, "turn off desklamp 1")
    assert "only lamps" in refused(world, "use desk 1")
    play(world, "go to countertop 1", "take apple 2 from countertop 1", "go to floorlamp 1")
    assert play(world, "examine floorlamp 1") == ["The floorlamp 1 is off."]
    assert "cannot put anything" in refused(world, "put apple 2 on floorlamp 1")


def test_names_are_read_leniently() -> None:
    world = make_world(HEAT_APPLE)
    play(world, "Go to the Fridge.", "OPEN FRIDGE", "take apple1 from fridge 01")
    play(world, "go to microwave", "microwave the apple with microwave 1")
    play(world, "go to sink basin 1", "wash apple 1 in sinkbasin 1")
    play(world, "go to countertop 2", "put apple 1 on countertop 2")
    assert world.solved
    world = make_world(HEAT_APPLE)
    assert "name one with its number" in refused(world, "go to countertop")


def test_invalid_commands_explain_and_change_nothing() -> None:
    world = make_world(HEAT_APPLE)
    play(world, "go to countertop 1")
    for command in (
        "",
        "dance",
        "go to",
        "go to moon 1",
        "go to apple 2",
        "take apple 9 from countertop 1",
        "take apple 1 from countertop 1",
        "put apple 2 on countertop 1",
        "open countertop 1",
        "heat apple 2 with microwave 1",
        "examine fridge 1",
        "use lamp",
        "go to cabinet ٣",
        "take apple ２ from countertop 1",
    ):
        refused(world, command)


def test_admissible_actions_are_exactly_the_valid_commands() -> None:
    env = gym.make("llmgym/Household-v0").unwrapped
    for task_id in [*env.task_ids("train")[:3], *env.task_ids("eval")[:3]]:
        env.reset(options={"task_id": task_id})
        world = env.world
        for step in range(10):
            admissible = world.admissible_actions()
            backup = world.clone()
            for command in _canonical_commands(world):
                before = world.snapshot()
                _, valid = world.step(command)
                assert valid == (command in admissible), (task_id, step, command, valid)
                if valid:
                    world = backup.clone()
                else:
                    assert world.snapshot() == before
            world.step(admissible[(step * 7) % len(admissible)])
            if world.solved:
                break


def _canonical_commands(world: World) -> list[str]:
    """Commands in ALFWorld's forms: every go/open/close/examine/use, and take, put, heat,
    cool and clean over the objects in view or in hand and a few receptacles."""
    commands = ["inventory", "look"]
    for place in world.receptacles:
        commands += [f"go to {place}", f"open {place}", f"close {place}", f"examine {place}"]
    commands += [f"use {lamp}" for lamp in world.lamp_on]
    places = list(world.receptacles)[:3]
    items = list(world.items)[:2]
    if world.location is not None:
        places.append(world.location)
        items += world.receptacles[world.location].contents
    if world.held is not None:
        items.append(world.held)
    for place in places:
        for item in items:
            commands += [f"take {item} from {place}", f"put {item} in/on {place}"]
            commands += [f"{verb} {item} with {place}" for verb in TREATMENTS]
    return commands


def test_objects_are_always_in_exactly_one_place() -> None:
    env = gym.make("llmgym/Household-v0").unwrapped
    rng = np.random.default_rng(0)
    for task_id in [*env.task_ids("train")[:5], *env.task_ids("eval")[:5]]:
        env.reset(options={"task_id": task_id})
        world = env.world
        for _ in range(150):
            world.step(env.sample_action(rng))
            places = [name for r in world.receptacles.values() for name in r.contents]
            if world.held is not None:
                places.append(world.held)
            assert sorted(places) == sorted(world.items), task_id
            for item in world.items.values():
                holder = world.receptacles.get(item.location or "")
                assert (item.location is None) == (item.name == world.held)
                assert holder is None or item.name in holder.contents
            assert not any(r.lamp and r.contents for r in world.receptacles.values())
            if world.solved:
                break


# ---------------------------------------------------------------------- tasks and splits
def test_thousands_of_tasks_and_eval_layouts_unseen_in_train() -> None:
    env = HouseholdEnv()
    train, eval_ = env.task_ids("train"), env.task_ids("eval")
    assert len(train) >= 5000 and len(eval_) >= 1000
    furniture = {  # by content: the receptacles the agent sees and where the desk lamps stand
        split: {
            (room.layout.room, tuple(room.layout.names), room.layout.desklamps)
            for room in env.rooms(split)
        }
        for split in ("train", "eval")
    }
    assert len(furniture["eval"]) >= 250 and not furniture["train"] & furniture["eval"]
    env.reset(options={"task_id": eval_[5]})
    assert env.layout is not None
    assert env.world is not None
    overview = env.world.intro().split("\n\n")[0]
    assert len(re.findall(r" a [a-z]+ [0-9]+", overview)) == len(env.layout.names)


def test_tasks_of_a_layout_share_the_room_and_vary_the_objects() -> None:
    env = HouseholdEnv()
    observations, signatures = set(), set()
    for index in range(TASKS_PER_LAYOUT):
        observation, _ = env.reset(options={"task_id": f"train/{index:05d}"})
        observations.add(observation.split("\n\n")[0])
        signatures.add(env.instance_key())
    assert len(observations) == 1 and len(signatures) == TASKS_PER_LAYOUT


def test_first_observation_and_instruction() -> None:
    env = gym.make("llmgym/Household-v0")
    observation, info = env.reset(seed=7, options={"split": "eval"})
    overview, task = observation.split("\n\n")
    assert re.fullmatch(
        r"You are in the middle of a room\. Looking quickly around you, you see a [a-z]+ 1"
        r"(, a [a-z]+ [0-9]+)*, and a [a-z]+ [0-9]+\.",
        overview,
    )
    assert task == f"Your task is to: {info['instruction']}"
    assert info["admissible_actions"][-2:] == ["inventory", "look"]


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_oracle_solves_each_task_type(task_type: str) -> None:
    env = gym.make("llmgym/Household-v0")
    inner = env.unwrapped
    rooms = inner.rooms("eval")
    indices = [i for i, room in enumerate(rooms) if room.task_type == task_type][:10]
    for index in indices:
        env.reset(options={"task_id": f"eval/{index * TASKS_PER_LAYOUT + index % 4:05d}"})
        assert inner.task_type == task_type and inner.skills_achieved() == frozenset()
        for _ in range(30):
            _, reward, terminated, truncated, info = env.step(inner.oracle_action())
            assert not info["invalid_action"]
            if terminated or truncated:
                break
        assert terminated and reward == 1.0 and info["success"], index
        assert inner.skills_achieved() == {task_type}


def test_task_type_weights_set_the_mix() -> None:
    env = HouseholdEnv(task_types={"pick_and_place": 3, "cool": 1})
    counts = Counter(room.task_type for room in env.rooms("train"))
    assert set(counts) == {"pick_and_place", "cool"}
    assert 2.4 < counts["pick_and_place"] / counts["cool"] < 3.6
    rooms = {room.layout.room for room in env.rooms("train") if room.task_type == "cool"}
    assert rooms == {"kitchen"}


@pytest.mark.parametrize("room", ROOM_TYPES)
def test_a_single_room_type_with_the_fewest_receptacles_fills_both_splits(room: str) -> None:
    env = HouseholdEnv(room_types={room: 1}, extra_receptacles=2)
    for split in ("train", "eval"):
        assert len(env.task_ids(split)) >= 40
        env.reset(options={"split": split})
        assert env.layout is not None and env.layout.room == room


def test_knobs_change_the_rooms() -> None:
    def averages(**config) -> tuple[float, float]:
        env = HouseholdEnv(room_types={"kitchen": 1}, **config)
        receptacles = objects = 0
        for task_id in env.task_ids("train")[:40]:
            env.reset(options={"task_id": task_id})
            receptacles += len(env.world.receptacles)
            objects += sum(item.pickupable for item in env.world.items.values())
        return receptacles / 40, objects / 40

    small, few = averages(extra_receptacles=2, distractor_objects=0)  # the pool of the test above
    large, many = averages(extra_receptacles=30, distractor_objects=40)
    assert small < 15 < 30 < large
    assert few <= 3 and many >= 41


def test_start_open_opens_receptacles() -> None:
    def open_share(start_open: float) -> float:
        env = HouseholdEnv(start_open=start_open)
        env.reset(seed=0)
        openable = [r for r in env.world.receptacles.values() if r.openable]
        return sum(r.is_open for r in openable) / len(openable)

    assert open_share(0.0) == 0.0 and open_share(1.0) == 1.0


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"task_types": {}}, "HouseholdConfig.task_types"),
        ({"task_types": {"bake": 1}}, "HouseholdConfig.task_types.bake"),
        ({"task_types": {"heat": -1}}, "HouseholdConfig.task_types.heat"),
        ({"room_types": {"garage": 1}}, "HouseholdConfig.room_types.garage"),
        ({"room_types": {"kitchen": 0}}, "HouseholdConfig.room_types"),
        ({"task_types": {"heat": 1}, "room_types": {"bedroom": 1}}, "HouseholdConfig.task_types"),
        ({"extra_receptacles": 1}, "HouseholdConfig.extra_receptacles"),
        ({"distractor_objects": 41}, "HouseholdConfig.distractor_objects"),
        ({"start_open": 1.5}, "HouseholdConfig.start_open"),
    ],
)
def test_bad_config_names_the_field(overrides: dict, field: str) -> None:
    with pytest.raises(ConfigError) as error:
        HouseholdEnv(**overrides)
    assert error.value.field == field


def test_schema_describes_the_weights() -> None:
    schema = HouseholdEnv.config_schema()["properties"]
    assert schema["task_types"]["propertyNames"]["enum"] == list(TASK_TYPES)
    assert schema["room_types"]["propertyNames"]["enum"] == list(ROOM_TYPES)
    assert schema["task_types"]["default"] == dict.fromkeys(TASK_TYPES, 1)
