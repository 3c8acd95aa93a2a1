"""The movie service's goals: 14 templates (24 kinds of question) about the films and people of
the task's split, from one lookup to multi-hop questions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import (
    Answer,
    AnswerKind,
    Episode,
    Goals,
    PlanStep,
    Results,
    call,
    goal_template,
)
from llmgym.envs.tools.movie.database import Movie, Person, split_movies, split_people

__all__ = ["MovieGoals"]

_MOVIE_FACTS: tuple[tuple[str, str, AnswerKind], ...] = (
    ("When was the movie {} released?", "release_date", "date"),
    ("What was the budget of {}, in US dollars?", "budget", "number"),
    ("How much revenue did {} make, in US dollars?", "revenue", "number"),
    ("What is the average vote score of {}?", "vote_average", "number"),
    ("How long is {}, in minutes?", "runtime", "number"),
    ("Which genres does {} belong to?", "genres", "list"),
)
"""Questions about a film's details: the question, the field of get_movie_details (a
:class:`Movie` attribute) that answers it, and how answers are compared."""


def _birthday(details: dict[str, Any]) -> str:
    birthday: str = details["birthday"]
    return birthday


def _birth_city(details: dict[str, Any]) -> str:
    """The city of a person's ``place_of_birth`` ("City, Country")."""
    city, _, _ = details["place_of_birth"].partition(", ")
    return str(city)


def _imdb_id(external_ids: dict[str, Any]) -> str:
    imdb_id: str = external_ids["imdb_id"]
    return imdb_id


def _crew_member(crew: dict[str, Any], job: str) -> str:
    """The name of the one crew member of a get_movie_crew result with ``job``."""
    (name,) = [member["name"] for member in crew["crew"] if member["job"] == job]
    return str(name)


def _player(cast: dict[str, Any], character: str) -> dict[str, Any]:
    """The cast member of a get_movie_cast result who played ``character``."""
    (member,) = [member for member in cast["cast"] if member["character"] == character]
    return dict(member)


class MovieGoals(Goals[None]):
    """Questions about films, the people who make them and their credits."""

    @staticmethod
    def _movie_plan(movie: Movie, tool_name: str) -> list[PlanStep]:
        """Find ``movie`` by its title, then call ``tool_name`` with its id."""
        return [
            call("get_search_movie", movie_name=movie.title),
            call(tool_name, movie_id=movie.id),
        ]

    @staticmethod
    def _person_plan(person: Person, tool_name: str) -> list[PlanStep]:
        """Find ``person`` by name, then call ``tool_name`` with their id."""
        return [
            call("get_search_person", person_name=person.name),
            call(tool_name, person_id=person.id),
        ]

    @goal_template(level=1, weight=2)
    def _goal_movie_fact(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(split_movies(split))
        question, field, kind = rng.choice(_MOVIE_FACTS)
        plan = self._movie_plan(movie, "get_movie_details")
        answer = Answer(getattr(movie, field), kind)
        return Episode.question(question.format(movie.title), plan, answer, lambda r: r[1][field])

    @goal_template(level=1)
    def _goal_companies(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(split_movies(split))
        goal = f"Which companies produced {movie.title}?"
        if len(movie.companies) == 1:
            goal = f"Which company produced {movie.title}?"
        names = tuple(name for name, _ in movie.companies)
        plan = self._movie_plan(movie, "get_movie_production_companies")
        return Episode.question(
            goal,
            plan,
            Answer(names, "list"),
            lambda r: [company["name"] for company in r[1]["production_companies"]],
        )

    @goal_template(level=1)
    def _goal_person_fact(self, rng: TaskRng, split: str) -> Episode:
        person = rng.choice(split_people(split))
        kind = rng.randbelow(3)
        read: Callable[[dict[str, Any]], str]
        if kind == 0:
            goal, answer = f"When was {person.name} born?", Answer(person.birthday, "date")
            tool_name, read = "get_person_details", _birthday
        elif kind == 1:
            goal = f"In which city was {person.name} born?"
            answer = Answer(person.birth_city, "text", (person.place_of_birth,))
            tool_name, read = "get_person_details", _birth_city
        else:
            goal, answer = f"What is the IMDb id of {person.name}?", Answer(person.imdb_id, "text")
            tool_name, read = "get_person_external_ids", _imdb_id
        plan = self._person_plan(person, tool_name)
        return Episode.question(goal, plan, answer, lambda r: read(r[1]))

    @goal_template(level=2, weight=1.5)
    def _goal_director(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(split_movies(split))
        (director,) = movie.people("Director")
        goal = rng.choice(
            [f"Who directed {movie.title}?", f"Who is the director of {movie.title}?"]
        )
        plan = self._movie_plan(movie, "get_movie_crew")
        answer = Answer(director.name, "text")
        return Episode.question(goal, plan, answer, lambda r: _crew_member(r[1], "Director"))

    @goal_template(level=2)
    def _goal_composer(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(split_movies(split))
        (composer,) = movie.people("Original Music Composer")
        goal = f"Who composed the music of {movie.title}?"
        plan = self._movie_plan(movie, "get_movie_crew")
        return Episode.question(
            goal,
            plan,
            Answer(composer.name, "text"),
            lambda r: _crew_member(r[1], "Original Music Composer"),
        )

    @goal_template(level=2, weight=1.5)
    def _goal_character(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(split_movies(split))
        actor, character = rng.choice(movie.cast)
        goal = f"Who played {character} in {movie.title}?"
        plan = self._movie_plan(movie, "get_movie_cast")
        answer = Answer(actor.name, "text")
        return Episode.question(goal, plan, answer, lambda r: _player(r[1], character)["name"])

    @goal_template(level=2)
    def _goal_profit(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(split_movies(split))
        goal = (
            f"How much did {movie.title} earn beyond its budget (revenue minus budget), in US "
            "dollars? A loss is a negative number."
        )
        plan = self._movie_plan(movie, "get_movie_details")
        answer = Answer(movie.revenue - movie.budget, "number")
        return Episode.question(goal, plan, answer, lambda r: r[1]["revenue"] - r[1]["budget"])

    @goal_template(level=2)
    def _goal_acting_count(self, rng: TaskRng, split: str) -> Episode:
        actors = [p for p in split_people(split) if p.cast]
        person = rng.choice(actors)
        plan = self._person_plan(person, "get_person_cast")
        if rng.random() < 0.5:
            goal = f"In how many movies has {person.name} acted?"
            answer = Answer(len(person.cast), "number")
            return Episode.question(goal, plan, answer, lambda r: len(r[1]["cast"]))
        goal = f"In which year did {person.name} first act in a movie?"
        answer = Answer(min(m.year for m, _ in person.cast), "number")
        return Episode.question(
            goal, plan, answer, lambda r: min(int(c["release_date"][:4]) for c in r[1]["cast"])
        )

    @goal_template(level=2)
    def _goal_latest_directed(self, rng: TaskRng, split: str) -> Episode | None:
        person = rng.choice(split_people(split))
        directed = sorted(
            (m for m, job in person.crew if job == "Director"), key=lambda m: m.release_date
        )
        if len(directed) < 2 or directed[-1].release_date == directed[-2].release_date:
            return None
        latest = rng.random() < 0.5
        if latest:
            goal, movie = f"What is the most recent movie directed by {person.name}?", directed[-1]
        else:
            goal, movie = f"What was the first movie directed by {person.name}?", directed[0]
        plan = self._person_plan(person, "get_person_crew")

        def title(results: Results) -> str:
            jobs = reversed(results[1]["crew"])  # oldest first
            directed = [job["title"] for job in jobs if job["job"] == "Director"]
            return str(directed[-1] if latest else directed[0])

        return Episode.question(goal, plan, Answer(movie.title, "text"), title)

    @goal_template(level=3)
    def _goal_director_birthplace(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(split_movies(split))
        (director,) = movie.people("Director")
        if rng.random() < 0.5:
            goal = f"In which city was the director of {movie.title} born?"
            answer = Answer(director.birth_city, "text", (director.place_of_birth,))
            read = _birth_city
        else:
            goal = f"When was the director of {movie.title} born?"
            answer = Answer(director.birthday, "date")
            read = _birthday
        plan = [
            *self._movie_plan(movie, "get_movie_crew"),
            call("get_person_details", person_id=director.id),
        ]
        return Episode.question(goal, plan, answer, lambda r: read(r[2]))

    @goal_template(level=3)
    def _goal_character_actor_birthday(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(split_movies(split))
        actor, character = rng.choice(movie.cast)
        goal = f"When was the actor who played {character} in {movie.title} born?"
        plan = [
            *self._movie_plan(movie, "get_movie_cast"),
            call("get_person_details", person_id=actor.id),
        ]
        return Episode.question(
            goal, plan, Answer(actor.birthday, "date"), lambda r: _birthday(r[2])
        )

    @goal_template(level=3)
    def _goal_released_first(self, rng: TaskRng, split: str) -> Episode | None:
        first, second = rng.sample(split_movies(split), 2)
        if first.release_date == second.release_date:
            return None
        goal = f"Which movie was released first, {first.title} or {second.title}?"
        earlier = min((first, second), key=lambda m: m.release_date)
        plan = [
            *self._movie_plan(first, "get_movie_details"),
            *self._movie_plan(second, "get_movie_details"),
        ]
        return Episode.question(
            goal,
            plan,
            Answer(earlier.title, "text"),
            lambda r: min(r[1], r[3], key=lambda details: details["release_date"])["title"],
        )

    @goal_template(level=3)
    def _goal_costars(self, rng: TaskRng, split: str) -> Episode | None:
        pool = [p for p in split_people(split) if p.cast]
        first = rng.choice(pool)
        costars = {p for m, _ in first.cast for p, _ in m.cast if p is not first}
        if rng.random() < 0.5:
            candidates = [p for p in pool if p in costars]
        else:
            candidates = [p for p in pool if p not in costars and p is not first]
        if not candidates:
            return None
        second = rng.choice(candidates)
        goal = f"Have {first.name} and {second.name} acted in the same movie? Answer yes or no."
        plan = [
            *self._person_plan(first, "get_person_cast"),
            *self._person_plan(second, "get_person_cast"),
        ]

        def shared(results: Results) -> str:
            films = [{role["movie_id"] for role in results[i]["cast"]} for i in (1, 3)]
            return "yes" if films[0] & films[1] else "no"

        return Episode.question(
            goal, plan, Answer("yes" if second in costars else "no", "text"), shared
        )

    @goal_template(level=3)
    def _goal_lead_actor_filmography(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(split_movies(split))
        lead, _ = movie.cast[0]
        goal = f"In how many movies has the top-billed actor of {movie.title} acted?"
        plan = [
            *self._movie_plan(movie, "get_movie_cast"),
            call("get_person_cast", person_id=lead.id),
        ]
        return Episode.question(
            goal, plan, Answer(len(lead.cast), "number"), lambda r: len(r[2]["cast"])
        )
