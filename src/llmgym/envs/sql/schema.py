"""Schema metadata: tables and columns with the words questions use for them.

The metadata serves three purposes: it is rendered into ``CREATE TABLE`` statements (and a
natural-language description) for the agent, it creates the database, and it tells the question
templates how to speak about each column ("customers living in Porto", "priced above $50").
The five databases' metadata is data (``envs/data/sql/schemas.json``), read by
:func:`load_domains`; the keys of a column, table or relation are the fields below.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["Column", "Domain", "Relation", "Table", "load_domains", "load_json"]


@dataclass(frozen=True)
class Column:
    """One column and how questions refer to it.

    Attributes:
        name: The SQL name.
        type: ``INTEGER``, ``REAL`` or ``TEXT``.
        role: ``key`` (primary key), ``ref`` (foreign key), ``label`` (part of a row's name),
            ``category`` (few distinct values, filtered with ``where``), ``number`` (compared
            and aggregated), ``date`` (ISO ``YYYY-MM-DD`` text) or ``text`` (anything else).
        noun: How a question names the column ("unit price"); empty: never asked about.
        plural: The plural of ``noun`` for categories ("categories").
        where: A category filter phrase with ``{value}``: ``"living in {value}"``.
        above: A number filter phrase with ``{value}``: ``"priced above {value}"``.
        below: The opposite of ``above``.
        unit: ``"$"`` (written before the number) or a unit written after it (``"km"``).
        additive: Whether a total (``SUM``) of the column means something.
        when: A date filter phrase with ``{period}``: ``"placed in {period}"``.
        references: ``"table(column)"`` for a foreign key.
        nullable: Whether the column may hold ``NULL``.
    """

    name: str
    type: str
    role: str = "text"
    noun: str = ""
    plural: str = ""
    where: str = ""
    above: str = ""
    below: str = ""
    unit: str = ""
    additive: bool = False
    when: str = ""
    references: str = ""
    nullable: bool = False

    def definition(self) -> str:
        """The column's line in ``CREATE TABLE``."""
        parts = [self.name, self.type]
        if self.role == "key":
            parts.append("PRIMARY KEY")
        elif not self.nullable:
            parts.append("NOT NULL")
        if self.references:
            parts.append(f"REFERENCES {self.references}")
        return " ".join(parts)

    def format(self, value: float | int | str) -> str:
        """A value as a question writes it: ``$49.99``, ``1,200 km``, ``Porto``."""
        if isinstance(value, str):
            return value
        text = f"{value:,.2f}" if isinstance(value, float) and not value.is_integer() else None
        if text is None:
            text = f"{int(value):,}" if abs(value) >= 10_000 else f"{int(value)}"
        if self.unit == "$":
            return f"${text}"
        return f"{text} {self.unit}" if self.unit else text


@dataclass(frozen=True)
class Table:
    """One table: its columns and how questions name its rows.

    Attributes:
        name: The SQL name.
        singular: "customer".
        plural: "customers".
        columns: The columns, in ``CREATE TABLE`` order.
        label: The columns that name a row (unique in the data): ``("first_name", "last_name")``.
        label_noun: "first and last name" (singular; ``label_plural`` is the plural).
        label_plural: "first and last names".
    """

    name: str
    singular: str
    plural: str
    columns: tuple[Column, ...]
    label: tuple[str, ...] = ()
    label_noun: str = ""
    label_plural: str = ""

    def column(self, name: str) -> Column:
        """The column called ``name``."""
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"{self.name} has no column {name!r}")

    @property
    def key(self) -> Column:
        """The primary-key column."""
        return next(c for c in self.columns if c.role == "key")

    def of_role(self, role: str) -> list[Column]:
        """The columns with ``role`` that questions may use (they have a ``noun``)."""
        return [c for c in self.columns if c.role == role and c.noun]

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Table:
        """A table from its JSON description (``columns`` a list of column objects)."""
        columns = tuple(Column(**column) for column in spec["columns"])
        label = tuple(spec.get("label", ()))
        return cls(**{**spec, "columns": columns, "label": label})

    def create_statement(self) -> str:
        """The table's ``CREATE TABLE`` statement."""
        body = ",\n".join(f"  {column.definition()}" for column in self.columns)
        return f"CREATE TABLE {self.name} (\n{body}\n);"


@dataclass(frozen=True)
class Relation:
    """A foreign key from ``child.column`` to ``parent``'s key, with phrases for questions.

    Attributes:
        child: The referencing table ("orders").
        column: The foreign-key column ("customer_id").
        parent: The referenced table ("customers").
        child_of: Phrase after the child's plural, with ``{parent}``: ``"placed by {parent}"``.
        parent_with: Phrase after the parent's plural, with ``{child}``: ``"who placed {child}"``.
        parent_without: Phrase after the parent's plural for parents with no child at all:
            ``"who never placed an order"`` (empty: not asked).
        most: Question for the parent with the most children, with ``{parent}`` (the parent's
            singular): ``"Which {parent} placed the most orders?"``.
    """

    child: str
    column: str
    parent: str
    child_of: str
    parent_with: str
    parent_without: str = ""
    most: str = ""


@dataclass(frozen=True)
class Domain:
    """A database: name, one-line description, tables and relations."""

    name: str
    description: str
    tables: tuple[Table, ...]
    relations: tuple[Relation, ...]

    @classmethod
    def from_spec(cls, name: str, spec: dict[str, Any]) -> Domain:
        """A database from its JSON description: ``description``, ``tables``, ``relations``."""
        return cls(
            name,
            spec["description"],
            tuple(Table.from_spec(table) for table in spec["tables"]),
            tuple(Relation(**relation) for relation in spec["relations"]),
        )

    def table(self, name: str) -> Table:
        """The table called ``name``."""
        for table in self.tables:
            if table.name == name:
                return table
        raise KeyError(f"{self.name} has no table {name!r}")

    def create_script(self) -> str:
        """Every ``CREATE TABLE`` statement, in dependency order."""
        return "\n\n".join(table.create_statement() for table in self.tables)


@cache
def load_json(name: str) -> Any:
    """The package data file ``envs/data/sql/<name>`` (parsed once per process)."""
    source = resources.files("llmgym.envs") / "data" / "sql" / name
    return json.loads(source.read_text(encoding="utf-8"))


def load_domains() -> dict[str, Domain]:
    """Every database's schema, by name, in the order of ``envs/data/sql/schemas.json``."""
    return {name: Domain.from_spec(name, spec) for name, spec in load_json("schemas.json").items()}
