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
        id="llmgym/TextWorld-v0",
        entry_point="llmgym.envs.textworld:TextWorldEnv",
        max_episode_steps=100,
        summary="Text adventures generated and played by Microsoft TextWorld's own engine.",
        extra="textworld",
        requires=("textworld",),
    ),
    EnvEntry(
        id="llmgym/BabyAI-v0",
        entry_point="llmgym.envs.babyai:BabyAIEnv",
        max_episode_steps=None,
        summary="MiniGrid's BabyAI levels in text, with path-planned high-level actions.",
        extra="babyai",
        requires=("minigrid",),
    ),
    EnvEntry(
        id="llmgym/SciWorld-v0",
        entry_point="llmgym.envs.sciworld:SciWorldEnv",
        max_episode_steps=300,
        summary="Grade-school science experiments in ScienceWorld's simulator (30 tasks).",
        extra="sciworld",
        requires=("scienceworld",),
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
