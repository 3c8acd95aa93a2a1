"""Todo: answer questions about, and manage, a to-do list (projects and tasks) with the tools of
a simulated task manager (AgentGym's Todoist tools, plus task creation)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np

from llmgym.core import Task, knob
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import CurrentDate, Tool, ToolConfig, ToolEnv, answers_match, prompt_texts
from llmgym.envs.tools.todo.account import Account, generate_account
from llmgym.envs.tools.todo.goals import TodoGoals
from llmgym.envs.tools.todo.toolkit import ProjectTools, TaskTools

__all__ = ["TodoConfig", "TodoEnv"]


@dataclass(frozen=True)
class TodoConfig(ToolConfig):
    """Difficulty knobs of :class:`TodoEnv`."""

    projects: int = knob(4, low=2, high=8, doc="Projects in the account.")
    tasks_per_project: int = knob(5, low=3, high=8, doc="Tasks in each project.")


class TodoEnv(ToolEnv[TodoConfig, Account]):
    """Manage a to-do list and answer questions about it with the tools of a task manager.

    ## Description
    AgentGym's TODOList environment (Todoist) rebuilt offline. Each task has its own generated
    account: 4 projects (Home, Work, Groceries, Fitness, Travel, ...) of 5 tasks each, with
    priorities (1 normal to 4 urgent), due dates around today, completion, a description naming the
    place and a tip, and a duration. Goals (18 templates) are questions ("When is 'Renew the
    passport' due?", "Which project has the most unfinished tasks?", "How many minutes do the
    unfinished tasks of Work take?") and operations ("Mark ... as completed", "Postpone ... by 3
    days", "Add a task ... due tomorrow with priority 3", "Complete every overdue task in Home",
    "Delete all completed tasks in Work"), at three levels. As in AgentGym, success needs the right
    answer and an unchanged list for questions, and the exact goal state for operations. Accounts
    are split by a hash of their content (date, projects and tasks): no eval account appears in
    train.

    ## Action Space
    Text: one tool call per turn, ``Action: TOOL with Action Input: {JSON}`` or a JSON function
    call. Tools: ``get_user_current_date``, ``get_projects``, ``update_project(project_id,
    is_favorite)``, ``get_tasks(project_id)``, ``get_task_description(task_id)``,
    ``get_task_duration(task_id)``, ``create_task(project_id, content, due_date, priority,
    description, duration)``, ``update_task(task_id, due_date, priority, content)``,
    ``complete_task(task_id)``, ``delete_task(task_id)``, ``check_valid_actions`` and
    ``finish(answer)``. Malformed calls, unknown tools or ids, and missing, unknown or mistyped
    arguments get precise feedback, set ``info["invalid_action"]`` and change nothing.

    ## Observation Space
    Text. On reset: ``Goal: ...`` and the tool signatures. After a call: its JSON result, or the
    error.

    With ``prompt_style="agentgym"`` the reset and step texts are worded as AgentGym's tool
    servers word them (``Now new trial starts. ...``, ``Observation: ...`` then ``Give me one
    action.``); docs/tool-environments.md gives them exactly.

    ## Rewards
    ``1.0`` on ``finish`` when the goal is met: for a question, the answer is right (numbers
    within max(0.01, 1%), dates as ``YYYY-MM-DD``, names ignoring case and punctuation) and the
    list is unchanged; for an operation, the projects and tasks equal the goal's state (content,
    project, completion, priority, due date, duration; ids and order aside). ``0.0`` otherwise.

    With ``reward="progress"`` the rewards pay out AgentGym's progress rate (subgoals met by any
    tool result, as defined in docs/tool-environments.md; ``info["progress"]`` holds the rate);
    here the rate is 1.0 only once every subgoal is met and the account is in the goal state
    (unchanged, for a question), else 0.0, as AgentGym's Todo server does.

    ## Starting State
    The generated account; the user's current date is in 2024.

    ## Episode End
    Terminates when ``finish`` is called (``info["success"]``). Truncated by the registered turn
    limit (15 turns, as in AgentGym).

    ## Arguments
    ``gymnasium.make("llmgym/Todo-v0", projects=4, tasks_per_project=5, min_level=1,
    max_level=3)``; see :class:`TodoConfig`. ``reward``: ``"finish"`` or
    ``"progress"``; ``prompt_style``: ``"llmgym"`` or ``"agentgym"``.

    ## Version History
    * v0: Initial version; the ``reward`` and ``prompt_style`` options (AgentGym's variant)
      were added later, their defaults keep the original play.
    """

    config_class = TodoConfig
    env_name = "todo"
    answer_required = False
    finish_description = (
        "Give the answer (for a question) or 'done' (for an operation) and end the task."
    )
    answer_description = "The answer to the question, or 'done' after an operation."
    service, notes, example = prompt_texts("todo")
    toolkits = (CurrentDate, ProjectTools, TaskTools)
    goals = TodoGoals

    # ------------------------------------------------------------------ state
    def _setup(self, task: Task[TodoConfig], rng: TaskRng) -> Account:
        config = task.config
        return generate_account(task.split, config.projects, config.tasks_per_project, rng)

    def _state_key(self) -> str:
        return f"{self._state.today} " + json.dumps(self._state.initial)

    # ------------------------------------------------------------------ judging
    def _progress_rate(self) -> float:
        """AgentGym's Todo server: 1.0 once every subgoal is met and the account is in the goal
        state (unchanged, for a question), else 0.0."""
        state = self._state.canonical()
        goal_state = self._episode.goal_state
        if goal_state is None:
            goal_state = self._state.initial
        return float(self._subgoal_rate() == 1.0 and state == goal_state)

    def _judge(self, answer: Any) -> tuple[float, bool]:
        state = self._state.canonical()
        expected = self._episode.answer
        if expected is not None:
            correct = answers_match(answer, expected, self.abs_tolerance, self.rel_tolerance)
            success = correct and state == self._state.initial
        else:
            success = state == self._episode.goal_state
        return float(success), success

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        if param == "project_id":
            return [p["id"] for p in self._state.projects]
        if param == "task_id":
            return [t["id"] for t in self._state.tasks]
        if param == "due_date":
            return [(self._state.today + timedelta(days=i)).isoformat() for i in range(-3, 8)]
        if param in ("priority",):
            return [1, 2, 3, 4]
        if param == "duration":
            return [15, 30, 60]
        if param == "content":
            return ["Buy stamps", "Call the plumber"]
        return None

    def _sample_arguments(self, selected: Tool, rng: np.random.Generator) -> dict[str, Any]:
        arguments = super()._sample_arguments(selected, rng)
        if selected.name == "update_task" and len(arguments) == 1:
            arguments["priority"] = int(rng.integers(1, 5))
        return arguments
