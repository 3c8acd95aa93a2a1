"""Rollouts: many episodes at once, since waiting for the LLM is what takes the time.

:func:`rollout` plays a list of tasks with a pool of workers, each owning one environment and one
fork of the agent, so ``concurrency`` requests are in flight together. :func:`rollout_vector`
drives a gymnasium vector environment (sync or async) with batched actions and handles each
autoreset mode. Both return :class:`~llmgym.runner.trajectories.Trajectory` objects.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from llmgym.agents.base import Agent
from llmgym.core.env import unwrapped_text_env
from llmgym.core.tasks import TaskRng
from llmgym.errors import ServerUnavailableError
from llmgym.runner.frames import frame_source
from llmgym.runner.trajectories import Trajectory, TrajectoryBuilder
from llmgym.runner.workers import PerThread, SuccessBar, check_count, run_concurrently
from llmgym.wrappers import ChatHistory, make_chat_env

__all__ = [
    "SERVER_ERROR",
    "EpisodeSpec",
    "choose_tasks",
    "episode_specs",
    "is_server_error",
    "play_episode",
    "rollout",
    "rollout_vector",
    "sample_task_ids",
]

logger = logging.getLogger(__name__)

EnvSource = str | Callable[[], gym.Env]

SERVER_ERROR = "model server error"
"""How ``Trajectory.error`` begins when the agent's model server failed the episode."""


def is_server_error(trajectory: Trajectory) -> bool:
    """Whether the episode ended because a model request failed for good (not the model's
    doing, unlike a format error)."""
    return (trajectory.error or "").startswith(SERVER_ERROR)


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to play: a task id and the seed of its reset."""

    task_id: str
    seed: int


def choose_tasks(
    env: gym.Env | EnvSource,
    split: str,
    episodes: int,
    seed: int,
    *,
    make_kwargs: Mapping[str, Any] | None = None,
) -> list[str]:
    """``episodes`` task ids of ``split``: a seeded sample without replacement (cycling through
    the whole split first when more episodes than tasks are asked for). ``env`` is an
    environment, or what a rollout takes (an id, made with ``make_kwargs``, or a factory): an
    instance is made to list the tasks, and closed."""
    check_count("episodes", episodes)
    if not isinstance(env, gym.Env):
        probe = env() if callable(env) else gym.make(env, **(make_kwargs or {}))
        try:
            return choose_tasks(probe, split, episodes, seed)
        finally:
            probe.close()
    ids = unwrapped_text_env(env).task_ids(split)
    return sample_task_ids(ids, episodes, TaskRng("evaluation", split, seed))


def sample_task_ids(ids: Sequence[str], count: int, rng: TaskRng) -> list[str]:
    """``count`` of ``ids`` drawn with ``rng`` without replacement, cycling through all of
    ``ids`` (in a new order each time) when more are asked for than there are."""
    chosen: list[str] = []
    while len(chosen) < count:
        take = min(len(ids), count - len(chosen))
        chosen += [ids[i] for i in rng.sample(range(len(ids)), take)]
    return chosen


def _env_id(env: gym.Env) -> str:
    return env.spec.id if env.spec is not None else type(env.unwrapped).__name__


def play_episode(
    env: gym.Env,
    agent: Agent,
    *,
    task_id: str,
    seed: int,
    env_id: str | None = None,
    record_frames: bool = False,
) -> Trajectory:
    """Play one episode of ``task_id`` with ``agent``. An exception inside the episode is recorded
    in ``Trajectory.error`` (with ``success=False``) instead of propagating; so is a model request
    that failed for good (``agent.errors``), which ends the episode as a :data:`SERVER_ERROR`.
    :class:`~llmgym.errors.ServerUnavailableError` (the model's server, or a remote environment's,
    is gone) propagates: the run should stop. With
    ``record_frames``, the environment's pictures are kept in ``Trajectory.frames`` (see
    :mod:`llmgym.runner.frames`)."""
    frames = frame_source(env) if record_frames else None
    builder = TrajectoryBuilder(env_id or _env_id(env), agent.name, frames)
    try:
        observation, info = env.reset(seed=seed, options={"task_id": task_id})
        task = getattr(env.unwrapped, "task", None)
        builder.start(observation, info, seed=seed, config=task.config.to_dict() if task else {})
        agent.reset(env, seed=seed)
        while True:
            reply = agent.act(observation, info)
            if agent.errors:
                return _unfinished(
                    builder, agent, task_id, seed, f"{SERVER_ERROR}: {agent.last_error}"
                )
            observation, reward, terminated, truncated, info = env.step(reply)
            finished = builder.add(reply, observation, float(reward), terminated, truncated, info)
            if finished is not None:
                finished.usage = agent.usage.to_dict()
                finished.skills = sorted(getattr(env.unwrapped, "skills_achieved", frozenset)())
                return finished
    except ServerUnavailableError:
        raise
    except Exception as error:  # one broken episode must not lose a long evaluation
        logger.exception("episode %s (seed %s) failed", task_id, seed)
        return _unfinished(builder, agent, task_id, seed, f"{type(error).__name__}: {error}")


def _unfinished(
    builder: TrajectoryBuilder, agent: Agent, task_id: str, seed: int, error: str
) -> Trajectory:
    """The trajectory of an episode cut short by ``error`` (its turns so far, if any)."""
    trajectory = builder.trajectory or Trajectory(
        env_id=builder.env_id, task_id=task_id, split="", seed=seed
    )
    trajectory.agent = agent.name
    trajectory.error = error
    trajectory.usage = agent.usage.to_dict()
    return trajectory


def _factory(
    env: EnvSource, agent: Agent, make_kwargs: Mapping[str, Any], history_window: int | None
) -> Callable[[], gym.Env]:
    if history_window is not None and history_window < 0:
        raise ValueError(f"history_window={history_window} must be >= 0 or None")
    if isinstance(env, str):
        kwargs = dict(make_kwargs)
        if history_window is not None:
            kwargs["history_window"] = history_window
        return lambda: make_chat_env(env, react=agent.react, **kwargs)
    if history_window is None:
        return env
    make = env

    def windowed() -> gym.Env:
        made = make()
        if not isinstance(made, ChatHistory):
            raise TypeError("history_window needs a factory of ChatHistory-wrapped environments")
        made.window = history_window
        return made

    return windowed


def rollout(
    env: EnvSource,
    agent: Agent,
    *,
    split: str = "eval",
    episodes: int | None = None,
    task_ids: Sequence[str] | None = None,
    seed: int = 0,
    concurrency: int = 1,
    progress: bool = True,
    desc: str | None = None,
    on_trajectory: Callable[[Trajectory], None] | None = None,
    make_kwargs: Mapping[str, Any] | None = None,
    history_window: int | None = None,
    record_frames: bool = False,
) -> list[Trajectory]:
    """Play many episodes, ``concurrency`` at a time.

    Args:
        env: An environment id (made with :func:`~llmgym.wrappers.make_chat_env`, i.e. ReAct and
            chat history, matching ``agent.react``) or a zero-argument factory returning a
            (wrapped) environment. Each worker makes its own.
        agent: The agent; each worker plays with its own :meth:`~llmgym.agents.Agent.fork`.
        split: The split tasks are drawn from (when ``task_ids`` is not given).
        episodes: How many episodes (default: one per task id, or 50).
        task_ids: Play exactly these tasks (cycled when ``episodes`` is larger).
        seed: Episode ``i`` is reset with ``seed + i``; tasks are drawn with it too.
        concurrency: Episodes in flight at once (worker threads).
        progress: Show a progress bar.
        on_trajectory: Called in the main thread with each finished trajectory (e.g. to save it).
        make_kwargs: Keyword arguments for ``gymnasium.make`` when ``env`` is an id.
        history_window: Send the model only the last ``history_window`` exchanges after the
            system prompt and the task (:class:`~llmgym.wrappers.ChatHistory`'s ``window``;
            ``None``: the whole conversation).
        record_frames: Keep each episode's pictures in ``Trajectory.frames`` (see
            :mod:`llmgym.runner.frames`); :func:`~llmgym.runner.trajectories.append_trajectory`
            writes them beside the trajectory file.

    Returns:
        The trajectories, in task order (the same whatever ``concurrency`` is).
    """
    check_count("concurrency", concurrency)
    if episodes is not None:
        check_count("episodes", episodes)
    make = _factory(env, agent, make_kwargs or {}, history_window)
    probe = make()
    env_id = env if isinstance(env, str) else _env_id(probe)
    specs = episode_specs(probe, split, episodes, task_ids, seed)
    results: list[Trajectory | None] = [None] * len(specs)
    bar = SuccessBar(len(specs), desc or f"{env_id} [{agent.name}]", enabled=progress)

    def finish(index: int, trajectory: Trajectory) -> None:
        results[index] = trajectory
        bar.add(trajectory.success)
        if on_trajectory is not None:
            on_trajectory(trajectory)

    envs = PerThread(make, first=probe)
    agents = PerThread(agent.fork)

    def play(index: int) -> Trajectory:
        spec = specs[index]
        return play_episode(
            envs.get(),
            agents.get(),
            task_id=spec.task_id,
            seed=spec.seed,
            env_id=env_id,
            record_frames=record_frames,
        )

    try:
        run_concurrently(len(specs), play, finish, concurrency=concurrency, name="llmgym-rollout")
    finally:
        bar.close()
        for made in envs.made:
            made.close()
    return [t for t in results if t is not None]


def episode_specs(
    env: gym.Env, split: str, episodes: int | None, task_ids: Sequence[str] | None, seed: int
) -> list[EpisodeSpec]:
    """The episodes a rollout plays: the given task ids (cycled to ``episodes``), or
    ``episodes`` (default 50) tasks drawn from ``split``; episode ``i`` is seeded ``seed + i``."""
    if task_ids is None:
        tasks = choose_tasks(env, split, episodes if episodes is not None else 50, seed)
    else:
        count = episodes if episodes is not None else len(task_ids)
        tasks = [task_ids[i % len(task_ids)] for i in range(count)]
    return [EpisodeSpec(task_id, seed + i) for i, task_id in enumerate(tasks)]


def _split_info(info: Mapping[str, Any], count: int) -> list[dict[str, Any]]:
    """Per-environment ``info`` dicts from a vector environment's batched ``info``."""
    out: list[dict[str, Any]] = [{} for _ in range(count)]
    for key, value in info.items():
        if key.startswith("_"):
            continue
        mask = info.get(f"_{key}", np.ones(count, dtype=bool))
        parts = _split_info(value, count) if isinstance(value, Mapping) else None
        for i in range(count):
            if mask[i]:
                out[i][key] = parts[i] if parts is not None else value[i]
    return out


def _replies(
    agent: Agent | Sequence[Agent],
    active: Sequence[int],
    observations: Sequence[Any],
    infos: Sequence[dict[str, Any]],
) -> list[str]:
    """The actions of a vector step: the ``active`` sub-environments' agents' replies (one
    batched call when ``agent`` is a single agent), ``""`` for the others (resetting)."""
    if isinstance(agent, Agent):
        answers = agent.act_batch([observations[i] for i in active], [infos[i] for i in active])
    else:
        answers = [agent[i].act(observations[i], infos[i]) for i in active]
    replies = [""] * len(observations)
    for i, reply in zip(active, answers, strict=True):
        replies[i] = reply
    return replies


def rollout_vector(
    vec_env: VectorEnv,
    agent: Agent,
    *,
    episodes: int,
    seed: int | None = None,
    progress: bool = True,
) -> list[Trajectory]:
    """Play ``episodes`` episodes on a gymnasium vector environment with batched actions.

    Each sub-environment gets a fork of ``agent``, reset with ``env=None`` (agents read what
    they need from ``info``: the oracle needs :class:`~llmgym.wrappers.OracleHint` inside each
    sub-environment). An agent that overrides :meth:`~llmgym.agents.Agent.act_batch` is called
    once per step for all running episodes instead.

    Every autoreset mode is handled: with ``NEXT_STEP`` (gymnasium's default) the step after an
    episode's end is a reset whose action is ignored, and it is not recorded; with ``SAME_STEP``
    the last observation comes from ``info["final_obs"]``; with ``DISABLED`` finished
    sub-environments are reset with a mask.
    """
    count = vec_env.num_envs
    mode = vec_env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    env_id = vec_env.spec.id if vec_env.spec is not None else "vector"
    agents = [agent.fork() for _ in range(count)]
    builders = [TrajectoryBuilder(env_id, agent.name) for _ in range(count)]
    observations, info = vec_env.reset(seed=seed)
    infos = _split_info(info, count)
    episode_seed = [None if seed is None else seed + i for i in range(count)]
    for i in range(count):
        builders[i].start(observations[i], infos[i], seed=episode_seed[i], config={})
        agents[i].reset(None, seed=episode_seed[i])
    resetting = np.zeros(count, dtype=bool)
    batched = type(agent).act_batch is not Agent.act_batch  # one call for every episode
    finished: list[Trajectory] = []
    bar = SuccessBar(episodes, f"{env_id} [{agent.name}] x{count}", enabled=progress)
    try:
        while len(finished) < episodes:
            active = [i for i in range(count) if not resetting[i]]
            replies = _replies(agent if batched else agents, active, observations, infos)
            observations, rewards, terminations, truncations, info = vec_env.step(replies)
            infos = _split_info(info, count)
            done_mask = np.zeros(count, dtype=bool)
            for i in range(count):
                if resetting[i]:  # NEXT_STEP: this step was the reset; a new episode begins
                    resetting[i] = False
                    builders[i].start(observations[i], infos[i], seed=None, config={})
                    agents[i].reset(None)
                    continue
                last_observation, last_info = observations[i], infos[i]
                if mode == AutoresetMode.SAME_STEP and "final_obs" in infos[i]:
                    last_observation, last_info = infos[i]["final_obs"], infos[i]["final_info"]
                trajectory = builders[i].add(
                    replies[i],
                    last_observation,
                    float(rewards[i]),
                    bool(terminations[i]),
                    bool(truncations[i]),
                    last_info,
                )
                if trajectory is None:
                    continue
                trajectory.usage = agents[i].usage.to_dict()
                finished.append(trajectory)
                bar.add(trajectory.success)
                if mode == AutoresetMode.NEXT_STEP:
                    resetting[i] = True
                elif mode == AutoresetMode.SAME_STEP:
                    builders[i].start(observations[i], infos[i], seed=None, config={})
                    agents[i].reset(None)
                else:
                    done_mask[i] = True
            if done_mask.any():
                fresh, fresh_info = vec_env.reset(options={"reset_mask": done_mask})
                fresh_infos = _split_info(fresh_info, count)
                observations = list(observations)
                for i in map(int, np.flatnonzero(done_mask)):
                    observations[i], infos[i] = fresh[i], fresh_infos[i]
                    builders[i].start(fresh[i], fresh_infos[i], seed=None, config={})
                    agents[i].reset(None)
    finally:
        bar.close()
    return finished[:episodes]
