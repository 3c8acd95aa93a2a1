"""The environment table: the one place that lists every llmgym environment.

Importing this module imports no environment; ``gymnasium.make`` loads each one on demand.
"""

from llmgym.core.registry import EnvEntry

__all__ = ["ENVIRONMENTS", "get_entry"]

ENVIRONMENTS: tuple[EnvEntry, ...] = (
    EnvEntry(
        id="llmgym/Wordle-v0",
        entry_point="llmgym.envs.wordle:WordleEnv",
        max_episode_steps=20,
        summary="Guess the hidden word in six tries from green/yellow/grey letter feedback.",
    ),
    EnvEntry(
        id="llmgym/Maze-v0",
        entry_point="llmgym.envs.maze:MazeEnv",
        max_episode_steps=None,
        summary="Navigate a procedurally generated maze to the goal by text moves.",
    ),
    EnvEntry(
        id="llmgym/TextCraft-v0",
        entry_point="llmgym.envs.textcraft:TextCraftEnv",
        max_episode_steps=40,
        summary="Craft a goal item from raw materials by following a set of recipes.",
    ),
    EnvEntry(
        id="llmgym/Weather-v0",
        entry_point="llmgym.envs.tools.weather:WeatherEnv",
        max_episode_steps=10,
        summary="Answer weather questions by calling the tools of a simulated weather service.",
    ),
    EnvEntry(
        id="llmgym/Movie-v0",
        entry_point="llmgym.envs.tools.movie:MovieEnv",
        max_episode_steps=12,
        summary="Answer questions about films and people with the tools of a film database.",
    ),
    EnvEntry(
        id="llmgym/Academia-v0",
        entry_point="llmgym.envs.tools.academia:AcademiaEnv",
        max_episode_steps=12,
        summary="Answer questions about papers and authors by walking citation and "
        "collaboration graphs.",
    ),
    EnvEntry(
        id="llmgym/Sheet-v0",
        entry_point="llmgym.envs.tools.sheet:SheetEnv",
        max_episode_steps=15,
        summary="Edit a spreadsheet with spreadsheet tools until it matches the goal.",
    ),
    EnvEntry(
        id="llmgym/Todo-v0",
        entry_point="llmgym.envs.tools.todo:TodoEnv",
        max_episode_steps=15,
        summary="Answer questions about, and manage, a to-do list with task-manager tools.",
    ),
)


def get_entry(env_id: str) -> EnvEntry:
    """The table row of ``env_id`` (accepts ``"llmgym/Wordle-v0"`` or ``"Wordle-v0"``)."""
    wanted = env_id if env_id.startswith("llmgym/") else f"llmgym/{env_id}"
    for entry in ENVIRONMENTS:
        if entry.id == wanted:
            return entry
    known = ", ".join(entry.id for entry in ENVIRONMENTS)
    raise KeyError(f"unknown environment {env_id!r}; known: {known}")
