"""Goals and the oracle's plans: a goal template draws an :class:`Episode` (the goal's text, the
plan of tool calls that achieves it and what it is judged against); :class:`Goals` groups an
environment's templates and draws one per task.

A plan's calls are :class:`~llmgym.envs.tools.calls.ToolCall` (made with :func:`call`) or
:class:`DerivedCall`, whose arguments the oracle computes from the results of the plan's earlier
calls; a question's plan ends with :func:`finish_with`, which reads the answer off those results
(never the stored true answer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from llmgym.core import Task
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools.answers import Answer
from llmgym.envs.tools.calls import ToolCall
from llmgym.errors import NoGoal

__all__ = [
    "DerivedCall",
    "Episode",
    "GoalTemplate",
    "Goals",
    "NoGoal",
    "PlanStep",
    "Results",
    "call",
    "finish_with",
    "goal_template",
]

_Method = TypeVar("_Method", bound=Callable[..., Any])
_GOAL_MARK = "__llmgym_goal_template__"
_DRAWS = 200
StateT = TypeVar("StateT")


Results = Sequence[Any]
"""What the oracle has seen: the result of each call of the plan so far, in plan order, as the
agent saw it (JSON results parsed, text results as text)."""


@dataclass(frozen=True)
class DerivedCall:
    """A planned call whose arguments the oracle computes from the results of the plan's earlier
    calls (an answer read off a tool's output, a value passed on to the next tool)."""

    name: str
    arguments: Callable[[Results], dict[str, Any]]

    def resolve(self, results: Results) -> ToolCall:
        """The call, with its arguments computed from ``results``."""
        return ToolCall(self.name, self.arguments(results))


PlanStep = ToolCall | DerivedCall


def call(tool_name: str, /, **arguments: Any) -> ToolCall:
    """A planned tool call (for oracle plans)."""
    return ToolCall(tool_name, arguments)


def finish_with(answer: Callable[[Results], Any]) -> DerivedCall:
    """The last step of a question's plan: ``finish`` with the answer that ``answer`` reads off
    the results of the plan's calls (never the stored true answer)."""
    return DerivedCall("finish", lambda results: {"answer": answer(results)})


@dataclass
class Episode:
    """A generated goal: its text, the oracle's plan of tool calls (ending with ``finish``) and
    what the goal is judged against (the plan never reads it: see :func:`finish_with`)."""

    goal: str
    plan: list[PlanStep]
    answer: Answer | None = None
    """A question's true answer (``None`` for an operation)."""
    goal_state: Any = None
    """An operation's goal state, as the environment's judge compares it with the final state
    (Sheet's target grids, Todo's projects and tasks); ``None`` for a question."""

    @classmethod
    def question(
        cls,
        goal: str,
        plan: Sequence[PlanStep],
        answer: Answer,
        derive: Callable[[Results], Any],
    ) -> Episode:
        """A question: ``plan`` looks the answer up, then ``finish`` submits what ``derive``
        reads off the plan's results; ``answer`` is the truth it is judged against."""
        return cls(goal, [*plan, finish_with(derive)], answer)


@dataclass(frozen=True)
class GoalTemplate:
    """A goal generator (a method of a :class:`Goals` class) with its difficulty level and
    weight."""

    name: str
    level: int
    weight: float


def goal_template(level: int, weight: float = 1.0) -> Callable[[_Method], _Method]:
    """Declare a method ``(self, rng, split) -> Episode | None`` of a :class:`Goals` class as a
    goal template of difficulty ``level`` (1: one lookup, 2: a few dependent calls, 3: several
    hops or an aggregate). Returning ``None`` (or raising :class:`NoGoal`) means "no suitable
    instance for this draw; draw again"."""

    def mark(method: _Method) -> _Method:
        setattr(method, _GOAL_MARK, (level, weight))
        return method

    return mark


class Goals(Generic[StateT]):
    """The goal templates of a tool environment, made for one task over the episode's state.

    Subclass it and declare templates with :func:`goal_template`; they read ``self.state``
    (the service the goal is about) and ``self.task``. A template of an operation may also set
    up the state it starts from (Sheet picks the workbook) and returns the goal state in
    :attr:`Episode.goal_state`.
    """

    templates: ClassVar[tuple[GoalTemplate, ...]] = ()
    """The templates, in declaration order (inherited ones first)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, GoalTemplate] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                mark = getattr(member, _GOAL_MARK, None)
                if isinstance(mark, tuple):
                    found[name] = GoalTemplate(name, *mark)
        cls.templates = tuple(found.values())

    def __init__(self, state: StateT, task: Task[Any]) -> None:
        self.state = state
        self.task = task

    def draw(self, rng: TaskRng) -> Episode:
        """A goal of a template within the task's levels (``min_level``, ``max_level``), drawn
        by weight until a template finds an instance."""
        config = self.task.config
        eligible = [t for t in self.templates if config.min_level <= t.level <= config.max_level]
        if not eligible:
            raise RuntimeError(
                f"{type(self).__name__} has no goal template of a level from {config.min_level} "
                f"to {config.max_level}"
            )
        weights = [t.weight for t in eligible]
        for _ in range(_DRAWS):
            template = rng.weighted_choice(eligible, weights)
            try:
                episode: Episode | None = getattr(self, template.name)(rng, self.task.split)
            except NoGoal:
                continue
            if episode is not None:
                return episode
        raise RuntimeError(f"{type(self).__name__}: no goal could be generated for {self.task}")
