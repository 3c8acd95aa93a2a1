"""Runs of an agent over several environments, and the results file they write.

An :class:`EvalPlan` names what a run plays (environment ids, a suite, an AgentGym task file)
and the settings its environments share; :func:`run_plan` plays it, resuming from a trajectory
file where asked, and returns an :class:`EvalRun`; :func:`write_results` writes that run as a
results file, the file ``llmgym eval --json`` writes and ``llmgym view`` and ``llmgym report``
read::

    from llmgym.agents import OracleAgent
    from llmgym.runner import EvalPlan, run_plan, write_results

    plan = EvalPlan(["llmgym/Wordle-v0", "llmgym/Maze-v0"], episodes=5)
    run = run_plan(plan, OracleAgent(), trajectories="runs.jsonl")
    write_results("results.json", run)

:func:`estimate_plan` sizes a plan without contacting a model (``llmgym eval --dry-run``).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from llmgym import __version__
from llmgym.agents.base import Agent
from llmgym.envs import get_entry
from llmgym.originals import get_source, original_config
from llmgym.runner.evaluation import (
    EvalResult,
    RunEstimate,
    estimate_run,
    evaluate,
    overall_score,
)
from llmgym.runner.rollout import EnvSource, choose_tasks
from llmgym.runner.trajectories import Trajectory, append_trajectory, finished_episodes
from llmgym.runner.workers import check_count
from llmgym.suites import load_suite, suite_version

__all__ = ["EvalPlan", "EvalRun", "estimate_plan", "run_plan", "write_results"]

PlannedEnv = tuple[str, tuple[str, ...] | None]
"""An environment of a plan: its id and its task ids (``None``: tasks drawn from the split)."""


@dataclass(frozen=True)
class EvalPlan:
    """What a run evaluates, and the settings its environments share (those a results file
    records).

    The environments, in order: ``env_ids`` (each plays ``task_ids``, or ``episodes`` tasks
    drawn from ``split`` with ``seed``), the items of an AgentGym ``task_file``, and the
    ``suite``'s environments with its frozen task lists. A suite's environment whose pip extra
    is not installed is left out and listed in :attr:`skipped`, unless ``skip_uninstalled`` is
    false (the environments run elsewhere: on a server, in Ray actors). ``config`` overrides the
    config of every environment. ``data_dir`` plays an original dataset (:mod:`llmgym.originals`)
    from that directory: each environment's own source, and a task file's indices are the
    original's item indices.
    """

    env_ids: Sequence[str] = ()
    suite: str | None = None
    task_ids: Sequence[str] | None = None
    task_file: str | None = None
    split: str = "eval"
    episodes: int = 50
    seed: int = 0
    concurrency: int = 1
    history_window: int | None = None
    config: Mapping[str, Any] | None = None
    data_dir: str | None = None
    skip_uninstalled: bool = True
    environments: tuple[PlannedEnv, ...] = field(init=False)
    """What the run plays, in order."""
    skipped: tuple[dict[str, str], ...] = field(init=False)
    """The suite's environments left out: ``{"env_id", "reason", "install"}`` (the pip
    command that adds it)."""

    def __post_init__(self) -> None:
        if isinstance(self.env_ids, str):
            raise TypeError(f"env_ids is a list of ids, not one id: [{self.env_ids!r}]")
        check_count("episodes", self.episodes)
        check_count("concurrency", self.concurrency)
        if self.history_window is not None:
            check_count("history_window", self.history_window, least=0)
        task_ids = tuple(self.task_ids) if self.task_ids is not None else None
        planned: list[PlannedEnv] = [(env_id, task_ids) for env_id in self.env_ids]
        if self.task_file:
            from llmgym.integrations.agentgym import read_task_file

            read = read_task_file(self.task_file, data_dir=self.data_dir)
            planned += [(env_id, tuple(ids)) for env_id, ids in read]
        skipped = []
        for env_id, ids in load_suite(self.suite).items() if self.suite else ():
            entry = get_entry(env_id)
            if entry.available or not self.skip_uninstalled:
                planned.append((env_id, tuple(ids)))
            else:
                reason = f"the [{entry.extra}] extra is not installed"
                skipped.append(
                    {"env_id": entry.id, "reason": reason, "install": entry.install_hint}
                )
        object.__setattr__(self, "environments", tuple(planned))
        object.__setattr__(self, "skipped", tuple(skipped))
        if self.data_dir is not None:
            for env_id, _ in planned:
                self.make_kwargs(env_id)  # each environment must have an original source

    def make_kwargs(self, env_id: str) -> dict[str, Any]:
        """The ``gymnasium.make`` keyword arguments of the plan's environment ``env_id``.

        Raises:
            ValueError: ``data_dir`` is given and ``env_id`` reads no original data.
        """
        config = dict(self.config or {})
        if self.data_dir is not None:
            config.update(original_config(env_id, self.data_dir))
            if self.task_file:  # AgentGym's item ids hold under the config its server plays
                config.update(get_source(config["source"]).agentgym_config)
        return {"config": config} if config else {}

    def settings(self) -> dict[str, Any]:
        """The plan's settings as a results file records them (``episodes`` is ``None`` where
        the tasks are fixed: a suite, task ids or a task file)."""
        fixed = bool(self.suite or self.task_ids or self.task_file)
        return {
            "split": self.split,
            "seed": self.seed,
            "episodes": None if fixed else self.episodes,
            "task_ids": list(self.task_ids) if self.task_ids is not None else None,
            "task_file": self.task_file,
            "history_window": self.history_window,
            "concurrency": self.concurrency,
            "config": dict(self.config) if self.config is not None else None,
            "data_dir": self.data_dir,
        }


@dataclass
class EvalRun:
    """An agent's run over the environments of a plan: what :func:`write_results` writes."""

    plan: EvalPlan
    agent: Agent
    results: list[EvalResult] = field(default_factory=list)
    """One per environment played, in the plan's order."""
    interrupted: bool = False
    """Ctrl-C ended the run: ``results`` hold the episodes that finished."""
    trajectories: Path | None = None
    """The trajectory file every episode was appended to, if any."""

    def score(self) -> dict[str, Any]:
        """The overall score (:func:`~llmgym.runner.evaluation.overall_score`): a suite score
        only when every environment of the suite ran and no episode was lost to a model
        server error."""
        suite = f"{self.plan.suite} v{suite_version()}" if self.plan.suite else None
        return overall_score(self.results, suite=suite, skipped=len(self.plan.skipped))


def _placed(
    plan: EvalPlan,
    env_source: Callable[[str], EnvSource] | None,
    make_kwargs: Callable[[str], Mapping[str, Any]] | None,
) -> Iterator[tuple[str, tuple[str, ...] | None, EnvSource, dict[str, Any]]]:
    """Each environment of ``plan`` with what plays it and its ``gymnasium.make`` arguments
    (made when its turn comes)."""
    for env_id, task_ids in plan.environments:
        source = env_source(env_id) if env_source is not None else env_id
        extra = make_kwargs(env_id) if make_kwargs is not None else {}
        yield env_id, task_ids, source, {**plan.make_kwargs(env_id), **extra}


def run_plan(
    plan: EvalPlan,
    agent: Agent,
    *,
    trajectories: str | os.PathLike[str] | None = None,
    resume: bool = False,
    record_frames: bool = False,
    progress: bool = True,
    stop_on_interrupt: bool = False,
    env_source: Callable[[str], EnvSource] | None = None,
    make_kwargs: Callable[[str], Mapping[str, Any]] | None = None,
    notify: Callable[[str], None] | None = None,
) -> EvalRun:
    """Evaluate ``agent`` on every environment of ``plan``, one after another, each as
    :func:`~llmgym.runner.evaluation.evaluate` does.

    Args:
        trajectories: A JSON-lines file every finished episode is appended to.
        resume: Take the episodes ``trajectories`` holds already (those that ended without an
            error) from there, and play only the others, each with the task and seed it has in
            the whole run: the results are those of one whole run.
        record_frames: Also record each step's picture beside ``trajectories``.
        progress: Show a progress bar per environment.
        stop_on_interrupt: On Ctrl-C, end the run and return the episodes that finished
            (``interrupted=True``) instead of raising ``KeyboardInterrupt``.
        env_source: What plays an environment id: a factory of environments that live
            elsewhere (:func:`~llmgym.serving.client.remote_env_factory`,
            :func:`~llmgym.serving.ray_actors.ray_env_factory`), or the id (made here, the
            default).
        make_kwargs: More ``gymnasium.make`` keyword arguments for an environment id, beside
            ``plan.config`` (a multi-agent game's ``opponent``).
        notify: Called with a line for the person running the plan: how many episodes of an
            environment a resumed run takes from ``trajectories``.
    """
    if resume and trajectories is None:
        raise ValueError("resume=True continues the run recorded in a trajectory file; name it")
    path = Path(trajectories) if trajectories is not None else None
    done = finished_episodes(path) if path is not None and resume else {}
    run = EvalRun(plan, agent, trajectories=path)
    for env_id, task_ids, source, kwargs in _placed(plan, env_source, make_kwargs):
        finished: list[Trajectory] = []

        # rollout calls this in run_concurrently's finish, which Ctrl-C does not cut short:
        # the results (of `finished`) and the trajectory file hold the same episodes
        def keep(trajectory: Trajectory, finished: list[Trajectory] = finished) -> None:
            if path is not None:
                append_trajectory(path, trajectory)
            finished.append(trajectory)

        options: dict[str, Any] = {
            "split": plan.split,
            "seed": plan.seed,
            "concurrency": plan.concurrency,
            "progress": progress,
            "on_trajectory": keep,
            "make_kwargs": kwargs,
            "history_window": plan.history_window,
            "record_frames": record_frames,
        }
        try:
            if resume:
                result = _resume(run, env_id, task_ids, source, options, done, finished, notify)
            else:
                episodes = None if task_ids is not None else plan.episodes
                result = evaluate(source, agent, episodes=episodes, task_ids=task_ids, **options)
        except KeyboardInterrupt:
            if not stop_on_interrupt:
                raise
            if finished:
                partial = EvalResult(env_id, agent.name, split=plan.split, trajectories=finished)
                run.results.append(partial)
            run.interrupted = True
            return run
        run.results.append(result)
    return run


def _resume(
    run: EvalRun,
    env_id: str,
    task_ids: Sequence[str] | None,
    source: EnvSource,
    options: dict[str, Any],
    done: Mapping[tuple[str, str, str, int | None], Trajectory],
    finished: list[Trajectory],
    notify: Callable[[str], None] | None,
) -> EvalResult:
    """One environment of a resumed run: the episodes ``done`` holds are taken from there (and
    put in ``finished``, the episodes a Ctrl-C keeps), and only the others are played, in runs of
    consecutive episodes, each with the task and seed it has in the whole run."""
    plan, agent = run.plan, run.agent
    if task_ids is None:
        task_ids = choose_tasks(
            source, plan.split, plan.episodes, plan.seed, make_kwargs=plan.make_kwargs(env_id)
        )
    keys = [(env_id, agent.name, task, plan.seed + i) for i, task in enumerate(task_ids)]
    played = {i: done[key] for i, key in enumerate(keys) if key in done}
    finished.extend(played.values())
    if played and notify is not None:
        notify(
            f"{env_id}: {len(played)} of {len(keys)} episodes already in {run.trajectories}, "
            "not played again"
        )
    for start, stop in _runs([i for i in range(len(keys)) if i not in played]):
        result = evaluate(
            source, agent, task_ids=task_ids[start:stop], **{**options, "seed": plan.seed + start}
        )
        played.update(zip(range(start, stop), result.trajectories, strict=True))
    trajectories = [played[i] for i in range(len(keys))]
    return EvalResult(env_id, agent.name, split=plan.split, trajectories=trajectories)


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """``[(start, stop)]`` of the runs of consecutive numbers in the sorted ``indices``."""
    runs: list[tuple[int, int]] = []
    for index in indices:
        if runs and runs[-1][1] == index:
            runs[-1] = (runs[-1][0], index + 1)
        else:
            runs.append((index, index + 1))
    return runs


def estimate_plan(
    plan: EvalPlan,
    *,
    react: bool = True,
    env_source: Callable[[str], EnvSource] | None = None,
    make_kwargs: Callable[[str], Mapping[str, Any]] | None = None,
) -> list[RunEstimate]:
    """What :func:`run_plan` would send for each environment of ``plan``, estimated without
    contacting a model (see :func:`~llmgym.runner.evaluation.estimate_run`); ``react``: the
    agent's prompting. ``env_source`` and ``make_kwargs`` as for :func:`run_plan`."""
    return [
        estimate_run(
            source,
            react=react,
            split=plan.split,
            episodes=None if task_ids is not None else plan.episodes,
            task_ids=task_ids,
            seed=plan.seed,
            make_kwargs=kwargs,
        )
        for _, task_ids, source, kwargs in _placed(plan, env_source, make_kwargs)
    ]


def write_results(path: str | os.PathLike[str], run: EvalRun) -> Path:
    """Write ``run`` as a results file: the file ``llmgym eval --json`` writes, and ``llmgym
    view`` and ``llmgym report`` read. Folders on the way are made.

    The file is one JSON object: ``llmgym_version``; ``date`` (UTC, ISO 8601); ``git_commit``
    (of the llmgym checkout running, ``-dirty`` with local changes; ``None`` for an installed
    copy); ``suite`` and ``suite_version``; ``settings``, what a paper reports (the agent's
    :meth:`~llmgym.agents.Agent.settings` and the plan's :meth:`EvalPlan.settings`); ``react``;
    ``trajectories`` (the trajectory file, relative to the results file's folder, so that the
    two can move together); ``interrupted``; ``skipped`` (:attr:`EvalPlan.skipped`); ``score``
    (:meth:`EvalRun.score`); and ``results``, per environment the summary and one record per
    episode (:meth:`~llmgym.runner.evaluation.EvalResult.to_dict`).

    Returns:
        ``path``, as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    plan = run.plan
    record = {
        "llmgym_version": __version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "suite": plan.suite,
        "suite_version": suite_version() if plan.suite else None,
        "settings": {**run.agent.settings(), **plan.settings()},
        "react": run.agent.react,
        "trajectories": _relative_to(run.trajectories, path.parent) if run.trajectories else None,
        "interrupted": run.interrupted,
        "skipped": list(plan.skipped),
        "score": run.score(),
        "results": [result.to_dict() for result in run.results],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def _relative_to(path: Path, folder: Path) -> str:
    """``path`` as seen from ``folder``, or absolute where no relative path leads there
    (another drive)."""
    try:
        return os.path.relpath(path, folder)
    except ValueError:
        return os.path.abspath(path)


def _git_commit() -> str | None:
    """The commit of the llmgym checkout running (``-dirty`` with local changes), or ``None``
    for an installed copy or without git."""
    package = Path(__file__).resolve().parents[1]
    if "site-packages" in package.parts:
        return None
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=package, capture_output=True, text=True, timeout=5
        )
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=package, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode:
        return None
    return head.stdout.strip() + ("-dirty" if dirty.returncode else "")
