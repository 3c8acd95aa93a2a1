"""The server process's memory: what it holds (:func:`resident_mb`) and giving freed memory
back to the system.

glibc's allocator keeps memory that Python frees for reuse, in one arena per thread that
allocated it (up to eight per core): after a burst of sessions on the server's worker threads,
the process would keep its peak size. :func:`limit_malloc_arenas` caps the arenas when the
server starts and :func:`trim_free_memory` returns free pages after sessions close (the store
calls it, at most once a second). Both do nothing where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from typing import Any

__all__ = ["MALLOC_ARENAS", "limit_malloc_arenas", "resident_mb", "trim_free_memory"]

MALLOC_ARENAS = 4
"""The most malloc arenas the server's threads share (glibc's ``M_ARENA_MAX``)."""

_M_ARENA_MAX = -8


@functools.cache
def _glibc() -> Any:
    """The C library, if it is glibc (it has ``malloc_trim``); else ``None``."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas (call it before the worker threads start); whether it
    could."""
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(_M_ARENA_MAX, arenas))


def trim_free_memory() -> bool:
    """Give free heap memory back to the system (glibc's ``malloc_trim``); whether any
    was."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))


def resident_mb(pid: int | None = None) -> float | None:
    """The resident memory of process ``pid`` (default: this one) in MiB, from ``/proc``
    (``None`` where there is none)."""
    try:
        with open(f"/proc/{pid or os.getpid()}/statm") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
