"""`llmgym view` in a real browser: the command runs as a subprocess on 127.0.0.1 and headless
Chromium (Debian's /usr/bin/chromium, driven by Playwright) opens the list, filters it, opens an
episode, steps through its frames and compares two runs. The runs are real episodes
(benchmarks/viewer_data.py), plus one crafted episode whose text is HTML."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_utils import CHROMIUM, launch_chromium
from benchmarks.viewer_data import sample_runs, tiled_run, viewer_process
from llmgym.runner.trajectories import Trajectory, Turn, append_trajectory

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    ),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("runs")
    paths = sample_runs(folder)
    paths["many"] = tiled_run(paths["oracle"], folder / "many.jsonl", 120)
    hostile = folder / "hostile.jsonl"
    append_trajectory(
        hostile,
        Trajectory(
            env_id="llmgym/Wordle-v0",
            task_id="eval/99999",
            split="eval",
            agent=HOSTILE,
            instruction=f"Instruction {HOSTILE}",
            turns=[Turn(observation=HOSTILE, reply=HOSTILE, thought=HOSTILE, action=HOSTILE)],
            final_observation=HOSTILE,
        ),
    )
    paths["hostile"] = hostile
    return paths


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def viewer(runs: dict[str, Path]) -> Iterator[str]:
    with viewer_process(runs["oracle_results"], runs["random"], runs["many"]) as url:
        assert url.startswith("http://127.0.0.1:")
        yield url


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, errors


def _rows(page: Any) -> list[str]:
    return page.locator("#episode-table tbody tr").all_inner_texts()


def test_list_filters_and_pages(page: Any, viewer: str, runs: dict[str, Path]) -> None:
    page.goto(viewer)
    page.wait_for_selector("#episode-table tbody tr")
    assert page.inner_text("#summary").startswith("144 episodes · 3 run(s)")
    assert page.inner_text("#page-info") == "1–50 of 144"
    page.click("#page-next")
    page.wait_for_selector("text=51–100 of 144")

    page.select_option("#filter-run", "0")
    page.wait_for_selector("text=1–12 of 12")
    page.select_option("#filter-env", "llmgym/Heist-v0")
    page.wait_for_selector("text=1–6 of 6")
    assert all("llmgym/Heist-v0" in row for row in _rows(page))

    page.select_option("#filter-run", "1")
    page.select_option("#filter-success", "false")
    page.wait_for_selector("#episode-table tbody tr >> text=failed")
    rows = _rows(page)
    assert rows and all("failed" in row and "random" in row for row in rows)

    page.select_option("#filter-success", "")
    page.fill("#filter-min-turns", "1000")
    page.dispatch_event("#filter-min-turns", "change")
    page.wait_for_selector("#page-info >> text=/of \\d+$/")
    assert all(int(row.split("\t")[7]) >= 1000 for row in _rows(page))

    page.goto(viewer + "#/")
    page.wait_for_selector("#episode-table tbody tr")
    page.fill("#filter-q", "hidden 5-letter")
    page.wait_for_selector("text=/of 72$/")  # Wordle: 6 + 6 + 60 of the tiled run
    assert all("Wordle" in row for row in _rows(page))
    assert page.evaluate("document.activeElement.id") == "filter-q"


def test_episode_steps_through_frames(page: Any, viewer: str) -> None:
    page.goto(viewer + "#/?env_id=llmgym/Heist-v0&run=0")
    page.wait_for_selector("#episode-table tbody tr")
    page.click("#episode-table tbody tr:first-child")
    page.wait_for_selector("#player-img[data-shown='0']")
    text = page.inner_text("main").lower()
    assert "instruction" in text and "outcome" in page.inner_text("#outcome").lower()
    total = int(re.search(r"step 0 / (\d+)", page.inner_text("#player-step"))[1])
    turns = page.locator(".turn").count()
    assert total == turns  # one frame per turn, and the final state
    for step in (1, 2, 3):
        page.click("#player-next")
        page.wait_for_selector(f"#player-img[data-shown='{step}']")
        assert page.inner_text("#player-step") == f"step {step} / {total}"
    assert page.get_attribute(".turn.current", "data-turn") == "3"
    first = page.get_attribute("#player-img", "src")
    page.click("#player-play")  # plays to the last frame and stops there
    page.wait_for_selector(f"#player-step:text-is('step {total} / {total}')", timeout=60_000)
    page.wait_for_selector("#player-play:text-is('▶ play')")
    assert page.get_attribute("#player-img", "src") != first
    assert page.locator(".turn.current").count() == 0  # the final state follows the turns
    page.click("#player-first")
    page.wait_for_selector("#player-img[data-shown='0']")
    image = page.evaluate(
        "fetch(document.getElementById('player-img').src).then(r => r.headers.get('content-type'))"
    )
    assert image == "image/png"


def test_text_episode_replays_observations(page: Any, viewer: str) -> None:
    page.goto(viewer + "#/?env_id=llmgym/Wordle-v0&run=0")
    page.wait_for_selector("#episode-table tbody tr")
    page.click("#episode-table tbody tr:first-child")
    page.wait_for_selector("#player-text")
    first = page.inner_text("#player-text")
    page.click("#player-next")
    assert page.inner_text("#player-text") != first
    assert page.get_attribute(".turn.current", "data-turn") == "1"


def test_two_runs_side_by_side(page: Any, viewer: str) -> None:
    page.goto(viewer + "#/compare")
    page.wait_for_selector("#compare-table tbody tr")
    page.select_option("#compare-b", "1")
    page.click("#compare-counts button[data-outcome='a_only']")
    page.wait_for_selector("#compare-counts button.active[data-outcome='a_only']")
    count = int(page.inner_text("#compare-counts button.active").rsplit(": ", 1)[1])
    rows = page.locator("#compare-table tbody tr").all_inner_texts()
    assert count > 0 and len(rows) == count
    assert all("success" in r.split("\t")[2] and "failed" in r.split("\t")[3] for r in rows)
    task = rows[0].split("\t")[1]
    page.click("#compare-table tbody tr:first-child")
    page.wait_for_selector("#pair-b .turn")
    for side in ("a", "b"):
        assert task in page.inner_text(f"#pair-{side} h2")
    assert "success" in page.inner_text("#pair-a .meta")
    assert "failed" in page.inner_text("#pair-b .meta")


def test_episode_text_renders_as_text(browser: Any, runs: dict[str, Path]) -> None:
    context = browser.new_context()
    page = context.new_page()
    with viewer_process(runs["hostile"]) as url:
        page.goto(url)
        page.wait_for_selector("#episode-table tbody tr")
        assert HOSTILE in page.inner_text("#episode-table")
        page.click("#episode-table tbody tr:first-child")
        page.wait_for_selector(".turn")
        assert page.inner_text(".turn .observation") == HOSTILE
        assert page.inner_text("pre.instruction") == f"Instruction {HOSTILE}"
        assert page.evaluate("window.__pwned === undefined")
        assert page.locator("main script, main img[src='x']").count() == 0
        assert page.locator("script").count() == 1  # app.js alone
    context.close()


def test_long_episode_draws_turns_on_demand(page: Any, viewer: str) -> None:
    page.goto(viewer + "#/?run=1&min_turns=1000")
    page.wait_for_selector("#episode-table tbody tr")
    page.click("#episode-table tbody tr:first-child")
    page.wait_for_selector("#player-img[data-shown='0']")
    assert page.locator(".turn").count() == 200
    assert "800 not shown" in page.inner_text("#more-turns")
    page.locator("#player-slider").fill("500")
    page.wait_for_selector("#player-img[data-shown='500']")
    assert page.get_attribute(".turn.current", "data-turn") == "500"
    assert page.locator(".turn").count() == 501
    page.click("#more-turns")
    assert page.locator(".turn").count() == 701
