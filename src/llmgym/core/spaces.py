"""llmgym's text space: a :class:`gymnasium.spaces.Text` over :data:`~llmgym.core.text.CHARSET`
that copies cheaply and works in gymnasium's shared memory.

gymnasium's own shared memory for ``Text`` spaces is read once, when an ``AsyncVectorEnv`` is
built, into a tuple of strings that never changes: every observation of an async vector
environment would be that first read (all newlines). :class:`TextSpace` registers its own
handlers for :func:`~gymnasium.vector.utils.create_shared_memory`,
:func:`~gymnasium.vector.utils.read_from_shared_memory` and
:func:`~gymnasium.vector.utils.write_to_shared_memory`: each text is stored as its length and
its code points, and the vector environment's observations are a live view of them
(:class:`SharedTexts`), which ``copy.deepcopy`` (the vector environment's default ``copy=True``)
turns into a tuple of strings, as a ``SyncVectorEnv`` returns.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
from collections.abc import Iterator, Sequence
from multiprocessing.context import BaseContext
from types import ModuleType
from typing import Any, overload

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

from llmgym.core.cache import bounded_cache
from llmgym.core.text import CHARSET

__all__ = ["SharedTextMemory", "SharedTexts", "TextSpace", "text_space"]

_CHARSET_TABLES = ("_char_set", "_char_list", "_char_index", "_char_str")
"""The attributes gymnasium's ``Text`` derives from its charset."""


class TextSpace(spaces.Text):
    """A :class:`gymnasium.spaces.Text` over :data:`~llmgym.core.text.CHARSET` (short repr).

    Pickling and copying leave out the character tables (about 70 KB for llmgym's charset),
    which the copy shares with every other space of the same charset.
    """

    def __repr__(self) -> str:
        return f"Text({self.min_length}, {self.max_length}, charset=llmgym.core.CHARSET)"

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in _CHARSET_TABLES}
        charset = "".join(self._char_list)
        state["charset"] = None if charset == CHARSET else charset
        return state

    def __setstate__(self, state: Any) -> None:
        state = dict(state)
        charset = state.pop("charset", None)
        super().__setstate__(state)
        self.__dict__.update(_charset_tables(CHARSET if charset is None else charset))


def text_space(max_length: int, min_length: int = 0) -> spaces.Text:
    """A :class:`gymnasium.spaces.Text` over llmgym's wide :data:`~llmgym.core.text.CHARSET`."""
    return TextSpace(max_length=max_length, min_length=min_length, charset=CHARSET)


@bounded_cache(8)
def _charset_tables(charset: str) -> dict[str, Any]:
    probe = spaces.Text(max_length=1, min_length=0, charset=charset)
    return {name: getattr(probe, name) for name in _CHARSET_TABLES}


# ------------------------------------------------------------------------------ shared memory
class SharedTextMemory:
    """Shared memory for the texts of ``n`` environments: per environment a row of
    ``max_length + 1`` 32-bit integers, the text's length then its code points.

    Pickling it (as a spawned worker's argument) imports llmgym, so the worker knows the
    ``llmgym/...`` ids before it makes its environment.
    """

    def __init__(self, n: int, max_length: int, ctx: BaseContext | ModuleType = mp) -> None:
        self.n = n
        self.max_length = max_length
        self.buffer = ctx.RawArray(ctypes.c_int32, n * (max_length + 1))

    def rows(self) -> np.ndarray:
        """The ``(n, max_length + 1)`` array over the shared buffer (not a copy)."""
        flat = np.frombuffer(memoryview(self.buffer), dtype=np.int32)
        return flat.reshape(self.n, self.max_length + 1)

    def write(self, index: int, text: str) -> None:
        """Store ``text`` as environment ``index``'s text."""
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<i4")
        if len(codes) > self.max_length:
            raise ValueError(
                f"a text of {len(codes)} characters does not fit the space's "
                f"max_length={self.max_length}"
            )
        row = self.rows()[index]
        row[0] = len(codes)
        row[1 : 1 + len(codes)] = codes

    def read(self, index: int) -> str:
        """Environment ``index``'s text."""
        row = self.rows()[index]
        codes = row[1 : 1 + int(row[0])].astype("<i4", copy=False)
        return codes.tobytes().decode("utf-32-le", "surrogatepass")


class SharedTexts(Sequence[str]):
    """The current texts of a :class:`SharedTextMemory` (each read when indexed), what an
    ``AsyncVectorEnv`` keeps as its observations. ``copy.copy``, ``copy.deepcopy`` and pickling
    give a tuple of the texts; it equals a tuple of the same texts."""

    def __init__(self, memory: SharedTextMemory) -> None:
        self._memory = memory

    def __len__(self) -> int:
        return self._memory.n

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self._memory.read(i) for i in range(self._memory.n)[index])
        if not -self._memory.n <= index < self._memory.n:
            raise IndexError(f"index {index} is out of range for {self._memory.n} texts")
        return self._memory.read(index % self._memory.n)

    def __iter__(self) -> Iterator[str]:
        return (self._memory.read(i) for i in range(self._memory.n))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, SharedTexts)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __copy__(self) -> tuple[str, ...]:
        return tuple(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))


@create_shared_memory.register(TextSpace)
def _create_text_memory(
    space: TextSpace, n: int = 1, ctx: BaseContext | ModuleType = mp
) -> SharedTextMemory:
    return SharedTextMemory(n, space.max_length, ctx)


@read_from_shared_memory.register(TextSpace)
def _read_text_memory(space: TextSpace, shared_memory: SharedTextMemory, n: int = 1) -> SharedTexts:
    return SharedTexts(shared_memory)


@write_to_shared_memory.register(TextSpace)
def _write_text_memory(
    space: TextSpace, index: int, value: str, shared_memory: SharedTextMemory
) -> None:
    shared_memory.write(index, value)
