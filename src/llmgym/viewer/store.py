"""The viewer's index: every episode of the files it was given, filtered and paged in memory.

Loading reads each trajectory file once and keeps, per episode, the fields the list filters on
and where its line is in the file (byte offset and length); an opened episode is read again from
there. A results JSON (``llmgym eval --json``) adds its per-episode records, or, when the
trajectory file it names (``"trajectories"``) exists, that file's full episodes.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmgym.runner.frames import read_frames
from llmgym.runner.trajectories import SCHEMA
from llmgym.viewer.records import (
    Field,
    checked,
    count,
    finite,
    flag,
    integer,
    load_json,
    number,
    optional,
    problem_line,
    text,
    trajectory_record,
)

__all__ = ["CompareRow", "Episode", "EpisodeFilter", "Run", "TrajectoryStore"]

MAX_WARNINGS = 100
"""The warnings a run keeps (a file of a million corrupt lines counts the rest)."""
OUTCOMES = ("a_only", "b_only", "both", "neither", "missing")
"""How a task of a comparison came out: solved by run A alone, by B alone, by both, by neither,
or played by one run only."""


_RESULT = {
    "env_id": Field(text, "", "text"),
    "agent": Field(text, "", "text"),
    "split": Field(text, "", "text"),
    "per_episode": Field(lambda value: isinstance(value, list), list, "a list of episodes"),
}
_PER_EPISODE = {
    "task_id": Field(text, "", "text"),
    "seed": Field(optional(integer), None, "a whole number or null"),
    "success": Field(flag, False, "true or false"),
    "turns": Field(count, 0, "a count"),
    "invalid_actions": Field(count, 0, "a count"),
    "format_errors": Field(count, 0, "a count"),
    "reward": Field(number, 0.0, "a finite number"),
    "error": Field(optional(text), None, "text or null"),
}


@dataclass
class Run:
    """One file the viewer was given (a trajectory file, or a results file)."""

    id: int
    name: str
    path: Path
    kind: str
    """``"trajectories"`` (full episodes) or ``"results"`` (per-episode summaries only)."""
    episodes: list[int] = field(default_factory=list)
    skipped_lines: int = 0
    warnings: list[str] = field(default_factory=list)
    """What was skipped or ignored, and where (``"line 7: ..."``): the first
    :data:`MAX_WARNINGS` of :attr:`warning_count`."""
    warning_count: int = 0

    def warn(self, message: str) -> None:
        self.warning_count += 1
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(message)

    def to_dict(self, store: TrajectoryStore) -> dict[str, Any]:
        entries = [store.episodes[i] for i in self.episodes]
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "episodes": len(entries),
            "successes": sum(e.success for e in entries),
            "env_ids": sorted({e.env_id for e in entries}),
            "agents": sorted({e.agent for e in entries}),
            "skipped_lines": self.skipped_lines,
        }


@dataclass(slots=True)
class Episode:
    """What the list shows and filters on, and where the full record is."""

    id: int
    run: int
    env_id: str
    agent: str
    split: str
    task_id: str
    seed: int | None
    success: bool
    turns: int
    invalid_actions: int
    format_errors: int
    reward: float
    error: str | None
    instruction: str
    frames: int
    offset: int = -1
    length: int = 0
    summary: dict[str, Any] | None = None
    """The results file's record, for an episode without turns."""

    def to_row(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "run": self.run,
            "env_id": self.env_id,
            "agent": self.agent,
            "split": self.split,
            "task_id": self.task_id,
            "seed": self.seed,
            "success": self.success,
            "turns": self.turns,
            "invalid_actions": self.invalid_actions,
            "format_errors": self.format_errors,
            "reward": self.reward,
            "error": self.error,
            "instruction": self.instruction[:200],
            "frames": self.frames,
            "has_turns": self.offset >= 0,
        }


@dataclass(frozen=True)
class EpisodeFilter:
    """The list's filters; ``None`` (or ``""``) lets everything through."""

    run: int | None = None
    env_id: str = ""
    agent: str = ""
    split: str = ""
    success: bool | None = None
    min_invalid: int | None = None
    max_invalid: int | None = None
    min_turns: int | None = None
    max_turns: int | None = None
    search: str = ""

    def __call__(self, episode: Episode) -> bool:
        return (
            (self.run is None or episode.run == self.run)
            and (not self.env_id or episode.env_id == self.env_id)
            and (not self.agent or episode.agent == self.agent)
            and (not self.split or episode.split == self.split)
            and (self.success is None or episode.success == self.success)
            and (self.min_invalid is None or episode.invalid_actions >= self.min_invalid)
            and (self.max_invalid is None or episode.invalid_actions <= self.max_invalid)
            and (self.min_turns is None or episode.turns >= self.min_turns)
            and (self.max_turns is None or episode.turns <= self.max_turns)
            and (not self.search or self.search.lower() in episode.instruction.lower())
        )


@dataclass
class CompareRow:
    """One task of a comparison: each run's first episode of it."""

    env_id: str
    task_id: str
    a: Episode | None
    b: Episode | None

    @property
    def outcome(self) -> str:
        if self.a is None or self.b is None:
            return "missing"
        if self.a.success and self.b.success:
            return "both"
        if self.a.success:
            return "a_only"
        return "b_only" if self.b.success else "neither"

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "task_id": self.task_id,
            "outcome": self.outcome,
            "a": self.a.to_row() if self.a else None,
            "b": self.b.to_row() if self.b else None,
        }


class TrajectoryStore:
    """The episodes of trajectory files (JSONL) and results files (JSON), indexed.

    Args:
        paths: The files to show. A path that is no file, or a ``.json`` file that is not a
            results file, raises ``ValueError`` naming it. Within the files, a line that holds
            no trajectory is skipped and a field of the wrong type is ignored (its default
            shown): each run's :attr:`Run.warnings` say which, and where.
    """

    def __init__(self, paths: Sequence[str | os.PathLike[str]]) -> None:
        if not paths:
            raise ValueError("name at least one trajectory file (JSONL) or results file (JSON)")
        self.runs: list[Run] = []
        self.episodes: list[Episode] = []
        self._frame_cache: OrderedDict[int, list[bytes]] = OrderedDict()
        self._lock = threading.Lock()
        loaded: set[Path] = set()
        for given in paths:
            path = Path(given).resolve()
            if path in loaded:
                continue
            loaded.add(path)
            if not path.is_file():
                raise ValueError(f"{given}: no such file")
            if path.suffix.lower() != ".json":
                self._load_trajectories(path, name=path.name)
                continue
            data = _read_results(path)
            named = _results_trajectories(path, data)
            if named is None:
                self._load_results(path, data)
            elif named not in loaded:
                loaded.add(named)
                self._load_trajectories(named, name=path.name)

    # ------------------------------------------------------------------ loading
    def _new_run(self, path: Path, name: str, kind: str) -> Run:
        run = Run(id=len(self.runs), name=name, path=path, kind=kind)
        self.runs.append(run)
        return run

    def _add(self, run: Run, **fields: Any) -> None:
        episode = Episode(id=len(self.episodes), run=run.id, **fields)
        self.episodes.append(episode)
        run.episodes.append(episode.id)

    def _load_trajectories(self, path: Path, name: str) -> None:
        run = self._new_run(path, name, "trajectories")
        offset = 0
        with open(path, "rb") as handle:
            for line_number, line in enumerate(handle, start=1):
                start, offset = offset, offset + len(line)
                if not line.strip():
                    continue
                try:
                    record, problems = trajectory_record(line)
                except ValueError as error:
                    run.skipped_lines += 1
                    run.warn(f"line {line_number}: {error} (skipped)")
                    continue
                if problems:
                    run.warn(f"line {line_number}: {problem_line(problems)} (ignored)")
                turns = record["turns"]
                self._add(
                    run,
                    env_id=record["env_id"],
                    agent=record["agent"],
                    split=record["split"],
                    task_id=record["task_id"],
                    seed=record["seed"],
                    success=record["success"],
                    turns=len(turns),
                    invalid_actions=sum(
                        t["invalid_action"] and not t["format_error"] for t in turns
                    ),
                    format_errors=sum(t["format_error"] for t in turns),
                    reward=float(record["total_reward"]),
                    error=record["error"],
                    instruction=record["instruction"],
                    frames=record["metadata"].get("frames", {}).get("count", 0),
                    offset=start,
                    length=len(line),
                )
        if not run.episodes:
            run.warn(f"no line holds an {SCHEMA} record: nothing to show")

    def _load_results(self, path: Path, data: Mapping[str, Any]) -> None:
        run = self._new_run(path, path.name, "results")
        for position, result in enumerate(data["results"]):
            where = f"results[{position}]"
            if not isinstance(result, dict):
                run.warn(f"{where}: not an object (skipped)")
                continue
            problems: list[str] = []
            result = checked(result, _RESULT, problems)
            for index, entry in enumerate(result["per_episode"]):
                if not isinstance(entry, dict):
                    problems.append(f"'per_episode[{index}]' is not an object")
                    continue
                record = checked(entry, _PER_EPISODE, problems, f"per_episode[{index}].")
                self._add(
                    run,
                    env_id=result["env_id"],
                    agent=result["agent"],
                    split=result["split"],
                    task_id=record["task_id"],
                    seed=record["seed"],
                    success=record["success"],
                    turns=record["turns"],
                    invalid_actions=record["invalid_actions"],
                    format_errors=record["format_errors"],
                    reward=float(record["reward"]),
                    error=record["error"],
                    instruction="",
                    frames=0,
                    summary=record,
                )
            if problems:
                run.warn(f"{where}: {problem_line(problems)} (ignored)")

    # ------------------------------------------------------------------ queries
    def facets(self) -> dict[str, list[str]]:
        """The values each filter can take."""
        return {
            "env_ids": sorted({e.env_id for e in self.episodes}),
            "agents": sorted({e.agent for e in self.episodes}),
            "splits": sorted({e.split for e in self.episodes}),
        }

    def query(
        self, keep: EpisodeFilter, offset: int = 0, limit: int = 50
    ) -> tuple[int, list[Episode]]:
        """The number of episodes ``keep`` lets through and the page ``[offset, offset +
        limit)`` of them, in file order."""
        matched = [e for e in self.episodes if keep(e)]
        return len(matched), matched[offset : offset + limit]

    def episode(self, episode_id: int) -> dict[str, Any]:
        """An episode's full record (its results summary for a results file), with ``id``,
        ``run`` and ``frames`` (their count) added.

        Raises:
            KeyError: no episode has that id.
        """
        entry = self._entry(episode_id)
        if entry.offset < 0:
            record: dict[str, Any] = {
                "env_id": entry.env_id,
                "agent": entry.agent,
                "split": entry.split,
                "task_id": entry.task_id,
                "seed": entry.seed,
                "success": entry.success,
                "summary": finite(entry.summary),
                "turns": [],
            }
        else:
            with open(self.runs[entry.run].path, "rb") as handle:
                handle.seek(entry.offset)
                line = handle.read(entry.length)
            try:
                record = finite(trajectory_record(line)[0])
            except ValueError:
                raise ValueError(
                    f"episode {episode_id}: its line of {self.runs[entry.run].name} changed since "
                    "the viewer read it; restart the viewer"
                ) from None
        return {**record, "id": entry.id, "run": entry.run, "frames": entry.frames}

    def frame(self, episode_id: int, index: int) -> bytes:
        """Frame ``index`` of an episode, PNG bytes.

        Raises:
            KeyError: no such episode or frame.
        """
        entry = self._entry(episode_id)
        if not 0 <= index < entry.frames:
            raise KeyError(f"episode {episode_id} has no frame {index}")
        with self._lock:
            frames = self._frame_cache.get(episode_id)
            if frames is not None:
                self._frame_cache.move_to_end(episode_id)
        if frames is None:
            record = self.episode(episode_id)
            frames = read_frames(self.runs[entry.run].path, record.get("metadata") or {})
            with self._lock:
                self._frame_cache[episode_id] = frames
                while len(self._frame_cache) > 16:
                    self._frame_cache.popitem(last=False)
        if index >= len(frames):
            raise KeyError(f"episode {episode_id} has no frame {index}")
        return frames[index]

    def compare(self, run_a: int, run_b: int) -> list[CompareRow]:
        """The tasks either run played, keyed by ``(env_id, task_id)``, in run A's order then
        run B's; each run's first episode of the task.

        Raises:
            KeyError: no run has one of the ids.
        """
        firsts = [self._first_by_task(self._run(run).episodes) for run in (run_a, run_b)]
        keys = list(dict.fromkeys([*firsts[0], *firsts[1]]))
        return [CompareRow(*key, firsts[0].get(key), firsts[1].get(key)) for key in keys]

    def _first_by_task(self, ids: Iterable[int]) -> dict[tuple[str, str], Episode]:
        firsts: dict[tuple[str, str], Episode] = {}
        for i in ids:
            episode = self.episodes[i]
            firsts.setdefault((episode.env_id, episode.task_id), episode)
        return firsts

    def _entry(self, episode_id: int) -> Episode:
        if not 0 <= episode_id < len(self.episodes):
            raise KeyError(f"no episode {episode_id}")
        return self.episodes[episode_id]

    def _run(self, run_id: int) -> Run:
        if not 0 <= run_id < len(self.runs):
            raise KeyError(f"no run {run_id}")
        return self.runs[run_id]


def _read_results(path: Path) -> Mapping[str, Any]:
    """A results file: one JSON object with a ``results`` list (``llmgym eval --json``)."""
    try:
        data = load_json(path.read_bytes())
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError(f"{path}: not a results file of `llmgym eval --json` (no 'results' list)")
    return data


def _results_trajectories(path: Path, data: Mapping[str, Any]) -> Path | None:
    """The trajectory file a results file names, where it exists (a relative name is looked
    up beside the results file, then from the working directory)."""
    named = data.get("trajectories")
    if not isinstance(named, str) or not named:
        return None
    for candidate in (path.parent / named, Path(named)):
        try:
            if candidate.is_file():
                return candidate.resolve()
        except (OSError, ValueError):  # a name too long for the system, a NUL byte
            return None
    return None
