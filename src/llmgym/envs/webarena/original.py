"""WebArena's own tasks: its task configs, read from a checkout of its repository.

WebArena (Zhou et al., 2024) publishes 812 test tasks as ``config_files/test.raw.json``, one
array with the sites' addresses as placeholders (``__SHOPPING__``, ``__REDDIT__``, ...), and
``scripts/generate_test_data.py`` writes ``config_files/<task_id>.json``, one task per file,
with the addresses from the environment variables ``SHOPPING``, ``SHOPPING_ADMIN``,
``REDDIT``, ``GITLAB``, ``WIKIPEDIA``, ``MAP`` and ``HOMEPAGE``. A directory is read as that
layout: the numbered files where there are any (what WebArena's ``run.py`` plays), else
``test.raw.json`` with the placeholders replaced from the same variables, as the script does.
Logins come from Playwright storage states (``.auth/<site>_state.json``, written by WebArena's
``browser_env/auto_login.py``), named by each task's ``storage_state``.

WebArena has only a test set: its tasks are llmgym's ``eval`` split, ``eval/NNNNN`` the
``N``-th task in ``task_id`` order (``eval/00042`` is ``task_id`` 42 in the full set); the
``train`` split is empty unless the config's ``train_tasks`` moves some tasks there.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmgym.core.cache import bounded_cache
from llmgym.errors import ConfigError, DataError
from llmgym.originals import DataReport, OriginalSource, missing_data

__all__ = [
    "SITE_VARIABLES",
    "OriginalTask",
    "WebArenaSource",
    "load_tasks",
    "split_tasks",
]

SITE_VARIABLES = ("SHOPPING_ADMIN", "SHOPPING", "REDDIT", "GITLAB", "WIKIPEDIA", "MAP", "HOMEPAGE")
"""WebArena's environment variables for the sites' addresses (``browser_env/env_config.py``);
``SHOPPING_ADMIN`` comes before ``SHOPPING`` so that the longer placeholder is replaced first."""
_NUMBERED = re.compile(r"(\d{1,6})\.json")
_PLACEHOLDER = re.compile(r"__(SHOPPING_ADMIN|SHOPPING|REDDIT|GITLAB|WIKIPEDIA|MAP|HOMEPAGE)__")
_EVAL_TYPES = frozenset(["string_match", "url_match", "program_html"])


@dataclass(frozen=True)
class OriginalTask:
    """One WebArena task: its ``task_id``, the file it came from and its config as written
    (placeholders not yet replaced)."""

    task_id: int
    source: str
    raw: str

    def config(self, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The config with ``__SITE__`` placeholders replaced from ``environ`` (default: the
        process's environment), as ``generate_test_data.py`` does.

        Raises:
            ConfigError: A placeholder's variable is unset.
        """
        environ = os.environ if environ is None else environ
        missing = sorted({name for name in _PLACEHOLDER.findall(self.raw) if not environ.get(name)})
        if missing:
            raise ConfigError(
                f"${missing[0]}",
                f"WebArena task {self.task_id} ({self.source}) needs the address of its site: "
                f"set the environment variable{'s' if len(missing) > 1 else ''} "
                f"{', '.join(missing)} (e.g. {missing[0]}=http://localhost:7770)",
            )
        text = _PLACEHOLDER.sub(lambda m: environ[m.group(1)].rstrip("/"), self.raw)
        loaded: dict[str, Any] = json.loads(text)
        return loaded


def config_dir(data_dir: Path) -> Path:
    """The folder holding the task configs: ``data_dir/config_files`` (a WebArena checkout),
    else ``data_dir`` itself where it holds them."""
    nested = data_dir / "config_files"
    if nested.is_dir():
        return nested
    holds_configs = (data_dir / "test.raw.json").is_file() or any(
        _NUMBERED.fullmatch(path.name) for path in data_dir.glob("*.json")
    )
    return data_dir if holds_configs else nested


def _stamp(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times of the config files: a changed file is re-read."""
    stamps = []
    for path in sorted(folder.glob("*.json")):
        stat = path.stat()
        stamps.append((path.name, stat.st_size, stat.st_mtime_ns))
    return tuple(stamps)


def load_tasks(data_dir: Path) -> tuple[OriginalTask, ...]:
    """The tasks of a WebArena directory in ``task_id`` order (read once per file version).

    Raises:
        DataError: No task configs, or one that is not a WebArena task; the message names the
            file.
    """
    folder = config_dir(data_dir.resolve())
    return _load(folder, _stamp(folder) if folder.is_dir() else ())


@bounded_cache(8)
def _load(folder: Path, stamp: tuple[tuple[str, int, int], ...]) -> tuple[OriginalTask, ...]:
    numbered = [name for name, _, _ in stamp if _NUMBERED.fullmatch(name)]
    items: list[tuple[dict[str, Any], str, str]] = []
    if numbered:
        for name in numbered:
            text = _read(folder / name)
            item = _parse(text, folder / name)
            if not isinstance(item, dict):
                raise DataError(f"{folder / name}: a WebArena task config is a JSON object")
            items.append((item, name, text))
    else:
        raw_path = folder / "test.raw.json"
        if not raw_path.is_file():
            raise missing_data(
                raw_path,
                "WebArena's task configs (config_files/test.raw.json, or the numbered "
                "config_files/<task_id>.json that scripts/generate_test_data.py writes)",
                "webarena",
            )
        array = _parse(_read(raw_path), raw_path)
        if not isinstance(array, list):
            raise DataError(f"{raw_path}: test.raw.json is a JSON array of task configs")
        for index, item in enumerate(array):
            where = f"test.raw.json[{index}]"
            if not isinstance(item, dict):
                raise DataError(f"{raw_path}: item {index} is not a JSON object")
            items.append((item, where, json.dumps(item)))
    tasks = [OriginalTask(_check(item, folder / where), where, text) for item, where, text in items]
    tasks.sort(key=lambda task: task.task_id)
    for previous, task in itertools.pairwise(tasks):
        if previous.task_id == task.task_id:
            raise DataError(
                f"{folder}: task_id {task.task_id} is in both {previous.source} and {task.source}"
            )
    return tuple(tasks)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: cannot read it ({type(error).__name__})") from None


def _parse(text: str, path: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise DataError(f"{path}: not JSON ({error.msg} at line {error.lineno})") from None


def _check(item: dict[str, Any], where: Path) -> int:
    """The task's ``task_id``, once its config has the fields WebArena's harness reads."""
    for key in ("task_id", "intent", "start_url", "eval"):
        if key not in item:
            raise DataError(f"{where}: the task config lacks {key!r}")
    task_id = item["task_id"]
    if not isinstance(task_id, int) or isinstance(task_id, bool) or task_id < 0:
        raise DataError(f"{where}: task_id is {task_id!r}, not a whole number >= 0")
    spec = item["eval"]
    types = spec.get("eval_types") if isinstance(spec, dict) else None
    if not isinstance(types, list) or not types or not set(types) <= _EVAL_TYPES:
        raise DataError(
            f"{where}: eval.eval_types is {types!r}; WebArena's are a list drawn from "
            f"{', '.join(sorted(_EVAL_TYPES))}"
        )
    answers = spec.get("reference_answers")
    if "string_match" in types and not isinstance(answers, dict):
        raise DataError(
            f"{where}: string_match needs eval.reference_answers, an object with exact_match, "
            "must_include or fuzzy_match"
        )
    if "url_match" in types and not isinstance(spec.get("reference_url"), str):
        raise DataError(f"{where}: url_match needs eval.reference_url, a string")
    if "program_html" in types and not isinstance(spec.get("program_html"), list):
        raise DataError(f"{where}: program_html needs eval.program_html, a list of targets")
    return task_id


def parse_train_tasks(text: str) -> tuple[range, ...]:
    """WebArena task ids from ``"0-99,200"`` (ranges inclusive).

    Raises:
        ConfigError: Not such a list.
    """
    chosen: list[range] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = re.fullmatch(r"(\d{1,6})(?:\s*-\s*(\d{1,6}))?", part)
        if not match:
            raise ConfigError(
                "WebArenaConfig.train_tasks",
                f"{part!r} is not a task id or a range (e.g. '0-99,200')",
            )
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if high < low:
            raise ConfigError("WebArenaConfig.train_tasks", f"the range {part!r} is empty")
        chosen.append(range(low, high + 1))
    return tuple(chosen)


def split_tasks(data_dir: Path, train_tasks: str) -> dict[str, dict[str, OriginalTask]]:
    """The tasks of each llmgym split by task id: ``train`` those whose WebArena ``task_id``
    ``train_tasks`` names, ``eval`` the rest, each numbered in ``task_id`` order."""
    train = parse_train_tasks(train_tasks)
    splits: dict[str, list[OriginalTask]] = {"train": [], "eval": []}
    for task in load_tasks(data_dir):
        in_train = any(task.task_id in ids for ids in train)
        splits["train" if in_train else "eval"].append(task)
    return {
        split: {f"{split}/{index:05d}": task for index, task in enumerate(tasks)}
        for split, tasks in splits.items()
    }


class WebArenaSource(OriginalSource):
    """WebArena's 812 test tasks (``config_files``) on the user's own WebArena sites."""

    name = "webarena"
    env_id = "llmgym/WebArena-v0"
    title = "WebArena (812 test tasks on 6 self-hosted sites)"
    homepage = "https://github.com/web-arena-x/webarena"
    license = (
        "Apache-2.0 (WebArena's code and task configs); the sites' data comes from public "
        "sources, as WebArena's README says"
    )
    fetch_commands = ("git clone --depth 1 https://github.com/web-arena-x/webarena .",)
    layout = (
        "config_files/test.raw.json\n"
        "config_files/<task_id>.json  (optional: scripts/generate_test_data.py)\n"
        ".auth/<site>_state.json  (browser_env/auto_login.py, for tasks that need a login)"
    )
    agentgym_family = "webarena"

    def check(self, data_dir: Path) -> DataReport:
        tasks = load_tasks(data_dir)
        folder = config_dir(data_dir.resolve())
        numbered = sum(1 for task in tasks if task.source.endswith(".json"))
        kinds: dict[str, int] = {}
        states: set[str] = set()
        for task in tasks:
            item = json.loads(task.raw)
            kind = "+".join(item["eval"]["eval_types"])
            kinds[kind] = kinds.get(kind, 0) + 1
            if item.get("storage_state"):
                states.add(str(item["storage_state"]))
        where = (
            f"{numbered:,} numbered task configs" if numbered else "test.raw.json"
        ) + f" in {folder.name}/"
        found = [f"{where}: {len(tasks):,} tasks (task_id {tasks[0].task_id}-{tasks[-1].task_id})"]
        found += [f"  {kind}: {count:,}" for kind, count in sorted(kinds.items())]
        for state in sorted(states):
            path = storage_state_path(data_dir, state)
            found.append(f"{state}: {'found' if path.is_file() else 'missing (auto_login.py)'}")
        unset = [name for name in SITE_VARIABLES if not os.environ.get(name)]
        if unset and not numbered:
            found.append(f"site addresses not set: {', '.join(unset)}")
        return DataReport(self.name, str(data_dir.resolve()), {"eval": len(tasks)}, tuple(found))

    def agentgym_task_ids(self, data_dir: Path) -> Sequence[str]:
        """AgentGym's WebArena item ``i`` is WebArena's ``config_files/<i>.json``: its
        ``task_id`` ``i``. Indices of task ids the directory lacks map to ``""``."""
        ids: dict[int, str] = {
            task.task_id: task_id for task_id, task in split_tasks(data_dir, "")["eval"].items()
        }
        return [ids.get(index, "") for index in range(max(ids, default=-1) + 1)]


def storage_state_path(data_dir: Path, storage_state: str) -> Path:
    """Where a task's ``storage_state`` (``"./.auth/shopping_state.json"``, relative to the
    WebArena checkout) lies."""
    root = data_dir.resolve()
    if not (root / "config_files").is_dir() and root.name == "config_files":
        root = root.parent
    return root / storage_state
