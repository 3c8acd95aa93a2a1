"""Reading WebShop's original data layout: parse time, index time and memory per product.

    python benchmarks/webshop_original_load.py --products 20000 \
        --json benchmarks/results/webshop_original_load.json

WebShop's 1.18M-product file cannot be downloaded here, so the files are written in WebShop's
layout (``items_shuffle.json``, ``items_ins_v2.json``, ``items_human_ins.json``) from llmgym's
own generated products: one instruction in ``items_ins_v2`` per product and one human
instruction per ten products. Generated products carry less text than scraped ones (the JSON
bytes per product are reported), so the figures are a lower bound for WebShop's own files.

Measured, in a fresh cache folder: reading the files and making the goals (``parse``), then
building the FTS5 catalogue (``index``), wall-clock and CPU seconds, the process's peak
resident memory, and the catalogue database's size; then the same load again in the process
(cached) and the synthetic goals' count.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import tempfile
import time
from pathlib import Path

from bench_utils import write_json

from llmgym.envs.webshop import original
from llmgym.envs.webshop.catalogue import generate_product, load_vocabulary


def write_files(folder: Path, count: int) -> int:
    """Write ``count`` products in WebShop's full layout into ``folder``; return the product
    file's size in bytes."""
    vocabulary = load_vocabulary()
    products, attributes, human = [], {}, {}
    for index in range(count):
        product = generate_product(vocabulary, 0, index)
        products.append(
            {
                "asin": product.asin,
                "name": product.title,
                "query": product.product_type,
                "category": product.category[0].lower(),
                "product_category": " › ".join(product.category),
                "full_description": product.description,
                "small_description": list(product.features),
                "pricing": f"${product.price:.2f}",
                "customization_options": {
                    name: [{"value": value, "image": None} for value in values]
                    for name, values in product.options
                },
                "images": [f"https://example.invalid/{product.asin}.jpg"],
            }
        )
        attributes[product.asin] = {
            "attributes": list(product.attributes),
            "instruction": f"Find me {product.product_type} with {product.attributes[0]}",
            "instruction_attributes": list(product.attributes[:2]),
        }
        if index % 10 == 0:
            human[product.asin] = [
                {
                    "instruction": f"i need {product.product_type} that is {product.attributes[0]}",
                    "instruction_attributes": list(product.attributes[:1]),
                    "instruction_options": [product.options[0][1][0]] if product.options else [],
                }
            ]
    for name, data in (
        ("items_shuffle.json", products),
        ("items_ins_v2.json", attributes),
        ("items_human_ins.json", human),
    ):
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return (folder / "items_shuffle.json").stat().st_size


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_load(folder: Path, cache: Path) -> dict[str, float | int]:
    """Load the data in ``folder`` twice (in this process, which wrote nothing before)."""
    os.environ["LLMGYM_CACHE_DIR"] = str(cache)
    rss_before = _peak_rss_mib()
    paths = original._files(folder)
    wall, cpu = time.perf_counter(), time.process_time()
    _, records = original._records(*paths)
    goals = original._human_goals(records, paths[2])
    parse_wall, parse_cpu = time.perf_counter() - wall, time.process_time() - cpu
    del records
    wall, cpu = time.perf_counter(), time.process_time()
    shop = original.load_shop(folder, progress=False)
    load_wall, load_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall = time.perf_counter()
    original.load_shop(folder, progress=False)
    again_ms = (time.perf_counter() - wall) * 1e3
    return {
        "human_goals": len(goals),
        "synthetic_goals": shop.synthetic_count,
        "parse_seconds": parse_wall,
        "parse_cpu_seconds": parse_cpu,
        "load_and_index_seconds": load_wall,
        "load_and_index_cpu_seconds": load_cpu,
        "index_cpu_seconds": load_cpu - parse_cpu,
        "cached_load_ms": again_ms,
        "database_bytes_per_product": shop.shop.path.stat().st_size / shop.products,
        "peak_rss_mib_at_start": rss_before,
        "peak_rss_mib": _peak_rss_mib(),
    }


def measure(count: int) -> dict[str, float | int]:
    """Write ``count`` products, then load them in a fresh process."""
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "data"
        folder.mkdir()
        size = write_files(folder, count)
        context = multiprocessing.get_context("spawn")
        with context.Pool(1) as pool:
            loaded = pool.apply(measure_load, (folder, Path(temporary) / "cache"))
        return {"products": count, "product_file_bytes_per_product": size / count, **loaded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--products", type=int, default=20_000)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    result = measure(args.products)
    per_million = 1_000_000 / args.products
    result["extrapolated_load_and_index_cpu_seconds_per_million"] = (
        result["load_and_index_cpu_seconds"] * per_million
    )
    result["extrapolated_database_gib_per_million"] = (
        result["database_bytes_per_product"] * 1_000_000 / 2**30
    )
    for key, value in result.items():
        print(f"{key:55} {value:,.2f}" if isinstance(value, float) else f"{key:55} {value:,}")
    if args.json:
        write_json(args.json, {"benchmark": "webshop_original_load", "results": result})


if __name__ == "__main__":
    main()
