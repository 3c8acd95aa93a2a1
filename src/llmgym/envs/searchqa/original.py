"""Search-R1's original data for SearchQA: its Wikipedia corpus and its question files.

A data directory holds, as Search-R1 and AgentGym publish them:

* the corpus: ``wiki-18.jsonl`` (or ``wiki-18.jsonl.gz``, ``corpus.jsonl``,
  ``corpus.jsonl.gz``), one passage per line, ``{"id": "1", "contents": "\\"Title\\"\\ntext"}``;
* the questions, either Search-R1's parquet files ``test.parquet`` / ``train.parquet``
  (``data_source``, ``prompt``, ``reward_model.ground_truth.target``), or FlashRAG's question
  files ``<dataset>/<split>.jsonl`` with lines ``{"id", "question", "golden_answers": [...]}``.

AgentGym's ``agentenv-searchqa`` folder, as its ``setup.sh`` leaves it, works as the data
directory too: the corpus in ``retrieve_data/``, the parquet files in
``agentenv_searchqa/queries/``.

``test.parquet`` (or each dataset's ``test.jsonl``, else its ``dev.jsonl``, as Search-R1's
``qa_search_test_merge.py`` picks them) is llmgym's ``eval`` split; ``train.parquet`` (each
dataset's ``train.jsonl``) is ``train``. The corpus is indexed once with sqlite's FTS5 (BM25)
into the user cache folder, read as a stream, under a name made of the corpus file's path,
size and modification time, so a changed file is indexed again and an unchanged one never is.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from tqdm.auto import tqdm

from llmgym.core.cache import LruCache, bounded_cache, cache_dir
from llmgym.core.fulltext import (
    Bm25Index,
    cached_database,
    fts5_table,
    is_complete,
    write_database,
    write_term_table,
)
from llmgym.envs.searchqa.corpus import Article, load_words
from llmgym.errors import DataError
from llmgym.originals import DataReport, OriginalSource, missing_data

__all__ = [
    "AGENTGYM_TEST_DATASETS",
    "AGENTGYM_TRAIN_DATASETS",
    "CORPUS_FILES",
    "OriginalQuestion",
    "Passages",
    "SearchR1Source",
    "load_questions",
]

CORPUS_FILES = ("wiki-18.jsonl", "wiki-18.jsonl.gz", "corpus.jsonl", "corpus.jsonl.gz")
"""The corpus file names looked for, in this order."""

PARQUET_FILES = {"eval": "test.parquet", "train": "train.parquet"}
"""Search-R1's question files, by llmgym split."""

AGENTGYM_FOLDERS = {"corpus": "retrieve_data", "parquet": "agentenv_searchqa/queries"}
"""Where AgentGym's ``agentenv-searchqa`` folder keeps the corpus and the parquet files (its
``setup.sh``), looked in when the data directory itself has none: that folder works as DIR."""

FLASHRAG_FILES = {"eval": ("test.jsonl", "dev.jsonl"), "train": ("train.jsonl",)}
"""A FlashRAG dataset's question file for each llmgym split: the first that exists (a dataset's
test set, else its dev set, as Search-R1's test merge picks them)."""

AGENTGYM_TEST_DATASETS: tuple[tuple[str, int], ...] = (
    ("nq", 3_610),
    ("triviaqa", 11_313),
    ("popqa", 14_267),
    ("hotpotqa", 7_405),
    ("2wikimultihopqa", 12_576),
    ("musique", 2_417),
    ("bamboogle", 125),
)
"""AgentGym's searchqa test items 0..51,712: these datasets' test (or dev) questions, in this
order, with these counts (``agentenv_searchqa/env_wrapper.py``, ``TEST_ITEM_RANGE``)."""

AGENTGYM_TRAIN_DATASETS: tuple[tuple[str, int], ...] = (("nq", 79_168), ("hotpotqa", 90_447))
"""AgentGym's train items 51,713..221,327: these datasets' train questions, in this order."""

CACHE_FOLDER = "searchqa-original"
MAX_CACHED_INDEXES = 4
"""Corpus indexes kept in the cache folder (the least recently used ones are deleted)."""
MAX_OPEN_CORPORA = 2
BATCH = 5_000
"""Passages inserted per statement while indexing."""

_SCHEMA = (
    # a plain corpus file's passages are read back from the file (offset and length of the
    # line: the index then holds no copy of the text); a gzip file's are kept (contents)
    "CREATE TABLE passages (id INTEGER PRIMARY KEY, offset INTEGER, length INTEGER, "
    "contents TEXT);\n" + fts5_table("passage_index", ("contents",), (1.0,))
)


@dataclass(frozen=True)
class OriginalQuestion:
    """One question of the original data and its answer key.

    Attributes:
        id: The question's id in its file (FlashRAG's ``id``; the row's ``id`` in a parquet
            file where it has one, else the row number).
        text: The question as Search-R1 asks it (stripped, ending in ``?``).
        golden_answers: Every accepted answer (``golden_answers``, or the parquet's
            ``reward_model.ground_truth.target``).
        data_source: The dataset it comes from (``nq``, ``hotpotqa``...).
    """

    id: str
    text: str
    golden_answers: tuple[str, ...]
    data_source: str


@dataclass(frozen=True)
class _QuestionFiles:
    """The question files of a directory and the llmgym split each one feeds."""

    layout: str  # "parquet" or "flashrag"
    files: tuple[tuple[str, str, Path], ...]  # (split, data source or "", path)

    def signature(self) -> tuple[tuple[str, int, int], ...]:
        stats = []
        for _, _, path in self.files:
            stat = path.stat()
            stats.append((str(path), stat.st_size, stat.st_mtime_ns))
        return tuple(stats)


def _search_r1_question(text: str) -> str:
    """A question as Search-R1's data scripts ask it: stripped, with a ``?`` at the end."""
    text = text.strip()
    return text if text.endswith("?") else text + "?"


# ---------------------------------------------------------------------------- the questions
def _question_files(data_dir: Path) -> _QuestionFiles:
    """Which question files ``data_dir`` holds: Search-R1's parquet files if any, else
    FlashRAG's dataset folders (AgentGym's datasets first, in its order, then the others by
    name)."""
    for folder in (data_dir, data_dir / AGENTGYM_FOLDERS["parquet"]):
        parquet = [
            (split, "", folder / name)
            for split, name in PARQUET_FILES.items()
            if (folder / name).is_file()
        ]
        if parquet:
            return _QuestionFiles("parquet", tuple(parquet))
    folders = sorted(p.name for p in data_dir.iterdir() if p.is_dir())
    files = []
    for split, names in FLASHRAG_FILES.items():
        known = AGENTGYM_TEST_DATASETS if split == "eval" else AGENTGYM_TRAIN_DATASETS
        first = [name for name, _ in known if name in folders]
        for dataset in first + [name for name in folders if name not in first]:
            found = next(
                (data_dir / dataset / n for n in names if (data_dir / dataset / n).is_file()), None
            )
            if found is not None:
                files.append((split, dataset, found))
    if not files:
        raise missing_data(
            data_dir / PARQUET_FILES["eval"],
            "the questions (Search-R1's test.parquet and train.parquet, or FlashRAG's "
            "<dataset>/test.jsonl, dev.jsonl or train.jsonl)",
            SearchR1Source.name,
        )
    return _QuestionFiles("flashrag", tuple(files))


def load_questions(
    data_dir: Path, data_source: str = ""
) -> dict[str, tuple[OriginalQuestion, ...]]:
    """The questions of ``data_dir`` by llmgym split (``"eval"``, ``"train"``), in file
    order (only those of the dataset ``data_source``, if given), read once per process
    (again when a file changes).

    Raises:
        DataError: No question file, or one that does not read as its layout.
    """
    files = _question_files(data_dir)
    return _questions_of(files, files.signature(), data_source)


@bounded_cache(16)
def _questions_of(
    files: _QuestionFiles, signature: tuple[tuple[str, int, int], ...], data_source: str
) -> dict[str, tuple[OriginalQuestion, ...]]:
    questions = _read_questions(files, signature)
    if not data_source:
        return questions
    return {
        split: tuple(q for q in items if q.data_source == data_source)
        for split, items in questions.items()
    }


@bounded_cache(8)
def _read_questions(
    files: _QuestionFiles, signature: tuple[tuple[str, int, int], ...]
) -> dict[str, tuple[OriginalQuestion, ...]]:
    del signature  # part of the cache key only: a changed file is read again
    questions: dict[str, list[OriginalQuestion]] = {"eval": [], "train": []}
    for split, dataset, path in files.files:
        read = _read_parquet(path) if files.layout == "parquet" else _read_flashrag(path, dataset)
        questions[split].extend(read)
    return {split: tuple(items) for split, items in questions.items()}


def _read_flashrag(path: Path, dataset: str) -> list[OriginalQuestion]:
    questions = []
    with _reading(path), path.open("rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except ValueError as error:
                raise DataError(f"{where}: not a JSON line ({error})") from None
            if not isinstance(row, dict):
                raise DataError(f"{where}: expected an object with question, golden_answers")
            questions.append(
                _question(
                    where,
                    str(row.get("id", number - 1)),
                    row.get("question"),
                    row.get("golden_answers"),
                    dataset,
                )
            )
    return questions


def _read_parquet(path: Path) -> list[OriginalQuestion]:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow comes with the searchqa extra
        raise DataError(
            f"{path}: reading Search-R1's parquet files needs pyarrow: "
            "pip install 'llmgym[searchqa]'"
        ) from None
    with _reading(path):
        try:
            schema = pq.read_schema(path)
            wanted = ("id", "question", "prompt", "reward_model", "data_source")
            table = pq.read_table(path, columns=[c for c in wanted if c in schema.names])
        except Exception as error:  # pyarrow raises its own types for a corrupt file
            raise DataError(f"{path}: not a readable parquet file ({error})") from None
    for column in ("reward_model", "data_source"):
        if column not in table.column_names:
            raise DataError(f"{path}: the column {column!r} of Search-R1's parquet is missing")
    if "question" not in table.column_names and "prompt" not in table.column_names:
        raise DataError(f"{path}: neither a 'question' nor a 'prompt' column")
    questions = []
    for number, row in enumerate(table.to_pylist()):
        where = f"{path} row {number}"
        text = row.get("question")
        if text is None:
            text = _question_of_prompt(row.get("prompt"), where)
        truth = (row.get("reward_model") or {}).get("ground_truth") or {}
        questions.append(
            _question(
                where,
                str(row.get("id", number)),
                text,
                truth.get("target"),
                str(row.get("data_source") or ""),
            )
        )
    return questions


def _question_of_prompt(prompt: Any, where: str) -> str:
    """The question at the end of a Search-R1 prompt (``... Question: <question>``)."""
    content = prompt[0].get("content") if isinstance(prompt, list) and prompt else None
    _, marker, question = (content if isinstance(content, str) else "").rpartition("Question:")
    if not marker:
        raise DataError(f"{where}: the prompt holds no 'Question: ...' and there is no question")
    return question


def _question(
    where: str, question_id: str, text: Any, answers: Any, dataset: str
) -> OriginalQuestion:
    if not isinstance(text, str) or not text.strip():
        raise DataError(f"{where}: 'question' must be a non-empty string, got {text!r}")
    if isinstance(answers, str):
        answers = [answers]
    if (
        not isinstance(answers, list | tuple)
        or not answers
        or not all(isinstance(a, str) for a in answers)
    ):
        raise DataError(f"{where}: the golden answers must be a non-empty list of strings")
    return OriginalQuestion(question_id, _search_r1_question(text), tuple(answers), dataset)


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Turn an error reading ``path`` into a :class:`DataError` naming it."""
    try:
        yield
    except OSError as error:
        raise DataError(f"{path}: cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error})") from None


# ------------------------------------------------------------------------------- the corpus
def corpus_file(data_dir: Path) -> Path:
    """The corpus file of ``data_dir`` (the first of :data:`CORPUS_FILES` that exists there,
    else in AgentGym's ``retrieve_data`` folder under it).

    Raises:
        DataError: None of them exists.
    """
    for folder in (data_dir, data_dir / AGENTGYM_FOLDERS["corpus"]):
        for name in CORPUS_FILES:
            if (folder / name).is_file():
                return folder / name
    raise missing_data(
        data_dir / CORPUS_FILES[0],
        f"the corpus ({', '.join(CORPUS_FILES)}: one passage per line, "
        '{"id": ..., "contents": "\\"Title\\"\\ntext"})',
        SearchR1Source.name,
    )


def _corpus_key(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path.resolve()), stat.st_size, stat.st_mtime_ns


def index_name(path: Path) -> str:
    """The cache file name of the index of the corpus file ``path``: a digest of its
    resolved path, size and modification time."""
    digest = hashlib.sha256(repr(_corpus_key(path)).encode()).hexdigest()[:20]
    return f"corpus-{digest}.sqlite3"


class Passages:
    """A Search-R1 corpus and its BM25 index (FTS5 over each passage's ``contents``).

    Use :meth:`open`, which indexes the corpus on first use into the user cache folder
    (streaming the file, with a progress bar) and shares one instance per corpus file among
    the :data:`MAX_OPEN_CORPORA` most recently opened."""

    _instances: ClassVar[LruCache[tuple[str, int, int], Passages]] = LruCache(
        MAX_OPEN_CORPORA, name="llmgym.envs.searchqa.original.Passages"
    )

    def __init__(self, path: Path, index_path: Path) -> None:
        self.path = path
        self.index_path = index_path
        self.size = _indexed_passages(index_path)
        self._identity = _corpus_key(path)
        # read with os.pread: threads share no file position
        self._descriptor = os.open(path, os.O_RDONLY)
        self.index = Bm25Index(
            index_path,
            "passage_index",
            self.size,
            load_words()["query_stopwords"],
            term_table="passage_terms",
        )

    def __del__(self) -> None:
        with contextlib.suppress(AttributeError, OSError):
            os.close(self._descriptor)

    @classmethod
    def open(cls, data_dir: Path, *, progress: bool = True) -> Passages:
        """The corpus of ``data_dir``, indexed (once) if needed.

        Raises:
            DataError: No corpus file, or a line that is not a passage (the index is then not
                kept).
        """
        path = corpus_file(data_dir)
        return cls._instances.get_or_create(
            _corpus_key(path), lambda: cls(path, build_index(path, progress=progress))
        )

    def search(self, query: str, k: int) -> list[Article]:
        """The ``k`` best passages for ``query`` by BM25."""
        return [self.article(rowid) for rowid in self.index.search(query, k)]

    def article(self, rowid: int) -> Article:
        """The passage at row ``rowid`` (its line in the corpus, from 1), its title the
        first line of its ``contents`` as Search-R1 shows it (quotes kept)."""
        row = (
            self.index.connection()
            .execute("SELECT offset, length, contents FROM passages WHERE id = ?", (rowid,))
            .fetchone()
        )
        if row is None:
            raise KeyError(f"no passage with id {rowid}")
        offset, length, contents = row
        if contents is None:
            contents = self._read(offset, length, rowid)
        title, _, text = contents.partition("\n")
        return Article(rowid, "passage", title, text)

    def _read(self, offset: int, length: int, rowid: int) -> str:
        """The contents of the passage at ``offset`` of the plain corpus file."""
        stat = os.fstat(self._descriptor)
        if (stat.st_size, stat.st_mtime_ns) != self._identity[1:]:
            raise DataError(
                f"{self.path}: the corpus changed since it was indexed; open it again to index "
                "the new file"
            )
        line = os.pread(self._descriptor, length, offset)
        return _passage(line, f"{self.path}: passage {rowid}")


def build_index(path: Path, *, progress: bool = True) -> Path:
    """The BM25 index of the corpus file ``path`` in the cache folder, built when missing."""
    return cached_database(
        CACHE_FOLDER,
        index_name(path),
        None,
        lambda target: write_index(target, path, progress=progress),
        what="the Search-R1 corpus index",
        keep=MAX_CACHED_INDEXES,
    )


def write_index(target: Path, path: Path, *, progress: bool = True) -> None:
    """Index the corpus file ``path`` into a new database ``target``, reading it as a
    stream (its ``meta`` table records the number of passages as ``size``)."""
    count = 0
    gzipped = path.suffix == ".gz"
    meta: dict[str, str]

    def populate(connection: sqlite3.Connection) -> None:
        nonlocal count
        connection.execute("PRAGMA cache_size = -262144")  # 256 MiB of pages while merging
        total = path.stat().st_size
        with (
            _reading(path),
            _corpus_lines(path) as (lines, position),
            tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                desc=f"Indexing {path.name} (once)",
                disable=not progress,
            ) as bar,
        ):
            batch: list[tuple[int, int | None, int, str]] = []
            offset = 0
            for number, line in enumerate(lines, start=1):
                start, offset = offset, offset + len(line)
                if not line.strip():
                    continue
                count += 1
                contents = _passage(line, f"{path}:{number}")
                batch.append((count, None if gzipped else start, len(line), contents))
                if len(batch) == BATCH:
                    _insert(connection, batch)
                    batch = []
                    bar.update(position() - bar.n)
            _insert(connection, batch)
            bar.update(total - bar.n)
        if count == 0:
            raise DataError(f"{path}: the corpus holds no passage")
        meta["size"] = str(count)
        connection.execute("INSERT INTO passage_index (passage_index) VALUES ('optimize')")
        write_term_table(connection, "passage_index", "passage_terms")

    key, size, mtime = _corpus_key(path)
    # populate counts the passages into meta["size"]; write_database records meta after it
    meta = {"corpus": key, "corpus_bytes": str(size), "corpus_mtime_ns": str(mtime), "size": ""}
    write_database(target, _SCHEMA, populate, meta, what="the Search-R1 corpus index")


def _indexed_passages(index_path: Path) -> int:
    """The passages of a complete index, as its ``meta`` table records them."""
    uri = index_path.resolve().as_uri() + "?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as connection:
        return int(dict(connection.execute("SELECT key, value FROM meta"))["size"])


def _insert(connection: sqlite3.Connection, batch: list[tuple[int, int | None, int, str]]) -> None:
    """Index a batch of ``(rowid, offset in the file or None, length, contents)``: the text
    is kept only where there is no offset to read it back from."""
    connection.executemany(
        "INSERT INTO passages VALUES (?, ?, ?, ?)",
        [
            (rowid, offset, length, contents if offset is None else None)
            for rowid, offset, length, contents in batch
        ],
    )
    connection.executemany(
        "INSERT INTO passage_index (rowid, contents) VALUES (?, ?)",
        [(rowid, contents) for rowid, _, _, contents in batch],
    )


def _passage(line: bytes, where: str) -> str:
    """The ``contents`` of a corpus line."""
    try:
        row = json.loads(line)
    except ValueError as error:
        raise DataError(f"{where}: not a JSON line ({error})") from None
    contents = row.get("contents") if isinstance(row, dict) else None
    if not isinstance(contents, str):
        raise DataError(f'{where}: expected {{"id": ..., "contents": "\\"Title\\"\\ntext"}}')
    return contents


@contextlib.contextmanager
def _corpus_lines(path: Path) -> Iterator[tuple[Iterable[bytes], Callable[[], int]]]:
    """The lines of the corpus file (gzip or plain) and a function giving the bytes of the
    file read so far (for the progress bar)."""
    with path.open("rb") as raw:
        if path.suffix == ".gz":
            with gzip.open(raw, "rb") as unzipped:
                yield unzipped, raw.tell
        else:
            yield raw, raw.tell


def _first_passage(path: Path) -> None:
    """Check that the corpus file opens and its first line is a passage."""
    with _reading(path), _corpus_lines(path) as (lines, _):
        try:
            for number, line in enumerate(lines, start=1):
                if line.strip():
                    _passage(line, f"{path}:{number}")
                    return
        except (OSError, EOFError) as error:  # a damaged gzip stream
            raise DataError(f"{path}: cannot be read ({error})") from None
    raise DataError(f"{path}: the corpus holds no passage")


# ------------------------------------------------------------------------------- the source
class SearchR1Source(OriginalSource):
    """Search-R1's Wikipedia 2018 corpus and its question sets (NQ, TriviaQA, PopQA,
    HotpotQA, 2WikiMultihopQA, MuSiQue, Bamboogle), as AgentGym's searchqa serves them."""

    name = "search-r1"
    env_id = "llmgym/SearchQA-v0"
    title = "Search-R1: Wikipedia 2018 (21M passages) with NQ, HotpotQA and five more QA sets"
    homepage = "https://github.com/PeterGriffinJin/Search-R1"
    license = (
        "corpus: Wikipedia text (DPR's 2018 passages), under Wikipedia's CC BY-SA; questions: "
        "FlashRAG_datasets, CC BY-SA 4.0 as its card states (each source dataset keeps its "
        "own terms); Search-R1's code and data scripts: Apache-2.0"
    )
    fetch_commands = (
        "huggingface-cli download --repo-type dataset PeterJinGo/wiki-18-corpus "
        "wiki-18.jsonl.gz --local-dir .",
        # unzipped, as Search-R1's README does: passages are then read back from the file and
        # the index holds no copy of their text
        "gzip -d wiki-18.jsonl.gz",
        "huggingface-cli download --repo-type dataset PeterJinGo/nq_hotpotqa_train --local-dir .",
    )
    layout = (
        "wiki-18.jsonl (or wiki-18.jsonl.gz, corpus.jsonl, corpus.jsonl.gz; or AgentGym's "
        "retrieve_data/wiki-18.jsonl)\n"
        "test.parquet, train.parquet (Search-R1's; or AgentGym's agentenv_searchqa/queries/), "
        "or FlashRAG's <dataset>/test.jsonl, <dataset>/dev.jsonl, <dataset>/train.jsonl"
    )
    agentgym_family = "searchqa"

    def check(self, data_dir: Path) -> DataReport:
        """Find the corpus (its first passage is read; it is indexed on first use, not
        here) and read every question file."""
        if not data_dir.is_dir():
            raise DataError(f"{data_dir}: not a directory")
        corpus = corpus_file(data_dir)
        _first_passage(corpus)
        files = _question_files(data_dir)
        questions = load_questions(data_dir)
        size = corpus.stat().st_size
        found = [f"{corpus.relative_to(data_dir)}: {size:,} bytes, {self._indexed(corpus)}"]
        for split, dataset, path in files.files:
            count = sum(
                1 for q in questions[split] if files.layout == "parquet" or q.data_source == dataset
            )
            noun = "question" if count == 1 else "questions"
            found.append(f"{path.relative_to(data_dir)}: {count:,} {noun} ({split})")
        return DataReport(
            self.name,
            str(data_dir.resolve()),
            {split: len(items) for split, items in questions.items()},
            tuple(found),
        )

    @staticmethod
    def _indexed(corpus: Path) -> str:
        path = build_index_path(corpus)
        if is_complete(path, None):
            return f"indexed ({_indexed_passages(path):,} passages)"
        return "indexed once on first use"

    def agentgym_task_ids(self, data_dir: Path) -> Sequence[str]:
        """AgentGym's item ``i``: its test items (0..51,712) are the test questions of
        :data:`AGENTGYM_TEST_DATASETS` in that order, its train items the train questions of
        :data:`AGENTGYM_TRAIN_DATASETS`; both are the first questions of llmgym's ``eval``
        and ``train`` splits.

        Raises:
            DataError: The data does not start with AgentGym's datasets and counts (the
                message names the first dataset that differs).
        """
        questions = load_questions(data_dir)
        ids: list[str] = []
        for split, datasets in (
            ("eval", AGENTGYM_TEST_DATASETS),
            ("train", AGENTGYM_TRAIN_DATASETS),
        ):
            position = 0
            items = questions[split]
            for dataset, count in datasets:
                have = sum(
                    1 for q in items[position : position + count] if q.data_source == dataset
                )
                if have != count:
                    raise DataError(  # no path: a server may show this to its clients
                        f"AgentGym's searchqa items need {count:,} {dataset} questions at "
                        f"{split} position {position:,}; the data holds {have:,} there (AgentGym "
                        "numbers the test sets of nq, triviaqa, popqa, hotpotqa, "
                        "2wikimultihopqa, musique and bamboogle, then the train sets of nq "
                        "and hotpotqa)"
                    )
                position += count
            ids += [f"{split}/{i:05d}" for i in range(position)]
        return ids


def build_index_path(corpus: Path) -> Path:
    """Where the index of the corpus file ``corpus`` is cached."""
    return cache_dir(CACHE_FOLDER, index_name(corpus))
