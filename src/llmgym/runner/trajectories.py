"""Trajectories: one JSON-lines schema for every environment, and conversions for SFT trainers.

A file holds one finished episode per line (``schema: "llmgym.trajectory.v1"``)::

    {"schema": "llmgym.trajectory.v1", "env_id": "llmgym/Wordle-v0", "task_id": "eval/00003",
     "split": "eval", "seed": 3, "config": {...}, "instruction": "...", "system_prompt": "...",
     "agent": "oracle", "turns": [{"observation": "...", "reply": "Thought: ...\\nAction: crane",
     "thought": "...", "action": "crane", "reward": 0.0, "invalid_action": false,
     "format_error": false}, ...], "final_observation": "...", "success": true,
     "total_reward": 1.0, "terminated": true, "truncated": false, "usage": {...},
     "skills": [...], "error": null}

``observation`` in a turn is what the agent saw before replying (the environment's own text);
``reply`` is the agent's raw output and ``action`` what reached the environment (``null`` after a
format error). ``skills`` lists the environment's skills shown in the episode (e.g. Crafter's
achievements; see ``TextEnv.skills``). An episode recorded with frames says where they are in
``metadata["frames"]`` (a file beside this one; see :mod:`llmgym.runner.frames`).
:func:`to_messages` and :func:`to_conversations` rebuild
the exact prompts of the ReAct loop, in TRL's conversational format and in AgentGym's
``conversations`` format; :func:`to_agenttraj` makes the latter an AgentTraj record, whose item
id holds AgentGym's task index (:mod:`llmgym.integrations.agentgym`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from llmgym.integrations.agentgym import family_for_env, index_of, split_ids
from llmgym.runner.frames import FrameSource, encode_png, write_frames

__all__ = [
    "SCHEMA",
    "BadLine",
    "Trajectory",
    "TrajectoryBuilder",
    "Turn",
    "append_trajectory",
    "convert_file",
    "finished_episodes",
    "read_trajectories",
    "to_agenttraj",
    "to_conversations",
    "to_messages",
]

SCHEMA = "llmgym.trajectory.v1"
_FILE_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@dataclass
class Turn:
    """One agent turn."""

    observation: str
    reply: str
    thought: str = ""
    action: str | None = None
    reward: float = 0.0
    invalid_action: bool = False
    format_error: bool = False


@dataclass
class Trajectory:
    """One finished episode."""

    env_id: str
    task_id: str
    split: str
    seed: int | None = None
    config: dict[str, Any] = field(default_factory=dict)
    instruction: str = ""
    system_prompt: str = ""
    agent: str = ""
    turns: list[Turn] = field(default_factory=list)
    final_observation: str = ""
    success: bool = False
    total_reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    usage: dict[str, int] = field(default_factory=dict)
    skills: list[str] = field(default_factory=list)
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    """Facts about how the episode was run, e.g. ``horizon``: the turn limit and schedule of a
    :class:`~llmgym.wrappers.HorizonCurriculum`; ``frames``: where its recorded frames are."""
    schema: str = SCHEMA
    frames: list[bytes] = field(default_factory=list, repr=False, compare=False)
    """PNG frames taken while the episode was played (the reset's, then one per turn); not part
    of the JSON record: :func:`append_trajectory` writes them to the frames file."""

    @property
    def steps(self) -> int:
        """Turns whose action reached the environment."""
        return sum(not t.format_error for t in self.turns)

    @property
    def invalid_actions(self) -> int:
        return sum(t.invalid_action and not t.format_error for t in self.turns)

    @property
    def format_errors(self) -> int:
        return sum(t.format_error for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (without :attr:`frames`)."""
        return asdict(self, dict_factory=_without_frames)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trajectory:
        """Inverse of :meth:`to_dict`; rejects other schemas."""
        if data.get("schema") != SCHEMA:
            raise ValueError(f"not an {SCHEMA} record (schema={data.get('schema')!r})")
        fields = dict(data)
        fields["turns"] = [Turn(**turn) for turn in data.get("turns", [])]
        return cls(**fields)


def _without_frames(items: list[tuple[str, Any]]) -> dict[str, Any]:
    return {key: value for key, value in items if key != "frames"}


class TrajectoryBuilder:
    """Builds a :class:`Trajectory` from the reset and step results of a (wrapped) environment.

    Works at any wrapper level: it reads ``thought``, ``parsed_action``, ``format_error`` and
    ``env_observation`` from ``info`` when a ReAct wrapper put them there. With ``frames`` (see
    :func:`llmgym.runner.frames.frame_source`) it keeps a PNG frame of the reset and of every
    step in :attr:`Trajectory.frames`.
    """

    def __init__(self, env_id: str, agent: str = "", frames: FrameSource | None = None) -> None:
        self.env_id = env_id
        self.agent = agent
        self.trajectory: Trajectory | None = None
        self._pending_observation = ""
        self._frames = frames

    def _take_frame(self, trajectory: Trajectory) -> None:
        frame = self._frames() if self._frames is not None else None
        if frame is not None:
            trajectory.frames.append(encode_png(frame))

    def start(
        self,
        observation: str,
        info: Mapping[str, Any],
        *,
        seed: int | None,
        config: Mapping[str, Any],
    ) -> None:
        """Record a reset."""
        self.trajectory = Trajectory(
            env_id=self.env_id,
            task_id=str(info.get("task_id", "")),
            split=str(info.get("split", "")),
            seed=seed,
            config=dict(config),
            instruction=str(info.get("instruction", "")),
            system_prompt=str(info.get("system_prompt", "")),
            agent=self.agent,
        )
        if "horizon" in info:
            self.trajectory.metadata["horizon"] = dict(info["horizon"])
        self._pending_observation = str(info.get("env_observation", observation))
        self._take_frame(self.trajectory)

    def add(
        self,
        reply: str,
        observation: str,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: Mapping[str, Any],
    ) -> Trajectory | None:
        """Record a step; return the finished trajectory when the episode ended."""
        trajectory = self.trajectory
        if trajectory is None:
            raise RuntimeError("TrajectoryBuilder.add() before start()")
        format_error = bool(info.get("format_error", False))
        action = info.get("parsed_action", reply) if "parsed_action" in info else reply
        trajectory.turns.append(
            Turn(
                observation=self._pending_observation,
                reply=reply if isinstance(reply, str) else repr(reply),
                thought=str(info.get("thought") or ""),
                action=None
                if format_error
                else (action if isinstance(action, str) else repr(action)),
                reward=float(reward),
                invalid_action=bool(info.get("invalid_action", False)),
                format_error=format_error,
            )
        )
        trajectory.total_reward += float(reward)
        self._pending_observation = str(info.get("env_observation", observation))
        self._take_frame(trajectory)
        if not (terminated or truncated):
            return None
        trajectory.final_observation = self._pending_observation
        trajectory.success = bool(info.get("success", False))
        trajectory.terminated, trajectory.truncated = bool(terminated), bool(truncated)
        self.trajectory = None
        return trajectory


def append_trajectory(path: str | os.PathLike[str], trajectory: Trajectory) -> None:
    """Append one trajectory as a JSON line (safe across threads writing the same file); its
    :attr:`~Trajectory.frames`, if any, go to the frames file beside it
    (:func:`llmgym.runner.frames.write_frames`)."""
    key = os.path.abspath(path)
    with _LOCKS_GUARD:
        lock = _FILE_LOCKS.setdefault(key, threading.Lock())
    record = trajectory.to_dict()
    if trajectory.frames:
        record["metadata"]["frames"] = write_frames(key, record, trajectory.frames)
    line = json.dumps(record, ensure_ascii=False) + "\n"
    with lock:
        Path(key).parent.mkdir(parents=True, exist_ok=True)
        with open(key, "a", encoding="utf-8") as handle:
            handle.write(line)


@dataclass(frozen=True)
class BadLine:
    """A line of a trajectory file that holds no trajectory, and why."""

    number: int
    problem: str

    def __str__(self) -> str:
        return f"line {self.number}: {self.problem}"


def read_trajectories(
    path: str | os.PathLike[str], *, bad_lines: list[BadLine] | None = None
) -> Iterator[Trajectory]:
    """The trajectories of a JSON-lines file.

    A line that holds no trajectory raises ``ValueError`` naming the file and the line; with
    ``bad_lines`` it is skipped and recorded there instead. A truncated last line (a crash in
    the middle of a write) is skipped either way (and recorded in ``bad_lines``).
    """
    with open(path, encoding="utf-8") as handle:
        lines = handle.readlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield _parse_line(line)
        except ValueError as error:
            truncated = number == len(lines) and not line.endswith("\n")
            problem = "incomplete (the file ends in the middle of a record)" if truncated else error
            if bad_lines is not None:
                bad_lines.append(BadLine(number, str(problem)))
            elif not truncated:
                raise ValueError(f"{os.fspath(path)}, line {number}: {problem}") from None


def _parse_line(line: str) -> Trajectory:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg}, column {error.colno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__}, not a trajectory record")
    try:
        return Trajectory.from_dict(data)
    except TypeError as error:
        raise ValueError(f"not a trajectory record: {error}") from None


def finished_episodes(
    path: str | os.PathLike[str],
) -> dict[tuple[str, str, str, int | None], Trajectory]:
    """The episodes of a trajectory file that ended without an error, by ``(env_id, agent,
    task_id, seed)``: what a resumed run need not play again. A missing file has none."""
    if not os.path.exists(path):
        return {}
    return {
        (t.env_id, t.agent, t.task_id, t.seed): t
        for t in read_trajectories(path)
        if t.error is None
    }


def _first_user_message(trajectory: Trajectory, observation: str) -> str:
    task = f"Your task: {trajectory.instruction}\n\n" if trajectory.instruction else ""
    return f"{task}Observation:\n{observation}"


def to_messages(
    trajectory: Trajectory, *, include_system: bool = True
) -> dict[str, list[dict[str, str]]]:
    """``{"messages": [...]}`` in TRL's conversational format: system prompt, the task and first
    observation as the first user turn, then alternating assistant replies and observations."""
    messages: list[dict[str, str]] = []
    if include_system and trajectory.system_prompt:
        messages.append({"role": "system", "content": trajectory.system_prompt})
    for index, turn in enumerate(trajectory.turns):
        content = (
            _first_user_message(trajectory, turn.observation) if index == 0 else turn.observation
        )
        messages.append({"role": "user", "content": content})
        messages.append({"role": "assistant", "content": turn.reply})
    return {"messages": messages}


def to_conversations(trajectory: Trajectory) -> dict[str, Any]:
    """AgentGym's format: ``{"item_id", "conversations": [{"from", "loss", "value"}, ...]}`` —
    instructions from the human, an acknowledgement, then observations and replies (``loss`` true
    only on the agent's replies)."""
    conversations: list[dict[str, Any]] = [
        {"from": "human", "loss": None, "value": trajectory.system_prompt},
        {
            "from": "gpt",
            "loss": False,
            "value": "OK. I'll follow your instructions and try my best to solve the task.",
        },
    ]
    for index, turn in enumerate(trajectory.turns):
        value = (
            _first_user_message(trajectory, turn.observation) if index == 0 else turn.observation
        )
        conversations.append({"from": "human", "loss": None, "value": value})
        conversations.append({"from": "gpt", "loss": True, "value": turn.reply})
    item = trajectory.env_id.split("/")[-1].rsplit("-v", 1)[0].lower()
    return {"item_id": f"{item}_{trajectory.task_id}", "conversations": conversations}


def to_agenttraj(trajectory: Trajectory) -> dict[str, Any]:
    """One AgentTraj record: ``{"item_id": "<family>_<index>", "conversations": [{"from",
    "loss", "value"}, ...]}`` (the conversation of :func:`to_conversations`, the item id as
    AgentGym's loaders parse it: the family and AgentGym's integer task index)."""
    eval_ids, train_ids = split_ids(trajectory.env_id)
    index = index_of(trajectory.task_id, eval_ids, train_ids)
    record = to_conversations(trajectory)
    record["item_id"] = f"{family_for_env(trajectory.env_id)}_{index}"
    return record


def convert_file(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    fmt: str = "messages",
    successful_only: bool = False,
    bad_lines: list[BadLine] | None = None,
) -> int:
    """Write ``path``'s trajectories to ``out`` as JSON lines in ``fmt`` (``messages`` or
    ``conversations``), or for ``agentgym`` as one JSON array of AgentTraj records
    (:func:`to_agenttraj`); return how many were written.

    Lines that hold no trajectory raise ``ValueError`` (see :func:`read_trajectories`), or with
    ``bad_lines`` are skipped and recorded there; a file without a single trajectory raises
    ``ValueError`` either way, and then ``out`` is not written.
    """
    convert: Callable[[Trajectory], Any] = {
        "messages": to_messages,
        "conversations": to_conversations,
        "agentgym": to_agenttraj,
    }[fmt]
    trajectories = list(read_trajectories(path, bad_lines=bad_lines))
    if not trajectories:
        bad = bad_lines or []
        why = f"; {len(bad)} unreadable line(s), the first {bad[0]}" if bad else ""
        raise ValueError(f"{os.fspath(path)} holds no {SCHEMA} records{why}")
    records = [convert(t) for t in _filtered(trajectories, successful_only)]
    with open(out, "w", encoding="utf-8") as handle:
        if fmt == "agentgym":
            json.dump(records, handle, ensure_ascii=False, indent=1)
            handle.write("\n")
        else:
            handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return len(records)


def _filtered(trajectories: Iterable[Trajectory], successful_only: bool) -> Iterator[Trajectory]:
    return (t for t in trajectories if t.success or not successful_only)
