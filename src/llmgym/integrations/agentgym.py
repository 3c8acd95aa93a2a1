"""AgentGym compatibility: its environment families, its integer task indices and its data files.

AgentGym (WooooDyy/AgentGym) runs one server per environment family and addresses a task by an
integer. llmgym serves every family under ``llmgym serve`` at ``/agentgym/<family>``
(:mod:`llmgym.serving.server.agentgym`), and this module holds what that server, ``llmgym
export agenteval --format agentgym``, ``llmgym convert --format agentgym`` and ``llmgym eval
--task-file`` share:

* :data:`FAMILIES` — one row per AgentGym family: the llmgym environment behind it, the config
  that makes it speak AgentGym's wording, and how its server answers (id field, task key, reply
  shapes, score). Adding a family (WebArena, once llmgym has one) is one row;
* :func:`task_id_of` / :func:`index_of` — the task index mapping: index ``i`` is
  ``task_ids("eval")[i]`` for ``0 <= i < len(eval)`` and ``task_ids("train")[i - 1_000_000]``
  from :data:`TRAIN_OFFSET` on;
* :func:`agenteval_items`, :func:`write_agenteval` and :func:`read_task_file` — AgentEval's
  ``<family>_test.json`` files. AgentTraj's records of a trajectory are
  :func:`llmgym.runner.trajectories.to_agenttraj`'s, beside llmgym's other conversions.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym

from llmgym.core.env import unwrapped_text_env
from llmgym.errors import MissingDependencyError
from llmgym.originals import get_source, source_names
from llmgym.suites import load_suite

__all__ = [
    "FAMILIES",
    "TRAIN_OFFSET",
    "Family",
    "agenteval_items",
    "family_for_env",
    "find_family",
    "index_of",
    "original_items",
    "read_task_file",
    "split_ids",
    "task_id_of",
    "write_agenteval",
]

TRAIN_OFFSET = 1_000_000
"""Task index of the first train task; indices below it are eval tasks."""

Shape = Literal["handle", "text", "pair"] | tuple[str, ...]
"""A reply: the bare handle, the observation as a JSON string, ``[observation, null]``, or an
object with these fields (see :data:`llmgym.serving.server.agentgym.FIELDS`)."""


@dataclass(frozen=True)
class Family:
    """One AgentGym family: which llmgym environment serves it, and how AgentGym's server for it
    answers (so that AgentGym's own client class works unchanged).

    Attributes:
        name: AgentGym's name, the path segment (``webshop``) and the ``item_id`` prefix.
        env_id: The llmgym environment.
        config: Config options that make the environment speak AgentGym's wording.
        handle_field: The field (and query parameter) naming the instance: ``id`` or
            ``env_idx``.
        task_field: The reset field holding the task index (``data_idx``, ``game``, ...).
        create: The reply to ``POST create``.
        reset: The reply to ``POST reset``.
        step: The reply to ``POST step``.
        observation: ``GET observation``: the last observation (``text``), the episode's first
            one (``first``: SearchQA answers the question again) or the state object
            (``state``).
        actions: ``GET available_actions``: a list, WebShop's ``{has_search_bar,
            clickables}`` (``webshop``) or the four moves (``moves``).
        score: The ``score`` field: the episode's reward so far (``cumulative``, BabyAI) or the
            environment's ``info["score"]`` (``info``, ScienceWorld's 0-100 score).
        reward_info: The ``info`` key whose value is the ``reward`` AgentGym's server sends
            (``progress``: the tool families' running progress rate), instead of the step's
            reward.
        reset_on_create: ``create`` also starts an episode (on the task the body's
            ``create_task_field`` names, else index 0).
        create_task_field: The ``create`` body field naming the first task.
        compose: How observations reach AgentGym's clients: as the environment says them
            (``plain``), or the reset's split into ``task_description`` and the room
            (``sciworld``, whose client joins them again).
        extra_routes: Further ``GET`` routes answering the task's instruction
            (``instruction_text``, ``goal``, ...) or Wordle's word list (``filtered_vocab``).
        max_rounds: The rounds AgentGym's scripts give an episode (for the docs).
    """

    name: str
    env_id: str
    handle_field: Literal["id", "env_idx"]
    task_field: str
    create: Shape
    reset: Shape
    step: Shape
    config: Mapping[str, Any] = field(default_factory=dict)
    observation: Literal["text", "first", "state"] = "text"
    actions: Literal["list", "webshop", "moves"] = "list"
    score: Literal["cumulative", "info"] | None = None
    reward_info: str | None = None
    reset_on_create: bool = False
    create_task_field: str | None = None
    compose: Literal["plain", "sciworld"] = "plain"
    extra_routes: Mapping[str, str] = field(default_factory=dict)
    max_rounds: int = 0


_STATE = ("state", "reward", "done", "info")
_PLAIN_STEP = ("observation", "reward", "done")


def _tool(name: str, env_id: str, max_rounds: int) -> Family:
    return Family(
        name,
        env_id,
        handle_field="env_idx",
        task_field="id",
        create="handle",
        reset="text",
        step=_PLAIN_STEP,
        config={"reward": "progress", "prompt_style": "agentgym"},
        reward_info="progress",
        reset_on_create=True,
        create_task_field="id",
        max_rounds=max_rounds,
    )


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family(
            "webshop",
            "llmgym/WebShop-v0",
            handle_field="env_idx",
            task_field="session_id",
            create="handle",
            reset="pair",
            step=_STATE,
            actions="webshop",
            extra_routes={"instruction_text": "instruction"},
            max_rounds=10,
        ),
        Family(
            "alfworld",
            "llmgym/Household-v0",
            handle_field="id",
            task_field="game",
            create=("id",),
            reset=("id", "observation", "available_actions", "task_type"),
            step=("observation", "reward", "available_actions", "done"),
            max_rounds=30,
        ),
        Family(
            "babyai",
            "llmgym/BabyAI-v0",
            handle_field="id",
            task_field="data_idx",
            create=("id",),
            reset=("observation", "reward", "score", "deleted", "done"),
            step=("observation", "reward", "score", "done"),
            config={"actions": "agentgym"},
            observation="state",
            score="cumulative",
            max_rounds=20,
        ),
        Family(
            "sciworld",
            "llmgym/SciWorld-v0",
            handle_field="id",
            task_field="data_idx",
            create=("id",),
            reset=(
                "task_name",
                "var_num",
                "task_description",
                "observation",
                "reward",
                "score",
                "deleted",
                "done",
            ),
            step=("observation", "reward", "score", "done"),
            config={"score_scale": 100},
            score="info",
            compose="sciworld",
            extra_routes={"task_description": "instruction"},
            max_rounds=30,
        ),
        Family(
            "textcraft",
            "llmgym/TextCraft-v0",
            handle_field="id",
            task_field="data_idx",
            create=("id", "observation", "done", "reward"),
            reset=("id", "observation", "done", "reward"),
            step=_PLAIN_STEP,
            reset_on_create=True,
            extra_routes={"goal": "instruction"},
            max_rounds=20,
        ),
        Family(
            "maze",
            "llmgym/Maze-v0",
            handle_field="id",
            task_field="game",
            create=("id",),
            reset=("observation",),
            step=_PLAIN_STEP,
            config={"wording": "agentgym"},
            actions="moves",
            max_rounds=15,
        ),
        Family(
            "wordle",
            "llmgym/Wordle-v0",
            handle_field="id",
            task_field="seed",
            create=("id",),
            reset=("id", "observation"),
            step=_PLAIN_STEP,
            config={"feedback": "agentgym", "candidates": 40},
            extra_routes={"filtered_vocab": "candidate_words"},
            max_rounds=8,
        ),
        _tool("weather", "llmgym/Weather-v0", 10),
        _tool("movie", "llmgym/Movie-v0", 12),
        _tool("academia", "llmgym/Academia-v0", 12),
        _tool("todo", "llmgym/Todo-v0", 15),
        _tool("sheet", "llmgym/Sheet-v0", 15),
        Family(
            "sqlgym",
            "llmgym/SQL-v0",
            handle_field="env_idx",
            task_field="item_id",
            create="handle",
            reset="pair",
            step=_STATE,
            max_rounds=1,
        ),
        Family(
            "searchqa",
            "llmgym/SearchQA-v0",
            handle_field="env_idx",
            task_field="id",
            create="handle",
            reset="text",
            step=(*_PLAIN_STEP, "info"),
            observation="first",
            reset_on_create=True,
            create_task_field="id",
            max_rounds=5,
        ),
        Family(
            "webarena",
            "llmgym/WebArena-v0",
            handle_field="env_idx",
            task_field="idx",
            create=("env_idx",),
            reset=("observation", "sites", "object"),
            step=("observation", "reward", "terminated", "truncated", "info"),
            max_rounds=25,
        ),
    )
}
"""AgentGym's families, by the name in their URL and item ids."""

_ALIASES = {
    "lmrlgym_maze": "maze",
    "lmrlgym_wordle": "wordle",
    "tool_weather": "weather",
    "tool_movie": "movie",
    "tool_academia": "academia",
    "tool_todo": "todo",
    "tool_sheet": "sheet",
    "todolist": "todo",
    "bird": "sqlgym",
}
"""Other names AgentGym's scripts and data files use for a family."""


def find_family(name: str) -> Family | None:
    """The family called ``name`` (or one of AgentGym's other names for it), else ``None``."""
    key = name.lower()
    return FAMILIES.get(_ALIASES.get(key, key))


def family_for_env(env_id: str) -> str:
    """The AgentGym name of an llmgym environment (``alfworld`` for Household), or, for one
    AgentGym lacks, its lower-cased llmgym name (``crafter``)."""
    for family in FAMILIES.values():
        if family.env_id == env_id:
            return family.name
    return env_id.split("/")[-1].rsplit("-v", 1)[0].lower()


# ------------------------------------------------------------------------------ task indices
def task_id_of(
    index: int, eval_ids: Sequence[str], train_ids: Sequence[str], *, name: str = "index"
) -> str:
    """The task id of an AgentGym task index.

    Raises:
        ValueError: ``index`` is not an integer, or names no task; the message gives the
            ranges (and ``name``, the request field holding it).
    """
    if isinstance(index, bool) or not isinstance(index, int):
        raise ValueError(f"{name} must be an integer task index, got {index!r}")
    if 0 <= index < len(eval_ids):
        return eval_ids[index]
    if TRAIN_OFFSET <= index < TRAIN_OFFSET + len(train_ids):
        return train_ids[index - TRAIN_OFFSET]
    if not train_ids:  # an original dataset's items, numbered as its authors do
        raise ValueError(f"{name}={index} names no task: items are 0..{len(eval_ids) - 1}")
    raise ValueError(
        f"{name}={index} names no task: eval tasks are 0..{len(eval_ids) - 1}, train tasks "
        f"{TRAIN_OFFSET}..{TRAIN_OFFSET + len(train_ids) - 1}"
    )


def index_of(task_id: str, eval_ids: Sequence[str], train_ids: Sequence[str]) -> int:
    """The AgentGym task index of an llmgym task id (the inverse of :func:`task_id_of`).

    Raises:
        ValueError: The id is in neither list.
    """
    split, _, number = task_id.partition("/")
    ids, offset = (eval_ids, 0) if split == "eval" else (train_ids, TRAIN_OFFSET)
    if number.isdigit() and int(number) < len(ids) and ids[int(number)] == task_id:
        return offset + int(number)
    if split in ("eval", "train") and task_id in ids:
        return offset + list(ids).index(task_id)
    raise ValueError(f"{task_id!r} is not a task id of this environment")


@functools.cache
def split_ids(env_id: str) -> tuple[Sequence[str], Sequence[str]]:
    """The eval and train task ids of an environment (its default config)."""
    env = gym.make(env_id, disable_env_checker=True)
    try:
        inner = unwrapped_text_env(env)
        return inner.task_ids("eval"), inner.task_ids("train")
    finally:
        env.close()


# ------------------------------------------------------------------------------ data files
def agenteval_items() -> dict[str, list[dict[str, Any]]]:
    """llmgym's frozen AgentEval suite as AgentGym's test items, by family: ``{"webshop":
    [{"item_id": "webshop_17", "conversations": []}, ...], ...}``."""
    items: dict[str, list[dict[str, Any]]] = {}
    for env_id, task_ids in load_suite("agenteval").items():
        eval_ids, train_ids = split_ids(env_id)
        name = family_for_env(env_id)
        items[name] = [
            {"item_id": f"{name}_{index_of(t, eval_ids, train_ids)}", "conversations": []}
            for t in task_ids
        ]
    return items


def write_agenteval(directory: str | os.PathLike[str]) -> list[Path]:
    """Write the frozen AgentEval suite as AgentGym's ``<family>_test.json`` files (JSON
    arrays, as AgentGym's evaluation scripts read them) into ``directory``; return the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, items in agenteval_items().items():
        path = out / f"{name}_test.json"
        path.write_text(json.dumps(items, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written


def original_items(family: Family, data_dir: str | os.PathLike[str]) -> tuple[str, Sequence[str]]:
    """The environment that plays ``family``'s original dataset in ``data_dir``, and the task
    id of each AgentGym item index of it (position ``i`` is item ``i``).

    Raises:
        ValueError: llmgym reads no original dataset of ``family``.
    """
    readers = []
    for name in source_names():
        try:
            source = get_source(name)
        except MissingDependencyError:  # another family's extra: not this one's reader
            continue
        if source.agentgym_family == family.name:
            return source.env_id, source.agentgym_task_ids(Path(data_dir).expanduser().resolve())
        readers.append(source.agentgym_family)
    raise ValueError(
        f"llmgym reads no original dataset of AgentGym's {family.name}; it does of "
        f"{', '.join(sorted(set(readers)))}"
    )


def read_task_file(
    path: str | os.PathLike[str], *, data_dir: str | os.PathLike[str] | None = None
) -> list[tuple[str, list[str]]]:
    """The episodes an AgentGym data file names (a JSON array of ``{"item_id":
    "<family>_<index>", ...}``, e.g. an AgentEval ``webshop_test.json``), as ``[(env_id,
    [task_id, ...])]`` in the file's order, one entry per environment. With ``data_dir``, an
    index is the item of the family's original dataset there (AgentGym's own numbering).

    Raises:
        ValueError: Not such a file, an unknown family, or an index that names no task; the
            message names the item.
    """
    try:
        items = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{os.fspath(path)}: not a readable JSON file ({error})") from None
    if not isinstance(items, list) or not items:
        raise ValueError(f"{os.fspath(path)}: expected a non-empty JSON array of items")
    plan: dict[str, list[str]] = {}
    originals: dict[str, tuple[str, Sequence[str]]] = {}
    for number, item in enumerate(items):
        item_id = item.get("item_id") if isinstance(item, dict) else None
        prefix, _, index = item_id.rpartition("_") if isinstance(item_id, str) else ("", "", "")
        family = find_family(prefix)
        where = f"{os.fspath(path)}, item {number} ({item_id!r})"
        if family is None or not index.isdigit():
            raise ValueError(
                f"{where}: expected an item_id <family>_<index> with a family of "
                f"{', '.join(FAMILIES)}"
            )
        env_id = family.env_id
        if data_dir is None:
            eval_ids, train_ids = split_ids(env_id)
        else:
            if family.name not in originals:
                originals[family.name] = original_items(family, data_dir)
            env_id, eval_ids = originals[family.name]
            train_ids = ()
        try:
            task_id = task_id_of(int(index), eval_ids, train_ids)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
        plan.setdefault(env_id, []).append(task_id)
    return list(plan.items())
