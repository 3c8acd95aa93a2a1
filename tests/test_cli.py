"""The ``llmgym`` command line: list, play, eval."""

from __future__ import annotations

import json
import subprocess
import sys

import llmgym
from llmgym.cli import main


def test_list_json(capsys) -> None:
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["environments"]
    assert [r["id"] for r in rows] == [e.id for e in llmgym.ENVIRONMENTS]
    assert {"id", "entry_point", "max_episode_steps", "extra", "available", "summary"} <= set(
        rows[0]
    )


def test_list_table(capsys) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "llmgym/Wordle-v0" in out and "available" in out.splitlines()[0]


def test_eval_writes_results_json(tmp_path, capsys) -> None:
    path = tmp_path / "out" / "results.json"
    code = main(
        [
            "eval",
            "Maze-v0",
            "llmgym/Wordle-v0",
            "--agent",
            "oracle",
            "--episodes",
            "5",
            "--quiet",
            "--json",
            str(path),
        ]
    )
    assert code == 0
    table = capsys.readouterr().out
    assert "success_rate" in table and "llmgym/Maze-v0" in table
    results = json.loads(path.read_text())["results"]
    assert [r["env_id"] for r in results] == ["llmgym/Maze-v0", "llmgym/Wordle-v0"]
    for row in results:
        assert {
            "env_id",
            "agent",
            "split",
            "episodes",
            "success_rate",
            "mean_reward",
            "mean_steps",
        } <= set(row)
        assert row["episodes"] == 5 and row["success_rate"] == 1.0 and row["split"] == "eval"
        assert len(row["per_episode"]) == 5


def test_eval_is_reproducible(tmp_path) -> None:
    outputs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.json"
        main(
            [
                "eval",
                "TextCraft-v0",
                "--agent",
                "random",
                "--episodes",
                "4",
                "--seed",
                "3",
                "--quiet",
                "--json",
                str(path),
            ]
        )
        outputs.append(json.loads(path.read_text())["results"])
    assert outputs[0] == outputs[1]


def test_eval_unknown_environment_is_a_clear_error(capsys) -> None:
    assert main(["eval", "NoSuch-v0", "--quiet"]) == 2
    assert "unknown environment 'NoSuch-v0'" in capsys.readouterr().err


def test_play_in_a_terminal() -> None:
    moves = (
        ":actions\n:hint\nxyzzy\n"
        + "\n".join(["crane", "slate", "plumb", "dough", "fight", "jazzy"])
        + "\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "llmgym", "play", "llmgym/Wordle-v0", "--task-id", "eval/00000"],
        input=moves,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Task eval/00000" in out and "oracle:" in out and "not in the word list" in out
    assert "Episode over" in out
