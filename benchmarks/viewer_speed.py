"""`llmgym view` at 10,000 episodes: index load, API latency and, in headless Chromium, page
load and filter latency, side by side with the peer design, a page that loads the whole file
and filters in the browser.

    python benchmarks/viewer_speed.py [--episodes 10000] [--repeats 5]

Two runs of ``--episodes`` episodes on the same task ids (benchmarks/viewer_data.py: real oracle
episodes of Heist-v0 and Wordle-v0, and real random-agent Wordle episodes, repeated under new
task ids). ``llmgym view`` runs as a subprocess. The peer is served by the standard library's
file server from the same folder: its page fetches run A's JSONL, parses every line and renders
every row, and a filter re-renders the rows that pass. Timings are medians over ``--repeats``
(page load: navigation until the list shows; filter: choosing an environment until the table
shows the result). Needs Playwright and /usr/bin/chromium. Writes
benchmarks/results/viewer_speed.json.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from benchmarks.bench_utils import launch_chromium, write_json  # noqa: E402
from benchmarks.viewer_data import (  # noqa: E402
    sample_runs,
    tiled_run,
    viewer_process,
)
from llmgym.viewer import EpisodeFilter, TrajectoryStore  # noqa: E402

FILTER_ENV = "llmgym/Heist-v0"

PEER_PAGE = """<!doctype html><meta charset="utf-8"><title>peer</title>
<select id="env"><option value="">any</option><option>llmgym/Heist-v0</option>
<option>llmgym/Wordle-v0</option></select><table id="t"><tbody></tbody></table>
<script>
let episodes = [];
function show() {
  const env = document.getElementById("env").value;
  const body = document.createElement("tbody");
  for (const e of episodes) {
    if (env && e.env_id !== env) continue;
    const row = body.insertRow();
    for (const v of [e.env_id, e.task_id, e.agent, e.success, e.turns.length, e.instruction])
      row.insertCell().textContent = String(v);
  }
  document.querySelector("#t tbody").replaceWith(body);
  document.body.dataset.shown = env || "all";
}
fetch("FILE").then(r => r.text()).then(text => {
  episodes = text.split("\\n").filter(l => l.trim()).map(l => JSON.parse(l));
  document.getElementById("env").addEventListener("change", show);
  show();
});
</script>"""


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per request."""


def _median_ms(samples: list[float]) -> float:
    return round(1000 * statistics.median(samples), 1)


def _api_ms(url: str, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        with urllib.request.urlopen(url) as response:
            response.read()
        samples.append(time.perf_counter() - start)
    return _median_ms(samples)


def _viewer_in_browser(browser: Any, url: str, repeats: int, filtered: int) -> dict[str, float]:
    loads, filters, opens = [], [], []
    for _ in range(repeats):
        page = browser.new_page()
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector("body[data-ready='/'] #episode-table tbody tr")
        loads.append(time.perf_counter() - start)
        start = time.perf_counter()
        page.select_option("#filter-env", FILTER_ENV)
        page.wait_for_selector(f"#page-info:has-text('of {filtered:,}')")
        filters.append(time.perf_counter() - start)
        start = time.perf_counter()
        page.click("#episode-table tbody tr:first-child")
        page.wait_for_selector("#outcome")
        opens.append(time.perf_counter() - start)
        page.close()
    return {
        "page_load_ms": _median_ms(loads),
        "filter_ms": _median_ms(filters),
        "open_episode_ms": _median_ms(opens),
    }


def _peer_in_browser(browser: Any, url: str, repeats: int) -> dict[str, float]:
    loads, filters = [], []
    for _ in range(repeats):
        page = browser.new_page()
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector("body[data-shown='all']", timeout=300_000)
        loads.append(time.perf_counter() - start)
        start = time.perf_counter()
        page.select_option("#env", FILTER_ENV)
        page.wait_for_selector(f"body[data-shown='{FILTER_ENV}']", timeout=300_000)
        filters.append(time.perf_counter() - start)
        page.close()
    return {"page_load_ms": _median_ms(loads), "filter_ms": _median_ms(filters)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/viewer_speed.json"))
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sample = sample_runs(folder / "sample")
        random_wordle = folder / "random-wordle.jsonl"
        random_wordle.write_text(
            "".join(
                line + "\n"
                for line in sample["random"].read_text().splitlines()
                if '"llmgym/Wordle-v0"' in line
            )
        )
        run_a = tiled_run(sample["oracle"], folder / "a.jsonl", args.episodes)
        run_b = tiled_run(random_wordle, folder / "b.jsonl", args.episodes)

        start = time.perf_counter()
        store = TrajectoryStore([run_a, run_b])
        index_s = time.perf_counter() - start
        assert len(store.episodes) == 2 * args.episodes

        (folder / "peer.html").write_text(PEER_PAGE.replace("FILE", run_a.name))
        handler = functools.partial(_QuietFiles, directory=str(folder))
        peer_server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=peer_server.serve_forever, daemon=True).start()
        peer_url = f"http://127.0.0.1:{peer_server.server_address[1]}/peer.html"

        with viewer_process(run_a, run_b) as url, sync_playwright() as playwright:
            api = {
                "runs_ms": _api_ms(f"{url}api/runs", args.repeats),
                "first_page_ms": _api_ms(f"{url}api/episodes?limit=50", args.repeats),
                "filter_env_success_ms": _api_ms(
                    f"{url}api/episodes?env_id={FILTER_ENV}&success=true&limit=50", args.repeats
                ),
                "search_instruction_ms": _api_ms(f"{url}api/episodes?q=gem&limit=50", args.repeats),
                "filter_turns_invalid_ms": _api_ms(
                    f"{url}api/episodes?min_turns=5&max_invalid=0&limit=50", args.repeats
                ),
                "compare_ms": _api_ms(f"{url}api/compare?a=0&b=1&outcome=a_only", args.repeats),
                "episode_ms": _api_ms(f"{url}api/episodes/0", args.repeats),
            }
            browser = launch_chromium(playwright)
            filtered = store.query(EpisodeFilter(run=0, env_id=FILTER_ENV))[0]
            viewer = _viewer_in_browser(browser, url + "#/?run=0", args.repeats, filtered)
            peer = _peer_in_browser(browser, peer_url, args.repeats)
            browser.close()
        peer_server.shutdown()
        file_mb = round(run_a.stat().st_size / 1e6, 1)

    payload = {
        "benchmark": "viewer_speed",
        "episodes_per_run": args.episodes,
        "runs": 2,
        "run_a_file_mb": file_mb,
        "repeats": args.repeats,
        "index_load_s": round(index_s, 2),
        "api": api,
        "browser": {
            "viewer": viewer,
            "peer_whole_file": peer,
            "page_load_ratio": round(peer["page_load_ms"] / viewer["page_load_ms"], 1),
            "filter_ratio": round(peer["filter_ms"] / viewer["filter_ms"], 1),
        },
    }
    print(json.dumps(payload, indent=2))
    write_json(args.out, payload)


if __name__ == "__main__":
    main()
