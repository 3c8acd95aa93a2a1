"""TextWorld rules: command handling, text cleanup, config checks, generation and caching."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import gymnasium as gym
import pytest

from tests.extras import need

need("textworld")

from llmgym import ConfigError
from llmgym.envs import textworld as tw
from llmgym.envs.textworld import TextWorldConfig, TextWorldEnv

BANNER_AND_PROMPT = (
    "\n\n                    ________  ________  __    __  ________        \n"
    "                   |        \\|        \\|  \\  |  \\|        \\       \n"
    "                    \\$$$$$$$$| $$$$$$$$| $$  | $$ \\$$$$$$$$       \n"
    "\nWelcome to TextWorld! Find the key.\n\n-= Study =-\nYou are in a study.\n\n\n\n"
    "There is an exit to the north.\n\n>          -= Study =-0/1"
)


def test_clean_removes_banner_prompt_and_end_menu() -> None:
    assert tw._clean(BANNER_AND_PROMPT) == (
        "Welcome to TextWorld! Find the key.\n\n-= Study =-\nYou are in a study.\n\n"
        "There is an exit to the north."
    )
    ending = "You take the key.\n\n*** The End ***\n\nWould you like to RESTART, RESTORE or QUIT?"
    assert tw._clean(ending) == "You take the key.\n\n*** The End ***"
    assert tw._clean("\n\n") == "Nothing happens."


@pytest.mark.parametrize(
    ("action", "command"),
    [
        ("N", "go north"),
        ("north", "go north"),
        ("  Go   North. ", "go north"),
        ("i", "inventory"),
        ("x cookbook", "examine cookbook"),
        ("**Take Apple From Fridge**", "take apple from fridge"),
    ],
)
def test_canonical_commands(action: str, command: str) -> None:
    assert tw._canonical(action) == command


def test_unsafe_commands_never_reach_a_zmachine_parser() -> None:
    assert tw._unsafe("look") is None
    assert tw._unsafe("take lamp") is None
    for command in ("", "quit", "restart", "undo", "open door. go north", "take lamp, key",
                    "go north then go south", "café"):  # fmt: skip
        assert tw._unsafe(command), command


def test_config_checks(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"level.*1\.\.30"):
        TextWorldConfig(challenge="tw-treasure_hunter", level=31)
    with pytest.raises(ConfigError, match="take <= recipe"):
        TextWorldConfig(challenge="tw-cooking", recipe=1, take=2)
    glulx = tmp_path / "game.ulx"
    glulx.write_bytes(b"Glul")
    with pytest.raises(ConfigError, match="Glulx") as error:
        TextWorldConfig(game_file=str(glulx))
    assert error.value.field == "TextWorldConfig.game_file"
    with pytest.raises(ConfigError, match="does not exist"):
        TextWorldConfig(game_file=str(tmp_path / "missing.z8"))
    assert TextWorldConfig(challenge="tw-coin_collector", level=233).settings() == {"level": 233}


@pytest.mark.slow
def test_generation_is_a_pure_function_of_the_task(tmp_path: Path) -> None:
    config = TextWorldConfig(level=2)
    first, other, again = (str(tmp_path / name) for name in ("a.z8", "b.z8", "c.z8"))
    tw._generate(config.challenge, config.settings(), "train", 3, first)
    tw._generate(config.challenge, config.settings(), "eval", 0, other)  # moves TextWorld's RNGs
    tw._generate(config.challenge, config.settings(), "train", 3, again)
    worlds = [json.loads(Path(p).with_suffix(".json").read_text()) for p in (first, again)]
    assert worlds[0]["world"] == worlds[1]["world"]
    assert worlds[0]["quests"] == worlds[1]["quests"]


@pytest.mark.slow
def test_play_score_reward_and_cache_reuse() -> None:
    env = gym.make("llmgym/TextWorld-v0", challenge="tw-cooking", recipe=2, take=1).unwrapped
    observation, info = env.reset(options={"task_id": "eval/00000"})
    assert "cookbook" in info["instruction"].lower() or "meal" in info["instruction"].lower()
    assert "$$" not in observation and "inventory" in info["admissible_actions"]
    total, steps = 0.0, 0
    while True:
        observation, reward, terminated, truncated, info = env.step(env.oracle_action())
        total, steps = total + reward, steps + 1
        assert info["score"] <= info["max_score"]
        if terminated or truncated:
            break
    assert info["success"] and total == pytest.approx(1.0)
    assert info["score"] == info["max_score"] and steps < 100
    game = tw.game_path(env.task.config, "eval", 0)
    assert game.exists() and game.with_suffix(".json").exists()
    compiled = game.stat().st_ino  # a compiled game replaces the file (its mtime marks use)
    env.reset(options={"task_id": "eval/00000"})
    assert game.stat().st_ino == compiled, "a cached game was compiled again"
    env.close()


@pytest.mark.slow
def test_treasure_hunter_is_lost_by_taking_the_wrong_object() -> None:
    env = gym.make("llmgym/TextWorld-v0").unwrapped
    for task_id in env.task_ids("train")[:3]:
        _, info = env.reset(options={"task_id": task_id})
        for _ in range(30):
            target = env.oracle_action()
            takes = [a for a in info["admissible_actions"] if a.startswith("take ")]
            if wrong := [a for a in takes if a != target]:
                _, reward, terminated, _, info = env.step(wrong[0])
                assert terminated and info["lost"] and not info["success"] and reward == 0
                return
            *_, terminated, _, info = env.step(target)
            if terminated:
                break
    pytest.fail("the wrong object was never in reach")


@pytest.mark.slow
def test_game_files_with_and_without_textworld_metadata(tmp_path: Path) -> None:
    config = TextWorldConfig()
    game = tw.ensure_game(config, "train", 0)
    with_metadata = gym.make("llmgym/TextWorld-v0", game_file=str(game)).unwrapped
    assert list(with_metadata.task_ids("eval")) == ["eval/00000"]
    _, info = with_metadata.reset(options={"task_id": "eval/00000"})
    assert info["admissible_actions"]
    with_metadata.close()

    bare = tmp_path / "bare.z8"
    shutil.copy(game, bare)
    env = gym.make("llmgym/TextWorld-v0", game_file=str(bare)).unwrapped
    observation, info = env.reset(seed=0)
    assert "admissible_actions" not in info and observation
    observation, *_, info = env.step("look")
    assert not info["invalid_action"] and observation
    for action in ("quit", "go north. go south", "xyzzy"):
        observation, *_, info = env.step(action)
        assert info["invalid_action"], action
    env.close()


@pytest.mark.slow
def test_pregenerate_fills_the_cache_with_a_progress_bar(
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = TextWorldConfig()
    tw.ensure_game(config, "train", 0)
    tw.game_path(config, "train", 1).unlink(missing_ok=True)
    paths = tw.pregenerate(config, "train", 2)
    assert [p.name for p in paths] == ["train-00000.z8", "train-00001.z8"]
    assert all(p.exists() for p in paths)
    assert "1/1" in capsys.readouterr().err  # only the missing game was generated


def test_task_ids_and_splits_without_generation() -> None:
    env = TextWorldEnv()
    assert len(env.task_ids("train")) == tw.TRAIN_TASKS
    assert len(env.task_ids("eval")) == tw.EVAL_TASKS
    assert env.task_ids("eval")[0] == "eval/00000"


def test_the_game_cache_keeps_the_most_recently_used_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every new task id or config used to add a compiled game to the cache for good."""
    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tw, "MAX_CACHED_GAMES", 3)
    generated: list[int] = []

    def generate(challenge: str, settings: dict, split: str, index: int, path: str) -> str:
        game = Path(path)
        game.parent.mkdir(parents=True, exist_ok=True)
        game.with_suffix(".json").write_text("{}")
        game.write_bytes(b"story")
        generated.append(index)
        return path

    monkeypatch.setattr(tw, "_generate", generate)
    config, other = TextWorldConfig(), TextWorldConfig(level=7)
    games = [tw.ensure_game(config, "train", 0), tw.ensure_game(other, "eval", 1)]
    games.append(tw.ensure_game(config, "train", 2))
    for age, game in enumerate(games):  # oldest first, one second apart
        os.utime(game, (1_000_000 + age, 1_000_000 + age))
    assert tw.ensure_game(config, "train", 0) == games[0]  # used again: now the most recent
    tw.ensure_game(config, "train", 3)  # a fourth game evicts the least recently used
    assert generated == [0, 1, 2, 3]
    assert not games[1].exists() and not games[1].with_suffix(".json").exists()
    assert games[0].exists() and games[2].exists()
    assert sorted(tmp_path.rglob("*.z8")) == sorted(
        [games[0], games[2], tw.game_path(config, "train", 3)]
    )
