"""SearchQA's encyclopedia: corpus size, build times, search latency and retrieval quality.

    python benchmarks/searchqa_corpus.py          # prints a table, writes the JSON
    python benchmarks/searchqa_corpus.py --repeats 5 --json benchmarks/results/searchqa_corpus.json

On one core. Measured for corpus seed 0:

* ``generate_s`` — generating the world (entities and facts; every process does this once);
* ``index_build_s`` — writing the articles and building the FTS5 index into a fresh database
  (what the first use on a machine adds; later processes open the cached file);
* search latency of ``Encyclopedia.search(query, 3)`` uncached, for the eval questions pasted
  verbatim and for article titles, wall-clock and CPU (``time.thread_time``) percentiles;
* retrieval quality: how often a search for an article's title returns that article first and
  in the top 3, over every article.

The peer is the index-free way: Okapi BM25 (k1 = 1.2, b = 0.75, the same words, title and text
together) scored by scanning every article per query in Python. Its latency and quality are
measured on the same queries in the same run; the JSON holds the ratio of median CPU times
(which other processes on a busy machine do not inflate).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench_utils import pin_to_one_core, write_json

from llmgym.cli import format_table
from llmgym.core.fulltext import search_terms, words
from llmgym.envs.searchqa.corpus import Article, Encyclopedia, build_database, build_world
from llmgym.envs.searchqa.questions import questions_for


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _median_seconds(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


class ScanBm25:
    """The peer: Okapi BM25 over every article, scored by a full scan per query."""

    def __init__(self, articles: list[Article], stopwords: frozenset[str]) -> None:
        self.articles = articles
        self.stopwords = stopwords
        self.documents = [Counter(words(f"{a.title} {a.text}")) for a in articles]
        self.lengths = [sum(d.values()) for d in self.documents]
        self.average = sum(self.lengths) / len(self.lengths)
        frequency: Counter[str] = Counter()
        for document in self.documents:
            frequency.update(document.keys())
        n = len(articles)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}

    def search(self, query: str, k: int) -> list[Article]:
        terms = [t for t in search_terms(query, self.stopwords) if t in self.idf]
        if not terms:
            return []
        scores = []
        for index, (document, length) in enumerate(zip(self.documents, self.lengths, strict=True)):
            score = 0.0
            for term in terms:
                count = document.get(term)
                if count:
                    norm = count + 1.2 * (0.25 + 0.75 * length / self.average)
                    score += self.idf[term] * count * 2.2 / norm
            if score:
                scores.append((-score, index))
        return [self.articles[i] for _, i in sorted(scores)[:k]]


def _latency(search, queries: list[str]) -> dict[str, float]:
    wall, cpu = [], []
    for query in queries:
        started, started_cpu = time.perf_counter(), time.thread_time()
        search(query)
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - started_cpu) * 1000)
    return {
        "queries": len(queries),
        "p50_ms": _percentile(wall, 0.5),
        "p99_ms": _percentile(wall, 0.99),
        "cpu_p50_ms": _percentile(cpu, 0.5),
    }


def _quality(search, articles: list[Article]) -> dict[str, float]:
    first = top3 = 0
    for article in articles:
        found = search(article.title)
        first += bool(found) and found[0].title == article.title
        top3 += any(a.title == article.title for a in found)
    return {"title_hit_at_1": first / len(articles), "title_hit_at_3": top3 / len(articles)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each build (median)")
    parser.add_argument("--json", default="benchmarks/results/searchqa_corpus.json")
    args = parser.parse_args(argv)
    pin_to_one_core()
    generate_s = _median_seconds(lambda: build_world(0), args.repeats)
    world = build_world(0)
    with tempfile.TemporaryDirectory() as folder:
        paths = iter(Path(folder) / f"build{i}.sqlite3" for i in range(args.repeats))
        index_build_s = _median_seconds(
            lambda: build_database(next(paths), world, progress=False), args.repeats
        )
    corpus = Encyclopedia.open(0, progress=False)
    articles = list(world.articles())
    peer = ScanBm25(articles, corpus.index.stopwords)
    query_sets = {
        "questions": [q.text for q in questions_for(0, "eval")],
        "titles": [a.title for a in articles[::7]],
    }

    def ours(query: str) -> list[Article]:
        return [corpus.article(i) for i in corpus.index.search(query, 3, cached=False)]

    rows = []
    for name, queries in query_sets.items():
        for engine, search in (("fts5", ours), ("scan", lambda q: peer.search(q, 3))):
            rows.append({"query_set": name, "engine": engine, **_latency(search, queries)})
    quality = {
        "fts5": _quality(ours, articles),
        "scan": _quality(lambda q: peer.search(q, 3), articles),
    }
    cpu = {(r["query_set"], r["engine"]): r["cpu_p50_ms"] for r in rows}
    ratio = {name: cpu[(name, "scan")] / cpu[(name, "fts5")] for name in query_sets}
    print(
        format_table(
            [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
            ["query_set", "engine", "queries", "p50_ms", "p99_ms", "cpu_p50_ms"],
        )
    )
    print(
        f"{len(articles):,} articles; generate {generate_s:.2f} s, index build "
        f"{index_build_s:.2f} s; by median CPU time FTS5 is {ratio['questions']:.0f}x "
        f"(questions) and {ratio['titles']:.0f}x (titles) faster than a scan; title hit@1 "
        f"{quality['fts5']['title_hit_at_1']:.1%} "
        f"(scan {quality['scan']['title_hit_at_1']:.1%})"
    )
    write_json(
        args.json,
        {
            "benchmark": "searchqa_corpus",
            "corpus": {
                "seed": 0,
                "articles": len(articles),
                "by_kind": {kind: len(group) for kind, group in world.by_kind.items()},
                "words": sum(len(a.text.split()) for a in articles),
            },
            "repeats": args.repeats,
            "generate_s": generate_s,
            "index_build_s": index_build_s,
            "search": rows,
            "scan_over_fts5_cpu_p50": ratio,
            "retrieval_quality": quality,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
