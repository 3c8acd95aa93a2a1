"""The shop's database: the generated catalogue in sqlite, searched with FTS5 and ranked by BM25.

The database is built once per (vocabulary, generator code, seed, size) and cached under
``platformdirs.user_cache_dir("llmgym")`` (or ``$LLMGYM_CACHE_DIR``); later processes open it
read-only in milliseconds. Building 10,000 products — generating them, indexing them and reading
each product's result entry and page with BeautifulSoup once — takes seconds and shows a
progress bar.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from tqdm.auto import tqdm

from llmgym.core import fulltext
from llmgym.core.cache import LruCache
from llmgym.core.fulltext import Bm25Index, cached_database, fts5_table, write_database
from llmgym.core.tasks import split_of
from llmgym.envs.webshop import catalogue, pages
from llmgym.envs.webshop.catalogue import (
    GENERATOR_VERSION,
    Product,
    Vocabulary,
    generate_product,
    load_vocabulary,
)

__all__ = ["EVAL_FRACTION", "Shop", "build_database", "search_terms", "write_catalogue"]

EVAL_FRACTION = 0.05
"""Share of products whose instructions form the eval split (by a hash of the product id)."""

BM25_WEIGHTS = (8.0, 3.0, 4.0, 1.0, 10.0)
"""Column weights of the BM25 ranking: title, category, attributes, options, product id."""

MAX_OPEN_SHOPS = 4
"""Catalogues kept open per process; opening another forgets the least recently used one
(environments using it keep it; a later :meth:`Shop.open` reopens it from the disk cache)."""


_SCHEMA = """
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    asin TEXT NOT NULL UNIQUE,
    split TEXT NOT NULL,
    title TEXT NOT NULL,
    price REAL NOT NULL,
    data TEXT NOT NULL,
    result_view TEXT NOT NULL,
    page_views TEXT NOT NULL
);
CREATE INDEX products_by_split ON products (split, id);
""" + fts5_table(
    "product_index", ("title", "category", "attributes", "options", "product_id"), BM25_WEIGHTS
)


@cache
def _stopwords() -> frozenset[str]:
    source = resources.files("llmgym.envs") / "data" / "webshop" / "stopwords.txt"
    return frozenset(source.read_text(encoding="utf-8").split())


def search_terms(query: str) -> list[str]:
    """The words of a search query that are looked up: lower case, no stop words, no repeats."""
    return fulltext.search_terms(query, _stopwords())


def _view_data(view: pages.View) -> list:
    strings, clickables = view
    return [strings, [[c.label, c.action, c.arg] for c in clickables]]


def _view_from_data(data: list) -> pages.View:
    strings, clickables = data
    return tuple(strings), tuple(pages.Clickable(*c) for c in clickables)


def _views_columns(product: Product) -> tuple[str, str]:
    """The stored views: the search-result entry, and the product page's summary and options."""
    views = pages.product_views(product)
    result = json.dumps(_view_data(views.pop("result")), separators=(",", ":"))
    page = json.dumps({k: _view_data(v) for k, v in views.items()}, separators=(",", ":"))
    return result, page


def _index_row(product: Product) -> tuple[int, str, str, str, str, str]:
    return (
        product.id,
        product.title,
        " ".join((*product.category, product.product_type)),
        " ".join(product.attributes),
        " ".join(value for _, values in product.options for value in values),
        product.asin,
    )


class Shop:
    """The catalogue database of one (seed, size): product lookup, splits and BM25 search.

    Use :meth:`open`, which builds the database on first use and shares one instance per
    process among the :data:`MAX_OPEN_SHOPS` most recently opened catalogues. Connections are
    read-only and per thread, so a shop can serve threaded rollouts.
    """

    _instances: ClassVar[LruCache[tuple[int, int], Shop]] = LruCache(
        MAX_OPEN_SHOPS, name="llmgym.envs.webshop.store.Shop"
    )

    def __init__(self, path: Path, seed: int, size: int) -> None:
        self.path = path
        self.seed = seed
        self.size = size
        self.index = Bm25Index(path, "product_index", size, _stopwords())
        self.product = lru_cache(maxsize=32_768)(self._load_product)
        self.views = lru_cache(maxsize=16_384)(self._load_views)
        self.listing = lru_cache(maxsize=32_768)(self._load_listing)
        self._split_ids: dict[str, tuple[int, ...]] = {}

    # ------------------------------------------------------------------ opening and building
    @classmethod
    def open(cls, seed: int = 0, size: int = 10_000, *, progress: bool = True) -> Shop:
        """The shop of catalogue ``seed`` with ``size`` products, built and cached if needed."""
        return cls._instances.get_or_create(
            (seed, size), lambda: cls(cls._database(seed, size, progress), seed, size)
        )

    @classmethod
    def _database(cls, seed: int, size: int, progress: bool) -> Path:
        vocabulary = load_vocabulary()
        return cached_database(
            "webshop",
            f"webshop-{_build_digest(vocabulary)}-seed{seed}-n{size}.sqlite3",
            size,
            lambda path: build_database(path, vocabulary, seed, size, progress=progress),
            what="the WebShop catalogue",
        )

    def _connection(self) -> sqlite3.Connection:
        """This thread's read-only connection (a new one in a forked child process)."""
        return self.index.connection()

    # ------------------------------------------------------------------ queries
    def _product_row(self, columns: str, product_id: int) -> tuple[Any, ...]:
        """The ``columns`` (a constant SQL column list) of one product; ``KeyError`` if none."""
        query = f"SELECT {columns} FROM products WHERE id = ?"
        row = self._connection().execute(query, (product_id,)).fetchone()
        if row is None:
            raise KeyError(f"no product with id {product_id}")
        return row

    def _load_product(self, product_id: int) -> Product:
        return Product.from_row(*self._product_row("id, asin, title, price, data", product_id))

    def _load_views(self, product_id: int) -> dict[str, pages.View]:
        """The stored views of the product page's summary and options (see :mod:`.pages`)."""
        (views,) = self._product_row("page_views", product_id)
        return {name: _view_from_data(data) for name, data in json.loads(views).items()}

    def _load_listing(self, product_id: int) -> pages.Listing:
        """The product as a search result shows it, without decoding the whole product."""
        asin, title, price, view = self._product_row("asin, title, price, result_view", product_id)
        return pages.Listing(asin, title, price, _view_from_data(json.loads(view)))

    def product_by_asin(self, asin: str) -> Product | None:
        """The product with this id (``B0...``, any case), or ``None``."""
        row = (
            self._connection()
            .execute("SELECT id FROM products WHERE asin = ?", (asin.upper(),))
            .fetchone()
        )
        return None if row is None else self.product(row[0])

    def split_ids(self, split: str) -> tuple[int, ...]:
        """Database ids of the products whose instructions belong to ``split``, ascending."""
        ids = self._split_ids.get(split)
        if ids is None:
            rows = self._connection().execute(
                "SELECT id FROM products WHERE split = ? ORDER BY id", (split,)
            )
            ids = self._split_ids[split] = tuple(row[0] for row in rows)
        return ids

    def search(self, query: str, limit: int = 50, *, cached: bool = True) -> list[int]:
        """Ids of the best ``limit`` products for ``query``, ranked by BM25 over title, category,
        attributes, options and product id (any query word may match; more and rarer matches
        rank higher).

        Only the query's most selective words are looked up (:meth:`query_words`); a query
        without a word that occurs in the catalogue finds nothing. Rankings are cached per set
        of looked-up words (``cached=False`` always asks the index)."""
        return self.index.search(query, limit, cached=cached)

    def query_words(self, query: str) -> list[str]:
        """The words of ``query`` that :meth:`search` looks up, in query order.

        Stop words, repeats and words that occur in no product are dropped, then words that occur
        in more than a tenth of the catalogue (``black``, ``large``: their BM25 weight is small)
        unless nothing else is left, and at most the six rarest remain. BM25 ranks by the rare
        words anyway; skipping the common ones keeps a search for a pasted instruction fast."""
        return self.index.query_words(query)

    def close(self) -> None:
        """Close this thread's connection (it reopens on next use)."""
        self.index.close()


def _build_digest(vocabulary: Vocabulary) -> str:
    """A hash of everything a database is built from: the vocabulary and the code that
    generates products, renders their pages and lays out the database. A change to any of them
    builds a new database instead of reusing a stale one."""
    digest = hashlib.sha256(vocabulary.digest.encode())
    for module in (catalogue, pages, fulltext):
        digest.update(Path(inspect.getfile(module)).read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:12]


def build_database(
    path: Path, vocabulary: Vocabulary, seed: int, size: int, *, progress: bool = True
) -> None:
    """Generate ``size`` products of catalogue ``seed`` into a new database at ``path``.

    The database is written to a temporary file next to ``path`` and renamed into place, so
    concurrent builders never expose a half-written file."""
    meta = {
        "generator_version": str(GENERATOR_VERSION),
        "vocabulary": vocabulary.digest,
        "seed": str(seed),
    }
    products = (generate_product(vocabulary, seed, index) for index in range(size))
    write_catalogue(path, products, size, meta, progress=progress)


def write_catalogue(
    path: Path,
    products: Iterable[Product],
    size: int,
    meta: Mapping[str, str],
    *,
    progress: bool = True,
    description: str = "Building the WebShop catalogue (once)",
) -> None:
    """Write ``size`` products (database ids 1 to ``size``, in order) into a new catalogue
    database at ``path`` that :class:`Shop` reads; ``meta`` is recorded with it."""

    def populate(connection: sqlite3.Connection) -> None:
        batch_size = 500
        stream = iter(products)
        with tqdm(
            total=size, desc=description, unit=" products", disable=not progress, leave=False
        ) as bar:
            while batch := list(itertools.islice(stream, batch_size)):
                _insert(connection, batch)
                bar.update(len(batch))
        connection.execute("INSERT INTO product_index (product_index) VALUES ('optimize')")

    write_database(path, _SCHEMA, populate, {**meta, "size": str(size)}, what="WebShop's search")


def _insert(connection: sqlite3.Connection, products: Sequence[Product]) -> None:
    connection.executemany(
        "INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                p.id,
                p.asin,
                split_of(f"webshop:{p.asin}", EVAL_FRACTION),
                p.title,
                p.price,
                p.to_json(),
                *_views_columns(p),
            )
            for p in products
        ],
    )
    connection.executemany(
        "INSERT INTO product_index (rowid, title, category, attributes, options, product_id) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [_index_row(p) for p in products],
    )
