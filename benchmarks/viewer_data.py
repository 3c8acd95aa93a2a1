"""Runs to look at, for the viewer's tests, its screenshots (docs/viewer_screenshots.py) and its
benchmark (benchmarks/viewer_speed.py), and ``llmgym view`` started as a subprocess.

:func:`sample_runs` plays real episodes: the oracle and the random agent on the same eval tasks of
Heist-v0 (with frames) and Wordle-v0. :func:`tiled_run` repeats real episodes under new task ids
and seeds to reach a size (10,000 episodes) that would take long to play.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from llmgym.agents import make_agent
from llmgym.runner.evaluation import evaluate, overall_score
from llmgym.runner.trajectories import append_trajectory

SAMPLE_ENVS = ("llmgym/Heist-v0", "llmgym/Wordle-v0")


def sample_runs(folder: Path, episodes: int = 6) -> dict[str, Path]:
    """The oracle's and the random agent's episodes on the same tasks, as trajectory files
    (``oracle.jsonl``, ``random.jsonl``, frames beside them) and the oracle's results file
    (``oracle.json``, naming its trajectory file)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in ("oracle", "random"):
        path = folder / f"{name}.jsonl"
        agent = make_agent(name, seed=0)
        results = []
        for env_id in SAMPLE_ENVS:
            results.append(
                evaluate(
                    env_id,
                    agent,
                    episodes=episodes,
                    progress=False,
                    record_frames=True,
                    on_trajectory=lambda t, path=path: append_trajectory(path, t),
                )
            )
        paths[name] = path
        payload = {
            "score": overall_score(results),
            "trajectories": path.name,
            "results": [result.to_dict() for result in results],
        }
        (folder / f"{name}.json").write_text(json.dumps(payload, indent=2) + "\n")
        paths[f"{name}_results"] = folder / f"{name}.json"
    return paths


def tiled_run(source: Path, out: Path, episodes: int) -> Path:
    """``episodes`` episodes made of ``source``'s, repeated with new task ids and seeds (each
    copy its own task), frames left out."""
    records = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    with open(out, "w", encoding="utf-8") as handle:
        for number in range(episodes):
            record = dict(records[number % len(records)])
            record["task_id"] = f"eval/{number:05d}"
            record["seed"] = number
            record["metadata"] = {}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out


@contextmanager
def viewer_process(*paths: Path) -> Iterator[str]:
    """``llmgym view PATHS --port 0`` in a subprocess; yields its URL; stops it afterwards."""
    env = dict(os.environ)
    source = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join([source, env.get("PYTHONPATH", "")])
    command = [sys.executable, "-c", "import sys; from llmgym.cli import main; sys.exit(main())"]
    process = subprocess.Popen(
        [*command, "view", *map(str, paths), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        if " on http://" not in line:
            error = process.stderr.read() if process.stderr else ""
            raise RuntimeError(f"llmgym view did not start: {line!r} {error}")
        yield line.split(" on ", 1)[1].split()[0]
    finally:
        process.terminate()
        process.wait(timeout=30)
