"""SearchQA's encyclopedia: a generated world of linked entities, one short article each.

Countries, cities, people, universities, companies, films and novels are drawn from the word
lists in ``envs/data/searchqa/words.json`` by a :class:`~llmgym.core.TaskRng` seeded with the
corpus seed, so the same seed gives the same world on any machine. Facts link the entities
(a city lies in a country, a person was born in a city and studied at a university, a company
was founded by a person, a film was directed by a person and produced by a studio), and each
entity's article states its facts in encyclopedia sentences and mentions its neighbours. The
articles go into a sqlite FTS5 index (:mod:`llmgym.core.fulltext`), built once per seed into
the user cache folder.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from tqdm.auto import tqdm

from llmgym.core.cache import LruCache
from llmgym.core.fulltext import Bm25Index, cached_database, fts5_table, words, write_database
from llmgym.core.tasks import TaskRng

__all__ = [
    "GENERATOR_VERSION",
    "KINDS",
    "Article",
    "Encyclopedia",
    "Entity",
    "World",
    "build_world",
    "load_words",
]

GENERATOR_VERSION = 1
"""Bump when the generator changes the corpus it produces (part of the cache key)."""

KINDS = ("country", "city", "person", "university", "company", "film", "novel")
"""Entity kinds, in the order their articles are numbered."""

COUNTRIES = 40
CITIES_PER_COUNTRY = 10
PUBLISHERS = 80
STUDIOS = 80
FILMS = 900
NOVELS = 900
MAX_OPEN_CORPORA = 4
"""Encyclopedias kept open per process (the least recently used one is forgotten)."""
MAX_CACHED_CORPORA = 16
"""Index files kept in the cache folder (the least recently used ones are deleted)."""

BM25_WEIGHTS = (10.0, 1.0)
"""Column weights of the BM25 ranking: title, text."""

_SCHEMA = """
CREATE TABLE articles (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    title TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL
);
""" + fts5_table("article_index", ("title", "text"), BM25_WEIGHTS)


@cache
def load_words() -> dict[str, Any]:
    """The generator's word lists (``envs/data/searchqa/words.json``)."""
    source = resources.files("llmgym.envs") / "data" / "searchqa" / "words.json"
    return json.loads(source.read_text(encoding="utf-8"))


@dataclass
class Entity:
    """One thing the encyclopedia has an article about, and its facts.

    ``facts`` maps a relation (``birthplace``, ``director``, ``founded``...) to a value: a year
    (int), a word, or the name of another entity. ``aliases`` are other names an answer may use.
    """

    kind: str
    name: str
    facts: dict[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Article:
    """An encyclopedia entry: its row id in the index, kind, title and text."""

    id: int
    kind: str
    title: str
    text: str


@dataclass
class World:
    """Every entity of one corpus seed, by kind and by name, and the facts' back-links."""

    seed: int
    entities: list[Entity]
    by_name: dict[str, Entity]
    by_kind: dict[str, list[Entity]]
    mentions: dict[str, list[tuple[str, Entity]]]
    """Entity name -> (relation, entity) pairs whose fact names it (a director's films)."""

    def articles(self) -> Iterator[Article]:
        """One article per entity, numbered from 1 in :data:`KINDS` order."""
        for index, entity in enumerate(self.entities, start=1):
            yield Article(index, entity.kind, entity.name, _article_text(self, entity))


_GLUE_WORDS = frozenset({"the", "a", "an", "of", "and", "in"})


class _Names:
    """Unique generated names: a name never repeats, in any kind or capitalisation."""

    def __init__(self, rng: TaskRng) -> None:
        self.rng = rng
        self.words = load_words()
        self.taken: set[frozenset[str]] = set()

    def claim(self, name: str) -> bool:
        """Take ``name`` unless a name with the same words is taken (``The Road of Journeys``
        and ``The Journey of Roads`` would be the same to a search)."""
        key = frozenset(word.removesuffix("s") for word in words(name)) - _GLUE_WORDS
        if key in self.taken:
            return False
        self.taken.add(key)
        return True

    def word(self) -> str:
        """A pronounceable invented word (``Calenmere``), not yet used as a name."""
        w = self.words
        while True:
            word = (
                self.rng.choice(w["name_onsets"])
                + self.rng.choice(w["name_middles"])
                + self.rng.choice(w["name_codas"])
            )
            if self.claim(word):
                return word

    def unique(self, make: Any) -> str:
        while True:
            name = make()
            if self.claim(name):
                return name


def build_world(seed: int) -> World:
    """Generate the world of corpus ``seed`` (deterministic on any machine)."""
    rng = TaskRng("searchqa-corpus", GENERATOR_VERSION, seed)
    names = _Names(rng)
    w = names.words
    countries = [_country(rng, names) for _ in range(COUNTRIES)]
    cities = []
    for country in countries:
        for position in range(CITIES_PER_COUNTRY):
            city = Entity("city", names.word())
            city.facts.update(
                country=country.name,
                founded=rng.randint(820, 1890),
                population=rng.randint(12, 2400) * 1000,
                river=f"{rng.choice(w['rivers'])} River",
            )
            if position == 0:
                country.facts["capital"] = city.name
                city.facts["capital_of"] = country.name
            cities.append(city)
    people = _people(rng, names, cities)
    by_occupation: dict[str, list[Entity]] = defaultdict(list)
    for person in people:
        by_occupation[person.facts["occupation"]].append(person)
    universities = [
        _university(rng, names, scholar, cities) for scholar in by_occupation["scholar"]
    ]
    for person in people:
        person.facts["alma_mater"] = _alma_mater(rng, person, universities)
    founders = list(by_occupation["entrepreneur"])
    companies = [
        _company(rng, names, founder, cities, _company_line(index))
        for index, founder in enumerate(founders)
    ]
    studios = [c for c in companies if c.facts["line"] == "studio"]
    publishers = [c for c in companies if c.facts["line"] == "publisher"]
    films = [
        _work(rng, names, "film", rng.choice(by_occupation["film director"]), studios, cities)
        for _ in range(FILMS)
    ]
    novels = [
        _work(rng, names, "novel", rng.choice(by_occupation["novelist"]), publishers, cities)
        for _ in range(NOVELS)
    ]
    groups = {
        "country": countries,
        "city": cities,
        "person": people,
        "university": universities,
        "company": companies,
        "film": films,
        "novel": novels,
    }
    entities = [entity for kind in KINDS for entity in groups[kind]]
    by_name = {entity.name: entity for entity in entities}
    mentions: dict[str, list[tuple[str, Entity]]] = defaultdict(list)
    for entity in entities:
        for relation, value in entity.facts.items():
            if isinstance(value, str) and value in by_name and relation != "capital_of":
                mentions[value].append((relation, entity))
    return World(seed, entities, by_name, groups, dict(mentions))


def _country(rng: TaskRng, names: _Names) -> Entity:
    w = names.words
    root = names.unique(lambda: rng.choice(w["name_onsets"]) + rng.choice(["en", "ar", "or", "av"]))
    name = names.unique(lambda: root + rng.choice(w["country_suffixes"]))
    form = rng.choice(w["country_forms"])
    language = root + rng.choice(w["language_suffixes"])
    names.claim(language)
    country = Entity("country", name, aliases=(f"{form} {name}",))
    country.facts.update(
        form=form,
        continent=rng.choice(w["continents"]),
        language=language,
        currency=f"{language} {rng.choice(w['currencies'])}",
        independence=rng.randint(1640, 1990),
    )
    return country


def _people(rng: TaskRng, names: _Names, cities: Sequence[Entity]) -> list[Entity]:
    w = names.words
    surnames = [names.word() for _ in range(1200)]
    people = []
    for occupation, count in w["occupations"].items():
        for _ in range(count):
            name = names.unique(lambda: f"{rng.choice(w['first_names'])} {rng.choice(surnames)}")
            first, last = (1700, 1850) if occupation == "scholar" else (1820, 1995)
            born = rng.randint(first, last)
            person = Entity("person", name)
            person.facts.update(
                occupation=occupation, born=born, birthplace=rng.choice(cities).name
            )
            people.append(person)
    rng.shuffle(people)
    return people


def _university(rng: TaskRng, names: _Names, scholar: Entity, cities: Sequence[Entity]) -> Entity:
    forms = names.words["university_forms"]
    name = names.unique(lambda: rng.choice(forms).format(names.word()))
    university = Entity("university", name)
    university.facts.update(
        city=rng.choice(cities).name,
        founded=scholar.facts["born"] + rng.randint(28, 60),
        founder=scholar.name,
    )
    return university


def _alma_mater(rng: TaskRng, person: Entity, universities: Sequence[Entity]) -> str:
    """A university that existed when the person turned 18 (the oldest one otherwise)."""
    open_then = [u for u in universities if u.facts["founded"] <= person.facts["born"] + 18]
    if not open_then:
        return min(universities, key=lambda u: (u.facts["founded"], u.name)).name
    return rng.choice(open_then).name


def _company_line(index: int) -> str:
    if index < PUBLISHERS:
        return "publisher"
    if index < PUBLISHERS + STUDIOS:
        return "studio"
    return "industry"


def _company(
    rng: TaskRng, names: _Names, founder: Entity, cities: Sequence[Entity], line: str
) -> Entity:
    w = names.words
    if line == "publisher":
        noun, industry = rng.choice(w["publisher_nouns"]), "publishing"
    elif line == "studio":
        noun, industry = rng.choice(w["studio_nouns"]), "film production"
    else:
        noun, industry = rng.choice(w["industries"])
    name = names.unique(lambda: f"{names.word()} {noun}")
    company = Entity("company", name)
    company.facts.update(
        line=line,
        industry=industry,
        headquarters=rng.choice(cities).name,
        founded=min(2015, founder.facts["born"] + rng.randint(22, 50)),
        founder=founder.name,
    )
    return company


def _work(
    rng: TaskRng,
    names: _Names,
    kind: str,
    creator: Entity,
    houses: Sequence[Entity],
    cities: Sequence[Entity],
) -> Entity:
    """A film or novel by ``creator``, made by one of ``houses`` that existed then."""
    w = names.words
    year = min(2024, creator.facts["born"] + rng.randint(24, 62))
    open_then = [h for h in houses if h.facts["founded"] <= year]
    house = rng.choice(open_then) if open_then else min(houses, key=lambda h: h.facts["founded"])
    work = Entity(kind, names.unique(lambda: _title(rng, w)))
    genre = rng.choice(w["film_genres" if kind == "film" else "novel_genres"])
    work.facts.update(year=year, genre=genre, setting=rng.choice(cities).name)
    if kind == "film":
        work.facts.update(director=creator.name, studio=house.name)
    else:
        work.facts.update(author=creator.name, publisher=house.name)
    return work


def _title(rng: TaskRng, w: dict[str, Any]) -> str:
    adjective, noun = rng.choice(w["title_adjectives"]), rng.choice(w["title_nouns"])
    form = rng.randbelow(5)
    if form == 0:
        return f"The {adjective} {noun}"
    if form == 1:
        return f"{adjective} {noun}"
    if form == 2:
        return f"The {noun} of {rng.choice(w['title_nouns'])}s"
    if form == 3:
        phrase = _a(noun)
        return f"{phrase[0].upper()}{phrase[1:]} in {rng.choice(w['months'])}"
    return f"The {adjective} {noun} and the {rng.choice(w['title_nouns'])}"


# ---------------------------------------------------------------------------------- articles
def _a(word: str) -> str:
    """``word`` with its indefinite article (``an aerospace``, ``an 1885``, ``a 1990``)."""
    vowel = word[0].lower() in "aeiou" or word.startswith(("8", "11", "18"))
    return f"{'an' if vowel else 'a'} {word}"


def _listing(items: Sequence[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _linked(world: World, name: str, relation: str, limit: int = 3) -> list[Entity]:
    return [e for r, e in world.mentions.get(name, ()) if r == relation][:limit]


def _article_text(world: World, entity: Entity) -> str:
    """The article's sentences. Each fact has one fixed wording (the oracle reads them); the
    colour around them (a plot, a city's landmark) comes from the article's own random stream,
    so it never shifts the facts of other entities."""
    f, name = entity.facts, entity.name
    rng = TaskRng("searchqa-article", world.seed, name)
    w = load_words()
    if entity.kind == "country":
        cities = [c.name for c in _linked(world, name, "country", 4) if c.name != f["capital"]]
        return (
            f"{name}, officially the {f['form']} {name}, is a country in {f['continent']}. "
            f"Its capital is {f['capital']}, and its official language is {f['language']}. "
            f"The currency is the {f['currency']}. {name} became independent in "
            f"{f['independence']}. Other cities of {name} include {_listing(cities)}."
        )
    if entity.kind == "city":
        capital = f" It is the capital of {f['capital_of']}." if "capital_of" in f else ""
        natives = [p.name for p in _linked(world, name, "birthplace", 2)]
        born_here = (
            f" Notable people born in {name} include {_listing(natives)}." if natives else ""
        )
        return (
            f"{name} is a city in {f['country']}, on the {f['river']}.{capital} It was founded "
            f"in {f['founded']} and has a population of {f['population']:,}. The city is known "
            f"for {_listing(rng.sample(w['city_features'], 2))}.{born_here}"
        )
    if entity.kind == "person":
        surname = name.split(" ", 1)[1]
        known_for = rng.choice(w["known_for"][f["occupation"]])
        return (
            f"{name} (born {f['born']}) is {_a(f['occupation'])}. Born in {f['birthplace']}, "
            f"{surname} studied at {f['alma_mater']}.{_person_works(world, entity, surname)} "
            f"{surname} is best known for {known_for}."
        )
    if entity.kind == "university":
        alumni = [p.name for p in _linked(world, name, "alma_mater", 2)]
        notable = f" Notable alumni include {_listing(alumni)}." if alumni else ""
        return (
            f"{name} is a university in {f['city']}. It was founded in {f['founded']} by "
            f"{f['founder']}. Today it has about {rng.randint(8, 400) * 100:,} students.{notable}"
        )
    if entity.kind == "company":
        works = [e.name for e in _linked(world, name, "studio") + _linked(world, name, "publisher")]
        known = f" Its titles include {_listing(works)}." if works else ""
        return (
            f"{name} is {_a(f['industry'])} company headquartered in {f['headquarters']}. It was "
            f"founded in {f['founded']} by {f['founder']}. It employs about "
            f"{rng.randint(3, 900) * 50:,} people.{known}"
        )
    plot = f"It follows {rng.choice(w['protagonists'])} {rng.choice(w['plots'])}."
    if entity.kind == "film":
        return (
            f"{name} is {_a(str(f['year']))} {f['genre']} film directed by {f['director']} and "
            f"produced by {f['studio']}. The film is set in {f['setting']}. {plot} It runs "
            f"{rng.randint(75, 190)} minutes."
        )
    return (
        f"{name} is {_a(str(f['year']))} {f['genre']} novel by {f['author']}, published by "
        f"{f['publisher']}. The story is set in {f['setting']}. {plot} The first edition ran "
        f"to {rng.randint(120, 900)} pages."
    )


def _person_works(world: World, person: Entity, surname: str) -> str:
    occupation = person.facts["occupation"]
    if occupation == "film director":
        films = _linked(world, person.name, "director")
        if films:
            return f" {surname} directed {_listing([w.name for w in films])}."
    elif occupation == "novelist":
        novels = _linked(world, person.name, "author")
        if novels:
            return f" {surname} wrote {_listing([w.name for w in novels])}."
    elif occupation in ("entrepreneur", "scholar"):
        founded = _linked(world, person.name, "founder")
        if founded:
            return f" {surname} founded {_listing([o.name for o in founded])}."
    return ""


# ---------------------------------------------------------------------------------- the index
class Encyclopedia:
    """The world of one corpus seed and its article index (BM25 over title and text).

    Use :meth:`open`, which generates the world, builds the index on first use into the user
    cache folder, and shares one instance per process among the :data:`MAX_OPEN_CORPORA` most
    recently opened seeds."""

    _instances: ClassVar[LruCache[int, Encyclopedia]] = LruCache(
        MAX_OPEN_CORPORA, name="llmgym.envs.searchqa.corpus.Encyclopedia"
    )

    def __init__(self, world: World, path: Path) -> None:
        self.world = world
        self.size = len(world.entities)
        self.index = Bm25Index(
            path, "article_index", self.size, load_words()["query_stopwords"], common_fraction=0.2
        )
        self._articles: dict[int, Article] = {}

    @classmethod
    def open(cls, seed: int = 0, *, progress: bool = True) -> Encyclopedia:
        """The encyclopedia of corpus ``seed``, built and cached if needed."""
        return cls._instances.get_or_create(seed, lambda: cls._create(seed, progress))

    @classmethod
    def _create(cls, seed: int, progress: bool) -> Encyclopedia:
        world = build_world(seed)
        path = cached_database(
            "searchqa",
            f"searchqa-{_build_digest()}-seed{seed}.sqlite3",
            len(world.entities),
            lambda target: build_database(target, world, progress=progress),
            what="the SearchQA encyclopedia",
            keep=MAX_CACHED_CORPORA,
        )
        return cls(world, path)

    def search(self, query: str, k: int) -> list[Article]:
        """The ``k`` best articles for ``query`` (BM25; title matches weigh 10 times more)."""
        return [self.article(rowid) for rowid in self.index.search(query, k)]

    def article(self, rowid: int) -> Article:
        """The article with this row id (1-based, in :data:`KINDS` order)."""
        article = self._articles.get(rowid)
        if article is None:
            row = (
                self.index.connection()
                .execute("SELECT id, kind, title, text FROM articles WHERE id = ?", (rowid,))
                .fetchone()
            )
            if row is None:
                raise KeyError(f"no article with id {rowid}")
            article = self._articles[rowid] = Article(*row)
        return article


def _build_digest() -> str:
    """A hash of the generator code and word lists: a change builds a new index."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(json.dumps(load_words(), sort_keys=True).encode())
    return digest.hexdigest()[:12]


def build_database(path: Path, world: World, *, progress: bool = True) -> None:
    """Write the articles of ``world`` and their FTS5 index into a new database at ``path``."""

    def populate(connection: sqlite3.Connection) -> None:
        articles = list(
            tqdm(
                world.articles(),
                total=len(world.entities),
                desc="Building the SearchQA encyclopedia (once)",
                unit=" articles",
                disable=not progress,
                leave=False,
            )
        )
        connection.executemany(
            "INSERT INTO articles VALUES (?, ?, ?, ?)",
            [(a.id, a.kind, a.title, a.text) for a in articles],
        )
        connection.executemany(
            "INSERT INTO article_index (rowid, title, text) VALUES (?, ?, ?)",
            [(a.id, a.title, a.text) for a in articles],
        )
        connection.execute("INSERT INTO article_index (article_index) VALUES ('optimize')")

    meta = {
        "generator_version": str(GENERATOR_VERSION),
        "seed": str(world.seed),
        "size": str(len(world.entities)),
    }
    write_database(path, _SCHEMA, populate, meta, what="SearchQA's search")
