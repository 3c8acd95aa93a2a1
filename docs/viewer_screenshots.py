"""The pictures of docs/viewer.md: ``llmgym view`` over sample runs, in headless Chromium, and
two episodes as GIFs (``llmgym render``): the Heist one shown in the viewer, and an oracle
episode of Crafter-v0 recorded with frames (what the agent's surroundings look like, step by
step).

    python docs/viewer_screenshots.py     # writes docs/img/viewer/*.png and *.gif

The runs are real (benchmarks/viewer_data.py: the oracle and the random agent on the same Heist-v0
and Wordle-v0 tasks, Heist's frames recorded). Needs Playwright (the [test] extra) and Chromium at
/usr/bin/chromium (Debian's ``chromium`` package).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from playwright.sync_api import sync_playwright  # noqa: E402

from benchmarks.bench_utils import launch_chromium  # noqa: E402
from benchmarks.viewer_data import sample_runs, viewer_process  # noqa: E402
from llmgym.agents import OracleAgent  # noqa: E402
from llmgym.runner.evaluation import evaluate  # noqa: E402
from llmgym.runner.trajectories import append_trajectory  # noqa: E402
from llmgym.viewer.render import write_gif  # noqa: E402

OUT = ROOT / "docs" / "img" / "viewer"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        runs = sample_runs(Path(folder))
        with (
            viewer_process(runs["oracle_results"], runs["random"]) as url,
            sync_playwright() as playwright,
        ):
            browser = launch_chromium(playwright)
            page = browser.new_page(viewport={"width": 1280, "height": 800})

            page.goto(url)
            page.wait_for_selector("#episode-table tbody tr")
            page.select_option("#filter-env", "llmgym/Heist-v0")
            page.wait_for_selector("body[data-ready='/']")
            page.screenshot(path=OUT / "list.png")

            page.click("#episode-table tbody tr:first-child")
            page.wait_for_selector("#player-img")
            for _ in range(4):
                page.click("#player-next")
            page.wait_for_selector("#player-img[data-shown='4']")
            page.screenshot(path=OUT / "episode.png")

            page.goto(url + "#/compare?a=0&b=1&outcome=a_only")
            page.wait_for_selector("#compare-table tbody tr")
            page.screenshot(path=OUT / "compare.png")
            page.click("#compare-table tbody tr:first-child")
            page.wait_for_selector("#pair-b .turn")
            page.screenshot(path=OUT / "pair.png")
            browser.close()
        write_gif(runs["oracle"], 0, OUT / "heist.gif", scale=2)
        crafter = Path(folder) / "crafter.jsonl"
        evaluate(
            "llmgym/Crafter-v0",
            OracleAgent(),
            episodes=1,
            progress=False,
            record_frames=True,
            on_trajectory=lambda trajectory: append_trajectory(crafter, trajectory),
        )
        write_gif(crafter, 0, OUT / "crafter.gif", scale=2, frame_ms=250)
    for name in ("list.png", "episode.png", "compare.png", "pair.png", "heist.gif", "crafter.gif"):
        print(OUT / name)


if __name__ == "__main__":
    main()
