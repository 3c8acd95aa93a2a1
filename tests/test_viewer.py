"""The viewer's index and HTTP server (a real server on 127.0.0.1), recorded frames, `llmgym
report` and `llmgym render`. The browser tests are in test_viewer_browser.py."""

from __future__ import annotations

import http.client
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import llmgym  # noqa: F401  (registers the ids)
from llmgym.cli import main
from llmgym.runner.frames import encode_png, frames_path, read_frames
from llmgym.runner.trajectories import Trajectory, Turn, append_trajectory, read_trajectories
from llmgym.viewer import EpisodeFilter, TrajectoryStore, make_server
from llmgym.wrappers import RecordTrajectory
from tests.extras import need

PIL_Image = need("PIL.Image")
ROOT = Path(__file__).resolve().parents[1]

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def _episode(
    task: int, *, agent: str, success: bool, env_id: str = "llmgym/Wordle-v0"
) -> Trajectory:
    turns = [
        Turn(observation=f"obs {i}", reply=f"Action: a{i}", action=f"a{i}", invalid_action=i == 0)
        for i in range(task % 4 + 1)
    ]
    return Trajectory(
        env_id=env_id,
        task_id=f"eval/{task:05d}",
        split="eval",
        seed=task,
        agent=agent,
        instruction=f"Find word number {task}",
        turns=turns,
        success=success,
        total_reward=float(success),
    )


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for task in range(30):
        append_trajectory(a, _episode(task, agent="alpha", success=task % 2 == 0))
        if task < 25:
            append_trajectory(b, _episode(task, agent="beta", success=task % 3 == 0))
    return a, b


@pytest.fixture
def live(two_runs: tuple[Path, Path]) -> Iterator[tuple[str, int]]:
    server = make_server(TrajectoryStore(list(two_runs)), port=0)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield "127.0.0.1", server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _get(address: tuple[str, int], path: str, host: str | None = None) -> tuple[int, bytes]:
    """A raw GET: the path is sent exactly as written (no client-side normalisation)."""
    connection = http.client.HTTPConnection(*address, timeout=10)
    connection.putrequest("GET", path, skip_host=True)
    connection.putheader("Host", host or f"127.0.0.1:{address[1]}")
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body


# ---------------------------------------------------------------------- the index
def test_filters_and_pages(two_runs: tuple[Path, Path]) -> None:
    store = TrajectoryStore(list(two_runs))
    assert [r.name for r in store.runs] == ["a.jsonl", "b.jsonl"]
    assert len(store.episodes) == 55
    total, page = store.query(EpisodeFilter(run=0, success=True), offset=5, limit=4)
    assert total == 15 and [e.task_id for e in page] == [f"eval/{t:05d}" for t in (10, 12, 14, 16)]
    assert store.query(EpisodeFilter(agent="beta", min_turns=4))[0] == sum(
        t % 4 == 3 for t in range(25)
    )
    assert store.query(EpisodeFilter(min_invalid=1, max_turns=1))[0] == sum(
        t % 4 == 0 for t in range(30)
    ) + sum(t % 4 == 0 for t in range(25))
    assert store.query(EpisodeFilter(search="WORD NUMBER 17"))[0] == 2
    assert store.query(EpisodeFilter(env_id="llmgym/Other-v0"))[0] == 0
    record = store.episode(3)
    assert record["task_id"] == "eval/00003" and len(record["turns"]) == 4


def test_compare_sorts_tasks_by_outcome(two_runs: tuple[Path, Path]) -> None:
    rows = TrajectoryStore(list(two_runs)).compare(0, 1)
    outcomes = {row.task_id: row.outcome for row in rows}
    assert len(rows) == 30
    assert outcomes["eval/00006"] == "both"  # 6 is even and a multiple of 3
    assert outcomes["eval/00002"] == "a_only"
    assert outcomes["eval/00003"] == "b_only"
    assert outcomes["eval/00001"] == "neither"
    assert outcomes["eval/00027"] == "missing"  # run B stopped at 25 tasks


def test_results_file_alone_and_with_its_trajectories(tmp_path: Path) -> None:
    trajectories = tmp_path / "t.jsonl"
    results = tmp_path / "r.json"
    argv = ["eval", "wordle", "--episodes", "3", "--quiet", "--json", str(results)]
    assert main([*argv, "--trajectories", str(trajectories)]) == 0
    assert json.loads(results.read_text())["trajectories"] == "t.jsonl"
    full = TrajectoryStore([results])
    assert full.runs[0].kind == "trajectories" and len(full.episodes) == 3
    assert full.episode(0)["turns"]
    trajectories.unlink()
    summaries = TrajectoryStore([results])
    assert summaries.runs[0].kind == "results" and len(summaries.episodes) == 3
    assert summaries.episode(0)["summary"]["success"] is True


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"rows": []}')
    with pytest.raises(ValueError, match=r"other.json: not a results file"):
        TrajectoryStore([other])
    with pytest.raises(ValueError, match="no such file"):
        TrajectoryStore([tmp_path / "missing.jsonl"])
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n")
    (run,) = TrajectoryStore([junk]).runs
    assert run.warnings == [
        "line 1: not JSON (Expecting value, column 1) (skipped)",
        "no line holds an llmgym.trajectory.v1 record: nothing to show",
    ]


# ---------------------------------------------------------------------- the server
def test_api_pages_filters_and_compares(live: tuple[str, int]) -> None:
    status, body = _get(live, "/api/episodes?run=1&success=true&limit=3&offset=2")
    page = json.loads(body)
    assert status == 200 and page["total"] == 9 and len(page["items"]) == 3
    assert all(item["success"] and item["agent"] == "beta" for item in page["items"])
    status, body = _get(live, "/api/compare?a=0&b=1&outcome=a_only")
    compared = json.loads(body)
    assert compared["counts"] == {"a_only": 8, "b_only": 4, "both": 5, "neither": 8, "missing": 5}
    assert compared["total"] == 8
    status, body = _get(live, "/api/runs")
    assert json.loads(body)["episodes"] == 55


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2f..%2fetc%2fpasswd",
        "//etc/passwd",
        "/static/app.js/../../a.jsonl",
        "/a.jsonl",
        "/secret.txt",
        "/api/episodes/0/../../secret.txt",
        "/api/episodes/../../../etc/passwd",
        "/api/episodes/-1",
        "/api/episodes/999",
        "/api/episodes/0/frames/0.png",
        "/api/episodes/0/frames/..%2f..%2fsecret.txt",
        "/static/index.html",
    ],
)
def test_nothing_outside_the_index_is_served(
    live: tuple[str, int], two_runs: tuple[Path, Path], path: str
) -> None:
    (two_runs[0].parent / "secret.txt").write_text("TOP-SECRET")
    status, body = _get(live, path)
    assert status == 404, (path, body[:200])
    assert "error" in json.loads(body)
    assert b"TOP-SECRET" not in body and b"root:" not in body


def test_requests_for_another_host_and_writes_are_refused(live: tuple[str, int]) -> None:
    status, body = _get(live, "/api/runs", host="attacker.example:80")
    assert status == 403 and json.loads(body)["error"] == "unexpected Host header"
    connection = http.client.HTTPConnection(*live, timeout=10)
    connection.request("POST", "/api/runs", body=b"{}")
    response = connection.getresponse()
    assert response.status == 405 and "error" in json.loads(response.read())


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("/api/episodes?limit=0", "limit=0 must be 1-500"),
        ("/api/episodes?success=maybe", "success='maybe' is not valid here"),
        ("/api/episodes?min_turns=-3", "min_turns=-3 must be >= 0"),
        ("/api/compare?a=0", "compare needs two runs"),
        ("/api/compare?a=0&b=1&outcome=won", "outcome='won': one of"),
    ],
)
def test_bad_queries_get_400_with_the_reason(
    live: tuple[str, int], query: str, message: str
) -> None:
    status, body = _get(live, query)
    assert status == 400 and message in json.loads(body)["error"]


def test_episode_text_is_served_as_data_under_a_strict_policy(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    episode = _episode(1, agent="x", success=False)
    episode.turns[0].observation = HOSTILE
    append_trajectory(path, episode)
    server = make_server(TrajectoryStore([path]), port=0)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1])
        connection.request("GET", "/api/episodes/0")
        response = connection.getresponse()
        assert response.getheader("Content-Type").startswith("application/json")
        assert json.loads(response.read())["turns"][0]["observation"] == HOSTILE
        connection.request("GET", "/")
        response = connection.getresponse()
        policy = response.getheader("Content-Security-Policy")
        response.read()
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    finally:
        server.shutdown()
        server.server_close()


def test_page_assets_ship_in_the_package() -> None:
    from importlib import resources

    static = resources.files("llmgym.viewer") / "static"
    for name in ("index.html", "app.js", "app.css"):
        assert (static / name).read_text(encoding="utf-8").strip()
    script = (static / "app.js").read_text(encoding="utf-8")
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script


# ---------------------------------------------------------------------- frames
def test_png_frames_round_trip() -> None:
    frame = np.random.default_rng(0).integers(0, 256, (7, 5, 3), dtype=np.uint8)
    assert np.array_equal(np.asarray(PIL_Image.open(io.BytesIO(encode_png(frame)))), frame)


def test_pixel_episode_records_its_observations(tmp_path: Path) -> None:
    path = tmp_path / "heist.jsonl"
    env = RecordTrajectory(gym.make("llmgym/HeistPixels-v0"), path, agent="oracle", frames=True)
    observation, _ = env.reset(seed=3)
    seen = [observation]
    done = False
    while not done:
        observation, _, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
        seen.append(observation)
        done = terminated or truncated
    (trajectory,) = read_trajectories(path)
    frames = read_frames(path, trajectory.metadata)
    assert trajectory.metadata["frames"]["count"] == len(trajectory.turns) + 1 == len(seen)
    for png, expected in zip(frames, seen, strict=True):
        assert np.array_equal(np.asarray(PIL_Image.open(io.BytesIO(png))), expected)
    assert frames_path(path).name == "heist.jsonl.frames"


def test_drawing_crafter_frames_leaves_the_play_unchanged(tmp_path: Path) -> None:
    """300 steps cover a night, when crafter's renderer draws from the world's random stream."""
    need("crafter")
    runs = []
    for frames in (False, True):
        path = tmp_path / f"crafter-{frames}.jsonl"
        env = RecordTrajectory(gym.make("llmgym/Crafter-v0", length=300), path, frames=frames)
        env.reset(seed=11)
        rng = np.random.default_rng(0)
        done = False
        while not done:
            action = env.unwrapped.sample_action(rng)
            *_, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        (trajectory,) = read_trajectories(path)
        runs.append(trajectory)
    assert [t.observation for t in runs[0].turns] == [t.observation for t in runs[1].turns]
    assert runs[0].final_observation == runs[1].final_observation
    assert runs[1].metadata["frames"]["count"] == len(runs[1].turns) + 1
    assert (
        "frames" not in runs[0].metadata
        and not frames_path(tmp_path / "crafter-False.jsonl").exists()
    )


def test_eval_records_frames_and_render_makes_a_gif(tmp_path: Path) -> None:
    trajectories = tmp_path / "t.jsonl"
    argv = ["eval", "heist", "wordle", "--episodes", "2", "--quiet"]
    assert main([*argv, "--trajectories", str(trajectories), "--record-frames"]) == 0
    records = [json.loads(line) for line in trajectories.read_text().splitlines()]
    assert [bool(r["metadata"].get("frames")) for r in records] == [True, True, False, False]
    gif = tmp_path / "heist.gif"
    assert main(["render", str(trajectories), "--episode", "1", "-o", str(gif)]) == 0
    image = PIL_Image.open(gif)
    assert image.n_frames == len(records[1]["turns"]) + 1 and image.size == (256, 256)
    text_gif = tmp_path / "wordle.gif"
    assert main(["render", str(trajectories), "--episode", "2", "-o", str(text_gif)]) == 0
    assert PIL_Image.open(text_gif).n_frames == len(records[2]["turns"]) + 1


def test_record_frames_needs_a_trajectory_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "heist", "--episodes", "1", "--quiet", "--record-frames"]) == 2
    assert "--record-frames writes beside --trajectories PATH" in capsys.readouterr().err


def test_render_names_a_missing_episode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    append_trajectory(path, _episode(1, agent="x", success=True))
    assert main(["render", str(path), "--episode", "4", "-o", str(tmp_path / "x.gif")]) == 2
    assert "holds 1 episodes; --episode 4 is not one" in capsys.readouterr().err


# ---------------------------------------------------------------------- report
def test_report_plots_results_and_envgen_cycles(tmp_path: Path) -> None:
    need("matplotlib")
    results = []
    for agent in ("oracle", "random"):
        path = tmp_path / f"{agent}.json"
        argv = ["eval", "wordle", "maze", "--episodes", "4", "--quiet", "--agent", agent]
        assert main([*argv, "--json", str(path)]) == 0
        results.append(str(path))
    folder = tmp_path / "envgen-run"
    folder.mkdir()
    events = [
        {"event": "designs", "call": 0, "stats": None, "designs": []},
        {"event": "designs", "call": 1, "stats": {"collect_wood": [40.0, 5.0]}, "designs": []},
        {"event": "designs", "call": 2, "stats": {"collect_wood": {"mean": 70.0}}, "designs": []},
    ]
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    out = tmp_path / "report.html"
    assert main(["report", *results, str(folder), "-o", str(out), "--title", "<b>t</b>"]) == 0
    page = out.read_text()
    assert page.count('src="data:image/png;base64,') == 5  # 4 result plots, 1 heat map
    assert "<title>&lt;b&gt;t&lt;/b&gt;</title>" in page
    assert "llmgym/Maze-v0" in page and "EnvGen: envgen-run" in page
    from llmgym.viewer.report import load_inputs

    rows, runs = load_inputs([*results, folder])
    oracle = {r.env_id: r for r in rows if r.label == "oracle"}
    assert oracle["llmgym/Wordle-v0"].success_rate == 1.0
    assert (
        oracle["llmgym/Wordle-v0"].interval[0] < 1.0 < oracle["llmgym/Wordle-v0"].interval[1] + 1e-9
    )
    assert runs[0].cycles == [2, 3] and [r["collect_wood"] for r in runs[0].rates] == [40.0, 70.0]
    benchmark = next((ROOT / "benchmarks/results/envgen").glob("*envgen*.json"))
    (run,) = load_inputs([benchmark])[1]
    cycles = json.loads(benchmark.read_text())["cycles"]
    assert run.cycles == [c["cycle"] for c in cycles]
    assert run.rates[-1]["collect_wood"] == cycles[-1]["eval"]["collect_wood"]["mean"]


def test_report_names_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"rows": []}')
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 2
    assert "x.json: neither a results file" in capsys.readouterr().err


def test_view_names_a_taken_port(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    taken = make_server(TrajectoryStore([two_runs[0]]), port=0)
    try:
        port = str(taken.server_address[1])
        assert main(["view", str(two_runs[0]), "--port", port]) == 2
    finally:
        taken.server_close()
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_view_says_how_to_see_the_turns_of_a_bare_results_file(
    tmp_path: Path, two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "r.json"
    assert main(["eval", "llmgym/Wordle-v0", "--episodes", "1", "--json", str(results)]) == 0
    taken = make_server(TrajectoryStore([two_runs[0]]), port=0)
    try:
        assert main(["view", str(results), "--port", str(taken.server_address[1])]) == 2
    finally:
        taken.server_close()
    assert "r.json names no trajectory file" in capsys.readouterr().err
