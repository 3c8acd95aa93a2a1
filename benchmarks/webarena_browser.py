"""WebArena-v0's in-process browser against headless Chromium on the same page loads.

    python benchmarks/webarena_browser.py            # --tasks 40 --json FILE

Plays the oracle on the first ``--tasks`` eval tasks, records every page it lands on (GET URLs),
then loads each of them, one after the other, and takes its accessibility tree:

* in-process, as the environment does: the site's WSGI app answers in the same process and the
  HTML becomes the tree (with the parsed-page cache the environment uses, and without it);
* in Chromium (what WebArena runs, through Playwright): the page is served over HTTP by
  ``llmgym webarena serve``'s servers, loaded with ``page.goto`` and its accessibility tree
  read with ``aria_snapshot``.

Prints and writes pages per second of each and the ratio. Also writes the sites' data sizes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import gymnasium as gym
from bench_utils import launch_chromium, machine, pin_to_one_core, write_json

import llmgym  # noqa: F401
from llmgym.envs.webarena import axtree
from llmgym.envs.webarena.browser import Browser
from llmgym.envs.webarena.env import START_COOKIES
from llmgym.envs.webarena.serve import serve_sites
from llmgym.envs.webarena.shop_data import ShopData
from llmgym.envs.webarena.sites import Web

PORT_OFFSET = 2_000


def oracle_pages(tasks: int) -> list[str]:
    """The URLs the oracle's pages have, over the first ``tasks`` eval tasks."""
    env = gym.make("llmgym/WebArena-v0")
    inner = env.unwrapped
    urls = []
    for task_id in inner.task_ids("eval")[:tasks]:
        env.reset(options={"task_id": task_id})
        urls.append(inner.browser.url)
        terminated = truncated = False
        while not (terminated or truncated):
            _, _, terminated, truncated, _ = env.step(inner.oracle_action())
            if inner.browser.url != urls[-1]:
                urls.append(inner.browser.url)
    env.close()
    return urls


def in_process(urls: list[str], cached: bool) -> float:
    """Pages per second loaded and drawn as trees by the environment's browser."""
    browser = Browser(Web(0).site_at, viewport_lines=80)
    browser.start(urls[0], START_COOKIES)
    for url in urls:  # warm up: the same pass as measured
        browser.navigate(url)
        browser.render()
    start = time.perf_counter()
    for url in urls:
        if not cached:
            axtree._PAGE_CACHE.clear()
        browser.navigate(url)
        browser.render()
    return len(urls) / (time.perf_counter() - start)


def chromium(urls: list[str]) -> float:
    """Pages per second loaded by headless Chromium, each with its accessibility tree."""
    from playwright.sync_api import sync_playwright

    running = serve_sites(port_offset=PORT_OFFSET, web=Web(0))
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            context = browser.new_context()
            context.add_cookies(
                [
                    {
                        "name": name,
                        "value": value,
                        "url": f"http://127.0.0.1:{int(host.split(':')[1]) + PORT_OFFSET}/",
                    }
                    for host, jar in START_COOKIES.items()
                    for name, value in jar.items()
                ]
            )
            page = context.new_page()
            served = [_served(url) for url in urls]
            for url in served[:5]:
                page.goto(url)
                page.locator("body").aria_snapshot()
            start = time.perf_counter()
            for url in served:
                page.goto(url)
                page.locator("body").aria_snapshot()
            spent = time.perf_counter() - start
            browser.close()
    finally:
        for site in running:
            site.stop()
    return len(urls) / spent


def _served(url: str) -> str:
    parts = urlsplit(url)
    port = int(parts.netloc.split(":")[1]) + PORT_OFFSET
    return f"http://127.0.0.1:{port}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def data_sizes() -> dict[str, int]:
    """Rows per table of the store's generated database, and its size in bytes."""
    db = Web(0).connection(ShopData)
    tables = ("products", "categories", "customers", "orders", "order_items", "reviews")
    sizes = {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in tables}
    sizes["database_bytes"] = len(db.serialize())
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=40, help="eval tasks whose pages are loaded")
    parser.add_argument("--json", default="benchmarks/results/webarena_browser.json")
    args = parser.parse_args(argv)
    pin_to_one_core()
    urls = oracle_pages(args.tasks)
    ours_cached, ours_uncached = in_process(urls, True), in_process(urls, False)
    theirs = chromium(urls)
    payload = {
        "benchmark": "webarena_browser",
        "tasks": args.tasks,
        "pages": len(urls),
        "in_process_pages_per_s": ours_cached,
        "in_process_uncached_pages_per_s": ours_uncached,
        "chromium_pages_per_s": theirs,
        "in_process_over_chromium": ours_cached / theirs,
        "uncached_over_chromium": ours_uncached / theirs,
        "store_data": data_sizes(),
        "machine": machine(),
    }
    print(
        f"{len(urls)} pages: in-process {ours_cached:,.0f} pages/s ({ours_uncached:,.0f} without "
        f"the page cache), Chromium {theirs:,.1f} pages/s: {ours_cached / theirs:,.0f}x "
        f"({ours_uncached / theirs:,.0f}x uncached)"
    )
    write_json(Path(args.json), payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
