"""AgentGym's progress rate (AgentBoard's), for ``reward="progress"``: the share of a task's
subgoals met so far, where the subgoals are the results of the calls on the oracle's path and,
for a question, its answer."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from llmgym.envs.tools.answers import Answer, answers_match, holds_answer

__all__ = ["Progress", "canonical_json"]

_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
_ANSWER_SUBGOAL = "\x00answer"


def canonical_json(value: Any) -> str:
    """``value`` as JSON with sorted keys: how results and calls are compared."""
    return _CANONICAL.encode(value)


@dataclass
class Progress:
    """The progress of one episode: its subgoals (the canonical JSON of each distinct result on
    the oracle's path, and a marker for a question's answer), those met so far and the rate
    paid out so far (a running maximum)."""

    subgoals: list[str]
    answer: Answer | None
    tolerances: tuple[float, float]
    """``(abs_tolerance, rel_tolerance)`` for comparing numbers with the answer."""
    met: set[str] = field(default_factory=set)
    paid: float = 0.0

    @classmethod
    def along(
        cls, path_results: Iterable[Any], answer: Answer | None, tolerances: tuple[float, float]
    ) -> Progress:
        """The progress of an episode whose oracle path gets ``path_results``."""
        subgoals = list(dict.fromkeys(canonical_json(result) for result in path_results))
        if answer is not None:
            subgoals.append(_ANSWER_SUBGOAL)
        return cls(subgoals, answer, tolerances)

    def meet(self, result: Any) -> None:
        """Mark the subgoals a tool result (parsed JSON, or text) meets: a path result equal to
        it, and the answer when any value in it matches the answer."""
        key = canonical_json(result)
        if key in self.subgoals:
            self.met.add(key)
        if self.answer is not None and holds_answer(result, self.answer, *self.tolerances):
            self.met.add(_ANSWER_SUBGOAL)

    def meet_answer(self, given: Any) -> None:
        """Mark the answer subgoal when ``finish`` was called with the right answer."""
        if self.answer is not None and answers_match(given, self.answer, *self.tolerances):
            self.met.add(_ANSWER_SUBGOAL)

    def fraction(self) -> float:
        """The fraction of the subgoals met so far."""
        return len(self.met) / max(len(self.subgoals), 1)

    def pay(self, rate: float) -> tuple[float, float]:
        """Raise the running maximum to ``rate`` (if higher); ``(reward, progress)``: the
        increase, paid as the step's reward, and the maximum."""
        progress = max(self.paid, rate)
        reward, self.paid = progress - self.paid, progress
        return reward, progress
