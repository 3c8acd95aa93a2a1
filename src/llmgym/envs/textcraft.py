"""TextCraft: craft a goal item from raw materials by following recipes (Minecraft-like)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources

from llmgym.core import EnvConfig, Task, TaskIdRange, TextEnv, Transition, knob, split_of
from llmgym.core.cache import bounded_cache
from llmgym.core.tasks import TaskRng
from llmgym.core.text import normalize_command
from llmgym.envs.textcraft_recipes import (
    RecipeTree,
    TextCraftGame,
    TextCraftSource,
    agentgym_action,
    item_name,
    load_recipe_tree,
)
from llmgym.errors import ConfigError
from llmgym.originals import GENERATED, data_dir_knob, data_dir_of, source_knob

__all__ = ["Recipe", "TextCraftConfig", "TextCraftEnv", "load_recipe_book"]

_GET = re.compile(r"^get (?:([0-9]+) )?(.+)$")
_CRAFT = re.compile(r"^craft (?:([0-9]+) )?(.+?) (?:using|from|with) (.+)$")
_INGREDIENT = re.compile(r"^([0-9]+) (.+)$")
_MAX_GET = 64
_MAX_ORIGINAL_ACTION = 1000


@dataclass(frozen=True)
class Recipe:
    """``count`` of ``output`` from ``inputs`` (item or tag name -> amount)."""

    output: str
    count: int
    inputs: tuple[tuple[str, int], ...]

    @cached_property
    def command(self) -> str:
        """The recipe as the agent sees it: ``craft 4 stick using 2 planks``."""
        ingredients = ", ".join(f"{amount} {name}" for name, amount in self.inputs)
        return f"craft {self.count} {self.output} using {ingredients}"


@dataclass(frozen=True)
class RecipeBook:
    """The recipe data: raw items, tags (generic ingredients) and recipes, with item depths."""

    raw_items: frozenset[str]
    tags: dict[str, tuple[str, ...]]
    recipes: dict[str, tuple[Recipe, ...]]
    depth: dict[str, int]
    users: dict[str, tuple[Recipe, ...]]

    def is_known(self, name: str) -> bool:
        return name in self.raw_items or name in self.recipes

    def satisfies(self, item: str, ingredient: str) -> bool:
        """Whether ``item`` can stand for a recipe's ``ingredient`` (itself or a tag member)."""
        return item == ingredient or item in self.tags.get(ingredient, ())

    def resolve_name(self, text: str) -> str | None:
        """Map free text (plurals, underscores, a namespace prefix) to a known item or tag."""
        name = text.strip().replace("_", " ").removeprefix("minecraft:").strip()
        candidates = [name]
        if name.endswith("es"):
            candidates.append(name[:-2])
        if name.endswith("s"):
            candidates.append(name[:-1])
        for candidate in candidates:
            if self.is_known(candidate) or candidate in self.tags:
                return candidate
        return None


@cache
def load_recipe_book() -> RecipeBook:
    """Load the package's recipe data (``envs/data/textcraft_recipes.json``), once."""
    source = resources.files("llmgym.envs") / "data" / "textcraft_recipes.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    recipes: dict[str, list[Recipe]] = {}
    for row in data["recipes"]:
        recipe = Recipe(row["output"], int(row["count"]), tuple(row["inputs"].items()))
        recipes.setdefault(recipe.output, []).append(recipe)
    tags = {name: tuple(members) for name, members in data["tags"].items()}
    raw = frozenset(data["raw_items"])
    depth: dict[str, int] = {item: 0 for item in raw}
    changed = True
    while changed:  # relax depths to a fixed point: min over recipes of 1 + deepest input
        changed = False
        for output, options in recipes.items():
            best = depth.get(output, math.inf)
            for recipe in options:
                inputs = [_ingredient_depth(name, depth, tags) for name, _ in recipe.inputs]
                candidate = 1 + max(inputs)
                if candidate < best:
                    best = candidate
            if best < depth.get(output, math.inf):
                depth[output] = int(best)
                changed = True
    users: dict[str, list[Recipe]] = {}
    for options in recipes.values():
        for recipe in options:
            for name, _ in recipe.inputs:
                users.setdefault(name, []).append(recipe)
    return RecipeBook(
        raw_items=raw,
        tags=tags,
        recipes={k: tuple(v) for k, v in recipes.items()},
        depth=depth,
        users={k: tuple(v) for k, v in users.items()},
    )


def _ingredient_depth(name: str, depth: dict[str, int], tags: dict[str, tuple[str, ...]]) -> float:
    if name in tags:
        return min((depth.get(member, math.inf) for member in tags[name]), default=math.inf)
    return depth.get(name, math.inf)


@dataclass(frozen=True)
class TextCraftConfig(EnvConfig):
    """Difficulty knobs of :class:`TextCraftEnv`."""

    min_depth: int = knob(1, low=1, high=4, doc="Smallest crafting depth of a goal item.")
    max_depth: int = knob(4, low=1, high=4, doc="Largest crafting depth of a goal item.")
    distractors: int = knob(
        10, low=0, high=40, doc="Unneeded recipes mixed into the list shown to the agent."
    )
    source: str = source_knob(TextCraftSource.name)
    data_dir: str = data_dir_knob()

    def validate(self) -> None:
        self.require_at_most("min_depth", "max_depth")
        if self.source != GENERATED:
            for name in ("min_depth", "max_depth"):
                if getattr(self, name) != getattr(type(self), name):
                    raise ConfigError(
                        f"{type(self).__name__}.{name}",
                        f"applies to generated tasks only; source {self.source!r} plays "
                        "AgentGym's goal list, every depth (leave it at its default)",
                    )
        data_dir_of(self)


class TextCraftEnv(TextEnv[TextCraftConfig]):
    """Craft a goal item from raw materials, following the recipes you are shown.

    ## Description
    A Minecraft-like crafting task after ADaPT and AgentGym's TextCraft, with llmgym's own recipe
    data (572 craftable items, recipe trees up to depth 4, ten generic ingredients). The agent
    sees the recipes of the goal's whole crafting tree (alternatives included) mixed with
    unneeded distractor recipes, and must gather raw materials and craft intermediate items until
    it holds the goal item. A generic ingredient such as ``planks`` is satisfied by any of its
    members (``oak planks``, ``birch planks``, ...); the observation lists the members.

    ## Action Space
    Text commands (case-insensitive, plurals and underscores tolerated):

    * ``get N ITEM`` — take N (1-64) of a raw item; only raw items can be taken.
    * ``craft N ITEM using K1 ITEM1, K2 ITEM2, ...`` — apply a recipe. The ingredients must match
      one recipe of ITEM exactly: every ingredient named once, with exactly the recipe's counts,
      nothing extra. Naming an integer multiple of every count crafts that many batches at once.
      N is informative; the recipe decides how many items one batch yields.
    * ``inventory`` — list what you hold.

    ## Observation Space
    Text. On reset: ``Crafting commands:`` followed by one recipe per line, the generic
    ingredients, and ``Goal: craft ITEM.`` After each action: the outcome, e.g. ``Got 2 oak log``,
    ``Crafted 4 oak planks``, or an explanation of why the command failed.

    ## Rewards
    ``1.0`` on the step that crafts the goal item, ``0.0`` otherwise.

    ## Starting State
    An empty inventory; the goal item is drawn from the split's goals within the configured depth
    range. The distractor recipes and the order of the list depend on the task id.

    ## Episode End
    Terminates when the goal item is crafted (``info["success"] = True``). Truncated by the
    registered turn limit (40). A command that is not understood or cannot be applied changes
    nothing and sets ``info["invalid_action"]``; it still uses a turn.

    ## Arguments
    ``gymnasium.make("llmgym/TextCraft-v0", min_depth=2, max_depth=4, distractors=10)``; see
    :class:`TextCraftConfig`. Goal items are split by item: eval goals never appear in train.

    ## Original data
    ``config={"source": "textcraft", "data_dir": DIR}`` plays AgentGym's TextCraft on the
    Minecraft recipe files it ships (``DIR/recipes/*.json``, as in AgentGym's
    ``agentenv_textcraft/``; ``llmgym data fetch textcraft DIR`` gets them), by AgentGym's
    rules (:mod:`llmgym.envs.textcraft_recipes`):

    * Goals are AgentGym's list (every craftable item, by crafting depth), in its order: index
      ``i`` of ``/agentgym/textcraft`` is AgentGym's ``data_idx`` ``i`` (with the files read
      in name order; AgentGym reads them in its filesystem's order, see docs/originals.md).
      AgentGym has no train/test split; llmgym splits the goals by item, as it splits its
      generated ones.
    * The observation is AgentGym's: ``Crafting commands:`` with the goal's recipe tree and up
      to ``distractors`` (AgentGym: 10) other uses of its ingredients, drawn with AgentGym's
      ``random.seed(42)``, then ``Goal: craft ITEM.``
    * Actions are cleaned as AgentGym's client cleans them (characters other than letters,
      digits, commas and spaces dropped), then read as its server reads them: case-sensitive,
      ``craft ITEM using N A, M B`` must match one recipe's ingredients and counts exactly (one
      batch per craft; a generic ingredient takes any item of its group), ``get N ITEM`` only
      for items without a recipe. Feedback is AgentGym's, word for word (``Crafted 4
      minecraft:oak_planks``); a command it rejects is an invalid action.
    * Reward ``1.0`` when the goal item is crafted, else ``0.0``. ``min_depth`` and
      ``max_depth`` apply to generated tasks only.
    * The oracle plans from the recipe tree and the inventory (the cheapest recipe of each item,
      one batch at a time); it reads no answer key beyond the recipes shown.

    ## Version History
    * v0: Initial version.
    """

    config_class = TextCraftConfig
    env_name = "textcraft"
    rules_text = (
        "You are given crafting recipes to craft items in a Minecraft-like world. Use 'get N "
        "ITEM' to take raw materials, 'craft N ITEM using K1 ITEM1, K2 ITEM2' to apply a "
        "recipe with exactly its ingredient counts, and 'inventory' to see what you hold. A "
        "generic ingredient (such as planks) accepts any of its listed members. Always give "
        "quantities. Craft the goal item."
    )
    example = (
        "Observation: Crafting commands:\ncraft 4 oak planks using 1 oak log\n"
        "craft 4 stick using 2 planks\n\nGoal: craft stick.\n"
        "Thought: Sticks need planks and planks need a log, so I get a log first.\n"
        "Action: get 1 oak log"
    )

    _goal = ""
    _shown: list[Recipe]
    _inventory: Counter[str]
    _game: TextCraftGame | None = None

    @property
    def book(self) -> RecipeBook:
        """The recipe book (the same for every task)."""
        return load_recipe_book()

    # ------------------------------------------------------------------ tasks
    def task_ids(self, split: str = "train", config: TextCraftConfig | None = None) -> TaskIdRange:
        config = config or self.config
        tree = _original_tree(config)
        if tree is not None:
            return TaskIdRange(split, len(tree.goals_of(split)))
        return TaskIdRange(split, len(self._goals(split, config)))

    def _goals(self, split: str, config: TextCraftConfig) -> tuple[str, ...]:
        return _goals_for(split, config.min_depth, config.max_depth)

    def instance_key(self) -> str:
        return self._goal

    def _reset_task(self, task: Task[TextCraftConfig]) -> tuple[str, str]:
        config = task.config
        original = _original_tree(config)
        if original is not None:
            self._goal = original.goals_of(task.split)[task.index]
            self._game = TextCraftGame(original, self._goal, config.distractors)
            return self._game.observation, f"Craft {item_name(self._goal)}."
        self._game = None
        goals = self._goals(task.split, config)
        self._goal = goals[task.index]
        rng = task.rng()
        tree = self._crafting_tree(self._goal, rng)
        self._shown = tree + self._distractors(tree, config.distractors, rng)
        rng.shuffle(self._shown)
        self._inventory = Counter()
        return self._overview(), f"Craft {self._goal}."

    def _crafting_tree(self, goal: str, rng: TaskRng) -> list[Recipe]:
        seen: set[str] = set()
        tree: list[Recipe] = []

        def expand(name: str) -> None:
            if name in seen:
                return
            seen.add(name)
            if name in self.book.tags:
                members = self.book.tags[name]
                if any(member in self.book.raw_items for member in members):
                    return
                shallowest = min(members, key=lambda m: (self.book.depth[m], m))
                for member in (shallowest, rng.choice(members)):
                    expand(member)
                return
            for recipe in self.book.recipes.get(name, ()):
                tree.append(recipe)
                for ingredient, _ in recipe.inputs:
                    expand(ingredient)

        expand(goal)
        return tree

    def _distractors(self, tree: list[Recipe], count: int, rng: TaskRng) -> list[Recipe]:
        used = {name for recipe in tree for name, _ in recipe.inputs}
        in_tree = set(tree)
        candidates = sorted(
            {r for name in used for r in self.book.users.get(name, ()) if r not in in_tree},
            key=lambda r: r.command,
        )
        return rng.sample(candidates, min(count, len(candidates)))

    def _overview(self) -> str:
        lines = ["Crafting commands:", *(recipe.command for recipe in self._shown)]
        tags = sorted({n for r in self._shown for n, _ in r.inputs if n in self.book.tags})
        if tags:
            lines += ["", "Generic ingredients (any member will do):"]
            lines += [f"{tag}: {', '.join(self.book.tags[tag])}" for tag in tags]
        lines += ["", f"Goal: craft {self._goal}."]
        return "\n".join(lines)

    # ------------------------------------------------------------------ dynamics
    def _step(self, action: str) -> Transition:
        if self._game is not None:
            if len(action) > _MAX_ORIGINAL_ACTION:
                return self.invalid(
                    f"Could not execute an action of {len(action):,} characters "
                    f"(at most {_MAX_ORIGINAL_ACTION:,})."
                )
            return self._game.step(agentgym_action(action))
        command = normalize_command(action)
        if command in ("inventory", "inv", "check inventory", "i"):
            return Transition(observation=self._inventory_text())
        if match := _GET.match(command):
            return self._get(match.group(1), match.group(2))
        if match := _CRAFT.match(command):
            return self._craft(match.group(2), match.group(3))
        return self.invalid(
            f"Could not understand {self.quote(action)}. Use 'get N ITEM', "
            "'craft N ITEM using K1 ITEM1, K2 ITEM2' or 'inventory'."
        )

    def _get(self, amount_text: str | None, name_text: str) -> Transition:
        amount = int(amount_text) if amount_text else 1
        name = self.book.resolve_name(name_text)
        if name is None:
            return self.invalid(f"There is no item called '{name_text}'.")
        if name not in self.book.raw_items:
            kind = (
                "a generic ingredient; name a specific item"
                if name in self.book.tags
                else "crafted"
            )
            return self.invalid(f"Could not get {name}: it is {kind}, not a raw material.")
        if not 1 <= amount <= _MAX_GET:
            return self.invalid(f"You can get between 1 and {_MAX_GET} items at a time.")
        self._inventory[name] += amount
        return Transition(observation=f"Got {amount} {name}.")

    def _craft(self, output_text: str, ingredients_text: str) -> Transition:
        output = self.book.resolve_name(output_text)
        if output is None or output not in self.book.recipes:
            return self.invalid(f"There is no recipe for '{output_text}'.")
        given: dict[str, int] = {}
        for part in (p.strip() for p in ingredients_text.split(",")):
            match = _INGREDIENT.match(part)
            name = self.book.resolve_name(match.group(2)) if match else None
            if match is None:
                return self.invalid(
                    f"Wrong ingredient format '{part}': write 'COUNT ITEM', e.g. '2 oak planks'."
                )
            if name is None:
                return self.invalid(f"There is no item called '{match.group(2)}'.")
            if name in self.book.tags:
                return self.invalid(
                    f"'{name}' is a generic ingredient: name the specific item you use."
                )
            given[name] = given.get(name, 0) + int(match.group(1))
        for recipe in self.book.recipes[output]:
            batches = self._batches(recipe, given)
            if batches:
                break
        else:
            options = "; ".join(r.command for r in self.book.recipes[output])
            return self.invalid(
                f"Those ingredients match no recipe for {output}. Recipes: {options}."
            )
        missing = [
            f"{amount - self._inventory[item]} {item}"
            for item, amount in given.items()
            if self._inventory[item] < amount
        ]
        if missing:
            return self.invalid(f"Could not craft {output}: you are missing {', '.join(missing)}.")
        for item, amount in given.items():
            self._inventory[item] -= amount
            if not self._inventory[item]:
                del self._inventory[item]
        made = recipe.count * batches
        self._inventory[output] += made
        if output == self._goal:
            return Transition(
                observation=f"Crafted {made} {output}. Goal complete!",
                reward=1.0,
                terminated=True,
                success=True,
            )
        return Transition(observation=f"Crafted {made} {output}.")

    def _batches(self, recipe: Recipe, given: dict[str, int]) -> int:
        """How many batches of ``recipe`` the ``given`` ingredients are (0: they do not match)."""
        if len(given) != len(recipe.inputs):
            return 0
        remaining = dict(given)
        batches = 0
        for ingredient, amount in recipe.inputs:
            item = next((i for i in remaining if self.book.satisfies(i, ingredient)), None)
            if item is None or remaining[item] % amount:
                return 0
            factor = remaining.pop(item) // amount
            if batches and factor != batches:
                return 0
            batches = factor
        return batches

    def _inventory_text(self) -> str:
        if not self._inventory:
            return "Inventory: you are not carrying anything."
        return "Inventory: " + ", ".join(
            f"{n} {item}" for item, n in sorted(self._inventory.items())
        )

    # ------------------------------------------------------------------ oracle and actions
    def oracle_action(self) -> str:
        if self._game is not None:
            return self._game.oracle_action()
        return self._next_for(self._goal, self._inventory[self._goal] + 1) or "inventory"

    def _next_for(self, item: str, count: int) -> str | None:
        """The first action towards holding ``count`` of ``item`` (``None``: already held)."""
        missing = count - self._inventory[item]
        if missing <= 0:
            return None
        if item in self.book.raw_items:
            return f"get {min(missing, _MAX_GET)} {item}"
        recipe = min(self.book.recipes[item], key=lambda r: (self._recipe_depth(r), r.command))
        batches = math.ceil(missing / recipe.count)
        parts: list[tuple[str, int]] = []
        for ingredient, amount in recipe.inputs:
            concrete = self._concrete(ingredient, exclude={p[0] for p in parts})
            needed = amount * batches
            action = self._next_for(concrete, needed)
            if action is not None:
                return action
            parts.append((concrete, needed))
        return f"craft {recipe.count * batches} {item} using " + ", ".join(
            f"{n} {c}" for c, n in parts
        )

    def _recipe_depth(self, recipe: Recipe) -> int:
        return max(
            int(_ingredient_depth(n, self.book.depth, self.book.tags)) for n, _ in recipe.inputs
        )

    def _concrete(self, ingredient: str, exclude: set[str]) -> str:
        members = self.book.tags.get(ingredient)
        if members is None:
            return ingredient
        options = [m for m in members if m not in exclude]
        held = [m for m in options if self._inventory[m]]
        if held:
            return max(held, key=lambda m: self._inventory[m])
        shown = {r.output for r in self._shown}
        return min(
            options,
            key=lambda m: (m not in self.book.raw_items and m not in shown, self.book.depth[m], m),
        )

    def admissible_actions(self) -> list[str]:
        if self._game is not None:
            return self._game.admissible_actions()
        actions = ["inventory"]
        raw = sorted(
            {self._concrete(n, set()) for r in self._shown for n, _ in r.inputs}
            & self.book.raw_items
        )
        actions += [f"get 1 {item}" for item in raw]
        for recipe in self._shown:
            used: set[str] = set()
            parts = []
            for name, amount in recipe.inputs:
                concrete = self._concrete(name, used)
                used.add(concrete)
                parts.append(f"{amount} {concrete}")
            actions.append(f"craft {recipe.count} {recipe.output} using {', '.join(parts)}")
        return actions


def _original_tree(config: TextCraftConfig) -> RecipeTree | None:
    """The recipe tree of the config's original data (``None``: generated tasks)."""
    data_dir = data_dir_of(config)
    return None if data_dir is None else load_recipe_tree(data_dir)


@bounded_cache(64)
def _goals_for(split: str, min_depth: int, max_depth: int) -> tuple[str, ...]:
    """Goal items of ``split``: craftable items in the depth range, split by a hash of the name."""
    book = load_recipe_book()
    goals = [
        item
        for item in book.recipes
        if min_depth <= book.depth[item] <= max_depth and split_of(f"textcraft:{item}") == split
    ]
    return tuple(sorted(goals, key=lambda item: (book.depth[item], item)))
