"""numba's ``njit`` for the compiled Crafter rules, with the compiled code cached under
llmgym's cache folder (``cache_dir("numba")``), not beside the sources.

numba's ``cache=True`` writes next to the module unless ``NUMBA_CACHE_DIR`` is set; a library
must not write into its install (or a user's clone), and must not change numba's setting for the
user's own code either, so the folder is set only while each function is decorated (numba fixes
a function's cache location then). A user's ``NUMBA_CACHE_DIR`` wins. Where no cache folder can
be written (a read-only home), the rules are compiled in each process instead.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TypeVar

from llmgym.core import optional_import
from llmgym.core.cache import cache_dir

numba = optional_import("numba", extra="crafter")

__all__ = ["njit"]

_Function = TypeVar("_Function", bound=Callable[..., object])


@functools.cache
def _cache_folder() -> str | None:
    """The folder numba caches in (the user's ``NUMBA_CACHE_DIR``, else llmgym's), or None
    where it cannot be written."""
    folder = numba.config.CACHE_DIR or str(cache_dir("numba"))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def njit(function: _Function) -> _Function:
    """``numba.njit(cache=True)(function)``, cached under llmgym's cache folder."""
    folder = _cache_folder()
    if folder is None:
        return numba.njit(function)
    user_folder = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = folder
    try:
        return numba.njit(cache=True)(function)
    finally:
        numba.config.CACHE_DIR = user_folder
