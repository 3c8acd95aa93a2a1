"""The horizon curriculum: staged turn limits, truncation marks, the schedule in trajectories."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import pytest

import llmgym  # noqa: F401
from llmgym.runner.trajectories import Trajectory, TrajectoryBuilder
from llmgym.wrappers import HorizonCurriculum, HorizonLimit


def test_schedule_by_step() -> None:
    curriculum = HorizonCurriculum([(0, 5), (100, 10), (300, 20)])
    assert [curriculum.horizon(p) for p in (0, 99, 100, 299, 300, 10**6)] == [5, 5, 10, 10, 20, 20]
    curriculum.set_position(150)
    assert curriculum.horizon() == 10
    assert curriculum.start_episode() == 10 and curriculum.position == 150


def test_a_copy_counts_on_its_own_and_pickling_is_refused() -> None:
    curriculum = HorizonCurriculum([(0, 1), (2, 3)], unit="episode")
    curriculum.start_episode()
    twin = copy.deepcopy(curriculum)
    expected = {"stages": [[0, 1], [2, 3]], "unit": "episode", "position": 1}
    assert twin.describe() == curriculum.describe() == expected
    assert twin.start_episode() == 1 and twin.start_episode() == 3
    assert curriculum.position == 1
    with pytest.raises(TypeError, match="pickle"):  # a copy elsewhere would not follow
        pickle.dumps(curriculum)


def test_schedule_by_episode_is_counted_by_resets() -> None:
    curriculum = HorizonCurriculum([(0, 1), (2, 3)], unit="episode")
    env = HorizonLimit(gym.make("llmgym/Wordle-v0"), curriculum)
    limits = []
    for _ in range(4):
        _, info = env.reset(options={"task_id": "train/00000"})
        limits.append(info["horizon"]["limit"])
    assert limits == [1, 1, 3, 3]
    assert curriculum.position == 4


@pytest.mark.parametrize(
    "stages, unit",
    [
        ([], "step"),
        ([(1, 5)], "step"),
        ([(0, 5), (0, 6)], "step"),
        ([(0, 0)], "step"),
        ([(0, 5)], "epoch"),
    ],
)
def test_bad_schedules_are_refused(stages: list, unit: str) -> None:
    with pytest.raises(ValueError):
        HorizonCurriculum(stages, unit=unit)  # type: ignore[arg-type]


def test_truncates_at_the_horizon_and_says_so() -> None:
    env = HorizonLimit(gym.make("llmgym/Wordle-v0"), HorizonCurriculum([(0, 2)]))
    _, info = env.reset(options={"task_id": "train/00000"})
    assert info["horizon"] == {"limit": 2, "stages": [[0, 2]], "unit": "step", "position": 0}
    _, _, terminated, truncated, info = env.step("crane")
    assert not (terminated or truncated) and "truncated_by" not in info
    _, _, terminated, truncated, info = env.step("slate")
    assert truncated and not terminated and info["truncated_by"] == "horizon"


def test_the_environments_own_end_passes_through() -> None:
    env = HorizonLimit(gym.make("llmgym/Wordle-v0"), HorizonCurriculum([(0, 50)]))
    env.reset(options={"task_id": "train/00000"})
    terminated = False
    while not terminated:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    assert reward == 1.0 and not truncated and "truncated_by" not in info


def test_the_schedule_is_in_the_trajectory_metadata() -> None:
    env = HorizonLimit(gym.make("llmgym/Wordle-v0"), HorizonCurriculum([(0, 1), (10, 4)]))
    builder = TrajectoryBuilder("llmgym/Wordle-v0")
    observation, info = env.reset(options={"task_id": "train/00000"})
    builder.start(observation, info, seed=None, config={})
    result = env.step("crane")
    trajectory = builder.add("crane", *result)
    assert trajectory is not None and trajectory.truncated
    assert trajectory.metadata["horizon"]["limit"] == 1
    assert trajectory.metadata["horizon"]["stages"] == [[0, 1], [10, 4]]
    assert Trajectory.from_dict(trajectory.to_dict()) == trajectory


def test_old_trajectory_records_still_load() -> None:
    record = Trajectory("llmgym/Wordle-v0", "train/00000", "train").to_dict()
    del record["metadata"]
    assert Trajectory.from_dict(record).metadata == {}
