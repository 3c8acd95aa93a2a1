"""The task manager's tools (AgentGym's Todoist tools, plus task creation): projects and their
tasks, over the episode's :class:`~llmgym.envs.tools.todo.account.Account`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from llmgym.envs.tools import Toolkit, parse_iso_date, tool
from llmgym.envs.tools.todo.account import Account, check_priority, public
from llmgym.errors import ToolError

__all__ = ["MAX_TASKS", "ProjectTools", "TaskTools"]

MAX_TASKS = 200
_IDS: Mapping[str, str] = {
    "project_id": "The id of the project.",
    "task_id": "The id of the task.",
}


class ProjectTools(Toolkit[Account]):
    """List the projects, mark favourites."""

    parameter_docs: ClassVar[Mapping[str, str]] = _IDS

    @tool
    def get_projects(self) -> list[dict]:
        """Get all projects of the account.

        Returns:
            An array of projects with id, name, order, color and is_favorite.
        """
        return [dict(p) for p in self.state.projects]

    @tool
    def update_project(self, project_id: str, is_favorite: bool) -> dict:
        """Mark a project as a favourite or not.

        Args:
            is_favorite: Whether the project is a favourite.

        Returns:
            The updated project.
        """
        project = self.state.find_project(project_id)
        project["is_favorite"] = is_favorite
        return dict(project)


class TaskTools(Toolkit[Account]):
    """Read, create, update, complete and delete the tasks of a project."""

    parameter_docs: ClassVar[Mapping[str, str]] = _IDS

    @tool
    def get_tasks(self, project_id: str) -> list[dict]:
        """Get all tasks of a project, finished or not.

        Returns:
            An array of tasks with id, project_id, order, content (the task's name), is_completed,
            priority (1 normal to 4 urgent) and due_date.
        """
        project = self.state.find_project(project_id)
        return [public(t) for t in self.state.tasks_of(project)]

    @tool
    def get_task_description(self, task_id: str) -> dict:
        """Get the description of a task (the place to go and tips).

        Returns:
            id, content and description.
        """
        entry = self.state.find_task(task_id)
        return {k: entry[k] for k in ("id", "content", "description")}

    @tool
    def get_task_duration(self, task_id: str) -> dict:
        """Get how long a task takes.

        Returns:
            id, content and duration as 'amount(unit)', e.g. '30(minute)'.
        """
        entry = self.state.find_task(task_id)
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
        project = self.state.find_project(project_id)
        if not content.strip() or len(content) > 200:
            raise ToolError("content must be 1 to 200 characters")
        if due_date is not None:
            due_date = parse_iso_date(due_date, "due_date").isoformat()
        check_priority(priority)
        if duration is not None and not 1 <= duration <= 1440:
            raise ToolError("duration must be 1 to 1440 minutes")
        if len(self.state.tasks) >= MAX_TASKS:
            raise ToolError(f"the account holds at most {MAX_TASKS} tasks")
        siblings = [t for t in self.state.tasks if t["project_id"] == project["id"]]
        entry = {
            "id": f"tn{self.state.next_id:04d}",
            "project_id": project["id"],
            "order": len(siblings),
            "content": content.strip(),
            "description": description[:500],
            "is_completed": False,
            "priority": priority,
            "due_date": due_date,
            "duration": duration,
        }
        self.state.next_id += 1
        self.state.tasks.append(entry)
        return public(entry)

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
        entry = self.state.find_task(task_id)
        if due_date is None and priority is None and content is None:
            raise ToolError("give at least one of due_date, priority and content")
        if due_date is not None:
            due_date = parse_iso_date(due_date, "due_date").isoformat()
        if priority is not None:
            check_priority(priority)
        if content is not None and not 0 < len(content.strip()) <= 200:
            raise ToolError("content must be 1 to 200 characters")
        for key, value in (("due_date", due_date), ("priority", priority), ("content", content)):
            if value is not None:
                entry[key] = value.strip() if isinstance(value, str) and key == "content" else value
        return public(entry)

    @tool
    def complete_task(self, task_id: str) -> dict:
        """Mark a task as completed.

        Returns:
            The completed task.
        """
        entry = self.state.find_task(task_id)
        entry["is_completed"] = True
        return public(entry)

    @tool
    def delete_task(self, task_id: str) -> dict:
        """Delete a task.

        Returns:
            The deleted task.
        """
        entry = self.state.find_task(task_id)
        self.state.tasks.remove(entry)
        return public(entry)
