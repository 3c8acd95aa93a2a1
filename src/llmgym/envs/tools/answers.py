"""Judging a question's answer: the true :class:`Answer` of a goal and :func:`answers_match`,
which compares what an agent gave with it (numbers within a tolerance, text ignoring case,
accents and punctuation, dates as ``YYYY-MM-DD``, lists in any order)."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Answer", "AnswerKind", "answers_match", "holds_answer", "normalize_answer"]

_NUMBER = re.compile(r"[-+\u2212]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_NOT_ALPHANUMERIC = re.compile(r"[^0-9a-z]+")

AnswerKind = Literal["number", "text", "date", "list"]


@dataclass(frozen=True)
class Answer:
    """The true answer of a query goal.

    ``kind`` says how a given answer is compared: ``number`` (within the environment's tolerance;
    a number inside a string counts, ``"12.5 °C"``), ``text`` (case, accents, punctuation and
    spacing ignored), ``date`` (``YYYY-MM-DD``) or ``list`` (the same items in any order; a string
    is split at commas, semicolons and "and").
    """

    value: float | str | tuple[str, ...]
    kind: AnswerKind
    alternatives: tuple[str, ...] = ()
    """Other accepted texts (``text`` answers), e.g. ``"Lisbon, Portugal"`` for ``"Lisbon"``."""

    def __post_init__(self) -> None:
        if (self.kind == "list") != isinstance(self.value, tuple):
            raise TypeError(f"a {self.kind} answer cannot be {self.value!r}: lists are tuples")

    def shown(self) -> str:
        """The answer as a person would write it."""
        if isinstance(self.value, tuple):
            return ", ".join(self.value)
        if self.kind == "number":
            number = float(self.value)
            return str(int(number)) if number.is_integer() else f"{number:g}"
        return str(self.value)


def normalize_answer(text: str) -> str:
    """Lower case, accents and punctuation removed, single spaces."""
    if not text.isascii():
        decomposed = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_NOT_ALPHANUMERIC.sub(" ", text.casefold()).split())


def _as_number(given: Any) -> float | None:
    if isinstance(given, bool):
        return None
    if isinstance(given, (int, float)):
        return float(given) if math.isfinite(given) else None
    if isinstance(given, list) and len(given) == 1:
        return _as_number(given[0])
    if isinstance(given, str) and len(given) <= 200:
        found = _NUMBER.findall(given.replace(",", ""))
        if len(found) == 1:
            number = float(found[0].replace("\u2212", "-"))
            return number if math.isfinite(number) else None
    return None


def _as_text(given: Any) -> str | None:
    if isinstance(given, bool):
        return "yes" if given else "no"
    if isinstance(given, float) and given.is_integer():
        return str(int(given))
    if isinstance(given, (int, float, str)):
        return str(given)
    if isinstance(given, list) and len(given) == 1:
        return _as_text(given[0])
    return None


def _as_items(given: Any) -> list[str] | None:
    if isinstance(given, list):
        items = []
        for item in given:
            text = _as_text(item)
            if text is None:
                return None
            items.append(text)
        return items
    if isinstance(given, str):
        return [p for p in re.split(r"\s*(?:[,;\n]|\band\b)\s*", given) if p.strip()]
    return None


def answers_match(given: Any, answer: Answer, abs_tolerance: float, rel_tolerance: float) -> bool:
    """Whether ``given`` (the agent's ``finish`` argument) matches ``answer``. Numbers match when
    ``|given - true| <= max(abs_tolerance, rel_tolerance * |true|)``."""
    if isinstance(answer.value, tuple):  # a list answer
        items = _as_items(given)
        if items is None:
            return False
        expected = sorted(normalize_answer(v) for v in answer.value)
        return sorted(normalize_answer(i) for i in items) == expected
    if answer.kind == "number":
        number = _as_number(given)
        if number is None:
            return False
        truth = float(answer.value)
        return abs(number - truth) <= max(abs_tolerance, rel_tolerance * abs(truth)) + 1e-9
    text = _as_text(given)
    if text is None:
        return False
    if answer.kind == "date":
        found = re.findall(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text)
        return len(found) == 1 and found[0] == answer.value
    given_text = normalize_answer(text)
    return any(
        given_text == normalize_answer(str(accepted))
        for accepted in (answer.value, *answer.alternatives)
    )


def holds_answer(value: Any, answer: Answer, abs_tolerance: float, rel_tolerance: float) -> bool:
    """Whether a tool result holds the answer: the result itself, or any value nested in it,
    matches it (as :func:`answers_match` compares a ``finish`` answer)."""
    if answers_match(value, answer, abs_tolerance, rel_tolerance):
        return True
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return any(holds_answer(item, answer, abs_tolerance, rel_tolerance) for item in value)
    return False
