"""SearchQA on original data: building the BM25 index of a Search-R1 corpus, and searching it.

    python benchmarks/searchqa_original_index.py        # the sizes below, writes the JSON
    python benchmarks/searchqa_original_index.py --sizes 50000 200000 --queries 200

Search-R1's corpus (``wiki-18.jsonl``) holds 21,015,324 Wikipedia passages of 100 words, one
JSON line each (``{"id", "contents": "\\"Title\\"\\ntext"}``). This script writes synthetic
corpora in that layout (deterministic: the same sizes give the same files), each passage a
title and 100 words drawn from a Zipf-distributed vocabulary of invented words (as word
frequencies in Wikipedia are), then, for each size, in a fresh cache folder:

* ``build_s``: ``Passages.open`` on the file, the whole first use (streaming the corpus into the
  FTS5 index and merging it), wall-clock and ``build_cpu_s``, the CPU time of this process
  (indexing runs on one core, so CPU time is what a machine that is not shared would take),
  and the index's size on disk;
* ``first_search_s``: the first search of a process on the built index (the words' document
  frequencies come from a table written at build time, so nothing is loaded whole);
* search latency of ``Passages.search(query, 3)`` with the ranking not cached, for queries of
  a random passage's 3 rarest words and 3 of the 50 commonest words (which the index drops as
  too common, as it drops "what" or "the" of a question), percentiles of wall-clock and of
  this thread's CPU time (which other processes on a busy machine do not inflate).

Then it extrapolates to 21,015,324 passages (:func:`extrapolate`): build time and index size by
a line through the two largest sizes, search latency in proportion to the passages. Indexing
is a sequential stream, so its time per passage should stay about flat; the FTS5 segment
merges (log of the size) and the final ``optimize`` (rewriting the whole index once) make it
grow slowly, which a line through two sizes does not capture beyond them: the figure is an
estimate, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_utils import write_json

from llmgym.envs.searchqa.original import Passages

WIKI_18_PASSAGES = 21_015_324
"""Passages of Search-R1's wiki-18.jsonl: DPR's 100-word passages of the Wikipedia of 20
December 2018 (Karpukhin et al., 2020, state this count)."""
WORDS_PER_PASSAGE = 100
VOCABULARY = 1_000_000
ZIPF_EXPONENT = 1.1
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def _vocabulary(size: int) -> list[str]:
    """``size`` distinct invented words (2 to 4 syllables), the same on every machine."""
    rng = np.random.default_rng(20181220)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < size:
        lengths = rng.integers(2, 5, size=size)
        picks = rng.integers(0, len(SYLLABLES), size=(size, 4))
        for length, row in zip(lengths, picks, strict=True):
            word = "".join(SYLLABLES[i] for i in row[:length])
            if word not in seen:
                seen.add(word)
                out.append(word)
                if len(out) == size:
                    break
    return out


def write_corpus(path: Path, passages: int, vocabulary: list[str]) -> None:
    """``passages`` lines of Search-R1's layout: a 2-word title and 100 Zipf-drawn words."""
    rng = np.random.default_rng(passages)
    ranks = np.arange(1, len(vocabulary) + 1, dtype=np.float64)
    weights = ranks**-ZIPF_EXPONENT
    cumulative = np.cumsum(weights / weights.sum())
    with path.open("w") as corpus:
        for start in range(0, passages, 10_000):
            count = min(10_000, passages - start)
            drawn = np.searchsorted(cumulative, rng.random((count, WORDS_PER_PASSAGE + 2)))
            drawn = np.minimum(drawn, len(vocabulary) - 1)
            lines = []
            for offset, row in enumerate(drawn):
                title = " ".join(vocabulary[i].capitalize() for i in row[:2])
                text = " ".join(vocabulary[i] for i in row[2:]) + "."
                line = {"id": str(start + offset + 1), "contents": f'"{title}"\n{text}'}
                lines.append(json.dumps(line))
            corpus.write("\n".join(lines) + "\n")


def _queries(passages: Passages, count: int, vocabulary: list[str]) -> list[str]:
    """Per query, a random passage's 3 rarest words and 3 of the 50 commonest words."""
    rng = np.random.default_rng(7)
    rank = {word: index for index, word in enumerate(vocabulary)}
    queries = []
    for rowid in rng.integers(1, passages.size + 1, size=count):
        words = passages.article(int(rowid)).text.rstrip(".").split()
        rare = sorted(set(words), key=lambda w: -rank.get(w, 0))[:3]
        common = [vocabulary[i] for i in rng.integers(0, 50, size=3)]
        queries.append(" ".join(rare + common))
    return queries


def measure(size: int, folder: Path, vocabulary: list[str], queries: int) -> dict[str, float]:
    corpus_dir = folder / f"corpus-{size}"
    corpus_dir.mkdir()
    corpus = corpus_dir / "wiki-18.jsonl"
    started = time.perf_counter()
    write_corpus(corpus, size, vocabulary)
    generate_s = time.perf_counter() - started
    os.environ["LLMGYM_CACHE_DIR"] = str(folder / f"cache-{size}")
    Passages._instances.clear()
    started, cpu = time.perf_counter(), time.process_time()
    passages = Passages.open(corpus_dir, progress=False)
    build_s, build_cpu_s = time.perf_counter() - started, time.process_time() - cpu
    index_bytes = passages.index_path.stat().st_size
    Passages._instances.clear()
    passages = Passages.open(corpus_dir, progress=False)  # a new process's view: opened, cold
    probe = _queries(passages, queries + 1, vocabulary)
    started = time.perf_counter()
    passages.search(probe[0], 3)
    first_search_s = time.perf_counter() - started
    latencies, cpu_times = [], []
    for query in probe[1:]:
        started, cpu = time.perf_counter(), time.thread_time()
        [passages.article(r) for r in passages.index.search(query, 3, cached=False)]
        latencies.append(time.perf_counter() - started)
        cpu_times.append(time.thread_time() - cpu)
    latencies.sort()
    cpu_times.sort()
    result = {
        "passages": size,
        "corpus_bytes": corpus.stat().st_size,
        "generate_s": round(generate_s, 2),
        "build_s": round(build_s, 2),
        "build_cpu_s": round(build_cpu_s, 2),
        "index_bytes": index_bytes,
        "first_search_s": round(first_search_s, 3),
        "search_p50_ms": round(1000 * statistics.median(latencies), 2),
        "search_p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 2),
        "search_cpu_p50_ms": round(1000 * statistics.median(cpu_times), 2),
        "search_cpu_p95_ms": round(1000 * cpu_times[int(0.95 * (len(cpu_times) - 1))], 2),
        "queries": len(latencies),
    }
    passages.index.close()
    corpus.unlink()
    print(json.dumps(result), flush=True)
    return result


def extrapolate(rows: list[dict[str, float]], target: int) -> dict[str, float]:
    """The measures at ``target`` passages: build time and index size fitted as ``a + b *
    passages`` through the two largest sizes; search latency in proportion to the passages
    (a word's list of passages, which a search reads, grows with the corpus), from the
    largest size."""
    small, large = sorted(rows, key=lambda r: r["passages"])[-2:]
    out: dict[str, float] = {"passages": target}
    for key in ("build_s", "build_cpu_s", "index_bytes"):
        slope = (large[key] - small[key]) / (large["passages"] - small["passages"])
        out[key] = round(large[key] + slope * (target - large["passages"]), 2)
    for key in ("search_p50_ms", "search_p95_ms", "search_cpu_p50_ms", "search_cpu_p95_ms"):
        out[key] = round(large[key] * target / large["passages"], 1)
    out["build_hours"] = round(out["build_s"] / 3600, 2)
    out["build_cpu_hours"] = round(out["build_cpu_s"] / 3600, 2)
    out["index_gib"] = round(out["index_bytes"] / 2**30, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--json", default="benchmarks/results/searchqa_original_index.json")
    args = parser.parse_args(argv)
    if len(args.sizes) < 2:
        parser.error("give at least two --sizes (the extrapolation fits a line through two)")
    vocabulary = _vocabulary(VOCABULARY)
    with tempfile.TemporaryDirectory(prefix="llmgym-searchqa-bench-") as folder:
        rows = [measure(size, Path(folder), vocabulary, args.queries) for size in args.sizes]
    per_million = {
        "build_s": round(rows[-1]["build_s"] * 1e6 / rows[-1]["passages"], 1),
        "build_cpu_s": round(rows[-1]["build_cpu_s"] * 1e6 / rows[-1]["passages"], 1),
        "index_bytes": round(rows[-1]["index_bytes"] * 1e6 / rows[-1]["passages"]),
        "corpus_bytes": round(rows[-1]["corpus_bytes"] * 1e6 / rows[-1]["passages"]),
    }
    projected = extrapolate(rows, WIKI_18_PASSAGES)
    print(f"per million passages (at {rows[-1]['passages']:,}): {per_million}")
    print(f"extrapolated to {WIKI_18_PASSAGES:,} passages: {projected}")
    write_json(
        args.json,
        {
            "benchmark": "searchqa_original_index",
            "method": (
                "synthetic Search-R1 corpora (title + 100 Zipf-drawn words per passage, "
                f"vocabulary {VOCABULARY:,}, exponent {ZIPF_EXPONENT}); Passages.open builds "
                "the FTS5 BM25 index (streamed, then optimized); searches uncached, top 3"
            ),
            "sizes": rows,
            "per_million_passages": per_million,
            "extrapolated_wiki_18": projected,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
