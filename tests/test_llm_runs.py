"""LLM runs fail fast and say why, results files are honest, and a run's size is known before it
starts (issue 20, items 1, 2 and 6) — each against a real local HTTP server."""

from __future__ import annotations

import json
import socket
import time

import pytest

from llmgym import cli
from llmgym.agents import OpenAIChatAgent
from llmgym.core.registry import EnvEntry
from llmgym.errors import ChatError, ServerUnavailableError
from llmgym.llm import OPENAI_URL, ChatClient
from llmgym.runner import runs
from llmgym.runner.evaluation import RunEstimate, overall_score
from llmgym.runner.trajectories import read_trajectories
from tests.chat_server import ChatServer


def guess(messages):
    return "Thought: a common word.\nAction: crane"


def dead_url() -> str:
    """The API root of a port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def run(capsys, *argv: str) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err, time.perf_counter() - start


def eval_llm(base_url: str, *extra: str) -> list[str]:
    return ["eval", "Wordle-v0", "--agent", "openai:m", "--base-url", base_url, "--quiet", *extra]


# 1. Fail fast and say why


def test_no_server_is_one_line_and_fast(capsys) -> None:
    code, out, err, seconds = run(capsys, *eval_llm(dead_url(), "--episodes", "100"))
    assert code == 2 and out == "" and seconds < 5
    assert err.count("\n") == 1 and err.startswith("llmgym: error: cannot reach http://127.0.0")
    assert "is the server running?" in err


def test_a_match_checks_its_model_servers_before_the_first_game(capsys) -> None:
    argv = ["match", "connect_four", "--agents", "random", "openai:m", "--games", "50"]
    code, out, err, seconds = run(capsys, *argv, "--base-url", dead_url(), "--quiet")
    assert code == 2 and out == "" and seconds < 5
    assert err.startswith("llmgym: error: cannot reach http://127.0.0") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        ("500", "answered HTTP 500: scripted: the engine is down"),
        ("html", "answered HTTP 502: an HTML page: 502 Bad Gateway"),
        ("webpage", "is not an OpenAI-compatible API: GET /v1/models answered an HTML page"),
    ],
)
def test_a_broken_server_is_caught_before_the_run(capsys, broken, expected) -> None:
    with ChatServer(guess, broken=broken) as server:
        code, out, err, seconds = run(capsys, *eval_llm(server.base_url))
        assert server.requests == []  # no chat request was spent
    assert code == 2 and out == "" and seconds < 5
    assert expected in err and err.count("\n") == 1
    assert len(err) < 300 and "<p>" not in err  # summarised, not dumped


def test_a_hanging_server_costs_the_timeout_once(capsys) -> None:
    with ChatServer(guess, broken="hang") as server:
        code, _, err, seconds = run(capsys, *eval_llm(server.base_url, "--timeout", "1"))
    assert code == 2 and seconds < 5
    assert "sent no answer within 1 s; is it hung, or still starting?" in err


def test_a_base_url_without_v1_gets_a_hint() -> None:
    with ChatServer(guess) as server:
        client = ChatClient("m", base_url=server.base_url.removesuffix("/v1"))
        with pytest.raises(ChatError, match=r"HTTP 404: not found \(is the base URL the API root"):
            client.preflight()
        assert [r["path"] for r in server.requests] == ["/chat/completions"]  # the fallback


def test_preflight_lists_models_and_warns_about_a_missing_one(caplog) -> None:
    with ChatServer(guess, models=["qwen", "llama"]) as server:
        assert ChatClient("qwen", base_url=server.base_url).preflight() == ["qwen", "llama"]
        OpenAIChatAgent("gpt-x", base_url=server.base_url).preflight()
    assert "does not list model 'gpt-x' (it lists: qwen, llama)" in caplog.text


def test_timeouts_default_to_5_s_connect_and_120_s_read() -> None:
    timeout = ChatClient("m", base_url="http://127.0.0.1:1/v1")._http.timeout
    assert (timeout.connect, timeout.read) == (5.0, 120.0)
    assert cli.build_parser().parse_args(["eval", "Maze-v0"]).timeout == 120.0


def test_no_implicit_hosted_endpoint(monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err, _ = run(capsys, "eval", "Maze-v0", "--agent", "openai:gpt-4o", "--quiet")
    assert code == 2 and out == ""
    assert "no chat server for model 'gpt-4o'" in err
    assert "--base-url or $OPENAI_BASE_URL" in err and "--api-key or $OPENAI_API_KEY" in err
    assert ChatClient("m", api_key="sk-x").base_url == OPENAI_URL  # asked for by a key
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1/")
    assert ChatClient("m").base_url == "http://localhost:8000/v1"


def test_consecutive_server_failures_stop_the_run(tmp_path, capsys) -> None:
    """A server that fails every chat request (its model listing works) stops the run after
    ``--max-server-errors`` failures in a row, with one line, instead of 300 errors."""
    traj = tmp_path / "runs.jsonl"
    with ChatServer(guess, faults=["400"] * 50) as server:
        argv = eval_llm(server.base_url, "--episodes", "20", "--max-server-errors", "3")
        code, out, err, seconds = run(capsys, *argv, "--trajectories", str(traj))
        assert len(server.requests) == 3
    assert code == 2 and out == "" and seconds < 5
    last = err.strip().splitlines()[-1]
    assert last.startswith("llmgym: error: stopped: 3 model requests in a row failed; the last:")
    assert "HTTP 400: scripted 400" in last
    saved = list(read_trajectories(traj))
    assert len(saved) == 2 and all(t.error.startswith("model server error: ") for t in saved)


def test_concurrent_workers_stop_together(capsys) -> None:
    with ChatServer(guess, faults=["400"] * 200) as server:
        argv = eval_llm(server.base_url, "--episodes", "100", "--concurrency", "8")
        code, _, err, seconds = run(capsys, *argv)
        assert len(server.requests) < 5 + 8  # the limit, plus the requests in flight
    assert code == 2 and seconds < 10 and "model requests in a row failed" in err


def test_retried_failures_count_towards_the_limit_once_per_request() -> None:
    with ChatServer(guess, faults=["500"] * 4) as server:
        agent = OpenAIChatAgent("m", base_url=server.base_url, max_consecutive_failures=2)
        agent.client.backoff = 0.001
        agent.reset(None)
        assert agent.act("x", {}) == "" and agent.errors == 1  # 4 attempts, one failure
        assert agent.act("x", {}).startswith("Thought:")  # a success resets the count
        assert agent.client.consecutive_failures == 0
        server.faults.extend(["400", "400"])
        agent.act("x", {})
        with pytest.raises(ServerUnavailableError, match="2 model requests in a row"):
            agent.act("x", {})


def test_server_errors_are_counted_apart_from_format_errors(tmp_path, capsys) -> None:
    out_json = tmp_path / "results.json"
    with ChatServer(guess, faults=["400"]) as server:
        argv = eval_llm(server.base_url, "--episodes", "3", "--json", str(out_json))
        code, out, _, _ = run(capsys, *argv)
    assert code == 0 and "server_errors" in out.splitlines()[0]
    row = json.loads(out_json.read_text())["results"][0]
    assert (row["server_errors"], row["format_errors"], row["errors"]) == (1, 0, 1)
    first = row["per_episode"][0]
    assert first["turns"] == 0 and first["error"].startswith("model server error: ")


# 2. Honest results files


MAZE_AND_WORDLE = {
    "llmgym/Maze-v0": ["eval/00000", "eval/00001"],
    "llmgym/Wordle-v0": ["eval/00000"],
}


@pytest.fixture
def suite(monkeypatch):
    """Make ``--suite smoke`` these tasks, with these environments looking uninstalled."""

    def define(tasks: dict[str, list[str]], uninstalled: tuple[str, ...] = ()) -> None:
        monkeypatch.setattr(runs, "load_suite", lambda name: dict(tasks))
        monkeypatch.setattr(EnvEntry, "available", property(lambda e: e.id not in uninstalled))

    return define


def test_a_partial_suite_is_recorded_as_partial(tmp_path, capsys, suite) -> None:
    suite({**MAZE_AND_WORDLE, "llmgym/TextWorld-v0": ["eval/00000"]}, ("llmgym/TextWorld-v0",))
    path = tmp_path / "results.json"
    code, out, err, _ = run(capsys, "eval", "--suite", "smoke", "--quiet", "--json", str(path))
    assert code == 0 and "skipping llmgym/TextWorld-v0" in err
    payload = json.loads(path.read_text())
    assert payload["skipped"] == [
        {
            "env_id": "llmgym/TextWorld-v0",
            "reason": "the [textworld] extra is not installed",
            "install": "pip install -e '.[textworld]'",
        }
    ]
    score = payload["score"]
    assert score["suite_score"] is None and (score["environments"], score["planned"]) == (2, 3)
    assert score["label"] == (
        "partial: 2 of 3 environments of smoke v1 (1 skipped), mean success 1.000; "
        "not a suite score"
    )
    assert out.rstrip().splitlines()[-3] == score["label"]  # the table ends with it
    assert payload["suite"] == "smoke" and payload["suite_version"] == 1


def test_a_complete_suite_has_a_suite_score_and_the_settings(tmp_path, capsys, suite) -> None:
    suite(MAZE_AND_WORDLE)
    path = tmp_path / "results.json"
    argv = ["eval", "--suite", "smoke", "--quiet", "--json", str(path), "--seed", "4"]
    code, out, _, _ = run(capsys, *argv, "--history-window", "3")
    assert code == 0
    payload = json.loads(path.read_text())
    score = payload["score"]
    assert score["suite_score"] == 1.0 and payload["skipped"] == []
    assert score["label"] == "suite score (smoke v1): 1.000, the mean success over 2 environments"
    assert score["label"] in out
    assert payload["llmgym_version"] and payload["date"].endswith("+00:00")
    assert "git_commit" in payload
    settings = payload["settings"]
    assert settings["agent"] == "oracle" and settings["react"] is True
    assert (settings["seed"], settings["history_window"], settings["split"]) == (4, 3, "eval")


def test_llm_settings_are_recorded(tmp_path, capsys) -> None:
    path = tmp_path / "results.json"
    with ChatServer(guess) as server:
        argv = eval_llm(server.base_url, "--episodes", "1", "--json", str(path))
        code, _, _, _ = run(capsys, *argv, "--temperature", "0.7", "--max-tokens", "64")
        host = server.base_url.split("/")[2]
    assert code == 0
    settings = json.loads(path.read_text())["settings"]
    assert settings["agent"] == "openai:m" and settings["model"] == "m"
    assert settings["base_url_host"] == host
    assert settings["sampling"] == {"temperature": 0.7, "max_tokens": 64}
    assert settings["native_tools"] is False and settings["timeout_s"] == 120.0


def test_overall_score_labels() -> None:
    from llmgym.runner.evaluation import EvalResult
    from llmgym.runner.trajectories import Trajectory

    def result(successes: list[bool], error: str | None = None) -> EvalResult:
        runs = [Trajectory("e", "t", "eval", success=s, error=error) for s in successes]
        return EvalResult("e", "a", "eval", runs)

    both = [result([True, True]), result([True, False])]
    assert overall_score(both)["label"] == "mean success over 2 environments: 0.750"
    assert overall_score(both, suite="s v1")["suite_score"] == 0.75
    lost = [result([True]), result([False], error="model server error: HTTP 500")]
    score = overall_score(lost, suite="s v1")
    assert score["suite_score"] is None and score["server_errors"] == 1
    assert "1 episode ended by model server errors, not a suite score" in score["label"]


# 6. History window and dry run


def test_history_window_bounds_the_conversation(capsys) -> None:
    with ChatServer(guess) as server:
        argv = eval_llm(server.base_url, "--task-ids", "eval/00000")
        assert run(capsys, *argv, "--history-window", "1")[0] == 0
        windowed = [len(r["body"]["messages"]) for r in server.requests]
        server.requests.clear()
        assert run(capsys, *argv)[0] == 0
        full = [len(r["body"]["messages"]) for r in server.requests]
    assert full == [2, 4, 6, 8, 10, 12]  # six guesses: the whole conversation each time
    assert windowed == [2, 4, 4, 4, 4, 4]  # system prompt, task, the last exchange


def test_dry_run_estimates_without_contacting_a_model(capsys) -> None:
    with ChatServer(guess) as server:
        argv = ["eval", "Wordle-v0", "Maze-v0", "--agent", "openai:m", "--base-url",
                server.base_url, "--episodes", "10", "--history-window", "2"]  # fmt: skip
        code, out, _, _ = run(capsys, *argv, "--dry-run")
        assert server.requests == [] and server.gets == []
    assert code == 0 and "no model was contacted" in out
    header, _, wordle, maze = out.splitlines()[:4]
    assert header.split() == [
        "env_id",
        "episodes",
        "turn_limit",
        "first_prompt",
        "per_turn",
        "prompt_tokens",
        "window_2",
    ]
    assert wordle.split()[:3] == ["llmgym/Wordle-v0", "10", "20"]
    assert maze.split()[:5] == ["llmgym/Maze-v0", "10", "none", "(50", "assumed)"]
    full, windowed = (int(v) for v in wordle.split()[-2:])
    assert 0 < windowed < full


def test_run_estimate_arithmetic() -> None:
    estimate = RunEstimate("e", episodes=2, turns=3, turn_limit=3, first_prompt_tokens=100,
                           turn_tokens=10, reply_tokens=5)  # fmt: skip
    assert estimate.prompt_tokens() == 2 * (3 * 100 + (0 + 1 + 2) * 10)
    assert estimate.prompt_tokens(1) == 2 * (3 * 100 + (0 + 1 + 1) * 10)
