"""Environment designers: an LLM (any OpenAI-compatible endpoint), two offline rule-based
designers (the weakest skills; the weakest skills within the agent's reach), and a replay of a
recorded run. All share one interface::

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from llmgym.envgen.parsing import Design, ParsedReply, validate_overrides
from llmgym.envgen.prompts import GenericPrompt, prompt_style
from llmgym.envgen.spec import DesignSpec, SkillStats
from llmgym.errors import ChatError
from llmgym.llm import ChatClient, ChatReply

__all__ = [
    "Designer",
    "FrontierChoice",
    "FrontierDesigner",
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
    latest designs). Event kinds: ``prompt`` (its ``content``, and ``new_conversation`` when it
    starts one), ``reply`` (``content``, the ``model`` and ``params`` asked for, the server's
    ``finish_reason`` and ``usage``), ``validation``, ``error`` (a request that got no reply)
    and ``designs`` (one per call: the ``designs``, the ``stats`` they answer, and the
    designer's ``choices`` where it explains them)."""

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
        self.choices: dict[str, Any] | None = None
        """What the latest call chose and why (JSON), for designers that explain it."""
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
        extra = {"choices": self.choices} if self.choices is not None else {}
        self.run.record(
            "designs",
            designer=self.name,
            stats=stats.to_dict() if stats else None,
            designs=[d.to_dict() for d in designs],
            **extra,
        )
        return designs

    def _design(self, stats: SkillStats | None) -> list[Design]:
        raise NotImplementedError


class LLMDesigner(Designer):
    """Designs environments with an LLM, in a conversation across calls (as EnvGen does).

    ``prompt`` is the prompt style (:mod:`llmgym.envgen.prompts`): ``"envgen"``, EnvGen's
    published Crafter prompt and reply format (the default for Crafter), or ``"generic"``, built
    from any environment's config schema (the default for the others).

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
        prompt: str | GenericPrompt = "auto",
    ) -> None:
        super().__init__(spec, n=n, run=run)
        self.client = client
        self.repair_rounds = repair_rounds
        self.params = dict(params or {"temperature": 0.0})
        self.style = prompt if isinstance(prompt, GenericPrompt) else prompt_style(spec, prompt)
        self.messages = _conversation(self.run.events)  # continue a recorded conversation
        self._adapted = any(
            e["event"] == "designs" and e.get("stats") is not None for e in self.run.events
        )

    def _design(self, stats: SkillStats | None) -> list[Design]:
        restart = stats is not None and (
            self.style.new_conversation_at_first_update and not self._adapted
        )
        if not self.messages or restart:
            self.messages = []
            prompt = self.style.first(self.spec, self.n, stats, self.previous)
        elif stats is not None:
            prompt = self.style.update(self.spec, stats, self.previous, self.n)
        else:
            prompt = self.style.again(self.n)
        self._adapted = self._adapted or stats is not None
        best = ParsedReply()
        for round_number in range(self.repair_rounds + 1):
            self._ask(prompt)
            try:
                answer = self.client.complete(self.messages, **self.params)
            except ChatError as error:
                self.messages.pop()
                self.run.record("error", message=str(error))
                logger.warning("designer request failed: %s", error)
                break
            reply = answer.text
            self.messages.append({"role": "assistant", "content": reply})
            self.run.record(
                "reply",
                content=reply,
                model=getattr(self.client, "model", None),
                params=self.params,
                finish_reason=answer.finish_reason,
                usage={
                    "prompt_tokens": answer.usage.prompt_tokens,
                    "completion_tokens": answer.usage.completion_tokens,
                },
            )
            parsed = self.style.parse(reply, self.spec)
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
            prompt = self.style.repair(parsed.problems, self.n)
        if best.problems:
            logger.warning(
                "designer: dropped invalid values after repairs: %s", "; ".join(best.problems)
            )
        return (best.designs + best.partial)[: self.n]

    def _ask(self, prompt: str) -> None:
        new = not self.messages
        self.messages.append({"role": "user", "content": prompt})
        self.run.record("prompt", content=prompt, new_conversation=new)


def _conversation(events: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """The chat messages a recorded run ended with: prompts and replies in order, a prompt
    that starts a new conversation dropping what came before, and a prompt that got no reply
    (an ``error`` event, or the end of the log) left out."""
    messages: list[dict[str, str]] = []
    for event in events:
        if event["event"] == "prompt":
            if event.get("new_conversation"):
                messages = []
            messages.append({"role": "user", "content": event["content"]})
        elif event["event"] == "reply":
            messages.append({"role": "assistant", "content": event["content"]})
        elif event["event"] == "error" and messages and messages[-1]["role"] == "user":
            messages.pop()
    if messages and messages[-1]["role"] == "user":
        messages.pop()
    return messages


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


@dataclass(frozen=True)
class FrontierChoice:
    """What :class:`FrontierDesigner` chose in one call, and why.

    Attributes:
        targets: The skills practised, weakest first (ties in tech-tree order).
        waiting: Further skills within reach, left for later calls (more than ``n``).
        success: The agent's mean success (%) on every skill (0 when unmeasured).
        prerequisites: Each skill's prerequisites: the skills its recipe needs and those that
            yield what its practice world hands over (the spec's ``requirements`` and
            ``practice_requirements``).
        learnt: Skills at or above ``learnt_at``: dropped.
        blocked: Weak skills left out because a prerequisite is below ``reached_at``, with
            those prerequisites.
        learnt_at: Success (%) from which a skill counts as learnt.
        reached_at: Success (%) from which a prerequisite counts as achieved.
        all_learnt: Every skill is learnt, so the targets are simply the weakest skills.
    """

    targets: tuple[str, ...]
    waiting: tuple[str, ...]
    success: dict[str, float]
    prerequisites: dict[str, tuple[str, ...]]
    learnt: tuple[str, ...]
    blocked: dict[str, tuple[str, ...]]
    learnt_at: float
    reached_at: float
    all_learnt: bool = False

    def reason(self, skill: str) -> str:
        """``17% (needs make_wood_pickaxe 42%)``: a skill's success and its prerequisites'."""
        needs = self.prerequisites.get(skill, ())
        shown = ", ".join(f"{need} {self.success.get(need, 0.0):.0f}%" for need in needs)
        why = f"needs {shown}" if needs else "no prerequisites"
        return f"{self.success.get(skill, 0.0):.0f}% ({why})"

    def summary(self) -> str:
        """One line: the targets with their reasons, the learnt skills, the blocked ones."""
        kind = "every skill learnt; the weakest" if self.all_learnt else "practise"
        parts = [f"{kind}: " + ", ".join(f"{s} {self.reason(s)}" for s in self.targets)]
        if self.waiting:
            parts.append("also within reach: " + ", ".join(self.waiting))
        if self.learnt:
            parts.append(f"learnt (>= {self.learnt_at:.0f}%): " + ", ".join(self.learnt))
        if self.blocked:
            blocked = ", ".join(
                f"{skill} ({', '.join(f'{n} {self.success.get(n, 0.0):.0f}%' for n in needs)})"
                for skill, needs in self.blocked.items()
            )
            parts.append(f"out of reach (a prerequisite < {self.reached_at:.0f}%): {blocked}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The run log's and results' form: each target with its success and its
        prerequisites' success, the learnt skills, the blocked ones, thresholds, summary."""

        def rates(skills: Sequence[str]) -> dict[str, float]:
            return {skill: round(self.success.get(skill, 0.0), 2) for skill in skills}

        return {
            "rule": "weak skills whose prerequisites the agent achieves, weakest first",
            "learnt_at": self.learnt_at,
            "reached_at": self.reached_at,
            "all_learnt": self.all_learnt,
            "targets": [
                {
                    "skill": skill,
                    "success": round(self.success.get(skill, 0.0), 2),
                    "prerequisites": rates(self.prerequisites.get(skill, ())),
                }
                for skill in self.targets
            ],
            "waiting": list(self.waiting),
            "learnt": list(self.learnt),
            "blocked": {skill: rates(needs) for skill, needs in self.blocked.items()},
            "summary": self.summary(),
        }


class FrontierDesigner(Designer):
    """The offline designer that follows the agent's frontier, as the paper's LLM did: it
    practises the skills the agent is weak at (success below ``learnt_at``) *whose
    prerequisites it already achieves* (each at least ``reached_at``), weakest first, ties in
    tech-tree order, in the environment's ``skill_practice`` worlds (for Crafter: biome,
    rarities and starting inventory). A skill's prerequisites are those of its recipe (the
    spec's ``requirements``, Crafter's ``data.yaml``) and the skills that yield what its practice
    world hands over (``practice_requirements``: a world that starts the agent with a stone
    sword practises what comes after the sword). As the agent improves, a learnt skill is
    dropped and the skills it unlocks come in. With fewer targets than designs the targets are
    repeated (the designed steps stay on the frontier); once every skill is learnt it practises
    the weakest. The first call, knowing
    no success, counts every skill as 0%: the roots of the tech tree.

    Each call's :class:`FrontierChoice` is :attr:`choices` (JSON) and goes to the run log with
    the designs.
    """

    name = "frontier"

    def __init__(
        self,
        spec: DesignSpec,
        *,
        n: int = 4,
        run: RunLog | None = None,
        learnt_at: float = 50.0,
        reached_at: float = 20.0,
    ) -> None:
        super().__init__(spec, n=n, run=run)
        if not 0.0 < reached_at <= learnt_at <= 100.0:
            raise ValueError(
                f"reached_at={reached_at}, learnt_at={learnt_at}: "
                "need 0 < reached_at <= learnt_at <= 100"
            )
        if not spec.practice:
            raise ValueError(
                f"{spec.env_id} declares no skill_practice configs for the frontier designer to "
                "use; the 'offline' designer scales its knobs instead"
            )
        spec.depths()  # the tech tree must be sound
        self.learnt_at = learnt_at
        self.reached_at = reached_at

    def choose(self, stats: SkillStats | None) -> FrontierChoice:
        """The frontier for ``stats`` (``None``: nothing measured yet, every skill at 0%)."""
        rates = stats.rates if stats is not None else {}
        order = self.spec.tech_tree_order()
        skills = [skill for skill in order if skill in self.spec.practice]
        success = {skill: rates.get(skill, (0.0, 0.0))[0] for skill in self.spec.skills}
        needs = {
            skill: tuple(
                dict.fromkeys(
                    [
                        *self.spec.requirements.get(skill, ()),
                        *self.spec.practice_requirements.get(skill, ()),
                    ]
                )
            )
            for skill in self.spec.skills
        }
        learnt = tuple(s for s in skills if success[s] >= self.learnt_at)
        targets, blocked = [], {}
        for skill in skills:
            if skill in learnt:
                continue
            unmet = tuple(n for n in needs[skill] if success[n] < self.reached_at)
            if unmet:
                blocked[skill] = unmet
            else:
                targets.append(skill)
        all_learnt = not targets
        if all_learnt:
            targets = skills
        targets.sort(key=lambda skill: success[skill])  # stable: tech-tree order among ties
        return FrontierChoice(
            targets=tuple(targets[: self.n]),
            waiting=tuple(targets[self.n :]),
            success={s: success[s] for s in self.spec.skills},
            prerequisites={s: needs[s] for s in self.spec.skills if needs[s]},
            learnt=learnt,
            blocked=blocked,
            learnt_at=self.learnt_at,
            reached_at=self.reached_at,
            all_learnt=all_learnt,
        )

    def _design(self, stats: SkillStats | None) -> list[Design]:
        choice = self.choose(stats)
        self.choices = choice.to_dict()
        designs = []
        for k in range(self.n):
            skill = choice.targets[k % len(choice.targets)]
            if stats is None:
                purpose = f"Practise {skill}: nothing measured yet; it needs no other skill."
            else:
                purpose = f"Practise {skill}: the agent succeeds {choice.reason(skill)}."
            designs.append(Design(purpose, dict(self.spec.practice[skill])))
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
    exactly, whatever designer produced it, without a model. ``run_folder`` is the designer's
    folder (``events.jsonl``) or a training run's folder holding it as ``designer/``. Past the
    recorded calls it keeps the last designs. :attr:`choices` and :attr:`source` (the
    designer that made the designs) come from the record."""

    name = "replay"

    def __init__(self, spec: DesignSpec, run_folder: str | os.PathLike[str], *, n: int = 4) -> None:
        super().__init__(spec, n=n, run=RunLog(None))
        folder = Path(run_folder)
        if not (folder / "events.jsonl").exists() and (folder / "designer").is_dir():
            folder = folder / "designer"
        if not (folder / "events.jsonl").exists():
            raise ValueError(f"{run_folder} holds no recorded design run (no events.jsonl)")
        self.recorded = [e for e in RunLog(folder).events if e["event"] == "designs"]
        if not self.recorded:
            raise ValueError(f"{run_folder} holds no recorded designs")
        self.source = str(self.recorded[0].get("designer", "unknown"))
        self._call = 0

    def _design(self, stats: SkillStats | None) -> list[Design]:
        event = self.recorded[min(self._call, len(self.recorded) - 1)]
        if stats is not None and event.get("stats") not in (None, stats.to_dict()):
            logger.warning("replay: call %d was recorded with different stats", self._call)
        self._call += 1
        self.choices = event.get("choices")
        return [Design.from_dict(d) for d in event["designs"]]


DESIGNERS = "offline, frontier, openai:MODEL, replay:FOLDER"
"""The designers :func:`make_designer` knows, as the command line names them."""


def make_designer(
    spec: DesignSpec,
    llm: str = "offline",
    *,
    n: int = 4,
    run_folder: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    repair_rounds: int = 2,
    prompt: str = "auto",
) -> Designer:
    """``offline``, ``frontier``, ``openai:MODEL`` or ``replay:FOLDER``, as the command line
    names them. ``prompt`` is the LLM designer's prompt style (``auto``: EnvGen's for Crafter,
    ``generic`` otherwise); the API root and key default to ``$OPENAI_BASE_URL`` and
    ``$OPENAI_API_KEY``."""
    if llm == "offline":
        return RuleBasedDesigner(spec, n=n, run=RunLog(run_folder))
    if llm == "frontier":
        return FrontierDesigner(spec, n=n, run=RunLog(run_folder))
    if llm.startswith("replay:"):
        return ReplayDesigner(spec, llm.split(":", 1)[1], n=n)
    if llm.startswith("openai:") and len(llm) > len("openai:"):
        client = ChatClient(llm.split(":", 1)[1], base_url=base_url, api_key=api_key)
        return LLMDesigner(
            spec,
            client,
            n=n,
            repair_rounds=repair_rounds,
            run=RunLog(run_folder),
            prompt=prompt,
        )
    raise ValueError(f"unknown designer {llm!r}; choose from: {DESIGNERS}")
