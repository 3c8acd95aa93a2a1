"""Helpers the sites' data generators share: word lists and random dates from a :class:`TaskRng`.

Dates are strings as the databases store them (``2023-05-17``, ``2023-05-17 14:03``); days run
1-28 so that every month has them.
"""

from __future__ import annotations

from llmgym.core.tasks import TaskRng

__all__ = ["random_date", "random_datetime", "wordlist"]


def wordlist(text: str) -> tuple[str, ...]:
    """The words of ``text`` (long word lists stay readable as one string)."""
    return tuple(text.split())


def random_date(rng: TaskRng, first_year: int, last_year: int) -> str:
    """A day between ``first_year`` and ``last_year`` (both included): ``2023-05-17``."""
    return f"{rng.randint(first_year, last_year)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def random_datetime(
    rng: TaskRng, first_year: int, last_year: int, hours: tuple[int, int] = (0, 23)
) -> str:
    """A minute of a :func:`random_date`, its hour within ``hours``: ``2023-05-17 14:03``."""
    day = random_date(rng, first_year, last_year)
    return f"{day} {rng.randint(*hours):02d}:{rng.randint(0, 59):02d}"
