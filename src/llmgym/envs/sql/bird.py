"""BIRD-SQL, read from the directory its authors publish (``source="bird"`` of ``llmgym/SQL-v0``).

BIRD (https://bird-bench.github.io/) ships ``train.zip`` and ``dev.zip``; each holds the split's
questions (``train.json``, ``dev.json``: a list of ``{question_id, db_id, question, evidence,
SQL, difficulty}``, the last two fields only in dev) and a second zip of its databases, which
unzips to ``<split>_databases/<db_id>/<db_id>.sqlite`` (with ``database_description/*.csv``
beside each). ``train.zip`` unzips to ``train/``; ``dev.zip`` to a dated folder
(``dev_20240627/`` in the current release) that AgentGym's ``setup.sh`` expects as ``dev/``.
:func:`load_bird` accepts either, a directory that holds only one of the two splits, or the
split's folder itself.

The questions are parsed once per process (cached on the resolved path and the files' sizes and
modification times). Databases are opened read-only (``mode=ro``), never copied: BIRD's are up
to gigabytes. Gold results are computed by running the gold ``SQL`` on its own read-only
connection, as BIRD's ``evaluation.py`` does, within BIRD's time limit of 30 seconds.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmgym.core.cache import bounded_cache
from llmgym.envs.sql.databases import CACHED_STATEMENTS
from llmgym.envs.sql.sandbox import QueryResult
from llmgym.errors import DataError
from llmgym.originals import DataReport, OriginalSource, missing_data

__all__ = [
    "GOLD_TIME_LIMIT",
    "SPLITS",
    "BirdData",
    "BirdQuestion",
    "BirdSource",
    "BirdTable",
    "GoldResult",
    "database_tables",
    "gold_result",
    "load_bird",
    "open_read_only",
    "question_prompt",
    "quote_identifier",
]

SPLITS: dict[str, str] = {"train": "train", "dev": "eval"}
"""BIRD's splits and the llmgym split each becomes, in AgentGym's order (train first)."""
GOLD_TIME_LIMIT = 30.0
"""Seconds a gold query may run: BIRD's ``meta_time_out`` (``run/run_evaluation.sh``)."""
_SQLITE_HEADER = b"SQLite format 3\x00"
_DATED = re.compile(r"(?P<split>train|dev)_[0-9]{8}")
_PROGRESS_INTERVAL = 10_000


@dataclass(frozen=True)
class BirdQuestion:
    """One BIRD item.

    Attributes:
        split: The llmgym split (``"train"`` or ``"eval"``).
        index: Its position in the split's file (the task id's number).
        db_id: The database's name.
        question: The question.
        evidence: BIRD's external knowledge for it (``""`` where BIRD has none).
        sql: The gold query (BIRD's ``SQL``).
        difficulty: ``simple``, ``moderate`` or ``challenging`` (dev); ``""`` in train.
        question_id: BIRD's ``question_id`` (dev), else ``None``.
        database: The sqlite file.
    """

    split: str
    index: int
    db_id: str
    question: str
    evidence: str
    sql: str
    difficulty: str
    question_id: int | None
    database: Path


@dataclass(frozen=True)
class _SplitFiles:
    """Where one BIRD split lies: ``folder/<split>.json`` and ``folder/<split>_databases/``."""

    original: str
    folder: Path

    @property
    def questions(self) -> Path:
        return self.folder / f"{self.original}.json"

    @property
    def databases(self) -> Path:
        return self.folder / f"{self.original}_databases"

    def stamp(self) -> tuple[Any, ...]:
        """What changes when the split's files change (sizes and modification times)."""
        questions, databases = self.questions.stat(), self.databases.stat()
        return (
            self.original,
            str(self.folder),
            questions.st_size,
            questions.st_mtime_ns,
            databases.st_mtime_ns,
        )


@dataclass(frozen=True)
class BirdData:
    """The BIRD splits found in a directory.

    Attributes:
        data_dir: The directory (absolute).
        splits: The questions of each llmgym split found (train before eval).
        files: The questions file of each llmgym split found.
    """

    data_dir: Path
    splits: dict[str, tuple[BirdQuestion, ...]]
    files: dict[str, Path]

    def questions(self, split: str) -> tuple[BirdQuestion, ...]:
        """The questions of llmgym split ``split`` in file order (``()`` where it is absent)."""
        return self.splits.get(split, ())


def load_bird(data_dir: Path) -> BirdData:
    """The BIRD questions in ``data_dir`` (see the module's layouts), parsed once per process.

    Raises:
        DataError: No split is there, or a file is missing or does not read as BIRD's; the
            message names the path and what was expected.
    """
    root = Path(data_dir).expanduser().resolve()
    found = [files for original in SPLITS if (files := _find_split(root, original))]
    if not found:
        raise DataError(_nothing_found(root))
    for files in found:
        _check_databases_folder(files)
    return _parse(root, tuple(files.stamp() for files in found))


def _find_split(root: Path, original: str) -> _SplitFiles | None:
    """The folder holding ``<original>.json``: ``root`` itself, ``root/<original>`` or the
    newest dated release folder (``root/dev_20240627``)."""
    for folder in (root, root / original):
        if (folder / f"{original}.json").is_file():
            return _SplitFiles(original, folder)
    dated = sorted(
        path
        for path in root.glob(f"{original}_*")
        if _DATED.fullmatch(path.name) and (path / f"{original}.json").is_file()
    )
    return _SplitFiles(original, dated[-1]) if dated else None


def _nothing_found(root: Path) -> str:
    zips = [name for name in ("train.zip", "dev.zip") if (root / name).is_file()]
    if zips:
        hint = f"; {' and '.join(zips)} {'is' if len(zips) == 1 else 'are'} still zipped: unzip "
        hint += "them here, then each <split>_databases.zip in its folder"
    else:
        hint = " (llmgym data fetch bird DIR gets them)"
    return (
        f"{root}: no BIRD split found: expected train/train.json or dev/dev.json (dev.zip "
        f"unzips to a dated folder such as dev_20240627/dev.json), each beside its "
        f"<split>_databases/ folder, or this folder holding train.json or dev.json{hint}"
    )


def _check_databases_folder(files: _SplitFiles) -> None:
    if files.databases.is_dir():
        return
    archive = files.folder / f"{files.original}_databases.zip"
    if archive.is_file():
        raise DataError(
            f"{files.databases}: the databases are still zipped: run "
            f"'unzip {archive.name}' in {files.folder}"
        )
    raise missing_data(
        files.databases,
        f"the folder of {files.original} databases (<db_id>/<db_id>.sqlite)",
        "bird",
    )


@bounded_cache(8)
def _parse(root: Path, stamps: tuple[tuple[Any, ...], ...]) -> BirdData:
    splits: dict[str, tuple[BirdQuestion, ...]] = {}
    files: dict[str, Path] = {}
    for stamp in stamps:
        split_files = _SplitFiles(stamp[0], Path(stamp[1]))
        split = SPLITS[split_files.original]
        splits[split] = _read_questions(split_files, split)
        files[split] = split_files.questions
    return BirdData(root, splits, files)


def _read_questions(files: _SplitFiles, split: str) -> tuple[BirdQuestion, ...]:
    path = files.questions
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(
            f"{path}: does not read as BIRD's JSON list of questions ({error})"
        ) from None
    if not isinstance(items, list):
        raise DataError(f"{path}: expected a JSON list of questions, found {type(items).__name__}")
    databases: dict[str, Path] = {}
    questions = []
    for index, item in enumerate(items):
        where = f"{path}: question {index}"
        if not isinstance(item, dict):
            raise DataError(f"{where}: expected an object, found {type(item).__name__}")
        db_id = _text(item, "db_id", where)
        if db_id in (".", "..") or "/" in db_id or "\\" in db_id:
            raise DataError(f"{where}: db_id {db_id!r} is not a database folder's name")
        if db_id not in databases:
            databases[db_id] = _database_file(files.databases, db_id)
        question_id = item.get("question_id")
        if question_id is not None and (type(question_id) is not int):
            raise DataError(f"{where}: question_id must be an integer, found {question_id!r}")
        questions.append(
            BirdQuestion(
                split=split,
                index=index,
                db_id=db_id,
                question=_text(item, "question", where),
                evidence=_text(item, "evidence", where, required=False),
                sql=_text(item, "SQL", where),
                difficulty=_text(item, "difficulty", where, required=False),
                question_id=question_id,
                database=databases[db_id],
            )
        )
    return tuple(questions)


def _text(item: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = item.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        found = "nothing" if value is None else repr(value)[:80]
        what = "a non-empty string" if required else "a string"
        raise DataError(f"{where}: {key!r} must be {what}, found {found}")
    return value


def _database_file(databases: Path, db_id: str) -> Path:
    path = databases / db_id / f"{db_id}.sqlite"
    try:
        with path.open("rb") as file:
            header = file.read(len(_SQLITE_HEADER))
    except FileNotFoundError:
        raise missing_data(path, f"database {db_id!r}, which questions name,", "bird") from None
    except OSError as error:
        raise DataError(f"{path}: cannot be read ({error.strerror})") from None
    if header != _SQLITE_HEADER:
        raise DataError(
            f"{path}: is not an SQLite database (a truncated download or a Git LFS pointer?)"
        )
    return path


def open_read_only(database: Path) -> sqlite3.Connection:
    """A read-only connection to a sqlite file: SQLite refuses every write (``mode=ro``), and
    opening creates no file beside it."""
    return sqlite3.connect(
        f"{database.as_uri()}?mode=ro",
        uri=True,
        check_same_thread=False,
        cached_statements=CACHED_STATEMENTS,
    )


@dataclass(frozen=True)
class GoldResult:
    """The gold query's result as BIRD compares it (a set of rows), or why it has none."""

    rows: frozenset[tuple[Any, ...]]
    error: str = ""


def gold_result(question: BirdQuestion) -> GoldResult:
    """The set of rows the gold query returns (computed once per process, per query and
    database version), run as BIRD's ``evaluation.py`` runs it: plain sqlite, no sandbox,
    within :data:`GOLD_TIME_LIMIT`."""
    stat = question.database.stat()
    return _gold(question.database, question.sql, stat.st_size, stat.st_mtime_ns)


@bounded_cache(256)
def _gold(database: Path, sql: str, _size: int, _mtime: int) -> GoldResult:
    deadline = time.perf_counter() + GOLD_TIME_LIMIT
    connection = open_read_only(database)
    connection.set_progress_handler(lambda: int(time.perf_counter() > deadline), _PROGRESS_INTERVAL)
    connection.set_authorizer(_no_other_files)
    try:
        return GoldResult(frozenset(connection.execute(sql).fetchall()))
    except (sqlite3.Error, sqlite3.Warning) as error:  # Warning: several statements (< 3.12)
        if "interrupted" in str(error):
            return GoldResult(frozenset(), f"it ran past BIRD's limit of {GOLD_TIME_LIMIT:g} s")
        return GoldResult(frozenset(), f"SQL error: {error}")
    finally:
        connection.close()


def _no_other_files(action: int, *_: str | None) -> int:
    """The gold query's authorizer: it runs unrestricted, as in BIRD, but on its own database
    only (the file is read-only already; ``ATTACH`` would open another)."""
    return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_ATTACH else sqlite3.SQLITE_OK


class BirdSource(OriginalSource):
    """BIRD-SQL's train and dev splits, played by ``llmgym/SQL-v0``."""

    name = "bird"
    env_id = "llmgym/SQL-v0"
    title = "BIRD-SQL (train 9,428 questions, dev 1,534)"
    homepage = "https://bird-bench.github.io/"
    license = "CC BY-SA 4.0 (BIRD's README; earlier releases said CC BY-NC 4.0)"
    fetch_commands = (
        "wget -c https://bird-bench.oss-cn-beijing.aliyuncs.com/train.zip",
        "unzip -o train.zip && (cd train && unzip -o train_databases.zip)",
        "wget -c https://bird-bench.oss-cn-beijing.aliyuncs.com/dev.zip",
        'unzip -o dev.zip && for d in dev dev_*; do if [ -f "$d/dev_databases.zip" ]; then '
        '(cd "$d" && unzip -o dev_databases.zip) || exit 1; fi; done',
    )
    layout = "\n".join(
        (
            "train/train.json",
            "train/train_databases/<db_id>/<db_id>.sqlite",
            "dev_20240627/dev.json        (or dev/dev.json)",
            "dev_20240627/dev_databases/<db_id>/<db_id>.sqlite",
        )
    )
    env_var = "AGENTENV_SQLGYM_BIRD_PATH"
    agentgym_family = "sqlgym"

    def check(self, data_dir: Path) -> DataReport:
        data = load_bird(data_dir)
        found = []
        for split, questions in data.splits.items():
            path = data.files[split]
            databases = sorted({q.database for q in questions})
            for database in databases:
                _count_tables(database)
            levels = Counter(q.difficulty for q in questions if q.difficulty)
            by_level = ", ".join(f"{level} {n:,}" for level, n in sorted(levels.items()))
            shown = path.relative_to(data.data_dir) if path.is_relative_to(data.data_dir) else path
            found.append(
                f"{shown}: {len(questions):,} questions"
                + (f" ({by_level})" if by_level else "")
                + f", {sum(1 for q in questions if q.evidence):,} with evidence, over "
                f"{len(databases)} databases -> llmgym split {split!r}"
            )
        return DataReport(
            self.name, str(data.data_dir), {s: len(q) for s, q in data.splits.items()}, tuple(found)
        )

    def agentgym_task_ids(self, data_dir: Path) -> Sequence[str]:
        """AgentGym's sqlgym numbering: train's items first (0-9,427 in the full release),
        then dev's (9,428-10,961), each in file order."""
        data = load_bird(data_dir)
        ids: list[str] = []
        for split in SPLITS.values():
            ids += [f"{split}/{i:05d}" for i in range(len(data.questions(split)))]
        return ids


def _count_tables(database: Path) -> int:
    connection = open_read_only(database)
    try:
        (count,) = connection.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
        ).fetchone()
    except sqlite3.Error as error:
        raise DataError(f"{database}: cannot be read as an SQLite database ({error})") from None
    finally:
        connection.close()
    if not count:
        raise DataError(f"{database}: holds no tables")
    return int(count)


@dataclass(frozen=True)
class BirdTable:
    """One table of a BIRD database, read from the sqlite file.

    Attributes:
        name: The table's name.
        create: Its ``CREATE TABLE`` statement as the file stores it.
        columns: Its columns' names.
        primary_key: The primary key's columns.
        foreign_keys: ``(column, referenced table, referenced column)`` for each reference.
        examples: Its first rows (as many as asked for).
    """

    name: str
    create: str
    columns: tuple[str, ...]
    primary_key: tuple[str, ...]
    foreign_keys: tuple[tuple[str, str, str], ...]
    examples: QueryResult


def database_tables(database: Path, sample_rows: int) -> tuple[BirdTable, ...]:
    """The tables of a BIRD database in the file's order (as BIRD's prompts list them),
    without SQLite's internal ``sqlite_*`` tables, each with its first ``sample_rows`` rows."""
    stat = database.stat()
    return _tables(database, sample_rows, stat.st_size, stat.st_mtime_ns)


@bounded_cache(64)
def _tables(database: Path, sample_rows: int, _size: int, _mtime: int) -> tuple[BirdTable, ...]:
    connection = open_read_only(database)
    try:
        listed = [
            (name, create)
            for name, create in connection.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
            )
            if not name.startswith("sqlite_")  # SQLite's own (sqlite_sequence, sqlite_stat1)
        ]
        info = {
            name: connection.execute(f"PRAGMA table_info({quote_identifier(name)})").fetchall()
            for name, _ in listed
        }
        keys = {
            name: tuple(row[1] for row in sorted(rows, key=lambda r: r[5]) if row[5])
            for name, rows in info.items()
        }
        tables = []
        for name, create in listed:
            references = tuple(
                (row[3], row[2], row[4] or ", ".join(keys.get(row[2], ())))
                for row in connection.execute(f"PRAGMA foreign_key_list({quote_identifier(name)})")
            )
            examples = QueryResult((), ())
            if sample_rows:
                cursor = connection.execute(
                    f"SELECT * FROM {quote_identifier(name)} LIMIT {int(sample_rows)}"
                )
                examples = QueryResult(tuple(d[0] for d in cursor.description), tuple(cursor))
            tables.append(
                BirdTable(
                    name=name,
                    create=create or "",
                    columns=tuple(row[1] for row in info[name]),
                    primary_key=keys[name],
                    foreign_keys=references,
                    examples=examples,
                )
            )
    except sqlite3.Error as error:
        raise DataError(f"{database}: cannot be read as an SQLite database ({error})") from None
    finally:
        connection.close()
    return tuple(tables)


def quote_identifier(name: str) -> str:
    """``name`` as an SQL identifier (in double quotes)."""
    return '"' + name.replace('"', '""') + '"'


def question_prompt(question: BirdQuestion, evidence: bool) -> str:
    """The question as BIRD's own prompt (``llm/src/gpt_request.py``) puts it after the
    schema: with evidence, its ``-- External Knowledge:`` line first (BIRD's wording, spelling
    included)."""
    if not evidence:
        return (
            "-- Using valid SQLite, answer the following questions for the tables provided above."
            f"\n-- {question.question}"
        )
    return (
        f"-- External Knowledge: {question.evidence}\n"
        "-- Using valid SQLite and understading External Knowledge, answer the following "
        f"questions for the tables provided above.\n-- {question.question}"
    )
