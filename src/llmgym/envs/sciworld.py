"""SciWorld: ScienceWorld's 30 elementary-science tasks, played on the real ScienceWorld engine.

ScienceWorld runs in a Java virtual machine. Each environment starts one JVM on its first reset,
reuses it across resets and stops it in :meth:`SciWorldEnv.close`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from llmgym.core import (
    EnvConfig,
    Task,
    TaskIdRange,
    TextEnv,
    Transition,
    cache_dir,
    knob,
    normalize_command,
    optional_import,
)
from llmgym.core.cache import bounded_cache
from llmgym.errors import ConfigError, MissingDependencyError

scienceworld = optional_import("scienceworld", extra="sciworld")

__all__ = ["SIMPLIFICATIONS", "TASK_NAMES", "SciWorldConfig", "SciWorldEnv", "variation_table"]


@cache
def variation_table() -> dict[str, Any]:
    """ScienceWorld's tasks and their train/dev/test variations (``envs/data``), read once.

    The table is what ScienceWorld's own ``get_variations_train/dev/test`` return; it ships with
    llmgym so that listing task ids needs no JVM (a slow test checks it against the engine)."""
    source = resources.files("llmgym.envs") / "data" / "sciworld_variations.json"
    return json.loads(source.read_text(encoding="utf-8"))


TASK_NAMES: tuple[str, ...] = tuple(task["name"] for task in variation_table()["tasks"])
SIMPLIFICATIONS = (
    "teleportAction",
    "openDoors",
    "openContainers",
    "selfWateringFlowerPots",
    "noElectricalAction",
)
_ELECTRICAL = frozenset(
    name for name in TASK_NAMES if "power-component" in name or "conduct" in name
)
_STOCHASTIC_GOLD = frozenset(("mendelian-genetics-known-plant", "mendelian-genetics-unknown-plant"))
"""Tasks whose gold path depends on the (unseeded) simulated genetics of the run that made it:
their gold paths are generated in the episode itself, never cached."""
_SAMPLE_COMMANDS = ("look around", "inventory", "wait1")
_SAMPLE_VERBS = ("look at", "pick up", "open", "close", "activate", "deactivate", "go to", "read")
_NO_MATCH = ("No known action matches that input.", "Unknown action.")
_AMBIGUOUS = "Ambiguous request"
_OPTION = re.compile(r"^([0-9]+):\t?(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class SciWorldConfig(EnvConfig):
    """Which ScienceWorld tasks and variations to play."""

    task: str | None = knob(
        None, choices=TASK_NAMES, doc="Play only this ScienceWorld task (None: all 30 tasks)."
    )
    eval_variations: str = knob(
        "test",
        choices=("test", "dev"),
        doc="ScienceWorld's variation split that forms llmgym's eval split (train is always "
        "ScienceWorld's train variations).",
    )
    simplifications: str = knob(
        "",
        doc="Comma-separated ScienceWorld simplifications (teleportAction, openDoors, "
        "openContainers, selfWateringFlowerPots, noElectricalAction), 'easy' for all of them, "
        "or '' for none. noElectricalAction is skipped for the electrical tasks.",
    )
    score_scale: int = knob(
        1,
        choices=(1, 100),
        doc="Reward scale: 1 (rewards sum to score/100) or 100 (ScienceWorld's 0-100 points, "
        "as AgentGym reports them).",
    )

    def validate(self) -> None:
        if isinstance(self.score_scale, bool) or self.score_scale not in (1, 100):
            raise ConfigError(
                "SciWorldConfig.score_scale",
                f"{self.score_scale!r} is not allowed; allowed: one of 1, 100",
            )
        names = [name for name in self.simplifications.split(",") if name]
        for position, name in enumerate(names):
            if name in names[:position]:
                raise ConfigError(
                    "SciWorldConfig.simplifications",
                    f"{name!r} is given twice; allowed: each simplification at most once",
                )
            if name not in (*SIMPLIFICATIONS, "easy"):
                raise ConfigError(
                    "SciWorldConfig.simplifications",
                    f"unknown simplification {name!r}; allowed: a comma-separated subset of "
                    f"{', '.join(SIMPLIFICATIONS)}, or 'easy'",
                )
        if "easy" in names and len(names) > 1:
            raise ConfigError(
                "SciWorldConfig.simplifications",
                f"{self.simplifications!r} combines 'easy' with others; allowed: 'easy' alone",
            )

    def simplifications_for(self, task: str) -> str:
        """The simplification string ScienceWorld accepts for ``task``."""
        names = [name for name in self.simplifications.split(",") if name]
        if task in _ELECTRICAL:
            names = [name for name in names if name != "noElectricalAction"]
        return ",".join(names)


@bounded_cache(64)
def _instances(split: str, task: str | None, eval_variations: str) -> tuple[tuple[str, int], ...]:
    """(task, variation) pairs of a split, interleaved across tasks: the first ids cover every
    task before any task repeats, so any prefix of the split is a balanced sample."""
    source = "train" if split == "train" else eval_variations
    rows = [t for t in variation_table()["tasks"] if task is None or t["name"] == task]
    pairs = []
    for rank in range(max(len(row[source]) for row in rows)):
        pairs += [(row["name"], row[source][rank]) for row in rows if rank < len(row[source])]
    return tuple(pairs)


class SciWorldEnv(TextEnv[SciWorldConfig]):
    """Run elementary-science experiments in ScienceWorld's simulated world.

    ## Description
    The real ScienceWorld engine (Wang et al., 2022; the pip package ``scienceworld``, which
    runs a Java simulator): 30 tasks from a grade-school science curriculum — change the state
    of matter, measure melting points, build electrical circuits, test conductivity, find and
    classify living things, grow plants and fruit, mix chemicals and paints, compare lifespans,
    identify life stages, measure friction on inclined planes, Mendelian genetics — in a house
    with a kitchen, workshop, greenhouse, outside area and more. Each task has many variations
    (different substances, objects and places): 3,592 train and 1,819 test variations.

    ## Action Space
    ScienceWorld's free-text commands: ``look around``, ``look at OBJ``, ``look in OBJ``,
    ``go to LOC``, ``open/close OBJ``, ``pick up OBJ``, ``put down OBJ``, ``move OBJ to OBJ``,
    ``pour OBJ in OBJ``, ``dunk OBJ in OBJ``, ``mix OBJ``, ``activate/deactivate OBJ``,
    ``connect OBJ to OBJ``, ``disconnect OBJ``, ``use OBJ on OBJ``, ``read OBJ``, ``eat OBJ``,
    ``flush OBJ``, ``focus on OBJ``, ``wait``, ``wait1``, ``inventory``, ``task``. When a
    command names an object ambiguously the game lists numbered options and the next action is
    the number of one of them. A command the parser does not match, a number when no choice is
    pending, ``reset task`` and text that is not a single printable command are invalid and
    change nothing. ``focus on`` the wrong object fails the task.

    ## Observation Space
    Text. On reset: the task description, then the room description (``look around``). After
    each action: ScienceWorld's response. ``info["score"]`` is the task score (0-100).

    ## Rewards
    Each step's reward is the change of ScienceWorld's score divided by 100, so an episode's
    rewards sum to its final score / 100 (1.0 at full score). ScienceWorld scores a failed task
    (e.g. focusing on the wrong object) -100; llmgym counts a failure as score 0, so rewards
    stay in [0, 1] and ``info["failed"]`` tells the failure apart.

    With ``score_scale=100`` the rewards are on ScienceWorld's 0-100 scale, as AgentGym reports
    them: each step's reward is the change of the score in points, so the rewards sum to the
    final score (100.0 at full score). ``info["score"]`` is, under both scales, each step's
    cumulative score 0-100: what AgentGym's SciWorld client returns as its reward.
    Failure is counted the same way under both scales: the score drops to 0 (the step's reward
    takes back the points gained so far) and ``info["failed"]`` is set, where AgentGym's server
    reports ScienceWorld's -100.

    ## Starting State
    The task's variation as ScienceWorld builds it. Task ids interleave tasks (``train/00000``
    is the first train variation of task 1-1, ``train/00001`` of task 1-2, ...), so any prefix
    of a split covers every task. llmgym's train split is ScienceWorld's train variations; the
    eval split is ScienceWorld's test variations (or its dev variations with
    ``eval_variations="dev"``); ScienceWorld's splits share no variation.

    ## Episode End
    Terminates at full score (``info["success"] = True``) or when the task fails. Truncated by
    the registered turn limit (300, above the length of ScienceWorld's gold paths).
    The oracle replays ScienceWorld's gold action sequence, generated for each variation on
    first use by a fresh Java process (the engine orders a gold path by hashes that depend on
    everything its process did before, so only a fresh one gives the same path on any machine;
    a few seconds) and cached in ``$LLMGYM_CACHE_DIR`` (default: the user cache dir; for the two
    Mendelian-genetics tasks it is generated in the episode itself: their gold path depends on
    the simulated crosses of the run that made it). It cannot replan: after
    off-path actions it continues the sequence where it left off, skips a gold command the
    engine no longer parses and answers an unexpected choice with option 0. Measured: see
    docs/environments/sciworld.md.

    ScienceWorld's simulator is not seeded. Replaying a gold path twice can give different
    observations (seen in: melt, use-thermometer, measure-melting-point-unknown-substance,
    chemistry-mix-paint-tertiary-color, grow-fruit, identify-life-stages-2,
    inclined-plane-determine-angle and both Mendelian-genetics tasks), so those episodes are
    not reproducible step by step; llmgym cannot seed the Java simulator. Task instances (the
    variation, the first observation) are reproducible.

    ## Arguments
    ``gymnasium.make("llmgym/SciWorld-v0", task="boil", simplifications="easy")``; see
    :class:`SciWorldConfig` (``task``, ``eval_variations``, ``simplifications``,
    ``score_scale``: 1 or 100). The Java process takes a few seconds to start (on the first
    reset), a JVM's memory, and stops in ``env.close()``. It needs a Java runtime
    (11 or newer) on ``PATH``.

    ## Version History
    * v0: Initial version (ScienceWorld 1.2); the ``score_scale`` option (AgentGym's 0-100
      view) was added later, its default keeps the original rewards.
    """

    config_class = SciWorldConfig
    env_name = "sciworld"
    rules_text = (
        "You are an agent in ScienceWorld, a simulated house with a kitchen, workshop, "
        "greenhouse and more. Complete the science task by typing one command per turn: "
        "look around, look at OBJ, go to LOC, open OBJ, pick up OBJ, move OBJ to OBJ, pour "
        "OBJ in OBJ, activate OBJ, connect OBJ to OBJ, use OBJ on OBJ, focus on OBJ, wait, "
        "inventory. Focus only on the object the task names; focusing on the wrong one "
        "fails the task. When a request is ambiguous, answer with the number of an option."
    )
    example = (
        "Observation: Your task is to boil water. ...\nThis room is called the hallway. In it, "
        "you see: ...\nA door to the kitchen (that is open)\n"
        "Thought: Water and a stove are likely in the kitchen.\nAction: go to kitchen"
    )

    _engine: Any = None
    _instance = ("", 0)
    _simplifications = ""
    _score = 0
    _choices: list[int]
    """A pending "Ambiguous request": the engine's number of each option, in the order shown."""
    _history: list[str]
    """The actions sent to the engine this episode."""
    _gold: list[str] | None = None
    _gold_position = 0

    # ------------------------------------------------------------------ tasks
    def task_ids(self, split: str = "train", config: SciWorldConfig | None = None) -> TaskIdRange:
        config = config or self.config
        pairs = _instances(split, config.task, config.eval_variations)
        return TaskIdRange(split, len(pairs))

    def instance_key(self) -> str:
        task, variation = self._instance
        return f"{task} variation {variation}"

    def _reset_task(self, task: Task[SciWorldConfig]) -> tuple[str, str]:
        config = task.config
        pairs = _instances(task.split, config.task, config.eval_variations)
        self._instance = pairs[task.index]
        name, variation = self._instance
        self._simplifications = config.simplifications_for(name)
        engine = self._start_engine()
        engine.load(name, variation, self._simplifications, generateGoldPath=False)
        self._score = 0
        self._choices = []
        self._history = []
        self._gold = None
        self._gold_position = 0
        description = engine.server.freeActionTaskDesc()
        instruction = description.split(":", 1)[-1].strip()
        look = _sorted_listings(engine.server.freeActionLook().strip())
        return f"{instruction}\n\n{look}", instruction

    def _start_engine(self) -> Any:
        if self._engine is None:
            if shutil.which("java") is None:
                raise MissingDependencyError(
                    "ScienceWorld needs a Java runtime (11 or newer) on PATH; install one, e.g. "
                    "apt-get install default-jre-headless"
                )
            self._engine = scienceworld.ScienceWorldEnv(envStepLimit=1_000_000)
        return self._engine

    # ------------------------------------------------------------------ dynamics
    def _step(self, action: str) -> Transition:
        command = normalize_command(action, max_length=300)
        if self._choices:
            if not (command.isascii() and command.isdigit() and int(command) < len(self._choices)):
                return self.invalid(
                    f"{self.quote(action)} is not one of the numbered options: reply with a "
                    f"number from 0 to {len(self._choices) - 1} to say which action you meant."
                )
            command = str(self._choices[int(command)])
        elif problem := self._problem(command):
            return self.invalid(f"{self.quote(action)} {problem}")
        server = self._engine.server
        observation = server.step(command)
        if observation.startswith(_NO_MATCH):
            # ScienceWorld's gold paths hold an occasional command that no longer parses once
            # the (stochastic) simulation took another turn; replaying them skips it.
            self._advance_gold(command)
            return self.invalid(
                f"{observation.strip()} Commands look like 'look around', 'go to kitchen', "
                "'pick up thermometer', 'move OBJ to OBJ', 'focus on OBJ'."
            )
        self._history.append(command)
        self._advance_gold(command)
        self._choices = []
        if observation.startswith(_AMBIGUOUS):
            observation, self._choices = _ordered_choices(observation)
        raw_score = round(100 * server.getScore())
        failed = raw_score < 0
        score = max(raw_score, 0)
        if self.task.config.score_scale == 100:
            reward, self._score = float(score - self._score), score
        else:
            reward, self._score = (score - self._score) / 100, score
        success = score >= 100
        return Transition(
            observation=_sorted_listings(observation.strip()),
            reward=reward,
            terminated=success or failed or bool(server.getCompleted()),
            success=success,
            info={"score": score, "failed": failed},
        )

    @staticmethod
    def _problem(command: str) -> str | None:
        """Why ``command`` is not sent to the engine (``None``: it is)."""
        if not command or not command.isascii() or not command.isprintable():
            return "is not a command. Type one command such as 'look around' or 'go to kitchen'."
        if command == "reset task":
            return "is not available: the episode restarts with env.reset()."
        return None

    # ------------------------------------------------------------------ oracle
    def oracle_action(self) -> str:
        gold = self._gold_path()
        action = gold[self._gold_position] if self._gold_position < len(gold) else "look around"
        if self._choices:
            if action.isdigit() and int(action) in self._choices:
                return str(self._choices.index(int(action)))  # the gold path's option, as shown
            return "0"  # a choice the gold path did not expect: the first option shown
        return action

    def _advance_gold(self, command: str) -> None:
        gold, position = self._gold, self._gold_position
        if (
            gold is not None
            and position < len(gold)
            and normalize_command(gold[position]) == command
        ):
            self._gold_position += 1

    def _gold_path(self) -> list[str]:
        """ScienceWorld's gold action sequence of the current variation (cached on disk)."""
        if self._gold is not None:
            return self._gold
        name, variation = self._instance
        path = _gold_cache(name, variation, self._simplifications)
        if name in _STOCHASTIC_GOLD:
            gold = self._generate_episode_gold()
        elif path.exists():
            gold = json.loads(path.read_text())
        else:
            gold = _generate_fresh_gold(name, variation, self._simplifications)
            path.parent.mkdir(parents=True, exist_ok=True)
            scratch = path.with_suffix(f".{os.getpid()}.tmp")
            scratch.write_text(json.dumps(gold))
            scratch.replace(path)
        self._gold = gold
        position = 0  # the gold actions already played this episode, in order
        for command in self._history:
            if position < len(gold) and normalize_command(gold[position]) == command:
                position += 1
        self._gold_position = position
        return gold

    def _generate_episode_gold(self) -> list[str]:
        """The gold path of this episode's own simulation (for the Mendelian-genetics tasks, whose
        gold path depends on the simulated crosses): reload the variation with ScienceWorld's gold
        path (which leaves the world at its start), then replay this episode's actions (the
        simulation is deterministic)."""
        name, variation = self._instance
        engine = self._engine
        engine.load(name, variation, self._simplifications, generateGoldPath=True)
        gold = [str(action) for action in engine.get_gold_action_sequence()]
        for command in self._history:
            engine.server.step(command)
        return gold

    def sample_action(self, rng: Any) -> str:
        """A random command that ScienceWorld's parser accepts: a common verb applied to an
        object in scope (listing ScienceWorld's valid action-object combinations takes
        0.2-1 s a call, so they are not listed)."""
        if self._choices:
            return str(int(rng.integers(len(self._choices))))
        objects = sorted(self._engine.server.getPossibleObjects())
        actions = [*_SAMPLE_COMMANDS, *(f"{verb} {o}" for verb in _SAMPLE_VERBS for o in objects)]
        return actions[int(rng.integers(len(actions)))]

    def _engine_holding_state(self) -> str | None:
        return None if self._engine is None else "ScienceWorld's Java virtual machine"

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
        super().close()


def _ordered_choices(observation: str) -> tuple[str, list[int]]:
    """An "Ambiguous request" with its options sorted by text and renumbered, and the engine's
    number of each shown option. The engine lists them in hash order, which differs from one
    Java process to the next."""
    options = sorted(_OPTION.findall(observation), key=lambda option: option[1])
    header = observation.split("\n", 1)[0]
    lines = [f"{shown}:\t{text}" for shown, (_, text) in enumerate(options)]
    return "\n".join([header, *lines]), [int(number) for number, _ in options]


def _sorted_listings(text: str) -> str:
    """Sort the tab-indented object listings of a room description. The simulator lists the
    contents of a place in hash order, which differs from one run to the next; sorted, the same
    state reads the same (an item keeps its deeper-indented lines with it)."""
    lines = text.split("\n")
    out: list[str] = []
    blocks: list[list[str]] = []
    for line in [*lines, ""]:
        if line.startswith("\t\t") and blocks:
            blocks[-1].append(line)
        elif line.startswith("\t"):
            blocks.append([line])
        else:
            out += [item for block in sorted(blocks) for item in block]
            blocks = []
            out.append(line)
    return "\n".join(out[:-1])


def _generate_fresh_gold(task: str, variation: int, simplifications: str) -> list[str]:
    """ScienceWorld's gold path of a variation, generated by a Java process that loads nothing
    else first. The engine orders the gold path's steps by the hashes of its objects, and those
    depend on everything the Java process did before (the tasks it loaded, the actions it
    played): generated in an episode's own engine, the same variation got different gold paths
    in different runs, and whichever run filled the disk cache first decided the oracle's play
    for every later one. A fresh process gives one gold path per variation on any machine."""
    engine = scienceworld.ScienceWorldEnv(envStepLimit=1_000_000)
    try:
        engine.load(task, variation, simplifications, generateGoldPath=True)
        return [str(action) for action in engine.get_gold_action_sequence()]
    finally:
        engine.close()


def _gold_cache(task: str, variation: int, simplifications: str) -> Path:
    """Where a variation's gold path is cached: ``gold-fresh`` holds only paths made by
    :func:`_generate_fresh_gold` (the ``gold`` folder of earlier llmgym versions is not read);
    the simplifications go into the file name as a digest, so the name stays short whatever
    they are."""
    version = variation_table()["scienceworld"]
    digest = hashlib.sha256(simplifications.encode()).hexdigest()[:16]
    return cache_dir("sciworld", version, "gold-fresh", f"{task}-{variation}-{digest}.json")
