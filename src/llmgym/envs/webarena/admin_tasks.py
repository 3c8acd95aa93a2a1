"""Task templates on the store's back office (``localhost:7780``), signed in as ``admin``.

Information seeking (customer details and order counts, stock, best sellers, monthly sales),
navigation (filtered, sorted order grids) and changes (prices, product status, order status
and comments, customer details, review moderation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from llmgym.core.cache import bounded_cache
from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.admin import ORDER_ACTIONS, ORDER_SORTS, ShopAdmin
from llmgym.envs.webarena.shop_data import ORDER_STATUSES, ShopData
from llmgym.envs.webarena.shop_tasks import ProductTemplate, month_key, month_name
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

__all__ = ["ADMIN"]

ADMIN = f"http://localhost:{ShopAdmin.port}"
KEYWORD = "Search by keyword"


def unique_customer(data: Data, rng: TaskRng) -> tuple | None:
    """A random customer (id, full name, email, phone) whose full name no other has."""
    row = (
        data[ShopData]
        .execute(
            "SELECT id, first_name || ' ' || last_name, email, phone FROM customers WHERE id = ?",
            (rng.randint(2, ShopData.customers),),
        )
        .fetchone()
    )
    twins = data.one(
        ShopData, "SELECT count(*) FROM customers WHERE first_name || ' ' || last_name = ?", row[1]
    )
    return row if twins == 1 else None


class CustomerTemplate(SubjectTemplate):
    """A template about one customer whose full name no other has, drawn at random; :meth:`about`
    makes the instance from its row ``(id, full name, email, phone)``."""

    def subject(self, data: Data, rng: TaskRng) -> tuple | None:
        return unique_customer(data, rng)


def grid_search(page: PageView, menu: str, path: str, keyword: str, **choices: str) -> str | None:
    """Open the grid ``menu`` and search it for ``keyword`` with the comboboxes set to
    ``choices`` (label -> option; the others to their first option); ``None`` once the grid
    shows that search."""
    if page.path != path:
        return page.link(menu)
    box = need(page.find("textbox", KEYWORD), "box")
    wanted = []
    for combobox in page.nodes("combobox"):
        options = [page.page.nodes[i - 1] for i in page.page.options.get(combobox.id, ())]
        label = choices.get(combobox.name, options[0].name if options else "")
        option = next((o for o in options if o.name == label), None)
        if option is None:
            raise LookupError(f"{combobox.name!r} has no option {label!r}")
        wanted.append((combobox, option))
    query = page.query
    shown = query.get("q") == keyword and all(
        query.get(c.attrs.get("name", ""), o.attrs.get("value", "")) == o.attrs.get("value", "")
        for c, o in wanted
    )
    if shown:
        return None
    if page.value(box) != keyword:
        return page.type(box, keyword, enter=False)
    for combobox, option in wanted:
        step = page.choose(combobox, option.name)
        if step:
            return step
    return page.button("Search")


def row_with(page: PageView, column: int, text: str) -> list | None:
    """The first grid row whose cell ``column`` reads ``text``."""
    return next(
        (row for row in page.rows() if len(row) > column and row[column].name == text), None
    )


def open_row(page: PageView, column: int, text: str, action: str) -> str:
    row = row_with(page, column, text)
    if row is None:
        raise LookupError(f"no row with {text!r} on {page.url}")
    found = need(page.find("link", action, after=row[0]), "found")
    return page.click(found)


def _ids(data: Data, table: str, condition: str) -> frozenset[int]:
    """The ids of the rows of ``table`` meeting ``condition``."""
    sql = f"SELECT id FROM {table} WHERE {condition}"
    return frozenset(row[0] for row in data.all(ShopData, sql))


@bounded_cache(64)
def _initial_ids(seed: int, table: str, condition: str) -> frozenset[int]:
    """:func:`_ids` of the generated data of ``seed`` (which never changes)."""
    return _ids(Data.pristine(seed), table, condition)


# ---------------------------------------------------------------------------- information
@register
class CustomerEmail(CustomerTemplate):
    id = "admin/customer-email"
    slot = 25
    intent = "What is the email address of the customer {name}?"
    sites = ("admin",)
    column = 2

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        return self.make({"name": row[1]}, (self._evaluator(row),), start_url=f"{ADMIN}/")

    def _evaluator(self, row: tuple) -> StringMatch:
        return StringMatch(exact=row[2])

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = grid_search(page, "Customers", "/customers", params["name"])
        if step:
            return step
        row = need(row_with(page, 1, params["name"]), "row")
        return f"stop [{row[self.column].name}]"


@register
class CustomerPhone(CustomerEmail):
    id = "admin/customer-phone"
    slot = 26
    intent = "What is the phone number of the customer {name}?"
    column = 3

    def _evaluator(self, row: tuple) -> StringMatch:
        return StringMatch(must_include=(row[3],))


@register
class CustomerOrderCount(CustomerTemplate):
    id = "admin/customer-order-count"
    slot = 27
    intent = "How many orders has the customer {name} placed in total?"
    sites = ("admin",)

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        count = data.one(ShopData, "SELECT count(*) FROM orders WHERE customer_id = ?", row[0])
        return self.make({"name": row[1]}, (StringMatch(exact=str(count)),), start_url=f"{ADMIN}/")

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path.startswith("/customer/") and page.find("heading", params["name"]):
            heading = need(page.find("heading", prefix="Orders ("), "heading")
            return f"stop [{heading.name.removeprefix('Orders (').rstrip(')')}]"
        step = grid_search(page, "Customers", "/customers", params["name"])
        return step or open_row(page, 1, params["name"], "Edit")


@register
class ProductStock(TaskTemplate):
    id = "admin/product-stock"
    slot = 28
    intent = "How many units of the product with SKU {sku} are in stock?"
    sites = ("admin",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        sku, quantity = data.all(
            ShopData, "SELECT sku, quantity FROM products WHERE id = ?", rng.randint(1, 3000)
        )[0]
        return self.make({"sku": sku}, (StringMatch(exact=str(quantity)),), start_url=f"{ADMIN}/")

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = grid_search(page, "Products", "/catalog/products", params["sku"])
        if step:
            return step
        row = need(row_with(page, 2, params["sku"]), "row")
        return f"stop [{row[4].name}]"


def _bestsellers(data: Data, year: str) -> list[tuple]:
    """The year's best sellers, as the report ranks them."""
    return data.generated(
        ShopData,
        "SELECT i.name, sum(i.qty) AS sold FROM order_items i JOIN orders o ON o.id = "
        "i.order_id WHERE o.status != 'canceled' AND substr(o.created_at, 1, 4) = ? "
        "GROUP BY i.product_id ORDER BY sold DESC, i.name LIMIT 20",
        year,
    )


@register
class Bestseller(TaskTemplate):
    id = "admin/bestseller"
    slot = 29
    intent = "Which product was number {rank} in the bestsellers report of {year}?"
    sites = ("admin",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        year, rank = rng.choice(("2022", "2023")), rng.randint(1, 10)
        rows = _bestsellers(data, year)
        return self.make(
            {"rank": rank, "year": year},
            (StringMatch(fuzzy=rows[rank - 1][0]),),
            start_url=f"{ADMIN}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path != "/reports/bestsellers":
            return page.link("Bestsellers Report")
        year = need(page.find("combobox", "Year"), "year")
        if page.query.get("year", "2023") != params["year"]:
            return page.choose(year, params["year"]) or page.button("Show Report")
        row = need(row_with(page, 0, str(params["rank"])), "row")
        return f"stop [{row[1].name}]"


@register
class MonthlySales(TaskTemplate):
    id = "admin/monthly-sales"
    slot = 30
    intent = "According to the sales report, what were the store's {metric} in {month}?"
    sites = ("admin",)
    _METRICS: ClassVar[dict[str, str]] = {"orders": "number of orders", "total": "total sales"}

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        month = f"{rng.choice(('2022', '2023'))}-{rng.randint(1, 12):02d}"
        metric = rng.choice(sorted(self._METRICS))
        count, total = data.all(
            ShopData,
            "SELECT count(*), sum(total) FROM orders WHERE status != 'canceled' AND created_at "
            "LIKE ?",
            f"{month}%",
        )[0]
        evaluator = (
            StringMatch(exact=str(count))
            if metric == "orders"
            else StringMatch(must_include=(f"{total:.2f}",))
        )
        return self.make(
            {"metric": self._METRICS[metric], "month": month_name(month)},
            (evaluator,),
            start_url=f"{ADMIN}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        year = params["month"].split()[1]
        if page.path != "/reports/sales":
            return page.link("Sales Report")
        if page.query.get("year", "2023") != year:
            combobox = need(page.find("combobox", "Year"), "combobox")
            return page.choose(combobox, year) or page.button("Show Report")
        row = need(row_with(page, 0, month_key(params["month"])), "row")
        return f"stop [{row[1 if params['metric'] == 'number of orders' else 2].name}]"


# ---------------------------------------------------------------------------- navigation
@register
class FilteredOrders(TaskTemplate):
    id = "admin/nav-filtered-orders"
    slot = 31
    kind = "navigation"
    intent = "In the back office, list the {status} orders, sorted by {order}."
    sites = ("admin",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        status = rng.choice(ORDER_STATUSES)
        sort = rng.choice(sorted(ORDER_SORTS))
        return self.make(
            {"status": status, "order": ORDER_SORTS[sort][0].lower()},
            (UrlMatch(f"{ADMIN}/sales/orders?status={status.replace(' ', '+')}&sort={sort}"),),
            start_url=f"{ADMIN}/",
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        sort = next(label for label, _ in ORDER_SORTS.values() if label.lower() == params["order"])
        status = params["status"].title()
        step = grid_search(page, "Orders", "/sales/orders", "", Status=status, **{"Sort by": sort})
        return step or "stop []"


# ---------------------------------------------------------------------------- changes
@register
class SetPrice(TaskTemplate):
    id = "admin/set-price"
    slot = 32
    kind = "change"
    intent = "Change the price of the product with SKU {sku} to ${price}."
    sites = ("admin",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        product_id = rng.randint(1, ShopData.products)
        sku, old = data.all(ShopData, "SELECT sku, price FROM products WHERE id = ?", product_id)[0]
        price = f"{max(1.0, round(old * rng.choice((0.8, 0.9, 1.1, 1.25)), 0) - 0.01):.2f}"
        return self.make(
            {"sku": sku, "price": price},
            (ProgramCheck(),),
            start_url=f"{ADMIN}/",
            reference={"product_id": product_id},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        price = state.one(
            ShopData, "SELECT price FROM products WHERE id = ?", instance.reference["product_id"]
        )
        return f"{price:.2f}" == instance.params["price"]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        return _open_product_editor(page, params["sku"], 2) or (
            done_when(page, "You saved the product.")
            or page.fill({"Price": params["price"]})
            or page.button("Save")
        )


@register
class DisableProduct(ProductTemplate):
    id = "admin/disable-product"
    slot = 33
    kind = "change"
    intent = "Disable the product {product} so that it no longer shows in the store."
    sites = ("admin",)

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        return self.make(
            {"product": row[1]},
            (ProgramCheck(),),
            start_url=f"{ADMIN}/",
            reference={"product_id": row[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        return _ids(state, "products", "status = 'Disabled'") == _initial_ids(
            state.seed, "products", "status = 'Disabled'"
        ) | {instance.reference["product_id"]}

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = _open_product_editor(page, params["product"], 1)
        if step:
            return step
        status = need(page.find("combobox", "Enable Product"), "status")
        return (
            done_when(page, "You saved the product.")
            or page.choose(status, "Disabled")
            or page.button("Save")
        )


def _open_product_editor(page: PageView, keyword: str, column: int) -> str | None:
    """Find the product whose grid cell ``column`` reads ``keyword`` and open its edit page;
    ``None`` once there."""
    if page.path.startswith("/catalog/product/"):
        return None
    step = grid_search(page, "Products", "/catalog/products", keyword)
    return step or open_row(page, column, keyword, "Edit")


def _open_order(page: PageView, number: str) -> str | None:
    """Open the back-office page of order ``number``; ``None`` once there."""
    if page.find("heading", f"Order # {number}"):
        return None
    step = grid_search(page, "Orders", "/sales/orders", number)
    return step or open_row(page, 0, number, "View")


@register
class CancelOrder(TaskTemplate):
    id = "admin/cancel-order"
    slot = 34
    kind = "change"
    intent = "Cancel order {number}; the customer asked us to."
    sites = ("admin",)
    action: ClassVar[str] = "cancel"
    """The order button the task needs (a key of ``ORDER_ACTIONS``)."""

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        _, applies, _ = ORDER_ACTIONS[self.action]
        marks = ", ".join("?" * len(applies))
        rows = data.all(
            ShopData,
            f"SELECT id, number FROM orders WHERE status IN ({marks}) ORDER BY id",
            *applies,
        )
        order_id, number = rng.choice(rows)
        return self.make(
            {"number": number},
            (ProgramCheck(),),
            start_url=f"{ADMIN}/",
            reference={"order_id": order_id},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        status = f"status = '{ORDER_ACTIONS[self.action][2]}'"
        return _ids(state, "orders", status) == _initial_ids(state.seed, "orders", status) | {
            instance.reference["order_id"]
        }

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        label, _, status = ORDER_ACTIONS[self.action]
        step = _open_order(page, params["number"])
        return step or done_when(page, f"The order is now {status}.") or page.button(label)


@register
class HoldOrder(CancelOrder):
    id = "admin/hold-order"
    slot = 35
    intent = "Put order {number} on hold until the customer confirms the address."
    action = "hold"


@register
class ShipOrder(CancelOrder):
    id = "admin/ship-order"
    slot = 36
    intent = "Order {number} has left the warehouse: mark it as shipped."
    action = "ship"


@register
class OrderEmail(TaskTemplate):
    id = "admin/order-email"
    slot = 37
    intent = "What is the email address of the customer who placed order {number}?"
    sites = ("admin",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        number, email = data.all(
            ShopData,
            "SELECT o.number, c.email FROM orders o JOIN customers c ON c.id = o.customer_id "
            "WHERE o.id = ?",
            rng.randint(1, ShopData.orders),
        )[0]
        return self.make({"number": number}, (StringMatch(exact=email),), start_url=f"{ADMIN}/")

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        return _open_order(page, params["number"]) or f"stop [{page.text('Email: ')}]"


@register
class FindCustomers(TaskTemplate):
    id = "admin/nav-find-customers"
    slot = 38
    kind = "navigation"
    intent = "In the back office, list the customers whose name or email contains '{text}'."
    sites = ("admin",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        text = data.one(
            ShopData, "SELECT last_name FROM customers WHERE id = ?", rng.randint(2, 500)
        )
        return self.make(
            {"text": text}, (UrlMatch(f"{ADMIN}/customers?q={text}"),), start_url=f"{ADMIN}/"
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        return grid_search(page, "Customers", "/customers", params["text"]) or "stop []"


@register
class CommentOrder(TaskTemplate):
    id = "admin/comment-order"
    slot = 39
    kind = "change"
    intent = "Add the comment '{comment}' to order {number}."
    sites = ("admin",)
    _COMMENTS = (
        "Customer called to confirm the delivery address.",
        "Gift wrap requested.",
        "Refund issued for the damaged item.",
        "Delivery delayed by the carrier.",
        "Customer asked for an invoice copy.",
    )

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        order_id = rng.randint(1, ShopData.orders)
        number = data.one(ShopData, "SELECT number FROM orders WHERE id = ?", order_id)
        return self.make(
            {"comment": rng.choice(self._COMMENTS), "number": number},
            (ProgramCheck(),),
            start_url=f"{ADMIN}/",
            reference={"order_id": order_id},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        rows = state.all(ShopData, "SELECT order_id, body FROM order_comments")
        return rows == [(instance.reference["order_id"], instance.params["comment"])]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        step = _open_order(page, params["number"])
        if step:
            return step
        return (
            done_when(page, "You added a comment to the order.")
            or page.fill({"Comment": params["comment"]})
            or page.button("Submit Comment")
        )


@register
class UpdateCustomerPhone(CustomerTemplate):
    id = "admin/update-customer-phone"
    slot = 40
    kind = "change"
    intent = "Update the phone number of the customer {name} to {phone}."
    sites = ("admin",)

    def about(self, data: Data, rng: TaskRng, row: tuple) -> Instance | None:
        phone = f"({rng.randint(201, 989)}) 555-{rng.randint(1000, 9999)}"
        return self.make(
            {"name": row[1], "phone": phone},
            (ProgramCheck(),),
            start_url=f"{ADMIN}/",
            reference={"customer_id": row[0]},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        phone = state.one(
            ShopData, "SELECT phone FROM customers WHERE id = ?", instance.reference["customer_id"]
        )
        return phone == instance.params["phone"]

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path.startswith("/customer/"):
            return (
                done_when(page, "You saved the customer.")
                or page.fill({"Phone Number": params["phone"]})
                or page.button("Save Customer")
            )
        step = grid_search(page, "Customers", "/customers", params["name"])
        return step or open_row(page, 1, params["name"], "Edit")


@register
class ApproveReview(TaskTemplate):
    id = "admin/approve-review"
    slot = 41
    kind = "change"
    intent = "Approve the pending review '{title}' that {nickname} wrote about {product}."
    sites = ("admin",)

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        rows = data.all(
            ShopData,
            "SELECT r.id, r.title, r.nickname, p.name FROM reviews r JOIN products p ON p.id = "
            "r.product_id WHERE r.status = 'Pending' ORDER BY r.id",
        )
        review_id, title, nickname, product = rng.choice(rows)
        twins = sum(1 for r in rows if r[2] == nickname and r[1] == title)
        if twins > 1:
            return None
        return self.make(
            {"title": title, "nickname": nickname, "product": product},
            (ProgramCheck(),),
            start_url=f"{ADMIN}/",
            reference={"review_id": review_id},
        )

    def check(self, state: Data, instance: Instance) -> bool:
        approved = _ids(state, "reviews", "status = 'Approved'")
        before = _initial_ids(state.seed, "reviews", "status = 'Approved'")
        return approved == before | {instance.reference["review_id"]} and len(approved) > len(
            before
        )

    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        if page.path.startswith("/review/"):
            if page.find("StaticText", "You saved the review."):
                return "stop []"
            status = need(page.find("combobox", "Status"), "status")
            return page.choose(status, "Approved") or page.button("Save Review")
        step = grid_search(page, "Reviews", "/reviews", params["nickname"], Status="Pending")
        if step:
            return step
        for row in page.rows():
            names = [cell.name for cell in row]
            if names[3] == params["title"] and names[5] == params["product"]:
                found = need(page.find("link", "Edit", after=row[0]), "found")
                return page.click(found)
        raise LookupError("the review is not listed")
