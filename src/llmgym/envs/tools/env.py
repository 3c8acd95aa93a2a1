""":class:`ToolEnv`, the base class of the tool-use environments, and :class:`ToolConfig`, the
knobs they share.

A tool environment is a thin class over toolkits: it builds the episode's state
(:meth:`ToolEnv._setup`), offers the tools of its :attr:`~ToolEnv.toolkits` made over that state
(plus ``check_valid_actions`` and ``finish``), draws a goal from its :attr:`~ToolEnv.goals` and
judges ``finish``. Each action is parsed (:func:`~llmgym.envs.tools.calls.parse_tool_call`),
checked against the tool's parameters and run; a call that cannot be parsed, names an unknown
tool, has bad arguments or is refused by its tool (:class:`~llmgym.envs.tools.toolkit.ToolError`)
is invalid and changes nothing.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, cast

import numpy as np
from typing_extensions import Self, TypeVar

from llmgym.core import EnvConfig, Task, TaskIdRange, TextEnv, Transition, knob
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools.answers import answers_match
from llmgym.envs.tools.calls import ToolCall, format_call, parse_tool_call
from llmgym.envs.tools.planning import Episode, Goals
from llmgym.envs.tools.progress import Progress, canonical_json
from llmgym.envs.tools.schema import ArgType, Param, Tool
from llmgym.envs.tools.toolkit import ToolCatalogue, Toolkit
from llmgym.errors import ConfigError, ToolError

__all__ = ["AGENTGYM_FORMAT_ERROR", "ToolConfig", "ToolEnv"]


@dataclass(frozen=True)
class ToolConfig(EnvConfig):
    """Knobs shared by the tool-use environments."""

    min_level: int = knob(
        1, low=1, high=3, doc="Easiest goal level: 1 one lookup, 2 dependent calls, 3 multi-hop."
    )
    max_level: int = knob(3, low=1, high=3, doc="Hardest goal level (see min_level).")
    action_format: str = knob(
        "any",
        choices=("any", "react", "json"),
        doc="Accepted call form: 'react' (Action: TOOL with Action Input: {...}), 'json' "
        "(a JSON function call) or 'any'.",
    )
    reward: str = knob(
        "finish",
        choices=("finish", "progress"),
        doc="'finish': the reward of finish(answer); 'progress': AgentGym's progress rate "
        "(subgoals met by any tool result so far), paid as its increases.",
    )
    prompt_style: str = knob(
        "llmgym",
        choices=("llmgym", "agentgym"),
        doc="'agentgym': AgentGym's wording ('Now new trial starts...', 'Observation: ...\\n"
        "Give me one action.', its format-error text).",
    )

    def validate(self) -> None:
        if self.min_level > self.max_level:
            raise ConfigError(
                f"{type(self).__name__}.min_level",
                f"{self.min_level} is larger than max_level={self.max_level}; "
                "allowed: min_level <= max_level",
            )


ToolConfigT = TypeVar("ToolConfigT", bound=ToolConfig)
StateT = TypeVar("StateT", default=None)
_ANSWER_TYPE, _ = ArgType.from_annotation(str | float | bool | list[Any])
AGENTGYM_FORMAT_ERROR = (
    'Format error, please response in the format of  "Action: [your action] with Action '
    "Input: [your action input]"
)
"""AgentGym's tool servers' reply to a reply without an ``Action: ... with Action Input:``."""
_RESULT_ENCODER = json.JSONEncoder(ensure_ascii=False)


class ToolEnv(TextEnv[ToolConfigT], Generic[ToolConfigT, StateT]):
    """Base class of the tool-use environments: the agent calls tools of a simulated service and
    ends the episode with ``finish``.

    A subclass names its config and episode state (``class WeatherEnv(ToolEnv[WeatherConfig,
    WeatherState])``), lists its :attr:`toolkits` and its :attr:`goals`, builds the episode's
    state in :meth:`_setup`, and may override :meth:`_judge` (how ``finish`` is scored),
    :meth:`_progress_rate` and :meth:`_argument_pool` (plausible values for random calls).

    The oracle plays the goal's plan. Each result of a planned call is kept as the agent saw it,
    and the plan's later steps (:class:`~llmgym.envs.tools.planning.DerivedCall`, ending with
    :func:`~llmgym.envs.tools.planning.finish_with`) compute their arguments from those results:
    the oracle's answer is read off the tools' outputs.
    """

    config_class = ToolConfig
    train_tasks: ClassVar[int] = 1000
    eval_tasks: ClassVar[int] = 200
    answer_required: ClassVar[bool] = True
    """Whether ``finish`` needs an answer (query goals) or may be called without one."""
    finish_description: ClassVar[str] = "Give your answer and end the task."
    answer_description: ClassVar[str] = (
        "The answer to the goal's question (a string, a number or an array)."
    )
    """How the ``finish`` tool and its ``answer`` are described (``finish`` is handled by
    :meth:`_step`, not by a toolkit)."""
    abs_tolerance: ClassVar[float] = 0.01
    rel_tolerance: ClassVar[float] = 0.01
    service: ClassVar[str] = ""
    """The first paragraph of :meth:`rules`: what the service is."""
    notes: ClassVar[str] = ""
    """Usage notes shown after the tool list."""
    toolkits: ClassVar[tuple[type[Toolkit[Any]], ...]] = ()
    """The toolkits whose tools the agent calls, in the order they are listed; each is made
    over the episode's state."""
    goals: ClassVar[type[Goals[Any]]] = Goals
    """The goal templates, made for each task over the episode's state."""
    tools: ClassVar[dict[str, Tool]] = {}
    """Every tool by name: the toolkits', then ``check_valid_actions`` and ``finish``."""
    _signatures: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, Tool] = {}
        kits: tuple[type[Toolkit[Any]], ...] = (*cls.toolkits, ToolCatalogue)
        for kit in kits:
            for name, declared in kit.tools.items():
                if name in found or name == "finish":
                    raise TypeError(f"{cls.__name__}: more than one tool is named {name!r}")
                found[name] = declared
        answer = Param("answer", _ANSWER_TYPE, cls.answer_description, cls.answer_required)
        found["finish"] = Tool("finish", cls.finish_description, (answer,), "", "finish")
        cls.tools = found
        cls._signatures = ", ".join(t.signature for t in found.values())

    _state: StateT
    """The episode's service state, which the toolkits work on."""
    _toolkit_of: dict[str, Toolkit[Any]]
    """The toolkit that runs each tool (but ``finish``) in this episode."""
    _episode: Episode
    _plan_position = 0
    _results: list[Any]
    """The results of the oracle plan's calls made so far (what later plan steps read)."""
    _progress: Progress | None = None
    """``reward="progress"``: the episode's progress rate."""

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the goal, whose plan computes arguments with closures: unpickling
        draws the same goal again from the task."""
        state = super().__getstate__()
        state.pop("_episode", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._task is not None:
            scratch = type(self)(self.config)
            scratch._task = self._task
            scratch._reset_task(self._task)
            self._episode = scratch._episode

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """A deep copy that shares the goal (never changed once drawn) instead of drawing it
        again."""
        copied = type(self).__new__(type(self))
        memo[id(self)] = copied
        state = super().__getstate__()
        if "_episode" in state:
            memo[id(state["_episode"])] = state["_episode"]
        copied.__dict__.update(copy.deepcopy(state, memo))
        return copied

    # ------------------------------------------------------------------ hooks for subclasses
    def _setup(self, task: Task[ToolConfigT], rng: TaskRng) -> StateT:
        """The episode's service state (before a goal is drawn); environments whose service
        keeps no state per episode (``StateT`` is ``None``) need not override it."""
        return cast(StateT, None)

    def _judge(self, answer: Any) -> tuple[float, bool]:
        """``(reward, success)`` for ``finish(answer)``; by default the answer is compared with
        the goal's true answer."""
        expected = self._episode.answer
        if expected is None:
            return 0.0, False
        correct = answers_match(answer, expected, self.abs_tolerance, self.rel_tolerance)
        return float(correct), correct

    def _progress_rate(self) -> float:
        """The progress rate after the latest step (before the running maximum); Movie and
        Academia report the subgoal rate as it is, the other environments override this."""
        return self._subgoal_rate()

    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        """Plausible values of the argument ``param`` for random calls (``None``: by type)."""
        return None

    def _state_key(self) -> str:
        """Text identifying the episode's initial service state, when it is generated per task."""
        return ""

    # ------------------------------------------------------------------ contract
    def task_ids(self, split: str = "train", config: ToolConfigT | None = None) -> TaskIdRange:
        return TaskIdRange(split, self.train_tasks if split == "train" else self.eval_tasks)

    def instance_key(self) -> str:
        return f"{self._episode.goal}\n{self._state_key()}"

    @classmethod
    def tool_schemas(cls) -> list[dict[str, Any]]:
        """Every tool in OpenAI's function-calling format (for native tool-calling agents)."""
        return [t.schema() for t in cls.tools.values()]

    def rules(self) -> str:
        matching = (
            f"numbers within max({self.abs_tolerance:g}, {self.rel_tolerance:.0%} of the true "
            "value); text ignoring case and punctuation; dates as YYYY-MM-DD; lists in any order"
        )
        if self.answer_required:
            answer_rule = f"finish(answer) ends the episode; the answer must be true ({matching})."
        else:
            answer_rule = (
                "finish(answer) ends the episode; the final state is checked, and for a question "
                f"the answer ({matching})."
            )
        calling = (
            "Call exactly one tool per turn. Write a short thought, then the call in either form:\n"
            'Thought: ...\nAction: TOOL with Action Input: {"argument": value}\n'
            'or as a JSON function call: {"name": "TOOL", "arguments": {"argument": value}}\n'
            f"Arguments are JSON: double-quoted strings, unquoted numbers. {answer_rule}"
        )
        tools = [t.describe() for t in self.tools.values()]
        return "\n\n".join(part for part in (self.service, *tools, self.notes, calling) if part)

    def _reset_task(self, task: Task[ToolConfigT]) -> tuple[str, str]:
        config = task.config
        self._state = self._setup(task, task.rng("state"))
        kits = [kit(self._state) for kit in self.toolkits]
        kits.append(ToolCatalogue(tuple(self.tools)))
        self._toolkit_of = {name: kit for kit in kits for name in kit.tools}
        episode = self.goals(self._state, task).draw(task.rng("goal"))
        for step in episode.plan:
            if isinstance(step, ToolCall):
                self._plan_key(step)  # fails early on an invalid plan
        self._episode = episode
        self._plan_position = 0
        self._results = []
        self._progress = None
        if config.reward == "progress":
            self._progress = self._path_progress()
        if config.prompt_style == "agentgym":
            observation = (
                "Now new trial starts.\nYou should perform actions to accomplish the goal: "
                f"{episode.goal}\nGive me one action."
            )
        else:
            observation = f"Goal: {episode.goal}\nAvailable tools: {self._signatures}"
        return observation, episode.goal

    # ------------------------------------------------------------------ progress rate
    def _path_progress(self) -> Progress:
        """The progress rate's subgoals: the result of each call on the oracle's path (played
        on a copy of the episode, so nothing here changes) and, for a question, the answer."""
        scratch = copy.deepcopy(self)
        plan = scratch._episode.plan
        for _ in range(2 * len(plan)):
            if scratch._plan_position >= len(plan) - 1:
                break
            scratch._act(scratch.oracle_action())
        tolerances = (self.abs_tolerance, self.rel_tolerance)
        return Progress.along(scratch._results, self._episode.answer, tolerances)

    def _subgoal_rate(self) -> float:
        """The fraction of the subgoals met so far (AgentBoard's progress rate)."""
        return self._progress.fraction() if self._progress is not None else 0.0

    # ------------------------------------------------------------------ the episode loop
    def _plan_key(self, planned: ToolCall) -> str:
        arguments, problems = self.tools[planned.name].bind(planned.arguments)
        if problems:
            raise ValueError(f"invalid oracle call {planned}: {problems}")
        return _call_key(planned.name, arguments)

    def _step(self, action: str) -> Transition:
        transition = self._act(action)
        config = self.task.config
        if self._progress is not None:
            transition.reward, progress = self._progress.pay(self._progress_rate())
            transition.info = {**(transition.info or {}), "progress": progress}
        if config.prompt_style == "agentgym" and transition.observation != AGENTGYM_FORMAT_ERROR:
            # AgentGym's servers frame every observation but the format error, sent bare
            transition.observation = f"Observation: {transition.observation}\nGive me one action."
        return transition

    def _act(self, action: str) -> Transition:
        """The step itself, rewarded as the ``finish`` reward."""
        parsed = parse_tool_call(action)
        if isinstance(parsed, str):
            if self.task.config.prompt_style == "agentgym":
                return self.invalid(AGENTGYM_FORMAT_ERROR)
            return self.invalid(parsed)
        wanted = self.task.config.action_format
        if wanted != "any" and parsed.form != wanted:
            form = (
                "Action: TOOL with Action Input: {...}"
                if wanted == "react"
                else '{"name": "TOOL", "arguments": {...}}'
            )
            return self.invalid(f"This task accepts tool calls only in the form {form}.")
        selected = self.tools.get(parsed.name)
        if selected is None:
            return self.invalid(
                f"Unknown tool {json.dumps(parsed.name)}. The tools are: {', '.join(self.tools)}."
            )
        arguments, problems = selected.bind(parsed.arguments)
        if problems:
            return self.invalid("\n".join([*problems, selected.usage()]))
        called = {"name": selected.name, "arguments": arguments}
        if selected.name == "finish":
            return self._finish(arguments.get("answer"), called)
        try:
            result = self._toolkit_of[selected.name].run(selected, arguments)
        except ToolError as error:
            return self.invalid(f"Error from {selected.name}: {error}", tool_call=called)
        observation = _render(result)
        seen = result if isinstance(result, str) else json.loads(observation)
        if self._progress is not None:
            self._progress.meet(seen)
        on_plan = self._plan_position < len(self._episode.plan)
        if on_plan and _call_key(selected.name, arguments) == self._plan_key(self._planned_call()):
            self._plan_position += 1
            self._results.append(seen)
        return Transition(observation, info={"tool_call": called})

    def _planned_call(self) -> ToolCall:
        """The plan's next call (the last one, ``finish``, once every other call has been seen),
        with derived arguments computed from the results seen so far."""
        plan = self._episode.plan
        step = plan[min(self._plan_position, len(plan) - 1)]
        return step if isinstance(step, ToolCall) else step.resolve(self._results)

    def _finish(self, answer: Any, called: dict[str, Any]) -> Transition:
        reward, success = self._judge(answer)
        if self._progress is not None:
            self._progress.meet_answer(answer)
        shown = "" if answer is None else f" Your answer: {_render(answer)}."
        info: dict[str, Any] = {"tool_call": called}
        if self._episode.answer is not None:
            info["expected_answer"] = self._episode.answer.shown()
        return Transition(
            f"Task finished.{shown}", reward=reward, terminated=True, success=success, info=info
        )

    def oracle_action(self) -> str:
        """The next call of the goal's plan: real tool calls whose results carry the answer,
        then ``finish`` with the answer read off those results. Calls it has seen succeed are
        not repeated."""
        return format_call(self._planned_call())

    # ------------------------------------------------------------------ random calls
    def sample_action(self, rng: np.random.Generator) -> str:
        """A random, well-typed call of a random tool (arguments from the service where the
        environment lists plausible values), in either call form."""
        names = list(self.tools)
        selected = self.tools[names[int(rng.integers(len(names)))]]
        arguments = self._sample_arguments(selected, rng)
        sampled = ToolCall(selected.name, arguments)
        action_format = self.task.config.action_format
        if action_format == "json" or (action_format == "any" and rng.random() < 0.3):
            return json.dumps({"name": sampled.name, "arguments": arguments})
        return format_call(sampled)

    def _sample_arguments(self, selected: Tool, rng: np.random.Generator) -> dict[str, Any]:
        """Random arguments for ``selected``: every required one, each optional one by a coin."""
        arguments = {}
        for param in selected.params:
            if not param.required and rng.random() < 0.5:
                continue
            arguments[param.name] = self._sample_value(param, rng)
        return arguments

    def _sample_value(self, param: Param, rng: np.random.Generator) -> Any:
        pool = self._argument_pool(param.name)
        if pool:
            return pool[int(rng.integers(len(pool)))]
        return param.type.sample(rng)


def _call_key(name: str, arguments: Mapping[str, Any]) -> str:
    return name + canonical_json(arguments)


def _render(result: Any) -> str:
    if isinstance(result, str):
        return result
    return _RESULT_ENCODER.encode(result)
