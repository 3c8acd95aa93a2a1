"""Todo: answer questions about, and manage, a to-do list (projects and tasks) with the tools of
a simulated task manager (AgentGym's Todoist tools, plus task creation)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, ClassVar

import numpy as np

from llmgym.core import Task, knob, split_of
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools.base import (
    Answer,
    CurrentDateTool,
    Episode,
    PlanStep,
    Results,
    Tool,
    ToolConfig,
    ToolEnv,
    answers_match,
    call,
    goal_template,
    load_data,
    normalize_answer,
    parse_iso_date,
    prompt_texts,
    tool,
)
from llmgym.errors import NoGoal, ToolError

__all__ = ["TodoConfig", "TodoEnv"]

MAX_TASKS = 200
PRIORITY_NAMES = {1: "normal", 2: "medium", 3: "high", 4: "urgent"}
MAX_DURATION_CHECKS = 6


@dataclass(frozen=True)
class TodoConfig(ToolConfig):
    """Difficulty knobs of :class:`TodoEnv`."""

    projects: int = knob(4, low=2, high=8, doc="Projects in the account.")
    tasks_per_project: int = knob(5, low=3, high=8, doc="Tasks in each project.")


def _canonical(projects: list[dict], tasks: list[dict]) -> list[Any]:
    """The state a goal is judged on: projects (name, favourite) and tasks (project, content,
    completion, priority, due date, duration), without ids or order."""
    names = {p["id"]: p["name"] for p in projects}
    return [
        sorted((p["name"], p["is_favorite"]) for p in projects),
        sorted(
            (
                names.get(t["project_id"], "?"),
                normalize_answer(t["content"]),
                t["is_completed"],
                t["priority"],
                t["due_date"] or "",
                t["duration"] or 0,
            )
            for t in tasks
        ),
    ]


class TodoEnv(CurrentDateTool, ToolEnv[TodoConfig]):
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
    parameter_docs: ClassVar[Mapping[str, str]] = {
        "project_id": "The id of the project.",
        "task_id": "The id of the task.",
    }

    _projects: list[dict]
    _tasks: list[dict]
    _initial: list[Any]
    """The canonical state the account starts in (see :func:`_canonical`)."""
    _expected: list[Any] | None
    """The canonical goal state of an operation (``None`` for a question)."""
    _next_id: int

    # ------------------------------------------------------------------ state
    def _setup(self, task: Task[TodoConfig], rng: TaskRng) -> None:
        config = task.config
        words = load_data("todo")
        while True:  # draw accounts until one belongs to the task's split (by its content)
            self._today = date(2024, 1, 1) + timedelta(days=rng.randbelow(366))
            names = rng.sample(sorted(words["projects"]), config.projects)
            contents = [rng.sample(words["projects"][n], config.tasks_per_project) for n in names]
            skeleton = json.dumps([self._today.isoformat(), names, contents])
            if split_of(f"todo:{skeleton}") == task.split:
                break
        self._projects, self._tasks = [], []
        for order, (name, chosen) in enumerate(zip(names, contents, strict=True)):
            project_id = f"pr{rng.randint(100000, 999999)}"
            self._projects.append(
                {
                    "id": project_id,
                    "name": name,
                    "order": order,
                    "color": rng.choice(words["colors"]),
                    "is_favorite": rng.random() < 0.25,
                }
            )
            for position, content in enumerate(chosen):
                due = None
                if rng.random() < 0.85:
                    due = (self._today + timedelta(days=rng.randint(-6, 14))).isoformat()
                self._tasks.append(
                    {
                        "id": f"t{project_id[2:]}{position:02d}",
                        "project_id": project_id,
                        "order": position,
                        "content": content,
                        "description": (
                            f"Place: {rng.choice(words['places'])}. "
                            f"Tips: {rng.choice(words['tips'])}"
                        ),
                        "is_completed": rng.random() < 0.2,
                        "priority": rng.weighted_choice([1, 2, 3, 4], [5, 3, 2, 1]),
                        "due_date": due,
                        "duration": rng.choice([15, 20, 30, 45, 60, 90, 120]),
                    }
                )
        self._initial = _canonical(self._projects, self._tasks)
        self._expected = None
        self._next_id = 1

    def _state_key(self) -> str:
        return f"{self._today} " + json.dumps(self._initial)

    def _find_project(self, project_id: str) -> dict:
        return _by_id(self._projects, project_id, "project", "get_projects lists the ids")

    def _find_task(self, task_id: str) -> dict:
        return _by_id(self._tasks, task_id, "task", "get_tasks lists the ids of a project")

    @staticmethod
    def _public(entry: dict) -> dict:
        return {
            k: entry[k]
            for k in (
                "id",
                "project_id",
                "order",
                "content",
                "is_completed",
                "priority",
                "due_date",
            )
        }

    # ------------------------------------------------------------------ tools
    @tool
    def get_projects(self) -> list[dict]:
        """Get all projects of the account.

        Returns:
            An array of projects with id, name, order, color and is_favorite.
        """
        return [dict(p) for p in self._projects]

    @tool
    def update_project(self, project_id: str, is_favorite: bool) -> dict:
        """Mark a project as a favourite or not.

        Args:
            is_favorite: Whether the project is a favourite.

        Returns:
            The updated project.
        """
        project = self._find_project(project_id)
        project["is_favorite"] = is_favorite
        return dict(project)

    @tool
    def get_tasks(self, project_id: str) -> list[dict]:
        """Get all tasks of a project, finished or not.

        Returns:
            An array of tasks with id, project_id, order, content (the task's name), is_completed,
            priority (1 normal to 4 urgent) and due_date.
        """
        project = self._find_project(project_id)
        return [self._public(t) for t in self._tasks if t["project_id"] == project["id"]]

    @tool
    def get_task_description(self, task_id: str) -> dict:
        """Get the description of a task (the place to go and tips).

        Returns:
            id, content and description.
        """
        entry = self._find_task(task_id)
        return {k: entry[k] for k in ("id", "content", "description")}

    @tool
    def get_task_duration(self, task_id: str) -> dict:
        """Get how long a task takes.

        Returns:
            id, content and duration as 'amount(unit)', e.g. '30(minute)'.
        """
        entry = self._find_task(task_id)
        return {
            "id": entry["id"],
            "content": entry["content"],
            "duration": f"{entry['duration']}(minute)",
        }

    @tool
    def create_task(
        self,
        project_id: str,
        content: str,
        due_date: str | None = None,
        priority: int = 1,
        description: str = "",
        duration: int | None = None,
    ) -> dict:
        """Create a task in a project.

        Args:
            content: The task's name.
            due_date: The due date (YYYY-MM-DD); none if omitted.
            priority: 1 (normal) to 4 (urgent); 1 if omitted.
            description: A description; empty if omitted.
            duration: How long it takes, in minutes; none if omitted.

        Returns:
            The new task.
        """
        project = self._find_project(project_id)
        if not content.strip() or len(content) > 200:
            raise ToolError("content must be 1 to 200 characters")
        if due_date is not None:
            due_date = parse_iso_date(due_date, "due_date").isoformat()
        _check_priority(priority)
        if duration is not None and not 1 <= duration <= 1440:
            raise ToolError("duration must be 1 to 1440 minutes")
        if len(self._tasks) >= MAX_TASKS:
            raise ToolError(f"the account holds at most {MAX_TASKS} tasks")
        siblings = [t for t in self._tasks if t["project_id"] == project["id"]]
        entry = {
            "id": f"tn{self._next_id:04d}",
            "project_id": project["id"],
            "order": len(siblings),
            "content": content.strip(),
            "description": description[:500],
            "is_completed": False,
            "priority": priority,
            "due_date": due_date,
            "duration": duration,
        }
        self._next_id += 1
        self._tasks.append(entry)
        return self._public(entry)

    @tool
    def update_task(
        self,
        task_id: str,
        due_date: str | None = None,
        priority: int | None = None,
        content: str | None = None,
    ) -> dict:
        """Update a task's due date, priority or name (give at least one).

        Args:
            due_date: The new due date (YYYY-MM-DD).
            priority: The new priority, 1 (normal) to 4 (urgent).
            content: The new name of the task.

        Returns:
            The updated task.
        """
        entry = self._find_task(task_id)
        if due_date is None and priority is None and content is None:
            raise ToolError("give at least one of due_date, priority and content")
        if due_date is not None:
            due_date = parse_iso_date(due_date, "due_date").isoformat()
        if priority is not None:
            _check_priority(priority)
        if content is not None and not 0 < len(content.strip()) <= 200:
            raise ToolError("content must be 1 to 200 characters")
        for key, value in (("due_date", due_date), ("priority", priority), ("content", content)):
            if value is not None:
                entry[key] = value.strip() if isinstance(value, str) and key == "content" else value
        return self._public(entry)

    @tool
    def complete_task(self, task_id: str) -> dict:
        """Mark a task as completed.

        Returns:
            The completed task.
        """
        entry = self._find_task(task_id)
        entry["is_completed"] = True
        return self._public(entry)

    @tool
    def delete_task(self, task_id: str) -> dict:
        """Delete a task.

        Returns:
            The deleted task.
        """
        entry = self._find_task(task_id)
        self._tasks.remove(entry)
        return self._public(entry)

    # ------------------------------------------------------------------ judging
    def _progress_rate(self) -> float:
        """AgentGym's Todo server: 1.0 once every subgoal is met and the account is in the goal
        state (unchanged, for a question), else 0.0."""
        state = _canonical(self._projects, self._tasks)
        goal_state = self._initial if self._expected is None else self._expected
        return float(self._subgoal_rate() == 1.0 and state == goal_state)

    def _judge(self, answer: Any) -> tuple[float, bool]:
        state = _canonical(self._projects, self._tasks)
        expected = self._episode.answer
        if expected is not None:
            correct = answers_match(answer, expected, self.abs_tolerance, self.rel_tolerance)
            success = correct and state == self._initial
        else:
            success = state == self._expected
        return float(success), success

    # ------------------------------------------------------------------ goals
    def _in(self, project: dict) -> list[dict]:
        return [t for t in self._tasks if t["project_id"] == project["id"]]

    def _look(self, project: dict) -> list[PlanStep]:
        return [call("get_projects"), call("get_tasks", project_id=project["id"])]

    def _operation(
        self, goal: str, plan: list[PlanStep], change: Callable[[list[dict], list[dict]], None]
    ) -> Episode:
        """``change(projects, tasks)`` edits copies of the state into the goal state."""
        projects = [dict(p) for p in self._projects]
        tasks = [dict(t) for t in self._tasks]
        change(projects, tasks)
        self._expected = _canonical(projects, tasks)
        return Episode(goal, [*plan, call("finish", answer="done")])

    def _on_tasks(
        self, goal: str, plan: list[PlanStep], tasks: list[dict], tool_name: str, **fields: Any
    ) -> Episode:
        """An operation met by calling ``tool_name`` on each of ``tasks`` after ``plan``:
        ``complete_task``, ``delete_task``, or ``update_task`` with ``fields``; :class:`NoGoal`
        when there is no task to operate on."""
        if not tasks:
            raise NoGoal
        ids = {t["id"] for t in tasks}
        plan = [*plan, *(call(tool_name, task_id=t["id"], **fields) for t in tasks)]
        changes = {"complete_task": {"is_completed": True}, "update_task": fields}

        def change(projects: list[dict], tasks: list[dict]) -> None:
            if tool_name == "delete_task":
                tasks[:] = [t for t in tasks if t["id"] not in ids]
                return
            for t in tasks:
                if t["id"] in ids:
                    t.update(changes[tool_name])

        return self._operation(goal, plan, change)

    def _about_task(self, project: dict, entry: dict, tool_name: str) -> list[PlanStep]:
        """Find the task ``entry`` of ``project``, then call ``tool_name`` on it."""
        return [*self._look(project), call(tool_name, task_id=entry["id"])]

    def _pick_task(
        self, rng: TaskRng, want: Callable[[dict], Any] | None = None
    ) -> tuple[dict, dict]:
        """A random task (one that ``want`` accepts) and its project; :class:`NoGoal` when
        there is none."""
        candidates = [t for t in self._tasks if want is None or want(t)]
        if not candidates:
            raise NoGoal
        entry = rng.choice(candidates)
        return entry, self._find_project(entry["project_id"])

    @goal_template(level=1)
    def _goal_due_date(self, rng: TaskRng, split: str) -> Episode:
        entry, project = self._pick_task(rng, lambda t: t["due_date"])
        goal = f"When is the task '{entry['content']}' of the {project['name']} project due?"
        answer = Answer(entry["due_date"], "date")
        return Episode.question(
            goal, self._look(project), answer, lambda r: _named(r[1], entry)["due_date"]
        )

    @goal_template(level=1)
    def _goal_membership(self, rng: TaskRng, split: str) -> Episode:
        entry, owner = self._pick_task(rng)
        project = owner if rng.random() < 0.5 else rng.choice(self._projects)
        answer = Answer("yes" if project is owner else "no", "text")
        goal = f"Is '{entry['content']}' a task of the {project['name']} project? Answer yes or no."
        return Episode.question(
            goal,
            self._look(project),
            answer,
            lambda r: "yes" if any(t["content"] == entry["content"] for t in r[1]) else "no",
        )

    @goal_template(level=1)
    def _goal_complete(self, rng: TaskRng, split: str) -> Episode:
        entry, project = self._pick_task(rng, lambda t: not t["is_completed"])
        goal = f"Mark the task '{entry['content']}' in the {project['name']} project as completed."
        return self._on_tasks(goal, self._look(project), [entry], "complete_task")

    @goal_template(level=1)
    def _goal_delete(self, rng: TaskRng, split: str) -> Episode:
        entry, project = self._pick_task(rng)
        goal = f"Delete the task '{entry['content']}' from the {project['name']} project."
        return self._on_tasks(goal, self._look(project), [entry], "delete_task")

    @goal_template(level=1)
    def _goal_favorite(self, rng: TaskRng, split: str) -> Episode:
        project = rng.choice(self._projects)
        wanted = not project["is_favorite"]
        goal = (
            f"Mark the {project['name']} project as a favorite."
            if wanted
            else f"Remove the {project['name']} project from the favorites."
        )

        def change(projects: list[dict], tasks: list[dict]) -> None:
            next(p for p in projects if p["id"] == project["id"])["is_favorite"] = wanted

        plan: list[PlanStep] = [
            call("get_projects"),
            call("update_project", project_id=project["id"], is_favorite=wanted),
        ]
        return self._operation(goal, plan, change)

    @goal_template(level=2)
    def _goal_open_count(self, rng: TaskRng, split: str) -> Episode:
        project = rng.choice(self._projects)
        count = sum(not t["is_completed"] for t in self._in(project))
        goal = f"How many unfinished tasks are there in the {project['name']} project?"
        return Episode.question(
            goal, self._look(project), Answer(count, "number"), lambda r: len(_unfinished(r[1]))
        )

    @goal_template(level=2)
    def _goal_top_priority(self, rng: TaskRng, split: str) -> Episode | None:
        project = rng.choice(self._projects)
        open_tasks = [t for t in self._in(project) if not t["is_completed"]]
        if not open_tasks:
            return None
        top = max(t["priority"] for t in open_tasks)
        leaders = [t for t in open_tasks if t["priority"] == top]
        if len(leaders) > 1:
            return None
        goal = f"Which unfinished task of the {project['name']} project has the highest priority?"
        return Episode.question(
            goal,
            self._look(project),
            Answer(leaders[0]["content"], "text"),
            lambda r: max(_unfinished(r[1]), key=lambda t: t["priority"])["content"],
        )

    @goal_template(level=2)
    def _goal_place(self, rng: TaskRng, split: str) -> Episode:
        entry, project = self._pick_task(rng)
        goal = f"Where do I need to go for {_described(entry, project)}?"
        plan = self._about_task(project, entry, "get_task_description")
        return Episode.question(
            goal,
            plan,
            Answer(_place(entry["description"]), "text"),
            lambda r: _place(r[2]["description"]),
        )

    @goal_template(level=2)
    def _goal_duration(self, rng: TaskRng, split: str) -> Episode:
        entry, project = self._pick_task(rng)
        goal = f"How many minutes does {_described(entry, project)} take?"
        plan = self._about_task(project, entry, "get_task_duration")
        return Episode.question(
            goal, plan, Answer(entry["duration"], "number"), lambda r: _minutes(r[2])
        )

    @goal_template(level=2)
    def _goal_overdue_count(self, rng: TaskRng, split: str) -> Episode:
        project = rng.choice(self._projects)
        today = self._today.isoformat()
        goal = (
            f"How many unfinished tasks of the {project['name']} project are overdue (due before "
            "today)?"
        )
        plan = [self.date_call, *self._look(project)]
        answer = Answer(len(_overdue(self._in(project), today)), "number")
        return Episode.question(goal, plan, answer, lambda r: len(_overdue(r[2], r[0])))

    @goal_template(level=2)
    def _goal_postpone(self, rng: TaskRng, split: str) -> Episode:
        entry, project = self._pick_task(rng, lambda t: t["due_date"] and not t["is_completed"])
        days = rng.randint(1, 7)
        new = (date.fromisoformat(entry["due_date"]) + timedelta(days=days)).isoformat()
        goal = (
            f"Postpone the task '{entry['content']}' of the {project['name']} project by {days} "
            f"day{'s' if days > 1 else ''}."
        )
        return self._on_tasks(goal, self._look(project), [entry], "update_task", due_date=new)

    @goal_template(level=2)
    def _goal_set_priority(self, rng: TaskRng, split: str) -> Episode:
        entry, project = self._pick_task(rng, lambda t: not t["is_completed"])
        priority = rng.choice([p for p in PRIORITY_NAMES if p != entry["priority"]])
        goal = (
            f"Set the priority of the task '{entry['content']}' of the {project['name']} project "
            f"to {priority} ({PRIORITY_NAMES[priority]})."
        )
        plan = self._look(project)
        return self._on_tasks(goal, plan, [entry], "update_task", priority=priority)

    @goal_template(level=2)
    def _goal_create(self, rng: TaskRng, split: str) -> Episode | None:
        project = rng.choice(self._projects)
        words = load_data("todo")["projects"][project["name"]]
        taken = {normalize_answer(t["content"]) for t in self._tasks}
        fresh = [w for w in words if normalize_answer(w) not in taken]
        if not fresh:
            return None
        content = rng.choice(fresh)
        priority = rng.randint(1, 4)
        offset = rng.randint(1, 10)
        due = (self._today + timedelta(days=offset)).isoformat()
        when = "tomorrow" if offset == 1 else f"in {offset} days"
        goal = (
            f"Add a task '{content}' to the {project['name']} project, due {when}, with priority "
            f"{priority}."
        )

        def change(projects: list[dict], tasks: list[dict]) -> None:
            tasks.append(
                {"project_id": project["id"], "content": content, "is_completed": False,
                 "priority": priority, "due_date": due, "duration": None}
            )  # fmt: skip

        plan: list[PlanStep] = [
            self.date_call,
            call("get_projects"),
            call(
                "create_task",
                project_id=project["id"],
                content=content,
                due_date=due,
                priority=priority,
            ),
        ]
        return self._operation(goal, plan, change)

    @goal_template(level=3)
    def _goal_total_duration(self, rng: TaskRng, split: str) -> Episode | None:
        project = rng.choice(self._projects)
        open_tasks = [t for t in self._in(project) if not t["is_completed"]]
        if not 1 <= len(open_tasks) <= MAX_DURATION_CHECKS:
            return None
        goal = (
            f"How many minutes do the unfinished tasks of the {project['name']} project take in "
            "total?"
        )
        plan = [
            *self._look(project),
            *(call("get_task_duration", task_id=t["id"]) for t in open_tasks),
        ]
        answer = Answer(sum(t["duration"] for t in open_tasks), "number")
        return Episode.question(
            goal, plan, answer, lambda r: sum(_minutes(duration) for duration in r[2:])
        )

    @goal_template(level=3)
    def _goal_busiest_project(self, rng: TaskRng, split: str) -> Episode | None:
        counts = {
            p["name"]: sum(not t["is_completed"] for t in self._in(p)) for p in self._projects
        }
        best = max(counts.values())
        leaders = [name for name, n in counts.items() if n == best]
        if len(leaders) > 1:
            return None
        goal = "Which project has the most unfinished tasks?"
        plan = [
            call("get_projects"),
            *(call("get_tasks", project_id=p["id"]) for p in self._projects),
        ]

        def busiest(results: Results) -> str:
            unfinished = [len(_unfinished(tasks)) for tasks in results[1:]]
            return str(results[0][unfinished.index(max(unfinished))]["name"])

        return Episode.question(goal, plan, Answer(leaders[0], "text"), busiest)

    @goal_template(level=3)
    def _goal_complete_overdue(self, rng: TaskRng, split: str) -> Episode:
        project = rng.choice(self._projects)
        overdue = _overdue(self._in(project), self._today.isoformat())
        goal = (
            f"Complete every unfinished task of the {project['name']} project that is due before "
            "today."
        )
        return self._on_tasks(
            goal, [self.date_call, *self._look(project)], overdue, "complete_task"
        )

    @goal_template(level=3)
    def _goal_delete_completed(self, rng: TaskRng, split: str) -> Episode:
        project = rng.choice(self._projects)
        done = [t for t in self._in(project) if t["is_completed"]]
        goal = f"Delete all completed tasks of the {project['name']} project."
        return self._on_tasks(goal, self._look(project), done, "delete_task")

    @goal_template(level=3)
    def _goal_move_to_tomorrow(self, rng: TaskRng, split: str) -> Episode:
        project = rng.choice(self._projects)
        today = self._today.isoformat()
        tomorrow = (self._today + timedelta(days=1)).isoformat()
        due = [t for t in self._in(project) if not t["is_completed"] and t["due_date"] == today]
        goal = (
            f"Move every unfinished task of the {project['name']} project that is due today to "
            "tomorrow."
        )
        plan = [self.date_call, *self._look(project)]
        return self._on_tasks(goal, plan, due, "update_task", due_date=tomorrow)

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        if param == "project_id":
            return [p["id"] for p in self._projects]
        if param == "task_id":
            return [t["id"] for t in self._tasks]
        if param == "due_date":
            return [(self._today + timedelta(days=i)).isoformat() for i in range(-3, 8)]
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


def _by_id(entries: list[dict], entry_id: str, kind: str, hint: str) -> dict:
    """The project or task with ``entry_id``; :class:`ToolError` with ``hint`` when none has it."""
    for entry in entries:
        if entry["id"] == entry_id.strip():
            return entry
    raise ToolError(f"no {kind} has the id {entry_id.strip()[:30]!r}; {hint}")


def _check_priority(priority: int) -> None:
    if not 1 <= priority <= 4:
        raise ToolError(f"priority must be 1 (normal) to 4 (urgent), got {priority}")


def _described(entry: dict, project: dict) -> str:
    return f"the task '{entry['content']}' of the {project['name']} project"


def _named(tasks: list[dict], entry: dict) -> dict:
    """The task of ``tasks`` (a get_tasks result) with the content of ``entry``."""
    return next(t for t in tasks if t["content"] == entry["content"])


def _unfinished(tasks: list[dict]) -> list[dict]:
    return [t for t in tasks if not t["is_completed"]]


def _overdue(tasks: list[dict], today: str) -> list[dict]:
    """The unfinished tasks due before ``today`` (YYYY-MM-DD)."""
    return [t for t in _unfinished(tasks) if t["due_date"] is not None and t["due_date"] < today]


def _place(description: str) -> str:
    """The place a task's description names ("Place: ... . Tips: ...")."""
    return description.split(".")[0].removeprefix("Place: ")


def _minutes(duration: dict) -> int:
    """The minutes of a get_task_duration result ("30(minute)")."""
    return int(duration["duration"].removesuffix("(minute)"))
