"""What the SQL sandbox costs: every gold query of SQL-v0, run through ``SqlSandbox.execute``
and through a plain ``sqlite3`` connection to the same in-memory copy, in the same run.

    python benchmarks/sql_sandbox.py                 # writes benchmarks/results/sql_sandbox.json

Both sides use a statement cache larger than the question set, fetch every row, and are timed
on one core; each figure is the best of ``--repeats`` passes over all questions. The sandbox
adds the statement gate, the authorizer (at prepare time), the progress handler that enforces
the time limit, and row-by-row fetching under the size bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import time
from pathlib import Path

import llmgym
from llmgym.cli import format_table
from llmgym.envs.sql.databases import DOMAIN_NAMES, private_copy
from llmgym.envs.sql.questions import all_questions
from llmgym.envs.sql.sandbox import SqlSandbox


def _best_pass(run, queries: list[tuple[str, str]], repeats: int) -> float:
    """Seconds of the fastest pass over ``queries`` (``run(database, sql)`` per query)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for database, sql in queries:
            run(database, sql)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="passes over all questions")
    parser.add_argument("--json", default="benchmarks/results/sql_sandbox.json")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    queries = [(q.database, q.sql) for q in all_questions()]
    plain = {name: private_copy(name) for name in DOMAIN_NAMES}
    sandboxes = {name: SqlSandbox(private_copy(name)) for name in DOMAIN_NAMES}
    for database, sql in queries:  # warm both statement caches
        plain[database].execute(sql).fetchall()
        sandboxes[database].execute(sql)
    raw = _best_pass(lambda d, q: plain[d].execute(q).fetchall(), queries, args.repeats)
    guarded = _best_pass(lambda d, q: sandboxes[d].execute(q), queries, args.repeats)
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
        "machine": {
            "python": platform.python_version(),
            "processor": platform.machine(),
            "sqlite": sqlite3.sqlite_version,
            "cores_used": 1,
        },
        "llmgym_version": llmgym.__version__,
        "queries": len(queries),
        "repeats": args.repeats,
        "results": rows,
        "sandbox_over_plain": ratio,
    }
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
