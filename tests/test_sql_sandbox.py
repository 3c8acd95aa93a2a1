"""SQL sandbox attack tests: hostile SQL is refused or stopped, and no database ever changes.

Each attack runs against three targets: the sandbox of a live ``SQL-v0`` environment (through
``env.step``), a sandbox over a private copy of a generated database, and a sandbox over a real
database file. After every attack the shared master databases, the sandbox's own copy and the
file (by content and by bytes) hash exactly as before, and no file appeared on disk.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmgym.envs.sql.databases import DOMAIN_NAMES, master_database, private_copy
from llmgym.envs.sql.sandbox import SqlSandbox, database_digest
from llmgym.errors import QueryError
from tests.stopwatch import Stopwatch


def _digests() -> dict[str, str]:
    return {name: database_digest(master_database(name)) for name in DOMAIN_NAMES}


MASTERS_BEFORE = _digests()
_PLAIN = sqlite3.connect(":memory:")
_GUARDED = SqlSandbox(sqlite3.connect(":memory:"))


def _attacks(tmp: Path) -> dict[str, tuple[str, str]]:
    """name -> (SQL, expected QueryError kind)."""
    target = tmp / "stolen.db"
    return {
        "drop table": ("DROP TABLE orders", "refused"),
        "delete": ("DELETE FROM orders", "refused"),
        "delete after comment": ("/* harmless */ -- really\nDELETE FROM orders", "refused"),
        "insert": ("INSERT INTO orders VALUES (9999, 1, '2024-01-01', 'x')", "refused"),
        "update": ("UPDATE orders SET status = 'hacked'", "refused"),
        "cte delete": ("WITH x AS (SELECT 1) DELETE FROM orders", "refused"),
        "cte insert": ("WITH x AS (SELECT 1) INSERT INTO orders SELECT * FROM orders", "refused"),
        "cte update": ("WITH x AS (SELECT 1) UPDATE orders SET status = 'x'", "refused"),
        "replace": ("REPLACE INTO orders VALUES (1, 1, '2024-01-01', 'x')", "refused"),
        "stacked statements": ("SELECT 1; DROP TABLE orders", "refused"),
        "stacked after comment": ("SELECT 1; -- fine\nDELETE FROM orders", "refused"),
        "attach file": (f"ATTACH DATABASE '{target}' AS stolen", "refused"),
        "attach memory": ("ATTACH ':memory:' AS scratch", "refused"),
        "vacuum into file": (f"VACUUM INTO '{target}'", "refused"),
        "vacuum": ("VACUUM", "refused"),
        "load extension": ("SELECT load_extension('/tmp/evil.so')", "refused"),
        "pragma query_only off": ("PRAGMA query_only = OFF", "refused"),
        "pragma writable schema": ("PRAGMA writable_schema = ON", "refused"),
        "pragma function": ("SELECT * FROM pragma_table_info('orders')", "refused"),
        "table-valued function": ("SELECT * FROM json_each('[1, 2]')", "refused"),
        "create temp table": ("CREATE TEMP TABLE t AS SELECT * FROM orders", "refused"),
        "create view": ("CREATE VIEW v AS SELECT 1", "refused"),
        "create trigger": (
            "CREATE TRIGGER t AFTER INSERT ON orders BEGIN DELETE FROM orders; END",
            "refused",
        ),
        "alter table": ("ALTER TABLE orders ADD COLUMN evil TEXT", "refused"),
        "transaction": ("BEGIN IMMEDIATE", "refused"),
        "analyze": ("ANALYZE", "refused"),
        "reindex": ("REINDEX", "refused"),
        "zeroblob": ("SELECT zeroblob(1000000000)", "refused"),
        "randomblob": ("SELECT randomblob(100000000)", "refused"),
        "printf width": ("SELECT printf('%.*c', 1000000000, 'x')", "refused"),
        "endless recursive cte": (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
            "SELECT count(*) FROM r",
            "timeout",
        ),
        "counting a huge cross join": (
            "SELECT count(*) FROM order_items a, order_items b, order_items c",
            "timeout",
        ),
        "millions of rows": ("SELECT * FROM order_items a, order_items b", "too_large"),
        "endless rows": (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
            "too_large",
        ),
        "very long sql": ("SELECT 1" + " + 1" * 5_000, "refused"),
        "deep nesting": ("SELECT " + "(" * 1500 + "1" + ")" * 1500, "error"),
        "nul byte": ("SELECT 1\x00; DROP TABLE orders", "error"),
        "lone surrogate": ("SELECT '\ud800'", "error"),
        "not sql": ("'; DROP TABLE users; --", "error"),
    }


@pytest.fixture
def file_database(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    connection = sqlite3.connect(path)
    master_database("retail").backup(connection)
    connection.close()
    return path


def _file_sandbox(path: Path) -> SqlSandbox:
    return SqlSandbox(sqlite3.connect(path), max_rows=1_000)


def _copy_sandbox() -> SqlSandbox:
    return SqlSandbox(private_copy("retail"), max_rows=1_000)


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_attacks_are_refused_and_nothing_changes(tmp_path: Path, file_database: Path) -> None:
    file_bytes = _file_hash(file_database)
    file_sandbox, copy_sandbox = _file_sandbox(file_database), _copy_sandbox()
    copy_before, file_before = copy_sandbox.digest(), file_sandbox.digest()
    for name, (sql, kind) in _attacks(tmp_path).items():
        for sandbox in (copy_sandbox, file_sandbox):
            watch = Stopwatch()
            with pytest.raises(QueryError) as caught:
                sandbox.execute(sql, time_limit=0.2)
            assert caught.value.kind == kind, f"{name}: {caught.value.kind} {caught.value}"
            assert watch.cpu < 2.0, f"{name} was not stopped in time"
            assert caught.value.message
        assert copy_sandbox.digest() == copy_before, f"{name} changed the sandbox copy"
        assert _file_hash(file_database) == file_bytes, f"{name} changed the database file"
        # the sandbox still answers after the attack
        assert copy_sandbox.execute("SELECT count(*) FROM orders").rows == ((1200,),)
    assert file_sandbox.digest() == file_before
    file_sandbox.close()
    assert _file_hash(file_database) == file_bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shop.db"], "a file was created"
    assert _digests() == MASTERS_BEFORE


def test_the_connection_is_locked_down_even_without_the_statement_gate(tmp_path: Path) -> None:
    """The authorizer and query_only hold on their own: statements sent straight to the
    connection handed to the sandbox (bypassing its statement gate) are still refused."""
    connection = sqlite3.connect(":memory:")
    master_database("retail").backup(connection)
    sandbox = SqlSandbox(connection)
    before = sandbox.digest()
    for sql in (
        "DELETE FROM orders",
        "DROP TABLE orders",
        "CREATE TABLE evil (x)",
        f"ATTACH '{tmp_path / 'a.db'}' AS a",
        f"VACUUM INTO '{tmp_path / 'b.db'}'",
        "PRAGMA query_only = OFF",
        "SELECT load_extension('x')",
    ):
        with pytest.raises(sqlite3.DatabaseError, match="not authorized|authorization denied"):
            connection.execute(sql)
    assert sandbox.digest() == before and list(tmp_path.iterdir()) == []
    connection.set_authorizer(lambda *_: sqlite3.SQLITE_OK)  # now only query_only stands guard
    for sql in ("DELETE FROM orders", "UPDATE orders SET status = 'x'", "CREATE TABLE e (x)"):
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            connection.execute(sql)
    assert sandbox.digest() == before


def test_refusals_name_what_was_refused() -> None:
    sandbox = _copy_sandbox()
    cases = {
        "DROP TABLE orders": "DROP statements are not allowed",
        "WITH x AS (SELECT 1) DELETE FROM orders": "DELETE on orders is not allowed",
        "SELECT load_extension('x')": "load_extension() is not allowed",
        "SELECT * FROM json_each('[1]')": "table-valued function",
        "SELECT 1; SELECT 2": "one statement",
        "SELECT" + " " * 10_001: "the limit is 10,000",
    }
    for sql, expected in cases.items():
        with pytest.raises(QueryError, match=expected.replace("(", r"\(").replace(")", r"\)")):
            sandbox.execute(sql)


def test_time_limit_is_enforced_per_statement() -> None:
    sandbox = _copy_sandbox()
    endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r"
    for limit in (0.05, 0.3):
        watch = Stopwatch()
        with pytest.raises(QueryError, match="time limit") as caught:
            sandbox.execute(endless, time_limit=limit)
        assert caught.value.kind == "timeout"
        assert watch.wall >= limit and watch.cpu < limit + 0.5 and watch.wall < 10
    # the next statement gets a fresh budget
    assert sandbox.execute("SELECT count(*) FROM customers", time_limit=0.05).rows == ((300,),)


def test_result_bounds() -> None:
    sandbox = _copy_sandbox()
    assert len(sandbox.execute("SELECT * FROM order_items LIMIT 1000").rows) == 1000
    with pytest.raises(QueryError, match="more than 1,000 rows"):
        sandbox.execute("SELECT * FROM order_items LIMIT 1001")
    wide = SqlSandbox(sqlite3.connect(":memory:"), max_result_chars=100)
    with pytest.raises(QueryError, match="characters of text and blobs") as caught:
        wide.execute("SELECT 'xxxxxxxxxx' FROM (VALUES (1), (2), (3), (4), (5)) AS a, "
                     "(VALUES (1), (2), (3)) AS b")  # fmt: skip
    assert caught.value.kind == "too_large"


def test_an_endless_stream_of_big_values_stops_at_the_size_bound() -> None:
    sandbox = _copy_sandbox()
    endless = (
        "WITH RECURSIVE s(x) AS (SELECT 'a' UNION ALL SELECT x || x FROM s "
        "WHERE length(x) < 65536), r(n, x) AS (SELECT 1, (SELECT max(x) FROM s) "
        "UNION ALL SELECT n + 1, x FROM r) SELECT x FROM r"
    )
    watch = Stopwatch()
    with pytest.raises(QueryError, match="more than 1,000,000 characters") as caught:
        sandbox.execute(endless, time_limit=10.0)
    assert caught.value.kind == "too_large"
    assert watch.cpu < 1.0


@pytest.mark.skipif(sys.version_info < (3, 11), reason="sqlite3.Connection.setlimit is 3.11+")
def test_string_bombs_hit_the_length_limit() -> None:
    sandbox = _copy_sandbox()
    doubling = "WITH RECURSIVE r(s) AS (SELECT 'ab' UNION ALL SELECT s || s FROM r) SELECT s FROM r"
    watch = Stopwatch()
    with pytest.raises(QueryError, match="too large") as caught:
        sandbox.execute(doubling, time_limit=5.0)
    assert caught.value.kind == "too_large"
    assert watch.cpu < 1.0


def test_reads_that_are_allowed() -> None:
    sandbox = _copy_sandbox()
    assert sandbox.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").rows == (
        (5,),
    )
    assert sandbox.execute("VALUES (1, 'a')").rows == ((1, "a"),)
    result = sandbox.execute(
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
        "SELECT group_concat(n, '-'), upper('x'), round(2.345, 2), strftime('%Y', '2024-03-01') "
        "FROM r"
    )
    assert result.rows == (("1-2-3-4-5", "X", 2.35, "2024"),)
    assert result.columns[1] == "upper('x')"


def test_environment_steps_with_hostile_sql_leave_every_database_unchanged(
    tmp_path: Path,
) -> None:
    env = gym.make("llmgym/SQL-v0", database="retail", time_limit_ms=300).unwrapped
    env.reset(seed=0, options={"split": "train"})
    own_copy = env._sandbox().digest()
    for name, (sql, kind) in _attacks(tmp_path).items():
        for action in (f"```sql\n{sql}\n```", f"Action: {sql}"):
            observation, reward, terminated, _, info = env.step(action)
            expected = {kind}
            if name == "not sql" and action.startswith("Action"):
                expected = {"no_query"}  # no line starts with an SQL keyword
            if kind == "too_large":  # 10,000 rows: on a busy machine the clock may win
                expected.add("timeout")
            assert info["invalid_action"] and not terminated and reward == 0.0, name
            assert info["query_status"] in expected, (name, info["query_status"], observation)
    assert env._sandbox().digest() == own_copy
    assert _digests() == MASTERS_BEFORE
    assert list(tmp_path.iterdir()) == []
    observation, reward, terminated, _, info = env.step(env.oracle_action())
    assert terminated and reward == 1.0 and info["success"]


# ---------------------------------------------------------------------------- bounded work
_LONG_VALUES = (  # a 98,536-character value and a 50,000-character pattern over it
    "WITH RECURSIVE d(s) AS (SELECT 'a' UNION ALL SELECT s || s FROM d WHERE length(s) < 65536), "
    "v(s) AS (SELECT s || substr(s, 1, 33000) FROM d WHERE length(s) = 65536), "
    "p(q) AS (SELECT '%' || substr(s, 1, 49998) || 'b' FROM v) "
)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="sqlite3.Connection.setlimit is 3.11+")
@pytest.mark.parametrize(
    "condition",
    [
        "v.s LIKE p.q OR v.s LIKE p.q OR v.s LIKE p.q",
        "v.s GLOB '*' || substr(p.q, 2) OR v.s GLOB '*' || substr(p.q, 2)",
        "v.s LIKE p.q ESCAPE 'x'",
        "instr(v.s || 'b', substr(p.q, 2)) > 0",
        "ltrim(v.s, upper(substr(p.q, 2, 5000)) || 'a') = ''"
        " OR rtrim(v.s, upper(substr(p.q, 2, 5000)) || 'a') = ''",
    ],
    ids=["like", "glob", "like escape", "instr", "trim"],
)
def test_pattern_matching_on_long_values_obeys_the_time_limit(condition: str) -> None:
    """SQLite checks the deadline between instructions, never inside one LIKE: each of these
    ran for seconds (three LIKE terms: 15 s under a 0.3 s limit) before the pattern guards."""
    sandbox = _copy_sandbox()
    watch = Stopwatch()
    with pytest.raises(QueryError) as caught:
        sandbox.execute(
            _LONG_VALUES + f"SELECT count(*) FROM v, p WHERE {condition}", time_limit=0.3
        )
    assert watch.cpu < 0.6 and watch.wall < 10
    assert caught.value.kind in ("too_large", "timeout"), caught.value.message
    assert sandbox.execute("SELECT count(*) FROM customers WHERE city LIKE '%a%'").rows


def test_many_pattern_calls_under_the_work_bound_stop_at_the_time_limit() -> None:
    """Calls just under the work bound, many between two progress-handler checks: the guards
    check the deadline before every call."""
    sandbox = _copy_sandbox()
    pattern = "'%' || substr(v.s, 1, 99) || 'b'"
    sql = _LONG_VALUES + "SELECT count(*) FROM v WHERE " + " OR ".join([f"v.s LIKE {pattern}"] * 60)
    for limit in (0.1, 0.5):  # the whole query takes about 1.8 s of CPU
        watch = Stopwatch()
        with pytest.raises(QueryError, match="time limit"):
            sandbox.execute(sql, time_limit=limit)
        assert watch.cpu < 2 * limit and watch.wall < 10


def test_pattern_functions_answer_as_sqlite_does() -> None:
    """The guards return exactly what SQLite's own functions return, errors included."""
    plain = sqlite3.connect(":memory:")
    master_database("retail").backup(plain)
    sandbox = _copy_sandbox()
    expressions = [
        "'abc' LIKE 'A%'", "'abc' LIKE 'a_c'", "'ÄBC' LIKE 'äbc'", "'a%c' LIKE 'a\\%c' ESCAPE '\\'",
        "'abc' GLOB 'a*'", "'abc' GLOB 'A*'", "'b' GLOB '[a-c]'", "'x' GLOB '[^a-c]'",
        "12 LIKE '1%'", "1.5 LIKE '1.5'", "x'6162' LIKE 'ab'", "NULL LIKE 'a'", "'a' LIKE NULL",
        "instr('hello', 'l')", "instr(x'00ff41', x'41')", "instr(12345, 34)", "instr(NULL, 'a')",
        "instr('héllo', 'l')", "trim('xxaxx', 'x')", "ltrim('  a  ', ' ')", "rtrim('abcc', 'c')",
        "trim(x'0041', x'00')", "trim(120.0, '0')", "rtrim('aé', 'é')", "trim(NULL, 'a')",
        "trim('abc')", "ltrim(' a')",
    ]  # fmt: skip
    for expression in expressions:
        sql = f"SELECT {expression}"
        assert sandbox.execute(sql).rows == tuple(plain.execute(sql).fetchall()), expression
    table = (
        "SELECT first_name LIKE '%an%', city GLOB '*o*', instr(email, '.'), "
        "trim(last_name, 'aeiou') FROM customers ORDER BY customer_id"
    )
    assert sandbox.execute(table).rows == tuple(plain.execute(table).fetchall())
    with pytest.raises(QueryError, match="ESCAPE expression must be a single character"):
        sandbox.execute("SELECT 'a' LIKE 'a' ESCAPE 'xy'")


_PATTERN_TEXT = st.text(alphabet="aAbB%_*?[]^-\\xé 1", max_size=12)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_PATTERN_TEXT, _PATTERN_TEXT)
def test_pattern_guards_agree_with_sqlite_on_any_text(first: str, second: str) -> None:
    a, b = (f"'{text.replace(chr(39), chr(39) * 2)}'" for text in (first, second))
    expressions = (
        f"{b} LIKE {a}", f"{b} LIKE {a} ESCAPE '\\'", f"{b} GLOB {a}", f"instr({a}, {b})",
        f"trim({a}, {b})", f"ltrim({a}, {b})", f"rtrim({a}, {b})",
    )  # fmt: skip
    sql = f"SELECT {', '.join(expressions)}"
    try:
        expected: object = tuple(_PLAIN.execute(sql).fetchall())
    except sqlite3.Error as error:
        expected = str(error)
    try:
        got: object = _GUARDED.execute(sql).rows
    except QueryError as error:
        got = error.message.removeprefix("SQL error: ").removesuffix(".")
    assert got == expected, sql


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads the RSS from /proc")
def test_the_statement_cache_is_bounded() -> None:
    """Every distinct statement used to stay compiled (1,024 per database copy, some hundreds
    of KB each): 400 wide queries grew a session by about 80 MB."""
    sandbox = _copy_sandbox()
    subqueries = ", ".join(
        f"(SELECT max(order_id) FROM orders WHERE order_id > {j})" for j in range(120)
    )
    sandbox.execute(f"SELECT -1, {subqueries}")
    before = _resident_megabytes()
    for i in range(400):
        sandbox.execute(f"SELECT {i}, {subqueries}")
    assert _resident_megabytes() - before < 30


def _resident_megabytes() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
