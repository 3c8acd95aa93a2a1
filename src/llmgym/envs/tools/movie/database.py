"""The film database of the movie service: 1,200 films and about 2,400 people (actors,
directors, writers, producers, composers) with their credits, generated once from a fixed seed
by llmgym's own generator, and word indexes to search them."""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache
from typing import Any

from llmgym.core.tasks import TaskRng
from llmgym.envs.tools import ItemSplit, load_data, normalize_answer

__all__ = [
    "DEPARTMENT",
    "Movie",
    "MovieDatabase",
    "Person",
    "movie_database",
    "split_movies",
    "split_people",
]

MOVIES = 1200
ACTORS = 1500
CREW_PEOPLE = {"Director": 260, "Screenplay": 220, "Producer": 200, "Original Music Composer": 70,
               "Director of Photography": 70, "Editor": 70}  # fmt: skip
SEARCH_RESULTS = 5
DEPARTMENT = {
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
    crews = {job: [new_person(DEPARTMENT[job]) for _ in range(n)] for job, n in CREW_PEOPLE.items()}
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


split_movies = ItemSplit("movie", lambda: movie_database().movies.values(), lambda m: m.title)
"""The films of each split: goals of one split only ask about its films."""
split_people = ItemSplit("movie-person", lambda: movie_database().people.values(), lambda p: p.name)
"""The people of each split."""
