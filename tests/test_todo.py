"""Todo: the task-manager tools and the state-based judging of questions and operations."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from llmgym.envs.tools.todo import TodoEnv


def act(env: TodoEnv, tool_name: str, /, **arguments) -> tuple[object, bool]:
    observation, _, _, _, info = env.step(
        f"Action: {tool_name} with Action Input: {json.dumps(arguments)}"
    )
    try:
        return json.loads(observation), info["invalid_action"]
    except json.JSONDecodeError:
        return observation, info["invalid_action"]


def finish(env: TodoEnv, answer: object = "done") -> tuple[float, bool]:
    _, reward, terminated, _, info = env.step(
        f"Action: finish with Action Input: {json.dumps({'answer': answer})}"
    )
    assert terminated
    return reward, info["success"]


def episode_with(goal_words: str, limit: int = 400) -> TodoEnv:
    """The first eval episode whose goal contains ``goal_words``."""
    env = gym.make("llmgym/Todo-v0").unwrapped
    for index in range(limit):
        env.reset(options={"task_id": f"eval/{index:05d}"})
        if goal_words in env.instruction:
            return env
    pytest.fail(f"no goal with {goal_words!r}")


@pytest.fixture
def env() -> TodoEnv:
    env = gym.make("llmgym/Todo-v0").unwrapped
    env.reset(options={"task_id": "train/00000"})
    return env


def test_listing_tools(env: TodoEnv) -> None:
    projects, invalid = act(env, "get_projects")
    assert not invalid and len(projects) == 4
    assert set(projects[0]) == {"id", "name", "order", "color", "is_favorite"}
    tasks, _ = act(env, "get_tasks", project_id=projects[0]["id"])
    assert len(tasks) == 5 and all(t["project_id"] == projects[0]["id"] for t in tasks)
    assert "description" not in tasks[0]
    description, _ = act(env, "get_task_description", task_id=tasks[0]["id"])
    assert description["description"].startswith("Place: ")
    duration, _ = act(env, "get_task_duration", task_id=tasks[0]["id"])
    assert duration["duration"].endswith("(minute)")
    result, invalid = act(env, "get_tasks", project_id="12345")
    assert invalid and "get_projects lists the ids" in result


def test_editing_tools(env: TodoEnv) -> None:
    project = env._state.projects[1]
    task = next(t for t in env._state.tasks if t["project_id"] == project["id"])
    completed, _ = act(env, "complete_task", task_id=task["id"])
    assert completed["is_completed"] is True
    updated, _ = act(env, "update_task", task_id=task["id"], due_date="2024-12-24", priority=4)
    assert (updated["due_date"], updated["priority"]) == ("2024-12-24", 4)
    result, invalid = act(env, "update_task", task_id=task["id"])
    assert invalid and "give at least one of due_date, priority and content" in result
    result, invalid = act(env, "update_task", task_id=task["id"], priority=5)
    assert invalid and "priority must be 1 (normal) to 4 (urgent)" in result
    result, invalid = act(env, "update_task", task_id=task["id"], due_date="24/12/2024")
    assert invalid and "not a date in the form YYYY-MM-DD" in result
    created, _ = act(env, "create_task", project_id=project["id"], content="Buy stamps", priority=2)
    assert created["content"] == "Buy stamps" and created["order"] == 5
    assert act(env, "get_tasks", project_id=project["id"])[0][-1]["id"] == created["id"]
    deleted, _ = act(env, "delete_task", task_id=created["id"])
    assert deleted["id"] == created["id"]
    _, invalid = act(env, "delete_task", task_id=created["id"])
    assert invalid
    favourite, _ = act(env, "update_project", project_id=project["id"], is_favorite=True)
    assert favourite["is_favorite"] is True
    result, invalid = act(env, "update_project", project_id=project["id"], is_favorite="True")
    assert invalid and "argument 'is_favorite' must be a boolean, got string \"True\"" in result


def test_questions_need_the_answer_and_an_unchanged_list() -> None:
    env = episode_with("How many unfinished tasks are there")
    truth = env._episode.answer.value
    assert finish(env, truth) == (1.0, True)
    env.reset(options={"task_id": env.task.task_id})
    assert finish(env, truth + 1) == (0.0, False)
    env.reset(options={"task_id": env.task.task_id})
    unfinished = next(t for t in env._state.tasks if not t["is_completed"])
    act(env, "complete_task", task_id=unfinished["id"])  # a change the question did not ask for
    assert finish(env, truth) == (0.0, False)


def test_operations_are_judged_on_the_final_state() -> None:
    env = episode_with("as completed.")
    assert finish(env) == (0.0, False)  # nothing done yet
    env.reset(options={"task_id": env.task.task_id})
    target = env._episode.plan[-2].arguments["task_id"]
    act(env, "complete_task", task_id=target)
    assert finish(env) == (1.0, True)
    env.reset(options={"task_id": env.task.task_id})
    act(env, "complete_task", task_id=target)
    act(
        env,
        "update_task",
        task_id=target,
        priority=4 if env._state.find_task(target)["priority"] != 4 else 3,
    )
    assert finish(env) == (0.0, False)  # an extra change


def test_created_tasks_are_matched_by_content_not_id() -> None:
    env = episode_with("Add a task")
    planned = env._episode.plan[-2]
    arguments = dict(planned.arguments, content=planned.arguments["content"].upper() + " ")
    act(env, "create_task", **arguments)
    assert finish(env) == (1.0, True)


def test_eval_accounts_never_appear_in_train() -> None:
    env = gym.make("llmgym/Todo-v0").unwrapped
    signatures = {}
    for split in ("train", "eval"):
        seen = signatures.setdefault(split, set())
        for index in range(60):
            env.reset(options={"task_id": f"{split}/{index:05d}"})
            seen.add(json.dumps(env._state.initial))
    assert not signatures["train"] & signatures["eval"]
