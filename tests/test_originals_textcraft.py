"""TextCraft on original data: Minecraft recipe files in AgentGym's layout, written here."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import httpx
import pytest

from llmgym import testing
from llmgym.envs.textcraft_recipes import TextCraftGame, TextCraftSource, load_recipe_tree
from llmgym.errors import ConfigError, DataError
from llmgym.originals import get_source
from tests.extras import need
from tests.servers import LiveServer


def _shaped(pattern: list[str], key: dict[str, Any], item: str, count: int = 1, **extra: Any):
    result = {"item": f"minecraft:{item}", "count": count}
    return {"type": "minecraft:crafting_shaped", **extra, "pattern": pattern, "key": key,
            "result": result}  # fmt: skip


def _shapeless(ingredients: list[Any], item: str, count: int = 1, **extra: Any):
    result = {"item": f"minecraft:{item}", "count": count}
    return {"type": "minecraft:crafting_shapeless", **extra, "ingredients": ingredients,
            "result": result}  # fmt: skip


def _item(name: str) -> dict[str, str]:
    return {"item": f"minecraft:{name}"}


def _tag(name: str) -> dict[str, str]:
    return {"tag": f"minecraft:{name}"}


RECIPES: dict[str, dict[str, Any]] = {
    "birch_planks": _shapeless([_tag("birch_logs")], "birch_planks", 4, group="planks"),
    "crafting_table": _shaped(["##", "##"], {"#": _tag("planks")}, "crafting_table"),
    "glass": {
        "type": "minecraft:smelting",
        "ingredient": _tag("sand"),
        "result": "minecraft:glass",
        "experience": 0.1,
        "cookingtime": 200,
    },
    "iron_block": _shaped(["###", "###", "###"], {"#": _item("iron_ingot")}, "iron_block"),
    "iron_ingot_from_iron_block": _shapeless(
        [_item("iron_block")], "iron_ingot", 9, group="iron_ingot"
    ),
    "iron_ingot_from_nuggets": _shaped(
        ["###", "###", "###"], {"#": _item("iron_nugget")}, "iron_ingot", group="iron_ingot"
    ),
    "iron_nugget": _shapeless([_item("iron_ingot")], "iron_nugget", 9),
    "oak_planks": _shapeless([_tag("oak_logs")], "oak_planks", 4, group="planks"),
    "spruce_planks": _shapeless([_tag("spruce_logs")], "spruce_planks", 4, group="planks"),
    "stick": _shaped(["#", "#"], {"#": _tag("planks")}, "stick", 4, group="sticks"),
    "torch": _shaped(
        ["X", "#"], {"X": [_item("coal"), _item("charcoal")], "#": _item("stick")}, "torch", 4
    ),
    "wooden_pickaxe": _shaped(
        ["XXX", " # ", " # "], {"#": _item("stick"), "X": _tag("planks")}, "wooden_pickaxe"
    ),
    "wooden_sword": _shaped(
        ["X", "X", "#"], {"#": _item("stick"), "X": _tag("planks")}, "wooden_sword"
    ),
}
# AgentGym's goal order for these files: depth, then the first file that makes the item
GOALS = [
    "birch_planks",
    "iron_ingot",
    "oak_planks",
    "spruce_planks",
    "crafting_table",
    "iron_block",
    "stick",
    "torch",
    "wooden_pickaxe",
    "wooden_sword",
]


def write_recipes(root: Path, recipes: dict[str, dict[str, Any]] = RECIPES) -> Path:
    """``root/recipes/<name>.json``, as AgentGym's ``agentenv_textcraft/`` holds them (written in
    reverse name order, so that the order read is not the order written)."""
    folder = root / "recipes"
    folder.mkdir(parents=True, exist_ok=True)
    for name, recipe in sorted(recipes.items(), reverse=True):
        (folder / f"{name}.json").write_text(json.dumps(recipe, indent=2))
    return root


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_recipes(tmp_path / "agentenv_textcraft")


def make(data: Path, **config: Any) -> gym.Env:
    return gym.make(
        "llmgym/TextCraft-v0", config={"source": "textcraft", "data_dir": str(data), **config}
    )


def play(env: gym.Env, task_id: str, actions: list[str]) -> list[tuple[str, float, bool, bool]]:
    env.reset(options={"task_id": task_id})
    outcomes = []
    for action in actions:
        observation, reward, terminated, _, info = env.step(action)
        outcomes.append((observation, float(reward), terminated, info["invalid_action"]))
    return outcomes


# ---------------------------------------------------------------------- the data
def test_check_counts_goals_and_files(data: Path) -> None:
    report = get_source("textcraft").check(data)
    assert dict(report.splits) == {"train": 7, "eval": 3}
    assert report.found[0] == (
        "recipes/: 13 recipe files, 12 crafting recipes (7 shaped, 5 shapeless; "
        "1 of other types skipped)"
    )
    assert "10 goal items (AgentGym data_idx 0-9" in report.found[1]
    assert "textcraft data in" in report.text() and "7 train, 3 eval" in report.text()


def test_goals_are_agentgyms_order_and_task_ids_map_its_indices(data: Path) -> None:
    tree = load_recipe_tree(data)
    assert list(tree.goals) == [f"minecraft:{goal}" for goal in GOALS]
    ids = TextCraftSource().agentgym_task_ids(data)
    assert ids[:4] == ["train/00000", "train/00001", "train/00002", "eval/00000"]
    assert ids[-1] == "eval/00002"
    env = make(data)
    for index, goal in enumerate(GOALS):
        observation, info = env.reset(options={"task_id": ids[index]})
        assert observation.endswith(f"Goal: craft {goal.replace('_', ' ')}.")
        assert info["instruction"] == f"Craft {goal.replace('_', ' ')}."


def test_recipes_are_read_as_agentgym_reads_them(data: Path) -> None:
    tree = load_recipe_tree(data)
    (torch,) = tree.recipes["minecraft:torch"]
    assert torch.command == "craft 4 torch using 1 coal, 1 stick"  # a list: its first item
    (pickaxe,) = tree.recipes["minecraft:wooden_pickaxe"]
    assert pickaxe.command == "craft 1 wooden pickaxe using 2 stick, 3 planks"  # key order
    assert [r.command for r in tree.recipes["minecraft:iron_ingot"]] == [
        "craft 1 iron ingot using 9 iron nugget"  # block -> 9 ingots is dropped
    ]
    assert "minecraft:iron_nugget" not in tree.recipes  # it would close a cycle
    assert "minecraft:glass" not in tree.items  # smelting is not part of the game
    assert tree.tags == {"minecraft:planks", "minecraft:sticks"}  # logs became items
    assert tree.is_gettable("minecraft:oak_logs") and tree.is_gettable("minecraft:iron_nugget")
    assert tree.tag_of["minecraft:oak_planks"] == "minecraft:planks"
    assert tree.depth["minecraft:wooden_pickaxe"] == 3


def test_a_changed_file_is_read_again(data: Path) -> None:
    assert load_recipe_tree(data) is load_recipe_tree(data)
    changed = dict(RECIPES["stick"], result={"item": "minecraft:stick", "count": 2})
    path = data / "recipes" / "stick.json"
    path.write_text(json.dumps(changed))
    os.utime(path, ns=(1, 1))
    (stick,) = load_recipe_tree(data).recipes["minecraft:stick"]
    assert stick.count == 2


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not a readable recipe JSON file"),
        ("[1, 2]", "a JSON object with a string 'type'"),
        (json.dumps(_shaped(["#"], {"#": {"count": 1}}, "x")), "an ingredient must be"),
        (json.dumps(_shaped("##", {"#": _item("stick")}, "x")), "'pattern', a list of strings"),
        (json.dumps({"type": "minecraft:crafting_shapeless", "result": "x"}), "'ingredients'"),
        (json.dumps(dict(_shapeless([_item("a")], "x"), result={"count": 1})), "'result'"),
    ],
)
def test_a_bad_file_is_named(data: Path, content: str, expected: str) -> None:
    bad = data / "recipes" / "zz_bad.json"
    bad.write_text(content)
    with pytest.raises(DataError, match=expected) as error:
        get_source("textcraft").check(data)
    assert str(bad) in str(error.value)


def test_missing_recipes_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(DataError) as error:
        get_source("textcraft").check(tmp_path)
    message = str(error.value)
    assert str(tmp_path / "recipes") in message and "recipe JSON files" in message
    (tmp_path / "recipes").mkdir()
    with pytest.raises(DataError, match="no recipe files"):
        get_source("textcraft").check(tmp_path)


def test_a_tag_cycle_is_a_data_error(tmp_path: Path) -> None:
    recipes = {
        "a": _shapeless([_tag("bs")], "a", group="as"),
        "b": _shapeless([_tag("as")], "b", group="bs"),
    }
    with pytest.raises(DataError, match="a cycle"):
        load_recipe_tree(write_recipes(tmp_path, recipes))


# ---------------------------------------------------------------------- the rules
def test_agentgyms_answers(data: Path) -> None:
    env = make(data)
    outcomes = play(
        env,
        "train/00005",  # stick
        [
            "inventory",
            "get 1 stick",
            "get 1 planks",
            "get 2 oak logs",
            "craft 4 oak planks using 1 oak logs",
            "craft 4 stick using 2 planks",
            "craft 4 stick using 3 oak planks",
            "craft 4 stick using two oak planks",
            "look around",
            "Inventory",
            "get 1 oak_logs",
            "craft 4 stick using 2 oak planks",
        ],
    )
    assert outcomes == [
        ("Inventory: You are not carrying anything.", 0.0, False, False),
        ("Could not find stick", 0.0, False, True),
        ("Could not find planks", 0.0, False, True),
        ("Got 2 oak logs", 0.0, False, False),
        ("Crafted 4 minecraft:oak_planks", 0.0, False, False),
        ("Could not find enough items to craft minecraft:stick", 0.0, False, True),
        (
            "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, "
            "item_id='minecraft:stick'), count=4)",
            0.0,
            False,
            True,
        ),
        ("Wrong item format: two oak planks", 0.0, False, True),
        ("Could not execute look around", 0.0, False, True),
        ("Could not execute Inventory", 0.0, False, True),  # AgentGym is case-sensitive
        ("Could not find oaklogs", 0.0, False, True),  # AgentGym's client drops '_'
        ("Crafted 4 minecraft:stick", 1.0, True, False),
    ]


def test_inventory_lists_what_is_held(data: Path) -> None:
    env = make(data)
    outcomes = play(env, "train/00005", ["get 1 oak logs", "get 9 coal", "inventory"])
    assert outcomes[-1][0] == "Inventory: [oak logs] (1) [coal] (9) "


def test_an_item_named_twice(data: Path, tmp_path: Path) -> None:
    env = make(data)
    outcomes = play(
        env,
        "train/00006",  # wooden pickaxe
        ["get 1 oak logs", "craft 4 oak planks using 1 oak logs",
         "craft 1 crafting table using 2 oak planks, 2 oak planks"],
    )  # fmt: skip
    assert outcomes[-1] == (
        "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, "
        "item_id='minecraft:crafting_table'), count=1)",
        0.0,
        False,
        True,
    )
    # each amount held, not both, and a recipe that takes both: AgentGym's inventory would
    # go below zero (or fail with a KeyError at zero); llmgym answers that items are missing
    planks = [_item("oak_planks")] * 3 + [_tag("planks")] * 3
    kit = {name: RECIPES[name] for name in ("oak_planks", "birch_planks")}
    kit["kit"] = _shapeless(planks, "kit")
    root = write_recipes(tmp_path / "kit", kit)
    goals = load_recipe_tree(root).goals
    task_id = TextCraftSource().agentgym_task_ids(root)[goals.index("minecraft:kit")]
    outcomes = play(
        make(root),
        task_id,
        ["get 1 oak logs", "craft 4 oak planks using 1 oak logs", "get 1 birch logs",
         "craft 4 birch planks using 1 birch logs",
         "craft 1 kit using 3 oak planks, 3 oak planks",
         "craft 1 kit using 3 oak planks, 3 birch planks"],
    )  # fmt: skip
    assert outcomes[-2:] == [
        ("Could not find enough items to craft minecraft:kit", 0.0, False, True),
        ("Crafted 1 minecraft:kit", 1.0, True, False),
    ]


def test_oracle_solves_every_goal(data: Path) -> None:
    env = make(data)
    for split in ("train", "eval"):
        for task_id in env.unwrapped.task_ids(split):
            trajectory = testing.run_episode(
                env, testing.oracle_policy, options={"task_id": task_id}, max_steps=40
            )
            assert trajectory[-1][5]["success"], task_id
            assert sum(step[2] for step in trajectory) == 1.0


def test_a_wrong_answer_scores_zero(data: Path) -> None:
    env = make(data)
    actions = [
        "get 2 oak logs",
        "craft 4 oak planks using 2 oak logs",  # the recipe takes 1
        "craft 1 wooden sword using 2 oak logs, 1 stick",
        "craft 1 wooden sword using 2 planks, 1 stick",
        "craft 1 wooden pickaxe using 3 oak planks, 2 stick",
    ]
    outcomes = play(env, "eval/00002", actions)  # wooden sword
    assert [reward for _, reward, *_ in outcomes] == [0.0] * len(actions)
    assert not any(terminated for _, _, terminated, _ in outcomes)
    assert all(invalid for *_, invalid in outcomes[1:])


def test_commands_show_the_tree_and_distractors(data: Path) -> None:
    env = make(data)
    observation, _ = env.reset(options={"task_id": "eval/00001"})  # torch
    listed = observation.split("\n\n")[0].split("\n")[1:]
    assert set(listed) >= {
        "craft 4 torch using 1 coal, 1 stick",
        "craft 4 stick using 2 planks",
        "craft 4 oak planks using 1 oak logs",
        "craft 4 birch planks using 1 birch logs",
        "craft 4 spruce planks using 1 spruce logs",
    }
    assert "craft 1 wooden sword using 1 stick, 2 planks" in listed  # another use of stick
    assert len(listed) == len(set(listed))
    again, _ = make(data).reset(options={"task_id": "eval/00001"})
    assert again == observation
    few, _ = make(data, distractors=0).reset(options={"task_id": "eval/00001"})
    assert "wooden sword" not in few


# ---------------------------------------------------------------------- configuration
def test_configuration_errors(data: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"TextCraftConfig\.data_dir: .*give data_dir"):
        gym.make("llmgym/TextCraft-v0", config={"source": "textcraft"})
    with pytest.raises(ConfigError, match="is not a directory"):
        make(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="source is 'generated'"):
        gym.make("llmgym/TextCraft-v0", config={"data_dir": str(data)})
    with pytest.raises(ConfigError, match=r"TextCraftConfig\.min_depth: applies to generated"):
        make(data, min_depth=2)
    with pytest.raises(DataError, match="recipes"):
        make(tmp_path).reset()


def test_conformance(data: Path) -> None:
    figures = testing.check_conformance(lambda: make(data), oracle_episodes=3, hostile_count=200)
    assert figures["oracle_success_rate"] == 1.0


def test_agentgym_indices_through_the_server(data: Path) -> None:
    need("fastapi")
    from llmgym.serving.server import ServerSettings

    with LiveServer(ServerSettings(data=(("textcraft", str(data)),))) as server:
        base = f"{server.url}/agentgym/textcraft"
        body = {"commands": None, "goal": None, "minecraft_dir": "agentenv_textcraft/"}
        handle = httpx.post(f"{base}/create", json=body).json()["id"]
        for index in (7, 0, 9):  # AgentGym's data_idx i: its goal i
            answer = httpx.post(f"{base}/reset", json={"id": handle, "data_idx": index}).json()
            goal = GOALS[index].replace("_", " ")
            assert answer["observation"].endswith(f"\n\nGoal: craft {goal}.")
        httpx.post(f"{base}/reset", json={"id": handle, "data_idx": 6}).raise_for_status()
        game = TextCraftGame(load_recipe_tree(data), "minecraft:stick", 10)
        answers = []
        while not game.step(action := game.oracle_action()).terminated:
            step = httpx.post(f"{base}/step", json={"id": handle, "action": action}).json()
            answers.append((step["reward"], step["done"]))
        step = httpx.post(f"{base}/step", json={"id": handle, "action": action}).json()
        assert answers == [(0, False)] * len(answers)
        assert (step["observation"], step["reward"], step["done"]) == (
            "Crafted 4 minecraft:stick",
            1,
            True,
        )
        beyond = httpx.post(f"{base}/reset", json={"id": handle, "data_idx": len(GOALS)})
        assert beyond.status_code == 422 and "items are 0..9" in beyond.text
