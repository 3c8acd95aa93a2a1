"""The ``llmgym`` command line: list, play, eval, match, collect, envgen, convert, serve,
export, view, report, render and webarena."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import gymnasium as gym

import llmgym
from llmgym.agents import AGENT_NAMES, Agent, HumanAgent, make_agent
from llmgym.envs import all_entries, get_entry, load_entry
from llmgym.llm import ChatError
from llmgym.runner.evaluation import EvalResult, estimate_run, evaluate, overall_score
from llmgym.runner.rollout import EnvSource, choose_tasks, rollout
from llmgym.runner.trajectories import (
    BadLine,
    Trajectory,
    append_trajectory,
    convert_file,
    finished_episodes,
    read_trajectories,
)
from llmgym.serving.client import RemoteEnvError
from llmgym.suites import SUITE_NAMES, load_suite

__all__ = ["EXIT_INTERRUPTED", "format_table", "main"]

EXIT_INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT, as shells report it)."""


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain-text table with a header row; floats are shown with three decimals."""

    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    cells = [[cell(row.get(column, "")) for column in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def _resolve_id(env_id: str) -> str:
    """The id of an environment named on the command line: any spelling :func:`get_entry`
    accepts (``wordle``, ``Wordle-v0``), or a user environment's ``module:Class``."""
    return (load_entry(env_id) if ":" in env_id else get_entry(env_id)).id


def _cmd_list(args: argparse.Namespace) -> int:
    rows = [entry.as_dict() for entry in all_entries()]
    if args.json:
        print(json.dumps({"environments": rows}, indent=2))
        return 0
    for row in rows:
        row["steps"] = row["max_episode_steps"] or "-"
        row["extra"] = row["extra"] or "-"
        row["available"] = "yes" if row["available"] else "no"
    columns = ["id", "steps", "extra", "available"]
    used = len(format_table(rows, columns).splitlines()[0]) + 2
    room = max(20, shutil.get_terminal_size((100, 24)).columns - used)
    for row in rows:
        summary = row["summary"]
        row["summary"] = summary if len(summary) <= room else summary[: room - 3] + "..."
    print(format_table(rows, [*columns, "summary"]))
    return 0


_PLAY_KEYS = (
    "Type an action; ':actions' lists valid ones, ':hint' asks the oracle, ':quit' leaves "
    "(and shows the answer)."
)


def _cmd_play(args: argparse.Namespace) -> int:
    env = gym.make(_resolve_id(args.env_id))
    options: dict[str, Any] = {"split": args.split}
    if args.task_id:
        options = {"task_id": args.task_id}
    observation, info = env.reset(seed=args.seed, options=options)
    print(f"Task {info['task_id']}: {info['instruction']}")
    print(_PLAY_KEYS + "\n")
    total = 0.0
    while True:
        print(observation)
        try:
            action = input("> ")
        except (EOFError, KeyboardInterrupt) as stop:
            print()
            _reveal(env)
            return EXIT_INTERRUPTED if isinstance(stop, KeyboardInterrupt) else 0
        if action.strip() == ":quit":
            _reveal(env)
            return 0
        if action.strip() == ":actions":
            print(_actions_text(env, info))
            continue
        if action.strip() == ":hint":
            print(f"oracle: {env.unwrapped.oracle_action()}")
            continue
        observation, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        if terminated or truncated:
            print(observation)
            outcome = (
                "success" if info.get("success") else ("out of turns" if truncated else "failed")
            )
            print(f"\nEpisode over: {outcome}, total reward {total:.2f}.")
            return 0


def _actions_text(env: gym.Env, info: dict[str, Any]) -> str:
    """``:actions`` in ``llmgym play``: the admissible actions, or the rules where the
    environment does not list them (a Wordle guess is any word of its list)."""
    actions = info.get("admissible_actions")
    if actions:
        return ", ".join(map(str, actions))
    rules = getattr(env.unwrapped, "rules", None)
    return "This environment does not list its actions." + (f" {rules()}" if rules else "")


def _reveal(env: gym.Env) -> None:
    """What a player who leaves may want to know: the answer where the environment can
    ``reveal()`` it (Wordle's word), else the oracle's next move."""
    unwrapped = env.unwrapped
    reveal = getattr(unwrapped, "reveal", None)
    if callable(reveal):
        print(f"The answer was: {reveal()}")
    elif hasattr(unwrapped, "oracle_action"):
        print(f"The oracle's next move would have been: {unwrapped.oracle_action()}")


def _openai_options(args: argparse.Namespace, spec: str) -> dict[str, Any]:
    if not spec.startswith("openai:"):
        return {}
    return {
        "base_url": args.base_url,
        "api_key": args.api_key,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "timeout": args.timeout,
        "max_consecutive_failures": args.max_server_errors or None,
        "native_tools": args.native_tools,
    }


def _agent(args: argparse.Namespace) -> Agent:
    """The ``--agent``, its model server checked (:meth:`~llmgym.agents.Agent.preflight`)."""
    if args.agent == "human":
        return HumanAgent(react=args.react, read=_read_line)
    agent = make_agent(
        args.agent, seed=args.seed, react=args.react, **_openai_options(args, args.agent)
    )
    agent.preflight()
    return agent


def _read_line(prompt: str) -> str:
    """``input`` for the human agent: the end of the input is the person leaving, as Ctrl-C
    (not a failed episode after another)."""
    try:
        return input(prompt)
    except EOFError:
        print()
        raise KeyboardInterrupt from None


def _opponent_kwargs(args: argparse.Namespace, env_id: str) -> dict[str, Any]:
    """``gymnasium.make`` keyword arguments for ``--opponent`` (multi-agent games only)."""
    if not getattr(args, "opponent", None):
        return {}
    from llmgym.runner.matches import game_env_class, make_player

    game = game_env_class(env_id).game_class
    if args.opponent in game.policies:
        return {"opponent": args.opponent}
    return {
        "opponent": make_player(
            args.opponent,
            env_id,
            seed=args.seed,
            react=args.react,
            **_openai_options(args, args.opponent),
        )
    }


def _env_source(args: argparse.Namespace, env_id: str) -> EnvSource:
    """The environment id itself (made here), or a factory of the environment living on an
    ``llmgym serve`` server (``--remote``) or in Ray actors (``--ray``)."""
    if not (args.remote or args.ray):
        return env_id
    make_kwargs = {**_make_kwargs(args), **_opponent_kwargs(args, env_id)}
    if not isinstance(make_kwargs.get("opponent", ""), str):
        raise ValueError("with --remote or --ray, --opponent must be one of the game's policies")
    if args.remote:
        from llmgym.serving.client import remote_env_factory

        return remote_env_factory(args.remote, env_id, react=args.react, **make_kwargs)
    from llmgym.serving.ray_actors import ray_env_factory

    return ray_env_factory(env_id, react=args.react, **make_kwargs)


def _connect(args: argparse.Namespace) -> None:
    if args.remote and args.ray:
        raise ValueError("choose one of --remote and --ray")
    if args.ray:
        from llmgym.serving.ray_actors import init

        try:
            init(args.ray)
        except ConnectionError:
            raise ValueError(
                f"no Ray cluster is running at {args.ray!r}: start one with `ray start --head`, "
                "or use --ray local to start one in this process"
            ) from None


def _eval_plan(args: argparse.Namespace) -> list[tuple[str, list[str] | None]]:
    """``[(env_id, task_ids or None)]`` from the positional ids and/or ``--suite``."""
    plan: list[tuple[str, list[str] | None]] = [
        (_resolve_id(e), args.task_ids) for e in args.env_ids
    ]
    if args.task_file:
        from llmgym.integrations.agentgym import read_task_file

        plan += read_task_file(args.task_file)
    elsewhere = bool(args.remote or args.ray)  # availability is the remote side's business
    if args.suite:
        for env_id, task_ids in load_suite(args.suite).items():
            entry = get_entry(env_id)
            if entry.available or elsewhere:
                plan.append((env_id, task_ids))
            else:
                print(f"llmgym: skipping {env_id} (needs {entry.install_hint})", file=sys.stderr)
    if not plan:
        raise ValueError("name at least one environment id, a --suite or a --task-file")
    return plan


def _check_eval_options(args: argparse.Namespace) -> None:
    """Options of ``llmgym eval`` that would otherwise be silently ignored."""
    for option in ("episodes", "split"):
        if args.suite and not args.env_ids and _given(args, option):
            raise ValueError(
                f"--{option} applies to the ENV_IDs named, not to a --suite, whose task lists "
                "are fixed"
            )
    if (args.task_ids or args.task_file) and _given(args, "episodes"):
        raise ValueError("--task-ids and --task-file play each task once; leave out --episodes")
    if args.task_file and (args.env_ids or args.task_ids):
        raise ValueError("--task-file names its environments and tasks itself: drop the others")
    if args.resume and not args.trajectories:
        raise ValueError("--resume continues the run recorded by --trajectories PATH; name it")
    if args.record_frames and not args.trajectories:
        raise ValueError("--record-frames writes beside --trajectories PATH; name it")


def _evaluate_plan(
    args: argparse.Namespace, agent: Agent, plan: list[tuple[str, list[str] | None]]
) -> tuple[list[EvalResult], bool]:
    """Evaluate ``agent`` on each environment of ``plan``: the results, and whether Ctrl-C
    stopped it (the results then hold the episodes that finished)."""
    path = Path(args.trajectories) if args.trajectories else None
    done = finished_episodes(path) if path is not None and args.resume else {}
    results = []
    for env_id, task_ids in plan:
        finished: list[Trajectory] = []

        def keep(trajectory: Trajectory, finished: list[Trajectory] = finished) -> None:
            finished.append(trajectory)
            if path is not None:
                append_trajectory(path, trajectory)

        try:
            results.append(_evaluate_env(args, agent, env_id, task_ids, keep, done, finished))
        except KeyboardInterrupt:
            if finished:
                partial = EvalResult(env_id, agent.name, split=args.split, trajectories=finished)
                results.append(partial)
            return results, True
    return results, False


def _evaluate_env(
    args: argparse.Namespace,
    agent: Agent,
    env_id: str,
    task_ids: list[str] | None,
    keep: Callable[[Trajectory], None],
    done: dict[tuple[str, str, str, int | None], Trajectory],
    finished: list[Trajectory],
) -> EvalResult:
    """One environment of ``llmgym eval``. With ``--resume``, the episodes ``done`` holds are
    taken from there (and put in ``finished``) and only the others are played, each with the
    task and seed it has in the full run."""
    source = _env_source(args, env_id)
    options: dict[str, Any] = {
        "split": args.split,
        "seed": args.seed,
        "concurrency": args.concurrency,
        "progress": not args.quiet,
        "on_trajectory": keep,
        "make_kwargs": {**_make_kwargs(args), **_opponent_kwargs(args, env_id)},
        "history_window": args.history_window,
        "record_frames": args.record_frames,
    }
    if not args.resume:
        episodes = None if task_ids is not None else args.episodes
        return evaluate(source, agent, episodes=episodes, task_ids=task_ids, **options)
    if task_ids is None:
        probe = source() if callable(source) else gym.make(env_id, **_make_kwargs(args))
        task_ids = choose_tasks(probe, args.split, args.episodes, args.seed)
        probe.close()
    keys = [(env_id, agent.name, task, args.seed + i) for i, task in enumerate(task_ids)]
    played = {i: done[key] for i, key in enumerate(keys) if key in done}
    finished.extend(played.values())
    if played:
        print(
            f"{env_id}: {len(played)} of {len(keys)} episodes already in {args.trajectories}, "
            "not played again",
            file=sys.stderr,
        )
    for start, stop in _runs([i for i in range(len(keys)) if i not in played]):
        options["seed"] = args.seed + start
        result = evaluate(source, agent, task_ids=task_ids[start:stop], **options)
        played.update(zip(range(start, stop), result.trajectories, strict=True))
    trajectories = [played[i] for i in range(len(keys))]
    return EvalResult(env_id, agent.name, split=args.split, trajectories=trajectories)


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """``[(start, stop)]`` of the runs of consecutive numbers in the sorted ``indices``."""
    runs: list[tuple[int, int]] = []
    for index in indices:
        if runs and runs[-1][1] == index:
            runs[-1] = (runs[-1][0], index + 1)
        else:
            runs.append((index, index + 1))
    return runs


def _cmd_eval(args: argparse.Namespace) -> int:
    if args.agents:
        return _eval_match(args)
    _check_eval_options(args)
    _connect(args)
    plan = _eval_plan(args)
    if args.dry_run:
        return _dry_run(args, plan)
    agent = _agent(args)
    results, interrupted = _evaluate_plan(args, agent, plan)
    rows = []
    for result in results:
        row = result.summary()
        low, high = row.pop("success_ci95")
        row["success_ci95"] = f"{low:.2f}-{high:.2f}"
        rows.append(row)
    columns = [
        "env_id",
        "agent",
        "episodes",
        "success_rate",
        "success_ci95",
        "mean_reward",
        "mean_steps",
    ]
    columns += ["mean_turns", "format_errors", "server_errors", "tokens", "errors"]
    skipped = _skipped(args)
    score = overall_score(results, suite=_suite_name(args.suite), skipped=len(skipped))
    print(format_table(rows, columns))
    print(f"\n{score['label']}")
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = _results_payload(args, agent, results, skipped, score, interrupted)
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {path}")
    if interrupted:
        print(_interrupted_note(args, results), file=sys.stderr)
        return EXIT_INTERRUPTED
    return 1 if any(r.summary()["errors"] == r.episodes and r.episodes for r in results) else 0


def _results_payload(
    args: argparse.Namespace,
    agent: Agent,
    results: Sequence[EvalResult],
    skipped: list[dict[str, str]],
    score: dict[str, Any],
    interrupted: bool,
) -> dict[str, Any]:
    """``results.json``: what ran, with the settings a paper reports, what was skipped and why,
    the overall score and one record per environment."""
    return {
        "llmgym_version": llmgym.__version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "suite": args.suite,
        "suite_version": _suite_version() if args.suite else None,
        "settings": {
            **agent.settings(),
            "split": args.split,
            "seed": args.seed,
            "episodes": None if args.suite or args.task_ids or args.task_file else args.episodes,
            "task_ids": args.task_ids,
            "task_file": args.task_file,
            "history_window": args.history_window,
            "concurrency": args.concurrency,
            "config": args.config,
        },
        "react": args.react,
        "trajectories": _relative_to(args.trajectories, Path(args.json).parent)
        if args.trajectories
        else None,
        "interrupted": interrupted,
        "skipped": skipped,
        "score": score,
        "results": [r.to_dict() for r in results],
    }


def _relative_to(path: str, folder: Path) -> str:
    """``path`` as seen from ``folder`` (so that a results file and its trajectories can move
    together), or absolute where no relative path leads there (another drive)."""
    try:
        return os.path.relpath(path, folder)
    except ValueError:
        return os.path.abspath(path)


def _skipped(args: argparse.Namespace) -> list[dict[str, str]]:
    """The ``--suite`` environments this run leaves out, why, and the pip command that adds
    them (none when the environments run elsewhere)."""
    if not args.suite or args.remote or args.ray:
        return []
    entries = [get_entry(env_id) for env_id in load_suite(args.suite)]
    return [
        {
            "env_id": e.id,
            "reason": f"the [{e.extra}] extra is not installed",
            "install": e.install_hint,
        }
        for e in entries
        if not e.available
    ]


def _suite_version() -> int:
    """The version of the frozen task lists every suite is drawn from."""
    text = (resources.files("llmgym.suites") / "agenteval.json").read_text(encoding="utf-8")
    return int(json.loads(text)["version"])


def _suite_name(suite: str | None) -> str | None:
    return f"{suite} v{_suite_version()}" if suite else None


def _git_commit() -> str | None:
    """The commit of the llmgym checkout running (``-dirty`` with local changes), or ``None``
    for an installed copy or without git."""
    package = Path(llmgym.__file__).resolve().parent
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


def _dry_run(args: argparse.Namespace, plan: list[tuple[str, list[str] | None]]) -> int:
    """``eval --dry-run``: the episodes, turn limits and prompt tokens of the run, without
    contacting a model."""
    window = args.history_window
    estimates = [
        estimate_run(
            _env_source(args, env_id),
            react=args.react,
            split=args.split,
            episodes=None if task_ids is not None else args.episodes,
            task_ids=task_ids,
            seed=args.seed,
            make_kwargs={**_make_kwargs(args), **_opponent_kwargs(args, env_id)},
        )
        for env_id, task_ids in plan
    ]
    rows: list[dict[str, Any]] = []
    for estimate in estimates:
        row = {
            "env_id": estimate.env_id,
            "episodes": estimate.episodes,
            "turn_limit": estimate.turn_limit or f"none ({estimate.turns} assumed)",
            "first_prompt": estimate.first_prompt_tokens,
            "per_turn": estimate.turn_tokens,
            "prompt_tokens": estimate.prompt_tokens(),
        }
        if window is not None:
            row[f"window_{window}"] = estimate.prompt_tokens(window)
        rows.append(row)
    print(format_table(rows, list(rows[0])))
    line = f"\nat most ~{sum(e.prompt_tokens() for e in estimates):,} prompt tokens"
    if window is not None:
        windowed = sum(e.prompt_tokens(window) for e in estimates)
        line += f" (~{windowed:,} with --history-window {window})"
    print(line + f", replies of up to {args.max_tokens} tokens each.")
    print(
        "Estimate: characters / 4, every episode running to its turn limit, later observations "
        f"as long as the first, replies of ~{estimates[0].reply_tokens} tokens. "
        "Dry run: no model was contacted."
    )
    return 0


def _interrupted_note(args: argparse.Namespace, results: list[EvalResult]) -> str:
    """What ``llmgym eval`` says after Ctrl-C: what it kept, and how to go on."""
    finished = sum(result.episodes for result in results)
    kept = f" (and {args.json})" if args.json else ""
    if args.trajectories:
        how = f"the same command with --resume continues from {args.trajectories}"
    else:
        how = "a run with --trajectories PATH can be continued with --resume"
    return f"llmgym: interrupted; the table{kept} holds the {finished} finished episodes; {how}"


def _eval_match(args: argparse.Namespace) -> int:
    """``llmgym eval GAME --agents A B ...``: the same as ``llmgym match``."""
    if len(args.env_ids) != 1 or args.suite:
        raise ValueError("with --agents, name exactly one multi-agent game (no --suite)")
    match = argparse.Namespace(**vars(args))
    match.game, match.games, match.transcripts = args.env_ids[0], args.episodes, args.trajectories
    return _cmd_match(match)


def _cmd_match(args: argparse.Namespace) -> int:
    from llmgym.runner.matches import make_player, run_match

    if len(args.agents) < 2:
        raise ValueError("a match needs at least two agents (--agents A B ...)")
    agents = [
        make_player(
            spec, args.game, seed=args.seed, react=args.react, **_openai_options(args, spec)
        )
        for spec in args.agents
    ]
    for agent in agents:  # a model server that is down fails here, not in game 1
        agent.preflight()
    transcripts = Path(args.transcripts) if args.transcripts else None

    def save(record: Any) -> None:
        if transcripts is not None:
            transcripts.parent.mkdir(parents=True, exist_ok=True)
            with transcripts.open("a", encoding="utf-8") as stream:
                stream.write(json.dumps(record.to_dict()) + "\n")

    result = run_match(
        args.game,
        agents,
        games=args.games,
        split=args.split,
        seed=args.seed,
        config=args.config,
        concurrency=args.concurrency,
        progress=not args.quiet,
        keep_messages=transcripts is not None,
        on_game=save,
        stop_on_interrupt=True,
    )
    rows = []
    for row in result.standings():
        low, high = row.pop("win_ci95")
        rows.append({**row, "win_ci95": f"{low:.2f}-{high:.2f}"})
    print(f"{result.game}: {len(result.games)} games on the {result.split} split")
    columns = ["agent", "games", "wins", "draws", "losses", "win_rate", "win_ci95"]
    columns += ["mean_score", "success_rate", "invalid_moves", "forfeits", "tokens", "errors"]
    print(format_table(rows, columns))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"llmgym_version": llmgym.__version__, "react": args.react, **result.to_dict()}
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {path}")
    if result.interrupted:
        kept = f" (and {args.json})" if args.json else ""
        print(
            f"llmgym: interrupted; the standings{kept} count the {len(result.games)} finished "
            f"games of {args.games}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return 1 if result.games and all(record.error for record in result.games) else 0


def _cmd_collect(args: argparse.Namespace) -> int:
    _connect(args)
    agent = _agent(args)
    out = Path(args.output)
    done: set[tuple[str, str]] = set()
    if out.exists():
        done = {(t.env_id, t.task_id) for t in read_trajectories(out)}
    written = 0

    def save(trajectory: Trajectory) -> None:
        nonlocal written
        if trajectory.error is None and (trajectory.success or not args.successful_only):
            append_trajectory(out, trajectory)
            written += 1

    for env_id in (_resolve_id(e) for e in args.envs):
        source = _env_source(args, env_id)
        probe = source() if callable(source) else gym.make(env_id, **_make_kwargs(args))
        tasks = choose_tasks(probe, args.split, args.episodes, args.seed)
        probe.close()
        todo = [t for t in tasks if (env_id, t) not in done]
        if len(todo) < len(tasks):
            print(
                f"{env_id}: {len(tasks) - len(todo)} of {len(tasks)} tasks already in {out}, "
                "skipped"
            )
        if todo:
            rollout(
                source,
                agent,
                task_ids=todo,
                seed=args.seed,
                concurrency=args.concurrency,
                progress=not args.quiet,
                on_trajectory=save,
                make_kwargs=_make_kwargs(args),
                record_frames=args.record_frames,
            )
    print(f"wrote {written} trajectories to {out}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from llmgym.serving.server import ServerSettings, configure_logging, serve
    from llmgym.serving.server.policy import ConfigLimit
    from llmgym.serving.server.protocols import DEFAULT_PROTOCOLS

    limits = [ConfigLimit.parse(text, "maximum") for text in args.config_max or ()]
    limits += [ConfigLimit.parse(text, "values") for text in args.config_values or ()]
    settings = ServerSettings(
        envs=_served_envs(args),
        max_sessions=args.max_sessions,
        max_sessions_per_client=args.max_sessions_per_client,
        ttl_s=args.ttl,
        token=args.token or os.environ.get("LLMGYM_SERVER_TOKEN") or None,
        max_body_bytes=args.max_body_bytes,
        max_json_depth=args.max_json_depth,
        step_timeout_s=args.step_timeout,
        reset_timeout_s=args.reset_timeout,
        config_limits=tuple(limits),
        file_dir=args.allow_files,
        isolate=tuple(e if e == "all" else _resolve_id(e) for e in args.isolate or ()),
        protocols=tuple(args.protocol or DEFAULT_PROTOCOLS),
    )
    configure_logging(args.log_level)

    def announce(url: str) -> None:
        print(f"llmgym serve: listening on {url}", flush=True)

    serve(
        args.host,
        args.port,
        settings,
        log_level=args.log_level,
        access_log=args.access_log,
        on_ready=announce,
    )
    return 0


def _served_envs(args: argparse.Namespace) -> tuple[str, ...] | None:
    """The ids ``--env`` or ``--envs`` name (``None``: every available one)."""
    if args.env is not None:
        if args.envs:
            raise ValueError("--env serves one environment alone: drop --envs")
        return (_resolve_id(args.env),)
    return tuple(_resolve_id(e) for e in args.envs) if args.envs else None


def _cmd_export(args: argparse.Namespace) -> int:
    if args.what == "agenteval":
        return _export_agenteval(args)
    if args.env_id is None or args.directory is None:
        raise ValueError("export openenv takes an ENV_ID and a DIR: llmgym export openenv ID DIR")
    from llmgym.serving.openenv_export import export_openenv

    written = export_openenv(_resolve_id(args.env_id), args.directory, args.reward_range)
    for path in written:
        print(path)
    print(
        f"wrote an OpenEnv Space for {_resolve_id(args.env_id)}; publish it with "
        f"`openenv push {args.directory}`"
    )
    return 0


def _export_agenteval(args: argparse.Namespace) -> int:
    """``llmgym export agenteval --format agentgym --out DIR``: the frozen suite as AgentGym's
    ``<family>_test.json`` files."""
    from llmgym.integrations.agentgym import write_agenteval

    if args.env_id is not None or args.directory is not None:
        raise ValueError("export agenteval takes no ENV_ID or DIR: give --out DIR")
    if args.out is None:
        raise ValueError("export agenteval writes into --out DIR; name it")
    written = write_agenteval(args.out)
    for path in written:
        print(path)
    print(f"wrote AgentGym's test files for {len(written)} families of the agenteval suite")
    return 0


def _cmd_webarena(args: argparse.Namespace) -> int:
    import time

    from llmgym.envs.webarena.serve import SIGN_IN, serve_sites

    running = serve_sites(
        args.sites.split(",") if args.sites else None,
        host=args.host,
        seed=args.seed,
        port_offset=args.port_offset,
    )
    for served in running:
        sign_in = SIGN_IN.get(served.site.name, "")
        print(f"{served.site.title:<20} {served.url}/  {sign_in}")
    print("serving; Ctrl-C stops")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        for served in running:
            served.stop()
        return EXIT_INTERRUPTED


def _cmd_envgen(args: argparse.Namespace) -> int:
    from llmgym.envgen import DesignSpec, SkillStats, make_designer

    spec = DesignSpec.from_env_id(_resolve_id(args.env_id))
    designer = make_designer(
        spec,
        args.llm,
        n=args.n,
        run_folder=args.out,
        base_url=args.base_url,
        api_key=args.api_key,
        repair_rounds=args.repair_rounds,
    )
    stats = SkillStats.load(args.stats) if args.stats else None
    designs = designer.propose(stats)
    for number, design in enumerate(designs, start=1):
        print(f"Environment {number}: {design.purpose}\n  {json.dumps(design.config)}")
    if args.out:
        saved = Path(args.out) / "designs.json"
        print(f"\nsaved to {saved} (every prompt and reply: events.jsonl)")
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    bad_lines: list[BadLine] = []
    try:
        count = convert_file(
            args.input,
            args.output,
            fmt=args.format,
            successful_only=args.successful_only,
            bad_lines=bad_lines,
        )
    finally:
        _report_bad_lines(args.input, bad_lines)
    print(f"wrote {count} {args.format} records to {args.output}")
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    from llmgym.viewer import TrajectoryStore, make_server

    store = TrajectoryStore(args.paths)
    for run in store.runs:
        if run.skipped_lines:
            print(
                f"llmgym: warning: {run.path}: {run.skipped_lines} lines hold no trajectory "
                "(skipped)",
                file=sys.stderr,
            )
        if run.kind == "results":
            print(
                f"llmgym: {run.path} names no trajectory file, so episodes show as summaries; "
                "evaluate with --trajectories PATH as well to see every turn",
                file=sys.stderr,
            )
    try:
        server = make_server(store, args.host, args.port)
    except OSError as error:
        raise ValueError(
            f"cannot listen on {args.host}:{args.port} ({error.strerror}); choose another "
            "--port (0 picks a free one)"
        ) from None
    print(
        f"llmgym view: {len(store.episodes):,} episodes of {len(store.runs)} run(s) on "
        f"{server.url} (Ctrl-C stops)",
        flush=True,
    )
    if args.open:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from llmgym.viewer.report import write_report

    path = write_report(args.inputs, args.output, title=args.title)
    print(f"wrote {path}")
    return 0


def _cmd_render(args: argparse.Namespace) -> int:
    from llmgym.viewer.render import write_gif

    frames = write_gif(
        args.trajectories, args.episode, args.output, scale=args.scale, frame_ms=args.frame_ms
    )
    print(f"wrote {args.output} ({frames} frames)")
    return 0


def _report_bad_lines(path: str, bad_lines: list[BadLine], most: int = 10) -> None:
    for bad in bad_lines[:most]:
        print(f"llmgym: warning: {path}, {bad} (skipped)", file=sys.stderr)
    if len(bad_lines) > most:
        print(f"llmgym: warning: {len(bad_lines) - most} more lines skipped", file=sys.stderr)


def _add_agent_options(parser: argparse.ArgumentParser, *, agent: bool = True) -> None:
    if agent:
        parser.add_argument(
            "--agent", default="oracle", help=f"one of: {', '.join(AGENT_NAMES)} (default: oracle)"
        )
    parser.add_argument("--base-url", help="chat-completions API root (default: $OPENAI_BASE_URL)")
    parser.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature")
    parser.add_argument("--max-tokens", type=int, default=512, help="longest reply per turn")
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="seconds to wait for a model's answer (connecting: 5)",
    )
    parser.add_argument(
        "--max-server-errors",
        type=int,
        default=5,
        metavar="N",
        help="stop the run after N model requests in a row fail (0: never)",
    )
    parser.add_argument(
        "--native-tools",
        action="store_true",
        help="tool-use environments: send the tools for the server's native function calling "
        "(implies --no-react)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=1, help="episodes (or games) in flight at once"
    )
    parser.add_argument(
        "--react",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ask for 'Thought: ... Action: ...' replies (--no-react: the action alone)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="episode i is reset with SEED + i; tasks drawn with it"
    )
    parser.add_argument(
        "--config",
        type=_json_object,
        default=None,
        metavar="JSON",
        help="config overrides, e.g. '{\"width\": 8}'",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_placement_options(parser: argparse.ArgumentParser) -> None:
    """Where the environments live: here (default), on a server, or in Ray actors."""
    parser.add_argument(
        "--remote",
        metavar="URL",
        help="play environments served by `llmgym serve` at URL (token: $LLMGYM_SERVER_TOKEN)",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play environments in Ray actors: auto, host:port, ray://host:port or local",
    )


def _make_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {"config": args.config} if args.config else {}


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def _add_record_frames_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record-frames",
        action="store_true",
        help="also record each step's picture (pixel environments, Crafter-v0, Heist-v0) in "
        "PATH.frames beside the trajectory file, for `llmgym view` and `llmgym render`",
    )


def _add_list_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym list``: the environment table."""
    listing = commands.add_parser("list", help="list the registered environments")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(run=_cmd_list)


def _add_play_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym play``: play an environment in the terminal."""
    play = commands.add_parser("play", help="play an environment in the terminal")
    play.add_argument("env_id", help=_ENV_ID_HELP)
    play.add_argument("--seed", type=int, default=None, help="draws the task (default: random)")
    play.add_argument(
        "--split", choices=("train", "eval"), default="train", help="the split tasks come from"
    )
    play.add_argument("--task-id", default=None, help="play exactly this task, e.g. eval/00003")
    play.set_defaults(run=_cmd_play)


def _add_eval_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym eval``: evaluate an agent on environments or a suite."""
    run = commands.add_parser("eval", help="evaluate an agent and print a results table")
    run.add_argument("env_ids", nargs="*", metavar="ENV_ID", help=_ENV_ID_HELP)
    run.add_argument("--suite", choices=SUITE_NAMES, help="a named, frozen set of tasks")
    run.add_argument(
        "--split",
        choices=("train", "eval"),
        default="eval",
        action=_NoteGiven,
        help="the split tasks are drawn from (not with --suite)",
    )
    run.add_argument(
        "--episodes",
        type=int,
        default=50,
        action=_NoteGiven,
        help="per environment (not with --suite or --task-ids, which fix the tasks)",
    )
    run.add_argument(
        "--task-ids",
        nargs="+",
        metavar="TASK_ID",
        help="play exactly these tasks of each ENV_ID, e.g. eval/00003 (instead of --episodes)",
    )
    run.add_argument(
        "--task-file",
        metavar="PATH",
        help="play the items of an AgentGym data file (a JSON array of {item_id: "
        "<family>_<index>}, e.g. webshop_test.json of 'llmgym export agenteval')",
    )
    run.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    run.add_argument(
        "--history-window",
        type=_non_negative,
        metavar="N",
        help="send the model only the last N exchanges after the system prompt and the task "
        "(default: the whole conversation)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="print the episodes, turn limits and a token estimate; contact no model",
    )
    run.add_argument(
        "--trajectories", metavar="PATH", help="also append every episode to a JSONL file"
    )
    _add_record_frames_option(run)
    run.add_argument(
        "--resume",
        action="store_true",
        help="continue the run recorded in --trajectories: episodes it holds that ended without "
        "an error are not played again (the same command, with --resume)",
    )
    run.add_argument(
        "--agents",
        nargs="+",
        metavar="PLAYER",
        help="multi-agent games only: play these agents against each other (one per seat) "
        "instead of --agent; the same as 'llmgym match GAME --agents ...' with --episodes games",
    )
    run.add_argument(
        "--opponent",
        metavar="PLAYER",
        help="multi-agent games only: who plays the other seats, a scripted player of the game "
        "(e.g. greedy) or an agent (oracle, random, openai:MODEL); default: the game's default",
    )
    _add_agent_options(run)
    _add_placement_options(run)
    run.set_defaults(run=_cmd_eval)


def _add_match_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym match``: agents play a multi-agent game against each other."""
    match = commands.add_parser(
        "match", help="play agents against each other in a multi-agent game; print win rates"
    )
    match.add_argument(
        "game", help="connect_four, negotiation, auction (or a single-agent id of one)"
    )
    match.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="PLAYER",
        help="one per seat: oracle, random, human, openai:MODEL or a scripted player of the "
        "game (greedy, cautious, conceder, boulware, shader, truthful)",
    )
    match.add_argument("--games", type=int, default=20, help="games to play (seats rotate)")
    match.add_argument(
        "--split", choices=("train", "eval"), default="eval", help="the split games come from"
    )
    match.add_argument("--json", metavar="PATH", help="also write the standings and games as JSON")
    match.add_argument(
        "--transcripts", metavar="PATH", help="also append every game with its conversations"
    )
    _add_agent_options(match, agent=False)
    match.set_defaults(run=_cmd_match)


def _add_collect_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym collect``: build a trajectory dataset."""
    collect = commands.add_parser("collect", help="build a trajectory dataset (resumable)")
    collect.add_argument("--envs", nargs="+", required=True, metavar="ENV_ID", help=_ENV_ID_HELP)
    collect.add_argument(
        "--split", choices=("train", "eval"), default="train", help="the split tasks come from"
    )
    collect.add_argument("--episodes", type=int, default=100, help="per environment")
    collect.add_argument(
        "-o", "--output", required=True, help="JSONL file (appended; finished tasks skipped)"
    )
    collect.add_argument(
        "--successful-only", action="store_true", help="keep only successful episodes"
    )
    _add_record_frames_option(collect)
    _add_agent_options(collect)
    _add_placement_options(collect)
    collect.set_defaults(run=_cmd_collect, on_interrupt=_collect_interrupted)


def _add_envgen_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym envgen``: design environment configs (EnvGen)."""
    envgen = commands.add_parser("envgen", help="design environment configs with an LLM (EnvGen)")
    envgen.add_argument("env_id", help=_ENV_ID_HELP)
    envgen.add_argument("--llm", default="offline", help="offline, openai:MODEL or replay:FOLDER")
    envgen.add_argument("--base-url", help="chat-completions API root (default: $OPENAI_BASE_URL)")
    envgen.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    envgen.add_argument("--n", type=int, default=4, help="environments to design")
    envgen.add_argument("--out", help="run folder (continued when it exists)")
    envgen.add_argument("--stats", help="per-skill success rates (JSON) for an adaptation step")
    envgen.add_argument(
        "--repair-rounds", type=int, default=2, help="retries after an invalid design reply"
    )
    envgen.set_defaults(run=_cmd_envgen)


def _add_convert_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym convert``: trajectories to SFT data."""
    convert = commands.add_parser(
        "convert", help="trajectories to SFT data (TRL messages or AgentGym)"
    )
    convert.add_argument("input", help="a trajectory file (JSONL) of eval or collect")
    convert.add_argument(
        "-o", "--output", required=True, help="the file to write (JSONL; agentgym: a JSON array)"
    )
    convert.add_argument(
        "--format",
        choices=("messages", "conversations", "agentgym"),
        default="messages",
        help="messages: TRL's conversational format; conversations: AgentGym's conversations "
        "as JSON lines; agentgym: AgentTraj's JSON array with item ids <family>_<index>, as "
        "AgentGym's trainers load it",
    )
    convert.add_argument(
        "--successful-only", action="store_true", help="keep only successful episodes"
    )
    convert.set_defaults(run=_cmd_convert)


def _add_serve_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym serve``: serve environments over HTTP."""
    server = commands.add_parser(
        "serve", help="serve environments over HTTP (needs the [serve] extra)"
    )
    server.add_argument("--host", default="127.0.0.1", help="interface (0.0.0.0: all)")
    server.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    server.add_argument(
        "--envs",
        nargs="+",
        metavar="ENV_ID",
        help="serve only these, e.g. wordle or my_pkg.envs:Anagram (default: every available)",
    )
    server.add_argument("--max-sessions", type=int, default=256, help="sessions at once")
    server.add_argument(
        "--max-sessions-per-client",
        type=int,
        default=64,
        metavar="N",
        help="sessions one client address may hold at once (default 64)",
    )
    server.add_argument("--ttl", type=float, default=600.0, help="idle seconds before expiry")
    server.add_argument(
        "--token",
        help="require 'Authorization: Bearer TOKEN', or for AgentGym's clients the path "
        "/agentgym/TOKEN/<family> (default: $LLMGYM_SERVER_TOKEN)",
    )
    server.add_argument(
        "--max-body-bytes", type=int, default=1 << 20, help="request size limit (default 1 MiB)"
    )
    server.add_argument(
        "--max-json-depth",
        type=int,
        default=32,
        metavar="N",
        help="deepest nesting of a request body or stream message (default 32)",
    )
    server.add_argument(
        "--step-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a step or remote call may run before its session is closed (default 30)",
    )
    server.add_argument(
        "--reset-timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="the same for making an environment and reset (default 120)",
    )
    server.add_argument(
        "--config-max",
        action="append",
        metavar="ENV_ID.FIELD=N",
        help="the largest value clients may give a config field (repeatable; replaces the "
        "default limit of that field)",
    )
    server.add_argument(
        "--config-values",
        action="append",
        metavar="ENV_ID.FIELD=V[,V...]",
        help="the only values clients may give a config field (repeatable)",
    )
    server.add_argument(
        "--allow-files",
        metavar="DIR",
        help="let clients name files inside DIR in config fields that name a file "
        "(default: no file paths from clients)",
    )
    server.add_argument(
        "--isolate",
        nargs="+",
        metavar="ENV_ID",
        help="also run these environments in a child process per session ('all': every one)",
    )
    server.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="info",
        help="the server's log level",
    )
    server.add_argument("--access-log", action="store_true", help="log every request")
    server.add_argument(
        "--protocol",
        nargs="+",
        metavar="NAME",
        help="the protocols to speak (default: llmgym openenv agentgym mcp: llmgym's own, "
        "OpenEnv's at /openenv/<name>, AgentGym's at /agentgym/<family>, MCP at /mcp/<name>); "
        "openenv alone serves --env at the root, as an OpenEnv Space",
    )
    server.add_argument("--env", metavar="ENV_ID", help="serve this environment alone")
    server.set_defaults(run=_cmd_serve)


def _add_webarena_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym webarena serve``: WebArena-v0's sites on local ports, for a real browser."""
    webarena = commands.add_parser(
        "webarena", help="serve WebArena-v0's sites (store, back office, ...) for a browser"
    )
    webarena.add_argument("action", choices=("serve",), help="what to do")
    webarena.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    webarena.add_argument("--seed", type=int, default=0, help="seed of the generated data")
    webarena.add_argument(
        "--port-offset", type=int, default=0, help="added to each site's port (store 7770, ...)"
    )
    webarena.add_argument("--sites", default="", help="comma-separated site names (default: all)")
    webarena.set_defaults(run=_cmd_webarena)


def _add_export_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym export openenv ENV_ID DIR`` (an environment packaged for another ecosystem) and
    ``llmgym export agenteval --format agentgym --out DIR`` (the suite as AgentGym's files)."""
    export = commands.add_parser(
        "export",
        help="package an environment for another ecosystem (openenv: an HF Space), or write "
        "the agenteval suite as AgentGym's test files (agenteval --format agentgym)",
    )
    export.add_argument("what", choices=("openenv", "agenteval"), help="what to write")
    export.add_argument("env_id", nargs="?", metavar="ENV_ID", help="openenv: " + _ENV_ID_HELP)
    export.add_argument(
        "directory", nargs="?", metavar="DIR", help="openenv: where to write it (made if missing)"
    )
    export.add_argument(
        "--format",
        choices=("agentgym",),
        default="agentgym",
        help="agenteval: AgentGym's <family>_test.json files, item ids <family>_<index>",
    )
    export.add_argument("--out", metavar="DIR", help="agenteval: the directory to write into")
    export.add_argument(
        "--reward-range",
        nargs=2,
        type=float,
        metavar=("LOW", "HIGH"),
        help="openenv: the reward range to declare (default: 0 to the oracle's best return on "
        "the first eval tasks)",
    )
    export.set_defaults(run=_cmd_export)


def _add_view_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym view``: a local web page over trajectory and results files."""
    view = commands.add_parser(
        "view", help="browse episodes (trajectory or results files) in a local web page"
    )
    view.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="trajectory files (JSONL) and results files of `llmgym eval --json` (a results "
        "file brings the trajectory file it names)",
    )
    view.add_argument(
        "--host", default="127.0.0.1", help="interface (the default answers this machine only)"
    )
    view.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    view.add_argument("--open", action="store_true", help="open the page in a web browser")
    view.set_defaults(run=_cmd_view)


def _add_report_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym report``: a static HTML page of plots."""
    report = commands.add_parser(
        "report", help="plots of results files and EnvGen runs in one HTML page ([report] extra)"
    )
    report.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="results files of `llmgym eval --json`, EnvGen run folders (llmgym envgen --out) "
        "or EnvGen benchmark results",
    )
    report.add_argument("-o", "--output", default="report.html", help="the HTML file to write")
    report.add_argument("--title", default="", help="the page's title (default: llmgym report)")
    report.set_defaults(run=_cmd_report)


def _add_render_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``llmgym render``: an episode as a GIF."""
    render = commands.add_parser(
        "render", help="an episode of a trajectory file as an animated GIF ([report] extra)"
    )
    render.add_argument("trajectories", metavar="TRAJ", help="a trajectory file (JSONL)")
    render.add_argument(
        "--episode",
        type=int,
        default=0,
        help="which episode of the file, from 0 (the number `llmgym view` shows for this file "
        "alone)",
    )
    render.add_argument("-o", "--output", required=True, help="the GIF file to write")
    render.add_argument("--scale", type=int, default=4, help="enlarge frames this many times")
    render.add_argument("--frame-ms", type=int, default=150, help="milliseconds per frame")
    render.set_defaults(run=_cmd_render)


_COMMANDS = (
    _add_list_command,
    _add_play_command,
    _add_eval_command,
    _add_match_command,
    _add_collect_command,
    _add_envgen_command,
    _add_convert_command,
    _add_serve_command,
    _add_export_command,
    _add_view_command,
    _add_report_command,
    _add_render_command,
    _add_webarena_command,
)
"""The subcommands, in the order ``llmgym --help`` lists them."""


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default after its help, unless the help names it already or the
    default is nothing to show (``None``, ``False``)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default is None or action.default is False:
            return text
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``llmgym`` command."""
    parser = argparse.ArgumentParser(prog="llmgym", description="Text environments for LLM agents.")
    parser.add_argument("--version", action="version", version=f"llmgym {llmgym.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for add_command in _COMMANDS:
        add_command(commands)
    for command in commands.choices.values():
        command.formatter_class = _HelpFormatter
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``llmgym`` command."""
    args = build_parser().parse_args(argv)
    if getattr(args, "native_tools", False):
        args.react = False
    if "human" in _players(args):
        args.quiet = True  # a progress bar would garble the person's prompt
    code = _run(args)
    if code == EXIT_INTERRUPTED and _episodes_in_flight():
        # Each worker thread would play its episode to the end (minutes, with a slow model)
        # before the interpreter may exit; what finished is written already.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _run(args: argparse.Namespace) -> int:
    """Run the command; errors a user can fix, Ctrl-C and a closed pipe end in one line."""
    try:
        code = args.run(args)
        sys.stdout.flush()  # a reader that went away shows here, not at the interpreter's exit
        return code
    except KeyboardInterrupt:
        print("\nllmgym: interrupted", file=sys.stderr)
        if getattr(args, "on_interrupt", None):
            print(args.on_interrupt(args), file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `llmgym list | head -1`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (
        KeyError,
        ValueError,
        OSError,
        llmgym.MissingDependencyError,
        llmgym.ConfigError,
        RemoteEnvError,
        ChatError,
    ) as error:
        print(f"llmgym: error: {_message(error)}", file=sys.stderr)
        return 2


def _message(error: Exception) -> str:
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.strerror}: {error.filename}"
    return str(error)


def _players(args: argparse.Namespace) -> list[str]:
    """The agents a command line names (``--agent``, ``--agents``, ``--opponent``)."""
    named = [getattr(args, "agent", None), *(getattr(args, "agents", None) or ())]
    return [p for p in (*named, getattr(args, "opponent", None)) if p]


def _episodes_in_flight() -> bool:
    return any(
        thread.name.startswith(("llmgym-rollout", "llmgym-match")) and thread.is_alive()
        for thread in threading.enumerate()
    )


def _collect_interrupted(args: argparse.Namespace) -> str:
    return f"llmgym: the finished trajectories are in {args.output}; the same command continues"


class _NoteGiven(argparse.Action):
    """Stores the value like ``store`` and notes that the option was given: options that
    conflict with others only when given (not by their default) are checked with
    :func:`_given`."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.given = {*getattr(namespace, "given", ()), self.dest}


def _given(args: argparse.Namespace, dest: str) -> bool:
    return dest in getattr(args, "given", ())


_ENV_ID_HELP = (
    "an environment id in any case, with or without llmgym/ and the version (wordle, "
    "Wordle-v0), or a user environment's module:Class"
)


if __name__ == "__main__":
    sys.exit(main())
