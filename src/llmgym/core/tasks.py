"""Task identities, splits and the portable random generator that builds task instances.

A task id is a string such as ``"eval/00042"``. The instance it names is a pure function of the
id, the environment's name and its config, built from :class:`TaskRng` — a generator whose
stream is defined by this file alone (SHA-256 seeding, SplitMix64 output), so the same id gives
the same instance on any machine, operating system, Python or NumPy version.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Collection, Iterator, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from llmgym.core.config import ConfigT

__all__ = [
    "SPLITS",
    "Task",
    "TaskIdRange",
    "TaskRng",
    "check_task_id",
    "nearest_task_id",
    "split_of",
]

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
    """The ids ``"<split>/00000"`` .. ``"<split>/<n-1>"`` as a lazy, immutable sequence.

    Each index has one spelling: ``"eval/00001"`` is in the range, ``"eval/1"`` is not."""

    __slots__ = ("_length", "split", "width")

    def __init__(self, split: str, count: int, width: int = 5) -> None:
        self.split = split
        self._length = count
        self.width = width

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return f"{self.split}/{index:0{self.width}d}"

    def __iter__(self) -> Iterator[str]:
        return (f"{self.split}/{i:0{self.width}d}" for i in range(self._length))

    def __contains__(self, task_id: object) -> bool:
        return self.index_of(task_id) is not None

    def index_of(self, task_id: object) -> int | None:
        """The integer index of ``task_id`` in this range, or ``None`` (also for another
        spelling of a listed id, such as ``"eval/1"`` for ``"eval/00001"``)."""
        if not isinstance(task_id, str):
            return None
        split, _, number = task_id.partition("/")
        if split != self.split or not (number.isascii() and number.isdigit()):
            return None
        index = int(number)
        if index >= self._length or number != f"{index:0{self.width}d}":
            return None
        return index

    def __repr__(self) -> str:
        return f"TaskIdRange({self.split!r}, {self._length})"


_LOOSE_NUMBER = re.compile(r"\s*\+?([0-9]+)(?:\.0*)?\s*")
"""A task number as people mistype it: ``7``, ``+7``, ``0000007``, ``7.0``, with spaces."""
_NEAREST_SCAN = 2_000
"""How many ids :func:`nearest_task_id` compares by spelling, at most (id sets can be large)."""


def nearest_task_id(task_id: str, ids: Sequence[str]) -> str | None:
    """The listed id closest to ``task_id``, for an error message (``None`` if ``ids`` is empty).

    A number after the split (``"eval/7"``, ``"eval/0000007"``) points at the listed id of that
    number, or the last one past the end; anything else gets the id closest in spelling."""
    if len(ids) == 0:
        return None
    number = _LOOSE_NUMBER.fullmatch(task_id.rpartition("/")[2])
    if number is not None:
        index = min(int(number[1]), len(ids) - 1)
        if isinstance(ids, TaskIdRange):
            return ids[index]
        numbered = f"{task_id.partition('/')[0]}/{index:05d}"
        if numbered in ids:
            return numbered
    scanned = list(ids[:_NEAREST_SCAN])
    close = difflib.get_close_matches(task_id, scanned, n=1, cutoff=0.0)
    return close[0] if close else ids[0]


def check_task_id(
    task_id: object,
    split: str | None,
    ids_of: Callable[[str], Collection[str]],
    owner: str,
) -> str:
    """The split of ``task_id`` if ``ids_of(its split)`` holds it exactly (one spelling per
    instance), else a :class:`ValueError` that names the nearest valid id.

    ``split`` is the split the caller asked for (``None``: any); ``ids_of`` gives a split's ids
    (a sequence, or a set for fast membership); ``owner`` names the environment in the
    message."""
    if not isinstance(task_id, str):
        raise ValueError(
            f"reset options: task_id must be a string like 'eval/00042', got {task_id!r}"
        )
    task_split = task_id.split("/", 1)[0]
    if task_split not in SPLITS or task_id not in ids_of(task_split):
        guess = task_split.strip().lower()
        listed = ids_of(guess if guess in SPLITS else split or "train")
        nearest = nearest_task_id(
            task_id, listed if isinstance(listed, Sequence) else sorted(listed)
        )
        hint = f"; the nearest valid id is {nearest!r}" if nearest is not None else ""
        raise ValueError(
            f"reset options: task_id={task_id!r} is not a task of {owner} under this config"
            f"{hint}; see env.unwrapped.task_ids('train'|'eval')"
        )
    if split is not None and split != task_split:
        raise ValueError(
            f"reset options: task_id={task_id!r} belongs to split {task_split!r}, not {split!r}"
        )
    return task_split


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
