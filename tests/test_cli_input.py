"""A person's bad input (issue 26, item 7), each tried with the real command: counts out of
range, Ctrl-C between a run's two records, ``module:Class`` from the current folder, a missing
extra at import time, mistyped commands and suites, a busy port, and the GIF of a text
episode."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import llmgym.runner.runs
from llmgym.agents import OracleAgent
from llmgym.cli import EXIT_ERROR, EXIT_INTERRUPTED, build_parser, main
from llmgym.errors import ConfigError
from llmgym.runner.matches import make_player, run_match
from llmgym.runner.rollout import rollout
from llmgym.runner.runs import EvalPlan
from llmgym.runner.trajectories import finished_episodes, read_trajectories
from tests.chat_server import ChatServer
from tests.extras import need


def _llmgym(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmgym.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


def _one_line(error: str) -> str:
    """The one line of an error on stderr (and that it is one, without a traceback)."""
    assert error.count("\n") == 1 and "Traceback" not in error, error
    return error.strip()


# ------------------------------------------------------------------------------ counts
BAD_COUNTS = [
    (["eval", "maze", "--episodes", "-3"], "--episodes", "an integer >= 1, got -3"),
    (["eval", "maze", "--episodes", "0"], "--episodes", "an integer >= 1, got 0"),
    (["eval", "maze", "--concurrency", "0"], "--concurrency", "an integer >= 1, got 0"),
    (["eval", "maze", "--concurrency", "-5"], "--concurrency", "an integer >= 1, got -5"),
    (["eval", "maze", "--history-window", "-1"], "--history-window", "an integer >= 0"),
    (["eval", "maze", "--max-tokens", "0"], "--max-tokens", "an integer >= 1"),
    (["eval", "maze", "--timeout", "0"], "--timeout", "a number > 0"),
    (["eval", "maze", "--timeout", "inf"], "--timeout", "a number > 0"),
    (["eval", "maze", "--temperature", "-1"], "--temperature", "a number >= 0"),
    (["eval", "maze", "--max-server-errors", "-1"], "--max-server-errors", "an integer >= 0"),
    (["eval", "maze", "--seed", "-1"], "--seed", "an integer >= 0"),
    (["eval", "maze", "--episodes", "many"], "--episodes", "an integer >= 1, got 'many'"),
    (["collect", "--envs", "maze", "-o", "x", "--episodes", "0"], "--episodes", ">= 1"),
    (["match", "connect_four", "--agents", "a", "b", "--games", "0"], "--games", ">= 1"),
    (["match", "connect_four", "--agents", "a", "b", "--concurrency", "0"], "--concurrency", "1"),
    (["envgen", "maze", "--n", "0"], "--n", "an integer >= 1"),
    (["envgen", "maze", "--repair-rounds", "-1"], "--repair-rounds", "an integer >= 0"),
    (["play", "maze", "--seed", "-2"], "--seed", "an integer >= 0"),
    (["serve", "--port", "70000"], "--port", "an integer from 0 to 65535, got 70000"),
    (["serve", "--port", "-1"], "--port", "an integer from 0 to 65535"),
    (["serve", "--max-sessions", "0"], "--max-sessions", "an integer >= 1"),
    (["serve", "--max-sessions-per-client", "0"], "--max-sessions-per-client", ">= 1"),
    (["serve", "--ttl", "0"], "--ttl", "a number > 0"),
    (["serve", "--ttl", "nan"], "--ttl", "a number > 0, got nan"),
    (["serve", "--step-timeout", "-1"], "--step-timeout", "a number > 0"),
    (["serve", "--reset-timeout", "0"], "--reset-timeout", "a number > 0"),
    (["serve", "--max-body-bytes", "10"], "--max-body-bytes", "an integer >= 1024"),
    (["serve", "--max-json-depth", "1"], "--max-json-depth", "an integer >= 2"),
    (["view", "t.jsonl", "--port", "65536"], "--port", "an integer from 0 to 65535"),
    (["render", "t.jsonl", "-o", "x.gif", "--episode", "-1"], "--episode", ">= 0"),
    (["render", "t.jsonl", "-o", "x.gif", "--scale", "0"], "--scale", "from 1 to 16"),
    (["render", "t.jsonl", "-o", "x.gif", "--scale", "500"], "--scale", "from 1 to 16"),
    (["render", "t.jsonl", "-o", "x.gif", "--frame-ms", "5"], "--frame-ms", ">= 20"),
    (["webarena", "serve", "--seed", "-1"], "--seed", "an integer >= 0"),
    (["export", "openenv", "maze", "d", "--reward-range", "0", "nan"], "--reward-range", "finite"),
]


@pytest.mark.parametrize(("argv", "option", "expected"), BAD_COUNTS, ids=lambda v: str(v))
def test_a_count_out_of_range_is_refused_naming_the_option_and_the_range(
    argv: list[str], option: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == EXIT_ERROR
    line = _one_line(capsys.readouterr().err)
    assert f"argument {option}: expected " in line and expected in line, line
    assert line.endswith(f"(see llmgym {argv[0]} --help)")


def test_eval_with_negative_or_no_episodes_plays_nothing_and_says_why() -> None:
    """The user's commands, as typed: no table of 0 episodes, exit 2."""
    for option, value in (("--episodes", "-3"), ("--episodes", "0"), ("--concurrency", "0")):
        result = _llmgym("eval", "maze", option, value)
        assert result.returncode == EXIT_ERROR and result.stdout == ""
        line = _one_line(result.stderr)
        assert f"llmgym eval: error: argument {option}: expected an integer >= 1" in line


def test_every_numeric_option_of_every_command_has_an_allowed_range() -> None:
    """No option takes a bare int or float: each has a type that checks its range (the
    webarena sites' port offset is checked against each site's port when they start)."""
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    unchecked = [
        f"llmgym {name} {action.option_strings[0]}"
        for name, command in commands.choices.items()
        for action in command._actions
        if action.type in (int, float) and action.option_strings
    ]
    assert unchecked == ["llmgym webarena --port-offset"]


def test_webarena_port_offset_beyond_the_port_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["webarena", "serve", "--port-offset", "60000"]) == EXIT_ERROR
    line = _one_line(capsys.readouterr().err)
    assert "port_offset: 60000 puts the shop site at port 67770; ports run from 1 to" in line


def test_textworld_pregeneration_counts(capsys: pytest.CaptureFixture[str]) -> None:
    need("textworld")
    from llmgym.envs.textworld import main as pregenerate

    for option, value, expected in (
        ("--count", "0", "an integer >= 1"),
        ("--workers", "0", "an integer >= 1"),
        ("--start", "-1", "an integer >= 0"),
    ):
        with pytest.raises(SystemExit) as exit:
            pregenerate([option, value])
        assert exit.value.code == EXIT_ERROR
        line = _one_line(capsys.readouterr().err)
        assert line.startswith("python -m llmgym.envs.textworld: error: argument " + option)
        assert expected in line


def test_the_library_refuses_the_same_counts() -> None:
    with pytest.raises(ConfigError, match=r"episodes: must be an integer >= 1, got -3"):
        EvalPlan(["llmgym/Maze-v0"], episodes=-3)
    with pytest.raises(ConfigError, match=r"concurrency: must be an integer >= 1, got 0"):
        EvalPlan(["llmgym/Maze-v0"], concurrency=0)
    with pytest.raises(ConfigError, match=r"concurrency: must be an integer >= 1, got -5"):
        rollout("llmgym/Maze-v0", OracleAgent(), episodes=2, concurrency=-5, progress=False)
    with pytest.raises(ConfigError, match=r"episodes: must be an integer >= 1, got 0"):
        rollout("llmgym/Maze-v0", OracleAgent(), episodes=0, progress=False)
    players = [make_player("random", "connect_four") for _ in range(2)]
    with pytest.raises(ConfigError, match=r"games: must be an integer >= 1, got 0"):
        run_match("connect_four", players, games=0, progress=False)


# ---------------------------------------------------------------- did you mean
def test_a_mistyped_command_or_suite_gets_a_suggestion_in_one_line() -> None:
    result = _llmgym("evl")
    assert result.returncode == EXIT_ERROR
    assert _one_line(result.stderr) == (
        "llmgym: error: unknown command 'evl'; did you mean eval? (see llmgym --help)"
    )
    result = _llmgym("eval", "--suite", "agentevl")
    assert result.returncode == EXIT_ERROR
    assert _one_line(result.stderr) == (
        "llmgym eval: error: argument --suite: invalid choice 'agentevl'; did you mean "
        "agenteval? (see llmgym eval --help)"
    )


def test_a_choice_far_from_any_lists_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["zzzzzz"]) == EXIT_ERROR
    line = _one_line(capsys.readouterr().err)
    assert "unknown command 'zzzzzz'; choose from list, play, eval, match, collect" in line
    assert main(["export", "opnenv"]) == EXIT_ERROR
    assert "invalid choice 'opnenv'; did you mean openenv?" in capsys.readouterr().err
    assert main(["eval", "maze", "--split", "evl"]) == EXIT_ERROR
    assert "invalid choice 'evl'; did you mean eval?" in capsys.readouterr().err


# ------------------------------------------------------ Ctrl-C: the two records agree
def _resumed_count(error: str) -> int:
    """How many episodes ``--resume`` took from the trajectory file (its notes)."""
    found = re.findall(r": (\d+) of \d+ episodes already in ", error)
    return sum(int(count) for count in found)


def _kept_count(error: str) -> int:
    """How many episodes the interrupted run's note says ``--resume`` will keep."""
    found = re.search(r"--resume keeps (\d+) of them", error)
    assert found is not None, error
    return int(found.group(1))


@pytest.mark.parametrize("moment", ["before the trajectory is written", "after it is written"])
def test_ctrl_c_around_the_trajectory_write_leaves_the_two_records_agreeing(
    moment: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A real SIGINT to this process just before or just after the 4th episode is appended
    to the trajectory file: the results file, the file and the note count the same episodes,
    and ``--resume`` finds what the note says (one episode ended in a model error, which
    ``--resume`` plays again)."""
    trajectories, results = tmp_path / "run.jsonl", tmp_path / "results.json"
    write = llmgym.runner.runs.append_trajectory
    calls = itertools.count()

    def write_with_ctrl_c(path: Path, trajectory: object) -> None:
        fourth = next(calls) == 3
        if fourth and moment.startswith("before"):
            os.kill(os.getpid(), signal.SIGINT)
        write(path, trajectory)
        if fourth and moment.startswith("after"):
            os.kill(os.getpid(), signal.SIGINT)

    with ChatServer(lambda messages: "Thought: a word.\nAction: crane", faults=["400"]) as chat:
        command = ["eval", "wordle", "--agent", "openai:test", "--base-url", chat.base_url]
        command += ["--api-key", "k", "--episodes", "6", "--quiet"]
        command += ["--trajectories", str(trajectories), "--json", str(results)]
        with monkeypatch.context() as patch:
            patch.setattr(llmgym.runner.runs, "append_trajectory", write_with_ctrl_c)
            assert main(command) == EXIT_INTERRUPTED
        error = capsys.readouterr().err
        in_results = json.loads(results.read_text())["results"][0]["episodes"]
        in_file = list(read_trajectories(trajectories))
        assert in_results == len(in_file) == 4
        assert f"holds the 4 finished episodes, as does {trajectories}" in error
        assert _kept_count(error) == len(finished_episodes(trajectories)) == 3

        assert main([*command, "--resume"]) == 0
        assert _resumed_count(capsys.readouterr().err) == 3
    assert json.loads(results.read_text())["results"][0]["episodes"] == 6


def test_ctrl_c_at_many_moments_of_a_concurrent_run(tmp_path: Path) -> None:
    """Real SIGINTs at different moments of a fast concurrent run: each time the results file
    and the trajectory file hold the same episodes, and the note's count is what ``--resume``
    finds, as its own note says."""
    for number, lines in enumerate((1, 4, 16, 40, 90)):
        trajectories, results = tmp_path / f"run{number}.jsonl", tmp_path / f"r{number}.json"
        command = [sys.executable, "-m", "llmgym.cli", "eval", "maze", "--episodes", "1500"]
        command += ["--concurrency", str(1 + number % 3), "--quiet"]
        command += ["--trajectories", str(trajectories), "--json", str(results)]
        process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 90
            while not (trajectories.exists() and trajectories.read_text().count("\n") >= lines):
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.005)
            process.send_signal(signal.SIGINT)
            _, error = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == EXIT_INTERRUPTED, error
        in_results = json.loads(results.read_text())["results"][0]["episodes"]
        assert in_results == len(list(read_trajectories(trajectories))) >= lines
        assert _kept_count(error) == len(finished_episodes(trajectories)) == in_results
    resumed = _llmgym(*command[3:], "--resume")  # the last run
    assert resumed.returncode == 0, resumed.stderr
    assert _resumed_count(resumed.stderr) == in_results


# --------------------------------------------------- module:Class from the current folder
_MY_ENVS = '''
from llmgym import EnvConfig, TextEnv, Transition
from llmgym.core import TaskIdRange


class GuessNumberEnv(TextEnv[EnvConfig]):
    """Guess a number from 1 to 10."""

    config_class = EnvConfig
    env_name = "guess_number"
    _number = 0

    def task_ids(self, split="train", config=None):
        return TaskIdRange(split, 10)

    def _reset_task(self, task):
        self._number = task.index + 1
        return "Guess a number from 1 to 10.", "Guess the number."

    def _step(self, action):
        if action.strip() == str(self._number):
            return Transition("Right!", reward=1.0, terminated=True, success=True)
        return Transition("Wrong.")

    def oracle_action(self):
        return str(self._number)
'''

# what pip writes as the `llmgym` console script: its own folder, not the current one, is
# first on sys.path
_CONSOLE_SCRIPT = """
import sys
from llmgym.cli import main
if __name__ == "__main__":
    sys.exit(main())
"""


@pytest.fixture
def console_script(tmp_path: Path) -> list[str]:
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "llmgym").write_text(_CONSOLE_SCRIPT)
    return [sys.executable, str(folder / "llmgym")]


def test_module_class_loads_from_the_current_folder(
    tmp_path: Path, console_script: list[str]
) -> None:
    """As docs/authoring.md says: `llmgym eval my_envs:GuessNumberEnv` in the folder holding
    my_envs.py, with the installed `llmgym` command (eval, play, collect and serve)."""
    here = tmp_path / "work"
    here.mkdir()
    (here / "my_envs.py").write_text(textwrap.dedent(_MY_ENVS))

    def llmgym(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*console_script, *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=here,
        )

    evaluated = llmgym("eval", "my_envs:GuessNumberEnv", "--episodes", "3", "--quiet")
    assert evaluated.returncode == 0, evaluated.stderr
    assert "my_envs.GuessNumberEnv  oracle  3         1.000" in evaluated.stdout
    played = llmgym("play", "my_envs:GuessNumberEnv", "--seed", "0", stdin=":hint\n:quit\n")
    assert played.returncode == 0 and "oracle: " in played.stdout, played.stderr
    collected = llmgym("collect", "--envs", "my_envs:GuessNumberEnv", "--episodes", "2")
    assert collected.returncode == 2, "collect needs -o"
    collected = llmgym(
        "collect", "--envs", "my_envs:GuessNumberEnv", "--episodes", "2", "-o", "t.jsonl"
    )
    assert collected.returncode == 0, collected.stderr
    assert len(list(read_trajectories(here / "t.jsonl"))) == 2

    need("uvicorn")
    server = subprocess.Popen(
        [*console_script, "serve", "--port", "0", "--envs", "my_envs:GuessNumberEnv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=here,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert "listening on " in first, first
        url = first.rsplit("listening on ", 1)[1].strip()
        with urllib.request.urlopen(f"{url}/environments", timeout=30) as response:
            served = [row["id"] for row in json.load(response)["environments"]]
        assert served == ["my_envs.GuessNumberEnv"]
    finally:
        server.terminate()
        server.wait(timeout=30)

    elsewhere = subprocess.run(
        [*console_script, "eval", "my_envs:GuessNumberEnv", "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert elsewhere.returncode == EXIT_ERROR
    assert f"no module named 'my_envs' in the current folder ({tmp_path})" in _one_line(
        elsewhere.stderr
    )


# ------------------------------------------------- a missing extra, even at import time
_BLOCKER = """
import os
import sys

# modules named in $LLMGYM_TEST_UNINSTALLED are missing, as without their pip extra
for name in filter(None, os.environ.get("LLMGYM_TEST_UNINSTALLED", "").split(",")):
    sys.modules[name] = None
"""


@pytest.mark.parametrize(
    ("command", "missing", "extra"),
    [
        (["-m", "llmgym.envs.textworld", "--count", "1"], "textworld,jericho", "textworld"),
        (["-m", "llmgym.cli", "eval", "textworld", "--episodes", "1"], "textworld", "textworld"),
        (["-m", "llmgym.cli", "serve", "--port", "0"], "fastapi,uvicorn", "serve"),
        (["-m", "llmgym.cli", "render", "t.jsonl", "-o", "x.gif"], "PIL", "report"),
    ],
    ids=["python -m llmgym.envs.textworld", "eval", "serve", "render"],
)
def test_a_missing_extra_is_one_line_naming_the_pip_command(
    command: list[str], missing: str, extra: str, tmp_path: Path
) -> None:
    (tmp_path / "sitecustomize.py").write_text(_BLOCKER)
    paths = [str(tmp_path), os.environ.get("PYTHONPATH", "")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "LLMGYM_TEST_UNINSTALLED": missing,
    }
    (tmp_path / "t.jsonl").write_text("")
    result = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == EXIT_ERROR
    line = _one_line(result.stderr)
    assert "is not installed" in line and f"pip install -e '.[{extra}]'" in line


# ---------------------------------------------------------------------- a busy port
def test_serve_on_a_busy_port_names_the_address_and_port_0() -> None:
    need("uvicorn")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _llmgym("serve", "--port", str(port))
    assert result.returncode == EXIT_ERROR
    assert _one_line(result.stderr) == (
        f"llmgym: error: cannot listen on 127.0.0.1:{port} (Address already in use); choose "
        "another --port (0 picks a free one)"
    )


# ------------------------------------------------------------ the GIF of a text episode
def _ink(image: Any, colour: str) -> np.ndarray:
    """Where ``image`` has ink of one kind: ``"text"`` (black: the observation, not the grey
    header) or ``"action"`` (blue)."""
    r, g, b = np.moveaxis(np.asarray(image.convert("RGB"), dtype=int), 2, 0)
    blue = b > r + 60
    return blue if colour == "action" else (r + g + b < 300) & ~blue


def _drawn(text: str, PIL: Any, colour: str = "action") -> np.ndarray:
    """``text`` drawn as a page draws it (DejaVu Sans Mono, 16 pixels), as ink."""
    matplotlib = need("matplotlib")
    font = PIL.ImageFont.truetype(
        str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSansMono.ttf"), 16
    )
    page = PIL.Image.new("RGB", (20 * len(text) + 20, 40), "white")
    ink = (0, 70, 170) if colour == "action" else (20, 20, 20)
    PIL.ImageDraw.Draw(page).text((4, 4), text, fill=ink, font=font)
    return _ink(page, colour)


def _cropped(ink: np.ndarray) -> np.ndarray:
    rows, columns = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    return ink[rows[0] : rows[-1] + 1, columns[0] : columns[-1] + 1]


def _same_picture(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two ink images hold the same picture, up to the GIF's colour rounding."""
    a, b = _cropped(a), _cropped(b)
    if abs(a.shape[0] - b.shape[0]) > 1 or abs(a.shape[1] - b.shape[1]) > 1:
        return False
    height, width = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    return (a[:height, :width] == b[:height, :width]).mean() >= 0.95


def _runs(rows: list[int]) -> list[int]:
    """The lengths of the runs of consecutive numbers in the sorted ``rows``: of the rows of
    an image with ink, the heights of its lines of text."""
    runs: list[int] = []
    for previous, row in itertools.pairwise([-2, *rows]):
        if row == previous + 1:
            runs[-1] += 1
        else:
            runs.append(1)
    return runs


def test_a_text_episode_gif_shows_each_observation_and_action_legibly(tmp_path: Path) -> None:
    """Each page of `llmgym render` of a Wordle episode holds the action taken, in a 16-pixel
    font (the old pages: 608 x 584 pixels of 6-pixel glyphs, no action), on a page fitted to
    the text, at the frame time `llmgym render --help` documents."""
    need("PIL.Image")
    import PIL.Image
    import PIL.ImageDraw
    import PIL.ImageFont

    from llmgym.viewer.render import TEXT_FRAME_MS

    trajectories = tmp_path / "t.jsonl"
    argv = ["eval", "wordle", "--agent", "random", "--episodes", "1", "--quiet"]
    assert main([*argv, "--trajectories", str(trajectories)]) == 0
    episode = next(read_trajectories(trajectories))
    gif = tmp_path / "wordle.gif"
    assert main(["render", str(trajectories), "-o", str(gif)]) == 0
    image = PIL.Image.open(gif)
    assert image.n_frames == len(episode.turns) + 1
    assert image.info["duration"] == TEXT_FRAME_MS
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    documented = " ".join(commands.choices["render"].format_help().split())
    assert f"{TEXT_FRAME_MS} for the pages of a text episode" in documented
    width, height = image.size
    assert 400 <= width <= 1100 and height <= 400, image.size  # a few short lines of text

    for number, turn in enumerate(episode.turns):
        image.seek(number)
        action = _ink(image, "action")
        assert _same_picture(action, _drawn(f"> {turn.action}", PIL)), f"turn {number}"
        rows = np.flatnonzero(_ink(image, "text").any(axis=1))
        assert max(_runs(list(rows))) >= 12, "the glyphs of 16-pixel text"

    assert main(["render", str(trajectories), "-o", str(gif), "--frame-ms", "300"]) == 0
    assert PIL.Image.open(gif).info["duration"] == 300


def test_long_text_wraps_within_the_page_cap(tmp_path: Path) -> None:
    """A 3,000-character line wraps and a 500-line observation is cut, with a count of the
    rest: the page stays within its cap of columns and lines."""
    need("PIL.Image")
    import PIL.Image
    import PIL.ImageDraw
    import PIL.ImageFont

    from llmgym.runner.trajectories import Trajectory, Turn, append_trajectory
    from llmgym.viewer.render import TEXT_COLUMNS, TEXT_LINES

    turns = [
        Turn(observation="word " * 600, reply="Action: look", action="look"),
        Turn(observation="\n".join(f"line {i}" for i in range(500)), reply="x", action="x"),
    ]
    path = tmp_path / "long.jsonl"
    append_trajectory(path, Trajectory("my/Long-v0", "eval/00000", "eval", turns=turns))
    gif = tmp_path / "long.gif"
    assert main(["render", str(path), "-o", str(gif)]) == 0
    image = PIL.Image.open(gif)
    # a 16-pixel monospaced character is under 10 pixels wide and its line under 22 high
    assert image.width <= 24 + 10 * TEXT_COLUMNS
    assert image.height <= 24 + 22 * (TEXT_LINES + 4)
    text = _ink(image, "text")
    assert len(_runs(list(np.flatnonzero(text.any(axis=1))))) == 3000 // TEXT_COLUMNS

    image.seek(1)
    text = _ink(image, "text")
    rows = np.flatnonzero(text.any(axis=1))
    assert len(_runs(list(rows))) == TEXT_LINES  # 47 lines and the count of the others
    last = np.zeros_like(text)
    last[rows[-1] - 20 : rows[-1] + 1] = text[rows[-1] - 20 : rows[-1] + 1]
    count = f"... {500 - TEXT_LINES + 1} more lines"
    assert _same_picture(last, _drawn(count, PIL, "text"))
