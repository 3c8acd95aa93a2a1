"""Full-text search over a generated corpus: sqlite's FTS5 index ranked by BM25.

A corpus database is built once per content (generator code, seed, size) into the user cache
folder (:func:`cached_database`), written to a temporary file and renamed into place so that
concurrent builders never expose a half-written file; later processes open it read-only in
milliseconds. :class:`Bm25Index` searches it, with one read-only connection per thread (a new
one in a forked child). WebShop's catalogue and SearchQA's encyclopedia both search this way.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import tempfile
import threading
import uuid
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from llmgym.core.cache import cache_dir, prune_files, touch

__all__ = [
    "Bm25Index",
    "cached_database",
    "fts5_table",
    "is_complete",
    "search_terms",
    "words",
    "write_database",
    "write_term_table",
]

MAX_SEARCH_TERMS = 32
"""Words of one query considered at most (the rest are ignored)."""
_MAX_CACHED_STEMS = 100_000
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Lower-case alphanumeric words of ``text`` (``"Men's T-Shirts"`` -> men, s, t, shirts)."""
    return _WORD.findall(text.lower())


def search_terms(query: str, stopwords: Collection[str]) -> list[str]:
    """The words of a search query that are looked up: lower case, no stop words, no repeats,
    at most :data:`MAX_SEARCH_TERMS`."""
    terms: list[str] = []
    for word in words(query):
        if word in stopwords or word in terms:
            continue
        terms.append(word)
        if len(terms) == MAX_SEARCH_TERMS:
            break
    return terms


def fts5_table(table: str, columns: Sequence[str], weights: Sequence[float]) -> str:
    """SQL creating a contentless FTS5 table ``table`` (Porter stemming, unicode61 tokens) whose
    ``rank`` is BM25 with one weight per column. ``table`` and ``columns`` are the caller's
    constant identifiers, never user input."""
    if len(columns) != len(weights):
        raise ValueError(f"{len(columns)} columns but {len(weights)} weights")
    return (
        f"CREATE VIRTUAL TABLE {table} USING fts5(\n    {', '.join(columns)},\n"
        "    content='', tokenize='porter unicode61'\n);\n"
        f"INSERT INTO {table} ({table}, rank)\n"
        f"    VALUES ('rank', 'bm25({', '.join(str(w) for w in weights)})');\n"
    )


def is_complete(path: Path, size: int | None) -> bool:
    """Whether ``path`` is a database :func:`write_database` finished, of ``size`` entries
    (of any size where ``size`` is ``None``)."""
    if not path.exists():
        return False
    try:
        uri = path.resolve().as_uri() + "?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as connection:
            rows = dict(connection.execute("SELECT key, value FROM meta"))
    except sqlite3.Error:
        return False
    return rows.get("complete") == "1" and (size is None or rows.get("size") == str(size))


def write_database(
    path: Path,
    schema: str,
    populate: Callable[[sqlite3.Connection], None],
    meta: Mapping[str, str],
    *,
    what: str = "full-text search",
) -> None:
    """Create the database ``path``: run ``schema`` (which must not create a ``meta`` table),
    then ``populate(connection)``; record ``meta`` (which must hold ``size``) and mark the
    database complete.

    The database is written to a temporary file next to ``path`` and renamed into place.
    ``what`` names the user of the index in the error raised when this Python's SQLite lacks
    FTS5."""
    if "size" not in meta:
        raise ValueError("meta must record the database's size")
    partial = path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.partial")
    try:
        with contextlib.closing(sqlite3.connect(partial)) as connection:
            connection.execute("PRAGMA journal_mode = OFF")
            connection.execute("PRAGMA synchronous = OFF")
            try:
                connection.executescript(schema)
            except sqlite3.OperationalError as error:
                if "fts5" not in str(error):
                    raise
                raise RuntimeError(
                    f"this Python's sqlite3 (SQLite {sqlite3.sqlite_version}) lacks the FTS5 "
                    f"full-text extension that {what} needs; use a Python build whose SQLite "
                    "has FTS5 (python.org, conda and most Linux distributions do)"
                ) from error
            populate(connection)
            connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            connection.executemany(
                "INSERT INTO meta VALUES (?, ?)", [*meta.items(), ("complete", "1")]
            )
            connection.commit()
        os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()


def cached_database(
    folder: str,
    name: str,
    size: int | None,
    build: Callable[[Path], None],
    *,
    what: str = "full-text search",
    keep: int | None = None,
) -> Path:
    """The complete database ``name`` of ``size`` entries in the cache folder ``folder``,
    built with ``build(path)`` (which calls :func:`write_database`) when missing. A ``size`` of
    ``None`` accepts any complete database (where the entries are counted while building, as
    when streaming a corpus file).

    ``name`` must identify everything the database is built from (a digest of the generator
    code, the seed, the size), so that a change builds a new database instead of reusing a
    stale one. With ``keep``, only the ``keep`` most recently used ``*.sqlite3`` files of the
    folder stay on disk (a process that has one open keeps reading it), so that clients
    choosing seeds cannot fill the disk. When the cache cannot be written, the database is
    built in a temporary folder for this process only, with a warning naming ``what`` and
    ``$LLMGYM_CACHE_DIR``."""
    path = cache_dir(folder, name)
    if is_complete(path, size):
        if keep is not None:
            touch(path)
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        build(path)
    except OSError as error:
        fallback = Path(tempfile.mkdtemp(prefix=f"llmgym-{folder}-")) / name
        warnings.warn(
            f"cannot write the {what} cache {path} ({error}); building it in {fallback} for "
            "this process only. Set LLMGYM_CACHE_DIR to a writable folder.",
            stacklevel=3,
        )
        build(fallback)
        return fallback
    if keep is not None:
        prune_files(path.parent, "*.sqlite3", keep)
    return path


def write_term_table(connection: sqlite3.Connection, fts_table: str, term_table: str) -> None:
    """Write ``term_table``: each term of the FTS5 table ``fts_table`` and the number of
    documents holding it, for :class:`Bm25Index`'s ``term_table`` (one scan of the index, at
    build time, instead of one per process that searches it)."""
    connection.executescript(
        f"CREATE VIRTUAL TABLE temp.build_vocabulary USING fts5vocab(main, {fts_table}, row);\n"
        f"CREATE TABLE {term_table} (term TEXT PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID;\n"
        f"INSERT INTO {term_table} SELECT term, doc FROM temp.build_vocabulary;\n"
        "DROP TABLE temp.build_vocabulary;\n"
    )


class Bm25Index:
    """BM25 search over the FTS5 table ``table`` of the read-only database ``path``, whose
    ``size`` rows are the documents; rankings are cached per set of looked-up words.

    A query is reduced to its selective words (:meth:`query_words`), which are OR-ed: any may
    match, and more and rarer matches rank higher (ties by rowid). Connections are per thread,
    so one index can serve threaded rollouts; :meth:`connection` also serves the database's
    other tables to the index's owner.

    The words' document frequencies come from the index's vocabulary, read whole on the first
    search (a scan of the whole index: fine for thousands of documents), or, for a large
    index, from a ``term_table`` (``term TEXT PRIMARY KEY, doc INTEGER``) that its builder
    wrote with :func:`write_term_table`, one lookup per word.
    """

    def __init__(
        self,
        path: Path,
        table: str,
        size: int,
        stopwords: Collection[str],
        *,
        max_query_words: int = 6,
        common_fraction: float = 0.1,
        cached_rankings: int = 8_192,
        term_table: str | None = None,
    ) -> None:
        self.path = path
        self.table = table
        self.size = size
        self.stopwords = frozenset(stopwords)
        self.max_query_words = max_query_words
        self.common_fraction = common_fraction
        self._local = threading.local()
        self._ranked = lru_cache(maxsize=cached_rankings)(self._rank)
        self.term_table = term_table
        self._frequencies: dict[str, int] | None = None
        self._stem_cache: dict[str, str] = {}

    def connection(self) -> sqlite3.Connection:
        """This thread's read-only connection (a new one in a forked child process)."""
        connection = getattr(self._local, "connection", None)
        if connection is None or self._local.pid != os.getpid():
            uri = self.path.resolve().as_uri() + "?mode=ro&immutable=1"
            connection = sqlite3.connect(uri, uri=True, isolation_level=None)
            connection.executescript(
                "CREATE VIRTUAL TABLE temp.index_vocabulary USING "
                f"fts5vocab(main, {self.table}, row);\n"
                "CREATE VIRTUAL TABLE temp.query_tokens USING fts5(text, "
                "tokenize='porter unicode61');\n"
                "CREATE VIRTUAL TABLE temp.query_token_terms USING "
                "fts5vocab(temp, query_tokens, instance);\n"
            )
            self._local.connection, self._local.pid = connection, os.getpid()
        return connection

    def search(self, query: str, limit: int, *, cached: bool = True) -> list[int]:
        """Rowids of the best ``limit`` documents for ``query`` (``cached=False`` always asks
        the index). A query without a word that occurs in the corpus finds nothing."""
        terms = tuple(self.query_words(query))
        if not terms:
            return []
        return list((self._ranked if cached else self._rank)(terms, limit))

    def _rank(self, terms: tuple[str, ...], limit: int) -> tuple[int, ...]:
        expression = " OR ".join(f'"{term}"' for term in terms)
        rows = self.connection().execute(
            f"SELECT rowid FROM {self.table} WHERE {self.table} MATCH ? "
            "ORDER BY rank, rowid LIMIT ?",
            (expression, limit),
        )
        return tuple(row[0] for row in rows)

    def query_words(self, query: str) -> list[str]:
        """The words of ``query`` that :meth:`search` looks up, in query order.

        Stop words, repeats and words that occur in no document are dropped, then words that
        occur in more than ``common_fraction`` of the documents unless nothing else is left,
        and at most the ``max_query_words`` rarest remain. BM25 ranks by the rare words anyway;
        skipping the common ones keeps a search for a pasted paragraph fast."""
        candidates = search_terms(query, self.stopwords)
        if not candidates:
            return []
        stems = self._stems(candidates)
        frequency = self._document_frequencies(list(stems.values()))
        counts = {word: frequency.get(stems[word], 0) for word in candidates}
        present = [word for word in candidates if counts[word] > 0]
        selective = [word for word in present if counts[word] <= self.common_fraction * self.size]
        chosen = selective or present
        if len(chosen) > self.max_query_words:
            keep = set(sorted(chosen, key=lambda word: counts[word])[: self.max_query_words])
            chosen = [word for word in chosen if word in keep]
        return chosen

    def _document_frequencies(self, terms: list[str]) -> dict[str, int]:
        """Indexed term (a Porter stem) -> number of documents containing it, for ``terms``
        at least (those the index has)."""
        if self.term_table is not None:
            marks = ", ".join("?" * len(terms))
            rows = self.connection().execute(
                f"SELECT term, doc FROM {self.term_table} WHERE term IN ({marks})", terms
            )
            return dict(rows)
        if self._frequencies is None:
            rows = self.connection().execute("SELECT term, doc FROM temp.index_vocabulary")
            self._frequencies = dict(rows)
        return self._frequencies

    def _stems(self, raw_words: list[str]) -> dict[str, str]:
        """The index's own tokenizer (Porter) applied to single words, with a cache."""
        missing = [word for word in raw_words if word not in self._stem_cache]
        if missing:
            if len(self._stem_cache) > _MAX_CACHED_STEMS:
                self._stem_cache.clear()
            connection = self.connection()
            connection.execute("DELETE FROM temp.query_tokens")
            connection.execute(
                "INSERT INTO temp.query_tokens (rowid, text) VALUES (1, ?)", (" ".join(missing),)
            )
            rows = connection.execute("SELECT offset, term FROM temp.query_token_terms")
            for offset, term in rows:
                self._stem_cache[missing[offset]] = term
        return {word: self._stem_cache.get(word, word) for word in raw_words}

    def close(self) -> None:
        """Close this thread's connection (it reopens on next use)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None
