"""The question bank: natural-language questions with gold SQL and gold results.

The templates (:mod:`llmgym.envs.sql.templates`) yield hundreds of candidates per database.
Every candidate's gold SQL is executed: questions whose answer is empty or long are dropped,
and questions that rank rows (``the highest``, ``the top 3``) are kept only when the ranking has
no ties, so every question has exactly one right answer. Questions are split into train and eval
by a hash of their database and gold SQL, so an eval question never appears in train, not even
with other wording.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tqdm import tqdm

from llmgym.core import TaskRng, split_of
from llmgym.core.cache import bounded_cache
from llmgym.envs.sql.databases import DOMAIN_NAMES, DOMAINS, master_database
from llmgym.envs.sql.templates import DataValues, Templates

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


def normalize_rows(rows: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    """Rows with floats rounded to 6 decimals (so ``SUM`` in another order still compares
    equal) and integral floats turned into ints."""
    return tuple(tuple(_normalize(value) for value in row) for row in rows)


def _normalize(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value):
        value = round(value, 6)
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    return value


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
        db = master_database(name)
        templates = Templates(DOMAINS[name], DataValues(DOMAINS[name]))
        seen_sql: set[str] = set()
        seen_text: set[str] = set()
        for candidate in templates.candidates():
            if candidate.sql in seen_sql:
                continue
            seen_sql.add(candidate.sql)
            rows = db.execute(candidate.sql).fetchall()
            if not _accept(db, candidate.sql, rows):
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


@bounded_cache(256)
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
