"""ALFWorld's own TextWorld games (``json_2.1.1/<split>/<task>/<trial>/game.tw-pddl``), read
from the directory that ALFWorld's ``alfworld-download`` fills (``$ALFWORLD_DATA``) and played
by TextWorld's PDDL engine, as ALFWorld's ``AlfredTWEnv`` plays them.

A ``game.tw-pddl`` file is JSON: the PDDL domain (``pddl_domain``), the text grammar with the
goal filled in (``grammar``), the scene's PDDL problem (``pddl_problem``), whether ALFWorld's
expert solved it (``solvable``) and the expert's moves (``walkthrough``). TextWorld's
:class:`~textworld.envs.pddl.PddlEnv` plays it with the Fast Downward planner library
(``fast-downward-textworld``, TextWorld's ``[pddl]`` extra); llmgym names the objects as
ALFWorld's ``AlfredDemangler`` does (``mug 1``, ``countertop 2``).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from llmgym.core import (
    EnvConfig,
    Task,
    TaskIdRange,
    TextEnv,
    Transition,
    knob,
    normalize_command,
    optional_import,
)
from llmgym.core.cache import bounded_cache
from llmgym.errors import ConfigError, DataError
from llmgym.originals import (
    DataReport,
    OriginalSource,
    data_dir_knob,
    data_dir_of,
    missing_data,
    source_knob,
)

textworld = optional_import("textworld", extra="alfworld")
pddl = optional_import("textworld.envs.pddl", extra="alfworld")

__all__ = ["TASK_TYPES", "ALFWorldConfig", "ALFWorldEnv", "ALFWorldSource", "game_files"]

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
"""ALFWorld's six task types (``alfred_tw_env.TASK_TYPES``), all of which are played."""

GAMES_ROOT = "json_2.1.1"
SPLITS = ("train", "valid_seen", "valid_unseen")
"""The splits ALFWorld publishes: ``train`` is llmgym's train split; ``valid_unseen`` (unseen
rooms, ALFWorld's out-of-distribution eval) or ``valid_seen`` is its eval split."""
AGENTGYM_TEST_SPLIT = "valid_train"
"""The directory AgentGym's 200 test items (2,420-2,619) come from."""
_ARRIVAL = "You arrive at loc "  # the older games' wording: "You arrive at loc 12. On the ..."
_NOTHING = "Nothing happens."  # TextWorld's answer to a command that is not admissible
_GAME_KEYS = ("pddl_domain", "grammar", "pddl_problem")


# ------------------------------------------------------------------------- the data
@dataclass(frozen=True)
class GameRecord:
    """One playable ALFWorld game.

    Attributes:
        name: ``<task>/<trial>`` inside its split directory.
        path: The ``game.tw-pddl`` file.
        task_type: One of :data:`TASK_TYPES` (from ``traj_data.json``).
    """

    name: str
    path: Path
    task_type: str


@bounded_cache(maxsize=8192)
def _trial(directory: Path, stamp: tuple[int, int, int, int]) -> tuple[str, bool] | None:
    """``(task_type, playable)`` of one trial directory, read as ``AlfredTWEnv`` reads it;
    ``None`` where ALFWorld skips it without reading the game. ``stamp`` (the two files'
    modification times and sizes) makes a changed file be read again."""
    del stamp
    traj = directory / "traj_data.json"
    try:
        task_type = json.loads(traj.read_text("utf-8"))["task_type"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DataError(f"{traj}: not ALFRED trajectory JSON with a task_type ({error})") from None
    if task_type not in TASK_TYPES:
        return None
    game = directory / "game.tw-pddl"
    if not game.is_file():
        return (task_type, False)  # ALFWorld skips a trial without its game file
    try:
        data = json.loads(game.read_text("utf-8"))
    except (OSError, ValueError) as error:
        raise DataError(f"{game}: not a TextWorld PDDL game (JSON) ({error})") from None
    missing = [key for key in _GAME_KEYS if not isinstance(data, dict) or key not in data]
    if missing:
        raise DataError(f"{game}: the game has no {', '.join(missing)}")
    return (task_type, bool(data.get("solvable")))


def _stamp(directory: Path) -> tuple[int, int, int, int]:
    stats = []
    for name in ("traj_data.json", "game.tw-pddl"):
        try:
            stat = (directory / name).stat()
            stats += [stat.st_mtime_ns, stat.st_size]
        except OSError:
            stats += [0, -1]
    return (stats[0], stats[1], stats[2], stats[3])


def game_files(data_dir: Path, split: str) -> tuple[GameRecord, ...]:
    """The playable games of ALFWorld's ``split`` (``train``, ``valid_seen``,
    ``valid_unseen``), sorted by ``<task>/<trial>``.

    ALFWorld's rule (``AlfredTWEnv.collect_game_files``): a directory holding a
    ``traj_data.json`` whose path names no ``movable`` or ``Sliced`` trajectory, whose
    ``task_type`` is one of :data:`TASK_TYPES`, and whose ``game.tw-pddl`` exists and is marked
    ``solvable``. ALFWorld takes them in ``os.walk`` order, which the file system decides;
    llmgym sorts them.

    Raises:
        DataError: The split directory is missing, or a file is unreadable.
    """
    root = data_dir / GAMES_ROOT / split
    if not root.is_dir():
        raise missing_data(
            root, f"ALFWorld's {split} games (<task>/<trial>/game.tw-pddl)", "alfworld"
        )
    games = []
    for directory, _, files in os.walk(root):
        if "traj_data.json" not in files or "movable" in directory or "Sliced" in directory:
            continue
        path = Path(directory)
        found = _trial(path, _stamp(path))
        if found is not None and found[1]:
            name = path.relative_to(root).as_posix()
            games.append(GameRecord(name, path / "game.tw-pddl", found[0]))
    return tuple(sorted(games, key=lambda game: game.name))


def _agentgym_items() -> dict[str, list[str]]:
    text = (resources.files("llmgym.envs") / "data" / "alfworld_agentgym_items.json").read_text()
    data: dict[str, list[str]] = json.loads(text)
    return data


class ALFWorldSource(OriginalSource):
    """ALFWorld's TextWorld games, as ``alfworld-download`` lays them out."""

    name = "alfworld"
    env_id = "llmgym/ALFWorld-v0"
    title = "ALFWorld's TextWorld games (train, valid_seen, valid_unseen)"
    homepage = "https://github.com/alfworld/alfworld"
    license = "MIT (ALFWorld code and game files); built on ALFRED, MIT"
    fetch_commands = (
        "python3 -m venv .alfworld-venv",
        ".alfworld-venv/bin/pip install alfworld==0.3.3",
        "ALFWORLD_DATA=$PWD .alfworld-venv/bin/alfworld-download",
    )
    layout = (
        f"{GAMES_ROOT}/train/<task>/<trial>/traj_data.json\n"
        f"{GAMES_ROOT}/train/<task>/<trial>/game.tw-pddl\n"
        f"{GAMES_ROOT}/valid_seen/<task>/<trial>/game.tw-pddl\n"
        f"{GAMES_ROOT}/valid_unseen/<task>/<trial>/game.tw-pddl\n"
        "logic/alfred.pddl\n"
        "logic/alfred.twl2"
    )
    env_var = "ALFWORLD_DATA"
    agentgym_family = "alfworld"
    agentgym_config: ClassVar[Mapping[str, Any]] = {"eval_split": AGENTGYM_TEST_SPLIT}
    """AgentGym's test items (2,420 on) are ``valid_train`` games."""

    def check(self, data_dir: Path) -> DataReport:
        """Count the playable games of each split (eval: ``valid_unseen``, the default
        ``eval_split``).

        Raises:
            DataError: A split directory is missing, or a file is unreadable.
        """
        data_dir = data_dir.resolve()
        counts = {split: game_files(data_dir, split) for split in SPLITS}
        found = []
        for split, games in counts.items():
            types = Counter(game.task_type for game in games)
            per_type = ", ".join(f"{types[kind]} {kind}" for kind in TASK_TYPES if types[kind])
            found.append(f"{GAMES_ROOT}/{split}: {len(games):,} games ({per_type or 'none'})")
        if (data_dir / GAMES_ROOT / AGENTGYM_TEST_SPLIT).is_dir():
            extra = game_files(data_dir, AGENTGYM_TEST_SPLIT)
            found.append(
                f"{GAMES_ROOT}/{AGENTGYM_TEST_SPLIT}: {len(extra):,} games (AgentGym's test items)"
            )
        logic = [
            name for name in ("alfred.pddl", "alfred.twl2") if (data_dir / "logic" / name).is_file()
        ]
        found.append(
            f"logic/: {', '.join(logic) or 'absent'} (not needed to play: each game.tw-pddl "
            "holds its domain and grammar)"
        )
        return DataReport(
            self.name,
            str(data_dir),
            {"train": len(counts["train"]), "eval": len(counts["valid_unseen"])},
            tuple(found),
        )

    def agentgym_task_ids(self, data_dir: Path) -> Sequence[str]:
        """AgentGym's item order (``agentenv-alfworld``'s ``mappings_train.json`` then
        ``mappings_test.json``): items 0-2,419 are ``train`` games (``train/NNNNN``), items
        2,420-2,619 are ``valid_train`` games, played as ``eval/NNNNN`` with
        ``eval_split="valid_train"``.

        Raises:
            DataError: A game AgentGym names is not a playable game of the directory.
        """
        data_dir = data_dir.resolve()
        ids: list[str] = []
        for key, games in _agentgym_items().items():
            if not key.startswith(GAMES_ROOT + "/"):
                continue
            split = key.split("/", 1)[1]
            position = {game.name: i for i, game in enumerate(game_files(data_dir, split))}
            llmgym_split = "train" if split == "train" else "eval"
            for name in games:
                if name not in position:
                    game = data_dir / key / name / "game.tw-pddl"
                    raise missing_data(game, "a playable game AgentGym names", self.name)
                ids.append(f"{llmgym_split}/{position[name]:05d}")
        return ids


# ------------------------------------------------------------------------- the engine
def _agentgym_observation(feedback: str) -> str:
    """A step's feedback as AgentGym shows it (``agentenv_alfworld.utils.process_ob``): the
    location number of the older games' arrival message dropped."""
    text = feedback.strip()
    if text.startswith(_ARRIVAL):
        text = text[text.find(". ") + 2 :]
    return text or _NOTHING


def _demangled_names(ids: Sequence[str]) -> dict[str, str]:
    """ALFWorld's ``Demangler`` (``shuffle=False``): ``Mug_bar__minus_01_dot_2...`` becomes
    ``mug N``, numbering each kind of object from 1 in reverse sorted order of the ids, as
    ALFWorld does (it pops the highest number first)."""
    ordered = sorted(ids)
    counts: Counter[str] = Counter()
    for entity in ordered:
        kind, bar, _ = entity.partition("_bar_")
        if bar:
            counts[kind + ("basin" if "basin" in entity else "")] += 1
    numbers = {kind: list(range(1, count + 1)) for kind, count in counts.items()}
    names = {}
    for entity in ordered:
        text = entity
        for code, char in (
            ("_bar_", "|"),
            ("_minus_", "-"),
            ("_plus_", "+"),
            ("_dot_", "."),
            ("_comma_", ","),
        ):
            text = text.replace(code, char)
        kind, bar, _ = text.partition("|")
        if not bar:
            names[entity] = f"{text} "  # ALFWorld's "{} {}" with no number
        else:
            kind += "basin" if "basin" in entity else ""
            names[entity] = f"{kind} {numbers[kind].pop()}"
    return names


def _game_class() -> type:
    """TextWorld's PDDL environment with ALFWorld's object names and a planner on demand."""

    class AlfredGame(pddl.PddlEnv):  # type: ignore[name-defined]
        def load(self, filename_or_data: Any) -> None:
            super().load(filename_or_data)
            names = _demangled_names([info.id for info in self._entity_infos.values()])
            for info in self._entity_infos.values():
                info.name = names[info.id]

        def plan(self) -> list[str]:
            """Fast Downward's plan from the current state (TextWorld's ``policy_commands``,
            ALFWorld's ``AlfredExpert(expert_type="planner")``)."""
            commands: list[str] = self._pddl_state.replan(self._entity_infos) or []
            return commands

    return AlfredGame


@dataclass(frozen=True)
class ALFWorldConfig(EnvConfig):
    """Where ALFWorld's games are and which of its splits is llmgym's eval split."""

    source: str = source_knob("alfworld", default="alfworld")
    data_dir: str = data_dir_knob()
    eval_split: str = knob(
        "valid_unseen",
        choices=("valid_unseen", "valid_seen", AGENTGYM_TEST_SPLIT),
        doc="ALFWorld's split played as llmgym's eval split: valid_unseen (games in unseen "
        "rooms, ALFWorld's out-of-distribution eval), valid_seen (seen rooms, in-distribution) "
        "or valid_train (the directory AgentGym's 200 test items come from).",
    )


def _configured(config: ALFWorldConfig) -> bool:
    return bool(config.data_dir or os.environ.get(ALFWorldSource.env_var))


class ALFWorldEnv(TextEnv[ALFWorldConfig]):
    """ALFWorld's own household games, played by TextWorld's PDDL engine.

    ## Description
    The text side of ALFWorld (Shridhar et al., ICLR 2021): each task is one of ALFWorld's
    TextWorld games — an ALFRED scene turned into a PDDL problem — of six types: put an object
    somewhere, examine one under a lamp, clean, heat or cool one and put it somewhere, put two
    of a kind somewhere. The games are read from a directory in the layout ALFWorld's
    ``alfworld-download`` writes (``$ALFWORLD_DATA``; see *Original data*) and played by
    TextWorld's PDDL engine (``textworld.envs.pddl.PddlEnv``) with the objects named as
    ALFWorld names them. Unlike ``llmgym/Household-v0`` (generated rooms, offline) this
    environment has no tasks without the data.

    ## Action Space
    Text commands; one of the admissible commands (``info["admissible_actions"]``): ``go to
    countertop 1``, ``open fridge 1``, ``take mug 1 from countertop 1``, ``put mug 1 in/on
    coffeemachine 1`` (the games of ``alfworld`` 0.4 say ``move mug 1 to coffeemachine 1``:
    the wording is the game file's), ``heat``/``cool``/``clean X with Y``, ``use desklamp
    1``, ``examine``, ``inventory``, ``look``, ``help``. Case, spacing and wrapping
    punctuation are ignored. Anything else is answered ``Nothing happens.``, as ALFWorld
    answers it, and marked ``info["invalid_action"]``.

    ## Observation Space
    Text, the game's own: the first observation is the room and the task (``You are in the
    middle of a room. Looking quickly around you, you see a cabinet 1, ... Your task is to:
    put a clean mug in coffeemachine.``) without TextWorld's welcome line, its paragraphs one
    line each, as AgentGym shows it; later observations are the game's answers, with the older
    games' ``You arrive at loc 12.`` dropped as AgentGym drops it.

    ## Rewards
    ALFWorld's and AgentGym's: 1.0 on the step that wins the game (TextWorld's ``won``: the
    problem's PDDL goal holds), 0.0 otherwise.

    ## Starting State
    The game's initial state. Train tasks are ``json_2.1.1/train``; eval tasks are
    ``eval_split`` (default ``valid_unseen``). Task ``<split>/<NNNNN>`` is the N-th playable
    game of the split in sorted ``<task>/<trial>`` order.

    ## Episode End
    Terminates when the game is won. Truncated by the registered turn limit, 50: ALFWorld's
    own ``max_nb_steps_per_episode`` (AgentGym's ALFWorld eval script sets ``max_round`` 30:
    ``gymnasium.make(..., max_episode_steps=30)`` matches it). The oracle follows Fast
    Downward's plan from the current state (TextWorld's ``policy_commands``, ALFWorld's
    ``planner`` expert), so it recovers from any detour; it reads the game's PDDL goal, which
    the agent never sees.

    ## Original data
    Source ``alfworld`` (the default and only one): ALFWorld's games from the directory
    ``data_dir`` or, where that is empty, ``$ALFWORLD_DATA``. Fetch them with ALFWorld's own
    tool (``pip install alfworld==0.3.3`` and ``ALFWORLD_DATA=DIR alfworld-download``; llmgym
    does not need the ``alfworld`` package to play); ``llmgym data check alfworld DIR``
    counts the games. Without a directory the environment has no tasks and ``reset`` names
    the missing ``data_dir``. Games are chosen by ALFWorld's rule (a ``traj_data.json`` of one
    of the six task types, no ``movable``/``Sliced`` trajectory, a ``game.tw-pddl`` marked
    ``solvable``). AgentGym's item ``i`` (``/agentgym/alfworld``) maps to the same game:
    items 0-2,419 are AgentGym's chosen ``train`` games, items 2,420-2,619 its
    ``valid_train`` games (``eval_split="valid_train"``). Playing needs Fast Downward
    (``fast-downward-textworld``, the ``[alfworld]`` extra). docs/originals.md says what matches
    ALFWorld and what differs.

    ## Arguments
    ``gymnasium.make("llmgym/ALFWorld-v0", config={"data_dir": "~/.cache/alfworld"})``; see
    :class:`ALFWorldConfig`.

    ## Version History
    * v0: Initial version (TextWorld 1.7, fast-downward-textworld 20.6).
    """

    config_class = ALFWorldConfig
    env_name = "alfworld"
    rules_text = (
        "You are in a household. Complete the task given at the start by sending one command "
        "per turn, such as 'go to countertop 1', 'open fridge 1', 'take mug 1 from countertop "
        "1', 'put mug 1 in/on coffeemachine 1', 'heat mug 1 with microwave 1', 'use desklamp "
        "1', 'examine mug 1', 'inventory' or 'look'. Only the admissible commands listed for "
        "the current state work."
    )
    example = (
        "Observation: You arrive at countertop 1. On the countertop 1, you see a mug 1.\n"
        "Thought: I need the mug for the coffee machine.\nAction: take mug 1 from countertop 1"
    )

    _game: Any = None
    _state: Any = None
    _record: GameRecord | None = None
    _admissible: tuple[str, ...] = ()

    # ------------------------------------------------------------------ tasks
    def _games(self, split: str, config: ALFWorldConfig) -> tuple[GameRecord, ...]:
        data_dir = data_dir_of(config)
        if data_dir is None:  # pragma: no cover - the source knob offers no generated tasks
            raise ConfigError("ALFWorldConfig.source", "ALFWorld has no generated tasks")
        return game_files(data_dir, "train" if split == "train" else config.eval_split)

    def task_ids(self, split: str = "train", config: ALFWorldConfig | None = None) -> TaskIdRange:
        config = config or self.config
        if not _configured(config):
            return TaskIdRange(split, 0)
        return TaskIdRange(split, len(self._games(split, config)))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode (see :meth:`TextEnv.reset`).

        Raises:
            ConfigError: No data directory is given (``data_dir`` or ``$ALFWORLD_DATA``).
        """
        if isinstance(options, dict):
            data_dir_of(self.config.merged(options.get("config")))
        else:
            data_dir_of(self.config)
        return super().reset(seed=seed, options=options)

    def instance_key(self) -> str:
        return "" if self._record is None else self._record.name

    def _reset_task(self, task: Task[ALFWorldConfig]) -> tuple[str, str]:
        self._record = self._games(task.split, task.config)[task.index]
        if self._game is None:
            # TextWorld's PDDL engine imports its planner lazily: name the extra that has it
            optional_import("fast_downward", extra="alfworld", package="fast-downward-textworld")
            infos = textworld.EnvInfos(admissible_commands=True, won=True)
            self._game = _game_class()(infos)
        try:
            self._game.load(str(self._record.path))
            self._state = self._game.reset()
        except Exception as error:  # TextWorld's parsers raise their own types
            raise DataError(f"{self._record.path}: TextWorld cannot play it ({error})") from None
        self._admissible = tuple(self._state["admissible_commands"])
        # AgentGym's first observation: the paragraphs after TextWorld's welcome line, one
        # line each
        intro = "\n".join(self._state.feedback.strip().split("\n\n")[1:])
        goal = intro.rpartition("Your task is to:")[2].strip() or "Complete the household task."
        return intro, goal

    # ------------------------------------------------------------------ dynamics
    def _step(self, action: str) -> Transition:
        command = normalize_command(action, max_length=300)
        if command not in self._admissible:
            return self.invalid(_NOTHING)
        self._state, _, _ = self._game.step(command)
        self._admissible = tuple(self._state["admissible_commands"])
        won = bool(self._state["won"])
        return Transition(
            observation=_agentgym_observation(self._state.feedback),
            reward=1.0 if won else 0.0,
            terminated=won,
            success=won,
        )

    # ------------------------------------------------------------------ oracle and actions
    def oracle_action(self) -> str:
        plan = self._game.plan() if self._game is not None else []
        return plan[0] if plan else "look"

    def admissible_actions(self) -> list[str] | None:
        return list(self._admissible)

    def sample_action(self, rng: Any) -> str:
        return self._admissible[int(rng.integers(len(self._admissible)))]

    def _engine_holding_state(self) -> str | None:
        return None if self._game is None else "TextWorld's PDDL engine (Fast Downward, C++)"

    def close(self) -> None:
        if self._game is not None:
            self._game.close()
            self._game = None
        super().close()
