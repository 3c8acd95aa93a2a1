"""Environment designers: an LLM (any OpenAI-compatible endpoint), an offline rule-based
designer, and a replay of a recorded run. All share one interface::

    designs = designer.propose()              # the first N environments
    designs = designer.propose(stats)         # adapted to the agent's per-skill success

Every call records its prompt, reply, validation and designs in a run folder
(``events.jsonl``), so a run can be inspected and replayed exactly.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from llmgym.envgen.parsing import Design, ParsedReply, parse_designs, validate_overrides
from llmgym.envgen.spec import DesignSpec, SkillStats
from llmgym.errors import ChatError
from llmgym.llm import ChatClient, ChatReply

__all__ = [
    "Designer",
    "LLMDesigner",
    "ReplayDesigner",
    "RuleBasedDesigner",
    "RunLog",
    "make_designer",
]

logger = logging.getLogger(__name__)


class ChatCompleter(Protocol):
    """What a designer needs of a chat client (:class:`~llmgym.llm.ChatClient` fits)."""

    def complete(self, messages: Sequence[dict[str, Any]], **params: Any) -> ChatReply: ...


class RunLog:
    """The run folder: ``events.jsonl`` (one JSON object per event) and ``designs.json`` (the
    latest designs). Event kinds: ``prompt``, ``reply``, ``validation``, ``error``, ``designs``."""

    def __init__(self, folder: str | os.PathLike[str] | None) -> None:
        self.folder = Path(folder) if folder is not None else None
        self.events: list[dict[str, Any]] = []
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            if self.path.exists():
                self.events = [
                    json.loads(line) for line in self.path.read_text().splitlines() if line.strip()
                ]

    @property
    def path(self) -> Path:
        assert self.folder is not None
        return self.folder / "events.jsonl"

    @property
    def calls(self) -> int:
        """Design calls recorded so far."""
        return sum(e["event"] == "designs" for e in self.events)

    def record(self, event: str, **data: Any) -> None:
        entry = {"event": event, "call": self.calls, **data}
        self.events.append(entry)
        if self.folder is not None:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
            if event == "designs":
                (self.folder / "designs.json").write_text(
                    json.dumps(data["designs"], indent=2) + "\n"
                )


class Designer:
    """Base class: :meth:`propose` returns ``n`` designs; the previous ones are kept in
    :attr:`previous` and returned again when a call yields nothing usable."""

    name = "designer"

    def __init__(self, spec: DesignSpec, *, n: int = 4, run: RunLog | None = None) -> None:
        if n < 1:
            raise ValueError(f"n={n}: a designer proposes at least one environment")
        self.spec = spec
        self.n = n
        self.run = run or RunLog(None)
        self.previous: list[Design] = []
        for event in self.run.events:  # continue a recorded run
            if event["event"] == "designs":
                self.previous = [Design.from_dict(d) for d in event["designs"]]

    def propose(self, stats: SkillStats | None = None) -> list[Design]:
        """The next designs (adapted to ``stats`` when given)."""
        designs = self._design(stats)
        if not designs:
            logger.warning(
                "%s proposed no usable environment; keeping the previous ones", self.name
            )
            designs = list(self.previous)
        self.previous = designs
        self.run.record(
            "designs",
            designer=self.name,
            stats=stats.to_dict() if stats else None,
            designs=[d.to_dict() for d in designs],
        )
        return designs

    def _design(self, stats: SkillStats | None) -> list[Design]:
        raise NotImplementedError


def initial_prompt(spec: DesignSpec, n: int, stats: SkillStats | None = None) -> str:
    """The first request to an LLM designer."""
    parts = [
        f'You design training environments for an AI agent that is learning "{spec.name}". '
        f"Your job is to design {n} environments that teach the agent the skills it lacks. They "
        "should not be trivially easy: put the agent in situations where it can practise and "
        "learn on its own.",
        f"About the game:\n{spec.description}",
        "The skills the agent has to learn:\n" + "\n".join(f"- {skill}" for skill in spec.skills),
        "You control these parameters. Leave a parameter out to keep its default:\n"
        + "\n".join(spec.parameter_lines()),
    ]
    if spec.notes:
        parts.append(f"Rules of the game that a designer must respect:\n{spec.notes}")
    if stats is not None:
        parts.append(
            "How well the agent does in the original game now (success rate, mean +/- std):\n"
            + "\n".join(stats.lines())
        )
    parts.append(_format_request(n))
    return "\n\n".join(parts)


def update_prompt(spec: DesignSpec, stats: SkillStats, previous: Sequence[Design], n: int) -> str:
    """The adaptation request, sent in the same conversation after a training cycle."""
    shown = json.dumps({"environments": [d.to_dict() for d in previous]}, indent=1)
    return "\n\n".join(
        [
            "The agent trained in your environments. In the original game it now reaches these "
            "success rates (mean +/- std over evaluation runs):\n" + "\n".join(stats.lines()),
            f"The environments it trained in were:\n```json\n{shown}\n```",
            f"Design {n} new environments that target what the agent still cannot do. In each "
            "purpose, say which of these scores you used. Keep to the parameters and rules above.",
            _format_request(n),
        ]
    )


def repair_prompt(problems: Sequence[str], n: int) -> str:
    """Sent back when a reply had invalid environments."""
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        f"Some of those environments are invalid:\n{listed}\n\n"
        f"Send all {n} environments again, corrected. {_format_request(n)}"
    )


def _format_request(n: int) -> str:
    example = {
        "environments": [
            {
                "purpose": "<one sentence: what this environment teaches>",
                "config": {"<parameter>": "<value>"},
            }
        ]
    }
    return (
        f"Reply with one JSON object holding exactly {n} environments, in a ```json block, "
        "shaped like this:\n"
        f"```json\n{json.dumps(example, indent=1)}\n```"
    )


class LLMDesigner(Designer):
    """Designs environments with an LLM, in one conversation across calls (as EnvGen does).

    Invalid or out-of-range values are sent back with the exact errors for up to
    ``repair_rounds`` rounds; what is still invalid is then dropped with a warning (designs keep
    their valid values). If nothing usable remains — or the endpoint fails — the previous
    designs are kept. Nothing the model writes can raise out of :meth:`propose`.
    """

    name = "llm"

    def __init__(
        self,
        spec: DesignSpec,
        client: ChatCompleter,
        *,
        n: int = 4,
        repair_rounds: int = 2,
        run: RunLog | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(spec, n=n, run=run)
        self.client = client
        self.repair_rounds = repair_rounds
        self.params = dict(params or {"temperature": 0.0})
        self.messages: list[dict[str, str]] = []
        for event in self.run.events:  # continue a recorded conversation
            if event["event"] == "prompt":
                self.messages.append({"role": "user", "content": event["content"]})
            elif event["event"] == "reply":
                self.messages.append({"role": "assistant", "content": event["content"]})
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages.pop()  # a request that never got an answer

    def _design(self, stats: SkillStats | None) -> list[Design]:
        if not self.messages:
            prompt = initial_prompt(self.spec, self.n, stats)
        elif stats is not None:
            prompt = update_prompt(self.spec, stats, self.previous, self.n)
        else:
            prompt = f"Design {self.n} different environments. {_format_request(self.n)}"
        best = ParsedReply()
        for round_number in range(self.repair_rounds + 1):
            self._ask(prompt)
            try:
                reply = self.client.complete(self.messages, **self.params).text
            except ChatError as error:
                self.messages.pop()
                self.run.record("error", message=str(error))
                logger.warning("designer request failed: %s", error)
                break
            self.messages.append({"role": "assistant", "content": reply})
            self.run.record("reply", content=reply)
            parsed = parse_designs(reply, self.spec.config_class)
            self.run.record(
                "validation",
                round=round_number,
                valid=len(parsed.designs),
                problems=parsed.problems,
            )
            if len(parsed.designs) + len(parsed.partial) >= len(best.designs) + len(best.partial):
                best = parsed
            if not parsed.problems:
                break
            prompt = repair_prompt(parsed.problems, self.n)
        if best.problems:
            logger.warning(
                "designer: dropped invalid values after repairs: %s", "; ".join(best.problems)
            )
        return (best.designs + best.partial)[: self.n]

    def _ask(self, prompt: str) -> None:
        self.messages.append({"role": "user", "content": prompt})
        self.run.record("prompt", content=prompt)


class RuleBasedDesigner(Designer):
    """The offline designer (and the curriculum baseline EnvGen compares with): it reads the same
    per-skill success rates and proposes the environment's ``skill_practice`` configs for the
    weakest skills, equally weak ones in turn across calls, in tech-tree order
    (:meth:`DesignSpec.tech_tree_order`: the first call, knowing no rates, practises the roots
    of the tree and the way down it). Where the environment declares no practice configs, it
    scales the numeric knobs away from their defaults — smaller while the agent mostly fails,
    larger once it mostly succeeds — a generic size curriculum."""

    name = "offline"

    def _design(self, stats: SkillStats | None) -> list[Design]:
        measured = stats is not None
        stats = stats or SkillStats({})
        # Equally weak skills are taken in turn across calls, so that a run where many skills
        # sit at 0% practises all of them rather than the first few forever.
        skills = [skill for skill in self.spec.tech_tree_order() if skill in self.spec.practice]
        if skills:
            shift = (self.run.calls * self.n) % len(skills)
            skills = skills[shift:] + skills[:shift]
        practised = stats.weakest(skills)
        designs = []
        for skill in practised[: self.n]:
            mean, std = stats.rates.get(skill, (0.0, 0.0))
            purpose = f"Practise {skill}."
            if measured:
                purpose = (
                    f"Practise {skill}: the agent succeeds {mean:.0f}% +/- {std:.0f}% of the time."
                )
            designs.append(Design(purpose, dict(self.spec.practice[skill])))
        missing = self.n - len(designs)
        if missing:
            overall = (
                sum(m for m, _ in stats.rates.values()) / len(stats.rates) if stats.rates else 0.0
            )
            harder = overall >= 50.0
            for k in range(1, missing + 1):
                factor = 1.0 + k / (missing + 1) if harder else 1.0 - k / (missing + 2)
                way = "larger (harder)" if harder else "smaller (easier)"
                purpose = (
                    f"A {way} variant, x{factor:.2f} on every size knob; "
                    f"overall success {overall:.0f}%."
                )
                designs.append(Design(purpose, _scaled_config(self.spec, factor)))
        return designs


def _scaled_config(spec: DesignSpec, factor: float) -> dict[str, Any]:
    """Every numeric knob with a non-zero default times ``factor``, clipped to its range."""
    config: dict[str, Any] = {}
    for name, field in spec.schema["properties"].items():
        default = field.get("default")
        if isinstance(default, bool) or not isinstance(default, (int, float)) or default == 0:
            continue
        low, high = field.get("minimum", float("-inf")), field.get("maximum", float("inf"))
        value = min(high, max(low, default * factor))
        config[name] = round(value) if field.get("type") == "integer" else round(value, 3)
    clean, _ = validate_overrides(spec.config_class, config)
    return clean


class ReplayDesigner(Designer):
    """Returns the designs recorded in a run folder, call by call: re-runs a recorded run
    exactly, whatever designer produced it. Past the recorded calls it keeps the last designs."""

    name = "replay"

    def __init__(self, spec: DesignSpec, run_folder: str | os.PathLike[str], *, n: int = 4) -> None:
        super().__init__(spec, n=n, run=RunLog(None))
        recorded = RunLog(run_folder).events
        self.recorded = [e for e in recorded if e["event"] == "designs"]
        if not self.recorded:
            raise ValueError(f"{run_folder} holds no recorded designs")
        self._call = 0

    def _design(self, stats: SkillStats | None) -> list[Design]:
        event = self.recorded[min(self._call, len(self.recorded) - 1)]
        if stats is not None and event.get("stats") not in (None, stats.to_dict()):
            logger.warning("replay: call %d was recorded with different stats", self._call)
        self._call += 1
        return [Design.from_dict(d) for d in event["designs"]]


def make_designer(
    spec: DesignSpec,
    llm: str = "offline",
    *,
    n: int = 4,
    run_folder: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    repair_rounds: int = 2,
) -> Designer:
    """``offline``, ``openai:MODEL`` or ``replay:FOLDER``, as the command line names them."""
    if llm == "offline":
        return RuleBasedDesigner(spec, n=n, run=RunLog(run_folder))
    if llm.startswith("replay:"):
        return ReplayDesigner(spec, llm.split(":", 1)[1], n=n)
    if llm.startswith("openai:") and len(llm) > len("openai:"):
        client = ChatClient(llm.split(":", 1)[1], base_url=base_url, api_key=api_key)
        return LLMDesigner(spec, client, n=n, repair_rounds=repair_rounds, run=RunLog(run_folder))
    raise ValueError(f"unknown designer {llm!r}; choose from: offline, openai:MODEL, replay:FOLDER")
