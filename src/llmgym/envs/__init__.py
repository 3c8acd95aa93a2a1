"""The environment table: the one place that lists every llmgym environment.

The rows are data, ``envs/data/environments.json``: one per gymnasium id, with the entry point,
the turn limit, the one-line summary and, where one is needed, the pip extra, the modules it
provides, default constructor arguments and (for the single-agent view of a multi-agent game)
the game's name. Importing this module imports no environment; ``gymnasium.make`` loads each one
on demand.

Installed packages add rows of their own through the entry-point group ``llmgym.envs``
(:func:`plugin_entries`), and :func:`load_entry` makes an entry of a ``"module:Class"`` path, so
the command line takes user environments too. :func:`get_entry` finds a row by its id, forgiving
case, the ``llmgym/`` namespace and the version (``wordle``, ``Wordle-v0``).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import json
import os
import re
import sys
import warnings
from collections.abc import Iterable, Mapping
from importlib import metadata, resources
from types import ModuleType
from typing import Any

import gymnasium as gym

from llmgym.core.env import TextEnv
from llmgym.core.registry import EnvEntry, register_entries
from llmgym.errors import PluginWarning

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENVIRONMENTS",
    "all_entries",
    "entries_from",
    "game_entries",
    "get_entry",
    "load_entry",
    "plugin_entries",
]

ENTRY_POINT_GROUP = "llmgym.envs"
"""The entry-point group through which an installed package registers environments: each entry
point names an :class:`EnvEntry`, a row as a mapping of its fields, a list of them, or a function
returning them."""


def _load_table() -> tuple[EnvEntry, ...]:
    text = (resources.files("llmgym.envs") / "data" / "environments.json").read_text("utf-8")
    rows = json.loads(text)["environments"]
    return tuple(entries_from(rows))


def entries_from(rows: Any) -> list[EnvEntry]:
    """The entries of what an entry point names: an :class:`EnvEntry`, a mapping of its fields
    (a row of ``environments.json``), an iterable of those, or a function returning them."""
    if isinstance(rows, EnvEntry):
        return [rows]
    if isinstance(rows, Mapping):
        return [EnvEntry(**{**rows, "requires": tuple(rows.get("requires", ()))})]
    if callable(rows):
        return entries_from(rows())
    if isinstance(rows, Iterable) and not isinstance(rows, str | bytes):
        return [entry for row in rows for entry in entries_from(row)]
    raise TypeError(f"expected EnvEntry rows, got {type(rows).__name__}")


ENVIRONMENTS: tuple[EnvEntry, ...] = _load_table()
"""Every environment of llmgym itself, in the order ``llmgym list`` and the docs show them."""

_LOADED: dict[str, EnvEntry] = {}
"""Entries made by :func:`load_entry`, by their id and by the path they were loaded from."""


@functools.cache
def plugin_entries() -> tuple[EnvEntry, ...]:
    """The environments installed packages register under the ``llmgym.envs`` entry-point
    group, registered with gymnasium on the first call (``import llmgym`` makes it). An entry
    point that fails to load, or names an id llmgym already has, is skipped with a
    :class:`PluginWarning`."""
    taken = {entry.id for entry in ENVIRONMENTS}
    found: list[EnvEntry] = []
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            rows = entries_from(point.load())
        except Exception as error:  # a broken package must not break llmgym
            warnings.warn(
                f"skipped the environments of entry point {point.name!r} ({point.value}): "
                f"{type(error).__name__}: {error}",
                PluginWarning,
                stacklevel=2,
            )
            continue
        for entry in rows:
            if entry.id in taken:
                warnings.warn(
                    f"entry point {point.name!r} ({point.value}) registers {entry.id}, which is "
                    "already taken; skipped",
                    PluginWarning,
                    stacklevel=2,
                )
                continue
            taken.add(entry.id)
            found.append(entry)
    register_entries(tuple(found))
    return tuple(found)


def all_entries() -> tuple[EnvEntry, ...]:
    """llmgym's environments, then those of installed packages, then those loaded by
    :func:`load_entry`."""
    loaded = tuple({entry.id: entry for entry in _LOADED.values()}.values())
    return ENVIRONMENTS + plugin_entries() + loaded


def _version(env_id: str) -> int:
    found = re.search(r"-v(\d+)$", env_id)
    return int(found.group(1)) if found else -1


def _aliases(entry: EnvEntry) -> set[str]:
    """The lower-case spellings that name ``entry``: with or without the namespace and the
    version (``llmgym/wordle-v0``, ``llmgym/wordle``, ``wordle-v0``, ``wordle``)."""
    full = entry.id.lower()
    short = full.rsplit("/", 1)[-1]
    return {full, short, re.sub(r"-v\d+$", "", full), re.sub(r"-v\d+$", "", short)}


def get_entry(env_id: str) -> EnvEntry:
    """The table row of ``env_id``: an exact id (``"llmgym/Wordle-v0"``), or the same in any
    case, without the ``llmgym/`` namespace or without the version (``"Wordle-v0"``,
    ``"wordle"``: the latest version). Rows of installed packages and of :func:`load_entry`
    count too; nothing is imported.

    Raises:
        KeyError: No such environment (the message suggests close ids), or a short name that
            fits environments of several namespaces.
    """
    entries = all_entries()
    for entry in entries:
        if entry.id == env_id:
            return entry
    if env_id in _LOADED:
        return _LOADED[env_id]
    wanted = env_id.strip().lower()
    matches = [entry for entry in entries if wanted in _aliases(entry)]
    if not matches:
        raise KeyError(_unknown(env_id, entries))
    unversioned = {re.sub(r"-v\d+$", "", entry.id) for entry in matches}
    if len(unversioned) > 1:
        ids = ", ".join(entry.id for entry in matches)
        raise KeyError(f"{env_id!r} could be any of {ids}; name one")
    return max(matches, key=lambda entry: _version(entry.id))


def _unknown(env_id: str, entries: tuple[EnvEntry, ...]) -> str:
    """The message for an unknown id: the closest ids, or every id when none is close."""
    wanted = env_id.strip().lower()
    likeness = {
        entry.id: max(difflib.SequenceMatcher(None, wanted, a).ratio() for a in _aliases(entry))
        for entry in entries
    }
    best = max(likeness.values(), default=0.0)
    # only the ids about as close as the closest: a typo of one id, not every similar name
    suggestions = sorted(
        (i for i, score in likeness.items() if score >= max(0.6, best - 0.1)),
        key=lambda i: -likeness[i],
    )[:3]
    if suggestions:
        return f"unknown environment {env_id!r}; did you mean {' or '.join(suggestions)}?"
    return f"unknown environment {env_id!r}; known: {', '.join(entry.id for entry in entries)}"


def load_entry(path: str) -> EnvEntry:
    """The entry of a user environment named by ``"module:Class"`` (a :class:`~llmgym.TextEnv`
    subclass) or by gymnasium's ``"module:ID"`` (an id that importing the module registers).

    Imports the module (from ``sys.path`` or the current folder) and registers the class with
    gymnasium under the id it already has, else under ``"module.Class"``; afterwards
    :func:`get_entry` knows the entry by that id and by ``path``. For ``llmgym`` commands:
    ``llmgym eval my_pkg.envs:Anagram``.

    Raises:
        ValueError: ``path`` is not of that form, the module cannot be found, or the attribute
            is neither a registered id nor a ``TextEnv`` subclass.
    """
    if path in _LOADED:
        return _LOADED[path]
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"{path!r} is not of the form 'module:Class'")
    try:
        module = _import_user_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is None or not f"{module_name}.".startswith(f"{error.name}."):
            # the module exists and one of its own imports is missing
            raise ValueError(
                f"cannot load environment {path!r}: importing {module_name} failed: {error}"
            ) from error
        raise ValueError(
            f"cannot load environment {path!r}: no module named {module_name!r} in the "
            f"current folder ({os.getcwd()}) or on PYTHONPATH (is its package installed?)"
        ) from None
    if attribute in gym.registry:
        entry = _entry_of_spec(gym.registry[attribute])
    else:
        target = getattr(module, attribute, None)
        if not (isinstance(target, type) and issubclass(target, TextEnv)):
            raise ValueError(
                f"cannot load environment {path!r}: {module_name}.{attribute} is not a "
                "llmgym.TextEnv subclass nor an id that the module registers with gymnasium"
            )
        entry = _entry_of_class(target, module_name, attribute)
    register_entries((entry,))
    _LOADED[path] = _LOADED[entry.id] = entry
    return entry


def _import_user_module(name: str) -> ModuleType:
    """Import a user's module from ``sys.path`` or, as ``python -m`` and ``python -c`` would,
    the current folder: an installed console script (``llmgym``) has its own folder on
    ``sys.path`` instead, and ``PYTHONSAFEPATH`` leaves the current folder out."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        here = os.getcwd()
        searched = {os.path.abspath(entry or os.curdir) for entry in sys.path}
        top = name.partition(".")[0]
        if error.name != top or here in searched:
            raise
        sys.path.append(here)  # kept: gymnasium imports the entry point again on make
        return importlib.import_module(name)


def _entry_of_class(env_class: type[TextEnv], module_name: str, attribute: str) -> EnvEntry:
    """The entry of an environment class: the gymnasium id it is registered under, if any."""
    entry_point = f"{module_name}:{attribute}"
    for spec in gym.registry.values():
        if spec.entry_point in (env_class, entry_point):
            return _entry_of_spec(spec)
    return EnvEntry(
        id=f"{module_name}.{attribute}",
        entry_point=entry_point,
        max_episode_steps=None,
        summary=_summary(env_class),
    )


def _entry_of_spec(spec: gym.envs.registration.EnvSpec) -> EnvEntry:
    entry_point = spec.entry_point
    if isinstance(entry_point, type):
        env_class = entry_point
        entry_point = f"{entry_point.__module__}:{entry_point.__qualname__}"
    else:
        env_class = gym.envs.registration.load_env_creator(str(entry_point))
    return EnvEntry(
        id=spec.id,
        entry_point=str(entry_point),
        max_episode_steps=spec.max_episode_steps,
        summary=_summary(env_class),
        kwargs=dict(spec.kwargs),
    )


def _summary(env_class: Any) -> str:
    lines = (getattr(env_class, "__doc__", None) or "").strip().splitlines()
    return lines[0] if lines else getattr(env_class, "__name__", "")


def game_entries() -> dict[str, EnvEntry]:
    """The multi-agent games, by game name (``"connect_four"``): the rows with a ``game``."""
    return {entry.game: entry for entry in ENVIRONMENTS if entry.game is not None}
