"""The online store (WebArena's "One Stop Market"): catalogue, search, cart, checkout, account.

Pages: home (departments, featured products), search and category listings (sort, price
filter, pagination, 12 per page), product pages (details, reviews, review form, add to cart or
wish list), cart, checkout, order confirmation, and the customer's account (orders and their
details, address book, account information, wish list). Sign in at ``/login``.
"""

from __future__ import annotations

import math
import re
from functools import cached_property
from typing import Any, ClassVar

from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.shop_data import SHIPPING_METHODS, TODAY, ShopData
from llmgym.envs.webarena.web import (
    Request,
    Response,
    Site,
    button,
    esc,
    flash_box,
    form,
    h,
    hidden,
    link,
    pager,
    route,
    search_form,
    select,
    table,
    textarea,
    textbox,
)
from llmgym.errors import HttpError

__all__ = ["SORTS", "Shop", "money"]

PER_PAGE = 12
ORDERS_PER_PAGE = 10
SORTS = {
    "relevance": ("Relevance", ""),
    "price_asc": ("Price: Low to High", "p.price ASC, p.id"),
    "price_desc": ("Price: High to Low", "p.price DESC, p.id"),
    "name": ("Product Name", "p.name COLLATE NOCASE, p.id"),
    "rating": ("Top Rated", "rating DESC, p.id"),
}
"""Listing sort orders: key -> (label shown, SQL order)."""
_SEARCH_WORD = re.compile(r"[A-Za-z0-9]+")
_RATING = "(SELECT avg(rating) FROM reviews r WHERE r.product_id = p.id AND r.status = 'Approved')"


def money(amount: float) -> str:
    """``$1,234.50``."""
    return f"${amount:,.2f}"


def fts_query(text: str) -> str:
    """An FTS5 query matching every word of ``text`` (quoted: user text is never syntax)."""
    return " ".join(f'"{word}"' for word in _SEARCH_WORD.findall(text)[:12])


class Shop(Site):
    """The storefront at ``localhost:7770`` (see the module docstring)."""

    name = "shop"
    title = "One Stop Market"
    port = 7770
    dataset: ClassVar[type[Dataset]] = ShopData
    stylesheet = "header form{display:inline;margin-left:20px}"

    # ------------------------------------------------------------------ layout
    def layout(self, request: Request | None, title: str, body: str) -> str:
        user = request.user_id if request else None
        account = (
            link("/account", "My Account")
            + link("/wishlist", "My Wish List")
            + link("/cart", f"My Cart ({self._cart_count(user)})")
            + link("/logout", "Sign Out")
            if user
            else link("/login", "Sign In")
        )
        search = search_form(request, "q", "Search entire store here...")
        flash = flash_box(request)
        header = h("header", link("/", self.title) + account + search)
        footer = h("footer", esc(f"© {TODAY[:4]} One Stop Market. All rights reserved."))
        return self.document(
            f"{title}", header + self._departments + h("main", flash + body) + footer
        )

    @cached_property
    def _departments(self) -> str:
        """The departments menu (no page changes the categories, so it is drawn once)."""
        departments = self.db.execute(
            "SELECT id, name FROM categories WHERE parent_id IS NULL ORDER BY name"
        ).fetchall()
        return h(
            "nav",
            "".join(link(f"/category/{i}", name) for i, name in departments),
            aria_label="Departments",
        )

    def _cart_count(self, user: int | None) -> int:
        row = self.db.execute(
            "SELECT coalesce(sum(qty), 0) FROM cart_items WHERE customer_id = ?", (user,)
        ).fetchone()
        return int(row[0])

    def _customer(self, request: Request) -> dict[str, Any]:
        if request.user_id is None:
            raise HttpError(401, "Please sign in to continue.")
        return self.row("SELECT * FROM customers WHERE id = ?", request.user_id)

    def _need_login(self, request: Request) -> Response | None:
        return None if request.user_id else Response.redirect("/login")

    # ------------------------------------------------------------------ home and listings
    @route("/")
    def home(self, request: Request) -> Response:
        featured = self.db.execute(
            f"SELECT p.id, p.name, p.price, {_RATING} AS rating, "
            "(SELECT count(*) FROM reviews r WHERE r.product_id = p.id AND r.status = 'Approved') "
            "FROM products p WHERE p.status = 'Enabled' AND p.quantity > 0 "
            "ORDER BY p.created_at DESC, p.id DESC LIMIT 8"
        ).fetchall()
        body = h("h1", "Welcome to One Stop Market") + h("h2", "New Arrivals")
        body += self._cards(featured)
        return self.page(request, self.title, body)

    def _cards(self, rows: list[tuple]) -> str:
        cards = []
        for product_id, name, price, rating, reviews in rows:
            stars = (
                f"Rating: {rating:.1f} of 5 ({reviews} reviews)" if reviews else "No reviews yet"
            )
            cards.append(
                h(
                    "li",
                    link(f"/product/{product_id}", name)
                    + h("div", esc(money(price)))
                    + h("div", esc(stars))
                    + form(
                        "/cart/add",
                        hidden("product_id", product_id) + hidden("qty", 1) + button("Add to Cart"),
                        method="post",
                    ),
                    class_="product",
                )
            )
        return h("ul", "".join(cards), aria_label="Products")

    def _listing(
        self, request: Request, title: str, where: str, params: tuple, path: str, searching: bool
    ) -> Response:
        sort = request.arg("sort", "relevance" if searching else "name")
        if sort not in SORTS or (sort == "relevance" and not searching):
            sort = "name"
        conditions, values = [where, "p.status = 'Enabled'"], list(params)
        low, high = _price(request.arg("min_price")), _price(request.arg("max_price"))
        if low is not None:
            conditions.append("p.price >= ?")
            values.append(low)
        if high is not None:
            conditions.append("p.price <= ?")
            values.append(high)
        joined = " AND ".join(conditions)
        source = "products p JOIN product_search s ON s.rowid = p.id" if searching else "products p"
        total = self.db.execute(f"SELECT count(*) FROM {source} WHERE {joined}", values).fetchone()[
            0
        ]
        pages = max(1, math.ceil(total / PER_PAGE))
        page = min(request.int_arg("page", 1), pages)
        order = SORTS[sort][1] or "s.rank, p.id"
        rows = self.db.execute(
            f"SELECT p.id, p.name, p.price, coalesce({_RATING}, 0) AS rating, "
            "(SELECT count(*) FROM reviews r WHERE r.product_id = p.id AND r.status = 'Approved') "
            f"FROM {source} WHERE {joined} ORDER BY {order} LIMIT ? OFFSET ?",
            [*values, PER_PAGE, (page - 1) * PER_PAGE],
        ).fetchall()
        kept = {
            k: v for k, v in request.query.items() if k in ("q", "sort", "min_price", "max_price")
        }
        sorts = [
            (key, label) for key, (label, _) in SORTS.items() if searching or key != "relevance"
        ]
        controls = form(
            path,
            (hidden("q", request.arg("q")) if searching else "")
            + select("sort", "Sort By", sorts, sort)
            + textbox("min_price", "Minimum price", request.arg("min_price"))
            + textbox("max_price", "Maximum price", request.arg("max_price"))
            + button("Apply"),
        )
        body = h("h1", esc(title)) + controls + h("p", esc(f"{total} items"))
        if not rows:
            body += h("p", "Your search returned no results.")
        body += self._cards(rows) + pager(path, kept, page, pages)
        return self.page(request, title, body)

    @route("/search")
    def search(self, request: Request) -> Response:
        query = fts_query(request.arg("q"))
        if not query:
            body = h("h1", "Search results") + h("p", "Enter a search term.")
            return self.page(request, "Search", body)
        title = f"Search results for: '{request.arg('q')}'"
        return self._listing(request, title, "product_search MATCH ?", (query,), "/search", True)

    @route("/category/<int:category_id>")
    def category(self, request: Request, category_id: int) -> Response:
        category = self.row("SELECT id, name, parent_id FROM categories WHERE id = ?", category_id)
        children = self.db.execute(
            "SELECT c.id, c.name, (SELECT count(*) FROM products p WHERE p.category_id = c.id "
            "AND p.status = 'Enabled') FROM categories c WHERE c.parent_id = ? ORDER BY c.name",
            (category_id,),
        ).fetchall()
        ids = [category_id] + [child[0] for child in children]
        where = f"p.category_id IN ({','.join('?' * len(ids))})"
        response = self._listing(
            request, category["name"], where, tuple(ids), f"/category/{category_id}", False
        )
        if children:
            shop_by = h(
                "nav",
                "".join(link(f"/category/{i}", f"{name} ({n})") for i, name, n in children),
                aria_label="Shop By Category",
            )
            response.body = response.body.replace("<main>", f"<main>{shop_by}", 1)
        return response

    # ------------------------------------------------------------------ product
    @route("/product/<int:product_id>")
    def product(self, request: Request, product_id: int) -> Response:
        product = self.row(
            "SELECT p.*, c.name AS category, c.id AS category_id FROM products p "
            "JOIN categories c ON c.id = p.category_id WHERE p.id = ? AND p.status = 'Enabled'",
            product_id,
        )
        reviews = self.db.execute(
            "SELECT nickname, rating, title, body, created_at FROM reviews WHERE product_id = ? "
            "AND status = 'Approved' ORDER BY created_at DESC, id",
            (product_id,),
        ).fetchall()
        rating = (
            f"Rating: {sum(r[1] for r in reviews) / len(reviews):.1f} of 5 ({len(reviews)} reviews)"
            if reviews
            else "No reviews yet"
        )
        stock = "In stock" if product["quantity"] > 0 else "Out of stock"
        body = h("h1", esc(product["name"]))
        body += h("p", esc(f"SKU: {product['sku']}"))
        body += h("p", esc(f"Brand: {product['brand']}"))
        body += h("p", esc(money(product["price"])), class_="price")
        body += h("p", esc(stock)) + h("p", esc(rating))
        body += h(
            "p", "Category: " + link(f"/category/{product['category_id']}", product["category"])
        )
        if product["quantity"] > 0:
            body += form(
                "/cart/add",
                hidden("product_id", product_id) + textbox("qty", "Qty", 1) + button("Add to Cart"),
                method="post",
            )
        body += form(
            "/wishlist/add", hidden("product_id", product_id) + button("Add to Wish List"), "post"
        )
        body += h("h2", "Details") + h("p", esc(product["description"]))
        body += h("h2", f"Customer Reviews ({len(reviews)})")
        body += h(
            "ul",
            "".join(
                h(
                    "li",
                    h("strong", esc(title))
                    + h("p", esc(f"Rating: {stars} of 5, by {nickname} on {date}"))
                    + h("p", esc(text)),
                )
                for nickname, stars, title, text, date in reviews
            ),
            aria_label="Reviews",
        )
        stars_choice = [("", "Choose a rating")] + [(str(i), f"{i} stars") for i in range(1, 6)]
        body += h("h2", "Write Your Own Review") + form(
            f"/product/{product_id}/review",
            textbox("nickname", "Nickname")
            + textbox("title", "Summary")
            + textarea("body", "Review")
            + select("rating", "Rating", stars_choice)
            + button("Submit Review"),
            method="post",
        )
        return self.page(request, product["name"], body)

    @route("/product/<int:product_id>/review", methods=("POST",))
    def post_review(self, request: Request, product_id: int) -> Response:
        self.row("SELECT id FROM products WHERE id = ?", product_id)
        nickname, title, text = (
            request.field("nickname"),
            request.field("title"),
            request.field("body"),
        )
        rating = request.field("rating")
        if not (nickname and title and text and rating in {"1", "2", "3", "4", "5"}):
            self.flash(request, "Please fill in every field of the review, and choose a rating.")
            return Response.redirect(f"/product/{product_id}")
        self.db.execute(
            "INSERT INTO reviews (product_id, customer_id, nickname, rating, title, body, "
            "created_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, 'Pending')",
            (
                product_id,
                request.user_id,
                nickname[:100],
                int(rating),
                title[:200],
                text[:4000],
                TODAY,
            ),
        )
        self.flash(request, "You submitted your review for moderation.")
        return Response.redirect(f"/product/{product_id}")

    # ------------------------------------------------------------------ cart and checkout
    @route("/cart")
    def cart(self, request: Request) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        items = self._cart_items(request.user_id)
        body = h("h1", "Shopping Cart")
        if not items:
            body += h("p", "You have no items in your shopping cart.")
            return self.page(request, "Shopping Cart", body)
        rows = [
            [
                link(f"/product/{pid}", name),
                esc(money(price)),
                textbox(f"qty_{pid}", f"Qty of {name}", qty),
                esc(money(price * qty)),
                button("Remove item", name="remove", value=str(pid)),
            ]
            for pid, name, price, qty in items
        ]
        total = sum(price * qty for _, _, price, qty in items)
        body += form(
            "/cart/update",
            button("Update Shopping Cart")
            + table(("Item", "Price", "Qty", "Subtotal", "Action"), rows),
            "post",
        )
        body += h("p", esc(f"Order Total: {money(total)}"))
        body += link("/checkout", "Proceed to Checkout")
        return self.page(request, "Shopping Cart", body)

    def _cart_items(self, user: int | None) -> list[tuple[int, str, float, int]]:
        return self.db.execute(
            "SELECT p.id, p.name, p.price, c.qty FROM cart_items c JOIN products p "
            "ON p.id = c.product_id WHERE c.customer_id = ? ORDER BY p.name",
            (user,),
        ).fetchall()

    @route("/cart/add", methods=("POST",))
    def cart_add(self, request: Request) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        product = self.row(
            "SELECT id, name, quantity FROM products WHERE id = ? AND status = 'Enabled'",
            _whole(request.field("product_id")) or 0,
        )
        qty = _whole(request.field("qty") or "1")
        if qty is None or not 1 <= qty <= 99:
            self.flash(request, "The quantity must be a whole number from 1 to 99.")
        elif product["quantity"] <= 0:
            self.flash(request, f"{product['name']} is out of stock.")
        else:
            self.db.execute(
                "INSERT INTO cart_items VALUES (?, ?, ?) ON CONFLICT (customer_id, product_id) "
                "DO UPDATE SET qty = min(99, qty + excluded.qty)",
                (request.user_id, product["id"], qty),
            )
            self.flash(request, f"You added {product['name']} to your shopping cart.")
        return Response.redirect(f"/product/{product['id']}")

    @route("/cart/update", methods=("POST",))
    def cart_update(self, request: Request) -> Response:
        removed = _whole(request.field("remove"))
        for pid, _, _, _ in self._cart_items(request.user_id):
            qty = 0 if pid == removed else _whole(request.field(f"qty_{pid}"))
            if qty == 0:
                self.db.execute(
                    "DELETE FROM cart_items WHERE customer_id = ? AND product_id = ?",
                    (request.user_id, pid),
                )
            elif qty is not None and qty <= 99:
                self.db.execute(
                    "UPDATE cart_items SET qty = ? WHERE customer_id = ? AND product_id = ?",
                    (qty, request.user_id, pid),
                )
        return Response.redirect("/cart")

    @route("/checkout", methods=("GET", "POST"))
    def checkout(self, request: Request) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        customer = self._customer(request)
        items = self._cart_items(request.user_id)
        if not items:
            return Response.redirect("/cart")
        if request.method == "POST":
            placed = self._place_order(request, customer, items)
            if placed:
                return Response.redirect(f"/checkout/success/{placed}")
        subtotal = sum(price * qty for _, _, price, qty in items)
        rows = [[esc(name), esc(qty), esc(money(price * qty))] for _, name, price, qty in items]
        methods = "".join(
            h(
                "label",
                f'<input type="radio" name="shipping_method" value="{key}" aria-label="{label} '
                f'{money(fee)}"{" checked" if key == "flatrate" else ""}>{esc(label)} '
                f"{esc(money(fee))}",
            )
            for key, label, fee in SHIPPING_METHODS
        )
        address = (
            textbox("ship_name", "Full Name", f"{customer['first_name']} {customer['last_name']}")
            + textbox("ship_street", "Street Address", customer["street"])
            + textbox("ship_city", "City", customer["city"])
            + textbox("ship_state", "State", customer["state"])
            + textbox("ship_zip", "Zip/Postal Code", customer["zip"])
        )
        body = (
            h("h1", "Checkout")
            + h("h2", "Order Summary")
            + table(("Item", "Qty", "Subtotal"), rows)
            + h("p", esc(f"Cart Subtotal: {money(subtotal)}"))
            + form(
                "/checkout",
                h("h2", "Shipping Address")
                + address
                + h("h2", "Shipping Methods")
                + methods
                + button("Place Order"),
                "post",
            )
        )
        return self.page(request, "Checkout", body)

    def _place_order(self, request: Request, customer: dict, items: list) -> str | None:
        fields = ("ship_name", "ship_street", "ship_city", "ship_state", "ship_zip")
        address = [request.field(name)[:200] for name in fields]
        method = next(
            (m for m in SHIPPING_METHODS if m[0] == request.field("shipping_method")), None
        )
        if not all(address) or method is None:
            self.flash(request, "Please fill in the shipping address and choose a shipping method.")
            return None
        subtotal = round(sum(price * qty for _, _, price, qty in items), 2)
        number_id = self.db.execute("SELECT coalesce(max(id), 0) + 1 FROM orders").fetchone()[0]
        number = f"{number_id:09d}"
        self.db.execute(
            "INSERT INTO orders VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                number_id,
                number,
                customer["id"],
                f"{TODAY} 12:00",
                "pending",
                subtotal,
                method[2],
                round(subtotal + method[2], 2),
                method[0],
                *address,
            ),
        )
        self.db.executemany(
            "INSERT INTO order_items (order_id, product_id, name, sku, price, qty) "
            "SELECT ?, id, name, sku, price, ? FROM products WHERE id = ?",
            [(number_id, qty, pid) for pid, _, _, qty in items],
        )
        self.db.execute("DELETE FROM cart_items WHERE customer_id = ?", (customer["id"],))
        return number

    @route("/checkout/success/<number>")
    def checkout_success(self, request: Request, number: str) -> Response:
        body = h("h1", "Thank you for your purchase!") + h(
            "p", "Your order number is: " + link(f"/account/orders/{esc(number)}", number)
        )
        return self.page(request, "Success Page", body)

    # ------------------------------------------------------------------ wish list
    @route("/wishlist")
    def wishlist(self, request: Request) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        rows = self.db.execute(
            "SELECT p.id, p.name, p.price FROM wishlist_items w JOIN products p ON p.id = "
            "w.product_id WHERE w.customer_id = ? ORDER BY w.added_at, p.id",
            (request.user_id,),
        ).fetchall()
        body = h("h1", "My Wish List")
        if not rows:
            body += h("p", "You have no items in your wish list.")
        body += table(
            ("Product", "Price", "Action"),
            [
                [
                    link(f"/product/{pid}", name),
                    esc(money(price)),
                    form("/wishlist/remove", hidden("product_id", pid) + button("Remove"), "post"),
                ]
                for pid, name, price in rows
            ],
        )
        return self.page(request, "My Wish List", body)

    @route("/wishlist/add", methods=("POST",))
    def wishlist_add(self, request: Request) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        product = self.row(
            "SELECT id, name FROM products WHERE id = ?", _whole(request.field("product_id")) or 0
        )
        self.db.execute(
            "INSERT OR IGNORE INTO wishlist_items VALUES (?, ?, ?)",
            (request.user_id, product["id"], TODAY),
        )
        self.flash(request, f"{product['name']} has been added to your Wish List.")
        return Response.redirect("/wishlist")

    @route("/wishlist/remove", methods=("POST",))
    def wishlist_remove(self, request: Request) -> Response:
        self.db.execute(
            "DELETE FROM wishlist_items WHERE customer_id = ? AND product_id = ?",
            (request.user_id, _whole(request.field("product_id"))),
        )
        return Response.redirect("/wishlist")

    # ------------------------------------------------------------------ account
    @route("/account")
    def account(self, request: Request) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        c = self._customer(request)
        body = h("h1", "My Account") + h("h2", "Contact Information")
        body += h("p", esc(f"{c['first_name']} {c['last_name']}")) + h("p", esc(c["email"]))
        body += link("/account/edit", "Edit Account Information")
        body += h("h2", "Default Shipping Address")
        body += h("p", esc(f"{c['street']}, {c['city']}, {c['state']} {c['zip']}"))
        body += h("p", esc(f"T: {c['phone']}")) + link("/account/address", "Edit Address")
        body += h(
            "nav",
            link("/account/orders", "My Orders") + link("/wishlist", "My Wish List"),
            aria_label="Account",
        )
        return self.page(request, "My Account", body)

    @route("/account/orders")
    def orders(self, request: Request) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        total = self.db.execute(
            "SELECT count(*) FROM orders WHERE customer_id = ?", (request.user_id,)
        ).fetchone()[0]
        pages = max(1, math.ceil(total / ORDERS_PER_PAGE))
        page = min(request.int_arg("page", 1), pages)
        rows = self.db.execute(
            "SELECT number, created_at, ship_name, total, status FROM orders WHERE customer_id = ? "
            "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            (request.user_id, ORDERS_PER_PAGE, (page - 1) * ORDERS_PER_PAGE),
        ).fetchall()
        body = h("h1", "My Orders") + h("p", esc(f"{total} orders"))
        body += table(
            ("Order #", "Date", "Ship To", "Order Total", "Status", "Action"),
            [
                [
                    esc(number),
                    esc(created[:10]),
                    esc(name),
                    esc(money(amount)),
                    esc(status.title()),
                    link(f"/account/orders/{number}", "View Order"),
                ]
                for number, created, name, amount, status in rows
            ],
        )
        body += pager("/account/orders", {}, page, pages)
        return self.page(request, "My Orders", body)

    @route("/account/orders/<number>")
    def order(self, request: Request, number: str) -> Response:
        if (redirect := self._need_login(request)) is not None:
            return redirect
        order = self.row(
            "SELECT * FROM orders WHERE number = ? AND customer_id = ?", number, request.user_id
        )
        items = self.db.execute(
            "SELECT product_id, name, sku, price, qty FROM order_items WHERE order_id = ? "
            "ORDER BY id",
            (order["id"],),
        ).fetchall()
        method = next(
            label for key, label, _ in SHIPPING_METHODS if key == order["shipping_method"]
        )
        body = h("h1", esc(f"Order # {number}"))
        body += h("p", esc(f"Status: {order['status'].title()}"))
        body += h("p", esc(f"Order Date: {order['created_at'][:10]}"))
        body += h("h2", "Items Ordered") + table(
            ("Product Name", "SKU", "Price", "Qty", "Subtotal"),
            [
                [
                    link(f"/product/{pid}", name),
                    esc(sku),
                    esc(money(price)),
                    esc(qty),
                    esc(money(price * qty)),
                ]
                for pid, name, sku, price, qty in items
            ],
        )
        body += h("p", esc(f"Subtotal: {money(order['subtotal'])}"))
        body += h("p", esc(f"Shipping & Handling: {money(order['shipping'])}"))
        body += h("p", esc(f"Grand Total: {money(order['total'])}"))
        body += h("h2", "Shipping Address") + h(
            "p",
            esc(
                f"{order['ship_name']}, {order['ship_street']}, {order['ship_city']}, "
                f"{order['ship_state']} {order['ship_zip']}"
            ),
        )
        body += h("p", esc(f"Shipping Method: {method}"))
        body += link("/account/orders", "Back to My Orders")
        return self.page(request, f"Order # {number}", body)

    def _customer_form(
        self,
        request: Request,
        *,
        title: str,
        fields: tuple[tuple[str, str], ...],
        submit: str,
        saved: str,
        refused: str,
    ) -> Response:
        """A form editing the signed-in customer's ``fields`` (column, label); every field is
        required and the email, if edited, must be free."""
        if (redirect := self._need_login(request)) is not None:
            return redirect
        if request.method == "GET":
            customer = self._customer(request)
            inner = "".join(textbox(name, label, customer[name]) for name, label in fields)
            body = h("h1", esc(title)) + form(request.path, inner + button(submit), "post")
            return self.page(request, title, body)
        values = {name: request.field(name)[:200] for name, _ in fields}
        email = values.get("email")
        taken = email is not None and (
            "@" not in email
            or self.db.execute(
                "SELECT id FROM customers WHERE email = ? AND id != ?", (email, request.user_id)
            ).fetchone()
            is not None
        )
        if not all(values.values()) or taken:
            self.flash(request, refused)
            return Response.redirect(request.path)
        assignments = ", ".join(f"{name} = :{name}" for name in values)
        self.db.execute(
            f"UPDATE customers SET {assignments} WHERE id = :id", {**values, "id": request.user_id}
        )
        self.flash(request, saved)
        return Response.redirect("/account")

    @route("/account/address", methods=("GET", "POST"))
    def address(self, request: Request) -> Response:
        return self._customer_form(
            request,
            title="Edit Address",
            fields=(
                ("street", "Street Address"),
                ("city", "City"),
                ("state", "State"),
                ("zip", "Zip/Postal Code"),
                ("phone", "Phone Number"),
            ),
            submit="Save Address",
            saved="You saved the address.",
            refused="Please fill in every field of the address.",
        )

    @route("/account/edit", methods=("GET", "POST"))
    def account_edit(self, request: Request) -> Response:
        return self._customer_form(
            request,
            title="Edit Account Information",
            fields=(("first_name", "First Name"), ("last_name", "Last Name"), ("email", "Email")),
            submit="Save",
            saved="You saved the account information.",
            refused="Please enter a name and an email address no one else uses.",
        )

    # ------------------------------------------------------------------ sign in
    @route("/login", methods=("GET", "POST"))
    def login(self, request: Request) -> Response:
        return self.sign_in(
            request,
            heading="Customer Login",
            field="email",
            label="Email",
            lookup="SELECT id, password_hash FROM customers WHERE email = ?",
            landing="/account",
        )

    @route("/logout")
    def logout(self, request: Request) -> Response:
        self.log_out(request)
        return Response.redirect("/")


def _price(text: str) -> float | None:
    try:
        value = float(text.replace("$", "").replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _whole(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() and len(text) < 10 else None
