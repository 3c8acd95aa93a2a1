"""Task templates on the online store (``localhost:7770``), signed in as Emma Lopez.

Information seeking (prices, SKUs, reviews, orders, spending, search counts, the cheapest
product of a category, a product that does not exist), navigation (sorted categories, filtered
searches, an order's page) and changes (cart, checkout, address, wish list, a review).
"""

from __future__ import annotations

import calendar
from collections.abc import Mapping
from typing import Any, ClassVar

from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.shop import Shop, money
from llmgym.envs.webarena.shop_data import CITIES, LAST_NAMES, SHIPPING_METHODS, STREETS, ShopData
from llmgym.envs.webarena.tasks import (
    Data,
    Instance,
    PageView,
    ProgramCheck,
    StringMatch,
    SubjectTemplate,
    TaskTemplate,
    UrlMatch,
    done_when,
    need,
    register,
)

__all__ = ["SHOP", "open_product"]

SHOP = f"http://localhost:{Shop.port}"
SEARCH_BOX = "Search entire store here..."
_MONTHS = [f"{year}-{month:02d}" for year in (2022, 2023) for month in range(1, 13)]


def month_name(month: str) -> str:
    """``2023-05`` -> ``May 2023``."""
    year, number = month.split("-")
    return f"{calendar.month_name[int(number)]} {year}"


def unique_product(data: Data, rng: TaskRng, where: str = "1") -> tuple | None:
    """A random enabled product meeting ``where``: (id, name, price, sku, quantity); names are
    unique (the generator makes them so)."""
    product_id = rng.randint(1, ShopData.products)
    sql = "SELECT id, name, price, sku, quantity FROM products WHERE id = ? AND status = 'Enabled'"
    return data[ShopData].execute(f"{sql} AND {where}", (product_id,)).fetchone()


class ProductTemplate(SubjectTemplate):
    """A template about one product, drawn at random among the enabled products that meet
    ``product_filter`` (an SQL condition); :meth:`about` makes the instance from its row
    ``(id, name, price, sku, quantity)``."""

    product_filter: ClassVar[str] = "1"

    def subject(self, data: Data, rng: TaskRng) -> tuple | None:
        return unique_product(data, rng, self.product_filter)


# ---------------------------------------------------------------------------- oracle helpers
def open_product(page: PageView, name: str) -> str | None:
    """Search for the product ``name`` and open its page; ``None`` once it is open."""
    if page.path.startswith("/product/") and page.find("heading", name):
        return None
    found = page.find("link", name)
    if found is not None:
        return page.click(found)
    if page.path == "/search" and page.query.get("q") == name:
        following = page.find("link", "Next")
        if following is None:
            raise LookupError(f"the search for {name!r} does not list it")
        return page.click(following)
    box = page.find("textbox", SEARCH_BOX)
    if box is None:
        return page.link("One Stop Market")
    return page.type(box, name)


def open_my_orders(page: PageView) -> str | None:
    """Go to My Orders (page 1); ``None`` once there."""
    if page.path == "/account/orders":
        return None
    if page.find("link", "My Orders"):
        return page.link("My Orders")
    return page.link("My Account")


def order_rows(page: PageView) -> list[list[str]]:
    """My Orders' rows as text: number, date, ship to, total, status."""
    return [[cell.name for cell in row] for row in page.rows()]


def open_my_order(page: PageView, number: str) -> str | None:
    """Open the page of my order ``number`` from My Orders; ``None`` once there."""
    if page.find("heading", f"Order # {number}"):
        return None
    step = open_my_orders(page)
    if step:
        return step
    for row in page.rows():
        if row[0].name == number:
            return page.click(page.find("link", "View Order", after=row[0]) or row[0])
    step = next_page(page)
    if step is None:
        raise LookupError(f"no order {number} in My Orders")
    return step


def next_page(page: PageView) -> str | None:
    """Click ``Next`` of the pagination, if there is one."""
    following = page.find("link", "Next")
    return page.click(following) if following else None


# ---------------------------------------------------------------------------- information
@register
class ProductPrice(ProductTemplate):
    id = "shop/product-price"
    slot = 0
    intent = "What is the price of {product}?"
    sites = ("shop",)

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        return self.make(
            {"product": row[1]},
            (StringMatch(must_include=(f"{row[2]:.2f}",)),),
            start_url=f"{SHOP}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_product(page, params["product"])
        if step:
            return step
        price = need(
            page.find("StaticText", prefix="$", after=page.find("heading", params["product"])),
            "price",
        )
        return f"stop [{price.name}]"


@register
class ProductSku(ProductTemplate):
    id = "shop/product-sku"
    slot = 1
    intent = "What is the SKU of {product}?"
    sites = ("shop",)

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        return self.make({"product": row[1]}, (StringMatch(exact=row[3]),), start_url=f"{SHOP}/")

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        return open_product(page, params["product"]) or f"stop [{page.text('SKU: ')}]"


@register
class ProductReviewCount(ProductTemplate):
    id = "shop/product-review-count"
    slot = 2
    intent = "How many customer reviews does {product} have?"
    sites = ("shop",)

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        count = data.one(
            ShopData,
            "SELECT count(*) FROM reviews WHERE product_id = ? AND status = 'Approved'",
            row[0],
        )
        return self.make(
            {"product": row[1]}, (StringMatch(exact=str(count)),), start_url=f"{SHOP}/"
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_product(page, params["product"])
        if step:
            return step
        heading = need(page.find("heading", prefix="Customer Reviews ("), "heading")
        return f"stop [{heading.name.removeprefix('Customer Reviews (').rstrip(')')}]"


@register
class ReviewRating(ProductTemplate):
    id = "shop/review-rating"
    slot = 3
    intent = "How many stars did {nickname} give {product} in their review?"
    sites = ("shop",)

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        reviews = data.all(
            ShopData,
            "SELECT nickname, rating FROM reviews WHERE product_id = ? AND status = 'Approved'",
            row[0],
        )
        nicknames = [nickname for nickname, _ in reviews]
        unique = [(n, r) for n, r in reviews if nicknames.count(n) == 1]
        if not unique:
            return None
        nickname, rating = rng.choice(unique)
        return self.make(
            {"nickname": nickname, "product": row[1]},
            (StringMatch(exact=str(rating)),),
            start_url=f"{SHOP}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_product(page, params["product"])
        if step:
            return step
        for node in page.nodes("StaticText"):
            if node.name.startswith("Rating: ") and f", by {params['nickname']} on " in node.name:
                return f"stop [{node.name.split()[1]}]"
        raise LookupError(f"no review by {params['nickname']}")


@register
class OrderTotal(TaskTemplate):
    id = "shop/order-total"
    slot = 4
    intent = "What was the order total of my order {number}?"
    sites = ("shop",)
    column = 3

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        orders = data.all(
            ShopData, "SELECT number, total, status FROM orders WHERE customer_id = 1"
        )
        number, total, status = rng.choice(orders)
        return self.make(
            {"number": number}, (self._evaluator(total, status),), start_url=f"{SHOP}/"
        )

    def _evaluator(self, total: float, status: str) -> StringMatch:
        return StringMatch(must_include=(f"{total:.2f}",))

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_my_orders(page)
        if step:
            return step
        for row in order_rows(page):
            if row[0] == params["number"]:
                return f"stop [{row[self.column]}]"
        step = next_page(page)
        if step is None:
            raise LookupError(f"no order {params['number']}")
        return step


@register
class OrderStatus(OrderTotal):
    id = "shop/order-status"
    slot = 5
    intent = "What is the status of my order {number}?"
    column = 4

    def _evaluator(self, total: float, status: str) -> StringMatch:
        return StringMatch(exact=status)


@register
class MonthlyOrders(TaskTemplate):
    id = "shop/monthly-orders"
    slot = 6
    intent = "How many orders did I place in {month}?"
    sites = ("shop",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        month = rng.choice(_MONTHS)
        count = data.one(
            ShopData,
            "SELECT count(*) FROM orders WHERE customer_id = 1 AND created_at LIKE ?",
            f"{month}%",
        )
        return self.make(
            {"month": month_name(month)}, (StringMatch(exact=str(count)),), start_url=f"{SHOP}/"
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_my_orders(page)
        if step:
            return step
        month = month_key(params["month"])
        rows = memory.setdefault("rows", {})
        rows[page.query.get("page", "1")] = [r for r in order_rows(page) if r[1].startswith(month)]
        step = next_page(page)
        if step:
            return step
        return f"stop [{self.answer([r for page_rows in rows.values() for r in page_rows])}]"

    def answer(self, rows: list[list[str]]) -> str:
        return str(len(rows))


def month_key(name: str) -> str:
    """``May 2023`` -> ``2023-05``."""
    month, year = name.split()
    return f"{year}-{list(calendar.month_name).index(month):02d}"


@register
class MonthlySpending(MonthlyOrders):
    id = "shop/monthly-spending"
    slot = 7
    intent = "How much did I spend on orders placed in {month}, canceled orders excluded?"

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        months = [
            m
            for (m,) in data.all(
                ShopData,
                "SELECT DISTINCT substr(created_at, 1, 7) FROM orders WHERE customer_id = 1 "
                "AND status != 'canceled' ORDER BY 1",
            )
        ]
        month = rng.choice(months)
        total = data.one(
            ShopData,
            "SELECT sum(total) FROM orders WHERE customer_id = 1 AND created_at LIKE ? "
            "AND status != 'canceled'",
            f"{month}%",
        )
        return self.make(
            {"month": month_name(month)},
            (StringMatch(must_include=(f"{total:.2f}",)),),
            start_url=f"{SHOP}/",
        )

    def answer(self, rows: list[list[str]]) -> str:
        total = sum(float(r[3].strip("$").replace(",", "")) for r in rows if r[4] != "Canceled")
        return money(total)


@register
class SearchCount(ProductTemplate):
    id = "shop/search-count"
    slot = 8
    intent = "How many products does a search for '{query}' find in the store?"
    sites = ("shop",)

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        words = [w for w in row[1].replace(",", " ").split() if w.isalpha() and len(w) > 3]
        if len(words) < 2:
            return None
        query = " ".join(rng.sample(words, 2)).lower()
        count = data.one(
            ShopData,
            "SELECT count(*) FROM products p JOIN product_search s ON s.rowid = p.id WHERE "
            "product_search MATCH ? AND p.status = 'Enabled'",
            " ".join(f'"{w}"' for w in query.split()),
        )
        return self.make({"query": query}, (StringMatch(exact=str(count)),), start_url=f"{SHOP}/")

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path == "/search" and page.query.get("q") == params["query"]:
            counts = next((n for n in page.nodes("StaticText") if n.name.endswith(" items")), None)
            return f"stop [{need(counts, 'item count').name.split()[0]}]"
        box = need(page.find("textbox", SEARCH_BOX), "box")
        return page.type(box, params["query"])


def _leaf_categories(data: Data) -> list[tuple]:
    """(id, name, department name) of every category below a department."""
    return data.all(
        ShopData,
        "SELECT c.id, c.name, d.name FROM categories c JOIN categories d ON d.id = c.parent_id "
        "ORDER BY c.id",
    )


def open_category(page: PageView, department: str, category: str) -> str | None:
    """Open the category page of ``category`` in ``department``; ``None`` once there."""
    if page.path.startswith("/category/") and page.find("heading", category):
        return None
    if page.path.startswith("/category/") and page.find("heading", department):
        return page.link(f"{category} (", prefix=True)
    return page.link(department)


@register
class CheapestInCategory(TaskTemplate):
    id = "shop/cheapest-in-category"
    slot = 9
    intent = (
        "What is the cheapest product in the {category} category of the {department} department?"
    )
    sites = ("shop",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        category_id, category, department = rng.choice(_leaf_categories(data))
        cheapest = data.all(
            ShopData,
            "SELECT name, price FROM products WHERE category_id = ? AND status = 'Enabled' "
            "ORDER BY price, id LIMIT 2",
            category_id,
        )
        if not cheapest or (len(cheapest) > 1 and cheapest[0][1] == cheapest[1][1]):
            return None
        return self.make(
            {"category": category, "department": department},
            (StringMatch(fuzzy=cheapest[0][0]),),
            start_url=f"{SHOP}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_category(page, params["department"], params["category"])
        if step:
            return step
        if page.query.get("sort") != "price_asc":
            sort = need(page.find("combobox", "Sort By"), "sort")
            return page.choose(sort, "Price: Low to High") or page.button("Apply")
        products = page.find("list", "Products")
        first = need(page.find("link", after=products), "first")
        return f"stop [{first.name}]"


@register
class MissingProduct(TaskTemplate):
    id = "shop/missing-product-price"
    slot = 10
    intent = "What is the price of the {product}?"
    sites = ("shop",)
    _NOUNS = (
        "Hoverboard",
        "Telescope",
        "Harpsichord",
        "Snowmobile",
        "Trampoline",
        "Kayak",
        "Accordion",
        "Metronome",
        "Chandelier",
        "Sundial",
        "Jukebox",
        "Periscope",
    )

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        brand = data.one(ShopData, "SELECT brand FROM products WHERE id = ?", rng.randint(1, 3000))
        product = f"{brand} {rng.choice(self._NOUNS)}"
        found = data.one(
            ShopData,
            "SELECT count(*) FROM product_search WHERE product_search MATCH ?",
            " ".join(f'"{w}"' for w in product.split()),
        )
        if found:
            return None
        return self.make({"product": product}, (StringMatch(fuzzy="N/A"),), start_url=f"{SHOP}/")

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        name = params["product"]
        if page.path == "/search" and page.query.get("q") == name:
            found = page.find("link", name)
            if found:
                return page.click(found)
            return next_page(page) or "stop [N/A]"
        if page.path.startswith("/product/") and page.find("heading", name):
            price = page.find("StaticText", prefix="$")
            return f"stop [{price.name if price else 'N/A'}]"
        box = need(page.find("textbox", SEARCH_BOX), "box")
        return page.type(box, name)


# ---------------------------------------------------------------------------- navigation
_SORT_LABELS = {
    "price_asc": "price from low to high",
    "price_desc": "price from high to low",
    "name": "product name",
    "rating": "rating, best first",
}
_SORT_OPTIONS = {
    "price_asc": "Price: Low to High",
    "price_desc": "Price: High to Low",
    "name": "Product Name",
    "rating": "Top Rated",
}


@register
class CategorySorted(TaskTemplate):
    id = "shop/nav-category-sorted"
    slot = 11
    kind = "navigation"
    intent = "Show me the {category} products of the {department} department sorted by {order}."
    sites = ("shop",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        category_id, category, department = rng.choice(_leaf_categories(data))
        sort = rng.choice(sorted(_SORT_LABELS))
        return self.make(
            {"category": category, "department": department, "order": _SORT_LABELS[sort]},
            (UrlMatch(f"{SHOP}/category/{category_id}?sort={sort}"),),
            start_url=f"{SHOP}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_category(page, params["department"], params["category"])
        if step:
            return step
        sort = next(k for k, v in _SORT_LABELS.items() if v == params["order"])
        if page.query.get("sort") == sort:
            return "stop []"
        combobox = need(page.find("combobox", "Sort By"), "combobox")
        return page.choose(combobox, _SORT_OPTIONS[sort]) or page.button("Apply")


@register
class SearchPriceRange(ProductTemplate):
    id = "shop/nav-search-price-range"
    slot = 12
    kind = "navigation"
    intent = "Search the store for '{query}' and show only results priced from ${low} to ${high}."
    sites = ("shop",)

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        words = [w for w in row[1].replace(",", " ").split() if w.isalpha() and len(w) > 3]
        if not words:
            return None
        query = rng.choice(words).lower()
        low = rng.choice((5, 10, 15, 20, 25, 30))
        high = low + rng.choice((10, 20, 25, 50))
        return self.make(
            {"query": query, "low": low, "high": high},
            (UrlMatch(f"{SHOP}/search?q={query}&min_price={low}&max_price={high}"),),
            start_url=f"{SHOP}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        query, low, high = params["query"], str(params["low"]), str(params["high"])
        if page.path != "/search" or page.query.get("q") != query:
            box = need(page.find("textbox", SEARCH_BOX), "box")
            return page.type(box, query)
        if page.query.get("min_price") == low and page.query.get("max_price") == high:
            return "stop []"
        return page.fill({"Minimum price": low, "Maximum price": high}) or page.button("Apply")


@register
class PriciestItem(TaskTemplate):
    id = "shop/priciest-item"
    slot = 13
    intent = "Which item of my order {number} had the highest unit price?"
    sites = ("shop",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        order_id, number = rng.choice(
            data.all(ShopData, "SELECT id, number FROM orders WHERE customer_id = 1")
        )
        items = data.all(
            ShopData,
            "SELECT name, price FROM order_items WHERE order_id = ? ORDER BY price DESC",
            order_id,
        )
        if len(items) < 2 or items[0][1] == items[1][1]:
            return None
        return self.make(
            {"number": number}, (StringMatch(fuzzy=items[0][0]),), start_url=f"{SHOP}/"
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = open_my_order(page, params["number"])
        if step:
            return step
        rows = [[cell.name for cell in row] for row in page.rows()]
        priciest = max(rows, key=lambda row: float(row[2].strip("$").replace(",", "")))
        return f"stop [{priciest[0]}]"


@register
class CategoryCount(TaskTemplate):
    id = "shop/category-count"
    slot = 14
    intent = (
        "How many products does the store list under {category} in the {department} department?"
    )
    sites = ("shop",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        category_id, category, department = rng.choice(_leaf_categories(data))
        count = data.one(
            ShopData,
            "SELECT count(*) FROM products WHERE category_id = ? AND status = 'Enabled'",
            category_id,
        )
        return self.make(
            {"category": category, "department": department},
            (StringMatch(exact=str(count)),),
            start_url=f"{SHOP}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        category = page.find("link", prefix=f"{params['category']} (")
        if page.path.startswith("/category/") and page.find("heading", params["department"]):
            found = need(category, "category link")
            return f"stop [{found.name.rsplit('(', 1)[1].rstrip(')')}]"
        return page.link(params["department"])


@register
class RenameAccount(TaskTemplate):
    id = "shop/rename-account"
    slot = 15
    kind = "change"
    intent = "I got married: change the name on my account to {first} {last}."
    sites = ("shop",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        last = rng.choice(LAST_NAMES)
        if last == "Lopez":
            return None
        first = rng.choice(("Emma", "Emma", "Emily", "Emmy"))
        return self.make({"first": first, "last": last}, (ProgramCheck(),), start_url=f"{SHOP}/")

    def check(self, state: Data, instance: Instance) -> bool:
        row = state.all(ShopData, "SELECT first_name, last_name, email FROM customers WHERE id = 1")
        before = state.initial.one(ShopData, "SELECT email FROM customers WHERE id = 1")
        return row == [(instance.params["first"], instance.params["last"], before)]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.find("StaticText", "You saved the account information."):
            return "stop []"
        if page.path == "/account/edit":
            fields = {"First Name": params["first"], "Last Name": params["last"]}
            return page.fill(fields) or page.button("Save")
        if page.path == "/account":
            return page.link("Edit Account Information")
        return page.link("My Account")


@register
class OpenOrder(TaskTemplate):
    id = "shop/nav-open-order"
    slot = 16
    kind = "navigation"
    intent = "Open the page of my order {number}."
    sites = ("shop",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        number = rng.choice(data.all(ShopData, "SELECT number FROM orders WHERE customer_id = 1"))[
            0
        ]
        return self.make(
            {"number": number},
            (UrlMatch(f"{SHOP}/account/orders/{number}"),),
            start_url=f"{SHOP}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        return open_my_order(page, params["number"]) or "stop []"


# ---------------------------------------------------------------------------- changes
@register
class AddToCart(ProductTemplate):
    id = "shop/add-to-cart"
    slot = 17
    kind = "change"
    intent = "Add {qty} of {product} to my shopping cart."
    sites = ("shop",)

    product_filter = "quantity > 0"

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        qty = rng.choice((1, 2, 2, 3, 4, 5))
        return self.make(
            {"qty": qty, "product": row[1]},
            (ProgramCheck(),),
            start_url=f"{SHOP}/",
            reference={"product_id": row[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        rows = state.all(ShopData, "SELECT product_id, qty FROM cart_items WHERE customer_id = 1")
        return rows == [(instance.reference["product_id"], instance.params["qty"])]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        added = done_when(page, f"You added {params['product']} to your shopping cart.")
        if added:
            return added
        step = open_product(page, params["product"])
        if step:
            return step
        return page.fill({"Qty": str(params["qty"])}) or page.button("Add to Cart")


@register
class BuyProduct(ProductTemplate):
    id = "shop/buy-product"
    slot = 18
    kind = "change"
    intent = "Buy one {product} and have it shipped with {method}."
    sites = ("shop",)

    product_filter = "quantity > 0"

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        key, label, _ = rng.choice(SHIPPING_METHODS)
        return self.make(
            {"product": row[1], "method": label},
            (ProgramCheck(),),
            start_url=f"{SHOP}/",
            reference={"product_id": row[0], "method": key},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        orders = state.all(
            ShopData,
            "SELECT id, shipping_method FROM orders WHERE customer_id = 1 AND id > ?",
            ShopData.orders,
        )
        if len(orders) != 1 or orders[0][1] != instance.reference["method"]:
            return False
        items = state.all(
            ShopData, "SELECT product_id, qty FROM order_items WHERE order_id = ?", orders[0][0]
        )
        return items == [(instance.reference["product_id"], 1)]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.find("heading", "Thank you for your purchase!"):
            return "stop []"
        if page.path == "/checkout":
            radio = next(n for n in page.nodes("radio") if n.name.startswith(params["method"]))
            if not page.browser.visit.state.checked.get(radio.id):
                return page.click(radio)
            return page.button("Place Order")
        if page.path == "/cart":
            return page.link("Proceed to Checkout")
        if page.find("StaticText", f"You added {params['product']} to your shopping cart."):
            return page.link("My Cart (", prefix=True)
        return open_product(page, params["product"]) or page.button("Add to Cart")


@register
class UpdateAddress(TaskTemplate):
    id = "shop/update-address"
    slot = 19
    kind = "change"
    intent = "I moved: change my default shipping address to {street}, {city}, {state} {zip}."
    sites = ("shop",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        city, state, zip3 = rng.choice(CITIES)
        street = f"{rng.randint(10, 9999)} {rng.choice(STREETS)}"
        params = {
            "street": street,
            "city": city,
            "state": state,
            "zip": f"{zip3}{rng.randint(10, 99)}",
        }
        return self.make(params, (ProgramCheck(),), start_url=f"{SHOP}/")

    def check(self, state: Data, instance: Instance) -> bool:
        row = state.all(ShopData, "SELECT street, city, state, zip FROM customers WHERE id = 1")
        p = instance.params
        return row == [(p["street"], p["city"], p["state"], p["zip"])]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.find("StaticText", "You saved the address."):
            return "stop []"
        if page.path == "/account/address":
            fields = {
                "Street Address": params["street"],
                "City": params["city"],
                "State": params["state"],
                "Zip/Postal Code": params["zip"],
            }
            return page.fill(fields) or page.button("Save Address")
        if page.path == "/account":
            return page.link("Edit Address")
        return page.link("My Account")


@register
class AddToWishList(ProductTemplate):
    id = "shop/add-to-wish-list"
    slot = 20
    kind = "change"
    intent = "Add {product} to my wish list."
    sites = ("shop",)

    product_filter = "id NOT IN (SELECT product_id FROM wishlist_items)"

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        return self.make(
            {"product": row[1]},
            (ProgramCheck(),),
            start_url=f"{SHOP}/",
            reference={"product_id": row[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        wished = state.all(ShopData, "SELECT product_id FROM wishlist_items WHERE customer_id = 1")
        return (instance.reference["product_id"],) in wished and len(wished) == 4

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        added = done_when(page, f"{params['product']} has been added to your Wish List.")
        if added:
            return added
        return open_product(page, params["product"]) or page.button("Add to Wish List")


@register
class WriteReview(ProductTemplate):
    id = "shop/write-review"
    slot = 21
    kind = "change"
    intent = (
        "Write a {stars}-star review of {product} with the summary '{title}' and the text "
        "'{text}', under the nickname {nickname}."
    )
    sites = ("shop",)
    _REVIEWS = (
        ("Not for me", "It did not fit my needs, sadly."),
        ("Decent buy", "Solid for the price; shipping was quick."),
        ("Great value", "Works well and looks good."),
        ("Love it", "Exactly what I was looking for."),
        ("Disappointing", "The quality is lower than I expected."),
    )

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        title, text = rng.choice(self._REVIEWS)
        return self.make(
            {
                "stars": rng.randint(1, 5),
                "product": row[1],
                "title": title,
                "text": text,
                "nickname": "Emma L.",
            },
            (ProgramCheck(),),
            start_url=f"{SHOP}/",
            reference={"product_id": row[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        p = instance.params
        rows = state.all(
            ShopData,
            "SELECT nickname, rating, title, body FROM reviews WHERE product_id = ? AND "
            "customer_id = 1",
            instance.reference["product_id"],
        )
        return rows == [(p["nickname"], p["stars"], p["title"], p["text"])]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        done = done_when(page, "You submitted your review for moderation.")
        if done:
            return done
        step = open_product(page, params["product"])
        if step:
            return step
        step = page.fill(
            {"Nickname": params["nickname"], "Summary": params["title"], "Review": params["text"]}
        )
        if step:
            return step
        rating = need(page.find("combobox", "Rating"), "rating")
        return page.choose(rating, f"{params['stars']} stars") or page.button("Submit Review")
