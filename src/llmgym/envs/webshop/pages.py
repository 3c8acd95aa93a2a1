"""The shop's web pages: real HTML, and WebShop's simple text view of it made with BeautifulSoup.

A page is a sequence of HTML fragments (the instruction box, the navigation bar, one fragment per
search result, ...). :meth:`Page.html` joins them into the page; :meth:`Page.text` reads each
fragment's visible strings with BeautifulSoup and joins all of them with ``" [SEP] "``, which
equals converting the whole page at once (the test suite checks this). Reading fragments
separately lets each be read once: the most shown fragments of every product (its search result,
summary and options) are read when the catalogue database is built and stored with it, and the
others are kept in a cache.

Clickable elements carry a ``data-action`` attribute (and ``data-arg``, or ``name`` and ``value``
for option buttons); their visible text, lower case, is what ``click[...]`` names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from html import escape
from typing import TYPE_CHECKING

from llmgym.core import optional_import
from llmgym.core.cache import bounded_cache
from llmgym.envs.webshop.catalogue import Product

if TYPE_CHECKING:  # the checker reads bs4's own types; at run time a missing extra is named
    import bs4
else:
    bs4 = optional_import("bs4", extra="webshop", package="beautifulsoup4")

__all__ = [
    "PRODUCT_FRAGMENTS",
    "SEP",
    "Clickable",
    "Fragment",
    "Listing",
    "Page",
    "View",
    "detail_page",
    "html_to_text",
    "instruction_fragment",
    "item_page",
    "product_views",
    "purchase_page",
    "read_fragment",
    "results_page",
    "search_page",
]

SEP = " [SEP] "
"""Separator of WebShop's simple text mode."""

DETAIL_TABS = ("description", "features", "reviews")
PRODUCT_FRAGMENTS = ("result", "summary", "options")
"""The fragments shown for every product visited (its search result and its page) whose views
the catalogue database stores; the rarer detail tabs are read when first shown."""

_INVISIBLE = frozenset({"style", "script", "head", "title", "meta", "[document]"})
_PRESSED = ' aria-pressed="true"'
_DOCUMENT_HEAD = (
    '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>{title}</title></head>\n'
    "<body>\n"
)
_DOCUMENT_TAIL = "\n</body>\n</html>\n"


@dataclass(frozen=True)
class Clickable:
    """An element ``click[label]`` activates: what it does (``action``) and on what (``arg``)."""

    label: str
    action: str
    arg: str


View = tuple[tuple[str, ...], tuple[Clickable, ...]]
"""What a fragment shows: its visible strings and its clickable elements, in page order."""


def _read(soup: bs4.BeautifulSoup) -> View:
    strings: list[str] = []
    clickables: list[Clickable] = []
    for node in soup.descendants:
        if isinstance(node, bs4.element.NavigableString):
            if isinstance(node, bs4.element.PreformattedString) or (
                node.parent is not None and node.parent.name in _INVISIBLE
            ):
                continue
            text = " ".join(node.split())
            if text:
                strings.append(text)
        elif isinstance(node, bs4.element.Tag) and "data-action" in node.attrs:
            label = " ".join(node.get_text(" ").split()).lower()
            # bs4 types attribute values as str or a list (for class-like attributes); these
            # are single strings
            action = str(node["data-action"])
            if action == "option":
                arg = f"{node['name']}={node['value']}"
            else:
                arg = str(node.get("data-arg", ""))
            clickables.append(Clickable(label, action, arg))
    return tuple(strings), tuple(clickables)


def read_fragment(html: str) -> View:
    """The view of an HTML fragment, read with BeautifulSoup (cached)."""
    # Which option button is pressed changes neither the visible strings nor the clickable
    # elements, so an option form is read once whatever is selected.
    return _read_canonical(html.replace(_PRESSED, ""))


@bounded_cache(16_384)
def _read_canonical(html: str) -> View:
    return _read(bs4.BeautifulSoup(html, "html.parser"))


def html_to_text(html: str) -> str:
    """WebShop's simple text mode of a whole HTML page: its visible strings joined by SEP."""
    return SEP.join(_read(bs4.BeautifulSoup(html, "html.parser"))[0])


@dataclass(frozen=True)
class Fragment:
    """A piece of a page's HTML, with its view when it is already known."""

    html: str
    known_view: View | None = None

    @cached_property
    def view(self) -> View:
        """The visible strings and clickable elements of the fragment."""
        return self.known_view if self.known_view is not None else read_fragment(self.html)


@dataclass(frozen=True)
class Page:
    """One page of the shop."""

    kind: str
    fragments: tuple[Fragment, ...]

    def html(self) -> str:
        """The page as an HTML document."""
        title = "WebShop" if self.kind == "search" else f"WebShop - {self.kind}"
        body = "\n".join(fragment.html for fragment in self.fragments)
        return _DOCUMENT_HEAD.format(title=title) + body + _DOCUMENT_TAIL

    def text(self) -> str:
        """WebShop's simple text mode: the visible strings of the page joined by ``" [SEP] "``."""
        return SEP.join(text for fragment in self.fragments for text in fragment.view[0])

    @cached_property
    def clickables(self) -> dict[str, Clickable]:
        """Lower-case label -> clickable element, in page order."""
        return {c.label: c for fragment in self.fragments for c in fragment.view[1]}


# ---------------------------------------------------------------------------- fragments
def _link(label: str, action: str, href: str, arg: str = "") -> str:
    data_arg = f' data-arg="{escape(arg)}"' if arg else ""
    return f'<a href="{escape(href)}" data-action="{action}"{data_arg}>{escape(label)}</a>'


def instruction_fragment(instruction: str) -> Fragment:
    """The instruction box shown at the top of every page."""
    return Fragment(
        f'<div id="instruction-text"><h4>Instruction:</h4><p>{escape(instruction)}</p></div>'
    )


_BACK = _link("Back to Search", "back", "/")
_HEADER = Fragment('<header><h1 class="shop-name">WebShop</h1></header>')
_SEARCH_FORM = Fragment(
    '<form id="search-form" action="/search" method="get">'
    '<input type="text" name="keywords" aria-label="Search keywords">'
    '<button type="submit">Search</button></form>'
)
_ITEM_NAV = Fragment(f'<nav class="item-nav">{_BACK}{_link("< Prev", "prev", "/back")}</nav>')
_ITEM_TABS = Fragment(
    '<div class="item-tabs">'
    + "".join(_link(tab.capitalize(), "detail", f"?tab={tab}", tab) for tab in DETAIL_TABS)
    + "</div>"
)
_BUY = Fragment(
    '<form class="buy" action="/buy" method="post">'
    '<button type="submit" data-action="buy">Buy Now</button></form>'
)
_NO_RESULTS = Fragment('<p class="no-results">No products match these keywords.</p>')


@dataclass(frozen=True)
class Listing:
    """A product as a search result shows it, with the view of that entry when known."""

    asin: str
    title: str
    price: float
    view: View | None = None

    @classmethod
    def of(cls, product: Product) -> Listing:
        """The listing of ``product`` (its view is read when first needed)."""
        return cls(product.asin, product.title, product.price)

    def fragment(self) -> Fragment:
        """The entry's HTML: the product id (a link), the title and the price."""
        return Fragment(_result_markup(self.asin, self.title, self.price), self.view)


@bounded_cache(16_384)
def _result_markup(asin: str, title: str, price: float) -> str:
    return (
        '<div class="result">'
        f'<a class="product-link" href="/item/{asin}" data-action="item" '
        f'data-arg="{asin}">{asin}</a>'
        f'<h4 class="product-title">{escape(title)}</h4>'
        f'<p class="product-price">${price:.2f}</p></div>'
    )


def _summary_html(product: Product) -> str:
    rating = "N.A." if product.rating is None else f"{product.rating:.1f} out of 5"
    return (
        f'<div class="product-summary"><h2 class="product-title">{escape(product.title)}</h2>'
        f'<p class="product-price">Price: ${product.price:.2f}</p>'
        f'<p class="product-rating">Rating: {rating}</p></div>'
    )


@bounded_cache(4096)
def _option_buttons(
    options: tuple[tuple[str, tuple[str, ...]], ...],
) -> tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...]:
    """For each option group: its name, its legend, and per value (value, button, pressed
    button) — the escaped markup, built once per set of options."""
    groups = []
    for name, values in options:
        buttons = []
        for value in values:
            head = (
                f'<button type="button" name="{escape(name)}" value="{escape(value)}" '
                'data-action="option"'
            )
            tail = f">{escape(value)}</button>"
            buttons.append((value, head + tail, head + _PRESSED + tail))
        groups.append((name, f"<fieldset><legend>{escape(name)}</legend>", tuple(buttons)))
    return tuple(groups)


def _options_html(product: Product, selected: Mapping[str, str]) -> str:
    parts = ['<form class="item-options">']
    for name, legend, buttons in _option_buttons(product.options):
        chosen = selected.get(name)
        parts.append(legend)
        parts += [pressed if value == chosen else plain for value, plain, pressed in buttons]
        parts.append("</fieldset>")
    parts.append("</form>")
    return "".join(parts)


def _detail_html(product: Product, tab: str) -> str:
    if tab == "description":
        return f'<div class="product-description"><p>{escape(product.description)}</p></div>'
    if tab == "features":
        items = "".join(f"<li>{escape(feature)}</li>" for feature in product.features)
        return f'<ul class="product-features">{items}</ul>'
    reviews = "".join(
        f'<div class="review"><p class="review-stars">{review.stars} out of 5 stars</p>'
        f'<p class="review-text">{escape(review.text)}</p></div>'
        for review in product.reviews
    )
    return reviews or '<p class="no-reviews">No reviews yet.</p>'


def _product_html(product: Product, name: str) -> str:
    if name == "result":
        return Listing.of(product).fragment().html
    if name == "summary":
        return _summary_html(product)
    return _options_html(product, {})


def product_views(product: Product) -> dict[str, View]:
    """The views of the product's own fragments (:data:`PRODUCT_FRAGMENTS`), read with
    BeautifulSoup; the catalogue database stores them."""
    return {
        name: _read(bs4.BeautifulSoup(_product_html(product, name), "html.parser"))
        for name in PRODUCT_FRAGMENTS
    }


# ---------------------------------------------------------------------------- pages
def search_page(instruction: Fragment) -> Page:
    """The start page: the instruction and the search bar."""
    return Page("search", (_HEADER, instruction, _SEARCH_FORM))


def results_page(
    instruction: Fragment, listings: Iterable[Listing], page: int, total: int, last_page: int
) -> Page:
    """One page of search results."""
    navigation = [
        '<nav class="results-nav">',
        _BACK,
        f'<span class="page-count">Page {page} (Total results: {total})</span>',
    ]
    if page > 1:
        navigation.append(_link("< Prev", "prev", f"/search?page={page - 1}"))
    if page < last_page:
        navigation.append(_link("Next >", "next", f"/search?page={page + 1}"))
    navigation.append("</nav>")
    entries = [listing.fragment() for listing in listings]
    return Page(
        "results",
        (instruction, Fragment("".join(navigation)), *(entries or [_NO_RESULTS])),
    )


def item_page(
    instruction: Fragment,
    product: Product,
    selected: Mapping[str, str],
    views: Mapping[str, View] | None = None,
) -> Page:
    """A product's page: options, title, price, rating, links to its details, Buy Now.

    ``views`` are the stored views of the product's summary and options, if known."""
    views = views or {}
    fragments = [
        instruction,
        _ITEM_NAV,
        Fragment(_options_html(product, selected), views.get("options")),
    ]
    if selected:
        chosen = ", ".join(f"{name}: {value}" for name, value in selected.items())
        fragments.append(Fragment(f'<p class="selected-options">Selected: {escape(chosen)}</p>'))
    fragments += [Fragment(_summary_html(product), views.get("summary")), _ITEM_TABS, _BUY]
    return Page("item", tuple(fragments))


def detail_page(instruction: Fragment, product: Product, tab: str) -> Page:
    """A product's description, feature list or reviews (``tab``)."""
    return Page(tab, (instruction, _ITEM_NAV, Fragment(_detail_html(product, tab))))


def purchase_page(
    instruction: Fragment, product: Product, selected: Mapping[str, str], reward: float
) -> Page:
    """The confirmation shown after Buy Now, with the score."""
    chosen = ", ".join(f"{name}: {value}" for name, value in selected.items()) or "none"
    return Page(
        "purchase",
        (
            instruction,
            Fragment(
                '<div class="purchase"><h2>Thank you for shopping with us!</h2>'
                f"<p>Purchased: {escape(product.title)} ({product.asin})</p>"
                f"<p>Options: {escape(chosen)}</p>"
                f"<p>Price: ${product.price:.2f}</p>"
                f"<p>Your score (min 0.0, max 1.0): {reward:.2f}</p></div>"
            ),
        ),
    )
