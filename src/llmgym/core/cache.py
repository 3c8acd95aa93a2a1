"""Where llmgym keeps data it builds once (search indexes, compiled games): never in the repo.

Every cache is bounded, so that no sequence of configs or task ids (a client of ``llmgym
serve`` picks both) makes a process or its cache folder grow without end: objects kept in memory
go in an :class:`LruCache` or a function memoised with :func:`bounded_cache`, files kept on disk
are pruned to a number of entries with :func:`prune_files` (and marked as used with
:func:`touch`). The caches in memory are counted: :func:`cache_report` lists what each holds.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import platformdirs

__all__ = ["LruCache", "bounded_cache", "cache_dir", "cache_report", "prune_files", "touch"]

_Key = TypeVar("_Key", bound=Hashable)
_Value = TypeVar("_Value")
_Function = TypeVar("_Function", bound=Callable[..., Any])

_COUNTED: dict[str, Callable[[], tuple[int, int]]] = {}
"""The caches :func:`cache_report` lists, by name: (entries held, the most it holds)."""


def cache_report() -> dict[str, dict[str, int]]:
    """Every counted cache of this process (the named :class:`LruCache` objects and the
    :func:`bounded_cache` functions of the modules imported so far), by name: ``{"entries",
    "maxsize"}``."""
    report = {}
    for name, sizes in sorted(_COUNTED.items()):
        entries, maxsize = sizes()
        report[name] = {"entries": entries, "maxsize": maxsize}
    return report


def bounded_cache(maxsize: int) -> Callable[[_Function], _Function]:
    """``functools.lru_cache(maxsize=maxsize)`` for a function of values a client may choose
    (a config's fields, a seed), counted in :func:`cache_report` under the function's
    qualified name. The function must be deterministic: an evicted value is computed again,
    the same."""
    if maxsize < 1:
        raise ValueError(f"maxsize must be at least 1, got {maxsize}")

    def decorate(function: _Function) -> _Function:
        cached = functools.lru_cache(maxsize=maxsize)(function)
        name = f"{function.__module__}.{function.__qualname__}"
        _COUNTED[name] = lambda: (cached.cache_info().currsize, maxsize)
        return cached  # type: ignore[return-value]

    return decorate


def cache_dir(*parts: str) -> Path:
    """``$LLMGYM_CACHE_DIR`` (default: ``platformdirs.user_cache_dir("llmgym")``) joined with
    ``parts``. The folder is not created."""
    override = os.environ.get("LLMGYM_CACHE_DIR")
    root = Path(override) if override else Path(platformdirs.user_cache_dir("llmgym"))
    return root.joinpath(*parts)


class LruCache(Generic[_Key, _Value]):
    """At most ``maxsize`` values by key; a new one evicts the least recently used. Thread-safe.

    Evicted values are only forgotten: whoever still holds one keeps using it, and the next
    :meth:`get_or_create` of its key builds it again (from a disk cache, typically). A cache
    given a ``name`` is counted in :func:`cache_report`.
    """

    def __init__(self, maxsize: int, name: str | None = None) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self._values: OrderedDict[_Key, _Value] = OrderedDict()
        self._lock = threading.Lock()
        if name is not None:
            _COUNTED[name] = lambda: (len(self), self.maxsize)

    def get_or_create(self, key: _Key, create: Callable[[], _Value]) -> _Value:
        """The value of ``key``, made by ``create()`` if it is not kept (under the cache's lock,
        so two threads never build the same value)."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
            value = self._values[key] = create()
            while len(self._values) > self.maxsize:
                self._values.popitem(last=False)
            return value

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._values

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._values.clear()


def touch(path: Path) -> None:
    """Mark a cached file as just used (its modification time), for :func:`prune_files`.

    A cache folder that cannot be written (read-only, shared) is left as it is."""
    with contextlib.suppress(OSError):
        os.utime(path)


def prune_files(
    folder: Path, pattern: str, keep: int, *, companions: Sequence[str] = ()
) -> list[Path]:
    """Delete the least recently used files matching ``pattern`` under ``folder`` (recursively)
    beyond the ``keep`` most recent, by modification time (see :func:`touch`), with the files
    beside each that share its stem and end in one of ``companions`` (``".json"``).

    Files that vanish or cannot be deleted meanwhile (another process pruning) are skipped.
    Returns the files deleted."""
    dated: list[tuple[float, Path]] = []
    for path in folder.rglob(pattern):
        with contextlib.suppress(OSError):
            dated.append((path.stat().st_mtime, path))
    dated.sort(reverse=True)
    deleted = []
    for _, path in dated[keep:]:
        try:
            path.unlink()
        except OSError:
            continue
        deleted.append(path)
        for suffix in companions:
            with contextlib.suppress(OSError):
                path.with_suffix(suffix).unlink()
    return deleted
