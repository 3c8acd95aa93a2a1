"""The task manager's goals: 18 templates at three levels, questions about the account ("When is
... due?", "Which project has the most unfinished tasks?") and operations on it ("Postpone ...
by 3 days", "Complete every overdue task in Home"). An operation's goal state is the canonical
account it must end in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import (
    Answer,
    CurrentDate,
    Episode,
    Goals,
    PlanStep,
    Results,
    call,
    goal_template,
    load_data,
    normalize_answer,
)
from llmgym.envs.tools.todo.account import Account, canonical
from llmgym.errors import NoGoal

__all__ = ["TodoGoals"]

PRIORITY_NAMES = {1: "normal", 2: "medium", 3: "high", 4: "urgent"}
MAX_DURATION_CHECKS = 6
_DATE = CurrentDate.date_call


class TodoGoals(Goals[Account]):
    """Questions about the account (answered with it unchanged) and operations on it."""

    @property
    def today(self) -> date:
        """The user's current date."""
        return self.state.today

    def _look(self, project: dict) -> list[PlanStep]:
        return [call("get_projects"), call("get_tasks", project_id=project["id"])]

    def _operation(
        self, goal: str, plan: list[PlanStep], change: Callable[[list[dict], list[dict]], None]
    ) -> Episode:
        """``change(projects, tasks)`` edits copies of the state into the goal state."""
        projects = [dict(p) for p in self.state.projects]
        tasks = [dict(t) for t in self.state.tasks]
        change(projects, tasks)
        finish = call("finish", answer="done")
        return Episode(goal, [*plan, finish], goal_state=canonical(projects, tasks))

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
        candidates = [t for t in self.state.tasks if want is None or want(t)]
        if not candidates:
            raise NoGoal
        entry = rng.choice(candidates)
        return entry, self.state.find_project(entry["project_id"])

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
        project = owner if rng.random() < 0.5 else rng.choice(self.state.projects)
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
        project = rng.choice(self.state.projects)
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
        project = rng.choice(self.state.projects)
        count = sum(not t["is_completed"] for t in self.state.tasks_of(project))
        goal = f"How many unfinished tasks are there in the {project['name']} project?"
        return Episode.question(
            goal, self._look(project), Answer(count, "number"), lambda r: len(_unfinished(r[1]))
        )

    @goal_template(level=2)
    def _goal_top_priority(self, rng: TaskRng, split: str) -> Episode | None:
        project = rng.choice(self.state.projects)
        open_tasks = [t for t in self.state.tasks_of(project) if not t["is_completed"]]
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
        project = rng.choice(self.state.projects)
        today = self.today.isoformat()
        goal = (
            f"How many unfinished tasks of the {project['name']} project are overdue (due before "
            "today)?"
        )
        plan = [_DATE, *self._look(project)]
        answer = Answer(len(_overdue(self.state.tasks_of(project), today)), "number")
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
        project = rng.choice(self.state.projects)
        words = load_data("todo")["projects"][project["name"]]
        taken = {normalize_answer(t["content"]) for t in self.state.tasks}
        fresh = [w for w in words if normalize_answer(w) not in taken]
        if not fresh:
            return None
        content = rng.choice(fresh)
        priority = rng.randint(1, 4)
        offset = rng.randint(1, 10)
        due = (self.today + timedelta(days=offset)).isoformat()
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
            _DATE,
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
        project = rng.choice(self.state.projects)
        open_tasks = [t for t in self.state.tasks_of(project) if not t["is_completed"]]
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
            p["name"]: sum(not t["is_completed"] for t in self.state.tasks_of(p))
            for p in self.state.projects
        }
        best = max(counts.values())
        leaders = [name for name, n in counts.items() if n == best]
        if len(leaders) > 1:
            return None
        goal = "Which project has the most unfinished tasks?"
        plan = [
            call("get_projects"),
            *(call("get_tasks", project_id=p["id"]) for p in self.state.projects),
        ]

        def busiest(results: Results) -> str:
            unfinished = [len(_unfinished(tasks)) for tasks in results[1:]]
            return str(results[0][unfinished.index(max(unfinished))]["name"])

        return Episode.question(goal, plan, Answer(leaders[0], "text"), busiest)

    @goal_template(level=3)
    def _goal_complete_overdue(self, rng: TaskRng, split: str) -> Episode:
        project = rng.choice(self.state.projects)
        overdue = _overdue(self.state.tasks_of(project), self.today.isoformat())
        goal = (
            f"Complete every unfinished task of the {project['name']} project that is due before "
            "today."
        )
        return self._on_tasks(goal, [_DATE, *self._look(project)], overdue, "complete_task")

    @goal_template(level=3)
    def _goal_delete_completed(self, rng: TaskRng, split: str) -> Episode:
        project = rng.choice(self.state.projects)
        done = [t for t in self.state.tasks_of(project) if t["is_completed"]]
        goal = f"Delete all completed tasks of the {project['name']} project."
        return self._on_tasks(goal, self._look(project), done, "delete_task")

    @goal_template(level=3)
    def _goal_move_to_tomorrow(self, rng: TaskRng, split: str) -> Episode:
        project = rng.choice(self.state.projects)
        today = self.today.isoformat()
        tomorrow = (self.today + timedelta(days=1)).isoformat()
        due = [
            t
            for t in self.state.tasks_of(project)
            if not t["is_completed"] and t["due_date"] == today
        ]
        goal = (
            f"Move every unfinished task of the {project['name']} project that is due today to "
            "tomorrow."
        )
        plan = [_DATE, *self._look(project)]
        return self._on_tasks(goal, plan, due, "update_task", due_date=tomorrow)


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
