"""SQL: answer a question about a database with one SQL query (BIRD-like, after AgentGym's
SQLGym), on generated sqlite databases, with the agent's SQL run in a sandbox."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from llmgym.core import SPLITS, EnvConfig, Task, TaskIdRange, TextEnv, Transition, knob
from llmgym.core.cache import bounded_cache
from llmgym.envs.sql import bird
from llmgym.envs.sql.bird import BirdData, BirdQuestion
from llmgym.envs.sql.databases import DOMAIN_NAMES, DOMAINS, master_database, private_copy
from llmgym.envs.sql.questions import (
    DIFFICULTIES,
    SKILLS,
    Question,
    normalize_rows,
    questions_for,
)
from llmgym.envs.sql.reading import read_question
from llmgym.envs.sql.sandbox import QueryResult, SqlSandbox
from llmgym.errors import ConfigError, QueryError
from llmgym.originals import data_dir_knob, data_dir_of, source_knob

__all__ = ["SQLConfig", "SQLEnv", "extract_sql", "render_table", "schema_text"]

MAX_RESPONSE_LENGTH = 100_000
"""Longer actions are refused before any parsing."""
_CELL_WIDTH = 60
_SQL_TAGS = frozenset({"sql", "sqlite", "sqlite3"})
_BLOCK = re.compile(r"```(.*?)(?:```|\Z)", re.DOTALL)
_LANGUAGE = re.compile(r"[A-Za-z][A-Za-z0-9_+.#-]*")
_STATEMENT_WORDS = (  # noqa: SIM905
    "SELECT WITH VALUES INSERT UPDATE DELETE DROP CREATE ALTER ATTACH DETACH PRAGMA VACUUM "
    "REPLACE BEGIN COMMIT ROLLBACK ANALYZE REINDEX EXPLAIN SAVEPOINT RELEASE"
).split()
_BARE_START = re.compile(
    r"^[ \t]*(?:(?:action|sql|query|answer)[ \t]*:[ \t]*)?(?:submit\b[ \t:]*)?"
    r"(?=(?:" + "|".join(_STATEMENT_WORDS) + r")\b)",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER_HINT = "Answer with one SQL query in a ```sql block."
_SUBMIT = re.compile(r"^[ \t]*(?:action[ \t]*:[ \t]*)?submit\b", re.IGNORECASE | re.MULTILINE)
_SANDBOXES_KEPT = 8
"""Databases an environment keeps open (BIRD has 95; the generated ones are 5)."""
_GENERATED_ONLY = {
    "database": "all",
    "difficulty": "all",
    "skill": "any",
    "ordered_comparison": False,
}
"""The knobs that choose among llmgym's generated questions, and their values with originals."""


@dataclass(frozen=True)
class SQLConfig(EnvConfig):
    """Difficulty knobs of :class:`SQLEnv`."""

    mode: str = knob(
        "single",
        choices=("single", "explore"),
        doc="'single': the first query that runs is the answer (AgentGym's SQLGym); 'explore': "
        "queries run and show their results until the agent submits one.",
    )
    database: str = knob(
        "all", choices=("all", *DOMAIN_NAMES), doc="Ask only about this database ('all': any)."
    )
    difficulty: str = knob(
        "all",
        choices=("all", *DIFFICULTIES),
        doc="BIRD's levels: 'simple' (one table), 'moderate' (joins, grouping, ranking), "
        "'challenging' (nesting, several joins, formulas); 'all': any.",
    )
    skill: str = knob(
        "any",
        choices=("any", *SKILLS),
        doc="Ask only questions whose gold query uses this SQL ability ('any': no restriction).",
    )
    schema_format: str = knob(
        "create",
        choices=("create", "natural"),
        doc="'create': CREATE TABLE statements; 'natural': AgentGym's sentence description.",
    )
    sample_rows: int = knob(3, low=0, high=10, doc="Example rows shown per table.")
    evidence: bool = knob(
        True, doc="Show BIRD-style evidence: hints that map phrases to columns and formulas."
    )
    ordered_comparison: bool = knob(
        False,
        doc="Compare rows in order (as lists) for questions that ask for an order; otherwise "
        "results compare as sets, as in AgentGym.",
    )
    max_queries: int = knob(
        10, low=1, high=100, doc="Explore mode: queries that may run before one is submitted."
    )
    shown_rows: int = knob(10, low=1, high=100, doc="Result rows shown in feedback.")
    time_limit_ms: int = knob(
        1000, low=10, high=10_000, doc="Wall-clock limit for each query, in milliseconds."
    )
    source: str = source_knob("bird")
    data_dir: str = data_dir_knob()

    def validate(self) -> None:
        if data_dir_of(self) is not None:
            for name, value in _GENERATED_ONLY.items():
                if getattr(self, name) != value:
                    raise ConfigError(
                        f"SQLConfig.{name}",
                        f"{getattr(self, name)!r} applies to llmgym's generated questions; with "
                        f"source={self.source!r} allowed: {value!r} (BIRD's questions are played "
                        "in file order and scored as sets of rows)",
                    )
            return
        if (self.database, self.difficulty, self.skill) == ("all", "all", "any"):
            return
        if _has_questions(self.database, self.difficulty, self.skill):
            return
        if self.skill == "any":  # every database has questions of every difficulty today
            raise ConfigError(
                "SQLConfig.difficulty",
                f"{self.difficulty!r} has no questions about database={self.database!r}",
            )
        possible = [s for s in SKILLS if _has_questions(self.database, self.difficulty, s)]
        raise ConfigError(
            "SQLConfig.skill",
            f"{self.skill!r} has no questions with database={self.database!r} and "
            f"difficulty={self.difficulty!r}; allowed with these: "
            + ", ".join(repr(s) for s in ["any", *possible]),
        )


def _has_questions(database: str, difficulty: str, skill: str) -> bool:
    return all(questions_for(split, database, difficulty, skill) for split in SPLITS)


class SQLEnv(TextEnv[SQLConfig]):
    """Answer a question about a database with one SQL query.

    ## Description
    A text-to-SQL task after BIRD, as AgentGym's SQLGym serves it, on llmgym's own databases:
    five sqlite databases (``retail``, ``school``, ``flights``, ``hospital``, ``library``; 4-5
    tables and 2,500-4,700 rows each) generated deterministically from the package's data
    (schemas, vocabulary and question families in ``llmgym/envs/data/sql/``), and about 1,900
    questions from templates over filters, joins, grouping, ordering, aggregates, subqueries and
    dates, each with its gold SQL. Every question has exactly one right answer: candidates with
    empty or long answers, or with ties in a ranking, are dropped. Questions are split into
    train and eval by a hash of their database and gold SQL, so no eval question appears in
    train. Databases are built in memory once per process (about a second for all of
    them and their questions); each environment queries its own read-only copy.

    The oracle (``env.unwrapped.oracle_action()``) does not replay the gold query: it reads the
    question back through the templates (``llmgym.envs.sql.reading.read_question``), matching
    the text against every phrasing the schema allows and filling the query with the values the
    text states; where the words fit two columns ("living in" a city or a country) it takes the
    reading whose values are in the data. It never sees the stored gold query or answer, and it
    rebuilds the gold query of every question in the bank exactly.

    The agent's SQL runs in a sandbox: only one ``SELECT`` (or ``WITH``/``VALUES``) statement;
    an authorizer denies writes, DDL, ``ATTACH``, ``PRAGMA``, transactions, ``load_extension``
    and functions outside an allowlist; the connection is ``query_only``; each query has a time
    limit (``time_limit_ms``, enforced by a progress handler, and before every call of
    ``LIKE``, ``GLOB``, ``instr`` and ``trim``, whose cost is the product of their arguments'
    lengths, bounded too) and results are bounded (10,000 rows, a million characters; on Python
    3.11+ no value over 100,000 characters, no more than 200 columns, compiled statements within
    SQLite's ``SQLITE_LIMIT_VDBE_OP`` of 5,000). See ``llmgym.envs.sql.sandbox``.

    ## Action Space
    Text: the SQL query in a ```` ```sql ```` block (the whole LLM reply may be sent). When a
    reply has several blocks, the **last** block tagged ``sql`` (or ``sqlite``) counts; with no
    tagged block, the last untagged block; blocks tagged with another language are ignored.
    Without any block, the text from the first line that starts with an SQL keyword (optionally
    after ``Action:``, ``SQL:`` or ``Query:``) to the end is the query.

    In ``explore`` mode a query is *run* and its result shown; the word ``submit`` at the start of
    a line (or after ``Action:``) *submits* instead: ``submit`` followed by a ```` ```sql ````
    block (or ``submit SELECT ...``) submits that query, and ``submit`` alone submits the last
    query that ran.

    ## Observation Space
    Text: the database's schema (``CREATE TABLE`` statements or AgentGym's sentence form) with
    ``sample_rows`` example rows per table, the question, evidence when enabled, and the expected
    answer format. After a step: the outcome, with the first ``shown_rows`` rows of the result
    (cells cut at 60 characters).

    ## Rewards
    ``1.0`` when the submitted query's result equals the gold result, ``0.0`` otherwise. Rows
    compare as sets (duplicates and order ignored) as in AgentGym; with ``ordered_comparison``,
    questions that ask for an order compare as lists. Columns must come in the order the question
    names them. Floats compare after rounding to 6 decimals.

    ## Starting State
    The question's database, untouched. Nothing has been run.

    ## Episode End
    ``single`` mode: the first query that runs ends the episode, right or wrong. ``explore`` mode:
    a submitted query that runs ends it. In both modes a reply without a query, an SQL error
    (syntax, unknown column), a refusal by the sandbox, a query over the time limit or a result
    over the bounds is answered with feedback, sets ``info["invalid_action"]`` and does **not**
    end the episode. In explore mode, runs beyond ``max_queries`` are refused until the agent
    submits. Truncated by the registered turn limit (20 turns).

    ``info["query_status"]`` says what happened: ``correct``, ``wrong``, ``ran`` (explore),
    ``no_query``, ``error``, ``refused``, ``timeout``, ``too_large`` or ``budget_spent``.

    ## Original data
    With ``config={"source": "bird", "data_dir": DIR}`` (or, without ``data_dir``, AgentGym's
    variable ``AGENTENV_SQLGYM_BIRD_PATH``) the environment plays BIRD-SQL's questions
    (https://bird-bench.github.io/, CC BY-SA 4.0) from the folders BIRD's zips unzip to:
    ``train/train.json`` with ``train/train_databases/<db_id>/<db_id>.sqlite``, and
    ``dev_20240627/dev.json`` (or AgentGym's ``dev/dev.json``) with ``dev_databases/`` beside
    it. One split alone, or ``DIR`` being a split's own folder, works too. ``llmgym data check
    bird DIR`` counts what it finds; ``docs/originals.md`` gives the fetch commands. BIRD's train
    becomes the ``train`` split, its dev the ``eval`` split; task ids number the questions in
    file order, and AgentGym's sqlgym item ``i`` is train's ``i``-th question, then dev's
    (``i - len(train)``-th). ``env.unwrapped.original_question`` has the current item
    (``question_id``, ``difficulty``, ``evidence``, ...).

    * **Observation**: the database's ``CREATE TABLE`` statements read from the sqlite file,
      as BIRD's prompts show them (``schema_format="natural"``: AgentGym's sentences, built
      from the file's tables and keys), ``sample_rows`` example rows per table, then the
      question the way BIRD's prompt (``llm/src/gpt_request.py``) asks it: with
      ``evidence`` on (the default), the line ``-- External Knowledge: <evidence>`` and
      BIRD's instruction first; without it, BIRD's shorter instruction.
    * **Reward**: BIRD's execution match (``llm/src/evaluation.py``): ``1.0`` when the set of
      rows the query returns equals the set the gold ``SQL`` returns, values compared exactly
      (no rounding: ``ordered_comparison`` does not apply). The gold query runs as BIRD runs
      it, on its own read-only connection, within BIRD's 30 s; one that fails scores every
      answer ``0``, as in BIRD.
    * **The agent's query** runs in the same sandbox, with the same limits and the same
      handling of errors as on generated questions (above), on the user's file opened
      read-only (SQLite ``mode=ro``): it is never copied and never written.
    * **Oracle**: the answer key, BIRD's gold ``SQL`` (no template reads BIRD's questions).
    * ``database``, ``difficulty``, ``skill`` and ``ordered_comparison`` choose among
      generated questions; with ``source="bird"`` they must keep their defaults.

    What still differs from the original: a query that fails (SQL error, refusal, time limit)
    is feedback and does not end a ``single`` episode, where BIRD scores such a prediction
    ``0`` and AgentGym's SQLGym ends the episode with reward ``0``; the agent's time limit is
    ``time_limit_ms`` (at most 10 s) where BIRD allows 30 s, and its result at most 10,000
    rows; AgentGym's SQLGym shows no evidence and builds its sentences from
    ``<split>_tables.json``'s normalised column names (``evidence=False``,
    ``schema_format="natural"``, ``sample_rows=0`` come closest).

    ## Arguments
    ``gymnasium.make("llmgym/SQL-v0", mode="explore", database="flights",
    difficulty="challenging", ordered_comparison=True)``; see :class:`SQLConfig`. The
    ``database``, ``difficulty`` and ``skill`` filters combine; a combination that leaves a split
    without questions (``difficulty="simple"`` with ``skill="join"``: simple questions use one
    table) raises a ``ConfigError`` that lists the skills still possible.

    ## Version History
    * v0: Initial version.
    """

    config_class = SQLConfig
    env_name = "sql"
    skills = SKILLS
    design_notes = (
        "Configs choose which questions are asked (database, difficulty, skill) and how they are "
        "shown (schema_format, sample_rows, evidence, mode); the databases are fixed. Simple "
        "questions use one table, so difficulty 'simple' has no join, group_by or subquery "
        "questions, and every subquery question is challenging: such combinations are rejected. "
        "evidence=false, schema_format='natural' and sample_rows=0 make any question harder; "
        "mode='explore' lets the agent look at the data before it answers."
    )
    skill_practice: ClassVar[dict[str, dict[str, Any]]] = {
        skill: {"skill": skill, "mode": "explore"} for skill in SKILLS
    }
    example = (
        "Observation: CREATE TABLE products (product_id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "category TEXT NOT NULL, unit_price REAL NOT NULL, ...);\n"
        "Question: How many products in the Garden category are there?\n"
        "Thought: Count the rows of products whose category is Garden.\n"
        "Action: ```sql\nSELECT COUNT(*) FROM products WHERE category = 'Garden'\n```"
    )

    _question: Question | None = None
    _original: BirdQuestion | None = None
    _last_run: tuple[str, QueryResult] | None = None
    _queries_run = 0
    _solved = False

    def __init__(self, config: SQLConfig | dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._sandboxes: dict[str, SqlSandbox] = {}
        """The sandbox of each database queried lately (at most ``_SANDBOXES_KEPT``), reused
        across episodes."""
        _original_data(self.config)  # a directory that is not BIRD's fails here, not at reset

    # ------------------------------------------------------------------ tasks
    def task_ids(self, split: str = "train", config: SQLConfig | None = None) -> TaskIdRange:
        config = config or self.config
        data = _original_data(config)
        if data is not None:
            return TaskIdRange(split, len(data.questions(split)))
        return TaskIdRange(split, len(self._questions(split, config)))

    @staticmethod
    def _questions(split: str, config: SQLConfig) -> tuple[Question, ...]:
        return questions_for(split, config.database, config.difficulty, config.skill)

    @property
    def question(self) -> Question:
        """The current question (after :meth:`reset`)."""
        return self.after_reset(self._question)

    @property
    def original_question(self) -> BirdQuestion | None:
        """The current BIRD question where the config reads original data, else ``None``."""
        self.after_reset(self._task)
        return self._original

    def instance_key(self) -> str:
        if self._original is not None:
            original = self._original
            return f"{original.db_id}\n{original.question}\n{original.sql}"
        return f"{self.question.database}\n{self.question.sql}"

    def rules(self) -> str:
        config = self.task.config if self._task else self.config
        text = (
            "You are given the schema of a sqlite database and a question. Answer the question "
            "with one SQL query (a single SELECT statement; the database is read-only) inside a "
            "```sql block. The columns of the result must be what the question asks for, in "
            "the order it names them."
        )
        if config.mode == "explore":
            text += (
                f" You may first run up to {config.max_queries} queries, each in a ```sql block, "
                "and see their results. To answer, write submit followed by the final query in a "
                "```sql block, or submit alone to answer with the last query you ran."
            )
        else:
            text += " The first query that runs is your answer."
        return text

    def skills_achieved(self) -> frozenset[str]:
        if not self._solved or self._original is not None:  # BIRD's questions have no skills
            return frozenset()
        return frozenset(self.question.skills)

    def _reset_task(self, task: Task[SQLConfig]) -> tuple[str, str]:
        config = task.config
        self._last_run = None
        self._queries_run = 0
        self._solved = False
        data = _original_data(config)
        if data is not None:
            original = data.questions(task.split)[task.index]
            self._question, self._original = None, original
            self._sandbox()
            parts = [
                _original_schema_text(
                    original.database, original.db_id, config.schema_format, config.sample_rows
                ),
                bird.question_prompt(original, config.evidence),
            ]
            return "\n\n".join([*parts, self._answer_hint(config)]), original.question
        question = self._questions(task.split, config)[task.index]
        self._question, self._original = question, None
        self._sandbox()
        parts = [
            schema_text(question.database, config.schema_format, config.sample_rows),
            f"Question: {question.text}",
        ]
        if config.evidence and question.evidence:
            parts.append(f"Evidence: {question.evidence}")
        return "\n\n".join([*parts, self._answer_hint(config)]), question.text

    @staticmethod
    def _answer_hint(config: SQLConfig) -> str:
        if config.mode == "explore":
            return (
                "Run queries in ```sql blocks to explore the data; answer with submit followed "
                "by a ```sql block (or submit alone for the last query you ran)."
            )
        return _ANSWER_HINT

    def _database(self) -> tuple[str, Callable[[], sqlite3.Connection]]:
        """The current question's database: a key and how to open a connection to it (a
        private in-memory copy of a generated database; a BIRD file, read-only)."""
        if self._original is not None:
            path = self._original.database
            return str(path), partial(bird.open_read_only, path)
        name = self.question.database
        return name, partial(private_copy, name)

    def _sandbox(self) -> SqlSandbox:
        """The sandbox of the current question's database."""
        key, connect = self._database()
        sandbox = self._sandboxes.pop(key, None)
        if sandbox is None:
            sandbox = SqlSandbox(connect())
            if len(self._sandboxes) >= _SANDBOXES_KEPT:
                self._sandboxes.pop(next(iter(self._sandboxes))).close()
        self._sandboxes[key] = sandbox  # last in the order: the most recently used
        return sandbox

    # ------------------------------------------------------------------ dynamics
    def _step(self, action: str) -> Transition:
        config = self.task.config
        if len(action) > MAX_RESPONSE_LENGTH:
            return self.invalid(
                f"The reply is {len(action):,} characters long; the limit is "
                f"{MAX_RESPONSE_LENGTH:,}. Send one SQL query in a ```sql block.",
                query_status="no_query",
            )
        sql = extract_sql(action)
        if config.mode == "explore":
            return self._explore(action, sql, config)
        if sql is None:
            return self._no_query(action, _ANSWER_HINT)
        return self._answer(sql, config)

    def _explore(self, action: str, sql: str | None, config: SQLConfig) -> Transition:
        if _SUBMIT.search(_outside_blocks(action)):
            if sql is not None:
                return self._answer(sql, config)
            if self._last_run is None:
                return self.invalid(
                    "Nothing to submit yet: run a query first, or write submit followed by the "
                    "final query in a ```sql block.",
                    query_status="no_query",
                )
            return self._grade(self._last_run[1], config)
        if sql is None:
            return self._no_query(
                action,
                "Run a query in a ```sql block, or answer with submit followed by a ```sql "
                "block (submit alone answers with the last query you ran).",
            )
        if self._queries_run >= config.max_queries:
            return self.invalid(
                f"You have run all {config.max_queries} queries allowed. Submit your answer: "
                "submit followed by a ```sql block, or submit alone for the last query.",
                query_status="budget_spent",
            )
        result = self._run(sql, config)
        if isinstance(result, Transition):
            return result
        self._queries_run += 1
        self._last_run = (sql, result)
        left = config.max_queries - self._queries_run
        return Transition(
            f"{render_table(result, config.shown_rows)}\n\n{left} "
            f"quer{'ies' if left != 1 else 'y'} left before you must submit.",
            info={"query_status": "ran"},
        )

    def _no_query(self, action: str, hint: str) -> Transition:
        return self.invalid(
            f"No SQL query found in {self.quote(action)}. {hint}", query_status="no_query"
        )

    def _run(self, sql: str, config: SQLConfig) -> QueryResult | Transition:
        try:
            return self._sandbox().execute(sql, time_limit=config.time_limit_ms / 1000)
        except QueryError as error:
            return self.invalid(
                f"{error.message}\nThe query did not run; nothing was submitted. Fix it and "
                "try again.",
                query_status=error.kind,
            )

    def _answer(self, sql: str, config: SQLConfig) -> Transition:
        result = self._run(sql, config)
        if isinstance(result, Transition):
            return result
        return self._grade(result, config)

    def _grade(self, result: QueryResult, config: SQLConfig) -> Transition:
        table = render_table(result, config.shown_rows)
        if self._original is not None:
            gold = bird.gold_result(self._original)
            if gold.error:
                return Transition(
                    f"Wrong answer: the gold query has no result to compare with ({gold.error}); "
                    f"BIRD scores this 0.\n{table}",
                    terminated=True,
                    success=False,
                    info={"query_status": "wrong"},
                )
            correct = set(result.rows) == gold.rows  # BIRD: set(predicted) == set(gold)
        else:
            question = self.question
            rows = normalize_rows(result.rows)
            if config.ordered_comparison and question.ordered:
                correct = rows == question.result
            else:
                correct = set(rows) == set(question.result)
        self._solved = correct
        if correct:
            return Transition(
                f"Correct! The query returns the expected result.\n{table}",
                reward=1.0,
                terminated=True,
                success=True,
                info={"query_status": "correct"},
            )
        return Transition(
            f"Wrong answer: the result differs from the expected result.\n{table}",
            terminated=True,
            success=False,
            info={"query_status": "wrong"},
        )

    # ------------------------------------------------------------------ oracle and sampling
    def oracle_action(self) -> str:
        """The query that the question's text asks for, read back through the question
        templates from the text and the schema alone, never from the stored gold query or
        answer (:func:`~llmgym.envs.sql.reading.read_question`); on BIRD's questions, which no
        template reads, the answer key: BIRD's gold ``SQL``. In explore mode: run it, then
        ``submit``."""
        sql = self._original.sql if self._original is not None else self._read_question()
        if self.task.config.mode == "explore" and self._last_run and self._last_run[0] == sql:
            return "submit"
        return _fenced(sql)

    def _read_question(self) -> str:
        question = self.question
        sql = read_question(question.database, question.text)
        if sql is None:
            raise RuntimeError(f"no question template reads {question.text!r}")
        return sql

    def sample_action(self, rng: np.random.Generator) -> str:
        """A query that runs: another train question's gold query on the same database (on
        BIRD: a gold query of the same split and database), a look at a table, or (explore
        mode, after a run) ``submit``."""
        config = self.task.config
        if config.mode == "explore" and self._last_run is not None and rng.random() < 0.3:
            return "submit"
        if self._original is not None and (data := _original_data(config)) is not None:
            return self._sample_original(rng, self._original, data)
        database = self.question.database
        if rng.random() < 0.3:
            tables = DOMAINS[database].tables
            table = tables[int(rng.integers(len(tables)))]
            return _fenced(f"SELECT * FROM {table.name} LIMIT {int(rng.integers(1, 6))}")
        pool = questions_for("train", database)
        return _fenced(pool[int(rng.integers(len(pool)))].sql)

    @staticmethod
    def _sample_original(rng: np.random.Generator, original: BirdQuestion, data: BirdData) -> str:
        tables = bird.database_tables(original.database, 0)
        if tables and rng.random() < 0.3:
            table = tables[int(rng.integers(len(tables)))]
            limit = int(rng.integers(1, 6))
            return _fenced(f"SELECT * FROM {bird.quote_identifier(table.name)} LIMIT {limit}")
        pool = [q for q in data.questions(original.split) if q.db_id == original.db_id]
        return _fenced(pool[int(rng.integers(len(pool)))].sql)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle and copy without the sandboxes: they hold sqlite connections to read-only
        copies of the databases, which the copy opens again on its first query."""
        state = super().__getstate__()
        state["_sandboxes"] = {}
        return state

    def close(self) -> None:
        for sandbox in self._sandboxes.values():
            sandbox.close()
        self._sandboxes.clear()
        super().close()


def _original_data(config: SQLConfig) -> BirdData | None:
    """The BIRD data a config reads (parsed once per process), or ``None`` for generated
    questions."""
    data_dir = data_dir_of(config)
    return None if data_dir is None else bird.load_bird(data_dir)


# ---------------------------------------------------------------------------- parsing


def extract_sql(text: str) -> str | None:
    """The query in an agent's reply, or ``None``.

    The last block tagged ``sql``/``sqlite``; else the last untagged block; else, without
    blocks, the text from the first line starting with an SQL keyword (after an optional
    ``Action:``/``SQL:``/``Query:`` label or ``submit``). Blocks tagged with another language
    are never SQL.
    """
    tagged: list[str] = []
    untagged: list[str] = []
    for match in _BLOCK.finditer(text):
        body = match.group(1)
        first_line, newline, rest = body.partition("\n")
        words = first_line.split(None, 1)
        language = first_line.strip()
        if words and words[0].lower() in _SQL_TAGS:
            tagged.append((words[1] if len(words) > 1 else "") + newline + rest)
        elif not (
            newline and _LANGUAGE.fullmatch(language) and language.upper() not in _STATEMENT_WORDS
        ):  # a block tagged ```python, ```text, ... is skipped
            untagged.append(body)
    for candidates in (tagged, untagged):
        for body in reversed(candidates):
            sql = _clean(body)
            if sql:
                return sql
    outside = _outside_blocks(text) if "```" in text else text
    bare = _BARE_START.search(outside)
    if bare is None:
        return None
    return _clean(outside[bare.end() :]) or None


def _fenced(sql: str) -> str:
    return f"```sql\n{sql}\n```"


def _clean(sql: str) -> str:
    return sql.strip().removesuffix("</s>").strip()


def _outside_blocks(text: str) -> str:
    return _BLOCK.sub("\n", text)


# ---------------------------------------------------------------------------- rendering


def _cell(value: Any) -> str:
    if value is None:
        text = "NULL"
    elif isinstance(value, float):
        text = repr(round(value, 6))
    elif isinstance(value, bytes):
        text = f"x'{value[: _CELL_WIDTH // 2].hex()}'"
    else:
        text = str(value).replace("\n", " ")
    return text if len(text) <= _CELL_WIDTH else text[: _CELL_WIDTH - 3] + "..."


def render_table(result: QueryResult, shown_rows: int, *, count: bool = True) -> str:
    """A query result as text: the row count (if ``count``), a header with the column names
    and the first ``shown_rows`` rows, cells cut at 60 characters."""
    total = len(result.rows)
    lines = [f"The query returned {total} row{'s' if total != 1 else ''}."] if count else []
    if result.columns:
        lines.append(" | ".join(_cell(c) for c in result.columns))
    lines += [" | ".join(_cell(v) for v in row) for row in result.rows[:shown_rows]]
    if total > shown_rows:
        lines.append(f"... ({total - shown_rows} more rows not shown)")
    return "\n".join(lines)


@bounded_cache(256)
def schema_text(database: str, schema_format: str = "create", sample_rows: int = 3) -> str:
    """The schema of ``database`` as the agent sees it, with ``sample_rows`` rows per table."""
    domain = DOMAINS[database]
    db = master_database(database)
    lines: list[str] = []
    if schema_format == "natural":
        names = ", ".join(t.name for t in domain.tables)
        lines.append(
            f"The database {database} ({domain.description}) contains tables such as {names}."
        )
        for table in domain.tables:
            sentence = _table_sentence(
                table.name, [c.name for c in table.columns], [table.key.name]
            )
            for column in table.columns:
                if column.references:
                    sentence += f" {column.name} is a foreign key to {column.references}."
            lines.append(sentence)
    else:
        lines.append(f"Database: {database} ({domain.description})")
    for table in domain.tables:
        block = [table.create_statement()] if schema_format == "create" else []
        if sample_rows:
            cursor = db.execute(f"SELECT * FROM {table.name} LIMIT {sample_rows}")
            result = QueryResult(tuple(d[0] for d in cursor.description), tuple(cursor))
            block.append(_example_rows(table.name, result, sample_rows))
        if block:
            lines.append("\n".join(block))
    return "\n\n".join(lines)


def _table_sentence(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    """A table's columns and primary key in AgentGym's sentence form."""
    sentence = f"Table {table} has columns such as {', '.join(columns)}."
    return sentence + (f" {', '.join(key)} is the primary key." if key else "")


def _example_rows(table: str, result: QueryResult, sample_rows: int) -> str:
    shown = render_table(result, sample_rows, count=False)
    return f"/* {len(result.rows)} example rows from {table}:\n{shown}\n*/"


def _original_schema_text(
    database: Path, db_id: str, schema_format: str = "create", sample_rows: int = 3
) -> str:
    """The schema of a BIRD database as the agent sees it, read from the sqlite file: its
    ``CREATE TABLE`` statements as BIRD's prompts show them, or (``natural``) the sentences of
    AgentGym's SQLGym, each table with its first ``sample_rows`` rows."""
    tables = bird.database_tables(database, sample_rows)
    lines: list[str] = []
    if schema_format == "natural":
        names = ", ".join(t.name.lower() for t in tables)
        lines.append(f"{db_id} contains tables such as {names}.")
    for table in tables:
        block = [table.create] if schema_format == "create" else [_original_sentences(table)]
        if sample_rows:
            block.append(_example_rows(table.name, table.examples, sample_rows))
        lines.append("\n".join(block))
    return "\n\n".join(lines)


def _original_sentences(table: bird.BirdTable) -> str:
    """AgentGym's sentences for a table (sqlgym's ``serialize_schema_natural_language``, names
    lower-cased as there)."""
    name = table.name.lower()
    lower = [c.lower() for c in table.columns], [c.lower() for c in table.primary_key]
    text = _table_sentence(name, *lower)
    for column, other, other_column in table.foreign_keys:
        text += (
            f" The {column.lower()} of {name} is the foreign key of {other_column.lower()} of "
            f"{other.lower()}."
        )
    return text
