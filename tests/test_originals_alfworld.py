"""ALFWorld's original games (llmgym/ALFWorld-v0): the layout ``alfworld-download`` writes,
ALFWorld's rule for which games are played, its object names, its reward (TextWorld's ``won``),
the planner oracle, AgentGym's item order, and bad data or configs answered precisely.

The games are written by tests/alfworld_data.py in ALFWorld's layout and read by the real
loader; playing them needs Fast Downward (the ``[alfworld]`` extra)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gymnasium as gym
import pytest

from tests.extras import need

need("textworld")

from llmgym import ConfigError
from llmgym.envs import alfworld
from llmgym.envs.alfworld import ALFWorldSource, game_files
from llmgym.errors import DataError
from llmgym.originals import get_source
from tests.alfworld_data import standard_trials, write_alfworld

KITCHEN_SIMPLE = "pick_and_place_simple-Mug-None-CoffeeMachine-5/trial_T20190907_000001_000001"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_alfworld(tmp_path / "alfworld")


@pytest.fixture
def planner() -> None:
    need("fast_downward")


def make(data: Path, **config: str) -> gym.Env:
    return gym.make("llmgym/ALFWorld-v0", config={"data_dir": str(data), **config})


# ------------------------------------------------------------------------- the data
def test_check_counts_the_games_alfworld_plays(data: Path) -> None:
    report = get_source("alfworld").check(data)
    assert isinstance(get_source("alfworld"), ALFWorldSource)
    assert dict(report.splits) == {"train": 3, "eval": 4}
    assert report.data_dir == str(data.resolve())
    text = report.text()
    assert "json_2.1.1/train: 3 games (1 pick_and_place_simple, 1 look_at_obj_in_light, " in text
    assert "json_2.1.1/valid_seen: 1 games (1 pick_and_place_simple)" in text
    assert "json_2.1.1/valid_unseen: 4 games" in text
    assert "logic/: alfred.pddl, alfred.twl2" in text


def test_alfworlds_rule_skips_what_alfred_tw_env_skips(data: Path) -> None:
    names = [game.name for game in game_files(data, "train")]
    playable = sorted(
        f"{t.task}/{t.trial}" for t in standard_trials()[:3]
    )  # the first three trials are the playable train games
    assert names == playable  # not the unsolvable, unchecked, gameless, Sliced, movable ones
    assert [game.task_type for game in game_files(data, "valid_seen")] == ["pick_and_place_simple"]


def test_a_changed_game_file_is_read_again(data: Path) -> None:
    path = data / "json_2.1.1" / "train" / KITCHEN_SIMPLE / "game.tw-pddl"
    assert len(game_files(data, "train")) == 3
    game = json.loads(path.read_text())
    path.write_text(json.dumps({**game, "solvable": False}) + "\n")  # another size
    assert len(game_files(data, "train")) == 2


@pytest.mark.parametrize("split", ["train", "valid_seen", "valid_unseen"])
def test_a_missing_split_names_its_directory(data: Path, split: str) -> None:
    shutil.rmtree(data / "json_2.1.1" / split)
    with pytest.raises(DataError, match=rf"json_2.1.1/{split}: ALFWorld's {split} games"):
        get_source("alfworld").check(data)


def test_an_empty_directory_names_the_games_root(tmp_path: Path) -> None:
    with pytest.raises(DataError) as raised:
        get_source("alfworld").check(tmp_path)
    assert f"{tmp_path}/json_2.1.1/train" in str(raised.value)
    assert "llmgym data fetch alfworld" in str(raised.value)


def test_a_broken_game_file_is_named(data: Path) -> None:
    path = data / "json_2.1.1" / "train" / KITCHEN_SIMPLE / "game.tw-pddl"
    path.write_text("{not json")
    with pytest.raises(DataError, match=rf"{path}: not a TextWorld PDDL game"):
        get_source("alfworld").check(data)
    path.write_text(json.dumps({"pddl_domain": "", "grammar": "", "solvable": True}))
    with pytest.raises(DataError, match=rf"{path}: the game has no pddl_problem"):
        get_source("alfworld").check(data)


def test_a_broken_trajectory_file_is_named(data: Path) -> None:
    path = data / "json_2.1.1" / "valid_seen"
    traj = next(path.rglob("traj_data.json"))
    traj.write_text(json.dumps({"task_id": "x"}))
    with pytest.raises(DataError, match=rf"{traj}: not ALFRED trajectory JSON with a task_type"):
        get_source("alfworld").check(data)


def test_agentgym_items_map_to_the_same_games(tmp_path: Path) -> None:
    """AgentGym's 2,620 items (its mappings_train.json, then mappings_test.json from
    valid_train), here as games whose files hold what the loader reads; extra games that
    AgentGym does not play shift llmgym's positions, not AgentGym's items."""
    items = alfworld._agentgym_items()
    root = tmp_path / "alfworld"
    game = json.dumps({"pddl_domain": "", "grammar": "", "pddl_problem": "", "solvable": True})
    extra = ["look_at_obj_in_light-AlarmClock-None-DeskLamp-301/trial_T20190101_000000_000000"]
    for key in ("json_2.1.1/train", "json_2.1.1/valid_train"):
        for name in [*items[key], *extra]:
            directory = root / key / name
            directory.mkdir(parents=True)
            task_type = name.split("-", 1)[0]
            (directory / "traj_data.json").write_text(json.dumps({"task_type": task_type}))
            (directory / "game.tw-pddl").write_text(game)
    for split in ("valid_seen", "valid_unseen"):
        (root / "json_2.1.1" / split).mkdir(parents=True)
    ids = get_source("alfworld").agentgym_task_ids(root)
    assert len(ids) == 2_620
    train = game_files(root, "train")
    valid_train = game_files(root, "valid_train")
    for item, task_id in enumerate(ids):
        split, index = task_id.split("/")
        if item < 2_420:
            assert split == "train"
            assert train[int(index)].name == items["json_2.1.1/train"][item]
        else:
            assert split == "eval"
            assert valid_train[int(index)].name == items["json_2.1.1/valid_train"][item - 2_420]
    first = items["json_2.1.1/train"][0]
    shutil.rmtree(root / "json_2.1.1" / "train" / first)
    with pytest.raises(DataError, match=rf"train/{first}/game.tw-pddl: a playable game AgentGym"):
        get_source("alfworld").agentgym_task_ids(root)


# ------------------------------------------------------------------------- configuration
def test_no_data_directory_means_no_tasks_and_a_precise_reset_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    env = gym.make("llmgym/ALFWorld-v0")
    assert len(env.unwrapped.task_ids("train")) == len(env.unwrapped.task_ids("eval")) == 0
    with pytest.raises(ConfigError, match=r"ALFWorldConfig.data_dir.*ALFWORLD_DATA"):
        env.reset(seed=0)


def test_alfworld_data_variable_is_read(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALFWORLD_DATA", str(data))
    env = gym.make("llmgym/ALFWorld-v0")
    assert len(env.unwrapped.task_ids("train")) == 3


def test_config_errors_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ALFWorldConfig.data_dir.*is not a directory"):
        make(tmp_path / "nowhere").unwrapped.task_ids("train")
    with pytest.raises(ConfigError, match=r"source"):
        gym.make("llmgym/ALFWorld-v0", config={"source": "generated"})
    with pytest.raises(ConfigError, match=r"eval_split"):
        make(tmp_path, eval_split="tests_seen")


def test_eval_split_chooses_alfworlds_split(data: Path) -> None:
    assert len(make(data).unwrapped.task_ids("eval")) == 4
    assert len(make(data, eval_split="valid_seen").unwrapped.task_ids("eval")) == 1


# ------------------------------------------------------------------------- playing
def test_first_observation_is_alfworlds_as_agentgym_shows_it(data: Path, planner: None) -> None:
    env = make(data)
    observation, info = env.reset(options={"task_id": "train/00001"})
    assert env.unwrapped.instance_key() == KITCHEN_SIMPLE
    assert observation == (
        "You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a "
        "coffeemachine 1, a countertop 1, a fridge 1, and a microwave 1.\n"
        "Your task is to: put a mug in coffeemachine."
    )
    assert info["instruction"] == "put a mug in coffeemachine."
    assert "go to countertop 1" in info["admissible_actions"]


def test_objects_are_numbered_as_alfworlds_demangler_numbers_them(
    data: Path, planner: None
) -> None:
    env = make(data)
    env.reset(options={"task_id": "train/00001"})
    # two mugs: ALFWorld numbers the sorted ids from the highest number down
    observation = env.step("go to cabinet 1")[0]
    assert env.step("open cabinet 1")[0].endswith("In it, you see a mug 2.")
    observation = env.step("go to countertop 1")[0]
    assert observation == "You arrive at countertop 1. On the countertop 1, you see a mug 1."


def test_the_oracle_wins_every_game_with_reward_one_on_the_last_step(
    data: Path, planner: None
) -> None:
    env = make(data)
    for task_id in [*env.unwrapped.task_ids("train"), *env.unwrapped.task_ids("eval")]:
        env.reset(options={"task_id": task_id})
        rewards, terminated = [], False
        while not terminated and len(rewards) < 20:
            _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
            rewards.append(reward)
        assert info["success"] and terminated, task_id
        assert rewards[-1] == 1.0 and set(rewards[:-1]) <= {0.0}, task_id


def test_a_wrong_answer_scores_zero(data: Path, planner: None) -> None:
    env = make(data)
    env.reset(options={"task_id": "train/00001"})  # put a mug in coffeemachine
    for command in ("go to countertop 1", "take mug 1 from countertop 1", "go to cabinet 1"):
        env.step(command)
    env.step("open cabinet 1")
    moved = [a for a in env.unwrapped.admissible_actions() if a.startswith(("move", "put"))]
    assert moved == ["move mug 1 to cabinet 1"]
    observation, reward, terminated, _, info = env.step(moved[0])
    assert (reward, terminated, info["success"]) == (0.0, False, False)
    assert observation == "You move the mug 1 to the cabinet 1."
    # a cold apple where a hot one is asked for: the goal's isHot fails
    env.reset(options={"task_id": "train/00002"})  # put a hot apple in countertop
    for command in ("go to fridge 1", "open fridge 1", "take apple 1 from fridge 1"):
        env.step(command)
    env.step("go to countertop 1")
    _, reward, terminated, _, info = env.step("move apple 1 to countertop 1")
    assert (reward, terminated, info["success"]) == (0.0, False, False)


def test_actions_that_are_not_admissible_change_nothing(data: Path, planner: None) -> None:
    env = make(data)
    env.reset(options={"task_id": "train/00001"})
    before = env.unwrapped.admissible_actions()
    for action in (
        "take mug 1 from countertop 1",  # not there yet
        "go to countertop 1; take mug 1 from countertop 1",
        "x" * 5_000,
        "",
        "go to countertop 1\nquit",
        "go to countertop 99",
    ):
        observation, reward, terminated, _, info = env.step(action)
        assert observation == "Nothing happens."
        assert info["invalid_action"] and reward == 0.0 and not terminated
        assert env.unwrapped.admissible_actions() == before
    observation, *_ = env.step("  Go To  CounterTop 1. ")  # case, spacing, punctuation
    assert observation.startswith("You arrive at countertop 1.")


@pytest.mark.slow
def test_conformance_on_alfworld_games(data: Path, planner: None) -> None:
    from llmgym import testing

    rates = testing.check_conformance(lambda: make(data), oracle_episodes=4, hostile_count=100)
    assert rates["oracle_success_rate"] == 1.0


def test_older_games_arrival_is_shown_as_agentgym_shows_it() -> None:
    shown = alfworld._agentgym_observation("You arrive at loc 12. On the desk 1, you see a cd 1.")
    assert shown == "On the desk 1, you see a cd 1."
    assert alfworld._agentgym_observation("  ") == "Nothing happens."
