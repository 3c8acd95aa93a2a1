"""The originals: a family's published dataset, read from a directory the user points at.

llmgym's environments play their own generated tasks by default (offline, unlimited,
reproducible). A user who has a family's original data — BIRD's databases, WebShop's products,
WebArena's task configs, a Search-R1 corpus, ALFWorld's games, Minecraft's recipes — plays the
original tasks through the same ids, wrappers, server and trainers by naming it in the config::

    gym.make("llmgym/SQL-v0", config={"source": "bird", "data_dir": "~/data/bird"})

Each family's reader is an :class:`OriginalSource`: it says where the data is published, its
license and the commands that fetch it (:mod:`llmgym.cli.data` runs them where a network
exists; nothing in llmgym downloads on its own), checks a directory in the published layout
(:meth:`OriginalSource.check`: counts per split, or a :class:`~llmgym.errors.DataError` naming
what is missing) and maps AgentGym's item indices onto task ids, so index ``i`` of
``/agentgym/<family>`` is AgentGym's item ``i``.

An environment that reads originals declares two config fields with :func:`source_knob` and
:func:`data_dir_knob`, and finds its directory with :func:`data_dir_of`.
"""

from __future__ import annotations

import difflib
import importlib
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from llmgym.core.config import knob
from llmgym.errors import ConfigError, DataError

__all__ = [
    "GENERATED",
    "DataError",
    "DataReport",
    "OriginalSource",
    "data_dir_knob",
    "data_dir_of",
    "get_source",
    "missing_data",
    "original_config",
    "source_knob",
    "source_names",
    "sources_envs",
    "sources_of_env",
]

GENERATED = "generated"
"""The ``source`` of llmgym's own generated tasks, every family's default."""

_SOURCES: dict[str, tuple[str, str]] = {
    "bird": ("llmgym/SQL-v0", "llmgym.envs.sql.bird:BirdSource"),
    "webshop": ("llmgym/WebShop-v0", "llmgym.envs.webshop.original:WebShopSource"),
    "webarena": ("llmgym/WebArena-v0", "llmgym.envs.webarena.original:WebArenaSource"),
    "search-r1": ("llmgym/SearchQA-v0", "llmgym.envs.searchqa.original:SearchR1Source"),
    "alfworld": ("llmgym/ALFWorld-v0", "llmgym.envs.alfworld:ALFWorldSource"),
    "textcraft": ("llmgym/TextCraft-v0", "llmgym.envs.textcraft_recipes:TextCraftSource"),
}
"""Every original source, by name: the environment that plays it and its reader as
``module:Class`` (imported when first asked for)."""


@dataclass(frozen=True)
class DataReport:
    """What :meth:`OriginalSource.check` found in a directory.

    Attributes:
        source: The source's name (``"bird"``).
        data_dir: The directory checked (absolute).
        splits: Tasks per llmgym split (``{"train": 9428, "eval": 1534}``).
        found: One line per thing found (``"dev/dev.json: 1,534 questions"``), for people.
    """

    source: str
    data_dir: str
    splits: Mapping[str, int]
    found: tuple[str, ...] = field(default_factory=tuple)

    def text(self) -> str:
        """The report as ``llmgym data check`` prints it."""
        counts = ", ".join(f"{count:,} {split}" for split, count in self.splits.items())
        lines = [f"{self.source} data in {self.data_dir}: {counts or 'no tasks'}"]
        lines += [f"  {line}" for line in self.found]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "source": self.source,
            "data_dir": self.data_dir,
            "splits": dict(self.splits),
            "found": list(self.found),
        }


class OriginalSource(ABC):
    """One family's original dataset: where it comes from and how a directory of it is read.

    A subclass sets the class attributes and implements :meth:`check`; its environment reads
    the data itself (with :func:`data_dir_of`), caching what it parses.
    """

    name: ClassVar[str]
    """The ``source`` config value and ``llmgym data`` family name (``"bird"``)."""
    env_id: ClassVar[str]
    """The environment that plays it (``"llmgym/SQL-v0"``)."""
    title: ClassVar[str]
    """The dataset's name for people (``"BIRD-SQL (train 9,428, dev 1,534)"``)."""
    homepage: ClassVar[str]
    """Where its authors publish it."""
    license: ClassVar[str]
    """Its license, as its authors state it."""
    fetch_commands: ClassVar[tuple[str, ...]]
    """Shell commands that fetch it into the current directory, on a machine with a network."""
    layout: ClassVar[str] = ""
    """The published layout, one path per line, for messages and docs."""
    env_var: ClassVar[str] = ""
    """An environment variable the original tools read for the directory (``ALFWORLD_DATA``),
    used where the config gives no ``data_dir``."""
    agentgym_family: ClassVar[str] = ""
    """The AgentGym family whose item indices :meth:`agentgym_task_ids` maps (``"sqlgym"``)."""
    agentgym_config: ClassVar[Mapping[str, Any]] = {}
    """Config fields under which :meth:`agentgym_task_ids` holds, where AgentGym's server plays
    the data otherwise than the environment's default (WebShop's synthetic goals)."""

    @abstractmethod
    def check(self, data_dir: Path) -> DataReport:
        """Read ``data_dir`` as the published layout and count its tasks per split.

        Raises:
            DataError: Something the layout needs is missing or unreadable; the message names
                the path and what was expected there.
        """

    def agentgym_task_ids(self, data_dir: Path) -> Sequence[str]:
        """The task id of each AgentGym item index of this data (position ``i`` is item
        ``i``): AgentGym's order of the original items. The default: eval then train, as
        llmgym numbers generated tasks."""
        report = self.check(data_dir)
        ids: list[str] = []
        for split in ("eval", "train"):
            ids += [f"{split}/{i:05d}" for i in range(report.splits.get(split, 0))]
        return ids


def source_names() -> tuple[str, ...]:
    """Every original source's name."""
    return tuple(_SOURCES)


def get_source(name: str) -> OriginalSource:
    """The source called ``name``.

    Raises:
        ValueError: No source has that name; the message lists them (and the nearest).
    """
    if name not in _SOURCES:
        near = difflib.get_close_matches(str(name), _SOURCES, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ValueError(f"no original data source {name!r}{hint} (sources: {', '.join(_SOURCES)})")
    module, _, attribute = _SOURCES[name][1].partition(":")
    source: OriginalSource = getattr(importlib.import_module(module), attribute)()
    return source


def sources_envs() -> dict[str, str]:
    """The environment each source plays, by source name (without importing its reader)."""
    return {name: env_id for name, (env_id, _) in _SOURCES.items()}


def sources_of_env(env_id: str) -> tuple[str, ...]:
    """The original sources an environment can play (``()`` for most)."""
    return tuple(name for name, (env, _) in _SOURCES.items() if env == env_id)


def original_config(env_id: str, data_dir: str | os.PathLike[str]) -> dict[str, str]:
    """The config fields that make ``env_id`` play its original dataset from ``data_dir``
    (``llmgym eval ID --data DIR``).

    Raises:
        ValueError: ``env_id`` reads no original data; the message names those that do.
    """
    names = sources_of_env(env_id)
    if not names:
        readers = sorted({env for env, _ in _SOURCES.values()})
        raise ValueError(f"{env_id} reads no original dataset; those that do: {', '.join(readers)}")
    return {"source": names[0], "data_dir": str(Path(data_dir).expanduser().resolve())}


def source_knob(*names: str, default: str = GENERATED) -> Any:
    """The ``source`` config field of an environment that reads originals: ``"generated"``
    (llmgym's tasks) or one of ``names``."""
    choices = (GENERATED, *names) if default == GENERATED else names
    return knob(
        default,
        choices=choices,
        doc="Where the tasks come from: 'generated' (llmgym's own, offline) or an original "
        "dataset read from data_dir (see docs/originals.md).",
    )


def data_dir_knob() -> Any:
    """The ``data_dir`` config field: the directory holding the original data."""
    return knob(
        "",
        doc="The directory holding the original data, in its published layout (only with an "
        "original source; '' where source is 'generated').",
    )


def data_dir_of(config: Any) -> Path | None:
    """The original data directory a config names (``None`` for generated tasks): its
    ``data_dir``, else the source's environment variable.

    Raises:
        ConfigError: An original source without a directory, a directory with the generated
            source, or a directory that does not exist; the message names the field.
    """
    source: str = config.source
    data_dir: str = config.data_dir
    owner = type(config).__name__
    if source == GENERATED:
        if data_dir:
            raise ConfigError(
                f"{owner}.data_dir",
                f"{data_dir!r} is given but source is 'generated'; set source to one of "
                f"{', '.join(repr(n) for n in source_names())} to read original data",
            )
        return None
    original = get_source(source)
    if not data_dir and original.env_var:
        data_dir = os.environ.get(original.env_var, "")
    if not data_dir:
        where = f" or set {original.env_var}" if original.env_var else ""
        raise ConfigError(
            f"{owner}.data_dir",
            f"source {source!r} reads its data from a directory: give data_dir{where} "
            f"(how to get the data: llmgym data fetch {source} DIR)",
        )
    path = Path(data_dir).expanduser()
    if not path.is_dir():
        raise ConfigError(f"{owner}.data_dir", f"{data_dir!r} is not a directory")
    return path.resolve()


def missing_data(path: Path, what: str, source: str) -> DataError:
    """A :class:`DataError` for a path the layout needs, naming the fetch command."""
    return DataError(
        f"{path}: {what} is missing (the {source} layout: llmgym data check {source} DIR "
        f"lists it; llmgym data fetch {source} DIR gets it)"
    )
