"""The task manager's state: a generated account of projects and tasks around the user's
current date, and the canonical form of its projects and tasks that goals are judged on."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from llmgym.core import split_of
from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import load_data, normalize_answer
from llmgym.errors import ToolError

__all__ = ["Account", "canonical", "check_priority", "generate_account", "public"]


@dataclass
class Account:
    """The user's projects and tasks (JSON-like dicts, as the tools show them) and current date."""

    today: date
    projects: list[dict]
    tasks: list[dict]
    initial: list[Any]
    """The canonical state the account starts in (see :func:`canonical`)."""
    next_id: int = 1
    """The number of the next task created."""

    def canonical(self) -> list[Any]:
        """The account's state as goals are judged on it (see :func:`canonical`)."""
        return canonical(self.projects, self.tasks)

    def find_project(self, project_id: str) -> dict:
        """The project with ``project_id``; :class:`ToolError` when there is none."""
        return _by_id(self.projects, project_id, "project", "get_projects lists the ids")

    def find_task(self, task_id: str) -> dict:
        """The task with ``task_id``; :class:`ToolError` when there is none."""
        return _by_id(self.tasks, task_id, "task", "get_tasks lists the ids of a project")

    def tasks_of(self, project: dict) -> list[dict]:
        """The tasks of ``project``, in order."""
        return [t for t in self.tasks if t["project_id"] == project["id"]]


def canonical(projects: list[dict], tasks: list[dict]) -> list[Any]:
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


def generate_account(
    split: str, project_count: int, tasks_per_project: int, rng: TaskRng
) -> Account:
    """A generated account of ``split``: ``project_count`` projects of ``tasks_per_project``
    tasks each, around a current date in 2024 (accounts are split by a hash of their
    content)."""
    words = load_data("todo")
    while True:  # draw accounts until one belongs to the task's split (by its content)
        today = date(2024, 1, 1) + timedelta(days=rng.randbelow(366))
        names = rng.sample(sorted(words["projects"]), project_count)
        contents = [rng.sample(words["projects"][n], tasks_per_project) for n in names]
        skeleton = json.dumps([today.isoformat(), names, contents])
        if split_of(f"todo:{skeleton}") == split:
            break
    projects: list[dict] = []
    tasks: list[dict] = []
    for order, (name, chosen) in enumerate(zip(names, contents, strict=True)):
        project_id = f"pr{rng.randint(100000, 999999)}"
        projects.append(
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
                due = (today + timedelta(days=rng.randint(-6, 14))).isoformat()
            tasks.append(
                {
                    "id": f"t{project_id[2:]}{position:02d}",
                    "project_id": project_id,
                    "order": position,
                    "content": content,
                    "description": (
                        f"Place: {rng.choice(words['places'])}. Tips: {rng.choice(words['tips'])}"
                    ),
                    "is_completed": rng.random() < 0.2,
                    "priority": rng.weighted_choice([1, 2, 3, 4], [5, 3, 2, 1]),
                    "due_date": due,
                    "duration": rng.choice([15, 20, 30, 45, 60, 90, 120]),
                }
            )
    return Account(today, projects, tasks, canonical(projects, tasks))


def public(entry: dict) -> dict:
    """A task as the tools show it (without its description and duration)."""
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


def _by_id(entries: list[dict], entry_id: str, kind: str, hint: str) -> dict:
    """The project or task with ``entry_id``; :class:`ToolError` with ``hint`` when none has it."""
    for entry in entries:
        if entry["id"] == entry_id.strip():
            return entry
    raise ToolError(f"no {kind} has the id {entry_id.strip()[:30]!r}; {hint}")


def check_priority(priority: int) -> None:
    """:class:`ToolError` unless ``priority`` is 1 (normal) to 4 (urgent)."""
    if not 1 <= priority <= 4:
        raise ToolError(f"priority must be 1 (normal) to 4 (urgent), got {priority}")
