"""SciWorld rules: tasks and splits, scoring, ambiguity prompts, the Java process's life."""

from __future__ import annotations

import functools

import gymnasium as gym
import pytest

from tests.extras import need

need("scienceworld")

from llmgym import ConfigError
from llmgym.envs.sciworld import (
    SIMPLIFICATIONS,
    TASK_NAMES,
    SciWorldConfig,
    SciWorldEnv,
    _gold_cache,
    _sorted_listings,
    variation_table,
)
from llmgym.testing import check_api, oracle_policy, run_episode


def test_task_ids_interleave_tasks_and_splits_share_no_variation() -> None:
    env = SciWorldEnv()
    assert len(TASK_NAMES) == 30
    assert len(env.task_ids("train")) == 3592 and len(env.task_ids("eval")) == 1819
    for row in variation_table()["tasks"]:
        assert not set(row["train"]) & set(row["test"])
        assert not set(row["train"]) & set(row["dev"])
    only_boil = SciWorldConfig(task="boil")
    assert len(env.task_ids("eval", only_boil)) == 9
    assert len(env.task_ids("eval", SciWorldConfig(task="boil", eval_variations="dev"))) == 7


def test_config_checks() -> None:
    with pytest.raises(ConfigError, match="unknown simplification 'fly'"):
        SciWorldConfig(simplifications="openDoors,fly")
    with pytest.raises(ConfigError, match="'easy' alone"):
        SciWorldConfig(simplifications="easy,openDoors")
    for repeated in ("openDoors,openDoors", "teleportAction," * 30, "easy,easy"):
        with pytest.raises(ConfigError, match="is given twice; allowed: each") as error:
            SciWorldConfig(simplifications=repeated)
        assert error.value.field == "SciWorldConfig.simplifications"
    with pytest.raises(ConfigError) as error:
        SciWorldConfig(task="bake-a-cake")
    assert error.value.field == "SciWorldConfig.task"
    config = SciWorldConfig(simplifications="openDoors,noElectricalAction")
    assert config.simplifications_for("boil") == "openDoors,noElectricalAction"
    assert config.simplifications_for("power-component") == "openDoors"


def test_gold_cache_names_stay_short_and_apart() -> None:
    names = {
        _gold_cache("mendelian-genetics-unknown-plant", 1234, given).name
        for given in ("", "easy", ",".join(SIMPLIFICATIONS), "openDoors" * 1000)
    }
    assert len(names) == 4 and max(len(name) for name in names) < 80


def test_no_java_process_before_the_first_reset() -> None:
    env = gym.make("llmgym/SciWorld-v0").unwrapped
    env.task_ids("train")
    assert env._engine is None
    env.close()


@pytest.fixture(scope="module")
def env() -> SciWorldEnv:
    env = gym.make("llmgym/SciWorld-v0").unwrapped
    yield env
    env.close()


@pytest.mark.slow
def test_variation_table_matches_the_engine(env: SciWorldEnv) -> None:
    env.reset(options={"task_id": "train/00000"})
    engine = env._engine
    assert sorted(engine.get_task_names()) == sorted(TASK_NAMES)
    for row in variation_table()["tasks"][::7]:
        engine.load(row["name"], 0, "")
        assert sorted(engine.get_variations_train()) == row["train"]
        assert sorted(engine.get_variations_test()) == row["test"]


@pytest.mark.slow
def test_rewards_sum_to_the_final_score_and_the_engine_is_reused(env: SciWorldEnv) -> None:
    config = {"task": "find-living-thing"}
    observation, info = env.reset(options={"task_id": "eval/00000", "config": config})
    engine = env._engine
    assert info["instruction"] in observation and "This room is called" in observation
    total = 0.0
    for _ in range(50):
        observation, reward, terminated, truncated, info = env.step(env.oracle_action())
        total += reward
        assert 0 <= info["score"] <= 100 and total == pytest.approx(info["score"] / 100)
        if terminated or truncated:
            break
    assert info["success"] and info["score"] == 100 and total == pytest.approx(1.0)
    env.reset(options={"task_id": "eval/00001", "config": config})
    assert env._engine is engine, "the Java process was restarted"


@pytest.mark.slow
def test_ambiguous_requests_wait_for_a_number(env: SciWorldEnv) -> None:
    env.reset(options={"task_id": "train/00000", "config": {"task": "grow-plant"}})
    for _ in range(40):
        action = env.oracle_action()
        observation, _, _, _, info = env.step(action)
        if observation.startswith("Ambiguous request"):
            break
    else:
        pytest.fail("the gold path met no ambiguity")
    for wrong in ("look around", "7" * 3, ""):
        observation, _, _, _, info = env.step(wrong)
        assert info["invalid_action"] and "number" in observation
    _, _, _, _, info = env.step(env.oracle_action())
    assert not info["invalid_action"]


@pytest.mark.slow
def test_invalid_commands_and_a_failed_task(env: SciWorldEnv) -> None:
    env.reset(options={"task_id": "train/00000", "config": {"task": "find-animal"}})
    for action in ("reset task", "xyzzy", "look at unicorn", "", "café au lait"):
        observation, _, terminated, _, info = env.step(action)
        assert info["invalid_action"] and not terminated and observation
    _, reward, terminated, _, info = env.step("focus on air")
    assert terminated and info["failed"] and not info["success"] and reward == 0


@pytest.mark.slow
def test_close_stops_the_java_process() -> None:
    env = gym.make("llmgym/SciWorld-v0", task="lifespan-longest-lived").unwrapped
    env.reset(options={"task_id": "eval/00000"})
    process = env._engine._gateway.java_process
    assert process.poll() is None
    env.close()
    process.wait(timeout=30)
    assert env._engine is None


def test_room_listings_are_sorted_with_their_nested_lines() -> None:
    text = "This room is called the kitchen. In it, you see:\n\tthe stove\n\ta cup\n\t\tof tea\n"
    text += "\tan apple\nYou also see:\n\tA door to the hallway"
    assert _sorted_listings(text) == (
        "This room is called the kitchen. In it, you see:\n\ta cup\n\t\tof tea\n\tan apple\n"
        "\tthe stove\nYou also see:\n\tA door to the hallway"
    )


@pytest.mark.slow
def test_the_same_actions_read_the_same_despite_hash_ordered_rooms(env: SciWorldEnv) -> None:
    # melt, test variation 21: the art studio lists its paint cups in a different order per run
    config = {"task": "melt"}
    runs = []
    for _ in range(2):
        env.reset(options={"task_id": "eval/00000", "config": config})
        observations = []
        for _ in range(40):
            observation, *_, terminated, truncated, _ = env.step(env.oracle_action())
            observations.append(observation)
            if terminated or truncated:
                break
        runs.append(observations)
    assert runs[0] == runs[1]


def test_ambiguous_options_are_shown_in_a_stable_order() -> None:
    from llmgym.envs.sciworld import _ordered_choices

    header = (
        "Ambiguous request: Please enter the number for the action you intended "
        "(or blank to cancel):"
    )
    first = f"{header}\n0:\tgo orange (in inventory, in agent)\n1:\tgo orange (in bowl, in counter)"
    second = (
        f"{header}\n0:\tgo orange (in bowl, in counter)\n1:\tgo orange (in inventory, in agent)"
    )
    (text_a, engine_a), (text_b, engine_b) = _ordered_choices(first), _ordered_choices(second)
    assert text_a == text_b and text_a.splitlines()[1] == "0:\tgo orange (in bowl, in counter)"
    assert engine_a == [1, 0] and engine_b == [0, 1]  # shown option 0 is the bowl's orange in both


def test_score_scale_is_validated() -> None:
    with pytest.raises(ConfigError, match="SciWorldConfig.score_scale.*one of 1, 100"):
        SciWorldConfig(score_scale=10)
    with pytest.raises(ConfigError, match="SciWorldConfig.score_scale"):
        SciWorldConfig(score_scale=True)


@pytest.mark.slow
def test_score_scale_100_reports_points_and_the_default_does_not(env: SciWorldEnv) -> None:
    episodes = {}
    for scale in (1, 100):
        config = {"task": "find-living-thing", "score_scale": scale}
        env.reset(options={"task_id": "eval/00000", "config": config})
        rewards, scores = [], []
        for _ in range(50):
            _, reward, terminated, truncated, info = env.step(env.oracle_action())
            rewards.append(reward)
            scores.append(info["score"])
            if terminated or truncated:
                break
        assert info["success"]
        episodes[scale] = rewards, scores
    (unit, unit_scores), (points, point_scores) = episodes[1], episodes[100]
    assert point_scores == unit_scores and point_scores[-1] == 100
    assert sum(points) == pytest.approx(100.0) and sum(unit) == pytest.approx(1.0)
    assert points == [pytest.approx(100 * r) for r in unit] and max(points) > 1
    running = 0.0
    for reward, score in zip(points, point_scores, strict=True):
        running += reward
        assert running == pytest.approx(score)


@pytest.mark.slow
def test_score_scale_100_keeps_failure_at_zero(env: SciWorldEnv) -> None:
    config = {"task": "find-animal", "score_scale": 100}
    env.reset(options={"task_id": "train/00000", "config": config})
    for action in ("reset task", "xyzzy", ""):
        assert env.step(action)[4]["invalid_action"]
    _, reward, terminated, _, info = env.step("focus on air")
    assert terminated and info["failed"] and info["score"] == 0 and reward == 0


@pytest.mark.slow
def test_score_scale_100_scales_the_same_play() -> None:
    """``score_scale=100`` passes the API checks, and the oracle's play of a task is the same
    play with every reward 100 times the default's (``info["score"]`` is 0-100 under both;
    the conformance suite runs on the default scale, and a scale changes nothing else)."""
    make = functools.partial(gym.make, "llmgym/SciWorld-v0", score_scale=100)
    check_api(make)
    options = {"task_id": "eval/00001"}
    plain = run_episode(gym.make("llmgym/SciWorld-v0"), oracle_policy, seed=0, options=options)
    scaled = run_episode(make(), oracle_policy, seed=0, options=options)
    assert [step[:2] for step in scaled] == [step[:2] for step in plain]
    assert [step[2] for step in scaled] == pytest.approx([100 * step[2] for step in plain])
    assert scaled[-1][3] and scaled[-1][5]["score"] == plain[-1][5]["score"] > 0


@pytest.mark.slow
def test_the_oracle_plays_the_same_gold_path_whatever_the_process_did_before(
    tmp_path, monkeypatch
) -> None:
    """The engine orders a gold path by hashes that depend on the Java process's history: the
    oracle of freeze variation 21 once opened the kitchen's containers in another order (and
    went to another room) after its engine had played other tasks, and the disk cache then kept
    whichever path came first. Generated in a fresh process, the path is the same either way."""
    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(tmp_path / "after-other-tasks"))
    used = gym.make("llmgym/SciWorld-v0").unwrapped
    for task_id in ("eval/00000", "eval/00001", "train/00002", "eval/00002"):
        used.reset(seed=0, options={"task_id": task_id})
        for _ in range(3):
            used.step(used.oracle_action())
    after_other_tasks = used._gold_path()
    used.close()
    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(tmp_path / "first"))
    fresh = gym.make("llmgym/SciWorld-v0").unwrapped
    fresh.reset(seed=0, options={"task_id": "eval/00002"})
    assert fresh.instance_key() == "freeze variation 21"
    assert fresh._gold_path() == after_other_tasks
    fresh.close()
