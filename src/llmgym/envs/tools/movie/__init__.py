"""Movie: answer questions about films and people with the tools of a simulated film database
(search, details, cast and crew, as in AgentGym's TMDB-based movie tools).

* :mod:`~llmgym.envs.tools.movie.database` — the generated films and people;
* :mod:`~llmgym.envs.tools.movie.toolkit` — the database's tools;
* :mod:`~llmgym.envs.tools.movie.goals` — the goal templates;
* :mod:`~llmgym.envs.tools.movie.env` — :class:`MovieEnv`.
"""

from llmgym.envs.tools.movie.database import Movie, MovieDatabase, Person, movie_database
from llmgym.envs.tools.movie.env import MovieConfig, MovieEnv

__all__ = ["Movie", "MovieConfig", "MovieDatabase", "MovieEnv", "Person", "movie_database"]
