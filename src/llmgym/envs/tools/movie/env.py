"""Movie: answer questions about films and people with the tools of a simulated film database
(search, details, cast and crew, as in AgentGym's TMDB-based movie tools)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from llmgym.envs.tools import ToolConfig, ToolEnv, prompt_texts
from llmgym.envs.tools.movie.database import split_movies, split_people
from llmgym.envs.tools.movie.goals import MovieGoals
from llmgym.envs.tools.movie.toolkit import MovieTools, PersonTools

__all__ = ["MovieConfig", "MovieEnv"]


@dataclass(frozen=True)
class MovieConfig(ToolConfig):
    """Difficulty knobs of :class:`MovieEnv`."""


class MovieEnv(ToolEnv[MovieConfig, None]):
    """Answer questions about films and the people who make them with a film-database service.

    ## Description
    AgentGym's Movie environment (built on TMDB) rebuilt offline: a film database generated from a
    fixed seed by llmgym's own generator — 1,200 films with release dates, budgets, revenues,
    ratings, genres, studios, countries, keywords and alternative titles, and about 2,400 people
    (actors, directors, writers, producers, composers) with birthdays, birthplaces, biographies,
    external ids and their credits. The tools mirror AgentGym's (search, details, cast and crew of
    a film, credits of a person). Goals come from 14 templates (24 kinds of question) at three
    levels: one lookup
    ("When was The Silent Harbor released?"), a dependent lookup ("Who directed ...?", "How many
    films has ... acted in?") and multi-hop questions ("In which city was the director of ...
    born?", "Have A and B appeared in the same film?"). Eval goals are about films and people no
    train goal mentions.

    ## Action Space
    Text: one tool call per turn, ``Action: TOOL with Action Input: {JSON}`` or a JSON function
    call ``{"name": TOOL, "arguments": {...}}``. Tools: ``get_search_movie(movie_name)``,
    ``get_movie_details``, ``get_movie_production_companies``, ``get_movie_production_countries``,
    ``get_movie_cast``, ``get_movie_crew``, ``get_movie_keywords``,
    ``get_movie_alternative_titles`` (each by ``movie_id``), ``get_search_person(person_name)``,
    ``get_person_details``, ``get_person_cast``, ``get_person_crew``,
    ``get_person_external_ids`` (each by ``person_id``), ``check_valid_actions`` and
    ``finish(answer)``. Ids are strings such as ``"m20417"`` and ``"p1123"``. Malformed calls,
    unknown tools, missing, unknown or mistyped arguments and unknown ids get precise feedback,
    set ``info["invalid_action"]`` and change nothing.

    ## Observation Space
    Text. On reset: ``Goal: ...`` and the tool signatures. After a call: its JSON result, or the
    error.

    With ``prompt_style="agentgym"`` the reset and step texts are worded as AgentGym's tool
    servers word them (``Now new trial starts. ...``, ``Observation: ...`` then ``Give me one
    action.``); docs/tool-environments.md gives them exactly.

    ## Rewards
    ``1.0`` when ``finish`` gets the true answer, else ``0.0``. Numbers match within max(0.01, 1%
    of the true value); dates as ``YYYY-MM-DD``; names, titles and yes/no ignoring case and
    punctuation; lists (genres, studios) in any order.

    With ``reward="progress"`` the rewards pay out AgentGym's progress rate (subgoals met by any
    tool result, as defined in docs/tool-environments.md; ``info["progress"]`` holds the rate);
    here the rate is reported as it is, as AgentGym's Movie server does.

    ## Starting State
    Nothing looked up; the goal is drawn from the split's films and people.

    ## Episode End
    Terminates when ``finish`` is called (``info["success"]``, ``info["expected_answer"]``).
    Truncated by the registered turn limit (12 turns, as in AgentGym).

    ## Arguments
    ``gymnasium.make("llmgym/Movie-v0", min_level=1, max_level=3, action_format="any")``; see
    :class:`MovieConfig`. ``reward``: ``"finish"`` or
    ``"progress"``; ``prompt_style``: ``"llmgym"`` or ``"agentgym"``.

    ## Version History
    * v0: Initial version; the ``reward`` and ``prompt_style`` options (AgentGym's variant)
      were added later, their defaults keep the original play.
    """

    config_class = MovieConfig
    env_name = "movie"
    service, notes, example = prompt_texts("movie")
    toolkits = (MovieTools, PersonTools)
    goals = MovieGoals

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        return _random_arguments().get(param)


@cache
def _random_arguments() -> dict[str, list[str]]:
    movies, people = split_movies("train")[:200], split_people("train")[:300]
    return {
        "movie_id": [m.id for m in movies],
        "movie_name": [m.title for m in movies],
        "person_id": [p.id for p in people],
        "person_name": [p.name for p in people],
    }
