"""Task identities, splits and the portable random generator that builds task instances.

A task id is a string such as ``"eval/00042"``. The instance it names is a pure function of the
id, the environment's name and its config, built from :class:`TaskRng` — a generator whose
stream is defined by this file alone (SHA-256 seeding, SplitMix64 output), so the same id gives
the same instance on any machine, operating system, Python or NumPy version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from llmgym.core.config import ConfigT

__all__ = ["SPLITS", "Task", "TaskIdRange", "TaskRng", "split_of"]

SPLITS = ("train", "eval")
T = TypeVar("T")
_MASK64 = (1 << 64) - 1


class TaskRng:
    """A small, portable pseudo-random generator (SplitMix64) for building task instances.

    Seed it with any strings or integers; the stream depends only on their text::

        rng = TaskRng("maze", "eval/00042")
        rng.randint(0, 9), rng.choice(["a", "b"]), rng.random()
    """

    __slots__ = ("_state",)

    def __init__(self, *seed_parts: object) -> None:
        digest = hashlib.sha256("\x1f".join(str(p) for p in seed_parts).encode()).digest()
        self._state = int.from_bytes(digest[:8], "little")

    @classmethod
    def from_state(cls, state: int) -> TaskRng:
        """A generator started from a raw 64-bit state, without hashing: for hot paths that derive
        many streams themselves (e.g. one per simulated day)."""
        rng = cls.__new__(cls)
        rng._state = state & _MASK64
        return rng

    def next_u64(self) -> int:
        """The next 64-bit output."""
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK64
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def random(self) -> float:
        """A float in [0, 1)."""
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))

    def randbelow(self, n: int) -> int:
        """An int in [0, n), without modulo bias."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            value = self.next_u64()
            if value < limit:
                return value % n

    def randint(self, low: int, high: int) -> int:
        """An int in [low, high], both inclusive."""
        return low + self.randbelow(high - low + 1)

    def uniform(self, low: float, high: float) -> float:
        """A float in [low, high)."""
        return low + (high - low) * self.random()

    def choice(self, items: Sequence[T]) -> T:
        """One element of a non-empty sequence."""
        return items[self.randbelow(len(items))]

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """Shuffle in place (Fisher-Yates)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """``k`` distinct elements, in random order."""
        pool = list(items)
        if k > len(pool):
            raise ValueError(f"cannot sample {k} items from {len(pool)}")
        for i in range(k):
            j = i + self.randbelow(len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]

    def weighted_choice(self, items: Sequence[T], weights: Sequence[float]) -> T:
        """One element, drawn with probability proportional to ``weights``."""
        total = float(sum(weights))
        point = self.random() * total
        for item, weight in zip(items, weights, strict=True):
            point -= weight
            if point < 0:
                return item
        return items[-1]


def split_of(key: str, eval_fraction: float = 0.2) -> str:
    """Assign an instance to ``"train"`` or ``"eval"`` by a hash of its content.

    Generators that can produce the same instance from different seeds (small mazes, short
    recipes) use this to keep the splits disjoint by *content*, not only by id.
    """
    bucket = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    return "eval" if bucket / 2**64 < eval_fraction else "train"


class TaskIdRange(Sequence[str]):
    """The ids ``"<split>/00000"`` .. ``"<split>/<count-1>"`` as a lazy, immutable sequence;
    ``len(ids)`` is ``count`` (``ids.count(task_id)`` is :meth:`Sequence.count`)."""

    __slots__ = ("_count", "split", "width")

    def __init__(self, split: str, count: int, width: int = 5) -> None:
        self.split = split
        self._count = count
        self.width = width

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return f"{self.split}/{index:0{self.width}d}"

    def __iter__(self) -> Iterator[str]:
        return (f"{self.split}/{i:0{self.width}d}" for i in range(self._count))

    def __contains__(self, task_id: object) -> bool:
        return self.index_of(task_id) is not None

    def index_of(self, task_id: object) -> int | None:
        """The integer index of ``task_id`` in this range, or ``None``."""
        if not isinstance(task_id, str):
            return None
        split, _, number = task_id.partition("/")
        if split != self.split or not (number.isascii() and number.isdigit()):
            return None
        index = int(number)
        return index if index < self._count else None

    def __repr__(self) -> str:
        return f"TaskIdRange({self.split!r}, {self._count})"


@dataclass(frozen=True)
class Task(Generic[ConfigT]):
    """One task instance request: which task, from which split, under which config."""

    env_name: str
    task_id: str
    split: str
    config: ConfigT

    def rng(self, *extra: object) -> TaskRng:
        """The task's own generator; ``extra`` derives independent streams for sub-parts."""
        return TaskRng(self.env_name, self.task_id, *extra)

    @property
    def index(self) -> int:
        """The number after the split in an id like ``"eval/00042"`` (``-1`` if none)."""
        _, _, number = self.task_id.rpartition("/")
        return int(number) if number.isascii() and number.isdigit() else -1
