"""What reading BIRD's layout costs SQL-v0 (``source="bird"``), at the size of BIRD's files.

    python benchmarks/bird_loading.py        # writes benchmarks/results/bird_loading.json

BIRD's data cannot ship with llmgym, so the script writes a directory in BIRD's layout itself:
as many questions and databases as the release has (train 9,428 questions over 69 databases,
dev 1,534 over 11), each question with text, evidence and gold SQL of about BIRD's lengths and
the token lists BIRD's files carry (``question_toks``, ``SQL_toks``, ``evidence_toks``), each
database a small sqlite file (three tables, 200 rows each; BIRD's are up to gigabytes, so the
database figures here are a lower bound, and the question-file figures are the real cost). It
then times, on one core: the first parse of both question files (``load_bird``, once per
process), a cached call, ``llmgym data check`` (which also opens every database), making the
environment, a first reset on a database (its schema read from the file) and a second one, and
a step that runs the gold query (the sandbox, then BIRD's gold result, computed once).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
from bench_utils import pin_to_one_core, write_json

from llmgym.cli import format_table
from llmgym.envs.sql.bird import BirdSource, load_bird

SPLITS = {"train": (9_428, 69), "dev": (1_534, 11)}
"""BIRD's questions and databases per split: the questions as AgentGym's ``ITEM_RANGE`` counts
them, the databases as BIRD's paper does (dev's 11 also counted in BIRD's ``dev.json``)."""
ROWS = 200


def _database(path: Path, number: int) -> None:
    path.parent.mkdir(parents=True)
    connection = sqlite3.connect(path)
    connection.executescript(
        "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, city TEXT, born TEXT);"
        "CREATE TABLE events (id INTEGER PRIMARY KEY, person INTEGER REFERENCES people(id), "
        "kind TEXT, amount REAL, `event date` TEXT);"
        "CREATE TABLE places (city TEXT PRIMARY KEY, country TEXT, population INTEGER);"
    )
    connection.executemany(
        "INSERT INTO people VALUES (?, ?, ?, ?)",
        [(i, f"name {i}", f"city {i % 20}", f"19{i % 90 + 10}-01-01") for i in range(ROWS)],
    )
    connection.executemany(
        "INSERT INTO events VALUES (?, ?, ?, ?, ?)",
        [(i, i % ROWS, f"kind {i % 7}", i * 1.5 + number, "2020-01-01") for i in range(ROWS)],
    )
    connection.executemany(
        "INSERT INTO places VALUES (?, ?, ?)",
        [(f"city {i}", f"country {i % 5}", 1000 * i) for i in range(ROWS)],
    )
    connection.commit()
    connection.close()


def _question(split: str, index: int, db_id: str) -> dict[str, object]:
    item: dict[str, object] = {
        "db_id": db_id,
        "question": f"How many events of kind {index % 7} did people living in city "
        f"{index % 20} have, counting only events after their birth (question {index})?",
        "evidence": f"kind {index % 7} refers to kind = 'kind {index % 7}'; living in city "
        f"{index % 20} refers to city = 'city {index % 20}'",
        "SQL": f"SELECT COUNT(T2.id) FROM people AS T1 INNER JOIN events AS T2 ON T1.id = "
        f"T2.person WHERE T2.kind = 'kind {index % 7}' AND T1.city = 'city {index % 20}' AND "
        f"T2.`event date` > T1.born",
    }
    for field, key in (
        ("question", "question_toks"),
        ("SQL", "SQL_toks"),
        ("evidence", "evidence_toks"),
    ):
        item[key] = str(item[field]).split()  # as BIRD's files (2023 release) carry them
    if split == "dev":
        item = {"question_id": index, **item, "difficulty": "moderate"}
    return item


def write_layout(root: Path) -> None:
    """BIRD's layout at BIRD's size: ``train/`` and ``dev_20240627/`` (see the module)."""
    for split, (questions, databases) in SPLITS.items():
        folder = root / (split if split == "train" else "dev_20240627")
        names = [f"{split}_db_{n:02d}" for n in range(databases)]
        for number, name in enumerate(names):
            _database(folder / f"{split}_databases" / name / f"{name}.sqlite", number)
        items = [_question(split, i, names[i % databases]) for i in range(questions)]
        (folder / f"{split}.json").write_text(json.dumps(items, indent=4))


def _timed(action) -> tuple[float, object]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", default="benchmarks/results/bird_loading.json")
    args = parser.parse_args(argv)
    pin_to_one_core()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_layout(root)
        sizes = {p.name: p.stat().st_size for p in root.rglob("*.json")}
        rows = []
        seconds, _ = _timed(lambda: load_bird(root))
        rows.append({"what": "first load_bird (parse both files)", "ms": seconds * 1e3})
        seconds, _ = _timed(lambda: load_bird(root))
        rows.append({"what": "cached load_bird", "ms": seconds * 1e3})
        seconds, report = _timed(lambda: BirdSource().check(root))
        rows.append({"what": "llmgym data check (opens 80 databases)", "ms": seconds * 1e3})
        config = {"source": "bird", "data_dir": str(root)}
        seconds, env = _timed(lambda: gym.make("llmgym/SQL-v0", config=config).unwrapped)
        rows.append({"what": "make the environment", "ms": seconds * 1e3})
        for label in ("first reset on a database", "second reset, same database"):
            seconds, _ = _timed(lambda: env.reset(options={"task_id": "eval/00000"}))
            rows.append({"what": label, "ms": seconds * 1e3})
        seconds, step = _timed(lambda: env.step(env.oracle_action()))
        assert step[1] == 1.0, step
        rows.append({"what": "step with the gold query (first grading)", "ms": seconds * 1e3})
        env.close()
    for row in rows:
        row["ms"] = round(row["ms"], 2)
    print(format_table(rows, ["what", "ms"]))
    payload = {
        "benchmark": "bird_loading",
        "questions": {split: count for split, (count, _) in SPLITS.items()},
        "databases": {split: count for split, (_, count) in SPLITS.items()},
        "file_bytes": sizes,
        "splits_found": dict(report.splits),  # type: ignore[attr-defined]
        "results": rows,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
