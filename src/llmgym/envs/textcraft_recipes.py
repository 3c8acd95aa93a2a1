"""TextCraft's original data: the Minecraft recipe files AgentGym's TextCraft reads.

AgentGym's ``agentenv-textcraft`` (after ADaPT's TextCraft) builds its game from a directory
``recipes/`` of Minecraft 1.16 recipe JSON files, one per recipe. This module reads that
directory as AgentGym does (``agentenv_textcraft/crafting_tree.py``), numbers the goals as
AgentGym's ``reset(data_idx=i)`` picks them, builds the crafting commands it shows and plays
its rules (``agentenv_textcraft/environment.py``), message for message. The code is llmgym's
own; what it reproduces, and the few places where it cannot, are listed in docs/originals.md.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from llmgym.core import Transition, split_of
from llmgym.core.cache import bounded_cache
from llmgym.errors import DataError
from llmgym.originals import DataReport, OriginalSource, missing_data

__all__ = [
    "Ingredient",
    "OriginalRecipe",
    "RecipeTree",
    "TextCraftGame",
    "TextCraftSource",
    "agentgym_action",
    "item_name",
    "load_recipe_tree",
]

_AGENTGYM_SEED = 42
"""The seed AgentGym's ``TextCraftEnv.reset`` gives ``random.seed`` before building the
commands of every task (its ``seed=42`` default, never overridden by its server)."""
_NAMESPACE = "minecraft:"
_SHAPED = "minecraft:crafting_shaped"
_SHAPELESS = "minecraft:crafting_shapeless"
_USES_PER_INGREDIENT = 10  # create_recipe_set: at most 10 uses sampled per ingredient
_UNSAFE = re.compile(r"[^A-Za-z0-9, ]+")
_CRAFT = re.compile(r"craft (.*) using (.*)")
_GET = re.compile(r"get ([0-9]+) (.*)")
_INVENTORY = re.compile(r"inventory")
_COUNT = re.compile(r"([0-9]+) (.*)")


def item_name(item_id: str) -> str:
    """An id as the game shows it: ``minecraft:oak_planks`` -> ``oak planks`` (AgentGym's
    ``item_id_to_str``)."""
    return item_id.replace(_NAMESPACE, "").replace("_", " ")


def agentgym_action(text: str) -> str:
    """An action as AgentGym's ``TextCraftEnvClient.step`` sends it to the server: every
    character outside ``[A-Za-z0-9, ]`` removed, whitespace collapsed."""
    return " ".join(_UNSAFE.sub("", text).split())


def _goal_split(goal: str) -> str:
    """The llmgym split of a goal item id: by a hash of its name, as the generated TextCraft
    splits its goals (``textcraft:<name>``), so an item is in the same split in both."""
    return split_of(f"textcraft:{item_name(goal)}")


@dataclass(frozen=True)
class Ingredient:
    """One input of a recipe: ``count`` of an item id or, where ``is_tag``, of any item whose
    recipe group is the tag ``name``."""

    name: str
    count: int
    is_tag: bool = False


@dataclass(frozen=True)
class OriginalRecipe:
    """A crafting recipe as AgentGym keeps it: ``count`` of ``output`` from ``inputs``;
    ``tag`` is the output's group (``minecraft:planks`` for oak planks), if any."""

    output: str
    count: int
    inputs: tuple[Ingredient, ...]
    tag: str | None = None

    @cached_property
    def command(self) -> str:
        """The recipe as shown: ``craft 4 stick using 2 planks`` (AgentGym's ``recipe_str``)."""
        parts = ", ".join(f"{i.count} {item_name(i.name)}" for i in self.inputs)
        return f"craft {self.count} {item_name(self.output)} using {parts}"


@dataclass
class _Draft:
    """A recipe while the directory is read: its tag inputs may still become items."""

    output: str
    count: int
    tag: str | None
    inputs: list[Ingredient]


@dataclass(frozen=True, eq=False)  # one object per directory read: compared by identity
class RecipeTree:
    """The recipes of a ``recipes/`` directory as AgentGym's ``CraftingTree`` holds them.

    Attributes:
        recipes: Recipes by output item id, in AgentGym's order (first file that makes it).
        tag_recipes: Recipes by their output's group tag.
        tags: The tags (generic ingredients) left after tags without a craftable member
            became plain items.
        items: Every item id AgentGym knows (can ``get`` unless craftable).
        tag_of: The group tag of an item id (what a generic ingredient accepts).
        depth: AgentGym's minimum crafting depth of every item and tag it was asked for.
        goals: AgentGym's goal list: ``goals[i]`` is the goal of ``reset(data_idx=i)``.
        files: Recipe files read, by ``type``.
        uses: The recipes that take an item or tag, a grouped recipe twice (AgentGym's
            ``collect_item_uses``): where distractors are drawn from.
        members_of: The item ids of each tag, in AgentGym's order.
    """

    recipes: dict[str, tuple[OriginalRecipe, ...]]
    tag_recipes: dict[str, tuple[OriginalRecipe, ...]]
    tags: frozenset[str]
    items: frozenset[str]
    tag_of: dict[str, str]
    depth: dict[str, int]
    goals: tuple[str, ...]
    files: dict[str, int]
    uses: dict[str, tuple[OriginalRecipe, ...]] = field(repr=False)
    members_of: dict[str, tuple[str, ...]] = field(repr=False)

    def __deepcopy__(self, memo: dict[int, Any]) -> RecipeTree:
        return self  # never changed after loading: a copied episode shares it

    def is_craftable(self, name: str) -> bool:
        """Whether ``name`` has a recipe (as an item or a tag)."""
        return name in self.recipes or name in self.tag_recipes

    def is_gettable(self, item_id: str) -> bool:
        """Whether ``get N ITEM`` succeeds for ``item_id``: known, not a tag, not craftable."""
        return item_id in self.items and item_id not in self.tags and not self.is_craftable(item_id)

    def members(self, tag: str) -> tuple[str, ...]:
        """The item ids a generic ingredient ``tag`` accepts, in AgentGym's order."""
        return self.members_of.get(tag, ())

    def goals_of(self, split: str) -> tuple[str, ...]:
        """The goals of an llmgym split, in AgentGym's order."""
        return _goals_of(self, split)

    def recipe_tree(self, name: str, visited: frozenset[str] = frozenset()) -> list[OriginalRecipe]:
        """Every recipe of ``name`` and, recursively, of its ingredients, repeats kept
        (AgentGym's ``traverse_recipe_tree``: a name already on the path is cut)."""
        if name in visited:
            return []
        current = self.recipes.get(name) or self.tag_recipes.get(name) or ()
        path = visited | {name}
        collected = list(current)
        for recipe in current:
            for ingredient in recipe.inputs:
                collected += self.recipe_tree(ingredient.name, path)
        return collected

    def candidates(self, goal: str, rng: random.Random) -> tuple[list[str], list[str]]:
        """The commands of ``goal``'s recipe tree and the pool of distractors (other uses of
        its ingredients, at most 10 drawn per ingredient with ``rng``), each without repeats
        in the order first met (AgentGym's ``create_recipe_set`` and the sets its ``reset``
        makes of them)."""
        tree = self.recipe_tree(goal)
        drawn: list[OriginalRecipe] = []
        for recipe in tree:
            for ingredient in recipe.inputs:
                uses = self.uses.get(ingredient.name)
                if uses:
                    drawn += rng.sample(uses, min(len(uses), _USES_PER_INGREDIENT))
        shown = list(dict.fromkeys(recipe.command for recipe in tree))
        in_tree = set(shown)
        pool = list(dict.fromkeys(r.command for r in drawn if r.command not in in_tree))
        return shown, pool

    def commands(self, goal: str, distractors: int) -> list[str]:
        """The crafting commands shown for ``goal``: its recipe tree and up to ``distractors``
        of the pool, shuffled (AgentGym's ``reset``).

        The random calls are AgentGym's, from ``random.seed(42)``; where AgentGym lists a
        ``set`` of strings (an order that varies with ``PYTHONHASHSEED``), this lists the
        strings in the order they were first met."""
        rng = random.Random(_AGENTGYM_SEED)
        shown, pool = self.candidates(goal, rng)
        listed = shown + rng.sample(pool, min(len(pool), distractors))
        rng.shuffle(listed)
        return listed


@bounded_cache(16)
def _goals_of(tree: RecipeTree, split: str) -> tuple[str, ...]:
    return tuple(goal for goal in tree.goals if _goal_split(goal) == split)


def load_recipe_tree(data_dir: Path) -> RecipeTree:
    """The recipes of ``data_dir/recipes/``, read once per process (again when a file there
    changes).

    Raises:
        DataError: ``recipes/`` is missing or a file in it does not read as a recipe.
    """
    recipes_dir = data_dir / "recipes"
    if not recipes_dir.is_dir():
        raise missing_data(recipes_dir, "the directory of recipe JSON files", "textcraft")
    stamp = tuple(
        (entry.name, stat.st_mtime_ns, stat.st_size)
        for entry in sorted(os.scandir(recipes_dir), key=lambda e: e.name)
        for stat in (entry.stat(),)
    )
    return _load(recipes_dir.resolve(), stamp)


@bounded_cache(4)
def _load(recipes_dir: Path, stamp: tuple[tuple[str, int, int], ...]) -> RecipeTree:
    return _Loader(recipes_dir).tree([name for name, *_ in stamp])


class _Loader:
    """AgentGym's ``CraftingTree.__init__``: ``_load_recipes`` then ``clean_up_recipes``."""

    def __init__(self, recipes_dir: Path) -> None:
        self.dir = recipes_dir
        self.drafts: list[_Draft] = []
        self.item_recipes: dict[str, list[int]] = {}
        self.tag_recipes: dict[str, list[int]] = {}
        self.tags: set[str] = set()
        self.items: set[str] = set()
        self.tag_of: dict[str, str] = {}
        self.depends: dict[str, set[str]] = {}
        self.files: dict[str, int] = {}

    def tree(self, names: list[str]) -> RecipeTree:
        # AgentGym reads os.listdir's order, which varies with the filesystem; llmgym reads
        # the files in name order (docs/originals.md says what that changes)
        if not names:
            raise DataError(f"{self.dir}: no recipe files (expected one JSON file per recipe)")
        for name in names:
            if not name.startswith("."):
                self._read(self.dir / name)
        self._clean_up()
        made = [self._freeze(draft) for draft in self.drafts]
        recipes = {item: tuple(made[i] for i in ids) for item, ids in self.item_recipes.items()}
        tag_recipes = {tag: tuple(made[i] for i in ids) for tag, ids in self.tag_recipes.items()}
        uses: dict[str, list[OriginalRecipe]] = {}
        for group in (recipes, tag_recipes):  # collect_item_uses: a grouped recipe counts twice
            for options in group.values():
                for recipe in options:
                    for ingredient in recipe.inputs:
                        uses.setdefault(ingredient.name, []).append(recipe)
        depth: dict[str, int] = {}
        for item in recipes:
            _depth(item, recipes, tag_recipes, depth, set())
        goals = sorted((item for item in recipes if depth[item] >= 1), key=depth.__getitem__)
        members: dict[str, list[str]] = {}
        for item, tag in self.tag_of.items():
            members.setdefault(tag, []).append(item)
        return RecipeTree(
            recipes=recipes,
            tag_recipes=tag_recipes,
            tags=frozenset(self.tags),
            items=frozenset(self.items),
            tag_of=dict(self.tag_of),
            depth=depth,
            goals=tuple(goals),
            files=dict(sorted(self.files.items())),
            uses={name: tuple(found) for name, found in uses.items()},
            members_of={tag: tuple(items) for tag, items in members.items()},
        )

    def _read(self, path: Path) -> None:
        try:
            details = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise DataError(f"{path}: not a readable recipe JSON file ({error})") from error
        if not isinstance(details, dict) or not isinstance(details.get("type"), str):
            raise DataError(f"{path}: a recipe is a JSON object with a string 'type'")
        kind = details["type"]
        self.files[kind] = self.files.get(kind, 0) + 1
        if kind == _SHAPED:
            inputs = self._shaped(path, details)
        elif kind == _SHAPELESS:
            inputs = self._shapeless(path, details)
        else:  # smelting, stonecutting, special recipes: not part of the game
            return
        output, count = _result(path, details.get("result"))
        self.items.add(output)
        if len(inputs) == 1 and inputs[0].name.endswith("_block"):
            return  # AgentGym drops "block -> 9 ingots" recipes
        tag = None
        if "group" in details:
            tag = _NAMESPACE + str(details["group"])
            if tag != output:
                self.tags.add(tag)
                self.tag_of[output] = tag
        depends = self.depends.setdefault(output, set())
        if any(output in self.depends.get(i.name, ()) for i in inputs):
            return  # it would close a cycle with a recipe read earlier
        index = len(self.drafts)
        self.drafts.append(_Draft(output, count, tag, inputs))
        self.item_recipes.setdefault(output, []).append(index)
        for ingredient in inputs:
            depends.add(ingredient.name)
            depends.update(self.depends.get(ingredient.name, ()))
        if tag is not None:
            self.tag_recipes.setdefault(tag, []).append(index)

    def _ingredient(self, path: Path, entry: Any, count: int) -> Ingredient:
        if isinstance(entry, list):  # alternatives: AgentGym takes the first
            entry = entry[0] if entry else None
        if isinstance(entry, dict) and isinstance(entry.get("item"), str):
            self.items.add(entry["item"])
            return Ingredient(entry["item"], count)
        if isinstance(entry, dict) and isinstance(entry.get("tag"), str):
            self.tags.add(entry["tag"])
            return Ingredient(entry["tag"], count, is_tag=True)
        raise DataError(
            f"{path}: an ingredient must be {{'item': ID}}, {{'tag': TAG}} or a list of "
            f"them, got {json.dumps(entry)[:80]}"
        )

    def _shaped(self, path: Path, details: dict[str, Any]) -> list[Ingredient]:
        pattern, key = details.get("pattern"), details.get("key")
        if not isinstance(pattern, list) or not all(isinstance(row, str) for row in pattern):
            raise DataError(f"{path}: a shaped recipe needs 'pattern', a list of strings")
        if not isinstance(key, dict):
            raise DataError(f"{path}: a shaped recipe needs 'key', an object of ingredients")
        return [
            self._ingredient(path, entry, sum(row.count(symbol) for row in pattern))
            for symbol, entry in key.items()
        ]

    def _shapeless(self, path: Path, details: dict[str, Any]) -> list[Ingredient]:
        entries = details.get("ingredients")
        if not isinstance(entries, list):
            raise DataError(f"{path}: a shapeless recipe needs 'ingredients', a list")
        inputs: list[Ingredient] = []
        position: dict[str, int] = {}
        for entry in entries:
            ingredient = self._ingredient(path, entry, 1)
            if ingredient.name in position:  # a repeated ingredient counts once more
                at = position[ingredient.name]
                inputs[at] = Ingredient(ingredient.name, inputs[at].count + 1, ingredient.is_tag)
            else:
                position[ingredient.name] = len(inputs)
                inputs.append(ingredient)
        return inputs

    def _clean_up(self) -> None:
        """A tag input none of whose members has a recipe becomes a plain (gettable) item."""
        converted: set[str] = set()
        for ids in self.item_recipes.values():
            for index in ids:
                draft = self.drafts[index]
                for position, ingredient in enumerate(draft.inputs):
                    if not ingredient.is_tag:
                        continue
                    members = (i for i, tag in self.tag_of.items() if tag == ingredient.name)
                    if not any(member in self.item_recipes for member in members):
                        draft.inputs[position] = Ingredient(ingredient.name, ingredient.count)
                        converted.add(ingredient.name)
        self.items |= converted
        self.tags -= converted

    @staticmethod
    def _freeze(draft: _Draft) -> OriginalRecipe:
        return OriginalRecipe(draft.output, draft.count, tuple(draft.inputs), draft.tag)


def _result(path: Path, result: Any) -> tuple[str, int]:
    if isinstance(result, str):
        return result, 1
    if isinstance(result, dict) and isinstance(result.get("item"), str):
        count = result.get("count") or 1
        if not isinstance(count, int) or count < 1:
            raise DataError(f"{path}: 'result.count' must be a positive integer, got {count!r}")
        return result["item"], count
    raise DataError(f"{path}: 'result' must be an item id or {{'item': ID, 'count': N}}")


def _depth(
    name: str,
    recipes: dict[str, tuple[OriginalRecipe, ...]],
    tag_recipes: dict[str, tuple[OriginalRecipe, ...]],
    depth: dict[str, int],
    path: set[str],
) -> int:
    """AgentGym's ``get_min_depth``: 0 for an item without recipes, else the minimum over its
    recipes of 1 + the deepest ingredient."""
    if name in depth:
        return depth[name]
    options = recipes.get(name) or tag_recipes.get(name)
    if not options:
        depth[name] = 0
        return 0
    if name in path:  # AgentGym recurses without end here
        raise DataError(f"the recipes of {name} depend on {name} (through a tag): a cycle")
    path.add(name)
    best = math.inf
    for recipe in options:
        if not recipe.inputs:
            raise DataError(f"a recipe of {recipe.output} has no ingredients")
        deepest = max(_depth(i.name, recipes, tag_recipes, depth, path) for i in recipe.inputs)
        best = min(best, deepest + 1)
    path.discard(name)
    depth[name] = int(best)
    return depth[name]


class TextCraftGame:
    """One episode of AgentGym's TextCraft on a recipe tree: its commands, inventory and rules.

    :meth:`step` answers an action (already cleaned by :func:`agentgym_action`) with AgentGym's
    own messages; a command AgentGym rejects (its ``ActionFailed``) is an invalid action.
    """

    def __init__(self, tree: RecipeTree, goal: str, distractors: int) -> None:
        self.tree = tree
        self.goal = goal
        self.commands = tree.commands(goal, distractors)
        self.inventory: dict[str, int] = {}
        self._cost = _costs(tree)

    @property
    def observation(self) -> str:
        """The first observation: AgentGym's ``reset`` text."""
        listed = "\n".join(self.commands)
        return f"Crafting commands:\n{listed}\n\nGoal: craft {item_name(self.goal)}."

    # ------------------------------------------------------------------ rules
    def step(self, action: str) -> Transition[str]:
        """Apply an action by AgentGym's rules."""
        if match := _CRAFT.match(action):
            return self._craft(match.group(1), match.group(2))
        if match := _GET.match(action):
            return self._get(int(match.group(1)), match.group(2))
        if _INVENTORY.match(action):
            return Transition(observation=self._inventory_text())
        return _failed(f"Could not execute {action}")

    def _craft(self, output_text: str, inputs_text: str) -> Transition[str]:
        if match := _COUNT.match(output_text):
            output, claimed = _reference(self.tree, match.group(2)), int(match.group(1))
        else:
            output, claimed = _reference(self.tree, output_text), 1
        given: list[tuple[str | None, int]] = []
        for part in (p.strip() for p in inputs_text.split(",")):
            if not (match := _COUNT.match(part)):
                return _failed(f"Wrong item format: {part}")
            given.append((_reference(self.tree, match.group(2))[1], int(match.group(1))))
        if not all(self.inventory.get(item or "", -1) >= count for item, count in given):
            return _failed(f"Could not find enough items to craft {output[1]}")
        recipe = self._matching(output[1], given)
        if recipe is None:
            tag, item_id = output
            return _failed(
                "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag("
                f"tag={tag!r}, item_id={item_id!r}), count={claimed})"
            )
        totals: dict[str, int] = {}
        for item, count in given:
            totals[item or ""] = totals.get(item or "", 0) + count
        if any(self.inventory[item] < total for item, total in totals.items()):
            # an item named twice, each amount held but not both: AgentGym fails with a KeyError
            return _failed(f"Could not find enough items to craft {output[1]}")
        for item, total in totals.items():
            self.inventory[item] -= total
            if self.inventory[item] == 0:
                del self.inventory[item]
        self.inventory[recipe.output] = self.inventory.get(recipe.output, 0) + recipe.count
        observation = f"Crafted {recipe.count} {recipe.output}"
        if recipe.output == self.goal:
            return Transition(observation=observation, reward=1.0, terminated=True, success=True)
        return Transition(observation=observation)

    def _matching(
        self, output: str | None, given: list[tuple[str | None, int]]
    ) -> OriginalRecipe | None:
        """AgentGym's ``CraftingTree.craft``: the first recipe of ``output`` whose every
        ingredient meets its own given entry with exactly its count, nothing left over."""
        for recipe in self.tree.recipes.get(output or "", ()):
            remaining = list(given)
            for ingredient in recipe.inputs:
                found = next((g for g in remaining if self._meets(g[0], ingredient)), None)
                if found is None or found[1] != ingredient.count:
                    break
                remaining.remove(found)
            else:
                if not remaining:
                    return recipe
        return None

    def _meets(self, item_id: str | None, ingredient: Ingredient) -> bool:
        if ingredient.is_tag:
            return item_id is not None and self.tree.tag_of.get(item_id) == ingredient.name
        return item_id == ingredient.name

    def _get(self, amount: int, text: str) -> Transition[str]:
        item_id = _reference(self.tree, text)[1]
        if item_id is None or not self.tree.is_gettable(item_id):
            return _failed(f"Could not find {text}")
        self.inventory[item_id] = self.inventory.get(item_id, 0) + amount
        return Transition(observation=f"Got {amount} {text}")

    def _inventory_text(self) -> str:
        if not self.inventory:
            return "Inventory: You are not carrying anything."
        return "Inventory: " + "".join(
            f"[{item_name(item)}] ({amount}) " for item, amount in self.inventory.items()
        )

    # ------------------------------------------------------------------ oracle
    def oracle_action(self) -> str:
        """The next action of a planner that reads the recipe tree and the inventory
        (``inventory`` where the goal cannot be made)."""
        return self._next_for(self.goal, self.inventory.get(self.goal, 0) + 1) or "inventory"

    def _next_for(self, item: str, count: int) -> str | None:
        """The first action towards holding ``count`` of ``item`` (``None``: held or
        impossible); one craft makes one batch, as AgentGym's rules have it."""
        missing = count - self.inventory.get(item, 0)
        if missing <= 0 or item not in self._cost:
            return None
        if self.tree.is_gettable(item):
            return f"get {missing} {item_name(item)}"
        recipe = self._best_recipe(item)
        parts: list[str] = []
        used = {i.name for i in recipe.inputs if not i.is_tag}
        for ingredient in recipe.inputs:
            concrete = ingredient.name
            if ingredient.is_tag:
                concrete = self._member(ingredient.name, used, self._cost[item])
            used.add(concrete)
            action = self._next_for(concrete, ingredient.count)
            if action is not None:
                return action
            parts.append(f"{ingredient.count} {item_name(concrete)}")
        return f"craft {recipe.count} {item_name(item)} using {', '.join(parts)}"

    def _best_recipe(self, item: str) -> OriginalRecipe:
        return min(
            self.tree.recipes[item],
            key=lambda r: (_recipe_cost(r, self._cost, self.tree), r.command),
        )

    def _member(self, tag: str, exclude: set[str], bound: float) -> str:
        """The item to use for a generic ingredient: one held (the most), else the cheapest to
        make; always cheaper than the item it goes into, so plans end."""
        options = [
            m
            for m in self.tree.members(tag)
            if m not in exclude and self._cost.get(m, math.inf) < bound
        ]
        held = [m for m in options if self.inventory.get(m, 0) > 0]
        if held:
            return max(held, key=lambda m: (self.inventory[m], m))
        return min(options, key=lambda m: (self._cost[m], m), default=tag)

    def admissible_actions(self) -> list[str]:
        """``inventory``, the oracle's next action, ``get 1`` of each gettable ingredient of the
        shown recipes and each shown recipe with its generic ingredients made specific."""
        actions = ["inventory", self.oracle_action()]
        shown = set(self.commands)
        for options in self.tree.recipes.values():
            for recipe in options:
                if recipe.command not in shown:
                    continue
                parts = []
                for ingredient in recipe.inputs:
                    concrete = ingredient.name
                    if ingredient.is_tag:
                        concrete = self._member(ingredient.name, set(), math.inf)
                    if self.tree.is_gettable(concrete):
                        actions.append(f"get 1 {item_name(concrete)}")
                    parts.append(f"{ingredient.count} {item_name(concrete)}")
                actions.append(
                    f"craft {recipe.count} {item_name(recipe.output)} using {', '.join(parts)}"
                )
        return list(dict.fromkeys(actions))


def _failed(message: str) -> Transition[str]:
    return Transition(observation=message, invalid=True)


def _reference(tree: RecipeTree, text: str) -> tuple[str | None, str | None]:
    """``(tag, item_id)`` of a name in an action (AgentGym's ``item_str_to_obj``): a tag
    where the name is one, else an item id."""
    name = _NAMESPACE + text.replace(" ", "_")
    return (name, None) if name in tree.tags else (None, name)


@bounded_cache(4)
def _costs(tree: RecipeTree) -> dict[str, float]:
    """Crafting steps to make each item by its cheapest recipe (0 for a gettable item); an
    item missing here cannot be made."""
    cost: dict[str, float] = {item: 0 for item in tree.items if tree.is_gettable(item)}
    changed = True
    while changed:
        changed = False
        for item, options in tree.recipes.items():
            best = min(_recipe_cost(recipe, cost, tree) for recipe in options) + 1
            if best < cost.get(item, math.inf):
                cost[item] = best
                changed = True
    return cost


def _recipe_cost(recipe: OriginalRecipe, cost: dict[str, float], tree: RecipeTree) -> float:
    """The cost of ``recipe``'s dearest ingredient (a generic one: its cheapest member)."""
    worst = 0.0
    for ingredient in recipe.inputs:
        names = tree.members(ingredient.name) if ingredient.is_tag else (ingredient.name,)
        worst = max(worst, min((cost.get(n, math.inf) for n in names), default=math.inf))
    return worst


class TextCraftSource(OriginalSource):
    """The recipe files of AgentGym's ``agentenv-textcraft`` (Minecraft 1.16 game data)."""

    name: ClassVar[str] = "textcraft"
    env_id: ClassVar[str] = "llmgym/TextCraft-v0"
    title: ClassVar[str] = "TextCraft: Minecraft 1.16 crafting recipes, as AgentGym ships them"
    homepage: ClassVar[str] = (
        "https://github.com/WooooDyy/AgentGym/tree/main/agentenv-textcraft/agentenv_textcraft"
    )
    license: ClassVar[str] = (
        "Minecraft game data (recipes extracted from the Minecraft 1.16 client jar), "
        "(c) Mojang Studios / Microsoft, under Minecraft's EULA and usage guidelines; AgentGym "
        "(MIT-licensed code) ships a copy without a license of its own for it"
    )
    fetch_commands: ClassVar[tuple[str, ...]] = (
        "git clone --depth 1 --filter=blob:none --sparse "
        "https://github.com/WooooDyy/AgentGym.git agentgym-textcraft",
        "git -C agentgym-textcraft sparse-checkout set "
        "agentenv-textcraft/agentenv_textcraft/recipes",
        "mv agentgym-textcraft/agentenv-textcraft/agentenv_textcraft/recipes recipes",
        "rm -rf agentgym-textcraft",
    )
    layout: ClassVar[str] = (
        "recipes/<name>.json   one recipe per file: type (minecraft:crafting_shaped with "
        "pattern + key, minecraft:crafting_shapeless with ingredients; other types are read "
        "and skipped), result {item, count}, optional group"
    )
    agentgym_family: ClassVar[str] = "textcraft"

    def check(self, data_dir: Path) -> DataReport:
        tree = load_recipe_tree(data_dir)
        crafting = sum(tree.files.get(kind, 0) for kind in (_SHAPED, _SHAPELESS))
        total = sum(tree.files.values())
        depths: dict[int, int] = {}
        for goal in tree.goals:
            depths[tree.depth[goal]] = depths.get(tree.depth[goal], 0) + 1
        by_depth = ", ".join(f"depth {d}: {n:,}" for d, n in sorted(depths.items()))
        return DataReport(
            source=self.name,
            data_dir=str(data_dir.resolve()),
            splits={split: len(tree.goals_of(split)) for split in ("train", "eval")},
            found=(
                f"recipes/: {total:,} recipe files, {crafting:,} crafting recipes "
                f"({tree.files.get(_SHAPED, 0):,} shaped, {tree.files.get(_SHAPELESS, 0):,} "
                f"shapeless; {total - crafting:,} of other types skipped)",
                f"{len(tree.goals):,} goal items (AgentGym data_idx 0-{len(tree.goals) - 1}; "
                f"{by_depth}), {len(tree.tags):,} generic ingredients",
            ),
        )

    def agentgym_task_ids(self, data_dir: Path) -> Sequence[str]:
        """Position ``i`` is the task of AgentGym's ``reset(data_idx=i)`` (AgentGym wraps
        larger indices: ``data_idx % len``)."""
        tree = load_recipe_tree(data_dir)
        seen = {"train": 0, "eval": 0}
        ids = []
        for goal in tree.goals:
            split = _goal_split(goal)
            ids.append(f"{split}/{seen[split]:05d}")
            seen[split] += 1
        return ids
