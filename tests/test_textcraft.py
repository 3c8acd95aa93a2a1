"""TextCraft rules and recipe data."""

from __future__ import annotations

import gymnasium as gym
import pytest

from llmgym.envs.textcraft import TextCraftEnv, load_recipe_book


@pytest.fixture
def env() -> TextCraftEnv:
    env = gym.make("llmgym/TextCraft-v0").unwrapped
    env.reset(seed=0)
    return env


def test_recipe_data_is_sound() -> None:
    book = load_recipe_book()
    assert len(book.recipes) >= 150
    assert max(book.depth.values()) >= 4
    for options in book.recipes.values():
        for recipe in options:
            assert 1 <= recipe.count <= 16
            assert sum(amount for _, amount in recipe.inputs) <= 9
            for name, _ in recipe.inputs:
                assert book.is_known(name) or name in book.tags, name
    for members in book.tags.values():
        assert all(book.is_known(member) for member in members)
    assert not book.raw_items & set(book.recipes), "an item is both raw and craftable"
    assert all(item in book.depth for item in book.recipes), (
        "an item cannot be crafted from raw items"
    )


def test_get_only_raw_items(env: TextCraftEnv) -> None:
    assert env.step("get 2 oak logs")[0] == "Got 2 oak log."
    observation, *_, info = env.step("get 1 stick")
    assert info["invalid_action"] and "not a raw material" in observation
    assert env.step("get 1 planks")[4]["invalid_action"]
    assert env.step("get 0 oak log")[4]["invalid_action"]
    assert env.step("get 65 oak log")[4]["invalid_action"]
    assert env.step("get 3 unobtainium")[4]["invalid_action"]


def test_exact_counts_generic_ingredients_and_batches(env: TextCraftEnv) -> None:
    env.step("get 2 birch log")
    observation, *_ = env.step("craft 4 birch planks using 1 birch log")
    assert observation == "Crafted 4 birch planks."
    # stick needs exactly 2 planks; 'birch planks' stands for the generic 'planks'
    assert env.step("craft 4 stick using 3 birch planks")[4]["invalid_action"]
    assert env.step("craft 4 stick using 2 birch planks, 1 oak log")[4]["invalid_action"]
    assert env.step("craft 4 stick using 2 planks")[4]["invalid_action"]
    assert env.step("craft 4 stick using 2 birch planks")[0] == "Crafted 4 stick."
    assert env._inventory == {"birch log": 1, "birch planks": 2, "stick": 4}
    # two batches at once
    env.step("get 1 birch log")
    assert env.step("craft 8 birch planks using 2 birch log")[0] == "Crafted 8 birch planks."
    # not enough items: nothing changes
    before = dict(env._inventory)
    observation, *_, info = env.step("craft 1 chest using 80 birch planks")
    assert info["invalid_action"] and env._inventory == before


def test_missing_ingredients_leave_inventory_unchanged(env: TextCraftEnv) -> None:
    observation, *_, info = env.step("craft 4 oak planks using 1 oak log")
    assert info["invalid_action"] and "missing 1 oak log" in observation
    assert env.step("inventory")[0] == "Inventory: you are not carrying anything."


def test_crafting_the_goal_ends_with_reward() -> None:
    env = gym.make("llmgym/TextCraft-v0", max_depth=1).unwrapped
    env.reset(seed=3)
    for _ in range(20):
        observation, reward, terminated, _, info = env.step(env.oracle_action())
        if terminated:
            break
    assert terminated and reward == 1.0 and info["success"] and "Goal complete" in observation


def test_observation_lists_tree_recipes_and_goal(env: TextCraftEnv) -> None:
    text = env._overview()
    assert text.startswith("Crafting commands:") and text.endswith(f"Goal: craft {env._goal}.")
    for recipe in env.book.recipes[env._goal]:
        assert recipe.command in text


def test_depth_config_filters_goals() -> None:
    env = gym.make("llmgym/TextCraft-v0", min_depth=3, max_depth=4).unwrapped
    for task_id in env.task_ids("eval")[:20]:
        env.reset(options={"task_id": task_id})
        assert env.book.depth[env._goal] >= 3
    with pytest.raises(ValueError, match="min_depth"):
        gym.make("llmgym/TextCraft-v0", min_depth=4, max_depth=2)
