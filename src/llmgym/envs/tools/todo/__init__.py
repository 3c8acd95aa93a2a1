"""Todo: answer questions about, and manage, a to-do list (projects and tasks) with the tools of
a simulated task manager (AgentGym's Todoist tools, plus task creation).

* :mod:`~llmgym.envs.tools.todo.account` — the episode's generated account;
* :mod:`~llmgym.envs.tools.todo.toolkit` — the task manager's tools;
* :mod:`~llmgym.envs.tools.todo.goals` — the goal templates;
* :mod:`~llmgym.envs.tools.todo.env` — :class:`TodoEnv`.
"""

from llmgym.envs.tools.todo.env import TodoConfig, TodoEnv

__all__ = ["TodoConfig", "TodoEnv"]
