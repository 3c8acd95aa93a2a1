"""llmgym's TextCraft on original data against AgentGym's own TextCraft code, task by task.

    python benchmarks/textcraft_agentgym_parity.py --agentgym PATH/TO/AgentGym

Needs a checkout of AgentGym (https://github.com/WooooDyy/AgentGym; its
``agentenv-textcraft/agentenv_textcraft`` holds the game and its ``recipes/``) and numpy and
gymnasium, which AgentGym's TextCraft imports; its FastAPI server is not started. Both games
read the same ``recipes/`` directory, AgentGym's with ``os.listdir`` answering in name order
(the order llmgym reads; AgentGym's own order depends on the filesystem). For every goal index
``i`` it checks that:

* AgentGym's ``reset(data_idx=i)`` picks the goal llmgym's ``agentgym_task_ids()[i]`` plays;
* the recipe tree and the pool of distractor recipes are the same sets of commands, and the
  observation lists the tree and the same number of distractors from the pool (which ones
  AgentGym picks depends on ``PYTHONHASHSEED``; see docs/originals.md), the very same
  commands where the pool has at most 10 (all are shown);
* llmgym's oracle, played in AgentGym's game, gets AgentGym's reward 1, with every observation,
  reward and ``done`` equal to llmgym's;
* a fixed list of wrong or malformed actions gets the same answers from both (its last action,
  ``craft 1 GOAL using 2 FIRST-INGREDIENT`` after ``get 2`` of it, is right for a few goals:
  ``probe_steps_rewarded`` counts the steps AgentGym rewarded).

Writes ``benchmarks/results/textcraft_agentgym_parity.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import gymnasium as gym
from bench_utils import write_json

from llmgym.envs.textcraft_recipes import (
    TextCraftGame,
    TextCraftSource,
    agentgym_action,
    item_name,
    load_recipe_tree,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "textcraft_agentgym_parity.json"
PACKAGE = Path("agentenv-textcraft") / "agentenv_textcraft"


def import_agentgym(package_dir: Path) -> tuple[Any, Any]:
    """AgentGym's ``CraftingTree`` and ``TextCraftEnv`` classes, without its server (the
    package's ``__init__`` starts FastAPI)."""
    package = types.ModuleType("agentenv_textcraft")
    package.__path__ = [str(package_dir)]
    sys.modules["agentenv_textcraft"] = package
    from agentenv_textcraft.crafting_tree import CraftingTree  # type: ignore[import-not-found]
    from agentenv_textcraft.environment import TextCraftEnv  # type: ignore[import-not-found]

    return CraftingTree, TextCraftEnv


def probes(game: TextCraftGame) -> list[str]:
    """Wrong, malformed and harmless actions for one task (as the client would send them)."""
    goal = item_name(game.goal)
    recipe = game.tree.recipes[game.goal][0]
    shown = recipe.command.removeprefix("craft ")
    first = recipe.inputs[0]
    return [
        "inventory",
        f"get 1 {goal}",
        f"craft 1 {goal} using 1 stick",
        f"craft {shown}",
        f"craft 1 {goal}",
        "look around",
        f"get x {item_name(first.name)}",
        f"craft 1 {goal} using one stick",
        "craft 1 planks using 1 oak logs",
        f"get 2 {item_name(first.name)}",
        "get 1 planks",
        "inventory",
        f"craft 1 {goal} using 2 {item_name(first.name)}",
        "",
    ]


def compare(agentgym_dir: Path) -> dict[str, Any]:
    package_dir = agentgym_dir / PACKAGE
    crafting_tree_class, env_class = import_agentgym(package_dir)
    listdir = os.listdir
    os.listdir = lambda path=".": sorted(listdir(path))  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            agentgym_tree = crafting_tree_class(minecraft_dir=str(package_dir))
    finally:
        os.listdir = listdir  # type: ignore[assignment]
    started = time.perf_counter()
    tree = load_recipe_tree(package_dir)
    load_seconds = time.perf_counter() - started
    report = TextCraftSource().check(package_dir)
    task_ids = TextCraftSource().agentgym_task_ids(package_dir)
    env = gym.make(
        "llmgym/TextCraft-v0", config={"source": "textcraft", "data_dir": str(package_dir)}
    ).unwrapped

    counts = dict.fromkeys(
        [
            "goals_equal",
            "task_ids_equal",
            "trees_equal",
            "pools_equal",
            "observations_consistent",
            "goals_showing_whole_pool",
            "whole_pool_lists_equal_as_sets",
            "oracle_solved_in_agentgym",
            "oracle_steps_equal",
            "probe_answers_equal",
        ],
        0,
    )
    oracle_steps = probe_steps = probes_rewarded = 0
    differences: list[str] = []
    for index, goal in enumerate(tree.goals):
        agentgym = env_class(crafting_tree=agentgym_tree, commands=None, goal=None)
        with contextlib.redirect_stdout(io.StringIO()):
            observation, _ = agentgym.reset(data_idx=index)
            random.seed(42)  # what reset does before create_recipe_set
            recipes, distractors = agentgym_tree.create_recipe_set(agentgym.goal)
        counts["goals_equal"] += agentgym.goal == goal
        env.reset(options={"task_id": task_ids[index]})
        counts["task_ids_equal"] += env._goal == agentgym.goal
        game = TextCraftGame(tree, goal, 10)
        tree_commands = {r.recipe_str for r in recipes}
        pool = {d.recipe_str for d in distractors} - tree_commands
        ours_tree, ours_pool = tree.candidates(goal, random.Random(42))
        counts["trees_equal"] += tree_commands == set(ours_tree)
        counts["pools_equal"] += pool == set(ours_pool)
        listed = set(observation.split("\n\n")[0].split("\n")[1:])
        counts["observations_consistent"] += (
            tree_commands <= listed
            and listed - tree_commands <= pool
            and len(listed) == len(tree_commands) + min(10, len(pool))
        )
        if len(pool) <= 10:  # every distractor shown: the same list, whatever the set order
            counts["goals_showing_whole_pool"] += 1
            counts["whole_pool_lists_equal_as_sets"] += listed == set(game.commands)
        solved, same = False, True
        for _ in range(200):
            action = agentgym_action(game.oracle_action())
            mine = game.step(action)
            with contextlib.redirect_stdout(io.StringIO()):
                theirs = agentgym.step(action)
            oracle_steps += 1
            if (theirs[0], float(theirs[1]), theirs[2]) != (
                mine.observation,
                mine.reward,
                mine.terminated,
            ):
                same = False
                differences.append(f"{goal} {action!r}: {theirs[0]!r} / {mine.observation!r}")
                break
            if theirs[2]:
                solved = theirs[1] == 1
                break
        counts["oracle_solved_in_agentgym"] += solved
        counts["oracle_steps_equal"] += same
        fresh = TextCraftGame(tree, goal, 10)
        agentgym = env_class(crafting_tree=agentgym_tree, commands=None, goal=None)
        with contextlib.redirect_stdout(io.StringIO()):
            agentgym.reset(data_idx=index)
        equal = True
        for action in probes(fresh):
            action = agentgym_action(action)
            mine = fresh.step(action)
            with contextlib.redirect_stdout(io.StringIO()):
                theirs = agentgym.step(action)
            probe_steps += 1
            probes_rewarded += bool(theirs[1])
            if (theirs[0], float(theirs[1]), theirs[2]) != (
                mine.observation,
                mine.reward,
                mine.terminated,
            ):
                equal = False
                differences.append(f"{goal} {action!r}: {theirs[0]!r} / {mine.observation!r}")
        counts["probe_answers_equal"] += equal
    return {
        "agentgym_commit": _commit(agentgym_dir),
        "recipe_files": sum(tree.files.values()),
        "recipe_files_by_type": tree.files,
        "goals": len(tree.goals),
        "goals_by_depth": _by_depth(tree),
        "generic_ingredients": len(tree.tags),
        "known_items": len(tree.items),
        "splits": dict(report.splits),
        "load_seconds": round(load_seconds, 3),
        "oracle_steps": oracle_steps,
        "probe_steps": probe_steps,
        "probe_steps_rewarded": probes_rewarded,
        **counts,
        "differences": differences[:20],
    }


def _by_depth(tree: Any) -> dict[str, int]:
    depths: dict[str, int] = {}
    for goal in tree.goals:
        key = str(tree.depth[goal])
        depths[key] = depths.get(key, 0) + 1
    return dict(sorted(depths.items()))


def _commit(directory: Path) -> str | None:
    try:
        return subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agentgym", type=Path, required=True, help="an AgentGym checkout")
    args = parser.parse_args()
    write_json(RESULTS, compare(args.agentgym.resolve()))


if __name__ == "__main__":
    main()
