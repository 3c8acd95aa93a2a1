"""Registration of environments with gymnasium, and optional (extra) dependencies."""

from __future__ import annotations

import importlib
import importlib.util
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import gymnasium as gym

from llmgym.errors import MissingDependencyError

__all__ = [
    "EnvEntry",
    "install_command",
    "optional_import",
    "register_entries",
]


def install_command(extra: str | None = None) -> str:
    """The pip command that installs llmgym with ``extra``, run in a clone of its repository
    (the ``llmgym`` name on PyPI belongs to an unrelated package)."""
    return f"pip install -e '.[{extra}]'" if extra else "pip install -e ."


def optional_import(module: str, extra: str, *, package: str | None = None) -> ModuleType:
    """Import ``module``, or raise :class:`MissingDependencyError` naming the pip command
    (:func:`install_command`) that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        what = package or module.split(".")[0]
        raise MissingDependencyError(
            f"{what} is not installed; it is needed by this part of llmgym. "
            f"Install it from your llmgym clone with: {install_command(extra)}"
        ) from error


@dataclass(frozen=True)
class EnvEntry:
    """One row of the environment table.

    Attributes:
        id: The gymnasium id: ``"llmgym/<Name>-v<N>"`` for llmgym's own environments, any
            gymnasium id (``"my-envs/Anagram-v0"``) for those of other packages.
        entry_point: ``"module:Class"``.
        max_episode_steps: Turn limit applied by gymnasium's ``TimeLimit`` (``None``: none).
        summary: One line for ``llmgym list`` and the docs.
        extra: The pip extra this environment needs (``None``: only the core).
        requires: Modules that the extra provides; all importable means available.
        kwargs: Default keyword arguments for the constructor.
        game: For the single-agent view of a multi-agent game, the game's name
            (``"connect_four"``, as in ``llmgym match connect_four``); its module holds the
            PettingZoo ``env()``, ``raw_env`` and ``parallel_env``.
        isolated: The environment runs a native engine that may ``exit()``, crash or hang the
            interpreter (TextWorld's, ScienceWorld's): ``llmgym serve`` runs each session of it
            in a child process of its own.
        file_fields: Config fields that name a file on the machine that runs the environment
            (``game_file``): ``llmgym serve`` refuses them unless its operator allows a
            directory.
        memory_mb: What one instance costs in memory, in MiB, where it is large (a native
            engine's process: ScienceWorld's JVM); ``llmgym serve`` admits sessions within its
            memory budget by it (``None``: small, the server's default).
    """

    id: str
    entry_point: str
    max_episode_steps: int | None
    summary: str
    extra: str | None = None
    requires: tuple[str, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    game: str | None = None
    isolated: bool = False
    file_fields: tuple[str, ...] = ()
    memory_mb: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "file_fields", tuple(self.file_fields))

    @property
    def name(self) -> str:
        """``"Wordle"`` for ``"llmgym/Wordle-v0"`` (the id without namespace and version)."""
        return re.sub(r"-v[0-9]+$", "", self.id.rsplit("/", 1)[-1])

    @property
    def available(self) -> bool:
        """Whether every module the environment's extra provides can be imported."""
        return all(importlib.util.find_spec(module) is not None for module in self.requires)

    @property
    def install_hint(self) -> str:
        """The pip command, run in a clone of llmgym, that makes this environment available."""
        return install_command(self.extra)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready description (for ``llmgym list --json``)."""
        return {
            "id": self.id,
            "entry_point": self.entry_point,
            "max_episode_steps": self.max_episode_steps,
            "extra": self.extra,
            "game": self.game,
            "available": self.available,
            "summary": self.summary,
        }


def register_entries(entries: tuple[EnvEntry, ...]) -> None:
    """Register every entry with gymnasium (idempotent). Unavailable ones are registered too:
    making them raises :class:`MissingDependencyError` with the pip command."""
    for entry in entries:
        if entry.id in gym.registry:
            continue
        gym.register(
            id=entry.id,
            entry_point=entry.entry_point,
            max_episode_steps=entry.max_episode_steps,
            kwargs=dict(entry.kwargs),
            # Every environment passes the full check_env in the conformance suite; gymnasium's
            # passive checker adds nothing and (gymnasium 1.4) breaks every step after a reset
            # that raised. gymnasium.make(..., disable_env_checker=False) turns it back on.
            disable_env_checker=True,
        )
