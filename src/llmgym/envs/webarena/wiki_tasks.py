"""Task templates on the wiki (``localhost:8888``), read-only like WebArena's Kiwix.

Information seeking (infobox facts of cities, people, countries, rivers and mountains; two-hop
questions that follow a link; the highest mountain of a range; a city that does not exist) and
navigation (an article, a category, a search).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlencode

from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.tasks import (
    Data,
    Instance,
    PageView,
    StringMatch,
    TaskTemplate,
    UrlMatch,
    need,
    register,
)
from llmgym.envs.webarena.wiki import Wiki
from llmgym.envs.webarena.wiki_data import OCCUPATIONS, WikiData, name_maker, title_slug

__all__ = ["WIKI", "infobox", "open_article"]

WIKI = f"http://localhost:{Wiki.port}"
START = f"{WIKI}/"
SEARCH_BOX = "Search Wikipedia"


def articles(data: Data, kind: str) -> list[tuple[int, str]]:
    """(id, title) of every article of ``kind``."""
    return data.generated(
        WikiData, "SELECT id, title FROM articles WHERE kind = ? ORDER BY id", kind
    )


def fact(data: Data, article_id: int, field: str) -> str | None:
    """An infobox value, its link markup removed."""
    value = data.one(
        WikiData, "SELECT value FROM facts WHERE article_id = ? AND field = ?", article_id, field
    )
    return None if value is None else value.replace("[[", "").replace("]]", "")


# ---------------------------------------------------------------------------- oracle helpers
def open_article(page: PageView, title: str) -> str | None:
    """Search for the article ``title`` and open it; ``None`` once it is open."""
    if page.path.startswith("/wiki/") and page.find("heading", title):
        return None
    found = page.find("link", title)
    if found is not None and page.path == "/search":
        return page.click(found)
    if page.path == "/search" and page.query.get("pattern") == title:
        return page.link("Next")
    return page.type(need(page.find("textbox", SEARCH_BOX), "search box"), title)


def infobox(page: PageView, field: str) -> str:
    """The article's infobox value of ``field``."""
    for row in page.rows():
        if len(row) == 2 and row[0].name == field:
            return row[1].name
    raise LookupError(f"no infobox row {field!r}")


def infobox_link(page: PageView, field: str) -> str:
    """A click on the (first) link of the infobox value of ``field``."""
    for row in page.rows():
        if len(row) == 2 and row[0].name == field:
            return page.click(need(page.find("link", after=row[1]), f"{field} link"))
    raise LookupError(f"no infobox row {field!r}")


# ---------------------------------------------------------------------------- information
class InfoboxFact(TaskTemplate):
    """A question answered by one infobox row of one article."""

    kind = "information"
    sites = ("wiki",)
    article_kind: ClassVar[str] = ""
    field: ClassVar[str] = ""

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        article_id, title = rng.choice(articles(data, self.article_kind))
        value = fact(data, article_id, self.field)
        if value is None:
            return None
        params = {"title": title, **self.extra(data, article_id)}
        return self.make(params, (self.evaluator(value),), start_url=START)

    def extra(self, data: Data, article_id: int) -> dict[str, str]:
        return {}

    def evaluator(self, value: str) -> StringMatch:
        return StringMatch(exact=value)

    def answer(self, value: str) -> str:
        return value

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_article(page, params["title"])
        return step or f"stop [{self.answer(infobox(page, self.field))}]"


@register
class CityPopulation(InfoboxFact):
    id = "wiki/city-population"
    slot = 84
    intent = "According to the wiki, how many people live in {title}?"
    article_kind = "city"
    field = "Population"


@register
class CityFounded(InfoboxFact):
    id = "wiki/city-founded"
    slot = 85
    intent = "In which year was the city of {title} founded?"
    article_kind = "city"
    field = "Founded"


@register
class BirthYear(InfoboxFact):
    id = "wiki/person-birth-year"
    slot = 86
    intent = "In which year was the {occupation} {title} born?"
    article_kind = "person"
    field = "Born"

    def extra(self, data: Data, article_id: int) -> dict[str, str]:
        occupation = fact(data, article_id, "Occupation") or ""
        return {"occupation": occupation.lower()}

    def evaluator(self, value: str) -> StringMatch:
        return StringMatch(exact=value.split(",")[0])

    def answer(self, value: str) -> str:
        return value.split(",")[0]


@register
class CountryCapital(InfoboxFact):
    id = "wiki/country-capital"
    slot = 87
    intent = "What is the capital of {title}?"
    article_kind = "country"
    field = "Capital"


class Measurement(InfoboxFact):
    """A length or height: the answer must include the number (the unit is optional)."""

    def evaluator(self, value: str) -> StringMatch:
        return StringMatch(must_include=(value.split()[0],))


@register
class RiverLength(Measurement):
    id = "wiki/river-length"
    slot = 88
    intent = "How long is the {title}, in kilometres?"
    article_kind = "river"
    field = "Length"


@register
class MountainElevation(Measurement):
    id = "wiki/mountain-elevation"
    slot = 89
    intent = "How high is {title}, in metres?"
    article_kind = "mountain"
    field = "Elevation"


@register
class FirstAscent(InfoboxFact):
    id = "wiki/first-ascent"
    slot = 90
    intent = "Who made the first ascent of {title}?"
    article_kind = "mountain"
    field = "First ascent"

    def evaluator(self, value: str) -> StringMatch:
        return StringMatch(must_include=(value.split(" by ", 1)[1],))

    def answer(self, value: str) -> str:
        return value.split(" by ", 1)[1]


class TwoHops(TaskTemplate):
    """A question whose answer is on the page an infobox link of the first article leads to."""

    kind = "information"
    sites = ("wiki",)
    article_kind: ClassVar[str] = ""
    via: ClassVar[str] = ""
    field: ClassVar[str] = ""

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        article_id, title = rng.choice(articles(data, self.article_kind))
        hop = data.one(
            WikiData,
            "SELECT value FROM facts WHERE article_id = ? AND field = ?",
            article_id,
            self.via,
        )
        if hop is None or "[[" not in hop:
            return None
        target = hop[hop.index("[[") + 2 : hop.index("]]")]
        target_id = data.one(WikiData, "SELECT id FROM articles WHERE title = ?", target)
        value = fact(data, target_id, self.field)
        if value is None:
            return None
        return self.make({"title": title}, (StringMatch(exact=value),), start_url=START)

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.find("heading", params["title"]) is None and page.path.startswith("/wiki/"):
            heading = need(page.find("heading"), "article heading")
            if memory.get("hop") == heading.name:
                return f"stop [{infobox(page, self.field)}]"
        step = open_article(page, params["title"])
        if step:
            return step
        memory["hop"] = infobox(page, self.via).split(", ")[-1]
        return infobox_link(page, self.via)


@register
class BirthplaceRiver(TwoHops):
    id = "wiki/birthplace-river"
    slot = 91
    intent = "On which river lies the city where {title} was born?"
    article_kind = "person"
    via = "Born"
    field = "River"


@register
class CapitalPopulation(TwoHops):
    id = "wiki/capital-population"
    slot = 92
    intent = "What is the population of the capital of {title}?"
    article_kind = "country"
    via = "Capital"
    field = "Population"


@register
class HighestInRange(TaskTemplate):
    id = "wiki/highest-in-range"
    slot = 93
    intent = "Which is the highest mountain of the {range}?"
    sites = ("wiki",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        _, mountain_range = rng.choice(articles(data, "range"))
        rows = data.all(
            WikiData,
            "SELECT a.title, CAST(replace(f.value, ',', '') AS INTEGER) AS metres FROM facts f "
            "JOIN articles a ON a.id = f.article_id WHERE f.field = 'Elevation' AND a.id IN "
            "(SELECT article_id FROM facts WHERE field = 'Range' AND value = ?) "
            "ORDER BY metres DESC LIMIT 2",
            f"[[{mountain_range}]]",
        )
        if not rows or (len(rows) > 1 and rows[0][1] == rows[1][1]):
            return None
        return self.make(
            {"range": mountain_range}, (StringMatch(exact=rows[0][0]),), start_url=START
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        category = f"Category: Mountains of the {params['range']}"
        if page.find("heading", category) is None:
            step = open_article(page, params["range"])
            return step or page.link("its mountains")
        pages = need(page.find("list", "Pages"), "pages")
        best, best_height = "", -1
        for node in page.nodes("link"):
            if node.id <= pages.id:
                continue
            description = need(page.find("StaticText", after=node), "description").name
            height = int(description.rsplit(", ", 1)[-1].removesuffix(" m").replace(",", ""))
            if height > best_height:
                best, best_height = node.name, height
        return f"stop [{best}]"


@register
class MissingCity(TaskTemplate):
    id = "wiki/missing-city-population"
    slot = 94
    intent = "According to the wiki, how many people live in {title}?"
    sites = ("wiki",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        title = f"{name_maker(rng)}{rng.choice(('burg', 'ville', 'port', 'stad'))}"
        if data.one(
            WikiData, "SELECT 1 FROM article_search WHERE article_search MATCH ?", f'"{title}"'
        ):
            return None
        return self.make({"title": title}, (StringMatch(fuzzy="N/A"),), start_url=START)

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        title = params["title"]
        searched = page.path == "/search" and page.query.get("pattern") == title
        if searched and page.find("link", title) is None and page.find("link", "Next") is None:
            return "stop [N/A]"
        step = open_article(page, title)
        return step or f"stop [{infobox(page, 'Population')}]"


# ---------------------------------------------------------------------------- navigation
@register
class OpenArticle(TaskTemplate):
    id = "wiki/nav-article"
    slot = 95
    kind = "navigation"
    intent = "Open the wiki article about {title}."
    sites = ("wiki",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        kind = rng.choice(("city", "person", "river", "mountain", "country"))
        _, title = rng.choice(articles(data, kind))
        return self.make(
            {"title": title}, (UrlMatch(f"{WIKI}/wiki/{title_slug(title)}"),), start_url=START
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        return open_article(page, params["title"]) or "stop []"


@register
class CountryCities(TaskTemplate):
    id = "wiki/nav-country-cities"
    slot = 96
    kind = "navigation"
    intent = "Show me the wiki's list of cities in {country}."
    sites = ("wiki",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        _, country = rng.choice(articles(data, "country"))
        slug = title_slug(f"Cities in {country}")
        return self.make(
            {"country": country}, (UrlMatch(f"{WIKI}/category/{slug}"),), start_url=START
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.find("heading", f"Category: Cities in {params['country']}"):
            return "stop []"
        return open_article(page, params["country"]) or page.link("the list of cities")


@register
class OccupationCategory(TaskTemplate):
    id = "wiki/nav-occupation"
    slot = 97
    kind = "navigation"
    intent = "Open the wiki's category of all {group}."
    sites = ("wiki",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        _, group, _ = rng.choice(OCCUPATIONS)
        return self.make(
            {"group": group.lower()}, (UrlMatch(f"{WIKI}/category/{group}"),), start_url=START
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        group = params["group"].capitalize()
        if page.find("heading", f"Category: {group}"):
            return "stop []"
        if page.path != "/":
            return page.link("Wikipedia")
        return page.link(group)


@register
class SearchWiki(TaskTemplate):
    id = "wiki/nav-search"
    slot = 98
    kind = "navigation"
    intent = "Search the wiki for '{query}'."
    sites = ("wiki",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        _, title = rng.choice(articles(data, rng.choice(("city", "person", "mountain"))))
        occupation = rng.choice(OCCUPATIONS)[0]
        query = rng.choice((title, f"{title.split()[-1]} {occupation}"))
        return self.make(
            {"query": query},
            (UrlMatch(f"{WIKI}/search?{urlencode({'pattern': query})}"),),
            start_url=START,
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path == "/search" and page.query.get("pattern") == params["query"]:
            return "stop []"
        return page.type(need(page.find("textbox", SEARCH_BOX), "search box"), params["query"])
