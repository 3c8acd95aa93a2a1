"""Corrupt and hostile files given to `llmgym view`, `llmgym report` and `llmgym render`: every
malformed line or field is skipped with a one-line warning naming the file and the line, and
nothing raises. Generated junk goes through the viewer's store and the report (hypothesis);
the cases found by hand go through the real commands."""

from __future__ import annotations

import http.client
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmgym.cli import main
from llmgym.runner.trajectories import SCHEMA, Trajectory, Turn
from llmgym.viewer import EpisodeFilter, TrajectoryStore
from llmgym.viewer.records import trajectory_record
from llmgym.viewer.report import load_inputs
from tests.extras import need

ROOT = Path(__file__).resolve().parents[1]
DEEP_LINE = '{"schema": "llmgym.trajectory.v1", "x": ' + "[" * 200_000 + "]" * 200_000 + "}"


def _good(task: int = 0, turns: int = 2) -> dict[str, Any]:
    steps = [Turn(observation=f"o{i}", reply=f"Action: a{i}", action=f"a{i}") for i in range(turns)]
    return Trajectory(
        env_id="llmgym/Wordle-v0",
        task_id=f"eval/{task:05d}",
        split="eval",
        seed=task,
        agent="oracle",
        turns=steps,
        success=True,
        total_reward=1.0,
    ).to_dict()


def _strict(value: Any) -> Any:
    """``value`` through strict JSON (what a browser's ``JSON.parse`` accepts)."""
    return json.loads(json.dumps(value, allow_nan=False))


# ---------------------------------------------------------------------- generated junk
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(),  # NaN and infinities included: json.dumps writes them as NaN, Infinity
    st.text(max_size=20),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_TRAJECTORY_FIELDS = [*Trajectory.__dataclass_fields__.keys() - {"frames", "schema"}]
_TURN_FIELDS = [*Turn.__dataclass_fields__]


@st.composite
def _damaged_record(draw: st.DrawFn) -> str:
    """A real trajectory with some of its fields, its turns' fields or its frames replaced by
    junk of any type."""
    record = _good(draw(st.integers(0, 99)), draw(st.integers(0, 3)))
    record.update(draw(st.dictionaries(st.sampled_from(_TRAJECTORY_FIELDS), _VALUES, max_size=3)))
    if isinstance(record.get("turns"), list):
        for turn in record["turns"]:
            if isinstance(turn, dict):
                turn.update(
                    draw(st.dictionaries(st.sampled_from(_TURN_FIELDS), _VALUES, max_size=2))
                )
    if draw(st.booleans()) and isinstance(record.get("metadata"), dict):
        record["metadata"]["frames"] = draw(_VALUES)
    return json.dumps(record)


def _deep(depth: int, closed: bool) -> str:
    return "[" * depth + ("]" * depth if closed else "")


_JUNK_LINES = st.one_of(
    _damaged_record(),
    _VALUES.map(json.dumps),
    st.builds(lambda value: json.dumps({"schema": SCHEMA, "x": value}), _VALUES),
    st.builds(_deep, st.integers(50, 3000), st.booleans()),
    st.builds(
        lambda depth: f'{{"schema": "{SCHEMA}", "turns": {_deep(depth, True)}}}',
        st.integers(90, 3000),
    ),
    st.text(max_size=60).filter(lambda text: "\n" not in text and "\r" not in text),
    st.binary(max_size=60).filter(lambda data: b"\n" not in data),
    st.sampled_from(['{"schema": "llmgym.trajectory.v1", "seed": 1' + "0" * 5000 + "}", "{" * 9]),
)


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(lines=st.lists(_JUNK_LINES, max_size=8), good_at=st.integers(0, 8))
def test_store_skips_or_mends_every_junk_line_and_serves_strict_json(
    lines: list[str | bytes], good_at: int
) -> None:
    lines.insert(min(good_at, len(lines)), json.dumps(_good()))
    # as bytes, the file's lines: blank means ASCII whitespace only (str.strip also takes
    # "\x1f" and unicode spaces, which the store rightly reads as a line to parse)
    data = [line if isinstance(line, bytes) else line.encode() for line in lines]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "junk.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in data))
        store = TrajectoryStore([path])
        (run,) = store.runs
        assert len(store.episodes) >= 1
        # each warning names a line of the file; each non-blank line is an episode or warned of
        numbers = [int(w.split(":")[0].removeprefix("line ")) for w in run.warnings]
        assert all(1 <= n <= len(lines) for n in numbers)
        assert run.skipped_lines + len(store.episodes) == sum(bool(line.strip()) for line in data)
        assert run.skipped_lines <= len(numbers) == run.warning_count
        for number in _changed_lines(lines):
            assert number in numbers, f"line {number} was changed without a warning"
        for episode in store.episodes:
            row = _strict(episode.to_row())
            record = _strict(store.episode(episode.id))
            assert isinstance(row["reward"], float) and math.isfinite(row["reward"])
            assert len(record["turns"]) == row["turns"] == episode.turns
            for turn in record["turns"]:
                assert isinstance(turn["observation"], str) and isinstance(turn["reward"], float)
                assert turn["action"] is None or isinstance(turn["action"], str)
            assert isinstance(record["skills"], list) and isinstance(record["metadata"], dict)
        store.query(EpisodeFilter(search="x", min_turns=1))
        store.compare(0, 0)


def _changed_lines(lines: list[str | bytes]) -> list[int]:
    """The numbers of the lines whose record the viewer shows other than the file has it;
    each field it changed must be named in the line's problems."""
    changed = []
    for number, line in enumerate(lines, start=1):
        try:
            raw = json.loads(line)
            shown, problems = trajectory_record(line)
        except (ValueError, RecursionError):
            continue
        keys = [
            key for key in raw if _same_json(raw[key]) != _same_json(_as_given(raw, shown)[key])
        ]
        for key in keys:
            named = (f"'{key}'", f"'{key}[", f"'{key}.")
            assert any(problem.startswith(named) for problem in problems), (key, problems)
        if keys:
            changed.append(number)
    return changed


def _as_given(raw: dict[str, Any], shown: dict[str, Any]) -> dict[str, Any]:
    """``shown`` with each turn cut to the fields its line gave: a field a turn lacks is filled
    with its default without a warning, as an older file's records lack newer fields."""
    turns = raw.get("turns")
    if not isinstance(turns, list) or len(turns) != len(shown["turns"]):
        return shown
    cut = [
        {k: v for k, v in given.items() if k in turn} if isinstance(turn, dict) else given
        for turn, given in zip(turns, shown["turns"], strict=True)
    ]
    return {**shown, "turns": cut}


def _same_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


_RESULT_FIELDS = [
    "env_id",
    "agent",
    "episodes",
    "success_rate",
    "mean_steps",
    "mean_turns",
    "invalid_actions",
    "format_errors",
    "per_episode",
]


@st.composite
def _damaged_results(draw: st.DrawFn) -> dict[str, Any]:
    results = []
    for _ in range(draw(st.integers(0, 3))):
        result: Any = {"env_id": "llmgym/Maze-v0", "agent": "oracle", "episodes": 4}
        result.update(draw(st.dictionaries(st.sampled_from(_RESULT_FIELDS), _VALUES, max_size=3)))
        results.append(draw(st.one_of(st.just(result), _VALUES)))
    return {"results": results}


@st.composite
def _damaged_cycles(draw: st.DrawFn) -> dict[str, Any]:
    cycles = draw(
        st.lists(
            st.one_of(
                _VALUES,
                st.fixed_dictionaries(
                    {
                        "cycle": _VALUES,
                        "eval": st.dictionaries(st.text(max_size=8), _VALUES, max_size=3),
                    }
                ),
            ),
            max_size=3,
        )
    )
    return {"arm": draw(_VALUES), "cycles": cycles}


@settings(
    max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    results=_damaged_results(),
    cycles=_damaged_cycles(),
    events=st.lists(
        st.one_of(
            _JUNK_LINES,
            st.builds(
                lambda call, stats: json.dumps({"event": "designs", "call": call, "stats": stats}),
                _VALUES,
                st.one_of(_VALUES, st.dictionaries(st.text(max_size=8), _VALUES, max_size=3)),
            ),
        ),
        max_size=4,
    ),
)
def test_report_inputs_skip_every_junk_entry(
    results: dict[str, Any], cycles: dict[str, Any], events: list[str | bytes]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "r.json").write_text(json.dumps(results))
        (root / "c.json").write_text(json.dumps(cycles))
        (root / "run").mkdir()
        (root / "run" / "events.jsonl").write_bytes(
            b"".join((e if isinstance(e, bytes) else e.encode()) + b"\n" for e in events)
        )
        warnings: list[str] = []
        rows, runs = load_inputs([root / "r.json", root / "c.json", root / "run"], warnings)
    for row in rows:
        numbers = [row.success_rate, *row.interval, row.mean_turns, row.invalid_rate]
        assert all(math.isfinite(value) for value in [*numbers, row.format_error_rate])
        assert isinstance(row.label, str) and isinstance(row.env_id, str)
    for run in runs:
        assert len(run.cycles) == len(run.rates)
        assert all(math.isfinite(rate) for rates in run.rates for rate in rates.values())
    assert all(warning.startswith(folder) for warning in warnings)
    assert all("\n" not in warning for warning in warnings)


@pytest.mark.parametrize(
    "label",
    ["$\\frac{$", "$x^$ and $", "a" * 10_000, "\x00\u202e<b>"],
)
def test_report_draws_hostile_names_as_plain_text(tmp_path: Path, label: str) -> None:
    need("matplotlib")
    path = tmp_path / "r.json"
    result = {"env_id": label, "agent": label, "episodes": 3, "success_rate": 1.0}
    path.write_text(json.dumps({"results": [result]}))
    cycles = {"arm": label, "cycles": [{"cycle": 1, "eval": {label: 50.0, "b": [1e300]}}]}
    (tmp_path / "c.json").write_text(json.dumps(cycles))
    out = tmp_path / "report.html"
    assert main(["report", str(path), str(tmp_path / "c.json"), "-o", str(out)]) == 0
    assert out.read_text().count("data:image/png;base64,") == 5


# ---------------------------------------------------------------------- the real commands
def test_report_warns_of_episodes_1e400_and_writes_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    need("matplotlib")
    path = tmp_path / "r.json"
    path.write_text(
        '{"results": [{"env_id": "llmgym/Maze-v0", "agent": "a", "episodes": 1e400}, '
        '{"env_id": "llmgym/Wordle-v0", "agent": "a", "episodes": 4, "success_rate": 0.5}, 7]}'
    )
    out = tmp_path / "report.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"llmgym: warning: {path}, results[0]: 'episodes' is not a count (ignored)",
        f"llmgym: warning: {path}, results[2]: not an object (skipped)",
    ]
    assert "llmgym/Wordle-v0" in out.read_text()


def _view(path: Path) -> tuple[subprocess.Popen[str], int]:
    """`llmgym view PATH --port 0` in a child process, and its port once it listens."""
    process = subprocess.Popen(
        [sys.executable, "-m", "llmgym", "view", str(path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "llmgym view:" not in line:
        process.kill()
        pytest.fail(f"llmgym view did not start: {line!r} {process.communicate()[1]}")
    return process, int(line.rsplit(":", 1)[1].split("/")[0])


def _get(port: int, path: str) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, json.loads(body)


def test_view_serves_a_file_of_deep_nesting_and_wrong_turns(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = json.dumps(_good())
    turns_seven = json.dumps({**_good(1), "turns": 7})
    turns_numbers = json.dumps({**_good(2), "turns": [1, 2, 3]})
    reward_1e400 = json.dumps(_good(3)).replace('"total_reward": 1.0', '"total_reward": 1e400')
    path.write_text("\n".join([good, DEEP_LINE, turns_seven, turns_numbers, reward_1e400]) + "\n")
    process, port = _view(path)
    try:
        status, listing = _get(port, "/api/episodes")
        assert status == 200 and listing["total"] == 4
        assert [row["turns"] for row in listing["items"]] == [2, 0, 0, 2]
        assert listing["items"][3]["reward"] == 0.0
        for episode in range(4):
            status, record = _get(port, f"/api/episodes/{episode}")
            assert status == 200 and isinstance(record["turns"], list)
    finally:
        process.terminate()
        err = process.communicate(timeout=30)[1]
    assert err.splitlines() == [
        f"llmgym: warning: {path}, line 2: nested more than 100 levels deep (skipped)",
        f"llmgym: warning: {path}, line 3: 'turns' is not a list of turns (ignored)",
        f"llmgym: warning: {path}, line 4: 'turns[0]' is not a turn object; 'turns[1]' is not "
        "a turn object; 'turns[2]' is not a turn object (ignored)",
        f"llmgym: warning: {path}, line 5: 'total_reward' is not a finite number (ignored)",
    ]


def test_view_and_render_survive_a_file_with_nothing_readable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(DEEP_LINE + "\n" + "\n".join(f"junk {i}" for i in range(15)) + "\n")
    process, port = _view(path)
    try:
        assert _get(port, "/api/episodes") == (200, {"total": 0, "offset": 0, "items": []})
    finally:
        process.terminate()
        err = process.communicate(timeout=30)[1].splitlines()
    assert err[0] == f"llmgym: warning: {path}, line 1: nested more than 100 levels deep (skipped)"
    assert len(err) == 11 and err[-1] == "llmgym: warning: 7 more warnings like these"
    assert main(["render", str(path), "--episode", "0", "-o", str(tmp_path / "x.gif")]) == 2
    assert "holds 0 episodes" in capsys.readouterr().err


def test_a_results_file_with_junk_episodes_shows_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(
        json.dumps(
            {
                "trajectories": "x" * 5000,
                "results": [
                    {"env_id": "e", "agent": "a", "per_episode": [{"turns": [1, 2, 3]}, 5]},
                    {"env_id": "e", "per_episode": 7},
                    None,
                ],
            }
        ).replace('"turns": [1, 2, 3]', '"turns": [1, 2, 3], "reward": 1e400')
    )
    store = TrajectoryStore([path])
    (run,) = store.runs
    assert run.kind == "results" and len(store.episodes) == 1
    assert run.warnings == [
        "results[0]: 'per_episode[0].turns' is not a count; "
        "'per_episode[0].reward' is not a finite number; 'per_episode[1]' is not an object "
        "(ignored)",
        "results[1]: 'per_episode' is not a list of episodes (ignored)",
        "results[2]: not an object (skipped)",
    ]
    assert _strict(store.episode(0))["summary"]["reward"] == 0.0


def test_a_corrupt_frames_file_is_an_error_answer(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    frames = tmp_path / "t.jsonl.frames"
    frames.write_text(json.dumps({"schema": "llmgym.frames.v1", "frames": [5, "!!"]}) + "\n")
    record = _good()
    record["metadata"]["frames"] = {"file": frames.name, "offset": 0, "length": 99, "count": 3}
    path.write_text(json.dumps(record) + "\n")
    store = TrajectoryStore([path])
    with pytest.raises(ValueError, match="holds no llmgym.frames.v1 record at byte 0"):
        store.frame(0, 0)
    process, port = _view(path)
    try:
        status, body = _get(port, "/api/episodes/0/frames/0.png")
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert status == 500 and "holds no llmgym.frames.v1 record" in body["error"]
