"""The film database's tools: search films and people, read a film's details, cast and crew,
and a person's details and credits. The database is the same for every task, so the toolkits
keep no episode state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeVar

from llmgym.envs.tools import Toolkit, search_results, tool
from llmgym.envs.tools.movie.database import DEPARTMENT, Movie, Person, movie_database
from llmgym.errors import ToolError

__all__ = ["MovieTools", "PersonTools"]

_Record = TypeVar("_Record")


def _by_id(
    records: Mapping[str, _Record], record_id: str, kind: str, example: str, source: str
) -> _Record:
    """The record (a film or a person) with ``record_id``; :class:`ToolError` when there is none,
    saying what ids look like and which tool gives them."""
    record = records.get(record_id.strip())
    if record is None:
        raise ToolError(
            f"no {kind} has the id {record_id.strip()[:40]!r}; ids look like '{example}' and come "
            f"from {source}"
        )
    return record


def _fields(record: Movie | Person, *names: str) -> dict[str, Any]:
    """The named attributes of a record, as a tool shows them."""
    return {name: getattr(record, name) for name in names}


def _movie_match(movie: Movie) -> dict[str, Any]:
    return _fields(movie, "id", "title", "release_date", "overview")


def _person_match(person: Person) -> dict[str, Any]:
    return {"id": person.id, "name": person.name, "known_for_department": person.department}


def _movie(movie_id: str) -> Movie:
    return _by_id(movie_database().movies, movie_id, "movie", "m20417", "get_search_movie")


def _person(person_id: str) -> Person:
    return _by_id(movie_database().people, person_id, "person", "p1123", "get_search_person")


class MovieTools(Toolkit[None]):
    """Search films by title and read their details, studios, countries, cast, crew, keywords
    and alternative titles."""

    parameter_docs: ClassVar[Mapping[str, str]] = {
        "movie_id": "The ID of the movie (from get_search_movie).",
    }

    @tool
    def get_search_movie(self, movie_name: str) -> dict:
        """Search for movies by title.

        Args:
            movie_name: The title (or part of it) to search for.

        Returns:
            Up to 5 matches, best first, each with id, title, release_date and overview.
        """
        found = movie_database().title_index.search(movie_name)
        return search_results(found, _movie_match, f"no movie matches {movie_name.strip()[:60]!r}")

    @tool
    def get_movie_details(self, movie_id: str) -> dict:
        """Get the details of a movie.

        Returns:
            title, budget and revenue (US dollars), genres, vote_average (0-10), release_date,
            runtime (minutes) and original_language.
        """
        movie = _movie(movie_id)
        details = _fields(movie, "id", "title", "budget", "revenue", "genres", "vote_average")
        return {
            **details,
            "release_date": movie.release_date,
            "runtime": movie.runtime,
            "original_language": movie.language,
        }

    @tool
    def get_movie_production_companies(self, movie_id: str) -> dict:
        """Get the production companies of a movie.

        Returns:
            production_companies: name and origin_country of each.
        """
        movie = _movie(movie_id)
        return {
            "production_companies": [
                {"name": name, "origin_country": country} for name, country in movie.companies
            ]
        }

    @tool
    def get_movie_production_countries(self, movie_id: str) -> dict:
        """Get the production countries of a movie.

        Returns:
            production_countries: ISO code (iso_3166_1) and name of each.
        """
        movie = _movie(movie_id)
        return {
            "production_countries": [
                {"iso_3166_1": code, "name": movie_database().country_names[code]}
                for code in movie.countries
            ]
        }

    @tool
    def get_movie_cast(self, movie_id: str) -> dict:
        """Get the cast of a movie.

        Returns:
            cast: id, name, character and billing order of every cast member.
        """
        movie = _movie(movie_id)
        return {
            "cast": [
                {"id": p.id, "name": p.name, "character": role, "order": order}
                for order, (p, role) in enumerate(movie.cast)
            ]
        }

    @tool
    def get_movie_crew(self, movie_id: str) -> dict:
        """Get the crew of a movie (director, screenplay, producers, composer, camera, editor).

        Returns:
            crew: id, name, job and department of every crew member.
        """
        movie = _movie(movie_id)
        return {
            "crew": [
                {"id": p.id, "name": p.name, "job": job, "department": DEPARTMENT[job]}
                for p, job in movie.crew
            ]
        }

    @tool
    def get_movie_keywords(self, movie_id: str) -> dict:
        """Get the keywords of a movie.

        Returns:
            keywords: a list of words.
        """
        return {"keywords": list(_movie(movie_id).keywords)}

    @tool
    def get_movie_alternative_titles(self, movie_id: str) -> dict:
        """Get the alternative titles of a movie.

        Returns:
            titles: iso_3166_1, title and type of each alternative title.
        """
        movie = _movie(movie_id)
        return {
            "id": movie.id,
            "titles": [
                {"iso_3166_1": code, "title": title, "type": kind}
                for code, title, kind in movie.alternative_titles
            ],
        }


class PersonTools(Toolkit[None]):
    """Search people by name and read their details, credits and external ids."""

    parameter_docs: ClassVar[Mapping[str, str]] = {
        "person_id": "The ID of the person (from get_search_person).",
    }

    @tool
    def get_search_person(self, person_name: str) -> dict:
        """Search for people by name.

        Args:
            person_name: The name (or part of it) to search for.

        Returns:
            Up to 5 matches, best first, each with id, name and known_for_department.
        """
        found = movie_database().name_index.search(person_name)
        return search_results(
            found, _person_match, f"no person matches {person_name.strip()[:60]!r}"
        )

    @tool
    def get_person_details(self, person_id: str) -> dict:
        """Get the details of a person.

        Returns:
            name, birthday (YYYY-MM-DD), place_of_birth, known_for_department, biography.
        """
        person = _person(person_id)
        return {
            **_fields(person, "id", "name", "birthday", "place_of_birth"),
            "known_for_department": person.department,
            "biography": person.biography,
        }

    @tool
    def get_person_cast(self, person_id: str) -> dict:
        """Get every movie a person acted in.

        Returns:
            cast: movie_id, title, character and release_date of each role, newest first.
        """
        return self._credits(person_id, "cast")

    @tool
    def get_person_crew(self, person_id: str) -> dict:
        """Get every movie a person worked on as crew.

        Returns:
            crew: movie_id, title, job and release_date of each job, newest first.
        """
        return self._credits(person_id, "crew")

    @tool
    def get_person_external_ids(self, person_id: str) -> dict:
        """Get the external ids of a person.

        Returns:
            imdb_id, facebook_id, instagram_id and twitter_id (null when there is none).
        """
        person = _person(person_id)
        return _fields(person, "id", "imdb_id", "facebook_id", "instagram_id", "twitter_id")

    def _credits(self, person_id: str, credit: Literal["cast", "crew"]) -> dict:
        """A person's roles (``cast``) or jobs (``crew``), newest first."""
        person = _person(person_id)
        credits = person.cast if credit == "cast" else person.crew
        role = "character" if credit == "cast" else "job"
        newest = sorted(credits, key=lambda r: (r[0].release_date, r[0].id), reverse=True)
        return {
            credit: [
                {"movie_id": m.id, "title": m.title, role: r, "release_date": m.release_date}
                for m, r in newest
            ]
        }
