"""Environments in Ray actors, on a local Ray instance that this module starts and stops
(2 CPUs, small episodes): trajectories equal local ones, rollouts and evaluation run unchanged,
``llmgym eval --ray`` works, errors are those of the local environment (slow)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded

from tests.extras import need

ray = need("ray")

from llmgym import ConfigError
from llmgym.agents import OracleAgent, RandomAgent
from llmgym.cli import main
from llmgym.errors import RemoteEnvError, ServerUnavailableError, SessionLostError
from llmgym.runner.evaluation import evaluate
from llmgym.runner.rollout import rollout
from llmgym.serving import ray_actors
from llmgym.testing import HOSTILE_ACTIONS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    if ray.is_initialized():
        ray.shutdown()
    ray_actors.init(
        "local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="error"
    )
    yield
    ray.shutdown()


def _exact(value: object) -> object:
    if isinstance(value, np.ndarray):  # dtype, shape, every byte, and writable as locally
        return [value.dtype.str, value.shape, value.tobytes().hex(), value.flags.writeable]
    return repr(value)


def _normal(step: tuple) -> str:
    return json.dumps(step, sort_keys=True, default=_exact)


@pytest.mark.parametrize("env_id", ["llmgym/Wordle-v0", "llmgym/HeistPixels-v0"])
def test_ray_env_trajectory_equals_local(env_id: str) -> None:
    local = gym.make(env_id)
    remote = ray_actors.RayEnv(env_id)
    assert remote.spec.id == env_id
    assert remote.observation_space == local.observation_space
    assert remote.action_space == local.action_space
    rng = np.random.default_rng(0)
    expected = [_normal(local.reset(seed=4, options={"split": "eval"}))]
    played = [_normal(remote.reset(seed=4, options={"split": "eval"}))]
    for turn in range(8):
        if rng.random() < 0.3:
            action = HOSTILE_ACTIONS[turn]
        else:
            action = local.unwrapped.oracle_action()
            assert remote.unwrapped.oracle_action() == action
        step = local.step(action)
        expected.append(_normal(step))
        played.append(_normal(remote.step(action)))
        if step[2]:
            break
    assert played == expected
    remote.close()


def test_rollout_and_evaluate_run_unchanged_on_ray() -> None:
    make = ray_actors.ray_env_factory("llmgym/Maze-v0")
    on_ray = rollout(make, OracleAgent(), episodes=3, concurrency=2, progress=False)
    local = rollout("llmgym/Maze-v0", OracleAgent(), episodes=3, progress=False)

    def summary(trajectories):
        return [(t.env_id, t.task_id, t.success, [u.reply for u in t.turns]) for t in trajectories]

    assert summary(on_ray) == summary(local) and all(t.success for t in on_ray)
    random_result = evaluate(make, RandomAgent(seed=1), episodes=2, progress=False)
    assert random_result.env_id == "llmgym/Maze-v0" and random_result.episodes == 2


def test_errors_are_those_of_the_local_environment() -> None:
    with pytest.raises(ConfigError) as caught:
        ray_actors.RayEnv("llmgym/Maze-v0", width=1000)
    assert caught.value.field == "MazeConfig.width"
    env = ray_actors.RayEnv("llmgym/Wordle-v0")
    with pytest.raises(ResetNeeded):
        env.step("crane")
    with pytest.raises(ValueError, match="unknown key"):
        env.reset(options={"colour": "red"})
    env.close()
    with pytest.raises(SessionLostError):
        env.step("crane")


RAY_FAILURES = [
    (ray.exceptions.GetTimeoutError("slow"), ServerUnavailableError),
    (ray.exceptions.ActorUnavailableError("unreachable", None), ServerUnavailableError),
    (ray.exceptions.WorkerCrashedError(), ServerUnavailableError),
    (ray.exceptions.RaySystemError("the raylet is gone"), ServerUnavailableError),
    (ray.exceptions.ActorDiedError(), SessionLostError),
]


@pytest.mark.parametrize(
    ("raised", "expected"), RAY_FAILURES, ids=[type(r).__name__ for r, _ in RAY_FAILURES]
)
def test_ray_failures_are_llmgym_errors(monkeypatch, raised, expected) -> None:
    env = ray_actors.RayEnv("llmgym/Wordle-v0")
    env.reset(seed=0)

    def fail(*args: object, **kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(ray, "get", fail)
    with pytest.raises(expected) as caught:
        env.step("crane")
    assert isinstance(caught.value, RemoteEnvError) and caught.value.__cause__ is raised
    monkeypatch.undo()
    env.close()


def test_eval_command_with_ray(tmp_path, capsys) -> None:
    out = tmp_path / "results.json"
    code = main(
        [
            *("eval", "llmgym/Wordle-v0", "--ray", "auto", "--episodes", "2"),
            *("--concurrency", "2", "--quiet", "--json", str(out)),
        ]
    )
    assert code == 0, capsys.readouterr().err
    row = json.loads(out.read_text())["results"][0]
    assert row["env_id"] == "llmgym/Wordle-v0" and row["success_rate"] == 1.0
