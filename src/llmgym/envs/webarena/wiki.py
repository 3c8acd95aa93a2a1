"""The wiki (WebArena's Kiwix Wikipedia mirror): articles, full-text search, categories.

Pages: the main page (search box, categories to browse), ``/wiki/<Title>`` articles (an
infobox, contents, sections whose text links to other articles, categories), ``/search``
(ranked full-text search, title matches first, pages of 20) and ``/category/<Name>`` (its
articles with a one-line description, pages of 50). Read-only and without accounts, like
WebArena's Kiwix.
"""

from __future__ import annotations

import re
from typing import ClassVar

from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.shop import fts_query
from llmgym.envs.webarena.web import (
    Request,
    Response,
    Site,
    esc,
    h,
    link,
    pager,
    route,
    search_form,
    table,
)
from llmgym.envs.webarena.wiki_data import WikiData, title_slug

__all__ = ["Wiki", "render_links"]

PER_PAGE = 20
PER_CATEGORY_PAGE = 50
_LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")


def render_links(text: str) -> str:
    """``text`` as HTML, its ``[[Title]]``, ``[[Title|label]]`` and ``[[Category:Name|label]]``
    markup as links."""
    parts, last = [], 0
    for match in _LINK.finditer(text):
        parts.append(esc(text[last : match.start()]))
        target, label = match.group(1), match.group(2) or match.group(1)
        if target.startswith("Category:"):
            href = f"/category/{title_slug(target.removeprefix('Category:'))}"
        else:
            href = f"/wiki/{title_slug(target)}"
        parts.append(link(href, label))
        last = match.end()
    parts.append(esc(text[last:]))
    return "".join(parts)


class Wiki(Site):
    """The wiki at ``localhost:8888`` (see the module docstring)."""

    name = "wiki"
    title = "Wikipedia"
    port = 8888
    dataset: ClassVar[type[Dataset]] = WikiData
    stylesheet = "header form{display:inline;margin-left:20px}.infobox{float:right}"

    def layout(self, request: Request | None, title: str, body: str) -> str:
        search = search_form(request, "pattern", "Search Wikipedia")
        header = h("header", link("/", self.title) + search)
        return self.document(f"{title} - {self.title}", header + h("main", body))

    @route("/")
    def home(self, request: Request) -> Response:
        browse = [
            link(f"/category/{slug}", name)
            for slug, name in self.db.execute(
                "SELECT slug, name FROM categories WHERE name IN ('Countries', 'Rivers', "
                "'Mountain ranges') OR name NOT LIKE '% %' ORDER BY name"
            ).fetchall()
        ]
        body = h("h1", "Welcome to Wikipedia") + h(
            "p", "The free encyclopedia of an invented world, offline."
        )
        body += h("h2", "Browse by category") + h(
            "ul", "".join(h("li", item) for item in browse), aria_label="Categories"
        )
        return self.page(request, "Main Page", body)

    @route("/wiki/<slug>")
    def article(self, request: Request, slug: str) -> Response:
        article = self.row("SELECT * FROM articles WHERE slug = ?", slug)
        facts = self.db.execute(
            "SELECT field, value FROM facts WHERE article_id = ? ORDER BY position",
            (article["id"],),
        ).fetchall()
        sections = self.db.execute(
            "SELECT heading, body FROM sections WHERE article_id = ? ORDER BY position",
            (article["id"],),
        ).fetchall()
        categories = self.db.execute(
            "SELECT c.slug, c.name FROM article_categories ac JOIN categories c ON "
            "c.id = ac.category_id WHERE ac.article_id = ? ORDER BY c.name",
            (article["id"],),
        ).fetchall()
        body = h("h1", esc(article["title"])) + h("p", esc(article["description"]))
        body += table(
            ("Fact", article["title"]),
            [[esc(field), render_links(value)] for field, value in facts],
            class_="infobox",
        )
        headed = [heading for heading, _ in sections if heading]
        if headed:
            body += h(
                "nav",
                h("h2", "Contents")
                + "".join(link(f"#{title_slug(heading)}", heading) for heading in headed),
                aria_label="Contents",
            )
        for heading, text in sections:
            if heading:
                body += h("h2", esc(heading), id=title_slug(heading))
            body += h("p", render_links(text))
        body += h(
            "nav",
            "Categories: " + " ".join(link(f"/category/{s}", name) for s, name in categories),
            aria_label="Categories",
        )
        return self.page(request, article["title"], body)

    @route("/search")
    def search(self, request: Request) -> Response:
        text = request.search_arg("pattern")
        query = fts_query(text)
        body = h("h1", "Search")
        if not query:
            return self.page(request, "Search", body + h("p", "Enter a search term."))
        total = self.db.execute(
            "SELECT count(*) FROM article_search WHERE article_search MATCH ?", (query,)
        ).fetchone()[0]
        page, pages = request.pagination(total, PER_PAGE)
        rows = self.db.execute(
            "SELECT a.title, a.slug, a.description FROM article_search s JOIN articles a ON "
            "a.id = s.rowid WHERE article_search MATCH ? ORDER BY bm25(article_search, 10.0, "
            "1.0), a.id LIMIT ? OFFSET ?",
            (query, PER_PAGE, (page - 1) * PER_PAGE),
        ).fetchall()
        first = (page - 1) * PER_PAGE + 1
        shown = f"Results {first}-{first + len(rows) - 1} of {total} for '{text}'"
        body += h("p", esc(shown if rows else f"No results for '{text}'"))
        body += h(
            "ul",
            "".join(
                h("li", link(f"/wiki/{slug}", title) + h("p", esc(description)))
                for title, slug, description in rows
            ),
            aria_label="Results",
        )
        body += pager("/search", {"pattern": text}, page, pages)
        return self.page(request, f"Search: {text}", body)

    @route("/category/<slug>")
    def category(self, request: Request, slug: str) -> Response:
        category = self.row("SELECT * FROM categories WHERE slug = ?", slug)
        total = self.db.execute(
            "SELECT count(*) FROM article_categories WHERE category_id = ?", (category["id"],)
        ).fetchone()[0]
        page, pages = request.pagination(total, PER_CATEGORY_PAGE)
        rows = self.db.execute(
            "SELECT a.title, a.slug, a.description FROM article_categories ac JOIN articles a "
            "ON a.id = ac.article_id WHERE ac.category_id = ? ORDER BY a.title LIMIT ? OFFSET ?",
            (category["id"], PER_CATEGORY_PAGE, (page - 1) * PER_CATEGORY_PAGE),
        ).fetchall()
        body = h("h1", esc(f"Category: {category['name']}"))
        body += h("p", esc(f"{total} pages are in this category."))
        body += h(
            "ul",
            "".join(
                h("li", link(f"/wiki/{s}", title) + esc(f" – {description}"))
                for title, s, description in rows
            ),
            aria_label="Pages",
        )
        body += pager(f"/category/{slug}", {}, page, pages)
        return self.page(request, f"Category: {category['name']}", body)
