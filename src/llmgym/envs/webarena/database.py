"""Site databases: generated once per (dataset, seed) and process, reset per episode by copying.

A :class:`Dataset` is a site's schema plus a deterministic generator. :func:`pristine` builds it
once per process into an in-memory sqlite database that nothing writes to again; each
environment works on its own :class:`Database`, an in-memory copy loaded from the pristine
database's serialized image (kept beside it: loading an image is several times cheaper than
sqlite's page-by-page backup). :meth:`Database.reset` loads the image again only when the
episode wrote something (sqlite's ``total_changes`` counter says so), so an episode that only
reads costs nothing to reset and one that wrote costs a memory copy, never a regeneration.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import tempfile
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from llmgym.core.cache import LruCache

__all__ = ["SESSION_SCHEMA", "Database", "Dataset", "pristine"]

SESSION_SCHEMA = """
CREATE TABLE sessions (
    sid TEXT PRIMARY KEY,
    site TEXT NOT NULL,
    user_id INTEGER,
    flash TEXT NOT NULL DEFAULT ''
);
"""
"""The table every site database has: one row per browser session of a site."""

_PRISTINE: LruCache[tuple[type, int], sqlite3.Connection] = LruCache(
    8, name="llmgym.envs.webarena.database.pristine"
)
_IMAGES: LruCache[tuple[type, int], bytes] = LruCache(
    8, name="llmgym.envs.webarena.database.images"
)
_BUILD_LOCK = threading.Lock()


class Dataset(ABC):
    """A site's data: its schema and a generator that fills it from a seed.

    Subclasses set ``name`` (stable; tasks and sites refer to the data by it) and ``version``
    (bump it when the generator's output changes), and implement :meth:`build`. The framework
    adds the ``sessions`` table (:data:`SESSION_SCHEMA`) first.
    """

    name: ClassVar[str] = ""
    version: ClassVar[int] = 1

    @abstractmethod
    def build(self, db: sqlite3.Connection, seed: int) -> None:
        """Create the tables and rows of the data of ``seed`` in the empty database ``db``."""


if sys.version_info >= (3, 11):

    def _serialize(db: sqlite3.Connection) -> bytes:
        return db.serialize()

    def _deserialize(db: sqlite3.Connection, image: bytes) -> None:
        db.deserialize(image)

else:  # Python 3.10's sqlite3 has neither: the image passes through a temporary file

    def _serialize(db: sqlite3.Connection) -> bytes:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "image.sqlite"
            with contextlib.closing(sqlite3.connect(path)) as file_db:
                db.backup(file_db)
            return path.read_bytes()

    def _deserialize(db: sqlite3.Connection, image: bytes) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "image.sqlite"
            path.write_bytes(image)
            with contextlib.closing(sqlite3.connect(path)) as file_db:
                file_db.backup(db)


def _connect() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    return db


def pristine(dataset: type[Dataset], seed: int) -> sqlite3.Connection:
    """The generated database of ``dataset`` and ``seed``, built once per process (read it only)."""

    def build() -> sqlite3.Connection:
        db = _connect()
        db.executescript(SESSION_SCHEMA)
        dataset().build(db, seed)
        db.execute("ANALYZE")
        return db

    with _BUILD_LOCK:
        return _PRISTINE.get_or_create((dataset, seed), build)


def _image(dataset: type[Dataset], seed: int) -> bytes:
    """The pristine database of ``dataset`` and ``seed``, serialized (made once per process)."""
    return _IMAGES.get_or_create((dataset, seed), lambda: _serialize(pristine(dataset, seed)))


class Database:
    """One environment's working copy of a dataset: a fresh copy on every :meth:`reset`."""

    def __init__(self, dataset: type[Dataset], seed: int) -> None:
        self._open(dataset, seed)

    def _open(self, dataset: type[Dataset], seed: int) -> None:
        self.dataset, self.seed = dataset, seed
        self.connection = _connect()
        self._copy_from_pristine()

    def _copy_from_pristine(self) -> None:
        _deserialize(self.connection, _image(self.dataset, self.seed))
        self._clean_changes = self.connection.total_changes

    @property
    def dirty(self) -> bool:
        """Whether anything was written since the last reset."""
        return self.connection.total_changes != self._clean_changes

    def reset(self) -> None:
        """Restore the generated state (a copy only if something was written)."""
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")
        if self.dirty:
            self._copy_from_pristine()

    def __getstate__(self) -> dict[str, Any]:
        image = _serialize(self.connection) if self.dirty else None
        return {"dataset": self.dataset, "seed": self.seed, "image": image}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._open(state["dataset"], state["seed"])
        if state["image"] is not None:
            _deserialize(self.connection, state["image"])
            self._clean_changes = -1  # differs from the pristine copy until the next reset
