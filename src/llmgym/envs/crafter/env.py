"""``llmgym/Crafter-v0`` (text), ``llmgym/CrafterPixels-v0`` (64x64 RGB, ``Discrete(17)``) and
``llmgym/CrafterSymbolic-v0`` (a flat float32 vector, ``Discrete(17)``)."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from llmgym.core import ActT, ObsT, PixelAction, PixelEnv, Task, TaskIdRange, TextEnv, Transition
from llmgym.core.text import join_names
from llmgym.envs.crafter import ACHIEVEMENTS, ACTIONS
from llmgym.envs.crafter.config import CrafterConfig
from llmgym.envs.crafter.game import CrafterGame, constants, crafter_world_seed
from llmgym.envs.crafter.oracle import CrafterOracle
from llmgym.envs.crafter.symbolic import SYMBOLIC_SIZE, SymbolicObserver
from llmgym.envs.crafter.text import COMMANDS, describe, parse_action

__all__ = ["CrafterConfig", "CrafterEnv", "CrafterPixelsEnv", "CrafterSymbolicEnv"]

TRAIN_SEEDS = 1_000_000
EVAL_TASKS = 10_000
EVAL_WORLD_SEED_BASE = 2**31
"""Eval worlds use world seeds from 2**31 on; ``crafter.Env`` reduces its seeds modulo 2**31 - 1,
so no crafter seed (and no train task) ever produces an eval world."""

_VITALS = ("health", "food", "drink", "energy")


def _label(name: str) -> str:
    return name.replace("_", " ")


def _item_sources() -> dict[str, str]:
    """The achievement that yields each item: the one that collects or makes it."""
    gives = {
        item: f"collect_{item}" for info in constants.collect.values() for item in info["receive"]
    }
    gives.update({item: f"make_{item}" for item in constants.make})
    return gives


def _recipe_requirements() -> dict[str, tuple[str, ...]]:
    """Each achievement's prerequisite achievements in crafter's recipes (``data.yaml``):
    collecting needs the required tool, placing the items it uses, making the items it uses and
    the placed table or furnace nearby; an item comes from the achievement that collects or
    makes it. Eating, fighting and waking up have no recipe."""
    gives = _item_sources()
    needs: dict[str, list[str]] = {}
    for info in constants.collect.values():
        for item in info["receive"]:
            needs[f"collect_{item}"] = [gives[tool] for tool in info["require"]]
    for name, info in constants.place.items():
        needs[f"place_{name}"] = [gives[item] for item in info["uses"]]
    for name, info in constants.make.items():
        nearby = [f"place_{station}" for station in info["nearby"]]
        needs[f"make_{name}"] = [gives[item] for item in info["uses"]] + nearby
    return {skill: tuple(dict.fromkeys(needs[skill])) for skill in ACHIEVEMENTS if needs.get(skill)}


def _practice_requirements(practice: dict[str, dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    """For each skill, the achievements that yield the items its practice world hands over (a
    world that starts the agent with a stone sword practises what comes after the sword)."""
    gives = _item_sources()
    handed = {
        skill: tuple(
            dict.fromkeys(gives[i] for i in config.get("inventory", {}) if gives[i] != skill)
        )
        for skill, config in practice.items()
    }
    return {skill: needs for skill, needs in handed.items() if needs}


class _CrafterEnvBase(TextEnv[CrafterConfig, ObsT, ActT]):
    """The game behind Crafter-v0 and CrafterPixels-v0: tasks, rules and feedback. A subclass
    chooses the interface (:meth:`_observe`, :meth:`_invalid` and the spaces)."""

    config_class = CrafterConfig
    env_name = "crafter"
    skills = ACHIEVEMENTS
    design_notes = (
        "- 'natural' is Crafter's usual mix of biomes; the other biomes bias the world.\n"
        "- Coal, iron and diamond only appear in mountain areas (caves and tunnels); diamonds are "
        "deep inside them.\n"
        "- Trees, cows and saplings (from grass) are found on grassland; the agent drinks water.\n"
        "- Skeletons live in mountain tunnels and shoot arrows; zombies appear on grass, more at "
        "night, and chase the agent.\n"
        "- Collecting stone and coal needs a wood pickaxe, iron a stone pickaxe, diamond an iron "
        "pickaxe.\n"
        "- Crafting needs a table nearby (a table takes 2 wood); iron tools also need a furnace "
        "nearby (4 stone). Tools take wood, stone, coal and iron as in Minecraft.\n"
        "- wake_up needs sleeping until energy is full; attacks or sunrise can wake the agent.\n"
        "- Starting inventory never counts as an achievement: starting with a pickaxe does not "
        "unlock make_wood_pickaxe, but lets the agent practise what comes after it."
    )
    skill_practice: ClassVar[dict[str, dict[str, Any]]] = {
        "collect_coal": {
            "target_biome": "mountain",
            "coal_rarity": "very common",
            "inventory": {"wood_pickaxe": 1},
        },
        "collect_diamond": {
            "target_biome": "mountain",
            "diamond_rarity": "very common",
            "inventory": {"iron_pickaxe": 1},
        },
        "collect_drink": {"target_biome": "beaches"},
        "collect_iron": {
            "target_biome": "mountain",
            "iron_rarity": "very common",
            "inventory": {"stone_pickaxe": 1},
        },
        "collect_sapling": {"target_biome": "grassland"},
        "collect_stone": {"target_biome": "mountain", "inventory": {"wood_pickaxe": 1}},
        "collect_wood": {"target_biome": "grassland", "tree_rarity": "very common"},
        "defeat_skeleton": {
            "target_biome": "mountain",
            "skeleton_density": 3.0,
            "inventory": {"stone_sword": 1},
        },
        "defeat_zombie": {
            "target_biome": "grassland",
            "zombie_density": 3.0,
            "inventory": {"wood_sword": 1},
        },
        "eat_cow": {"target_biome": "grassland", "cow_density": 3.0},
        "eat_plant": {
            "target_biome": "grassland",
            "zombie_density": 0.0,
            "inventory": {"sapling": 5},
        },
        "make_iron_pickaxe": {
            "target_biome": "mountain",
            "inventory": {"wood": 5, "stone": 6, "coal": 2, "iron": 2},
        },
        "make_iron_sword": {
            "target_biome": "mountain",
            "inventory": {"wood": 5, "stone": 6, "coal": 2, "iron": 2},
        },
        "make_stone_pickaxe": {"inventory": {"wood": 4, "stone": 3}},
        "make_stone_sword": {"inventory": {"wood": 4, "stone": 3}},
        "make_wood_pickaxe": {"target_biome": "grassland", "inventory": {"wood": 4}},
        "make_wood_sword": {"target_biome": "grassland", "inventory": {"wood": 4}},
        "place_furnace": {"target_biome": "mountain", "inventory": {"wood": 3, "stone": 6}},
        "place_plant": {"target_biome": "grassland", "inventory": {"sapling": 3}},
        "place_stone": {"target_biome": "mountain", "inventory": {"stone": 5}},
        "place_table": {"target_biome": "grassland", "inventory": {"wood": 5}},
        "wake_up": {"zombie_density": 0.0, "skeleton_density": 0.0},
    }
    skill_requirements: ClassVar[dict[str, tuple[str, ...]]] = _recipe_requirements()
    skill_practice_requirements: ClassVar[dict[str, tuple[str, ...]]] = _practice_requirements(
        skill_practice
    )
    renders_pixels: ClassVar[bool] = False

    _target: str | None = None
    _world_seed = 0

    def __init__(self, config: CrafterConfig | dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self.game = CrafterGame()
        self.oracle = CrafterOracle(self.game)

    # ------------------------------------------------------------------ tasks
    def task_ids(self, split: str = "train", config: CrafterConfig | None = None) -> TaskIdRange:
        return TaskIdRange(split, TRAIN_SEEDS if split == "train" else EVAL_TASKS)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsT, dict[str, Any]]:
        """Start an episode. Without a ``task_id``, a ``seed`` in ``[0, 1,000,000)`` plays the
        train task of that number — Crafter's own seed ``seed`` — unless ``split="eval"``."""
        options = dict(options or {})
        if (
            seed is not None
            and "task_id" not in options
            and options.get("split", "train") == "train"
            and 0 <= seed < TRAIN_SEEDS
        ):
            options["task_id"] = f"train/{seed:05d}"
        return super().reset(seed=seed, options=options)

    def world_seed(self, task: Task[CrafterConfig]) -> int:
        """The seed of the world's ``RandomState`` for ``task``."""
        if task.split == "train":
            return crafter_world_seed(task.index)
        return EVAL_WORLD_SEED_BASE + task.index

    def instance_key(self) -> str:
        return f"world {self._world_seed}, target {self._target}"

    def _reset_task(self, task: Task[CrafterConfig]) -> tuple[ObsT, str]:
        config = task.config
        self._world_seed = self.world_seed(task)
        if config.target == "task":
            self._target = task.rng("target").choice(ACHIEVEMENTS)
        else:
            self._target = None if config.target == "none" else config.target
        self.game.reset(self._world_seed, config)
        self.oracle.reset(self._target)
        goal = (
            f"unlock the achievement {_label(self._target)}"
            if self._target
            else "survive and unlock as many of the 22 achievements as you can"
        )
        instruction = f"You are playing Crafter. Your goal: {goal}."
        return self._observe(""), instruction

    # ------------------------------------------------------------------ play
    def _step(self, action: str) -> Transition[ObsT]:
        index = parse_action(action)
        if index is None:
            return self._invalid(
                f"{self.quote(action)} is not a Crafter command. Valid commands: "
                f"{', '.join(COMMANDS)}."
            )
        config = self.task.config
        game, player = self.game, self.game.player
        before = self._snapshot()
        hint = self._precondition_hint(index)
        result = game.step(index, render=self.renders_pixels)
        message = self._outcome(index, before, result.new_achievements, hint)
        target = self._target
        reached = target is not None and target in game.unlocked
        terminated = result.dead or (reached and config.end_on_target)
        truncated = result.over and not terminated
        # without a target, success is surviving to the end, as a Crafter episode
        success = reached if target is not None else truncated and player.health > 0
        if result.dead:
            message += " You died."
        info = {
            "achievements": {
                "new": result.new_achievements,
                "unlocked": [name for name in ACHIEVEMENTS if name in game.unlocked],
            }
        }
        return Transition(
            self._observe(message),
            reward=result.reward,
            terminated=terminated,
            truncated=truncated,
            success=success,
            info=info,
        )

    @abstractmethod
    def _observe(self, message: str) -> ObsT:
        """The observation after an action whose outcome ``message`` describes."""

    @abstractmethod
    def _invalid(self, message: str) -> Transition[ObsT]:
        """The transition for an action that is not a command, explained by ``message``."""

    def skills_achieved(self) -> frozenset[str]:
        return frozenset(self.game.unlocked)

    def semantic_map(self) -> np.ndarray:
        """Crafter's semantic map of the whole world (material ids, creature ids on top), the
        array ``crafter.Env`` returns as ``info["semantic"]``."""
        return self.game.semantic_map()

    def rules(self) -> str:
        target = f"Your target: {_label(self._target)}. " if self._target else ""
        table = constants.place["table"]["uses"]["wood"]
        furnace = constants.place["furnace"]["uses"]["stone"]
        return (
            "You play Crafter, a 2D survival and crafting game on a grid. "
            f"{target}Keep health, food, drink and energy up: eat cows or ripe plants, drink "
            "water, sleep when tired (somewhere safe: zombies hit sleepers hard). Collect with "
            "'do' on the cell you face: trees give wood; stone and coal need a wood pickaxe, iron "
            "a stone pickaxe, diamond an iron pickaxe; grass sometimes gives a sapling. "
            f"Place a table ({table} wood) and stand next to it to make wood tools (1 wood) and "
            f"stone tools (1 wood, 1 stone); with a table and a furnace ({furnace} stone) both "
            "next to you, iron tools (1 wood, 1 coal, 1 iron). Moving into a cell you cannot "
            f"enter turns you to face it. Commands: {', '.join(COMMANDS)}."
        )

    # ------------------------------------------------------------------ feedback
    def _snapshot(self) -> tuple[tuple[int, int], dict[str, int]]:
        player = self.game.player
        return tuple(player.pos.tolist()), dict(player.inventory)

    def _precondition_hint(self, index: int) -> str:
        """Why an action will have no effect, judged before the step (empty if it may work)."""
        player, world = self.game.player, self.game.world
        name = ACTIONS[index]
        inventory = player.inventory
        if player.sleeping and name != "sleep":
            return "You are asleep and cannot act until you wake up."
        if name.startswith("make_"):
            info = constants.make[name[len("make_") :]]
            nearby, _ = world.nearby(player.pos, 1)
            missing = [f"a nearby {u}" for u in info["nearby"] if u not in nearby]
            missing += [f"{n} {k}" for k, n in info["uses"].items() if inventory[k] < n]
            if missing:
                return f"You cannot {_label(name)}: it needs {join_names(missing)}."
        if name.startswith("place_"):
            item = name[len("place_") :]
            info = constants.place[item]
            target = (player.pos[0] + player.facing[0], player.pos[1] + player.facing[1])
            material, obj = world[target]
            missing = [f"{n} {k}" for k, n in info["uses"].items() if inventory[k] < n]
            if missing:
                return f"You cannot {_label(name)}: it needs {join_names(missing)}."
            if obj is not None or material not in info["where"]:
                return (
                    f"You cannot {_label(name)} there: the cell you face must be "
                    f"{join_names(info['where'], 'or')}."
                )
        if name == "do":
            target = (player.pos[0] + player.facing[0], player.pos[1] + player.facing[1])
            material, obj = world[target]
            if obj is None and material in constants.collect:
                needs = constants.collect[material]["require"]
                missing = [_label(k) for k, n in needs.items() if inventory[k] < n]
                if missing:
                    return f"You need a {join_names(missing)} to collect {material}."
        return ""

    def _outcome(
        self, index: int, before: tuple[tuple[int, int], dict[str, int]], new: list[str], hint: str
    ) -> str:
        player = self.game.player
        position, inventory = before
        parts = [f"You did: {COMMANDS[index]}."]
        changes = []
        for name, amount in player.inventory.items():
            delta = amount - inventory[name]
            if delta and name not in _VITALS:
                changes.append(f"{'+' if delta > 0 else ''}{delta} {_label(name)}")
        if changes:
            parts.append("Inventory " + ", ".join(changes) + ".")
        health = player.inventory["health"] - inventory["health"]
        if health < 0:
            parts.append(f"You lost {-health} health.")
        name = ACTIONS[index]
        if name.startswith("move_") and tuple(player.pos.tolist()) == position and not hint:
            fx, fy = player.facing
            material, obj = self.game.world[(position[0] + fx, position[1] + fy)]
            blocker = type(obj).__name__.lower() if obj is not None else material
            parts.append(f"The way is blocked by {blocker or 'the edge of the world'}.")
        if hint and not changes:
            parts.append(hint)
        if new:
            parts.append("Achievement unlocked: " + join_names(_label(n) for n in new) + ".")
        return " ".join(parts)


class CrafterEnv(_CrafterEnvBase[str, str]):
    """Crafter, the open-world survival and crafting game, in text: gather, craft, survive.

    ## Description
    The agent lives in a procedurally generated 64x64 world of grassland, forests, lakes, beaches,
    mountains with caves, coal, iron, diamonds and lava, with cows, zombies and (in dark tunnels)
    skeletons. It must keep its health, food, drink and energy up while collecting materials,
    placing a table and a furnace and crafting wood, stone and iron tools. Crafter's 22
    achievements (``collect_wood`` ... ``collect_diamond``, ``wake_up``) measure its abilities.

    The game is the ``crafter`` package's own (its world, objects, creatures and rules, driven
    call for call like ``crafter.Env.step``); llmgym adds the text interface, a vectorised world
    generator (identical worlds, faster resets; measured: see docs/environments/crafter.md),
    EnvGen's world knobs and task targets.
    With the default config, ``reset(seed=s)`` for ``0 <= s < 1,000,000`` is the world that
    ``crafter.Env(seed=s)`` builds on its first reset: ``env.unwrapped.semantic_map()`` equals
    crafter's ``info["semantic"]``. Crafter-v0 never renders pixels; ``llmgym/CrafterPixels-v0``
    is the same game with crafter's 64x64 images and ``Discrete(17)`` actions.

    ![A generated mountain world](img/crafter_mountain.png)
    ![A generated beaches world](img/crafter_beaches.png)

    *Worlds of the eval task 0 with `target_biome="mountain"` and `"beaches"` (64x64 cells, drawn
    with crafter's textures; `python docs/crafter_images.py`).*

    ## Action Space
    Text: one of 17 commands — ``noop``, ``move left``/``right``/``up``/``down``, ``do`` (collect
    the material in front, attack or eat the creature in front, drink water), ``sleep``,
    ``place stone``/``table``/``furnace``/``plant``, ``make wood pickaxe``, ``make stone
    pickaxe``, ``make iron pickaxe``, ``make wood sword``, ``make stone sword``, ``make iron
    sword``. Case, underscores, hyphens and articles do not matter (``Place_Table``, ``make a wood
    pickaxe``); ``north``/``south``/``west``/``east`` and ``craft ...`` are accepted. A command
    that is understood always takes one game step, even if it has no effect (crafter's rule); the
    observation then says why (for example the missing table). Any other text is invalid: nothing
    happens and the observation lists the commands.

    ## Observation Space
    Text: the outcome of the last command, the nearest cell of each material and creature in the
    9x7 view around the agent (the area the pixel observation shows) with its direction and
    distance, what the agent faces, health/food/drink/energy out of 9, the inventory, the step
    and daylight, and the target. With ``show_grid=True`` the view is also drawn as characters
    with a legend. ``env.unwrapped.semantic_map()`` returns crafter's full 64x64 semantic map.

    ## Rewards
    Crafter's: +1 on a step that unlocks an achievement for the first time in the episode, plus
    the change in health divided by 10. ``info["achievements"]`` is ``{"new": [...], "unlocked":
    [...]}`` (unlocked this step, and so far). ``llmgym.envs.crafter.score(success_rates)``
    computes Crafter's score from per-achievement success rates.

    ## Starting State
    The agent stands in the middle of the world (32, 32) on grass (a path in the mountain biome)
    with full vitals and the config's starting ``inventory`` (starting items never count as
    achievements). Each task is a world seed plus a target achievement: train task ``n`` is
    Crafter's seed ``n``; eval tasks use world seeds crafter never produces. With
    ``target="task"`` (the default) each task draws its target from the 22 achievements.

    ## Episode End
    Terminates when the agent dies (``success`` False) or, with ``end_on_target`` (default),
    when the target achievement is unlocked (``success`` True). Truncated after ``length`` steps
    (10,000). With ``target="none"`` success means being alive at the truncation.

    The oracle (``env.unwrapped.oracle_action()``) is a scripted planner over the true state:
    it gathers wood, places a table, makes pickaxes and swords, mines stone, coal, iron and
    diamond, drinks, eats cows, plants saplings, digs a sealed pocket in stone to spend the
    night and sleep, and fights zombies and skeletons, pursuing the task's target first.
    Success for the conformance suite is the task's target achievement: the oracle reaches most
    targets (eat plant, diamond, iron tools and skeletons least often), and with
    ``target="none"`` (``python benchmarks/crafter_oracle.py``) it unlocks the basic
    achievements in most worlds but is a poor survivor: it dies long before the truncation.
    Measured: see docs/environments/crafter.md.

    ## Arguments
    ``gymnasium.make("llmgym/Crafter-v0", config=CrafterConfig(...))`` or keyword overrides
    (``target_biome="mountain"``, ``inventory={"wood": 3}``). See the config table;
    ``CrafterConfig.from_envgen(llm_output)`` reads one environment of EnvGen's LLM output.
    ``reset(options=...)`` takes ``task_id``, ``split`` and ``config``.

    Differences from EnvGen's modified crafter, on purpose: the biome transforms are EnvGen's,
    but the rarity levels scale the probability inside crafter's own ore rules (EnvGen's code
    replaced crafter's clustering noise by ``mountain > 0.18`` for every ore, which changes even
    the default world — about ten times more iron); ``"very common"`` coal works (EnvGen's code
    expects ``"very_common"`` and silently keeps the default); starting items never unlock
    achievements (EnvGen's starting table counts as ``place_table``); and creatures despawn in a
    reproducible order (crafter picks them by iterating a ``set``, whose order follows memory
    addresses, so ``crafter.Env`` itself is not reproducible after the first despawn).

    ## Version History
    * v0: Initial version (crafter 1.8.3 rules).
    """

    example = (
        "Observation: You see (9x7 area around you, nearest of each kind):\n"
        "- tree: 1 step left\n- grass: 1 step down (52 in view)\n"
        "You face grass (down).\nHealth 9/9, food 9/9, drink 9/9, energy 9/9.\n"
        "Inventory: empty.\nStep 0; it is day (daylight 80%).\nTarget: collect wood (not yet).\n"
        "Thought: A tree is right next to me on the left. I turn to it, then collect it.\n"
        "Action: move left"
    )

    def _invalid(self, message: str) -> Transition[str]:
        return self.invalid(f"{message}\n{self._observe('')}")

    def _observe(self, message: str) -> str:
        config = self.task.config
        return describe(self.game, show_grid=config.show_grid, target=self._target, message=message)

    def admissible_actions(self) -> list[str]:
        return list(COMMANDS)

    def oracle_action(self) -> str:
        return COMMANDS[self.oracle.act()]

    def pixel_frame(self) -> np.ndarray:
        """The image ``CrafterPixels-v0`` would show now (for recordings; the play is
        unchanged, see :meth:`CrafterGame.picture`)."""
        return self.game.picture()


class CrafterPixelsEnv(_CrafterEnvBase[np.ndarray, PixelAction], PixelEnv[CrafterConfig]):
    """Crafter with crafter's 64x64 RGB observations and ``Discrete(17)`` actions, for RL agents.

    ## Description
    The same game, tasks and config as ``llmgym/Crafter-v0`` (see its page), with the interface
    EnvGen's PPO agent trains on: ``crafter.Env``'s own 64x64 images (the 9x7 local view and the
    inventory) and its 17 discrete actions. It works in gymnasium vector environments
    (``gymnasium.make_vec("llmgym/CrafterPixels-v0", num_envs=8)``) and passes
    stable-baselines3's ``check_env``. Frames, rewards and dynamics equal ``crafter.Env``'s for
    the same seed and actions (crafter's own despawn order aside, see Crafter-v0). The frames
    are drawn from a cached texture atlas with array operations instead of crafter's
    cell-by-cell drawing and PIL lighting: the same bytes, night noise and sleep included
    (tests/test_crafter_frames.py compares them with crafter's own renderer), in a fraction of
    the time (see Measured). Registered
    with ``target="none"``: episodes run like Crafter's (to death or ``length`` steps) unless a
    config sets a target.

    ## Action Space
    ``Discrete(17)``: crafter's action indices (0 noop, 1-4 move left/right/up/down, 5 do,
    6 sleep, 7-10 place stone/table/furnace/plant, 11-16 make wood/stone/iron pickaxe and
    wood/stone/iron sword). Action names (``"place_table"``) are accepted too. Anything else
    (an index outside 0-16, other text, other types) is invalid: the state is unchanged,
    ``info["invalid_action"]`` is True and ``info["feedback"]`` says why.

    ## Observation Space
    ``Box(0, 255, (64, 64, 3), uint8)``: crafter's rendering (day/night light, sleeping tint).
    ``env.unwrapped.semantic_map()`` gives the 64x64 semantic map.

    ## Rewards
    Crafter's: +1 per newly unlocked achievement step, plus health change / 10.
    ``info["achievements"]`` as in Crafter-v0.

    ## Starting State
    As Crafter-v0: ``reset(seed=s)`` is ``crafter.Env(seed=s)``'s first world.

    ## Episode End
    Terminates on death (or on the target, if a config sets one with ``end_on_target``);
    truncated after ``length`` steps (10,000).

    ## Arguments
    As Crafter-v0 (``CrafterConfig``); this id defaults to ``target="none"``.

    ## Version History
    * v0: Initial version (crafter 1.8.3 rules and rendering).
    """

    # gymnasium's Env declares it an instance attribute
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 10}  # noqa: RUF012
    renders_pixels = True
    action_commands = ACTIONS

    def _invalid(self, message: str) -> Transition[np.ndarray]:
        message = message.replace("is not a Crafter command. Valid commands:", "is not an action:")
        return self._repeat_frame(f"{message} (or indices 0-16)")

    def _observe(self, message: str) -> np.ndarray:
        return self.game.render()

    def oracle_action(self) -> int:
        return self.oracle.act()


class CrafterSymbolicEnv(_CrafterEnvBase[np.ndarray, PixelAction], PixelEnv[CrafterConfig]):
    """Crafter with a symbolic observation (as Craftax-Classic's) and ``Discrete(17)`` actions,
    for RL agents small enough to train on a CPU.

    ## Description
    The same game, worlds, tasks, dynamics and config as ``llmgym/Crafter-v0`` and
    ``llmgym/CrafterPixels-v0`` (see Crafter-v0's page); only the observation differs: instead of
    crafter's 64x64 image, a flat ``float32`` vector of what that image shows — the 9x7 local
    view as a one-hot grid of materials and creatures, the inventory and vitals, the facing
    direction, daylight and sleep. A small MLP policy learns from it with far less compute than
    a CNN from pixels. For training, :class:`~llmgym.envs.crafter.vector.CrafterSymbolicVectorEnv`
    steps many of these games in one process and returns one ``(num_envs, 1093)`` array per step
    (``gymnasium.make_vec`` works too, with per-environment overhead). Registered with
    ``target="none"``: episodes run like Crafter's (to death or ``length`` steps).

    ## Action Space
    ``Discrete(17)``: crafter's action indices, as CrafterPixels-v0 (0 noop, 1-4 move
    left/right/up/down, 5 do, 6 sleep, 7-10 place stone/table/furnace/plant, 11-16 make
    wood/stone/iron pickaxe and wood/stone/iron sword); action names are accepted too. Anything
    else is invalid: the state is unchanged, ``info["invalid_action"]`` is True and
    ``info["feedback"]`` says why.

    ## Observation Space
    ``Box(0, 1, (1093,), float32)``, in this order (``llmgym.envs.crafter.symbolic``):

    * 9 x 7 x 17 = 1,071 values: the local view indexed ``[x, y, channel]`` (x left to right,
      the agent at x=4; y top to bottom, the agent at y=3), 12 material channels (water, grass,
      stone, path, sand, tree, lava, coal, iron, diamond, table, furnace; all zero outside the
      world) and 5 creature channels (cow, zombie, skeleton, arrow, plant) on top of them;
    * 16 inventory counts / 9: health, food, drink, energy, sapling, wood, stone, coal, iron,
      diamond, wood/stone/iron pickaxe, wood/stone/iron sword;
    * 4 values: the facing direction one-hot (left, right, up, down);
    * daylight (1 day, 0 deepest night) and sleeping (0 or 1).

    ## Rewards
    Crafter's: +1 per newly unlocked achievement step, plus health change / 10.
    ``info["achievements"]`` as in Crafter-v0.

    ## Starting State
    As Crafter-v0: ``reset(seed=s)`` is ``crafter.Env(seed=s)``'s first world.

    ## Episode End
    Terminates on death (or on the target, if a config sets one with ``end_on_target``);
    truncated after ``length`` steps (10,000).

    ## Arguments
    As Crafter-v0 (``CrafterConfig``); this id defaults to ``target="none"``.

    ## Version History
    * v0: Initial version (crafter 1.8.3 rules).
    """

    # gymnasium's Env declares it an instance attribute
    metadata: dict[str, Any] = {"render_modes": [], "render_fps": 10}  # noqa: RUF012
    action_commands = ACTIONS

    def __init__(self, config: CrafterConfig | dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self.observation_space = spaces.Box(0.0, 1.0, (SYMBOLIC_SIZE,), np.float32)
        self._observer = SymbolicObserver()

    def _invalid(self, message: str) -> Transition[np.ndarray]:
        message = message.replace("is not a Crafter command. Valid commands:", "is not an action:")
        return self._repeat_frame(f"{message} (or indices 0-16)")

    def _observe(self, message: str) -> np.ndarray:
        return self._observer.observe(self.game)

    def render(self) -> None:
        """No rendering: a frame would draw from the world's random stream at night and change
        the game (use CrafterPixels-v0 for images)."""
        return None

    def oracle_action(self) -> int:
        return self.oracle.act()
