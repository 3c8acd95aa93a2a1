"""The environment table: the one place that lists every llmgym environment.

The rows are data, ``envs/data/environments.json``: one per gymnasium id, with the entry point,
the turn limit, the one-line summary and, where one is needed, the pip extra, the modules it
provides, default constructor arguments and (for the single-agent view of a multi-agent game)
the game's name. Importing this module imports no environment; ``gymnasium.make`` loads each one
on demand.
"""

from __future__ import annotations

import json
from importlib import resources

from llmgym.core.registry import EnvEntry

__all__ = ["ENVIRONMENTS", "game_entries", "get_entry"]


def _load_table() -> tuple[EnvEntry, ...]:
    text = (resources.files("llmgym.envs") / "data" / "environments.json").read_text("utf-8")
    rows = json.loads(text)["environments"]
    return tuple(EnvEntry(**{**row, "requires": tuple(row.get("requires", ()))}) for row in rows)


ENVIRONMENTS: tuple[EnvEntry, ...] = _load_table()
"""Every environment, in the order ``llmgym list`` and the docs show them."""


def get_entry(env_id: str) -> EnvEntry:
    """The table row of ``env_id`` (accepts ``"llmgym/Wordle-v0"`` or ``"Wordle-v0"``)."""
    wanted = env_id if env_id.startswith("llmgym/") else f"llmgym/{env_id}"
    for entry in ENVIRONMENTS:
        if entry.id == wanted:
            return entry
    known = ", ".join(entry.id for entry in ENVIRONMENTS)
    raise KeyError(f"unknown environment {env_id!r}; known: {known}")


def game_entries() -> dict[str, EnvEntry]:
    """The multi-agent games, by game name (``"connect_four"``): the rows with a ``game``."""
    return {entry.game: entry for entry in ENVIRONMENTS if entry.game is not None}
