"""Run untrusted SQL against a database without letting it change, leak or hang anything.

:class:`SqlSandbox` owns one SQLite connection (the environment gives it a private in-memory
copy of a generated database, or a read-only connection to a user's file) and runs one statement
at a time under five independent guards:

1. **A statement gate.** The statement must start (after comments) with ``SELECT``, ``WITH`` or
   ``VALUES``, and Python's ``sqlite3`` runs one statement per call (``"SELECT 1; DROP ..."`` is
   refused). Anything else is refused before SQLite compiles it.
2. **An authorizer** (``sqlite3_set_authorizer``) that allows only reading tables, ``SELECT``,
   recursive CTEs and an allowlist of pure functions. Everything else is denied while the
   statement is compiled: writes of any kind, DDL, ``ATTACH``/``DETACH`` (which ``VACUUM INTO
   'file'`` needs too), ``PRAGMA``, transactions, ``load_extension()``, table-valued functions
   and any function not on the list.
3. **``PRAGMA query_only``**, so SQLite itself refuses to write even if something got past (2).
4. **Limits.** A wall-clock budget per statement enforced by a progress handler (a recursive
   CTE that never ends is interrupted), rows fetched in small batches and refused past ``max_rows``
   (a cross join of millions of rows stops just past ``max_rows``) or past ``max_result_chars`` of
   text, and, on Python 3.11+, SQLite's own limits on the length of any string or blob, on
   attached databases, on result columns and on the size of a compiled statement
   (``sqlite3.Connection.setlimit``). Sorting spills to memory, never to files; how much a
   statement can allocate is bounded by the time limit (sorting a huge cross join grows quickly).

   SQLite calls the progress handler between the instructions of its virtual machine, never
   inside one function call, and the functions that compare two strings position by position —
   ``LIKE``, ``GLOB``, ``instr`` and ``trim``/``ltrim``/``rtrim`` with a set of characters —
   take time proportional to the product of their lengths: one ``LIKE`` of a 50,000-character
   pattern over a 100,000-character value runs for seconds. The sandbox therefore replaces
   them with guards (:data:`PATTERN_FUNCTIONS`) that check the deadline before every call,
   refuse a call whose two lengths multiply to more than :data:`MAX_PATTERN_WORK`, and
   otherwise return what SQLite's own function returns (they ask a bare in-memory connection).
   Every statement thus stops within about one guarded call (milliseconds) of its time limit.
5. **A private copy.** Each sandbox works on its own in-memory copy, so even a write would reach
   neither the shared master database nor any other environment. A user's own database file
   (BIRD's, :mod:`llmgym.envs.sql.bird`) is not copied but opened read-only (``mode=ro``), so
   SQLite itself refuses to write it.

On Python 3.10 ``setlimit`` does not exist; a statement that builds one huge string (say, by
repeated concatenation in a CTE) can then allocate up to SQLite's default maximum of 1 GB before
the time limit stops it.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmgym.errors import QueryError

__all__ = [
    "ALLOWED_FUNCTIONS",
    "MAX_PATTERN_WORK",
    "PATTERN_FUNCTIONS",
    "QueryResult",
    "SqlSandbox",
    "database_digest",
]

ALLOWED_FUNCTIONS: frozenset[str] = frozenset(
    (  # noqa: SIM905
        "abs avg ceil ceiling coalesce count date datetime floor group_concat ifnull iif instr "
        "julianday length like glob lower ltrim max min nullif round rtrim sign sqrt string_agg "
        "strftime substr substring sum time total trim typeof unicode unixepoch upper"
    ).split()
)
"""Functions a query may call: aggregates, arithmetic, string, date and null handling.

Left out on purpose: ``load_extension``, functions that allocate from an argument
(``zeroblob``, ``randomblob``, ``printf``/``format`` with widths, ``replace``, ``hex``), and
anything that needs a virtual table (``json_each``, ``pragma_*``)."""

_ACTIONS = {  # authorizer action code -> what the agent is told was refused
    getattr(sqlite3, f"SQLITE_{name}"): name.replace("_", " ")
    for name in (  # noqa: SIM905
        "CREATE_INDEX CREATE_TABLE CREATE_TEMP_INDEX CREATE_TEMP_TABLE CREATE_TEMP_TRIGGER "
        "CREATE_TEMP_VIEW CREATE_TRIGGER CREATE_VIEW DELETE DROP_INDEX DROP_TABLE "
        "DROP_TEMP_INDEX DROP_TEMP_TABLE DROP_TEMP_TRIGGER DROP_TEMP_VIEW DROP_TRIGGER "
        "DROP_VIEW INSERT PRAGMA READ SELECT TRANSACTION UPDATE ATTACH DETACH ALTER_TABLE "
        "REINDEX ANALYZE CREATE_VTABLE DROP_VTABLE FUNCTION SAVEPOINT RECURSIVE"
    ).split()
}
_ALWAYS_ALLOWED = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})
_READ_STATEMENTS = ("SELECT", "WITH", "VALUES")
_OTHER_STATEMENTS = frozenset(
    (  # noqa: SIM905
        "ALTER ANALYZE ATTACH BEGIN COMMIT CREATE DELETE DETACH DROP END EXPLAIN INSERT PRAGMA "
        "REINDEX RELEASE REPLACE ROLLBACK SAVEPOINT UPDATE UPSERT VACUUM"
    ).split()
)
_LEADING_NOISE = re.compile(r"(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?(?:\*/|\Z))*", re.DOTALL)
_FIRST_WORD = re.compile(r"[A-Za-z_]+")
_PROGRESS_INTERVAL = 1_000  # SQLite virtual-machine instructions between deadline checks
_FETCH_BATCH = 16  # rows fetched between checks of the result bounds
_MAX_COLUMNS = 200  # result columns of a statement (SQLite's default: 2,000)
_MAX_PROGRAM = 5_000  # SQLITE_LIMIT_VDBE_OP: bounds the program a cached statement holds

PATTERN_FUNCTIONS: dict[tuple[str, int], str] = {
    ("like", 2): "LIKE",
    ("like", 3): "LIKE",
    ("glob", 2): "GLOB",
    ("instr", 2): "instr()",
    ("trim", 2): "trim()",
    ("ltrim", 2): "ltrim()",
    ("rtrim", 2): "rtrim()",
}
"""The functions (name, argument count) whose cost is the product of their first two arguments'
lengths, guarded by the sandbox, with the name its feedback uses."""

MAX_PATTERN_WORK = 10_000_000
"""The largest product of the two lengths a guarded function may be called with (a few
milliseconds of work; a ``LIKE`` over a whole table's ``group_concat`` stays well below)."""


@dataclass(frozen=True)
class QueryResult:
    """The column names and rows of a query that ran to completion."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


class SqlSandbox:
    """Runs one read-only statement at a time on ``connection``, which it takes over.

    Args:
        connection: The database to query. The sandbox locks it down (``query_only``, the
            authorizer, the progress handler, limits); it should be a private copy.
        max_rows: Results with more rows are refused (``QueryError("too_large")``).
        max_sql_length: Longer statements are refused without being parsed.
        max_value_length: The longest string or blob a statement may build (Python 3.11+).
        max_result_chars: Results whose text and blobs add up to more are refused.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        *,
        max_rows: int = 10_000,
        max_sql_length: int = 10_000,
        max_value_length: int = 100_000,
        max_result_chars: int = 1_000_000,
    ) -> None:
        self.max_rows = max_rows
        self.max_sql_length = max_sql_length
        self.max_result_chars = max_result_chars
        self._connection = connection
        self._deadline = math.inf
        self._time_limit = 1.0
        self._denied: list[str] = []
        self._stopped: QueryError | None = None
        connection.isolation_level = None  # never let the driver open a transaction
        connection.execute("PRAGMA query_only = ON")
        connection.execute("PRAGMA temp_store = MEMORY")  # sorting spills to memory, not files
        if sys.version_info >= (3, 11):  # Python 3.10's sqlite3 has no setlimit()
            connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max_value_length)
            connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, max(max_sql_length, 1_000))
            connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
            connection.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, _MAX_COLUMNS)
            connection.setlimit(sqlite3.SQLITE_LIMIT_VDBE_OP, _MAX_PROGRAM)
        self._reference = sqlite3.connect(":memory:", check_same_thread=False)
        """A bare connection whose built-in functions the pattern guards call."""
        for (name, arity), label in PATTERN_FUNCTIONS.items():
            connection.create_function(
                name, arity, self._pattern_guard(name, arity, label), deterministic=True
            )
        connection.set_authorizer(self._authorize)
        connection.set_progress_handler(self._past_deadline, _PROGRESS_INTERVAL)

    # ------------------------------------------------------------------ public
    def execute(self, sql: str, *, time_limit: float = 1.0) -> QueryResult:
        """Run ``sql`` (one read-only statement) within ``time_limit`` seconds.

        Raises:
            QueryError: the statement was rejected, refused, too slow or its result too large.
        """
        if len(sql) > self.max_sql_length:
            raise QueryError(
                "refused",
                f"The query is {len(sql):,} characters long; the limit is {self.max_sql_length:,}.",
            )
        if "\x00" in sql or not _is_encodable(sql):
            raise QueryError("error", "SQL error: the query contains a NUL or invalid character.")
        verb = _first_keyword(sql)
        if verb in _OTHER_STATEMENTS:
            raise QueryError(
                "refused",
                f"Only read queries can run here: {verb} statements are not allowed. The "
                "database is read-only; write one SELECT (or WITH ... SELECT) statement.",
            )
        if verb not in _READ_STATEMENTS:
            found = f" (found {verb!r})" if verb else ""
            raise QueryError(
                "error", f"SQL error: a query starts with SELECT, WITH or VALUES{found}."
            )
        self._denied.clear()
        self._stopped = None
        self._time_limit = time_limit
        self._deadline = time.perf_counter() + time_limit
        cursor = None
        try:
            cursor = self._connection.execute(sql)
            columns = tuple(d[0] for d in cursor.description or ())
            rows = self._fetch(cursor)
        except (sqlite3.Error, sqlite3.Warning) as error:
            raise (self._stopped or self._explain(error, time_limit)) from None
        except MemoryError:
            raise QueryError(
                "too_large",
                "The query ran out of memory or is too complex (it compiles to too many "
                "instructions). Simplify it.",
            ) from None
        finally:
            self._deadline = math.inf
            if cursor is not None:
                cursor.close()
        return QueryResult(columns, tuple(rows))

    def _fetch(self, cursor: sqlite3.Cursor) -> list[tuple[Any, ...]]:
        """Rows in small batches, stopping as soon as a bound is passed: a result never holds
        more than one batch beyond ``max_rows`` or ``max_result_chars``."""
        rows: list[tuple[Any, ...]] = []
        size = 0
        while batch := cursor.fetchmany(_FETCH_BATCH):
            rows += batch
            size += sum(len(v) for row in batch for v in row if isinstance(v, (str, bytes)))
            if len(rows) > self.max_rows:
                raise QueryError(
                    "too_large",
                    f"The query returns more than {self.max_rows:,} rows; results are limited "
                    f"to {self.max_rows:,}. Add a WHERE clause, aggregate or LIMIT.",
                )
            if size > self.max_result_chars:
                raise QueryError(
                    "too_large",
                    f"The result holds more than {self.max_result_chars:,} characters of text "
                    "and blobs, the limit. Select fewer or shorter values.",
                )
        return rows

    def digest(self) -> str:
        """SHA-256 of the database's schema and every row (see :func:`database_digest`)."""
        return database_digest(self._connection)

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()
        self._reference.close()

    # ------------------------------------------------------------------ internals
    def _authorize(
        self, action: int, arg1: str | None, arg2: str | None, _db: str | None, _src: str | None
    ) -> int:
        if action in _ALWAYS_ALLOWED:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in ALLOWED_FUNCTIONS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION:
            self._denied.append(f"the function {arg2}()")
        elif action == sqlite3.SQLITE_PRAGMA:
            self._denied.append(f"PRAGMA {arg1}")
        elif action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master":
            # what SQLite checks when a statement first uses a table-valued function
            self._denied.append("a table-valued function (json_each, pragma_table_info, ...)")
        else:
            target = f" on {arg1}" if arg1 and action != sqlite3.SQLITE_ATTACH else ""
            self._denied.append(f"{_ACTIONS.get(action, f'operation {action}')}{target}")
        return sqlite3.SQLITE_DENY

    def _past_deadline(self) -> int:
        return 1 if time.perf_counter() > self._deadline else 0

    def _pattern_guard(self, name: str, arity: int, label: str) -> Callable[..., Any]:
        """The guard that stands in for SQLite's ``name`` with ``arity`` arguments (see the
        module's limits): it stops the statement past the deadline or over
        :data:`MAX_PATTERN_WORK`, else returns what SQLite's own function returns."""
        reference_sql = f"SELECT {name}({', '.join('?' * arity)})"

        def guard(*arguments: Any) -> Any:
            if time.perf_counter() > self._deadline:
                self._stopped = _timeout(self._time_limit)
                raise _Stopped
            first, second = (_text_length(value) for value in arguments[:2])
            if first * second > MAX_PATTERN_WORK:
                what = "pattern" if name in ("like", "glob") else "argument"
                self._stopped = QueryError(
                    "too_large",
                    f"Refused by the sandbox: {label} with a {first:,}-character {what} and a "
                    f"{second:,}-character value is too costly (the two lengths may multiply to "
                    f"at most {MAX_PATTERN_WORK:,}). Use shorter patterns or values.",
                )
                raise _Stopped
            try:
                return self._reference.execute(reference_sql, arguments).fetchone()[0]
            except sqlite3.Error as error:  # what SQLite's function raises (a bad ESCAPE, ...)
                self._stopped = QueryError("error", f"SQL error: {error}.")
                raise _Stopped from None

        return guard

    def _explain(self, error: sqlite3.Error | sqlite3.Warning, time_limit: float) -> QueryError:
        text = str(error)
        if "one statement" in text:  # a Warning before Python 3.12, then a ProgrammingError
            return QueryError(
                "refused", "Only one statement can run at a time; send a single SELECT statement."
            )
        if self._denied or "not authorized" in text or "readonly" in text:
            what = self._denied[0] if self._denied else "writing"
            return QueryError(
                "refused",
                f"Refused by the sandbox: {what} is not allowed. Only SELECT queries over the "
                "tables, with common functions, can run on this read-only database.",
            )
        if "interrupted" in text:
            return _timeout(time_limit)
        if "too big" in text or "too large" in text or "out of memory" in text:
            return QueryError("too_large", f"The query builds a value that is too large ({text}).")
        return QueryError("error", f"SQL error: {text}.")


class _Stopped(Exception):
    """Raised by a pattern guard to stop the statement (the reason is in ``_stopped``)."""


def _timeout(time_limit: float) -> QueryError:
    return QueryError(
        "timeout",
        f"The query was stopped after the time limit of {time_limit:g} s. "
        "Simplify it (avoid unbounded recursion and large cross joins).",
    )


def _text_length(value: Any) -> int:
    """How long ``value`` is as the text (or bytes) a pattern function compares."""
    if value is None:
        return 0
    if isinstance(value, (str, bytes)):
        return len(value)
    return len(repr(value))


def _is_encodable(sql: str) -> bool:
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return False
    return True


def _first_keyword(sql: str) -> str:
    """The statement's first keyword, upper-cased, after whitespace and comments ('' if none)."""
    start = _LEADING_NOISE.match(sql)
    match = _FIRST_WORD.match(sql, start.end() if start else 0)
    return match.group(0).upper() if match else ""


def database_digest(connection: sqlite3.Connection) -> str:
    """SHA-256 of a database's schema and of every row of every table, in rowid order.

    Uses plain ``SELECT`` statements only, so it also works through a sandbox's authorizer.
    """
    digest = hashlib.sha256()
    schema = connection.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
    ).fetchall()
    for entry in schema:
        digest.update(repr(entry).encode())
        if entry[0] == "table":
            rows = connection.execute(f'SELECT * FROM "{entry[1]}" ORDER BY rowid')
            for row in rows:
                digest.update(repr(row).encode())
    return digest.hexdigest()
