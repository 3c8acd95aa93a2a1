"""A new user's first hour with the command line (issue 20, items 3, 4, 5 and 7): Ctrl-C and
pipes, forgiving ids, user environments (``module:Class`` and the ``llmgym.envs`` entry-point
group), and ``llmgym play``. Each test reproduces a failure a user met."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import llmgym
import llmgym.runner.rollout
from llmgym.cli import EXIT_INTERRUPTED, build_parser, main
from llmgym.core import EnvConfig, Task, TaskIdRange, TextEnv, Transition
from llmgym.envs import _LOADED, get_entry, load_entry, plugin_entries
from llmgym.errors import PluginWarning
from llmgym.runner.trajectories import BadLine, convert_file, read_trajectories
from llmgym.testing import check_splits
from tests.chat_server import ChatServer
from tests.extras import need
from tests.servers import ServeProcess


def _llmgym(
    *args: str, env: dict[str, str] | None = None, stdin: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmgym.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def _play_episodes_then_interrupt(monkeypatch: pytest.MonkeyPatch, episodes: int) -> None:
    """Ctrl-C while the episode after the first ``episodes`` is being played."""
    play = llmgym.runner.rollout.play_episode
    count = itertools.count()

    def interrupted(*args: object, **kwargs: object) -> object:
        if next(count) == episodes:
            raise KeyboardInterrupt
        return play(*args, **kwargs)

    monkeypatch.setattr(llmgym.runner.rollout, "play_episode", interrupted)


# ---------------------------------------------------------------- 3. Ctrl-C, pipes, bad files


def test_a_closed_pipe_ends_quietly() -> None:
    """``llmgym list | head -1``: the reader goes away before llmgym writes."""
    process = subprocess.Popen(
        [sys.executable, "-m", "llmgym.cli", "list", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    error = process.stderr.read()
    process.wait(timeout=60)
    assert "Traceback" not in error and "BrokenPipeError" not in error, error
    assert process.returncode == 1


def test_ctrl_c_in_eval_writes_the_finished_episodes_and_resume_completes_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    trajectories, results = tmp_path / "run.jsonl", tmp_path / "results.json"
    command = ["eval", "TextCraft-v0", "--agent", "random", "--episodes", "6", "--seed", "4"]
    command += ["--quiet", "--trajectories", str(trajectories), "--json", str(results)]
    with monkeypatch.context() as patch:
        _play_episodes_then_interrupt(patch, 4)
        assert main(command) == EXIT_INTERRUPTED
    error = capsys.readouterr().err
    assert "interrupted" in error and "--resume" in error and "Traceback" not in error
    partial = json.loads(results.read_text())
    assert partial["interrupted"] is True
    assert [r["episodes"] for r in partial["results"]] == [4]
    assert len(list(read_trajectories(trajectories))) == 4

    assert main([*command, "--resume"]) == 0
    assert "4 of 6 episodes already in" in capsys.readouterr().err
    resumed = json.loads(results.read_text())
    assert resumed["interrupted"] is False
    assert len(list(read_trajectories(trajectories))) == 6

    reference = tmp_path / "reference.json"
    assert main([*command[:-4], "--json", str(reference)]) == 0
    expected = json.loads(reference.read_text())["results"]
    assert resumed["results"] == expected  # same tasks, seeds and outcomes as one whole run


def test_resume_needs_the_trajectory_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "wordle", "--resume", "--quiet"]) == 2
    assert "--resume continues the run recorded by --trajectories" in capsys.readouterr().err


def test_ctrl_c_in_collect_keeps_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "traj.jsonl"
    command = ["collect", "--envs", "maze", "--episodes", "5", "--quiet", "-o", str(out)]
    with monkeypatch.context() as patch:
        _play_episodes_then_interrupt(patch, 2)
        assert main(command) == EXIT_INTERRUPTED
    error = capsys.readouterr().err
    assert "interrupted" in error and str(out) in error and "Traceback" not in error
    assert len(list(read_trajectories(out))) == 2
    assert main(command) == 0
    assert "2 of 5 tasks already in" in capsys.readouterr().out
    assert len(list(read_trajectories(out))) == 5


def test_ctrl_c_in_eval_with_a_human_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = iter(["crane", "slate"])

    def typed(prompt: str = "") -> str:
        line = next(lines, None)
        if line is None:
            raise KeyboardInterrupt
        return line

    monkeypatch.setattr("builtins.input", typed)
    results = tmp_path / "r.json"
    assert main(["eval", "wordle", "--agent", "human", "--json", str(results)]) == 130
    captured = capsys.readouterr()
    assert "interrupted" in captured.err and "Traceback" not in captured.err
    assert json.loads(results.read_text())["interrupted"] is True


def test_the_end_of_a_human_agents_input_ends_the_evaluation(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not 50 failed episodes, each logging an EOFError traceback."""
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("crane\n"))
    assert main(["eval", "wordle", "--agent", "human", "--episodes", "3"]) == 130
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "EOFError" not in captured.err


def test_the_human_agents_prompt_has_no_progress_bar(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("builtins.input", lambda prompt="": "crane")
    assert main(["eval", "wordle", "--agent", "human", "--episodes", "1"]) == 0
    captured = capsys.readouterr()
    assert "|" not in captured.err and "ep/s" not in captured.err
    assert "llmgym/Wordle-v0" in captured.out


def test_ctrl_c_in_a_concurrent_llm_evaluation(tmp_path: Path) -> None:
    """A real SIGINT while two episodes wait for a model that stopped answering: llmgym leaves
    at once, with its JSON, and no traceback."""
    release = threading.Event()
    requests = itertools.count()

    def model(messages: list[dict[str, str]]) -> str:
        if next(requests) >= 20:  # a few episodes finish, then the model hangs
            release.wait(120)
        return "Thought: a common word.\nAction: crane"

    trajectories, results = tmp_path / "run.jsonl", tmp_path / "results.json"
    command = [sys.executable, "-m", "llmgym.cli", "eval", "wordle", "--agent", "openai:test"]
    command += ["--episodes", "20", "--concurrency", "2", "--quiet", "--timeout", "300"]
    command += ["--trajectories", str(trajectories), "--json", str(results)]
    with ChatServer(model) as server:
        process = subprocess.Popen(
            [*command, "--base-url", server.base_url, "--api-key", "test"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 90
            while not (trajectories.exists() and trajectories.read_text().count("\n")):
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
            time.sleep(1.0)
            process.send_signal(signal.SIGINT)
            started = time.monotonic()
            out, error = process.communicate(timeout=60)
            waited = time.monotonic() - started
        finally:
            release.set()
            if process.poll() is None:
                process.kill()
    assert process.returncode == EXIT_INTERRUPTED, error
    assert waited < 20 and "Traceback" not in error, error
    written = json.loads(results.read_text())
    assert written["interrupted"] is True and written["results"][0]["episodes"] >= 1
    assert "llmgym/Wordle-v0" in out


def test_ray_auto_without_a_cluster_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ray = need("ray")

    def no_cluster(address: str | None = None, **_: object) -> None:
        # what ray.init("auto") raises when no cluster runs on this machine (Ray 2.x)
        raise ConnectionError(
            "Could not find any running Ray instance. Please specify the one to connect to by "
            "setting `--address` flag or `RAY_ADDRESS` environment variable."
        )

    # this process may already be connected to (or other tests may run) a Ray instance
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", no_cluster)
    assert main(["eval", "wordle", "--ray", "auto", "--episodes", "1", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "ray start --head" in error and "--ray local" in error


def test_convert_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sft.jsonl"
    assert main(["convert", str(tmp_path / "nope.jsonl"), "-o", str(out)]) == 2
    assert f"No such file or directory: {tmp_path / 'nope.jsonl'}" in capsys.readouterr().err
    assert not out.exists()


@pytest.fixture
def oracle_run(tmp_path: Path) -> list[str]:
    """The lines of a trajectory file of three oracle episodes."""
    path = tmp_path / "run.jsonl"
    assert main(["collect", "--envs", "maze", "--episodes", "3", "--quiet", "-o", str(path)]) == 0
    return path.read_text().splitlines()


def test_convert_reports_corrupt_lines_by_number(
    tmp_path: Path, oracle_run: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [oracle_run[0], "{not json", oracle_run[1], '{"schema": "other"}', oracle_run[2]]
    source, out = tmp_path / "mixed.jsonl", tmp_path / "sft.jsonl"
    source.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["convert", str(source), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"{source}, line 2: not JSON" in captured.err
    assert f"{source}, line 4: not an llmgym.trajectory.v1 record" in captured.err
    assert "wrote 3 messages records" in captured.out
    assert len(out.read_text().splitlines()) == 3


def test_convert_of_a_file_without_trajectories_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.json"  # a results file given where trajectories belong
    assert main(["eval", "maze", "--episodes", "1", "--quiet", "--json", str(results)]) == 0
    out = tmp_path / "sft.jsonl"
    capsys.readouterr()
    assert main(["convert", str(results), "-o", str(out)]) == 2
    error = capsys.readouterr().err
    assert "holds no llmgym.trajectory.v1 records" in error and "line 1:" in error
    assert not out.exists()


def test_read_trajectories_names_the_line_and_skips_a_truncated_end(
    tmp_path: Path, oracle_run: list[str]
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(f"{oracle_run[0]}\n{oracle_run[1][:50]}")  # a crash in mid-write
    assert len(list(read_trajectories(path))) == 1
    bad: list[BadLine] = []
    assert len(list(read_trajectories(path, bad_lines=bad))) == 1
    assert [b.number for b in bad] == [2] and "incomplete" in bad[0].problem
    path.write_text(f"[1, 2]\n{oracle_run[0]}\n")
    with pytest.raises(ValueError, match=r"run.jsonl, line 1: a JSON list, not a trajectory"):
        convert_file(path, tmp_path / "out.jsonl")


# ---------------------------------------------------------------- 4. ids and options


@pytest.mark.parametrize(
    "spelling", ["wordle", "Wordle", "WORDLE", "Wordle-v0", "llmgym/Wordle-v0", "llmgym/wordle"]
)
def test_an_id_in_any_case_with_or_without_namespace_and_version(spelling: str) -> None:
    assert get_entry(spelling).id == "llmgym/Wordle-v0"


def test_short_ids_work_everywhere_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "maze", "wordle", "--episodes", "2", "--quiet"]) == 0
    table = capsys.readouterr().out
    assert "llmgym/Maze-v0" in table and "llmgym/Wordle-v0" in table
    out = tmp_path / "t.jsonl"
    assert main(["collect", "--envs", "Maze", "--episodes", "1", "--quiet", "-o", str(out)]) == 0
    assert next(read_trajectories(out)).env_id == "llmgym/Maze-v0"
    result = _llmgym("play", "maze", "--seed", "1", stdin=":quit\n")
    assert result.returncode == 0 and "You are at row" in result.stdout


def test_a_mistyped_id_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "Wordel-v0", "--quiet"]) == 2
    assert "did you mean llmgym/Wordle-v0?" in capsys.readouterr().err
    assert main(["play", "mze"]) == 2
    assert "did you mean llmgym/Maze-v0?" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--suite", "smoke", "--episodes", "3"], "--episodes applies to the ENV_IDs named"),
        (["--suite", "smoke", "--split", "train"], "--split applies to the ENV_IDs named"),
        (["maze", "--task-ids", "eval/00001", "--episodes", "3"], "leave out --episodes"),
    ],
)
def test_options_that_would_be_ignored_are_errors(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--quiet", *extra]) == 2
    assert message in capsys.readouterr().err


def test_every_option_has_help_and_shows_its_default() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in commands.choices.items():
        text = command.format_help()
        for action in command._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"llmgym {name} {action.dest} has no help"
            shown = action.default not in (None, False) and action.option_strings
            if shown and not isinstance(action.default, bool):
                assert f"default: {action.default}" in " ".join(text.split()) or (
                    "default" in action.help
                ), f"llmgym {name} {action.dest}: default not shown"
    assert "(default: 50)" in commands.choices["eval"].format_help()


def test_list_fits_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 100


# ---------------------------------------------------------------- 5. user environments

_PACKAGE = '''
"""A tiny package of llmgym environments, installed for the tests."""

from llmgym import EnvConfig, TextEnv, Transition
from llmgym.core import EnvEntry, TaskIdRange

WORDS = {"train": ["stone", "night", "heart", "earth"], "eval": ["lemon", "tiger", "ocean"]}


class AnagramEnv(TextEnv[EnvConfig]):
    """Unscramble the letters of a word."""

    config_class = EnvConfig
    env_name = "anagram"
    _word = ""

    def task_ids(self, split="train", config=None):
        return TaskIdRange(split, len(WORDS[split]))

    def _reset_task(self, task):
        self._word = WORDS[task.split][task.index]
        return f"Letters: {' '.join(sorted(self._word))}", "Unscramble the letters."

    def _step(self, action):
        if action.strip().lower() == self._word:
            return Transition("Right!", reward=1.0, terminated=True, success=True)
        return Transition("Wrong.")

    def oracle_action(self):
        return self._word


def environments():
    return [
        EnvEntry(
            id="my-envs/Anagram-v0",
            entry_point="anagram_envs:AnagramEnv",
            max_episode_steps=5,
            summary="Unscramble a word.",
        )
    ]
'''

_LOOSE = '''
from anagram_envs import AnagramEnv


class Backwards(AnagramEnv):
    """Unscramble a word, registered nowhere."""
'''


def _install(site: Path, name: str, entry_points: str, files: dict[str, str]) -> None:
    """A package as pip installs it: its files and a dist-info folder with entry points."""
    for file, text in files.items():
        (site / file).write_text(textwrap.dedent(text))
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[llmgym.envs]\n{entry_points}\n")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A site folder holding the package ``anagram_envs`` (entry point ``llmgym.envs``) and a
    loose module ``loose_envs``."""
    folder = tmp_path / "site"
    folder.mkdir()
    files = {"anagram_envs.py": _PACKAGE, "loose_envs.py": _LOOSE}
    _install(folder, "anagram_envs", "anagram = anagram_envs:environments", files)
    return folder


@pytest.fixture
def site_env(site: Path) -> dict[str, str]:
    paths = [str(site), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def test_an_installed_package_registers_environments(site_env: dict[str, str]) -> None:
    listed = _llmgym("list", env=site_env)
    assert listed.returncode == 0 and "my-envs/Anagram-v0" in listed.stdout, listed.stderr
    evaluated = _llmgym("eval", "anagram", "--episodes", "3", "--quiet", env=site_env)
    assert evaluated.returncode == 0, evaluated.stderr
    assert "my-envs/Anagram-v0  oracle  3         1.000" in evaluated.stdout
    played = _llmgym("play", "my-envs/Anagram-v0", "--seed", "0", env=site_env, stdin=":quit\n")
    assert played.returncode == 0 and "Letters:" in played.stdout, played.stderr
    assert "The oracle's next move would have been:" in played.stdout


def test_module_class_ids(site_env: dict[str, str]) -> None:
    registered = _llmgym(
        "eval", "anagram_envs:AnagramEnv", "--episodes", "2", "--quiet", env=site_env
    )
    assert registered.returncode == 0, registered.stderr
    assert "my-envs/Anagram-v0" in registered.stdout  # the id its package registers
    loose = _llmgym("eval", "loose_envs:Backwards", "--episodes", "2", "--quiet", env=site_env)
    assert loose.returncode == 0 and "loose_envs.Backwards" in loose.stdout, loose.stderr
    played = _llmgym("play", "loose_envs:Backwards", "--seed", "0", env=site_env, stdin=":hint\n")
    assert played.returncode == 0 and "oracle:" in played.stdout, played.stderr
    missing = _llmgym("eval", "no_such_pkg.envs:Anagram", "--quiet", env=site_env)
    assert missing.returncode == 2 and "no module named 'no_such_pkg.envs'" in missing.stderr
    wrong = _llmgym("eval", "loose_envs:AnagramEnvs", "--quiet", env=site_env)
    assert wrong.returncode == 2 and "is not a llmgym.TextEnv subclass" in wrong.stderr


def test_serve_sees_user_environments(
    site_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    need("uvicorn")
    monkeypatch.setenv("PYTHONPATH", site_env["PYTHONPATH"])
    with ServeProcess("--envs", "anagram", "loose_envs:Backwards") as server:
        with urllib.request.urlopen(f"{server.url}/environments", timeout=30) as response:
            served = [row["id"] for row in json.load(response)["environments"]]
        assert served == ["my-envs/Anagram-v0", "loose_envs.Backwards"]
        remote = _llmgym(
            "eval", "anagram", "--remote", server.url, "--episodes", "2", "--quiet", env=site_env
        )
        assert remote.returncode == 0 and "1.000" in remote.stdout, remote.stderr
    with ServeProcess() as server:  # no --envs: every available one, the package's included
        with urllib.request.urlopen(f"{server.url}/environments", timeout=30) as response:
            served = [row["id"] for row in json.load(response)["environments"]]
        assert "my-envs/Anagram-v0" in served and "llmgym/Wordle-v0" in served


@pytest.fixture
def loaded_site(site: Path) -> Iterator[Path]:
    """``site`` on this process's path, with two more packages: one whose entry point is
    broken, one that claims an id llmgym has."""
    _install(site, "broken_envs", "broken = no_such_module:rows", {})
    rows = 'ROWS = [{"id": "llmgym/Wordle-v0", "entry_point": "x:Y", '
    rows += '"max_episode_steps": 1, "summary": "a clash"}]\n'
    _install(site, "clashing_envs", "clash = clashing_envs:ROWS", {"clashing_envs.py": rows})
    sys.path.insert(0, str(site))
    plugin_entries.cache_clear()
    yield site
    sys.path.remove(str(site))
    plugin_entries.cache_clear()
    for module in ("anagram_envs", "loose_envs", "clashing_envs"):
        sys.modules.pop(module, None)
    for env_id in ("my-envs/Anagram-v0", "loose_envs.Backwards"):
        gym.registry.pop(env_id, None)
    for path in [path for path, entry in _LOADED.items() if entry.id == "loose_envs.Backwards"]:
        del _LOADED[path]  # load_entry's rows: `llmgym list` in a later test must not show them


def test_entry_points_in_this_process(loaded_site: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = plugin_entries()
    assert [entry.id for entry in found] == ["my-envs/Anagram-v0"]
    messages = [str(w.message) for w in caught if w.category is PluginWarning]
    assert any("'broken'" in m and "ModuleNotFoundError" in m for m in messages), messages
    assert any("llmgym/Wordle-v0, which is already taken" in m for m in messages), messages
    assert get_entry("anagram").id == "my-envs/Anagram-v0"
    assert get_entry("Anagram-v0").name == "Anagram"
    env = gym.make("my-envs/Anagram-v0")
    _, info = env.reset(seed=0, options={"split": "eval"})
    assert info["task_id"].startswith("eval/")
    loose = load_entry("loose_envs:Backwards")
    assert loose.id == "loose_envs.Backwards" and loose.summary.startswith("Unscramble a word")
    assert get_entry("loose_envs:Backwards") is loose  # as the server finds it, no import


class _Counter(TextEnv[EnvConfig]):
    """Say the number. Train and eval draw the same numbers: a split leak."""

    config_class = EnvConfig
    env_name = "leaky"
    _number = 0

    def task_ids(self, split: str = "train", config: EnvConfig | None = None) -> TaskIdRange:
        return TaskIdRange(split, 10)

    def _reset_task(self, task: Task[EnvConfig]) -> tuple[str, str]:
        self._number = task.index
        return "Say the number you were given.", "Say the number."

    def _step(self, action: str) -> Transition:
        return Transition("Done.", terminated=True, success=action == str(self._number))

    def oracle_action(self) -> str:
        return str(self._number)


class _SplitNamedKey(_Counter):
    """The authoring doc's old pattern: the key names the split."""

    def instance_key(self) -> str:
        return f"{self.task.split}:{self._number}"


def test_a_key_that_names_the_split_cannot_hide_a_leak() -> None:
    with pytest.raises(AssertionError, match="train/00000 and eval/00000 have the same"):
        check_splits(_SplitNamedKey, samples=10)


def test_every_registered_environment_still_passes_the_split_check() -> None:
    """The stricter comparison on the cheap environments (test_conformance runs them all)."""
    for env_id in ("llmgym/Wordle-v0", "llmgym/Maze-v0", "llmgym/TextCraft-v0"):
        check_splits(lambda env_id=env_id: gym.make(env_id), samples=20)


# ---------------------------------------------------------------- 7. play


def _play(*args: str, moves: str) -> subprocess.CompletedProcess[str]:
    return _llmgym("play", *args, stdin=moves)


def test_play_actions_and_quit_reveal() -> None:
    env = gym.make("llmgym/Wordle-v0")
    env.reset(options={"task_id": "eval/00000"})
    answer = env.unwrapped.reveal()
    result = _play("wordle", "--task-id", "eval/00000", moves=":actions\n:quit\n")
    assert result.returncode == 0, result.stderr
    assert "does not list its actions. Guess the hidden 5-letter" in result.stdout
    assert f"The answer was: {answer}" in result.stdout
    maze = _play("maze", "--seed", "1", moves=":actions\n:quit\n")
    assert "\n> move left\n" in maze.stdout  # the admissible actions: one, here
    assert "The oracle's next move would have been: move left" in maze.stdout


def test_play_solved_in_one_guess() -> None:
    env = gym.make("llmgym/Wordle-v0")
    env.reset(options={"task_id": "eval/00000"})
    result = _play("wordle", "--task-id", "eval/00000", moves=f"{env.unwrapped.reveal()}\n")
    assert "Solved in 1 guess!" in result.stdout and "1 guesses" not in result.stdout


def test_ctrl_c_in_play(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(prompt: str = "") -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupted)
    assert main(["play", "wordle", "--task-id", "eval/00000"]) == EXIT_INTERRUPTED
    assert "The answer was:" in capsys.readouterr().out


def test_ctrl_c_in_play_in_a_terminal() -> None:
    """A real SIGINT at the prompt."""
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "llmgym.cli", "play", "wordle", "--task-id", "eval/00000"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    shown = ""
    while not shown.endswith("> "):
        character = process.stdout.read(1)
        assert character, f"play ended before its prompt: {shown!r}"
        shown += character
    process.send_signal(signal.SIGINT)
    out, error = process.communicate(timeout=60)
    assert process.returncode == EXIT_INTERRUPTED
    assert "Traceback" not in error and "The answer was:" in out
