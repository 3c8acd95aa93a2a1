"""Natural-language questions with gold SQL, generated from templates over the databases.

Templates are instantiated over every table, column and relation of a database, with filter
values drawn from the data (a city that exists, a price threshold between real prices), so each
domain yields hundreds of questions. Every candidate's gold SQL is executed: questions whose
answer is empty or long are dropped, and questions that rank rows (``the highest``, ``the top
3``) are kept only when the ranking has no ties, so every question has exactly one right answer.
Questions are split into train and eval by a hash of their database and gold SQL, so an eval
question never appears in train, not even with other wording.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tqdm import tqdm

from llmgym.core import TaskRng, split_of
from llmgym.envs.sql.databases import DOMAIN_NAMES, DOMAINS, master_database
from llmgym.envs.sql.schema import Column, Domain, Relation, Table

__all__ = [
    "DIFFICULTIES",
    "MAX_GOLD_ROWS",
    "SKILLS",
    "Question",
    "all_questions",
    "normalize_rows",
    "questions_for",
]

DIFFICULTIES = ("simple", "moderate", "challenging")
"""BIRD's difficulty levels: one table; joins or grouping; nesting, several joins or formulas."""
SKILLS = ("filter", "join", "aggregate", "group_by", "order_by", "subquery", "date")
"""The SQL abilities questions exercise (a question lists the ones its gold query needs)."""
MAX_GOLD_ROWS = 40
EVAL_FRACTION = 0.2
_PER_COLUMN = 6  # filter values drawn per column and template


@dataclass(frozen=True)
class Question:
    """One task: a question about a database and the query that answers it.

    Attributes:
        database: The database's name (a key of :data:`~llmgym.envs.sql.databases.DOMAINS`).
        text: The question.
        sql: The gold query.
        difficulty: ``simple``, ``moderate`` or ``challenging``.
        skills: The SQL abilities the gold query uses (a subset of :data:`SKILLS`).
        ordered: Whether the question asks for rows in a particular order.
        evidence: BIRD-style hints mapping phrases of the question to columns and values.
        result: The gold result, normalised by :func:`normalize_rows`.
    """

    database: str
    text: str
    sql: str
    difficulty: str
    skills: tuple[str, ...]
    ordered: bool
    evidence: str
    result: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class _Candidate:
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


def normalize_rows(rows: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    """Rows with floats rounded to 6 decimals (so ``SUM`` in another order still compares
    equal) and integral floats turned into ints."""
    return tuple(tuple(_normalize(value) for value in row) for row in rows)


def _normalize(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value):
        value = round(value, 6)
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    return value


def lit(value: Any) -> str:
    """An SQL literal: ``'Porto'`` (quotes doubled), ``42``, ``9.99``."""
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


_MONTHS = (  # noqa: SIM905
    "January February March April May June July August September October November December"
).split()


class _Templates:
    """The template families, instantiated over one domain."""

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self.db = master_database(domain.name)

    # ------------------------------------------------------------------ data helpers
    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return self.db.execute(sql).fetchall()

    def distinct(self, table: Table, column: Column) -> list[Any]:
        return [
            r[0]
            for r in self.rows(
                f"SELECT DISTINCT {column.name} FROM {table.name} "
                f"WHERE {column.name} IS NOT NULL ORDER BY 1"
            )
        ]

    def sample(self, items: Sequence[Any], k: int, *seed: object) -> list[Any]:
        rng = TaskRng("llmgym-sql-templates", self.domain.name, *seed)
        return rng.sample(items, min(k, len(items)))

    # ------------------------------------------------------------------ filters
    def category_filters(self, table: Table, alias: str = "") -> list[_Filter]:
        out = []
        prefix = f"{alias}." if alias else ""
        for column in table.of_role("category"):
            values = self.sample(self.distinct(table, column), _PER_COLUMN, table.name, column.name)
            for value in values:
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
            values = sorted(self.distinct(table, column))
            for quantile, phrase, op in ((0.9, column.above, ">"), (0.1, column.below, "<")):
                threshold = _nice(values[int(quantile * (len(values) - 1))])
                text = phrase.format(value=column.format(threshold))
                out.append(_Filter(text, f"{prefix}{column.name} {op} {threshold!r}"))
        return out

    def date_filters(self, table: Table, alias: str = "") -> list[_Filter]:
        out = []
        prefix = f"{alias}." if alias else ""
        for column in table.of_role("date"):
            evidence = f"{table.name}.{column.name} is text in the format YYYY-MM-DD"
            query = f"SELECT DISTINCT substr({column.name}, 1, 7) FROM {table.name} ORDER BY 1"
            months = [month for (month,) in self.rows(query)]
            years = sorted({m[:4] for m in months})
            for year in years[-3:]:
                out.append(
                    _Filter(
                        column.when.format(period=year),
                        f"strftime('%Y', {prefix}{column.name}) = '{year}'",
                        evidence,
                    )
                )
            for month in self.sample(months, 4, table.name, column.name, "months"):
                period = f"{_MONTHS[int(month[5:]) - 1]} {month[:4]}"
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
        columns = ", ".join(table.label)
        rows = self.rows(f"SELECT {columns} FROM {table.name} ORDER BY {table.key.name}")
        out = []
        person = table.label == ("first_name", "last_name")
        for row in self.sample(rows, k, table.name, "named", *seed):
            name = " ".join(str(v) for v in row)
            text = f"the {table.singular} {name}" if person else f"the {table.singular} '{name}'"
            sql = " AND ".join(
                f"{alias}.{c} = {lit(v)}" for c, v in zip(table.label, row, strict=True)
            )
            out.append(_Filter(text, sql))
        return out

    # ------------------------------------------------------------------ single table
    def single_table(self, table: Table) -> Iterator[_Candidate]:
        cats = self.category_filters(table)
        numbers = self.number_filters(table)
        dates = self.date_filters(table)
        labelled = bool(table.label)
        label = ", ".join(table.label)
        for f in cats + dates:
            np = f"{table.plural} {f.text}"
            yield _Candidate(
                (f"How many {np} are there?", f"Count the {np}.", f"What is the number of {np}?"),
                f"SELECT COUNT(*) FROM {table.name} WHERE {f.sql}",
                "simple",
                (*f.skills, "aggregate"),
                evidence=(f.evidence,),
            )
        for f, g in self._pairs(cats, table.name):
            np = f"{table.plural} {f.text} and {g.text}"
            yield _Candidate(
                (f"How many {np} are there?", f"Count the {np}."),
                f"SELECT COUNT(*) FROM {table.name} WHERE {f.sql} AND {g.sql}",
                "simple",
                ("filter", "aggregate"),
                evidence=(f.evidence, g.evidence),
            )
        if labelled:
            for f in cats + numbers + dates:
                np = f"{table.plural} {f.text}"
                yield _Candidate(
                    (
                        f"List the {table.label_plural} of the {np}.",
                        f"What are the {table.label_plural} of all {np}?",
                        f"Give the {table.label_plural} of the {np}.",
                    ),
                    f"SELECT {label} FROM {table.name} WHERE {f.sql}",
                    "simple",
                    f.skills,
                    evidence=(f.evidence,) if f.evidence else (),
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

    def _aggregates(
        self, table: Table, column: Column, cats: list[_Filter]
    ) -> Iterator[_Candidate]:
        kinds = [
            ("average", f"ROUND(AVG({column.name}), 2)", " Round to 2 decimal places."),
            ("highest", f"MAX({column.name})", ""),
            ("lowest", f"MIN({column.name})", ""),
        ]
        if column.additive:
            kinds.append(("total", f"SUM({column.name})", ""))
        for word, expression, suffix in kinds:
            yield _Candidate(
                (
                    f"What is the {word} {column.noun} of all {table.plural}?{suffix}",
                    f"Across all {table.plural}, what is the {word} {column.noun}?{suffix}",
                ),
                f"SELECT {expression} FROM {table.name}",
                "simple",
                ("aggregate",),
            )
            for f in self.sample(cats, 4, table.name, column.name, word):
                yield _Candidate(
                    (
                        f"What is the {word} {column.noun} of {table.plural} {f.text}?{suffix}",
                        f"For {table.plural} {f.text}, what is the {word} {column.noun}?{suffix}",
                    ),
                    f"SELECT {expression} FROM {table.name} WHERE {f.sql}",
                    "simple",
                    ("filter", "aggregate"),
                    evidence=(f.evidence,),
                )

    def _rankings(self, table: Table, column: Column, cats: list[_Filter]) -> Iterator[_Candidate]:
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
                yield _Candidate(
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
                yield _Candidate(
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

    def _distinct_with(self, table: Table, category: Column, f: _Filter) -> _Candidate:
        return _Candidate(
            (
                f"Which {category.plural} have at least one {table.singular} {f.text}?",
                f"List the distinct {category.plural} of the {table.plural} {f.text}.",
            ),
            f"SELECT DISTINCT {category.name} FROM {table.name} WHERE {f.sql}",
            "simple",
            ("filter",),
        )

    def _groups(self, table: Table, category: Column, cats: list[_Filter]) -> Iterator[_Candidate]:
        name, plural = category.name, table.plural
        yield _Candidate(
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
            yield _Candidate(
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
            yield _Candidate(
                (
                    f"What is the average {number.noun} of {plural} for each {category.noun}? "
                    f"Return the {category.noun} and the average rounded to 2 decimal places.",
                ),
                f"SELECT {name}, ROUND(AVG({number.name}), 2) FROM {table.name} GROUP BY {name}",
                "moderate",
                ("group_by", "aggregate"),
            )
        counts = self.rows(
            f"SELECT COUNT(*) AS n FROM {table.name} GROUP BY {name} ORDER BY n DESC"
        )
        values = [r[0] for r in counts]
        if len(values) >= 3:
            threshold = values[len(values) // 3]
            if threshold < values[0]:
                yield _Candidate(
                    (
                        f"Which {category.plural} have more than {threshold} {plural}?",
                        f"List the {category.plural} with more than {threshold} {plural}.",
                    ),
                    f"SELECT {name} FROM {table.name} GROUP BY {name} "
                    f"HAVING COUNT(*) > {threshold}",
                    "moderate",
                    ("group_by", "aggregate"),
                )
        yield _Candidate(
            (
                f"Which {category.noun} has the most {plural}?",
                f"Find the {category.noun} with the largest number of {plural}.",
            ),
            f"SELECT {name} FROM {table.name} GROUP BY {name} ORDER BY COUNT(*) DESC LIMIT 1",
            "moderate",
            ("group_by", "order_by"),
        )

    # ------------------------------------------------------------------ joins
    def joined(self, relation: Relation) -> Iterator[_Candidate]:
        child = self.domain.table(relation.child)
        parent = self.domain.table(relation.parent)
        on = f"c.{relation.column} = p.{parent.key.name}"
        join = f"{child.name} AS c JOIN {parent.name} AS p ON {on}"
        parent_cats = self.category_filters(parent, "p")
        child_filters = self.category_filters(child, "c") + self.number_filters(child, "c")
        for f in parent_cats + self.number_filters(parent, "p"):
            np = f"{child.plural} {relation.child_of.format(parent=f'{parent.plural} {f.text}')}"
            yield _Candidate(
                (f"How many {np} are there?", f"Count the {np}."),
                f"SELECT COUNT(*) FROM {join} WHERE {f.sql}",
                "moderate",
                ("join", "filter", "aggregate"),
                evidence=(f.evidence,) if f.evidence else (),
            )
        if parent.label:
            label = ", ".join(f"p.{c}" for c in parent.label)
            for named in self.named_rows(parent, "p", 5, relation.child):
                np = f"{child.plural} {relation.child_of.format(parent=named.text)}"
                yield _Candidate(
                    (f"How many {np} are there?", f"Count the {np}."),
                    f"SELECT COUNT(*) FROM {join} WHERE {named.sql}",
                    "moderate",
                    ("join", "filter", "aggregate"),
                )
                for number in self.sample(child.of_role("number"), 1, named.text):
                    yield _Candidate(
                        (
                            f"What is the average {number.noun} of the {np}? Round to 2 decimal "
                            "places.",
                        ),
                        f"SELECT ROUND(AVG(c.{number.name}), 2) FROM {join} WHERE {named.sql}",
                        "moderate",
                        ("join", "filter", "aggregate"),
                    )
            for f in child_filters:
                some = f"at least one {child.singular} {f.text}"
                np = f"{parent.plural} {relation.parent_with.format(child=some)}"
                yield _Candidate(
                    (
                        f"List the {parent.label_plural} of the {np}.",
                        f"What are the {parent.label_plural} of {np}?",
                    ),
                    f"SELECT DISTINCT {label} FROM {join} WHERE {f.sql}",
                    "moderate",
                    ("join", "filter"),
                    evidence=(f.evidence,) if f.evidence else (),
                )
            if relation.most:
                yield from self._most(relation, parent, join, label, parent_cats)
            if relation.parent_without:
                yield from self._without(relation, parent, self.category_filters(parent))
        for f in self.sample(child_filters, 4, relation.child, relation.column, "distinct"):
            some = f"at least one {child.singular} {f.text}"
            np = f"{parent.plural} {relation.parent_with.format(child=some)}"
            yield _Candidate(
                (f"How many different {np} are there?", f"Count the distinct {np}."),
                f"SELECT COUNT(DISTINCT c.{relation.column}) FROM {child.name} AS c WHERE {f.sql}",
                "moderate",
                ("filter", "aggregate"),
                evidence=(f.evidence,) if f.evidence else (),
            )
        for category in parent.of_role("category"):
            group = f"{parent.singular} {category.noun}"
            yield _Candidate(
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
                yield _Candidate(
                    (
                        f"What is the {word} {number.noun} of {child.plural} for each {group}? "
                        f"Return the {group} and the {word}{rounding}.",
                    ),
                    f"SELECT p.{category.name}, {expression} FROM {join} "
                    f"GROUP BY p.{category.name}",
                    "challenging",
                    ("join", "group_by", "aggregate"),
                )

    def _most(
        self, relation: Relation, parent: Table, join: str, label: str, cats: list[_Filter]
    ) -> Iterator[_Candidate]:
        scopes = [None, *self.sample(cats, 4, relation.child, relation.column, "most")]
        for f in scopes:
            where = f" WHERE {f.sql}" if f else ""
            who = f"{parent.singular} {f.text}" if f else parent.singular
            yield _Candidate(
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
    ) -> Iterator[_Candidate]:
        label = ", ".join(parent.label)
        missing = f"{parent.key.name} NOT IN (SELECT {relation.column} FROM {relation.child})"
        for f in [None, *self.sample(cats, 6, relation.child, relation.column, "without")]:
            scope = f"{parent.plural} {f.text}" if f else parent.plural
            condition = f"{f.sql} AND {missing}" if f else missing
            yield _Candidate(
                (
                    f"List the {parent.label_plural} of the {scope} {relation.parent_without}.",
                    f"Find the {scope} {relation.parent_without}. Give the {parent.label_plural}.",
                ),
                f"SELECT {label} FROM {parent.name} WHERE {condition}",
                "challenging",
                ("subquery", "filter") if f else ("subquery",),
                evidence=(f.evidence,) if f else (),
            )

    def above_average(self, table: Table) -> Iterator[_Candidate]:
        if not table.label:
            return
        label = ", ".join(table.label)
        cats = self.category_filters(table)
        for column in table.of_role("number"):
            for f in self.sample(cats, 4, table.name, column.name, "above-average"):
                scope = f"{table.plural} {f.text}"
                yield _Candidate(
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
    def candidates(self) -> Iterator[_Candidate]:
        for table in self.domain.tables:
            yield from self.single_table(table)
            yield from self.above_average(table)
        for relation in self.domain.relations:
            yield from self.joined(relation)
        yield from _SPECIFIC[self.domain.name](self)


# ---------------------------------------------------------------------------- domain-specific


def _retail(t: _Templates) -> Iterator[_Candidate]:
    revenue = "revenue is the sum of order_items.quantity * order_items.unit_price"
    yield _Candidate(
        (
            "What is the total revenue of each product category? Return the category and the "
            "revenue rounded to 2 decimal places.",
        ),
        "SELECT p.category, ROUND(SUM(oi.quantity * oi.unit_price), 2) FROM order_items AS oi "
        "JOIN products AS p ON oi.product_id = p.product_id GROUP BY p.category",
        "challenging",
        ("join", "group_by", "aggregate"),
        evidence=(revenue,),
    )
    for status in ("delivered", "cancelled", "returned"):
        for year in ("2022", "2023", "2024"):
            yield _Candidate(
                (
                    f"What was the revenue of {status} orders placed in {year}? Round to 2 "
                    "decimal places.",
                ),
                "SELECT ROUND(SUM(oi.quantity * oi.unit_price), 2) FROM order_items AS oi "
                "JOIN orders AS o ON oi.order_id = o.order_id "
                f"WHERE o.status = '{status}' AND strftime('%Y', o.order_date) = '{year}'",
                "challenging",
                ("join", "filter", "aggregate", "date"),
                evidence=(revenue, "orders.order_date is text in the format YYYY-MM-DD"),
            )
    for city in t.sample([c for (c,) in t.rows("SELECT DISTINCT city FROM customers")], 8, "spent"):
        yield _Candidate(
            (
                f"Which customer living in {city} spent the most on delivered orders? Give the "
                "first and last name.",
            ),
            "SELECT c.first_name, c.last_name FROM customers AS c "
            "JOIN orders AS o ON o.customer_id = c.customer_id "
            "JOIN order_items AS oi ON oi.order_id = o.order_id "
            f"WHERE c.city = {lit(city)} AND o.status = 'delivered' GROUP BY c.customer_id "
            "ORDER BY SUM(oi.quantity * oi.unit_price) DESC LIMIT 1",
            "challenging",
            ("join", "filter", "group_by", "order_by"),
            evidence=(revenue.replace("revenue", "spending"),),
        )
    yield _Candidate(
        ("Which product category has the highest average review rating?",),
        "SELECT p.category FROM reviews AS r JOIN products AS p ON r.product_id = p.product_id "
        "GROUP BY p.category ORDER BY AVG(r.rating) DESC LIMIT 1",
        "challenging",
        ("join", "group_by", "order_by"),
    )
    for brand in t.sample(
        [b for (b,) in t.rows("SELECT DISTINCT brand FROM products")], 6, "units"
    ):
        yield _Candidate(
            (f"How many units of products made by {brand} were sold in delivered orders?",),
            "SELECT SUM(oi.quantity) FROM order_items AS oi JOIN products AS p "
            "ON oi.product_id = p.product_id JOIN orders AS o ON oi.order_id = o.order_id "
            f"WHERE p.brand = {lit(brand)} AND o.status = 'delivered'",
            "challenging",
            ("join", "filter", "aggregate"),
        )


def _school(t: _Templates) -> Iterator[_Candidate]:
    for term in ("2023 Fall", "2024 Spring", "2024 Fall"):
        yield _Candidate(
            (
                f"What is the average score of enrollments in each subject in the {term} term? "
                "Return the subject and the average rounded to 2 decimal places.",
            ),
            "SELECT co.subject, ROUND(AVG(e.score), 2) FROM enrollments AS e JOIN courses AS co "
            f"ON e.course_id = co.course_id WHERE e.term = '{term}' GROUP BY co.subject",
            "challenging",
            ("join", "filter", "group_by", "aggregate"),
        )
    teachers = t.rows("SELECT first_name, last_name FROM teachers ORDER BY teacher_id")
    for first, last in t.sample(teachers, 8, "taught"):
        yield _Candidate(
            (f"How many distinct students are enrolled in courses taught by {first} {last}?",),
            "SELECT COUNT(DISTINCT e.student_id) FROM enrollments AS e JOIN courses AS co "
            "ON e.course_id = co.course_id JOIN teachers AS t ON co.teacher_id = t.teacher_id "
            f"WHERE t.first_name = {lit(first)} AND t.last_name = {lit(last)}",
            "challenging",
            ("join", "filter", "aggregate"),
        )
    subjects = [s for (s,) in t.rows("SELECT DISTINCT subject FROM courses ORDER BY 1")]
    for subject in subjects:
        yield _Candidate(
            (
                f"Among students with at least two enrollments in {subject} courses, who has the "
                f"highest average {subject} score? Give the first and last name.",
            ),
            "SELECT s.first_name, s.last_name FROM enrollments AS e JOIN courses AS co ON "
            "e.course_id = co.course_id JOIN students AS s ON e.student_id = s.student_id "
            f"WHERE co.subject = {lit(subject)} GROUP BY s.student_id "
            "HAVING COUNT(*) >= 2 ORDER BY AVG(e.score) DESC LIMIT 1",
            "challenging",
            ("join", "filter", "group_by", "order_by"),
        )
    yield _Candidate(
        (
            "Which teachers teach courses whose average score is below 70? Give the first and "
            "last name.",
        ),
        "SELECT DISTINCT t.first_name, t.last_name FROM teachers AS t JOIN courses AS co ON "
        "co.teacher_id = t.teacher_id WHERE co.course_id IN (SELECT course_id FROM enrollments "
        "GROUP BY course_id HAVING AVG(score) < 70)",
        "challenging",
        ("join", "subquery", "group_by", "aggregate"),
    )


def _flights(t: _Templates) -> Iterator[_Candidate]:
    route = (
        "FROM flights AS f JOIN airports AS a ON f.origin = a.airport_code "
        "JOIN airports AS b ON f.destination = b.airport_code"
    )
    pairs = t.rows(f"SELECT DISTINCT a.city, b.city {route} ORDER BY 1, 2")
    for origin, destination in t.sample(pairs, 25, "routes"):
        yield _Candidate(
            (
                f"List the flight numbers of flights from {origin} to {destination}.",
                f"Which flights go from {origin} to {destination}? Give the flight numbers.",
            ),
            f"SELECT f.flight_number {route} WHERE a.city = {lit(origin)} "
            f"AND b.city = {lit(destination)}",
            "challenging",
            ("join", "filter"),
            evidence=("origin and destination are airport codes; airports.city names the city",),
        )
    cities = [c for (c,) in t.rows("SELECT DISTINCT city FROM airports ORDER BY city")]
    for city in t.sample(cities, 10, "departing"):
        yield _Candidate(
            (f"How many bookings were made on flights departing from {city}?",),
            "SELECT COUNT(*) FROM bookings AS k JOIN flights AS f ON k.flight_number = "
            f"f.flight_number JOIN airports AS a ON f.origin = a.airport_code "
            f"WHERE a.city = {lit(city)}",
            "challenging",
            ("join", "filter", "aggregate"),
        )
    airlines = [n for (n,) in t.rows("SELECT name FROM airlines ORDER BY airline_id")]
    for name in airlines:
        for seat_class in ("business", "economy"):
            yield _Candidate(
                (
                    f"What is the total revenue of {name} from {seat_class} class bookings? Round "
                    "to 2 decimal places.",
                ),
                "SELECT ROUND(SUM(k.price), 2) FROM bookings AS k JOIN flights AS f ON "
                "k.flight_number = f.flight_number JOIN airlines AS l ON f.airline_id = "
                f"l.airline_id WHERE l.name = {lit(name)} AND k.seat_class = '{seat_class}'",
                "challenging",
                ("join", "filter", "aggregate"),
                evidence=("revenue is the sum of bookings.price",),
            )
    yield _Candidate(
        ("Which airline has the longest average flight distance? Give its name.",),
        "SELECT l.name FROM flights AS f JOIN airlines AS l ON f.airline_id = l.airline_id "
        "GROUP BY l.airline_id ORDER BY AVG(f.distance_km) DESC LIMIT 1",
        "challenging",
        ("join", "group_by", "order_by"),
    )


def _hospital(t: _Templates) -> Iterator[_Candidate]:
    departments = [d for (d,) in t.rows("SELECT name FROM departments ORDER BY department_id")]
    chain = (
        "FROM appointments AS a JOIN doctors AS d ON a.doctor_id = d.doctor_id "
        "JOIN departments AS dep ON d.department_id = dep.department_id"
    )
    for name in departments:
        for year in ("2023", "2024"):
            yield _Candidate(
                (f"How many appointments did the {name} department hold in {year}?",),
                f"SELECT COUNT(*) {chain} WHERE dep.name = {lit(name)} "
                f"AND strftime('%Y', a.appointment_date) = '{year}'",
                "challenging",
                ("join", "filter", "aggregate", "date"),
                evidence=("appointments.appointment_date is text in the format YYYY-MM-DD",),
            )
        yield _Candidate(
            (f"How many distinct patients born before 1960 were seen in the {name} department?",),
            f"SELECT COUNT(DISTINCT a.patient_id) {chain} JOIN patients AS pa ON "
            f"a.patient_id = pa.patient_id WHERE dep.name = {lit(name)} AND pa.birth_year < 1960",
            "challenging",
            ("join", "filter", "aggregate"),
        )
    yield _Candidate(
        (
            "What is the total of appointment fees for each department? Return the department "
            "name and the total rounded to 2 decimal places.",
        ),
        f"SELECT dep.name, ROUND(SUM(a.fee), 2) {chain} GROUP BY dep.department_id",
        "challenging",
        ("join", "group_by", "aggregate"),
    )
    cities = [c for (c,) in t.rows("SELECT DISTINCT city FROM patients ORDER BY city")]
    for city in cities:
        yield _Candidate(
            (f"Which medication was prescribed most often to patients living in {city}?",),
            "SELECT pr.medication FROM prescriptions AS pr JOIN appointments AS a ON "
            "pr.appointment_id = a.appointment_id JOIN patients AS pa ON a.patient_id = "
            f"pa.patient_id WHERE pa.city = {lit(city)} GROUP BY pr.medication "
            "ORDER BY COUNT(*) DESC LIMIT 1",
            "challenging",
            ("join", "filter", "group_by", "order_by"),
        )


def _library(t: _Templates) -> Iterator[_Candidate]:
    yield _Candidate(
        ("How many loans have not been returned yet?", "Count the loans that are still out."),
        "SELECT COUNT(*) FROM loans WHERE return_date IS NULL",
        "simple",
        ("filter", "aggregate"),
        evidence=("a loan not returned yet has no return_date (NULL)",),
    )
    late = "a loan was returned late when return_date is after due_date"
    yield _Candidate(
        ("How many loans were returned after their due date?",),
        "SELECT COUNT(*) FROM loans WHERE return_date > due_date",
        "simple",
        ("filter", "aggregate"),
        evidence=(late,),
    )
    for genre in [g for (g,) in t.rows("SELECT DISTINCT genre FROM books ORDER BY genre")]:
        yield _Candidate(
            (f"How many loans of {genre} books were returned late?",),
            "SELECT COUNT(*) FROM loans AS l JOIN books AS b ON l.book_id = b.book_id "
            f"WHERE b.genre = {lit(genre)} AND l.return_date > l.due_date",
            "challenging",
            ("join", "filter", "aggregate"),
            evidence=(late,),
        )
        yield _Candidate(
            (
                f"List the titles of {genre} books that are currently on loan (borrowed and not "
                "returned yet).",
            ),
            "SELECT DISTINCT b.title FROM loans AS l JOIN books AS b ON l.book_id = b.book_id "
            f"WHERE b.genre = {lit(genre)} AND l.return_date IS NULL",
            "challenging",
            ("join", "filter"),
            evidence=("a loan not returned yet has no return_date (NULL)",),
        )
    yield _Candidate(
        ("Which genre has the most loans?",),
        "SELECT b.genre FROM loans AS l JOIN books AS b ON l.book_id = b.book_id "
        "GROUP BY b.genre ORDER BY COUNT(*) DESC LIMIT 1",
        "challenging",
        ("join", "group_by", "order_by"),
    )
    countries = [c for (c,) in t.rows("SELECT DISTINCT country FROM authors ORDER BY country")]
    for country in t.sample(countries, 10, "borrowed"):
        yield _Candidate(
            (f"How many times were books by authors from {country} borrowed?",),
            "SELECT COUNT(*) FROM loans AS l JOIN books AS b ON l.book_id = b.book_id "
            f"JOIN authors AS a ON b.author_id = a.author_id WHERE a.country = {lit(country)}",
            "challenging",
            ("join", "filter", "aggregate"),
        )


_SPECIFIC = {
    "retail": _retail,
    "school": _school,
    "flights": _flights,
    "hospital": _hospital,
    "library": _library,
}


# ---------------------------------------------------------------------------- the bank


_RANKED = re.compile(
    r"SELECT (?:DISTINCT )?(?P<select>.+?) FROM (?P<body>.+) "
    r"ORDER BY (?P<key>.+) (?P<direction>DESC|ASC) LIMIT (?P<limit>[0-9]+)",
    re.DOTALL,
)


def _accept(db: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> bool:
    """Whether a gold query makes a fair question: 1 to ``MAX_GOLD_ROWS`` rows, not all NULL,
    and, for a ranking (``ORDER BY key LIMIT k``), more than ``k`` rows to rank and no ties
    among the first ``k + 1`` keys, so the chosen rows and their order are the only answer."""
    if not 1 <= len(rows) <= MAX_GOLD_ROWS:
        return False
    if all(value is None for row in rows for value in row):
        return False
    ranked = _RANKED.fullmatch(sql)
    if ranked is None:
        return True
    key, limit = ranked["key"], int(ranked["limit"]) + 1
    keys = db.execute(
        f"SELECT {key} FROM {ranked['body']} ORDER BY {key} {ranked['direction']} LIMIT {limit}"
    ).fetchall()
    return len(keys) == limit and len(set(keys)) == limit


@cache
def all_questions() -> tuple[Question, ...]:
    """Every question of every database, in generation order (built once per process)."""
    questions: list[Question] = []
    for name in tqdm(DOMAIN_NAMES, desc="llmgym SQL questions", delay=2.0, leave=False):
        templates = _Templates(DOMAINS[name])
        seen_sql: set[str] = set()
        seen_text: set[str] = set()
        for candidate in templates.candidates():
            if candidate.sql in seen_sql:
                continue
            seen_sql.add(candidate.sql)
            rows = templates.rows(candidate.sql)
            if not _accept(templates.db, candidate.sql, rows):
                continue
            text = TaskRng("llmgym-sql-phrasing", candidate.sql).choice(candidate.phrasings)
            if text in seen_text:
                continue
            seen_text.add(text)
            questions.append(
                Question(
                    database=name,
                    text=text,
                    sql=candidate.sql,
                    difficulty=candidate.difficulty,
                    skills=tuple(s for s in SKILLS if s in candidate.skills),
                    ordered=candidate.ordered,
                    evidence="; ".join(dict.fromkeys(e for e in candidate.evidence if e)),
                    result=normalize_rows(rows),
                )
            )
    return tuple(questions)


@cache
def _split(split: str) -> tuple[Question, ...]:
    chosen = [
        q for q in all_questions() if split_of(f"sql:{q.database}:{q.sql}", EVAL_FRACTION) == split
    ]
    TaskRng("llmgym-sql-order", split).shuffle(chosen)
    return tuple(chosen)


@cache
def questions_for(
    split: str, database: str = "all", difficulty: str = "all", skill: str = "any"
) -> tuple[Question, ...]:
    """The questions of ``split`` for a database, difficulty and skill (``"all"``/``"any"``:
    no restriction), in the split's fixed order."""
    return tuple(
        q
        for q in _split(split)
        if database in ("all", q.database)
        and difficulty in ("all", q.difficulty)
        and (skill == "any" or skill in q.skills)
    )
