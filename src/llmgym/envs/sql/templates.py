"""Question templates: the families that turn a database's schema and values into candidate
questions, each with its phrasings and gold SQL.

Templates are instantiated over every table, column and relation of a database. The generic
families (counts, filters, rankings, groups, joins, subqueries) are code over the schema
metadata; each database's own families (revenue, routes, late loans) are data in
``envs/data/sql/questions.json``. The values they use come from a *values* object:
:class:`DataValues` draws them from the database (filter values that exist, thresholds between
real numbers) to generate questions; :mod:`llmgym.envs.sql.reading` puts :class:`Hole` markers
in their place to read questions back.
"""

from __future__ import annotations

import itertools
import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from llmgym.core import TaskRng
from llmgym.envs.sql.databases import master_database
from llmgym.envs.sql.schema import Column, Domain, Relation, Table, load_json

__all__ = [
    "MARK",
    "MONTHS",
    "Candidate",
    "DataValues",
    "Hole",
    "Templates",
    "Values",
    "lit",
    "loop_names",
]

PER_COLUMN = 6  # filter values drawn per column and template
T = TypeVar("T")


@dataclass(frozen=True)
class Candidate:
    """A question a template proposes: its phrasings (one is drawn), gold SQL, difficulty, the
    skills the SQL uses, whether it asks for an order, and evidence hints."""

    phrasings: tuple[str, ...]
    sql: str
    difficulty: str
    skills: tuple[str, ...]
    ordered: bool = False
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Filter:
    """A condition with its words: ``living in Porto`` / ``c.city = 'Porto'``."""

    text: str
    sql: str
    evidence: str = ""

    @property
    def skills(self) -> tuple[str, ...]:
        """``("filter",)``, plus ``"date"`` for a condition on a date."""
        return ("filter", "date") if "strftime(" in self.sql else ("filter",)


def lit(value: Any) -> str:
    """An SQL literal: ``'Porto'`` (quotes doubled), ``42``, ``9.99``."""
    if isinstance(value, Hole):
        return value  # the hole writes the literal of what fills it
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def _nice(value: float) -> float | int:
    """``value`` rounded to two significant digits, three from 1,000 up (``487.99`` -> ``490``,
    ``1994`` -> ``1990``)."""
    if value == 0:
        return 0
    digits = (1 if abs(value) < 1000 else 2) - math.floor(math.log10(abs(value)))
    rounded = round(value, digits)
    return int(rounded) if float(rounded).is_integer() else rounded


def _how_many(rows: str) -> tuple[str, str]:
    """The two ways to ask for a count: ``How many {rows} are there?``, ``Count the {rows}.``"""
    return f"How many {rows} are there?", f"Count the {rows}."


MONTHS = (  # noqa: SIM905
    "January February March April May June July August September October November December"
).split()


MARK = re.compile("\ue000([0-9]+)\ue001")


class Hole(str):
    """A value a question states, standing in for data while the templates are read backwards.

    As a string it is a marker that the phrasings and queries the templates build carry where
    the value goes; ``pattern`` is a regular expression for the words a question has there,
    ``to_sql`` turns those words into SQL, and ``known`` (if set) lists the values the words may
    name (a column's values in the database).
    """

    pattern: str
    to_sql: Callable[[str], str]
    known: Callable[[sqlite3.Connection], Iterable[Any]] | None
    _admitted: frozenset[str] | None

    def __new__(
        cls,
        number: int,
        pattern: str,
        to_sql: Callable[[str], str],
        known: Callable[[sqlite3.Connection], Iterable[Any]] | None,
    ) -> Hole:
        hole = super().__new__(cls, f"\ue000{number}\ue001")
        hole.pattern, hole.to_sql, hole.known, hole._admitted = pattern, to_sql, known, None
        return hole

    def __repr__(self) -> str:  # a threshold goes into SQL as its repr
        return str(self)

    def admits(self, words: str, db: sqlite3.Connection) -> bool:
        """Whether ``words`` can fill the hole: any words, or one of the known values."""
        if self.known is None:
            return True
        if self._admitted is None:
            self._admitted = frozenset(str(value) for value in self.known(db))
        return words in self._admitted


class Values(Protocol):
    """Where templates get the values they put in questions (see :class:`DataValues`)."""

    def sample(self, items: Sequence[T], k: int, *seed: object) -> list[T]: ...

    def categories(self, table: Table, column: Column) -> Sequence[Any]: ...

    def thresholds(self, table: Table, column: Column) -> tuple[Any, Any]: ...

    def periods(
        self, table: Table, column: Column
    ) -> tuple[Sequence[Any], Sequence[tuple[Any, Any]]]: ...

    def names(self, table: Table, k: int, *seed: object) -> Sequence[tuple[Any, ...]]: ...

    def group_size(self, table: Table, category: Column) -> Any: ...

    def bindings(self, loop: dict[str, Any]) -> Sequence[dict[str, Any]]: ...


class Templates:
    """The template families, instantiated over one domain with values from ``values``: the
    database's (:class:`DataValues`, to generate questions) or holes
    (:class:`~llmgym.envs.sql.reading.HoleValues`, to read them back)."""

    def __init__(self, domain: Domain, values: Values) -> None:
        self.domain = domain
        self.values = values

    def sample(self, items: Sequence[Any], k: int, *seed: object) -> list[Any]:
        return self.values.sample(items, k, *seed)

    # ------------------------------------------------------------------ filters
    def category_filters(self, table: Table, alias: str = "") -> list[_Filter]:
        out = []
        prefix = f"{alias}." if alias else ""
        for column in table.of_role("category"):
            for value in self.values.categories(table, column):
                text = column.where.format(value=value)
                out.append(
                    _Filter(
                        text,
                        f"{prefix}{column.name} = {lit(value)}",
                        f'"{text}" refers to {table.name}.{column.name} = {lit(value)}',
                    )
                )
        return out

    def number_filters(self, table: Table, alias: str = "") -> list[_Filter]:
        out = []
        prefix = f"{alias}." if alias else ""
        for column in table.of_role("number"):
            if not column.above:
                continue
            high, low = self.values.thresholds(table, column)
            for threshold, phrase, op in ((high, column.above, ">"), (low, column.below, "<")):
                text = phrase.format(value=column.format(threshold))
                out.append(_Filter(text, f"{prefix}{column.name} {op} {threshold!r}"))
        return out

    def date_filters(self, table: Table, alias: str = "") -> list[_Filter]:
        out = []
        prefix = f"{alias}." if alias else ""
        for column in table.of_role("date"):
            evidence = f"{table.name}.{column.name} is text in the format YYYY-MM-DD"
            years, months = self.values.periods(table, column)
            for year in years:
                out.append(
                    _Filter(
                        column.when.format(period=year),
                        f"strftime('%Y', {prefix}{column.name}) = '{year}'",
                        evidence,
                    )
                )
            for period, month in months:
                out.append(
                    _Filter(
                        column.when.format(period=period),
                        f"strftime('%Y-%m', {prefix}{column.name}) = '{month}'",
                        evidence,
                    )
                )
        return out

    def named_rows(self, table: Table, alias: str, k: int, *seed: object) -> list[_Filter]:
        """Filters naming ``k`` single rows by their label (``the customer Ana Silva``)."""
        out = []
        person = table.label == ("first_name", "last_name")
        for row in self.values.names(table, k, *seed):
            name = " ".join(str(v) for v in row)
            text = f"the {table.singular} {name}" if person else f"the {table.singular} '{name}'"
            sql = " AND ".join(
                f"{alias}.{c} = {lit(v)}" for c, v in zip(table.label, row, strict=True)
            )
            out.append(_Filter(text, sql))
        return out

    # ------------------------------------------------------------------ single table
    def single_table(self, table: Table) -> Iterator[Candidate]:
        cats = self.category_filters(table)
        numbers = self.number_filters(table)
        dates = self.date_filters(table)
        labelled = bool(table.label)
        label = ", ".join(table.label)
        for f in cats + dates:
            np = f"{table.plural} {f.text}"
            yield Candidate(
                (*_how_many(np), f"What is the number of {np}?"),
                f"SELECT COUNT(*) FROM {table.name} WHERE {f.sql}",
                "simple",
                (*f.skills, "aggregate"),
                evidence=(f.evidence,),
            )
        for f, g in self._pairs(cats, table.name):
            np = f"{table.plural} {f.text} and {g.text}"
            yield Candidate(
                _how_many(np),
                f"SELECT COUNT(*) FROM {table.name} WHERE {f.sql} AND {g.sql}",
                "simple",
                ("filter", "aggregate"),
                evidence=(f.evidence, g.evidence),
            )
        if labelled:
            for f in cats + numbers + dates:
                np = f"{table.plural} {f.text}"
                yield Candidate(
                    (
                        f"List the {table.label_plural} of the {np}.",
                        f"What are the {table.label_plural} of all {np}?",
                        f"Give the {table.label_plural} of the {np}.",
                    ),
                    f"SELECT {label} FROM {table.name} WHERE {f.sql}",
                    "simple",
                    f.skills,
                    evidence=(f.evidence,),
                )
        for column in table.of_role("number"):
            yield from self._aggregates(table, column, cats)
            if labelled:
                yield from self._rankings(table, column, cats)
        for category in table.of_role("category"):
            for f in numbers:
                yield self._distinct_with(table, category, f)
            yield from self._groups(table, category, cats)

    def _pairs(self, filters: list[_Filter], *seed: object) -> list[tuple[_Filter, _Filter]]:
        pairs = [
            (f, g)
            for i, f in enumerate(filters)
            for g in filters[i + 1 :]
            if f.sql.split(" = ")[0] != g.sql.split(" = ")[0]
        ]
        return self.sample(pairs, 12, "pairs", *seed)

    def _aggregates(self, table: Table, column: Column, cats: list[_Filter]) -> Iterator[Candidate]:
        kinds = [
            ("average", f"ROUND(AVG({column.name}), 2)", " Round to 2 decimal places."),
            ("highest", f"MAX({column.name})", ""),
            ("lowest", f"MIN({column.name})", ""),
        ]
        if column.additive:
            kinds.append(("total", f"SUM({column.name})", ""))
        for word, expression, suffix in kinds:
            yield Candidate(
                (
                    f"What is the {word} {column.noun} of all {table.plural}?{suffix}",
                    f"Across all {table.plural}, what is the {word} {column.noun}?{suffix}",
                ),
                f"SELECT {expression} FROM {table.name}",
                "simple",
                ("aggregate",),
            )
            for f in self.sample(cats, 4, table.name, column.name, word):
                yield Candidate(
                    (
                        f"What is the {word} {column.noun} of {table.plural} {f.text}?{suffix}",
                        f"For {table.plural} {f.text}, what is the {word} {column.noun}?{suffix}",
                    ),
                    f"SELECT {expression} FROM {table.name} WHERE {f.sql}",
                    "simple",
                    ("filter", "aggregate"),
                    evidence=(f.evidence,),
                )

    def _rankings(self, table: Table, column: Column, cats: list[_Filter]) -> Iterator[Candidate]:
        label = ", ".join(table.label)
        scopes = [(None, "")] + [(f, f.sql) for f in self.sample(cats, 5, table.name, column.name)]
        for f, condition in scopes:
            where = f" WHERE {condition}" if condition else ""
            group = f"{table.plural} {f.text}" if f else f"all {table.plural}"
            evidence = (f.evidence,) if f else ()
            skills = ("filter", "order_by") if f else ("order_by",)
            for word, order, direction in (
                ("highest", "DESC", "from highest to lowest"),
                ("lowest", "ASC", "from lowest to highest"),
            ):
                singular = f"{table.singular} {f.text}" if f else table.singular
                yield Candidate(
                    (
                        f"Which {singular} has the {word} {column.noun}? "
                        f"Give the {table.label_noun}.",
                        f"Find the {table.label_noun} of the {singular} with the {word} "
                        f"{column.noun}.",
                    ),
                    f"SELECT {label} FROM {table.name}{where} "
                    f"ORDER BY {column.name} {order} LIMIT 1",
                    "moderate" if f else "simple",
                    skills,
                    evidence=evidence,
                )
                yield Candidate(
                    (
                        f"List the {table.label_plural} of the 3 {table.plural} with the "
                        f"{word} {column.noun} among {group}, {direction} {column.noun}.",
                        f"Among {group}, give the {table.label_plural} of the 3 with the "
                        f"{word} {column.noun}, ordered {direction}.",
                    ),
                    f"SELECT {label} FROM {table.name}{where} "
                    f"ORDER BY {column.name} {order} LIMIT 3",
                    "moderate",
                    skills,
                    ordered=True,
                    evidence=evidence,
                )

    def _distinct_with(self, table: Table, category: Column, f: _Filter) -> Candidate:
        return Candidate(
            (
                f"Which {category.plural} have at least one {table.singular} {f.text}?",
                f"List the distinct {category.plural} of the {table.plural} {f.text}.",
            ),
            f"SELECT DISTINCT {category.name} FROM {table.name} WHERE {f.sql}",
            "simple",
            ("filter",),
        )

    def _groups(self, table: Table, category: Column, cats: list[_Filter]) -> Iterator[Candidate]:
        name, plural = category.name, table.plural
        yield Candidate(
            (
                f"For each {category.noun}, how many {plural} are there? Return the "
                f"{category.noun} and the count.",
                f"Count the {plural} per {category.noun}. Give each {category.noun} with its "
                "count.",
            ),
            f"SELECT {name}, COUNT(*) FROM {table.name} GROUP BY {name}",
            "moderate",
            ("group_by", "aggregate"),
        )
        others = [f for f in cats if not f.sql.startswith(f"{name} ")]
        for f in self.sample(others, 3, table.name, name, "grouped"):
            yield Candidate(
                (
                    f"For each {category.noun}, how many {plural} {f.text} are there? Return the "
                    f"{category.noun} and the count.",
                ),
                f"SELECT {name}, COUNT(*) FROM {table.name} WHERE {f.sql} GROUP BY {name}",
                "moderate",
                ("filter", "group_by", "aggregate"),
                evidence=(f.evidence,),
            )
        for number in table.of_role("number"):
            yield Candidate(
                (
                    f"What is the average {number.noun} of {plural} for each {category.noun}? "
                    f"Return the {category.noun} and the average rounded to 2 decimal places.",
                ),
                f"SELECT {name}, ROUND(AVG({number.name}), 2) FROM {table.name} GROUP BY {name}",
                "moderate",
                ("group_by", "aggregate"),
            )
        threshold = self.values.group_size(table, category)
        if threshold is not None:
            yield Candidate(
                (
                    f"Which {category.plural} have more than {threshold} {plural}?",
                    f"List the {category.plural} with more than {threshold} {plural}.",
                ),
                f"SELECT {name} FROM {table.name} GROUP BY {name} HAVING COUNT(*) > {threshold}",
                "moderate",
                ("group_by", "aggregate"),
            )
        yield Candidate(
            (
                f"Which {category.noun} has the most {plural}?",
                f"Find the {category.noun} with the largest number of {plural}.",
            ),
            f"SELECT {name} FROM {table.name} GROUP BY {name} ORDER BY COUNT(*) DESC LIMIT 1",
            "moderate",
            ("group_by", "order_by"),
        )

    # ------------------------------------------------------------------ joins
    def joined(self, relation: Relation) -> Iterator[Candidate]:
        child = self.domain.table(relation.child)
        parent = self.domain.table(relation.parent)
        on = f"c.{relation.column} = p.{parent.key.name}"
        join = f"{child.name} AS c JOIN {parent.name} AS p ON {on}"
        parent_cats = self.category_filters(parent, "p")
        child_filters = self.category_filters(child, "c") + self.number_filters(child, "c")
        for f in parent_cats + self.number_filters(parent, "p"):
            yield from self._children(relation, child, join, f"{parent.plural} {f.text}", f)
        if parent.label:
            label = ", ".join(f"p.{c}" for c in parent.label)
            for named in self.named_rows(parent, "p", 5, relation.child):
                averaged = self.sample(child.of_role("number"), 1, named.text)
                yield from self._children(relation, child, join, named.text, named, averaged)
            for f in child_filters:
                some = f"at least one {child.singular} {f.text}"
                np = f"{parent.plural} {relation.parent_with.format(child=some)}"
                yield Candidate(
                    (
                        f"List the {parent.label_plural} of the {np}.",
                        f"What are the {parent.label_plural} of {np}?",
                    ),
                    f"SELECT DISTINCT {label} FROM {join} WHERE {f.sql}",
                    "moderate",
                    ("join", "filter"),
                    evidence=(f.evidence,),
                )
            if relation.most:
                yield from self._most(relation, parent, join, label, parent_cats)
            if relation.parent_without:
                yield from self._without(relation, parent, self.category_filters(parent))
        for f in self.sample(child_filters, 4, relation.child, relation.column, "distinct"):
            some = f"at least one {child.singular} {f.text}"
            np = f"{parent.plural} {relation.parent_with.format(child=some)}"
            yield Candidate(
                (f"How many different {np} are there?", f"Count the distinct {np}."),
                f"SELECT COUNT(DISTINCT c.{relation.column}) FROM {child.name} AS c WHERE {f.sql}",
                "moderate",
                ("filter", "aggregate"),
                evidence=(f.evidence,),
            )
        for category in parent.of_role("category"):
            group = f"{parent.singular} {category.noun}"
            yield Candidate(
                (
                    f"For each {group}, how many {child.plural} are there? Return the {group} "
                    "and the count.",
                ),
                f"SELECT p.{category.name}, COUNT(*) FROM {join} GROUP BY p.{category.name}",
                "challenging",
                ("join", "group_by", "aggregate"),
            )
            for number in child.of_role("number"):
                if number.additive:
                    word, expression = "total", f"SUM(c.{number.name})"
                else:
                    word, expression = "average", f"ROUND(AVG(c.{number.name}), 2)"
                rounding = " rounded to 2 decimal places" if word == "average" else ""
                yield Candidate(
                    (
                        f"What is the {word} {number.noun} of {child.plural} for each {group}? "
                        f"Return the {group} and the {word}{rounding}.",
                    ),
                    f"SELECT p.{category.name}, {expression} FROM {join} "
                    f"GROUP BY p.{category.name}",
                    "challenging",
                    ("join", "group_by", "aggregate"),
                )

    def _children(
        self,
        relation: Relation,
        child: Table,
        join: str,
        parents: str,
        f: _Filter,
        averaged: Sequence[Column] = (),
    ) -> Iterator[Candidate]:
        """How many children the parents in ``parents`` (the rows ``f`` keeps) have, then the
        average of each ``averaged`` column over those children."""
        np = f"{child.plural} {relation.child_of.format(parent=parents)}"
        yield Candidate(
            _how_many(np),
            f"SELECT COUNT(*) FROM {join} WHERE {f.sql}",
            "moderate",
            ("join", "filter", "aggregate"),
            evidence=(f.evidence,),
        )
        for number in averaged:
            yield Candidate(
                (f"What is the average {number.noun} of the {np}? Round to 2 decimal places.",),
                f"SELECT ROUND(AVG(c.{number.name}), 2) FROM {join} WHERE {f.sql}",
                "moderate",
                ("join", "filter", "aggregate"),
            )

    def _most(
        self, relation: Relation, parent: Table, join: str, label: str, cats: list[_Filter]
    ) -> Iterator[Candidate]:
        scopes = [None, *self.sample(cats, 4, relation.child, relation.column, "most")]
        for f in scopes:
            where = f" WHERE {f.sql}" if f else ""
            who = f"{parent.singular} {f.text}" if f else parent.singular
            yield Candidate(
                (f"{relation.most.format(parent=who)} Give the {parent.label_noun}.",),
                f"SELECT {label} FROM {join}{where} GROUP BY p.{parent.key.name} "
                "ORDER BY COUNT(*) DESC LIMIT 1",
                "challenging",
                ("join", "group_by", "order_by", "filter") if f else
                ("join", "group_by", "order_by"),
                evidence=(f.evidence,) if f else (),
            )  # fmt: skip

    def _without(
        self, relation: Relation, parent: Table, cats: list[_Filter]
    ) -> Iterator[Candidate]:
        label = ", ".join(parent.label)
        missing = f"{parent.key.name} NOT IN (SELECT {relation.column} FROM {relation.child})"
        for f in [None, *self.sample(cats, 6, relation.child, relation.column, "without")]:
            scope = f"{parent.plural} {f.text}" if f else parent.plural
            condition = f"{f.sql} AND {missing}" if f else missing
            yield Candidate(
                (
                    f"List the {parent.label_plural} of the {scope} {relation.parent_without}.",
                    f"Find the {scope} {relation.parent_without}. Give the {parent.label_plural}.",
                ),
                f"SELECT {label} FROM {parent.name} WHERE {condition}",
                "challenging",
                ("subquery", "filter") if f else ("subquery",),
                evidence=(f.evidence,) if f else (),
            )

    def above_average(self, table: Table) -> Iterator[Candidate]:
        if not table.label:
            return
        label = ", ".join(table.label)
        cats = self.category_filters(table)
        for column in table.of_role("number"):
            for f in self.sample(cats, 4, table.name, column.name, "above-average"):
                scope = f"{table.plural} {f.text}"
                yield Candidate(
                    (
                        f"Which {scope} have a {column.noun} above the average {column.noun} of "
                        f"all {scope}? Give the {table.label_plural}.",
                        f"List the {table.label_plural} of the {scope} whose {column.noun} is "
                        f"higher than the average for {scope}.",
                    ),
                    f"SELECT {label} FROM {table.name} WHERE {f.sql} AND {column.name} > "
                    f"(SELECT AVG({column.name}) FROM {table.name} WHERE {f.sql})",
                    "challenging",
                    ("subquery", "filter", "aggregate"),
                    evidence=(f.evidence,),
                )

    # ------------------------------------------------------------------ all
    def candidates(self) -> Iterator[Candidate]:
        for table in self.domain.tables:
            yield from self.single_table(table)
            yield from self.above_average(table)
        for relation in self.domain.relations:
            yield from self.joined(relation)
        for family in load_json("questions.json")[self.domain.name]:
            yield from self._family(family, {})

    def _family(self, family: dict[str, Any], bound: dict[str, Any]) -> Iterator[Candidate]:
        """A family of ``questions.json``: for each combination of values of its ``for`` loops
        (outer first), its ``then`` families, or a candidate whose phrasings and SQL have the
        values in place of their ``{names}`` (in SQL as literals)."""
        loops = [self.values.bindings(loop) for loop in family.get("for", ())]
        for combination in itertools.product(*loops):
            values = dict(bound)
            for binding in combination:
                values.update(binding)
            if "then" in family:
                for child in family["then"]:
                    yield from self._family(child, values)
                continue
            literals = {name: lit(value) for name, value in values.items()}
            yield Candidate(
                tuple(phrasing.format(**values) for phrasing in family["phrasings"]),
                family["sql"].format(**literals),
                family["difficulty"],
                tuple(family["skills"]),
                evidence=tuple(family.get("evidence", ())),
            )


class DataValues:
    """The values templates take from the database, to generate questions."""

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self.db = master_database(domain.name)

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return self.db.execute(sql).fetchall()

    def sample(self, items: Sequence[T], k: int, *seed: object) -> list[T]:
        """Up to ``k`` of ``items``, drawn by a stream seeded by the domain and ``seed``."""
        rng = TaskRng("llmgym-sql-templates", self.domain.name, *seed)
        return rng.sample(items, min(k, len(items)))

    def distinct(self, table: Table, column: Column) -> list[Any]:
        return [
            r[0]
            for r in self.rows(
                f"SELECT DISTINCT {column.name} FROM {table.name} "
                f"WHERE {column.name} IS NOT NULL ORDER BY 1"
            )
        ]

    def categories(self, table: Table, column: Column) -> list[Any]:
        """Values of a category column to filter on."""
        return self.sample(self.distinct(table, column), PER_COLUMN, table.name, column.name)

    def thresholds(self, table: Table, column: Column) -> tuple[float | int, float | int]:
        """Round numbers near the 90th and the 10th percentile of a number column's values."""
        values = sorted(self.distinct(table, column))
        high, low = (_nice(values[int(quantile * (len(values) - 1))]) for quantile in (0.9, 0.1))
        return high, low

    def periods(self, table: Table, column: Column) -> tuple[list[str], list[tuple[str, str]]]:
        """A date column's last three years, and months as ``("March 2023", "2023-03")``."""
        query = f"SELECT DISTINCT substr({column.name}, 1, 7) FROM {table.name} ORDER BY 1"
        months = [month for (month,) in self.rows(query)]
        years = sorted({m[:4] for m in months})[-3:]
        sampled = self.sample(months, 4, table.name, column.name, "months")
        return years, [(f"{MONTHS[int(m[5:]) - 1]} {m[:4]}", m) for m in sampled]

    def names(self, table: Table, k: int, *seed: object) -> list[tuple[Any, ...]]:
        """The labels of ``k`` rows of ``table``."""
        columns = ", ".join(table.label)
        rows = self.rows(f"SELECT {columns} FROM {table.name} ORDER BY {table.key.name}")
        return self.sample(rows, k, table.name, "named", *seed)

    def group_size(self, table: Table, category: Column) -> int | None:
        """A row count that a third of the category's values exceed and the largest does
        (``None`` where there is none)."""
        query = f"SELECT COUNT(*) AS n FROM {table.name} GROUP BY {category.name} ORDER BY n DESC"
        counts = [n for (n,) in self.rows(query)]
        if len(counts) < 3 or counts[len(counts) // 3] >= counts[0]:
            return None
        return counts[len(counts) // 3]

    def bindings(self, loop: dict[str, Any]) -> list[dict[str, Any]]:
        """The values of a ``questions.json`` loop: its ``in`` list, or the rows of its
        ``query`` (``sample`` of them where given), each as ``{name: value}``."""
        names = loop_names(loop)
        if "in" in loop:
            return [{names[0]: value} for value in loop["in"]]
        rows = self.rows(loop["query"])
        if "sample" in loop:
            rows = self.sample(rows, loop["sample"], loop["seed"])
        return [dict(zip(names, row, strict=True)) for row in rows]


def loop_names(loop: dict[str, Any]) -> list[str]:
    """The names a ``questions.json`` loop binds (its ``each``: one name or a list)."""
    each = loop["each"]
    return [each] if isinstance(each, str) else list(each)
