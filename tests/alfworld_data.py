"""Small ALFWorld data in ALFWorld's own layout, written by the tests.

ALFWorld makes a game from an ALFRED trajectory: ``alfworld-generate`` puts the scene's PDDL
problem (``initial_state.pddl``, which ALFRED's generator writes from the AI2-THOR simulator)
together with the domain ``alfred.pddl`` and the grammar ``alfred.twl2`` (its ``UNKNOWN GOAL``
replaced by the task's templated description) into ``game.tw-pddl``. AI2-THOR cannot run here
(it downloads a Unity build), so the problems below are written by hand in the form ALFRED's
generator writes them (mangled THOR object ids, ``loc|x|z|rotation|horizon`` locations, the
goal of ALFWorld's ``goal_library``), with ALFWorld's unchanged domain and grammar
(tests/data/alfworld/).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

LOGIC = Path(__file__).parent / "data" / "alfworld"


def mangle(thor_id: str) -> str:
    """A THOR id as ALFRED's PDDL writes it (``PlannedGameState.fix_pddl_str_chars``)."""
    for char, code in (
        ("-", "_minus_"),
        ("|", "_bar_"),
        ("+", "_plus_"),
        (".", "_dot_"),
        (",", "_comma_"),
    ):
        thor_id = thor_id.replace(char, code)
    return thor_id


@dataclass(frozen=True)
class Scene:
    """A room: receptacles (THOR id -> location), objects (THOR id -> receptacle id)."""

    receptacles: dict[str, str]
    objects: dict[str, str]
    openable: tuple[str, ...] = ()
    heatable: tuple[str, ...] = ()
    toggleable: tuple[str, ...] = ()
    start: str = "loc|0|0|0|30"


KITCHEN = Scene(
    receptacles={
        "CounterTop|-01.50|+00.90|+01.00": "loc|-6|2|3|45",
        "CoffeeMachine|-02.00|+00.90|+00.50": "loc|-8|2|1|60",
        "Cabinet|-00.40|+01.80|+00.20": "loc|-2|1|0|30",
        "Microwave|+01.20|+01.50|-00.30": "loc|5|-1|1|15",
        "Fridge|+02.10|+00.00|+01.10": "loc|8|4|2|60",
    },
    objects={
        "Mug|-01.50|+00.90|+01.20": "CounterTop|-01.50|+00.90|+01.00",
        "Mug|-00.40|+01.80|+00.25": "Cabinet|-00.40|+01.80|+00.20",
        "Apple|+02.10|+00.40|+01.10": "Fridge|+02.10|+00.00|+01.10",
    },
    openable=(
        "Cabinet|-00.40|+01.80|+00.20",
        "Fridge|+02.10|+00.00|+01.10",
        "Microwave|+01.20|+01.50|-00.30",
    ),
    heatable=("Apple|+02.10|+00.40|+01.10", "Mug|-01.50|+00.90|+01.20"),
)

BEDROOM = Scene(
    receptacles={
        "Desk|+01.00|+00.00|-01.20": "loc|4|-4|2|45",
        "SideTable|-01.10|+00.00|+00.60": "loc|-4|2|3|30",
        "Shelf|+00.30|+01.10|+01.90": "loc|1|6|0|15",
    },
    objects={
        "AlarmClock|+01.00|+00.80|-01.25": "Desk|+01.00|+00.00|-01.20",
        "DeskLamp|-01.10|+00.70|+00.60": "SideTable|-01.10|+00.00|+00.60",
        "CD|+00.30|+01.15|+01.90": "Shelf|+00.30|+01.10|+01.90",
    },
    toggleable=("DeskLamp|-01.10|+00.70|+00.60",),
)

_GOALS = {
    "pick_and_place_simple": """
    (:goal (and (exists (?r - receptacle) (exists (?o - object) (and
        (inReceptacle ?o ?r) (objectType ?o {obj}Type) (receptacleType ?r {recep}Type))))))""",
    "pick_heat_then_place_in_recep": """
    (:goal (and (exists (?r - receptacle) (exists (?o - object) (and
        (heatable ?o) (objectType ?o {obj}Type) (receptacleType ?r {recep}Type) (isHot ?o)
        (inReceptacle ?o ?r))))))""",
    "look_at_obj_in_light": """
    (:goal (and
        (exists (?ot - object ?r - receptacle ?a - agent ?l - location) (and
            (objectType ?ot {toggle}Type) (toggleable ?ot) (isToggled ?ot)
            (receptacleAtLocation ?r ?l) (atLocation ?a ?l) (inReceptacle ?ot ?r)))
        (exists (?o - object ?a - agent) (and (objectType ?o {obj}Type) (holds ?a ?o)))))""",
}
_TEMPLATES = {  # ALFWorld's goal_library templates (the first of each)
    "pick_and_place_simple": "put a {obj} in {recep}",
    "pick_heat_then_place_in_recep": "put a hot {obj} in {recep}",
    "look_at_obj_in_light": "look at {obj} under the {toggle}",
}


def _kind(thor_id: str) -> str:
    return thor_id.split("|", 1)[0]


def problem(scene: Scene, task_type: str, obj: str, recep: str = "", toggle: str = "") -> str:
    """The scene's PDDL problem with the goal of ``task_type``, as ALFRED writes it."""
    kinds_o = sorted({_kind(o) for o in scene.objects})
    kinds_r = sorted({_kind(r) for r in scene.receptacles})
    locations = sorted({*scene.receptacles.values(), scene.start})
    lines = [
        "(define (problem plan_trial)",
        "    (:domain alfred)",
        "    (:objects",
        "        agent1 - agent",
    ]
    lines += [f"        {k}Type - otype" for k in kinds_o]
    lines += [f"        {k}Type - rtype" for k in kinds_r]
    lines += [f"        {mangle(o)} - object" for o in sorted(scene.objects)]
    lines += [f"        {mangle(r)} - receptacle" for r in sorted(scene.receptacles)]
    lines += [f"        {mangle(loc)} - location" for loc in locations]
    lines += ["        )", "    (:init", f"        (atLocation agent1 {mangle(scene.start)})"]
    for receptacle, location in sorted(scene.receptacles.items()):
        lines.append(f"        (receptacleType {mangle(receptacle)} {_kind(receptacle)}Type)")
        lines.append(f"        (receptacleAtLocation {mangle(receptacle)} {mangle(location)})")
        lines += [f"        (canContain {_kind(receptacle)}Type {k}Type)" for k in kinds_o]
    for thing, receptacle in sorted(scene.objects.items()):
        lines.append(f"        (objectType {mangle(thing)} {_kind(thing)}Type)")
        lines.append(f"        (inReceptacle {mangle(thing)} {mangle(receptacle)})")
        where = mangle(scene.receptacles[receptacle])
        lines.append(f"        (objectAtLocation {mangle(thing)} {where})")
        if thing not in scene.toggleable:
            lines.append(f"        (pickupable {mangle(thing)})")
    lines += [f"        (openable {mangle(r)})" for r in scene.openable]
    lines += [f"        (heatable {mangle(o)})" for o in scene.heatable]
    lines += [f"        (toggleable {mangle(o)})" for o in scene.toggleable]
    lines.append("        )")
    lines.append(_GOALS[task_type].format(obj=obj, recep=recep, toggle=toggle))
    lines.append(")")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Trial:
    """One ALFRED trial directory of a split."""

    split: str
    task: str
    trial: str
    task_type: str
    problem: str
    goal: str
    solvable: bool | None = True
    game: bool = True


def trial(split: str, scene: Scene, task_type: str, trial_id: str, **targets: str) -> Trial:
    """A trial of ``task_type`` in ``scene`` with ALFRED's directory names."""
    obj, recep, toggle = targets.get("obj", ""), targets.get("recep", ""), targets.get("toggle", "")
    task = f"{task_type}-{obj}-None-{recep or toggle}-{len(scene.receptacles)}"
    goal = _TEMPLATES[task_type].format(obj=obj.lower(), recep=recep.lower(), toggle=toggle.lower())
    return Trial(
        split, task, trial_id, task_type, problem(scene, task_type, obj, recep, toggle), goal
    )


def standard_trials() -> list[Trial]:
    """The data the ALFWorld tests play: train 3 games, valid_seen 1, valid_unseen 4; plus
    trials ALFWorld skips (an unsolvable game, a trial without a game, a ``Sliced`` one, a
    ``movable`` one, an unchecked game without ``solvable``, a task type ALFWorld does not
    play)."""
    simple = {"obj": "Mug", "recep": "CoffeeMachine"}
    heat = {"obj": "Apple", "recep": "CounterTop"}
    light = {"obj": "AlarmClock", "toggle": "DeskLamp"}
    return [
        trial("train", KITCHEN, "pick_and_place_simple", "trial_T20190907_000001_000001", **simple),
        trial(
            "train",
            KITCHEN,
            "pick_heat_then_place_in_recep",
            "trial_T20190907_000002_000002",
            **heat,
        ),
        trial("train", BEDROOM, "look_at_obj_in_light", "trial_T20190907_000003_000003", **light),
        trial(
            "valid_seen",
            KITCHEN,
            "pick_and_place_simple",
            "trial_T20190908_000004_000004",
            **simple,
        ),
        trial(
            "valid_unseen",
            BEDROOM,
            "look_at_obj_in_light",
            "trial_T20190909_000005_000005",
            **light,
        ),
        trial(
            "valid_unseen",
            KITCHEN,
            "pick_heat_then_place_in_recep",
            "trial_T20190909_000006_000006",
            **heat,
        ),
        trial(
            "valid_unseen",
            BEDROOM,
            "pick_and_place_simple",
            "trial_T20190909_000013_000013",
            obj="CD",
            recep="Desk",
        ),
        trial(
            "valid_unseen",
            KITCHEN,
            "pick_and_place_simple",
            "trial_T20190909_000014_000014",
            obj="Apple",
            recep="Cabinet",
        ),
        # skipped by ALFWorld's rule
        _replace(
            trial(
                "train", KITCHEN, "pick_and_place_simple", "trial_T20190907_000007_000007", **simple
            ),
            solvable=False,
        ),
        _replace(
            trial(
                "train", KITCHEN, "pick_and_place_simple", "trial_T20190907_000008_000008", **simple
            ),
            game=False,
        ),
        _replace(
            trial(
                "train", KITCHEN, "pick_and_place_simple", "trial_T20190907_000009_000009", **simple
            ),
            solvable=None,
        ),
        _replace(
            trial(
                "train", KITCHEN, "pick_and_place_simple", "trial_T20190907_000010_000010", **simple
            ),
            task="pick_and_place_simple-Apple_Sliced-None-CounterTop-5",
        ),
        _replace(
            trial(
                "train", KITCHEN, "pick_and_place_simple", "trial_T20190907_000011_000011", **simple
            ),
            task="pick_and_place_with_movable_recep-Mug-Pan-CounterTop-5",
        ),
        _replace(
            trial(
                "train", KITCHEN, "pick_and_place_simple", "trial_T20190907_000012_000012", **simple
            ),
            task_type="pick_and_place_with_movable_recep",
            task="pick_and_place_with_recep-Mug-Pan-CounterTop-5",
        ),
    ]


def _replace(item: Trial, **changes: object) -> Trial:
    from dataclasses import replace

    return replace(item, **changes)  # type: ignore[arg-type]


def write_alfworld(root: Path, trials: list[Trial] | None = None) -> Path:
    """Write ALFWorld's layout under ``root`` (``logic/`` and ``json_2.1.1/<split>/...``),
    every split directory present; returns ``root``."""
    logic = root / "logic"
    logic.mkdir(parents=True, exist_ok=True)
    shutil.copy(LOGIC / "alfred.pddl", logic / "alfred.pddl")
    shutil.copy(LOGIC / "alfred.twl2", logic / "alfred.twl2")
    domain = (LOGIC / "alfred.pddl").read_text()
    grammar = (LOGIC / "alfred.twl2").read_text()
    for split in ("train", "valid_seen", "valid_unseen"):
        (root / "json_2.1.1" / split).mkdir(parents=True, exist_ok=True)
    for item in standard_trials() if trials is None else trials:
        directory = root / "json_2.1.1" / item.split / item.task / item.trial
        directory.mkdir(parents=True, exist_ok=True)
        traj = {
            "task_type": item.task_type,
            "task_id": item.trial,
            "pddl_params": {"object_target": item.task.split("-")[1], "object_sliced": False},
            "turk_annotations": {"anns": [{"task_desc": item.goal}]},
        }
        (directory / "traj_data.json").write_text(json.dumps(traj))
        (directory / "initial_state.pddl").write_text(item.problem)
        if not item.game:
            continue
        game: dict[str, object] = {
            "pddl_domain": domain,
            "grammar": grammar.replace("UNKNOWN GOAL", item.goal),
            "pddl_problem": item.problem,
            "walkthrough": None,
        }
        if item.solvable is not None:
            game["solvable"] = item.solvable
        (directory / "game.tw-pddl").write_text(json.dumps(game))
    return root
