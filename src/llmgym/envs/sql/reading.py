"""Reading a question back into its query, from the question's text and the schema alone.

The templates of :mod:`llmgym.envs.sql.templates`, instantiated with :class:`Hole` markers in
place of data values (:class:`HoleValues`), give a regular expression per phrasing and the query
it stands for; :func:`read_question` matches a text against them and fills the query with the
values the text states. It never sees the stored gold query or answer: the SQL oracle uses it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from llmgym.envs.sql.databases import DOMAINS, master_database
from llmgym.envs.sql.schema import Column, Domain, Table
from llmgym.envs.sql.templates import MARK, MONTHS, Hole, Templates, lit, loop_names

__all__ = ["read_question"]

T = TypeVar("T")
_NUMBER = "[0-9][0-9,]*(?:\\.[0-9]+)?"


def _number_literal(words: str) -> str:
    """``$1,200`` -> ``1200``, ``4.50`` -> ``4.5``: a number as a question writes it, in SQL."""
    digits = words.removeprefix("$").replace(",", "")
    return repr(float(digits) if "." in digits else int(digits))


def _month_literal(words: str) -> str:
    """``March 2023`` -> ``2023-03``."""
    month, year = words.split()
    return f"{year}-{MONTHS.index(month) + 1:02d}"


def _column_values(table: str, column: str) -> Callable[[sqlite3.Connection], list[Any]]:
    return lambda db: [v for (v,) in db.execute(f"SELECT DISTINCT {column} FROM {table}")]


class HoleValues:
    """Holes where templates take values from the database, to read questions back.

    ``sample`` keeps every item, so each family is instantiated once per table, column and
    relation, with a hole wherever a value would come from the data. ``holes`` lists them by
    number.
    """

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self.holes: list[Hole] = []
        self._made: dict[tuple[str, ...], Any] = {}

    def _hole(
        self,
        pattern: str,
        to_sql: Callable[[str], str] = str,
        known: Callable[[sqlite3.Connection], Iterable[Any]] | None = None,
    ) -> Hole:
        hole = Hole(len(self.holes), pattern, to_sql, known)
        self.holes.append(hole)
        return hole

    def _once(self, key: tuple[str, ...], make: Callable[[], T]) -> T:
        """The same holes each time a template asks for a column's values."""
        if key not in self._made:
            self._made[key] = make()
        made: T = self._made[key]
        return made

    def sample(self, items: Sequence[T], k: int, *seed: object) -> list[T]:
        return list(items)

    def categories(self, table: Table, column: Column) -> list[Hole]:
        def make() -> Hole:
            known = _column_values(table.name, column.name)
            if column.type == "INTEGER":
                return self._hole("-?[0-9]+", known=known)
            return self._hole(".+?", lit, known)

        return [self._once(("category", table.name, column.name), make)]

    def thresholds(self, table: Table, column: Column) -> tuple[Hole, Hole]:
        pattern = ("\\$" if column.unit == "$" else "-?") + _NUMBER
        return self._once(
            ("thresholds", table.name, column.name),
            lambda: (self._hole(pattern, _number_literal), self._hole(pattern, _number_literal)),
        )

    def periods(self, table: Table, column: Column) -> tuple[list[Hole], list[tuple[Hole, Hole]]]:
        def make() -> tuple[list[Hole], list[tuple[Hole, Hole]]]:
            month = self._hole(f"(?:{'|'.join(MONTHS)}) [0-9]{{4}}", _month_literal)
            return [self._hole("[0-9]{4}")], [(month, month)]

        return self._once(("periods", table.name, column.name), make)

    def names(self, table: Table, k: int, *seed: object) -> list[tuple[Hole, ...]]:
        def make() -> tuple[Hole, ...]:
            return tuple(self._hole(".+?", lit, _column_values(table.name, c)) for c in table.label)

        return [self._once(("names", table.name), make)]

    def group_size(self, table: Table, category: Column) -> Hole:
        return self._hole("[0-9]+")

    def bindings(self, loop: dict[str, Any]) -> list[dict[str, Hole]]:
        names = loop_names(loop)
        if "in" in loop:
            listed = loop["in"]
            return [{names[0]: self._hole(".+?", lit, lambda db: listed)}]
        query = loop["query"]

        def column(i: int) -> Callable[[sqlite3.Connection], list[Any]]:
            return lambda db: [row[i] for row in db.execute(query)]

        return [{name: self._hole(".+?", lit, column(i)) for i, name in enumerate(names)}]


@dataclass(frozen=True)
class _Reader:
    """A database's templates read backwards: per phrasing, a regular expression over
    questions and the query with holes that the expression's groups fill."""

    readings: tuple[tuple[re.Pattern[str], str], ...]
    holes: tuple[Hole, ...]


def _regex(phrasing: str, holes: Sequence[Hole]) -> re.Pattern[str]:
    parts: list[str] = []
    seen: set[int] = set()
    position = 0
    for mark in MARK.finditer(phrasing):
        number = int(mark[1])
        parts.append(re.escape(phrasing[position : mark.start()]))
        group = f"(?P=h{number})" if number in seen else f"(?P<h{number}>{holes[number].pattern})"
        parts.append(group)
        seen.add(number)
        position = mark.end()
    parts.append(re.escape(phrasing[position:]))
    return re.compile("".join(parts))


@cache
def _reader(database: str) -> _Reader:
    values = HoleValues(DOMAINS[database])
    pairs = {
        (phrasing, candidate.sql): None
        for candidate in Templates(DOMAINS[database], values).candidates()
        for phrasing in candidate.phrasings
    }
    readings = tuple((_regex(phrasing, values.holes), sql) for phrasing, sql in pairs)
    return _Reader(readings, tuple(values.holes))


def read_question(database: str, text: str) -> str | None:
    """The query for ``text``, a question about ``database`` in the templates' words, built
    from what the text says and the schema alone (``None`` if no template reads it).

    Every phrasing that matches ``text`` is a reading. Readings whose values name things in the
    data (a city, a customer) that are there come first ("customers living in Italy": the
    country, not a city); then the one whose values take the fewest characters (the most of
    the text is template); then the first template.
    """
    reader = _reader(database)
    db = master_database(database)
    best: tuple[tuple[bool, int], str, dict[int, str]] | None = None
    for regex, sql in reader.readings:
        match = regex.fullmatch(text)
        if match is None:
            continue
        said = {int(group[1:]): words for group, words in match.groupdict().items()}
        admitted = all(reader.holes[n].admits(words, db) for n, words in said.items())
        rank = (not admitted, sum(len(words) for words in said.values()))
        if best is None or rank < best[0]:
            best = (rank, sql, said)
    if best is None:
        return None
    _, sql, said = best
    return MARK.sub(lambda mark: reader.holes[int(mark[1])].to_sql(said[int(mark[1])]), sql)
