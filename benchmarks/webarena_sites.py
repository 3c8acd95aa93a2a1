"""WebArena-v0's forum, code-hosting and wiki sites: data, templates, oracle rate and speed.

    python benchmarks/webarena_sites.py            # --json FILE

Per site: the time to generate its data from a seed (fresh build, best of 3) and its row
counts; its templates and train/eval instances; the oracle's success on the site's eval tasks;
and ``env.step`` throughput on one core, over the oracle's own steps (every one of which loads
or changes a page) and over random clicks and typing (``sample_action``), resets not counted.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from bench_utils import pin_to_one_core, write_json

from llmgym.envs.webarena.database import SESSION_SCHEMA
from llmgym.envs.webarena.env import WebArenaEnv, instances
from llmgym.envs.webarena.forum_data import ForumData
from llmgym.envs.webarena.gitlab_data import GitlabData
from llmgym.envs.webarena.tasks import Instance, templates
from llmgym.envs.webarena.wiki_data import WikiData

SITES = {"forum": ForumData, "gitlab": GitlabData, "wiki": WikiData}
RANDOM_STEPS_PER_TASK = 20


def build_seconds(dataset: type) -> tuple[float, dict[str, int]]:
    """Best of three fresh builds of ``dataset`` (seed 0), and its tables' row counts."""
    best = float("inf")
    for _ in range(3):
        db = sqlite3.connect(":memory:", isolation_level=None)
        db.executescript(SESSION_SCHEMA)
        start = time.perf_counter()
        dataset().build(db, 0)
        best = min(best, time.perf_counter() - start)
    tables = [
        name
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%search%' "
            "AND name != 'sessions' ORDER BY name"
        )
    ]
    counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    return best, counts


def by_task_id(env: WebArenaEnv, split: str) -> dict[str, Instance]:
    """The split's instances by task id (``instances`` gives a mapping by task id, or a tuple
    in task-id order)."""
    config = env.config
    listed = instances(config.data_seed, config.train_per_template, config.eval_per_template)[split]
    if isinstance(listed, Mapping):
        return dict(listed)
    return dict(zip(env.task_ids(split), listed, strict=True))


def play(env: WebArenaEnv, task_ids: list[str]) -> tuple[int, int, float]:
    """Oracle episodes: (solved, steps, seconds spent in ``env.step``)."""
    solved = steps = 0
    spent = 0.0
    for task_id in task_ids:
        env.reset(options={"task_id": task_id})
        for _ in range(30):
            action = env.oracle_action()
            start = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            spent += time.perf_counter() - start
            steps += 1
            if terminated or truncated:
                break
        solved += bool(info.get("success"))
    return solved, steps, spent


def random_steps(env: WebArenaEnv, task_ids: list[str]) -> tuple[int, float]:
    """Random clicks and typing from each task's start page: (steps, seconds in ``step``)."""
    rng = np.random.default_rng(0)
    steps, spent = 0, 0.0
    for task_id in task_ids:
        env.reset(options={"task_id": task_id})
        for _ in range(RANDOM_STEPS_PER_TASK):
            action = env.sample_action(rng)
            start = time.perf_counter()
            _, _, terminated, _, _ = env.step(action)
            spent += time.perf_counter() - start
            steps += 1
            if terminated:
                break
    return steps, spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/webarena_sites.json"))
    args = parser.parse_args(argv)
    pin_to_one_core()
    env = WebArenaEnv()
    split = {name: by_task_id(env, name) for name in ("train", "eval")}
    results: dict[str, dict] = {}
    for site, dataset in SITES.items():
        seconds, rows = build_seconds(dataset)
        site_templates = [t.id for t in templates() if t.id.startswith(f"{site}/")]
        mine = [task for task, inst in split["eval"].items() if inst.template in site_templates]
        train = sum(inst.template in site_templates for inst in split["train"].values())
        solved, steps, spent = play(env, mine)
        random_count, random_spent = random_steps(env, mine)
        results[site] = {
            "build_seconds": round(seconds, 3),
            "rows": rows,
            "templates": len(site_templates),
            "kinds": sorted({t.kind for t in templates() if t.id in site_templates}),
            "train_instances": train,
            "eval_instances": len(mine),
            "oracle_solved": solved,
            "oracle_rate": round(solved / len(mine), 4),
            "oracle_steps_per_second": round(steps / spent),
            "random_steps_per_second": round(random_count / random_spent),
        }
        print(
            f"{site:7s} build {seconds:.2f} s, {len(site_templates)} templates, "
            f"{train}+{len(mine)} instances, oracle {solved}/{len(mine)}, "
            f"{steps / spent:,.0f} oracle steps/s, {random_count / random_spent:,.0f} random "
            "steps/s (target 1,000)"
        )
    write_json(args.json, {"sites": results, "target_steps_per_second": 1_000})
    return 0


if __name__ == "__main__":
    sys.exit(main())
