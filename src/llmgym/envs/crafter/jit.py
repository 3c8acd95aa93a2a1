"""numba's ``njit`` for the compiled Crafter rules, with the compiled code cached under
llmgym's cache folder (``cache_dir("numba")``), not beside the sources.

numba's ``cache=True`` writes next to the module unless ``NUMBA_CACHE_DIR`` is set; a library
must not write into its install (or a user's clone), and must not change numba's setting for the
user's own code either, so the folder is set only while each function is decorated (numba fixes
a function's cache location then). A user's ``NUMBA_CACHE_DIR`` wins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from llmgym.core import optional_import
from llmgym.core.cache import cache_dir

numba = optional_import("numba", extra="crafter")

__all__ = ["njit"]

_Function = TypeVar("_Function", bound=Callable[..., object])


def njit(function: _Function) -> _Function:
    """``numba.njit(cache=True)(function)``, cached under llmgym's cache folder."""
    user_folder = numba.config.CACHE_DIR
    if not user_folder:
        numba.config.CACHE_DIR = str(cache_dir("numba"))
    try:
        return numba.njit(cache=True)(function)
    finally:
        numba.config.CACHE_DIR = user_folder
