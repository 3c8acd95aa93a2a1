"""The wiki's data (WebArena's Kiwix Wikipedia): articles on invented countries, cities, rivers,
mountains and people, with infoboxes, sections, links and categories, generated from a seed.

Names are built from syllables, so no fact can be recalled from real-world knowledge: the
population of Drevania's capital is on its page and nowhere else. Articles link to each other
(a person to their birthplace, a city to its country and river, a mountain to its first
climber), so some questions need two pages. Section text is stored with ``[[Title]]`` link
markup; the site renders it.
"""

from __future__ import annotations

import sqlite3
from typing import ClassVar

from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.generation import wordlist
from llmgym.envs.webarena.shop_data import FIRST_NAMES

__all__ = ["OCCUPATIONS", "WikiData", "name_maker", "title_slug"]

_SCHEMA = """
CREATE TABLE articles (
    id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, slug TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL, description TEXT NOT NULL
);
CREATE TABLE facts (
    article_id INTEGER NOT NULL REFERENCES articles(id), position INTEGER NOT NULL,
    field TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (article_id, position)
);
CREATE TABLE sections (
    article_id INTEGER NOT NULL REFERENCES articles(id), position INTEGER NOT NULL,
    heading TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (article_id, position)
);
CREATE TABLE categories (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, name TEXT NOT NULL);
CREATE TABLE article_categories (
    article_id INTEGER NOT NULL REFERENCES articles(id), category_id INTEGER NOT NULL
    REFERENCES categories(id), PRIMARY KEY (category_id, article_id)
);
"""
_SEARCH = """
CREATE VIRTUAL TABLE article_search USING fts5(title, body, tokenize='porter unicode61');
INSERT INTO article_search (rowid, title, body)
    SELECT a.id, a.title, a.description || ' ' || (SELECT group_concat(s.body, ' ')
    FROM sections s WHERE s.article_id = a.id) FROM articles a;
"""

OCCUPATIONS = (
    ("painter", "Painters", "painting"),
    ("composer", "Composers", "symphony"),
    ("physicist", "Physicists", "theory"),
    ("chemist", "Chemists", "compound"),
    ("novelist", "Novelists", "novel"),
    ("poet", "Poets", "poem"),
    ("architect", "Architects", "cathedral"),
    ("mathematician", "Mathematicians", "theorem"),
    ("astronomer", "Astronomers", "comet"),
    ("engineer", "Engineers", "bridge"),
    ("philosopher", "Philosophers", "treatise"),
    ("mountaineer", "Mountaineers", "expedition"),
)
"""Occupation, its category, and what a person of it is known for."""
_ONSETS = wordlist("b c d f g k l m n p r s t v z br dr gr kr st tr ch th")
_UNFORTUNATE = ("fu", "cu", "tit", "nig", "rap", "dic", "sex", "cok", "kil", "pis", "poo", "dam")
"""Syllable runs an invented name must not contain."""
_VOWELS = wordlist("a e i o u a e o ia ei ou")
_CODAS = ("", "", "", "n", "r", "l", "s", "m", "th", "v")
_WORK_ADJECTIVES = wordlist("Silent Golden Last Northern Hidden Broken Eternal Winter Second")
_WORK_NOUNS = wordlist("Harbour Garden Lantern River Mirror Tower Voyage Orchard Meridian")
INDUSTRIES = wordlist("textiles shipbuilding wine timber tourism fishing glassmaking mining")
SEAS = ("the Pale Sea", "the Amber Sea", "the Grey Ocean", "the Southern Gulf", "Lake Orven")


def title_slug(title: str) -> str:
    """The URL form of an article title: spaces become underscores."""
    return title.replace(" ", "_")


def name_maker(rng: TaskRng) -> str:
    """An invented proper name of two or three syllables (``Valmora``, ``Dreiko``)."""
    while True:
        syllables = 2 if rng.random() < 0.7 else 3
        parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)]
        name = "".join(parts) + rng.choice(_CODAS)
        if not any(run in name for run in _UNFORTUNATE):
            return name.capitalize()


class WikiData(Dataset):
    """The wiki's database (see the module docstring)."""

    name = "wiki"
    version = 1
    countries: ClassVar[int] = 30
    cities: ClassVar[int] = 900
    rivers: ClassVar[int] = 200
    ranges: ClassVar[int] = 20
    mountains: ClassVar[int] = 250
    people: ClassVar[int] = 1_200

    def build(self, db: sqlite3.Connection, seed: int) -> None:
        db.executescript(_SCHEMA)
        self.rng = TaskRng("webarena-wiki", seed)
        self.taken: set[str] = set()
        self.articles: list[tuple] = []
        self.facts: list[tuple] = []
        self.sections: list[tuple] = []
        self.categories: dict[str, int] = {}
        self.memberships: list[tuple[int, int]] = []
        self._generate()
        db.executemany("INSERT INTO articles VALUES (?, ?, ?, ?, ?)", self.articles)
        db.executemany("INSERT INTO facts VALUES (?, ?, ?, ?)", self.facts)
        db.executemany("INSERT INTO sections VALUES (?, ?, ?, ?)", self.sections)
        db.executemany(
            "INSERT INTO categories VALUES (?, ?, ?)",
            [(i, title_slug(name), name) for name, i in self.categories.items()],
        )
        db.executemany("INSERT INTO article_categories VALUES (?, ?)", self.memberships)
        db.executescript(_SEARCH)

    # ------------------------------------------------------------------ helpers
    def _name(self, pattern: str = "{}") -> str:
        while True:
            title = pattern.format(name_maker(self.rng))
            if title not in self.taken:
                self.taken.add(title)
                return title

    def _article(
        self,
        title: str,
        kind: str,
        description: str,
        facts: list[tuple[str, str]],
        sections: list[tuple[str, str]],
        categories: list[str],
    ) -> int:
        article_id = len(self.articles) + 1
        self.articles.append((article_id, title, title_slug(title), kind, description))
        self.facts.extend((article_id, i, f, v) for i, (f, v) in enumerate(facts))
        self.sections.extend((article_id, i, h, b) for i, (h, b) in enumerate(sections))
        for category in categories:
            category_id = self.categories.setdefault(category, len(self.categories) + 1)
            self.memberships.append((article_id, category_id))
        return article_id

    # ------------------------------------------------------------------ generation
    def _generate(self) -> None:
        rng = self.rng
        countries = [
            self._name("{}ia" if rng.random() < 0.5 else "{}") for _ in range(self.countries)
        ]
        ranges = [
            self._name("{} Mountains" if rng.random() < 0.5 else "{} Range")
            for _ in range(self.ranges)
        ]
        cities = [(self._name(), rng.choice(countries)) for _ in range(self.cities)]
        capitals: dict[str, str] = {}
        for city, country in cities:
            capitals.setdefault(country, city)
        people = [
            (
                f"{rng.choice(FIRST_NAMES)} {self._name()}",
                rng.choice(OCCUPATIONS),
                rng.randint(1700, 1990),
                rng.choice(cities),
            )
            for _ in range(self.people)
        ]
        climbers = [p for p in people if p[1][0] == "mountaineer"] or people[:20]
        rivers = [
            (self._name("{} River"), rng.randint(40, 4_000), rng.choice(SEAS))
            for _ in range(self.rivers)
        ]
        river_of = {city: rng.choice(rivers)[0] for city, _ in cities if rng.random() < 0.6}
        mountains = []
        for _ in range(self.mountains):
            name, _, born, _ = rng.choice(climbers)
            mountains.append(
                (
                    self._name("Mount {}"),
                    rng.randint(1_200, 8_600),
                    rng.choice(ranges),
                    rng.choice(countries),
                    name,
                    max(born + rng.randint(20, 50), 1760),
                )
            )
        for country in countries:
            self._country(country, capitals.get(country), sum(c == country for _, c in cities))
        for city, country in cities:
            self._city(city, country, capitals.get(country) == city, river_of.get(city))
        for river, length, sea in rivers:
            source = rng.choice(mountains)[0]
            self._article(
                river,
                "river",
                f"River, {length:,} km long",
                [("Length", f"{length:,} km"), ("Source", f"[[{source}]]"), ("Mouth", sea)],
                [
                    (
                        "",
                        f"The {river} is a river of {length:,} kilometres that rises on the "
                        f"slopes of [[{source}]] and flows into {sea}.",
                    ),
                    ("Course", f"Its valley is known for {rng.choice(INDUSTRIES)} and old mills."),
                ],
                ["Rivers"],
            )
        for mountain, height, mountain_range, country, climber, year in mountains:
            self._article(
                mountain,
                "mountain",
                f"Mountain in the {mountain_range}, {height:,} m",
                [
                    ("Elevation", f"{height:,} m"),
                    ("Range", f"[[{mountain_range}]]"),
                    ("Country", f"[[{country}]]"),
                    ("First ascent", f"{year} by [[{climber}]]"),
                ],
                [
                    (
                        "",
                        f"{mountain} is a mountain of {height:,} metres in the "
                        f"[[{mountain_range}]] of [[{country}]].",
                    ),
                    ("Climbing history", f"The first ascent was made in {year} by [[{climber}]]."),
                ],
                [f"Mountains of the {mountain_range}"],
            )
        for mountain_range in ranges:
            self._article(
                mountain_range,
                "range",
                "Mountain range",
                [("Peaks", str(sum(m[2] == mountain_range for m in mountains)))],
                [
                    (
                        "",
                        f"The {mountain_range} is a mountain range. See the list of "
                        f"[[Category:Mountains of the {mountain_range}|its mountains]].",
                    ),
                ],
                ["Mountain ranges"],
            )
        for person, occupation, born, (city, country) in people:
            self._person(person, occupation, born, city, country)

    def _country(self, country: str, capital: str | None, cities: int) -> None:
        rng = self.rng
        population = rng.randint(300_000, 90_000_000)
        language = f"{country.removesuffix('ia')}ian"
        self._article(
            country,
            "country",
            f"Country, capital {capital}",
            [
                ("Capital", f"[[{capital}]]" if capital else "None"),
                ("Population", f"{population:,}"),
                ("Official language", language),
                ("Currency", f"{name_maker(rng)} crown"),
            ],
            [
                (
                    "",
                    f"{country} is a country whose capital is [[{capital}]]. "
                    f"It has a population of {population:,}.",
                ),
                (
                    "Geography",
                    f"{country} has {cities} cities with articles in this wiki; see "
                    f"[[Category:Cities in {country}|the list of cities]].",
                ),
                (
                    "Economy",
                    f"The main industries are {rng.choice(INDUSTRIES)} and "
                    f"{rng.choice(INDUSTRIES)}.",
                ),
            ],
            ["Countries"],
        )

    def _city(self, city: str, country: str, capital: bool, river: str | None) -> None:
        rng = self.rng
        population = int(rng.choice((2_000, 20_000, 200_000, 2_000_000)) * rng.uniform(0.5, 4))
        founded = rng.randint(800, 1900)
        facts = [
            ("Country", f"[[{country}]]"),
            ("Population", f"{population:,}"),
            ("Founded", str(founded)),
            ("Elevation", f"{rng.randint(2, 2_400):,} m"),
        ]
        if river:
            facts.append(("River", f"[[{river}]]"))
        role = "the capital" if capital else "a city"
        lead = f"{city} is {role} of [[{country}]], with a population of {population:,}."
        if river:
            lead += f" It lies on the [[{river}]]."
        self._article(
            city,
            "city",
            f"City in {country}, population {population:,}",
            facts,
            [
                ("", lead),
                ("History", f"{city} was founded in {founded} as a market town."),
                ("Economy", f"Its economy rests on {rng.choice(INDUSTRIES)}."),
            ],
            [f"Cities in {country}"],
        )

    def _person(
        self, person: str, occupation: tuple[str, str, str], born: int, city: str, country: str
    ) -> None:
        rng = self.rng
        died = born + rng.randint(30, 95)
        died_text = str(died) if died <= 2023 else "living"
        life = f"{born}–{died}" if died <= 2023 else f"born {born}"
        work = f"The {rng.choice(_WORK_ADJECTIVES)} {rng.choice(_WORK_NOUNS)}"
        self._article(
            person,
            "person",
            f"{occupation[0].capitalize()} from {country}, born {born}",
            [
                ("Born", f"{born}, [[{city}]]"),
                ("Died", died_text),
                ("Nationality", f"[[{country}]]"),
                ("Occupation", occupation[0].capitalize()),
                ("Known for", f"{work} ({occupation[2]})"),
            ],
            [
                (
                    "",
                    f"{person} ({life}) was a {occupation[0]} from [[{country}]], "
                    f"best known for the {occupation[2]} {work}.",
                ),
                ("Early life", f"{person.split()[0]} was born in [[{city}]] in {born}."),
            ],
            [occupation[1]],
        )
