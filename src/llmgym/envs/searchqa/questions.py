"""SearchQA's questions, generated from the encyclopedia's facts, and exact-match scoring.

Three kinds, as in the datasets Search-R1 and AgentGym's SearchQA mix:

* **single-hop**: one fact of the entity the question names (``Who directed the film X?``);
* **bridge** (2-hop): a fact of the entity a fact of the named one points to (``In which city
  was the director of the film X born?``: the film's article names the director, whose article
  names the city);
* **comparison**: which of two named entities came first (``Who was born first, X or Y?``).

Every question names its entities by their generated names, so it can only be answered by
finding their articles. Entities are split into train and eval by a hash of their name; a
question belongs to the split of the entities it names (both of a comparison), so the eval
questions ask about entities no train question names.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cache

from llmgym.core.cache import bounded_cache
from llmgym.core.tasks import TaskRng, split_of
from llmgym.envs.searchqa.corpus import Encyclopedia, Entity, World

__all__ = [
    "EVAL_FRACTION",
    "QUESTION_TYPES",
    "TEMPLATES",
    "Question",
    "Template",
    "exact_match",
    "normalize_answer",
    "questions_for",
]

EVAL_FRACTION = 0.05
"""Share of entities (by a hash of their name) whose questions form the eval split."""

QUESTION_TYPES = ("all", "single-hop", "multi-hop", "bridge", "comparison")
"""Values of the ``question_types`` knob: ``multi-hop`` is bridge and comparison together."""


@dataclass(frozen=True)
class Template:
    """A question form: the kind of entity it names, the relations it follows (one for a
    single-hop or comparison question, two for a bridge question), and its wording, with
    ``{}`` for each name."""

    kind: str
    hops: tuple[str, ...]
    text: str
    type: str

    @property
    def pattern(self) -> re.Pattern[str]:
        """A regex of the wording whose groups capture the names."""
        return _template_pattern(self.text)


@cache
def _template_pattern(text: str) -> re.Pattern[str]:
    parts = [re.escape(part) for part in text.split("{}")]
    return re.compile("(.+)".join(parts) + r"\Z")


def _single(kind: str, relation: str, text: str) -> Template:
    return Template(kind, (relation,), text, "single-hop")


def _bridge(kind: str, first: str, second: str, text: str) -> Template:
    return Template(kind, (first, second), text, "bridge")


def _comparison(kind: str, relation: str, text: str) -> Template:
    return Template(kind, (relation,), text, "comparison")


TEMPLATES: tuple[Template, ...] = (
    _single("person", "birthplace", "In which city was {} born?"),
    _single("person", "born", "In what year was {} born?"),
    _single("person", "alma_mater", "Which university did {} attend?"),
    _single("film", "director", "Who directed the film {}?"),
    _single("film", "year", "In what year was the film {} released?"),
    _single("film", "studio", "Which studio produced the film {}?"),
    _single("film", "setting", "In which city is the film {} set?"),
    _single("novel", "author", "Who wrote the novel {}?"),
    _single("novel", "year", "In what year was the novel {} published?"),
    _single("novel", "publisher", "Which company published the novel {}?"),
    _single("novel", "setting", "In which city is the novel {} set?"),
    _single("company", "founder", "Who founded the company {}?"),
    _single("company", "headquarters", "In which city is {} headquartered?"),
    _single("company", "founded", "In what year was the company {} founded?"),
    _single("university", "city", "In which city is {} located?"),
    _single("university", "founder", "Who founded {}?"),
    _single("university", "founded", "In what year was {} founded?"),
    _single("city", "country", "In which country is the city of {} located?"),
    _single("city", "founded", "In what year was the city of {} founded?"),
    _single("city", "river", "On which river does the city of {} lie?"),
    _single("country", "capital", "What is the capital of {}?"),
    _single("country", "language", "What is the official language of {}?"),
    _single("country", "independence", "In what year did {} become independent?"),
    _bridge(
        "film", "director", "birthplace", "In which city was the director of the film {} born?"
    ),
    _bridge("film", "director", "born", "In what year was the director of the film {} born?"),
    _bridge("film", "studio", "founder", "Who founded the studio that produced the film {}?"),
    _bridge("film", "setting", "country", "In which country is the film {} set?"),
    _bridge(
        "novel", "author", "alma_mater", "Which university did the author of the novel {} attend?"
    ),
    _bridge("novel", "author", "born", "In what year was the author of the novel {} born?"),
    _bridge(
        "novel",
        "publisher",
        "headquarters",
        "In which city is the publisher of the novel {} headquartered?",
    ),
    _bridge("person", "birthplace", "country", "In which country was {} born?"),
    _bridge("person", "alma_mater", "city", "In which city is the university that {} attended?"),
    _bridge("company", "headquarters", "country", "In which country is {} headquartered?"),
    _bridge("company", "founder", "birthplace", "In which city was the founder of {} born?"),
    _bridge("university", "city", "country", "In which country is {} located?"),
    _bridge("university", "founder", "born", "In what year was the founder of {} born?"),
    _bridge(
        "city",
        "country",
        "capital",
        "What is the capital of the country in which the city of {} lies?",
    ),
    _bridge("country", "capital", "founded", "In what year was the capital of {} founded?"),
    _comparison("person", "born", "Who was born first, {} or {}?"),
    _comparison("film", "year", "Which film was released first, {} or {}?"),
    _comparison("novel", "year", "Which novel was published first, {} or {}?"),
    _comparison("company", "founded", "Which company was founded first, {} or {}?"),
)
"""Every question form. No wording matches another's question: the oracle tells them apart by
their text alone."""


@dataclass(frozen=True)
class Question:
    """A question, its gold answer and the answer's aliases (the answer key), and the names of
    the entities it asks about."""

    text: str
    answer: str
    aliases: tuple[str, ...]
    type: str
    subjects: tuple[str, ...]

    @property
    def answers(self) -> tuple[str, ...]:
        """The gold answer and its aliases."""
        return (self.answer, *self.aliases)


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles (a, an, the),
    single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


_PUNCTUATION = frozenset(string.punctuation)


def exact_match(given: str, answers: tuple[str, ...]) -> bool:
    """Whether ``given`` equals one of ``answers`` after :func:`normalize_answer`."""
    normalized = normalize_answer(given)
    return any(normalized == normalize_answer(answer) for answer in answers)


def _value_aliases(world: World, relation: str, value: object) -> tuple[str, ...]:
    if relation == "river":
        return (str(value).removesuffix(" River"),)
    entity = world.by_name.get(str(value))
    return entity.aliases if entity is not None else ()


def _follow(world: World, entity: Entity, hops: tuple[str, ...]) -> tuple[str, str] | None:
    """The value at the end of ``hops`` from ``entity`` and the last relation, or ``None``."""
    value: object = None
    for position, relation in enumerate(hops):
        value = entity.facts.get(relation)
        if value is None:
            return None
        if position < len(hops) - 1:
            entity = world.by_name[str(value)]
    return str(value), hops[-1]


def _split(world: World, name: str) -> str:
    return split_of(f"searchqa:{world.seed}:{name}", EVAL_FRACTION)


@bounded_cache(16)
def questions_for(seed: int, split: str, question_types: str = "all") -> tuple[Question, ...]:
    """The questions of ``split`` over corpus ``seed`` of the given types, in a fixed order."""
    chosen = _all_questions(seed, split)
    if question_types == "all":
        return chosen
    wanted = {"multi-hop": ("bridge", "comparison")}.get(question_types, (question_types,))
    return tuple(q for q in chosen if q.type in wanted)


@bounded_cache(8)
def _all_questions(seed: int, split: str) -> tuple[Question, ...]:
    world = Encyclopedia.open(seed).world
    rng = TaskRng("searchqa-questions", seed, split)
    questions: list[Question] = []
    for template in TEMPLATES:
        subjects = [e for e in world.by_kind[template.kind] if _split(world, e.name) == split]
        if template.type == "comparison":
            questions.extend(_comparisons(world, template, subjects, rng))
            continue
        for entity in subjects:
            found = _follow(world, entity, template.hops)
            if found is None:
                continue
            value, relation = found
            questions.append(
                Question(
                    template.text.format(entity.name),
                    value,
                    _value_aliases(world, relation, value),
                    template.type,
                    (entity.name,),
                )
            )
    rng.shuffle(questions)
    return tuple(questions)


def _comparisons(
    world: World, template: Template, subjects: list[Entity], rng: TaskRng
) -> list[Question]:
    """One question per pair of subjects (shuffled, then taken two at a time) whose values
    differ."""
    (relation,) = template.hops
    order = list(subjects)
    rng.shuffle(order)
    questions = []
    for first, second in zip(order[::2], order[1::2], strict=False):
        a, b = first.facts[relation], second.facts[relation]
        if a == b:
            continue
        earlier = first if a < b else second
        questions.append(
            Question(
                template.text.format(first.name, second.name),
                earlier.name,
                earlier.aliases,
                template.type,
                (first.name, second.name),
            )
        )
    return questions
