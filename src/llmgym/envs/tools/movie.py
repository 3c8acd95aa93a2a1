"""Movie: answer questions about films and people with the tools of a simulated film database
(search, details, cast and crew, as in AgentGym's TMDB-based movie tools)."""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache
from typing import Any, ClassVar, Literal, TypeVar

from llmgym.core.tasks import TaskRng
from llmgym.envs.tools.base import (
    Answer,
    AnswerKind,
    Episode,
    ItemSplit,
    PlanStep,
    Results,
    ToolConfig,
    ToolEnv,
    call,
    goal_template,
    load_data,
    normalize_answer,
    prompt_texts,
    search_results,
    tool,
)
from llmgym.errors import ToolError

__all__ = ["Movie", "MovieConfig", "MovieDatabase", "MovieEnv", "Person", "movie_database"]

MOVIES = 1200
ACTORS = 1500
CREW_PEOPLE = {"Director": 260, "Screenplay": 220, "Producer": 200, "Original Music Composer": 70,
               "Director of Photography": 70, "Editor": 70}  # fmt: skip
SEARCH_RESULTS = 5
_DEPARTMENT = {
    "Director": "Directing",
    "Screenplay": "Writing",
    "Producer": "Production",
    "Original Music Composer": "Sound",
    "Director of Photography": "Camera",
    "Editor": "Editing",
}


@dataclass(eq=False)
class Person:
    """Someone in the film database."""

    id: str
    name: str
    department: str
    place_of_birth: str = ""
    birth_city: str = ""
    birthday: str = ""
    biography: str = ""
    imdb_id: str = ""
    instagram_id: str | None = None
    twitter_id: str | None = None
    facebook_id: str | None = None
    cast: list[tuple[Movie, str]] = field(default_factory=list)
    crew: list[tuple[Movie, str]] = field(default_factory=list)


@dataclass(eq=False)
class Movie:
    """A film of the database."""

    id: str
    title: str
    overview: str
    release_date: str
    budget: int
    revenue: int
    vote_average: float
    runtime: int
    language: str
    genres: tuple[str, ...]
    companies: tuple[tuple[str, str], ...]
    countries: tuple[str, ...]
    keywords: tuple[str, ...]
    alternative_titles: tuple[tuple[str, str, str], ...]
    cast: list[tuple[Person, str]] = field(default_factory=list)
    crew: list[tuple[Person, str]] = field(default_factory=list)

    @property
    def year(self) -> int:
        return int(self.release_date[:4])

    def people(self, job: str) -> list[Person]:
        return [person for person, role in self.crew if role == job]


@dataclass
class MovieDatabase:
    """The generated films and people, with word indexes for search."""

    movies: dict[str, Movie]
    people: dict[str, Person]
    country_names: dict[str, str]
    title_index: _WordIndex = field(init=False)
    name_index: _WordIndex = field(init=False)

    def __post_init__(self) -> None:
        self.title_index = _WordIndex({m: m.title for m in self.movies.values()})
        self.name_index = _WordIndex({p: p.name for p in self.people.values()})


class _WordIndex:
    """Search by words: an exact (normalised) match first, then entries by the share of the
    query's words they contain, then by id. Candidates come from the query's rarer words, so a
    word as common as "the" does not make every search scan half the database."""

    def __init__(self, texts: dict[Any, str]) -> None:
        self.exact: dict[str, Any] = {}
        self.words: dict[Any, frozenset[str]] = {}
        self.postings: dict[str, list[Any]] = {}
        for entry, text in texts.items():
            normal = normalize_answer(text)
            self.exact.setdefault(normal, entry)
            self.words[entry] = frozenset(normal.split())
            for word in self.words[entry]:
                self.postings.setdefault(word, []).append(entry)
        self.common = max(20, len(texts) // 20)

    def search(self, query: str, limit: int = SEARCH_RESULTS) -> list[Any]:
        wanted = normalize_answer(query)
        words = frozenset(wanted.split())
        if not words:
            return []
        postings = [self.postings.get(word, []) for word in words]
        rare = [p for p in postings if len(p) <= self.common]
        candidates = {entry for posting in (rare or postings) for entry in posting}
        ranked = heapq.nsmallest(
            limit, candidates, key=lambda e: (-len(words & self.words[e]), e.id)
        )
        exact = self.exact.get(wanted)
        if exact is not None:
            ranked = [exact, *(e for e in ranked if e is not exact)][:limit]
        return ranked


class _Weighted:
    """Draws from items with fixed weights in O(log n) (cumulative sums and bisection)."""

    def __init__(self, items: Sequence[Any], weights: Sequence[float]) -> None:
        self.items = items
        self.totals = list(itertools.accumulate(weights))

    def draw(self, rng: TaskRng) -> Any:
        point = rng.random() * self.totals[-1]
        return self.items[min(bisect.bisect_right(self.totals, point), len(self.items) - 1)]


@cache
def movie_database() -> MovieDatabase:
    """The film database: 1,200 films and about 2,400 people, generated once from a fixed seed."""
    words = load_data("movies")
    names = load_data("names")
    places = load_data("cities")
    countries: dict[str, str] = places["countries"]
    rng = TaskRng("movie-database", 1)
    people, actors, crews = _people(rng, names)
    popular_actor = _Weighted(actors, [1.0 / (rank + 8) ** 0.9 for rank in range(len(actors))])
    popular_crew = {
        job: _Weighted(pool, [1.0 / (rank + 4) ** 0.5 for rank in range(len(pool))])
        for job, pool in crews.items()
    }
    companies = _companies(rng, words)
    country_codes = sorted(countries)
    titles: set[str] = set()
    movies: dict[str, Movie] = {}
    for index in range(MOVIES):
        movie = _new_movie(rng, words, index, titles, companies, country_codes)
        movies[movie.id] = movie
        _credit(rng, words, names, movie, popular_actor, popular_crew)
    _describe_people(rng, people.values(), places["cities"], countries)
    return MovieDatabase(movies, people, countries)


def _people(
    rng: TaskRng, names: dict
) -> tuple[dict[str, Person], list[Person], dict[str, list[Person]]]:
    """The database's people, each with a name of their own: ``(people by id, actors, crew by
    job)``; a few actors also direct."""
    used_names: set[str] = set()

    def new_name() -> str:
        while True:
            name = f"{rng.choice(names['first_names'])} {rng.choice(names['last_names'])}"
            if name not in used_names:
                used_names.add(name)
                return name

    people: dict[str, Person] = {}
    number = itertools.count(1001)

    def new_person(department: str) -> Person:
        person = Person(id=f"p{next(number)}", name=new_name(), department=department)
        people[person.id] = person
        return person

    actors = [new_person("Acting") for _ in range(ACTORS)]
    crews = {
        job: [new_person(_DEPARTMENT[job]) for _ in range(n)] for job, n in CREW_PEOPLE.items()
    }
    crews["Director"] += rng.sample(actors[:300], 25)
    return people, actors, crews


def _companies(rng: TaskRng, words: dict) -> list[tuple[str, str]]:
    """The production companies: ``(name, country code)``."""
    return [
        (
            f"{word} {rng.choice(words['company_suffixes'])}",
            rng.choice(["US", "US", "GB", "FR", "DE", "JP", "CA", "IN", "KR", "ES"]),
        )
        for word in words["company_words"]
    ]


def _new_movie(
    rng: TaskRng,
    words: dict,
    index: int,
    titles: set[str],
    companies: list[tuple[str, str]],
    country_codes: list[str],
) -> Movie:
    """The ``index``-th film, without credits (its title is added to ``titles``)."""
    title = _new_title(rng, words, titles)
    year = rng.randint(1965, 2024)
    released = date(year, 1, 1) + timedelta(days=rng.randbelow(365))
    budget = int(round(10 ** rng.uniform(6.0, 8.4), -5))
    revenue = int(round(budget * 10 ** rng.uniform(-0.8, 0.8), -3))
    language = "en" if rng.random() < 0.7 else rng.choice(words["languages"])
    home = "US" if rng.random() < 0.55 else rng.choice(country_codes)
    extra = [rng.choice(country_codes)] if rng.random() < 0.25 else []
    return Movie(
        id=f"m{20000 + index * 7 + rng.randint(0, 6)}",
        title=title,
        overview=_overview(rng, words),
        release_date=released.isoformat(),
        budget=budget,
        revenue=revenue,
        vote_average=round(rng.uniform(4.0, 8.8), 1),
        runtime=rng.randint(80, 175),
        language=language,
        genres=tuple(sorted(rng.sample(words["genres"], rng.randint(1, 3)))),
        companies=tuple(rng.sample(companies, rng.randint(1, 3))),
        countries=tuple(dict.fromkeys([home, *extra])),
        keywords=tuple(rng.sample(words["keywords"], rng.randint(3, 6))),
        alternative_titles=_alternative_titles(rng, words, title, home),
    )


def _describe_people(
    rng: TaskRng, people: Iterable[Person], city_rows: list, countries: dict[str, str]
) -> None:
    """Fill in each person's details, each with an IMDb number of their own."""
    imdb_numbers: set[int] = set()
    for person in people:
        imdb = rng.randint(100_000, 9_999_999)
        while imdb in imdb_numbers:
            imdb = rng.randint(100_000, 9_999_999)
        imdb_numbers.add(imdb)
        _describe_person(rng, person, city_rows, countries, imdb)


def _new_title(rng: TaskRng, words: dict, taken: set[str]) -> str:
    while True:
        pattern = rng.choice(words["title_patterns"])
        noun, noun2 = rng.sample(words["nouns"], 2)
        title = pattern.format(
            adj=rng.choice(words["adjectives"]),
            noun=noun,
            noun2=noun2,
            place=rng.choice(words["places"]),
        )
        if rng.random() < 0.08:
            title += f" {rng.randint(2, 3)}"
        if title.lower() not in taken:
            taken.add(title.lower())
            return title


def _overview(rng: TaskRng, words: dict) -> str:
    text = rng.choice(words["overview_patterns"]).format(
        a=rng.choice(words["overview_people"]),
        pronoun="they",
        thing=rng.choice(words["overview_things"]),
        goal=rng.choice(words["overview_goals"]),
        setting=rng.choice(words["overview_settings"]),
        deadline=rng.choice(words["overview_deadlines"]),
    )
    return text[0].upper() + text[1:]


def _alternative_titles(
    rng: TaskRng, words: dict, title: str, home: str
) -> tuple[tuple[str, str, str], ...]:
    titles = []
    if rng.random() < 0.5:
        titles.append((home, f"Project {rng.choice(words['nouns'])}", "working title"))
    if rng.random() < 0.3:
        titles.append((home, f"{title}: The {rng.choice(words['nouns'])}", "long title"))
    return tuple(titles)


def _credit(
    rng: TaskRng,
    words: dict,
    names: dict,
    movie: Movie,
    actors: _Weighted,
    crews: dict[str, _Weighted],
) -> None:
    cast: list[Person] = []
    size = rng.randint(4, 10)
    while len(cast) < size:
        actor = actors.draw(rng)
        if actor not in cast and len(actor.cast) < 30:
            cast.append(actor)
    characters: set[str] = set()
    for actor in cast:
        while True:
            character = rng.choice(words["character_patterns"]).format(
                first=rng.choice(names["first_names"]), last=rng.choice(names["last_names"])
            )
            if character not in characters:
                characters.add(character)
                break
        movie.cast.append((actor, character))
        actor.cast.append((movie, character))
    counts = {"Director": 1, "Screenplay": rng.randint(1, 2), "Producer": rng.randint(1, 2),
              "Original Music Composer": 1, "Director of Photography": 1, "Editor": 1}  # fmt: skip
    for job, count in counts.items():
        chosen: list[Person] = []
        while len(chosen) < count:
            person = crews[job].draw(rng)
            if person not in chosen:
                chosen.append(person)
        for person in chosen:
            movie.crew.append((person, job))
            person.crew.append((movie, job))


def _describe_person(
    rng: TaskRng, person: Person, city_rows: list, countries: dict[str, str], imdb: int
) -> None:
    years = [m.year for m, _ in person.cast + person.crew] or [rng.randint(1965, 2024)]
    born = date(min(years) - rng.randint(19, 45), 1, 1) + timedelta(days=rng.randbelow(365))
    city, code = rng.choice(city_rows)[:2]
    person.birthday = born.isoformat()
    person.birth_city = city
    person.place_of_birth = f"{city}, {countries[code]}"
    credits = sorted(person.cast + person.crew, key=lambda c: (c[0].release_date, c[0].id))
    known = f" Known for {credits[-1][0].title} ({credits[-1][0].year})." if credits else ""
    role = {"Acting": "actor", "Directing": "director", "Writing": "screenwriter",
            "Production": "producer", "Sound": "composer", "Camera": "cinematographer",
            "Editing": "film editor"}[person.department]  # fmt: skip
    person.biography = f"{person.name} is a {role} born in {person.place_of_birth}.{known}"
    person.imdb_id = f"nm{imdb:07d}"
    handle = person.name.lower().replace(" ", "")
    person.instagram_id = f"{handle}{rng.randint(1, 99)}" if rng.random() < 0.6 else None
    person.twitter_id = f"{handle}_official" if rng.random() < 0.45 else None
    person.facebook_id = f"{handle}.page" if rng.random() < 0.3 else None


_split_movies = ItemSplit("movie", lambda: movie_database().movies.values(), lambda m: m.title)
_split_people = ItemSplit(
    "movie-person", lambda: movie_database().people.values(), lambda p: p.name
)


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


@dataclass(frozen=True)
class MovieConfig(ToolConfig):
    """Difficulty knobs of :class:`MovieEnv`."""


class MovieEnv(ToolEnv[MovieConfig]):
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
    parameter_docs: ClassVar[Mapping[str, str]] = {
        "movie_id": "The ID of the movie (from get_search_movie).",
        "person_id": "The ID of the person (from get_search_person).",
    }

    @property
    def db(self) -> MovieDatabase:
        """The film database (the same for every task)."""
        return movie_database()

    def _movie(self, movie_id: str) -> Movie:
        return _by_id(self.db.movies, movie_id, "movie", "m20417", "get_search_movie")

    def _person(self, person_id: str) -> Person:
        return _by_id(self.db.people, person_id, "person", "p1123", "get_search_person")

    def _credits(self, person_id: str, credit: Literal["cast", "crew"]) -> dict:
        """A person's roles (``cast``) or jobs (``crew``), newest first."""
        person = self._person(person_id)
        credits = person.cast if credit == "cast" else person.crew
        role = "character" if credit == "cast" else "job"
        newest = sorted(credits, key=lambda r: (r[0].release_date, r[0].id), reverse=True)
        return {
            credit: [
                {"movie_id": m.id, "title": m.title, role: r, "release_date": m.release_date}
                for m, r in newest
            ]
        }

    # ------------------------------------------------------------------ tools
    @tool
    def get_search_movie(self, movie_name: str) -> dict:
        """Search for movies by title.

        Args:
            movie_name: The title (or part of it) to search for.

        Returns:
            Up to 5 matches, best first, each with id, title, release_date and overview.
        """
        found = self.db.title_index.search(movie_name)
        return search_results(found, _movie_match, f"no movie matches {movie_name.strip()[:60]!r}")

    @tool
    def get_movie_details(self, movie_id: str) -> dict:
        """Get the details of a movie.

        Returns:
            title, budget and revenue (US dollars), genres, vote_average (0-10), release_date,
            runtime (minutes) and original_language.
        """
        movie = self._movie(movie_id)
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
        movie = self._movie(movie_id)
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
        movie = self._movie(movie_id)
        return {
            "production_countries": [
                {"iso_3166_1": code, "name": self.db.country_names[code]}
                for code in movie.countries
            ]
        }

    @tool
    def get_movie_cast(self, movie_id: str) -> dict:
        """Get the cast of a movie.

        Returns:
            cast: id, name, character and billing order of every cast member.
        """
        movie = self._movie(movie_id)
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
        movie = self._movie(movie_id)
        return {
            "crew": [
                {"id": p.id, "name": p.name, "job": job, "department": _DEPARTMENT[job]}
                for p, job in movie.crew
            ]
        }

    @tool
    def get_movie_keywords(self, movie_id: str) -> dict:
        """Get the keywords of a movie.

        Returns:
            keywords: a list of words.
        """
        return {"keywords": list(self._movie(movie_id).keywords)}

    @tool
    def get_movie_alternative_titles(self, movie_id: str) -> dict:
        """Get the alternative titles of a movie.

        Returns:
            titles: iso_3166_1, title and type of each alternative title.
        """
        movie = self._movie(movie_id)
        return {
            "id": movie.id,
            "titles": [
                {"iso_3166_1": code, "title": title, "type": kind}
                for code, title, kind in movie.alternative_titles
            ],
        }

    @tool
    def get_search_person(self, person_name: str) -> dict:
        """Search for people by name.

        Args:
            person_name: The name (or part of it) to search for.

        Returns:
            Up to 5 matches, best first, each with id, name and known_for_department.
        """
        found = self.db.name_index.search(person_name)
        return search_results(
            found, _person_match, f"no person matches {person_name.strip()[:60]!r}"
        )

    @tool
    def get_person_details(self, person_id: str) -> dict:
        """Get the details of a person.

        Returns:
            name, birthday (YYYY-MM-DD), place_of_birth, known_for_department, biography.
        """
        person = self._person(person_id)
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
        person = self._person(person_id)
        return _fields(person, "id", "imdb_id", "facebook_id", "instagram_id", "twitter_id")

    # ------------------------------------------------------------------ goals
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
        movie = rng.choice(_split_movies(split))
        question, field, kind = rng.choice(_MOVIE_FACTS)
        plan = self._movie_plan(movie, "get_movie_details")
        answer = Answer(getattr(movie, field), kind)
        return Episode.question(question.format(movie.title), plan, answer, lambda r: r[1][field])

    @goal_template(level=1)
    def _goal_companies(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(_split_movies(split))
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
        person = rng.choice(_split_people(split))
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
        movie = rng.choice(_split_movies(split))
        (director,) = movie.people("Director")
        goal = rng.choice(
            [f"Who directed {movie.title}?", f"Who is the director of {movie.title}?"]
        )
        plan = self._movie_plan(movie, "get_movie_crew")
        answer = Answer(director.name, "text")
        return Episode.question(goal, plan, answer, lambda r: _crew_member(r[1], "Director"))

    @goal_template(level=2)
    def _goal_composer(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(_split_movies(split))
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
        movie = rng.choice(_split_movies(split))
        actor, character = rng.choice(movie.cast)
        goal = f"Who played {character} in {movie.title}?"
        plan = self._movie_plan(movie, "get_movie_cast")
        answer = Answer(actor.name, "text")
        return Episode.question(goal, plan, answer, lambda r: _player(r[1], character)["name"])

    @goal_template(level=2)
    def _goal_profit(self, rng: TaskRng, split: str) -> Episode:
        movie = rng.choice(_split_movies(split))
        goal = (
            f"How much did {movie.title} earn beyond its budget (revenue minus budget), in US "
            "dollars? A loss is a negative number."
        )
        plan = self._movie_plan(movie, "get_movie_details")
        answer = Answer(movie.revenue - movie.budget, "number")
        return Episode.question(goal, plan, answer, lambda r: r[1]["revenue"] - r[1]["budget"])

    @goal_template(level=2)
    def _goal_acting_count(self, rng: TaskRng, split: str) -> Episode:
        actors = [p for p in _split_people(split) if p.cast]
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
        person = rng.choice(_split_people(split))
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
        movie = rng.choice(_split_movies(split))
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
        movie = rng.choice(_split_movies(split))
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
        first, second = rng.sample(_split_movies(split), 2)
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
        pool = [p for p in _split_people(split) if p.cast]
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
        movie = rng.choice(_split_movies(split))
        lead, _ = movie.cast[0]
        goal = f"In how many movies has the top-billed actor of {movie.title} acted?"
        plan = [
            *self._movie_plan(movie, "get_movie_cast"),
            call("get_person_cast", person_id=lead.id),
        ]
        return Episode.question(
            goal, plan, Answer(len(lead.cast), "number"), lambda r: len(r[2]["cast"])
        )

    # ------------------------------------------------------------------ random calls
    def _argument_pool(self, param: str) -> Sequence[Any] | None:
        return _random_arguments().get(param)


@cache
def _random_arguments() -> dict[str, list[str]]:
    movies, people = _split_movies("train")[:200], _split_people("train")[:300]
    return {
        "movie_id": [m.id for m in movies],
        "movie_name": [m.title for m in movies],
        "person_id": [p.id for p in people],
        "person_name": [p.name for p in people],
    }
