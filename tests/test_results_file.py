"""The results file from Python (``llmgym.runner.runs``): the file ``llmgym eval --json``
writes, read by ``llmgym view`` (the real command, on 127.0.0.1) and ``llmgym report``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from llmgym.agents import OracleAgent
from llmgym.cli import main
from llmgym.runner import EvalPlan, run_plan, write_results
from llmgym.runner.trajectories import read_trajectories
from tests.extras import need

ENVS = ["llmgym/Wordle-v0", "llmgym/Maze-v0"]


def _without_date(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key != "date"}


def test_python_writes_the_results_file_llmgym_eval_writes(tmp_path: Path) -> None:
    by_cli = tmp_path / "cli.json"
    argv = ["eval", "wordle", "maze", "--episodes", "3", "--seed", "2", "--quiet"]
    assert main([*argv, "--history-window", "4", "--json", str(by_cli)]) == 0
    plan = EvalPlan(ENVS, episodes=3, seed=2, history_window=4)
    by_python = write_results(
        tmp_path / "python.json", run_plan(plan, OracleAgent(), progress=False)
    )
    assert by_python == tmp_path / "python.json"
    python_record = json.loads(by_python.read_text())
    assert _without_date(python_record) == _without_date(json.loads(by_cli.read_text()))
    assert python_record["settings"]["history_window"] == 4
    assert [r["episodes"] for r in python_record["results"]] == [3, 3]


def _serve_view(path: Path) -> tuple[subprocess.Popen[str], str]:
    """``llmgym view PATH --port 0`` in a child process, and the URL it listens on."""
    process = subprocess.Popen(
        [sys.executable, "-m", "llmgym.cli", "view", str(path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=60)
    if not first or " on http://" not in first[0]:
        process.kill()
        raise AssertionError(f"llmgym view did not start: {first!r} {process.stderr.read()}")
    return process, first[0].split(" on ", 1)[1].split()[0]


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def test_llmgym_view_and_report_read_a_results_file_written_from_python(tmp_path: Path) -> None:
    trajectories = tmp_path / "episodes.jsonl"
    run = run_plan(
        EvalPlan(ENVS, episodes=2, seed=5),
        OracleAgent(),
        trajectories=trajectories,
        progress=False,
    )
    results = write_results(tmp_path / "results" / "oracle.json", run)
    assert json.loads(results.read_text())["trajectories"] == "../episodes.jsonl"
    assert len(list(read_trajectories(trajectories))) == 4

    process, url = _serve_view(results)
    try:
        runs = _get_json(f"{url}/api/runs")
        episodes = _get_json(f"{url}/api/episodes?limit=10")
        first = _get_json(f"{url}/api/episodes/{episodes['items'][0]['id']}")
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    (shown,) = runs["runs"]
    assert shown["kind"] == "trajectories" and runs["episodes"] == 4  # the full episodes
    assert sorted({item["env_id"] for item in episodes["items"]}) == sorted(ENVS)
    assert all(item["success"] for item in episodes["items"])
    assert first["turns"] and first["agent"] == "oracle"

    need("matplotlib")
    page = tmp_path / "report.html"
    assert main(["report", str(results), "-o", str(page)]) == 0
    html = page.read_text()
    assert all(env_id in html for env_id in ENVS) and "oracle" in html


def test_plans_refuse_what_they_cannot_run(tmp_path: Path) -> None:
    one_id: Any = "llmgym/Wordle-v0"
    with pytest.raises(TypeError, match=r"a list of ids.*\['llmgym/Wordle-v0'\]"):
        EvalPlan(one_id)
    with pytest.raises(ValueError, match="resume=True continues the run recorded in a trajectory"):
        run_plan(EvalPlan(ENVS), OracleAgent(), resume=True)
