"""WebArena's original tasks as llmgym reads them: what kinds there are, what the oracle and the
evaluators cover, and the cost of a step in headless Chromium.

    python benchmarks/webarena_original.py WEBARENA_CHECKOUT      # --json FILE

The checkout is a clone of https://github.com/web-arena-x/webarena (its
``config_files/test.raw.json`` is read by llmgym's loader, the placeholders replaced with
dummy addresses). Counted: tasks per eval-type combination and reference-answer kind; the
tasks the answer-key oracle solves without a judge (string_match without fuzzy_match,
url_match, both; no program_html, as WebArena's test configs carry no action sequence), those
it solves only with a judge, and those it does not solve; program_html targets by locator
kind, and the tasks whose targets call Magento's REST API helpers (left unscored). Then, on
llmgym's own wiki site served on loopback, the seconds per ``env.step`` (scroll then observe,
the accessibility tree read through the DevTools protocol), median of 20 steps.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym
from bench_utils import CHROMIUM, write_json

import llmgym  # noqa: F401 (registers the environments)
from llmgym.envs.webarena.original import SITE_VARIABLES, load_tasks
from llmgym.envs.webarena.serve import serve_sites
from llmgym.envs.webarena.sites import Web

REST_HELPERS = re.compile(r"shopping_get_(latest_order_url|sku_latest_review_\w+)")


def census(checkout: Path) -> dict[str, Any]:
    """Counts over the checkout's task configs (see the module docstring)."""
    environ = {name: f"http://{name.lower()}.invalid" for name in SITE_VARIABLES}
    configs = [task.config(environ) for task in load_tasks(checkout)]
    combos: Counter[str] = Counter()
    answers: Counter[str] = Counter()
    locators: Counter[str] = Counter()
    oracle: Counter[str] = Counter()
    rest = 0
    for config in configs:
        spec = config["eval"]
        types = spec["eval_types"]
        combos["+".join(types)] += 1
        references = spec.get("reference_answers") or {}
        answers.update(list(references))
        has_sequence = bool((config.get("reference_action_sequence") or {}).get("action_sequence"))
        if "program_html" in types and not has_sequence:
            oracle["cannot: program_html without an action sequence"] += 1
        elif "fuzzy_match" in references:
            oracle["answer key, scored by a judge (fuzzy_match)"] += 1
        else:
            oracle["answer key, scored without a judge"] += 1
        targets = (spec.get("program_html") or []) if "program_html" in types else []
        uses_rest = False
        for target in targets:
            locator = str(target.get("locator", ""))
            kind = "page HTML" if not locator.strip() else "JavaScript"
            if locator.startswith("func:"):
                kind = f"helper {locator.split('func:', 1)[1].split('(')[0]}"
            locators[kind] += 1
            uses_rest |= bool(REST_HELPERS.search(json.dumps(target)))
        rest += uses_rest
    return {
        "tasks": len(configs),
        "eval_types": dict(combos.most_common()),
        "reference_answers": dict(answers.most_common()),
        "oracle": dict(oracle.most_common()),
        "program_html_locators": dict(locators.most_common()),
        "tasks_with_rest_api_helpers": rest,
    }


def step_seconds(steps: int = 20) -> float:
    """Median seconds of ``env.step("scroll [down]")`` on the served wiki's home page."""
    running = serve_sites(["wiki"], port_offset=None, web=Web(0))
    os.environ["WIKIPEDIA"] = running[0].url
    task = {
        "task_id": 0,
        "intent": "Scroll",
        "start_url": "__WIKIPEDIA__",
        "storage_state": None,
        "eval": {"eval_types": ["url_match"], "reference_url": "__WIKIPEDIA__/"},
    }
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "test.raw.json").write_text(json.dumps([task]))
        os.environ["LLMGYM_CHROMIUM"] = CHROMIUM
        config = {"source": "webarena", "data_dir": folder}
        env = gym.make("llmgym/WebArena-v0", config=config)
        try:
            env.reset(options={"task_id": "eval/00000"})
            times = []
            for index in range(steps):
                start = time.perf_counter()
                env.step("scroll [down]" if index % 2 == 0 else "scroll [up]")
                times.append(time.perf_counter() - start)
        finally:
            env.close()
            for site in running:
                site.stop()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a clone of web-arena-x/webarena")
    parser.add_argument("--json", default="benchmarks/results/webarena_original.json")
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "-C", str(args.checkout), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    payload = {
        "webarena_commit": commit or "unknown (not a git checkout)",
        **census(args.checkout),
        "seconds_per_step_median": round(step_seconds(), 3),
    }
    json.dump(payload, sys.stdout, indent=2)
    print()
    write_json(args.json, payload)


if __name__ == "__main__":
    main()
