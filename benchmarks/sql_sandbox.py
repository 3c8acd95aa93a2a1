"""What the SQL sandbox costs: every gold query of SQL-v0, run through ``SqlSandbox.execute``
and through a plain ``sqlite3`` connection to the same in-memory copy, in the same run.

    python benchmarks/sql_sandbox.py                 # writes benchmarks/results/sql_sandbox.json

Both sides use the private copies' statement cache (``CACHED_STATEMENTS``, fewer than a
database has questions, so most queries are parsed again) and fetch every row, on one core,
with their passes interleaved so that both see the same machine. Time is the thread's CPU
time (``time.thread_time``), so other processes competing for the core do not count; each figure
is the best of ``--repeats`` passes over all questions. The sandbox adds the statement gate, the
authorizer (at prepare time), the progress handler that enforces the time limit, the pattern
guards (no gold query calls them) and batched fetching under the size bounds.
"""

from __future__ import annotations

import argparse
import sys
import time

from bench_utils import pin_to_one_core, write_json

from llmgym.cli import format_table
from llmgym.envs.sql.databases import DOMAIN_NAMES, private_copy
from llmgym.envs.sql.questions import all_questions
from llmgym.envs.sql.sandbox import SqlSandbox


def _pass(run, queries: list[tuple[str, str]]) -> float:
    """CPU seconds of one pass over ``queries`` (``run(database, sql)`` per query)."""
    start = time.thread_time()
    for database, sql in queries:
        run(database, sql)
    return time.thread_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20, help="passes over all questions")
    parser.add_argument("--json", default="benchmarks/results/sql_sandbox.json")
    args = parser.parse_args(argv)
    pin_to_one_core()
    queries = [(q.database, q.sql) for q in all_questions()]
    plain = {name: private_copy(name) for name in DOMAIN_NAMES}
    sandboxes = {name: SqlSandbox(private_copy(name)) for name in DOMAIN_NAMES}
    for database, sql in queries:  # one warm-up pass on each side
        plain[database].execute(sql).fetchall()
        sandboxes[database].execute(sql)
    raw = guarded = float("inf")
    for _ in range(args.repeats):
        raw = min(raw, _pass(lambda d, q: plain[d].execute(q).fetchall(), queries))
        guarded = min(guarded, _pass(lambda d, q: sandboxes[d].execute(q), queries))
    rows = [
        {
            "side": "sqlite3 (no guards)",
            "queries_per_s": len(queries) / raw,
            "mean_us": raw / len(queries) * 1e6,
        },
        {
            "side": "SqlSandbox",
            "queries_per_s": len(queries) / guarded,
            "mean_us": guarded / len(queries) * 1e6,
        },
    ]
    ratio = guarded / raw
    print(
        format_table(
            [{k: (round(v) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
            ["side", "queries_per_s", "mean_us"],
        )
    )
    print(f"sandbox time / plain time: {ratio:.2f} over {len(queries)} gold queries")
    payload = {
        "benchmark": "sql_sandbox",
        "queries": len(queries),
        "repeats": args.repeats,
        "results": rows,
        "sandbox_over_plain": ratio,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
