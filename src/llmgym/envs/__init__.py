"""The environment table: the one place that lists every llmgym environment.

Importing this module imports no environment; ``gymnasium.make`` loads each one on demand.
"""

from llmgym.core.registry import EnvEntry

__all__ = ["ENVIRONMENTS", "game_entries", "get_entry"]

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
        id="llmgym/SQL-v0",
        entry_point="llmgym.envs.sql:SQLEnv",
        max_episode_steps=20,
        summary="Answer a question about a generated sqlite database with one SQL query.",
    ),
    EnvEntry(
        id="llmgym/Household-v0",
        entry_point="llmgym.envs.household:HouseholdEnv",
        max_episode_steps=50,
        summary="ALFWorld's six household task types (pick, examine in light, clean, heat, "
        "cool, pick two) in generated rooms.",
    ),
    EnvEntry(
        id="llmgym/ConnectFour-v0",
        entry_point="llmgym.envs.multiagent.connect_four:ConnectFourEnv",
        game="connect_four",
        max_episode_steps=60,
        summary="Connect Four in text against a scripted or LLM opponent (PettingZoo game).",
        extra="multiagent",
        requires=("pettingzoo",),
    ),
    EnvEntry(
        id="llmgym/Negotiation-v0",
        entry_point="llmgym.envs.multiagent.negotiation:NegotiationEnv",
        game="negotiation",
        max_episode_steps=30,
        summary="Split a pool of items with an opponent whose values are hidden (PettingZoo game).",
        extra="multiagent",
        requires=("pettingzoo",),
    ),
    EnvEntry(
        id="llmgym/Auction-v0",
        entry_point="llmgym.envs.multiagent.auction:AuctionEnv",
        game="auction",
        max_episode_steps=30,
        summary="Sealed-bid auction: infer how rivals bid from revealed bids (PettingZoo game).",
        extra="multiagent",
        requires=("pettingzoo",),
    ),
    EnvEntry(
        id="llmgym/WebShop-v0",
        entry_point="llmgym.envs.webshop:WebShopEnv",
        max_episode_steps=15,
        summary="Search a generated 10,000-product web shop and buy what the instruction asks for.",
        extra="webshop",
        requires=("bs4",),
    ),
    EnvEntry(
        id="llmgym/Crafter-v0",
        entry_point="llmgym.envs.crafter.env:CrafterEnv",
        max_episode_steps=None,
        summary="Survive and craft in Crafter's open world (text); EnvGen's world knobs.",
        extra="crafter",
        requires=("crafter",),
    ),
    EnvEntry(
        id="llmgym/CrafterPixels-v0",
        entry_point="llmgym.envs.crafter.env:CrafterPixelsEnv",
        max_episode_steps=None,
        summary="Crafter with 64x64 RGB frames and Discrete(17) actions, for RL agents.",
        extra="crafter",
        requires=("crafter",),
        kwargs={"target": "none"},
    ),
    EnvEntry(
        id="llmgym/Heist-v0",
        entry_point="llmgym.envs.heist.env:HeistEnv",
        max_episode_steps=None,
        summary="Fetch keys in order, open locked doors and steal the gem (procgen Heist, text).",
    ),
    EnvEntry(
        id="llmgym/HeistPixels-v0",
        entry_point="llmgym.envs.heist.env:HeistPixelsEnv",
        max_episode_steps=None,
        summary="Heist with 64x64 RGB frames and Discrete(4) actions, for RL agents.",
    ),
    EnvEntry(
        id="llmgym/ProcgenHeist-v0",
        entry_point="llmgym.envs.heist.procgen:ProcgenHeistEnv",
        max_episode_steps=None,
        summary="procgen's own Heist (pixels, Discrete(15)); needs numpy<2, not in [all].",
        extra="procgen",
        requires=("procgen", "gym3"),
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


def game_entries() -> dict[str, EnvEntry]:
    """The multi-agent games, by game name (``"connect_four"``): the rows with a ``game``."""
    return {entry.game: entry for entry in ENVIRONMENTS if entry.game is not None}
