"""The store's back office (WebArena's Magento admin): orders, catalogue, customers, reviews,
reports. It serves the store's own database, so a price changed here shows in the store.

Grids (orders, products, customers, reviews) have a keyword search, a status filter, a sort
order and pages of 20; each row links to an edit page whose form saves to the database.
Orders can be invoiced, shipped, held, released or cancelled and take comments. Reports: best
sellers by year and sales by month. Every page needs a signed-in admin (``/login``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.shop import fts_query, money
from llmgym.envs.webarena.shop_data import ORDER_STATUSES, TODAY, ShopData
from llmgym.envs.webarena.web import (
    Request,
    Response,
    Site,
    button,
    esc,
    flash_box,
    form,
    h,
    link,
    pager,
    route,
    select,
    table,
    textarea,
    textbox,
)
from llmgym.errors import HttpError

__all__ = ["ShopAdmin"]

PER_PAGE = 20
GROUPS = ("General", "Wholesale", "Retailer")
ORDER_ACTIONS = {
    "invoice": ("Invoice", ("pending",), "processing"),
    "ship": ("Ship", ("processing",), "complete"),
    "hold": ("Hold", ("pending", "processing"), "on hold"),
    "unhold": ("Unhold", ("on hold",), "processing"),
    "cancel": ("Cancel", ("pending", "processing", "on hold"), "canceled"),
}
"""Order buttons: key -> (label, statuses it applies to, status it sets)."""
PRODUCT_SORTS = {
    "id": ("ID", "id"),
    "name": ("Name", "name COLLATE NOCASE, id"),
    "price_asc": ("Price: Low to High", "price, id"),
    "price_desc": ("Price: High to Low", "price DESC, id"),
    "qty_asc": ("Quantity: Low to High", "quantity, id"),
    "qty_desc": ("Quantity: High to Low", "quantity DESC, id"),
}
ORDER_SORTS = {
    "newest": ("Purchase Date: Newest", "o.created_at DESC, o.id DESC"),
    "oldest": ("Purchase Date: Oldest", "o.created_at, o.id"),
    "total_desc": ("Grand Total: High to Low", "o.total DESC, o.id"),
    "total_asc": ("Grand Total: Low to High", "o.total, o.id"),
}
YEARS = ("2022", "2023")
_MENU = h(
    "nav",
    link("/", "Dashboard")
    + link("/sales/orders", "Orders")
    + link("/catalog/products", "Products")
    + link("/customers", "Customers")
    + link("/reviews", "Reviews")
    + link("/reports/bestsellers", "Bestsellers Report")
    + link("/reports/sales", "Sales Report")
    + link("/logout", "Sign Out"),
    aria_label="Admin Menu",
)


class ShopAdmin(Site):
    """The back office at ``localhost:7780`` (see the module docstring)."""

    name = "admin"
    title = "Magento Admin"
    port = 7780
    dataset: ClassVar[type[Dataset]] = ShopData
    login_required = True
    stylesheet = "nav{background:#eee}"

    def layout(self, request: Request | None, title: str, body: str) -> str:
        signed_in = request is not None and request.user_id is not None
        menu = _MENU if signed_in else ""
        flash = flash_box(request)
        header = h("header", link("/", self.title))
        return self.document(f"{title} / {self.title}", header + menu + h("main", flash + body))

    def _grid(
        self,
        request: Request,
        *,
        path: str,
        title: str,
        source: str,
        conditions: list[str],
        values: list[Any],
        order: str,
        columns: str,
        headers: tuple[str, ...],
        cells: Any,
        filters: str,
    ) -> Response:
        where = " AND ".join(conditions) or "1"
        total = self.db.execute(f"SELECT count(*) FROM {source} WHERE {where}", values).fetchone()[
            0
        ]
        pages = max(1, math.ceil(total / PER_PAGE))
        page = min(request.int_arg("page", 1), pages)
        rows = self.db.execute(
            f"SELECT {columns} FROM {source} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
            [*values, PER_PAGE, (page - 1) * PER_PAGE],
        ).fetchall()
        kept = {k: v for k, v in request.query.items() if k != "page"}
        body = h("h1", esc(title)) + form(path, filters + button("Search"))
        body += h("p", esc(f"{total} records found"))
        body += table(headers, [cells(row) for row in rows]) + pager(path, kept, page, pages)
        return self.page(request, title, body)

    # ------------------------------------------------------------------ dashboard
    @route("/")
    def dashboard(self, request: Request) -> Response:
        lifetime, count = self.db.execute(
            "SELECT coalesce(sum(total), 0), count(*) FROM orders WHERE status != 'canceled'"
        ).fetchone()
        last = self.db.execute(
            "SELECT o.id, o.number, c.first_name || ' ' || c.last_name, o.total FROM orders o "
            "JOIN customers c ON c.id = o.customer_id ORDER BY o.created_at DESC, o.id DESC LIMIT 5"
        ).fetchall()
        body = h("h1", "Dashboard")
        body += h("p", esc(f"Lifetime Sales: {money(lifetime)}"))
        body += h("p", esc(f"Average Order: {money(lifetime / max(count, 1))}"))
        body += h("h2", "Last Orders") + table(
            ("Order", "Customer", "Total"),
            [
                [link(f"/sales/order/{i}", number), esc(name), esc(money(total))]
                for i, number, name, total in last
            ],
        )
        return self.page(request, "Dashboard", body)

    # ------------------------------------------------------------------ orders
    @route("/sales/orders")
    def orders(self, request: Request) -> Response:
        keyword, status = request.search_arg("q"), request.arg("status")
        sort = request.arg("sort", "newest")
        sort = sort if sort in ORDER_SORTS else "newest"
        conditions, values = [], []
        if keyword.isdigit():
            conditions.append("o.number LIKE ?")
            values.append(f"%{keyword}%")
        elif keyword:
            conditions.append("((c.first_name || ' ' || c.last_name) LIKE ? OR c.email LIKE ?)")
            values += [f"%{keyword}%"] * 2
        if status in ORDER_STATUSES:
            conditions.append("o.status = ?")
            values.append(status)
        statuses = [("", "All Statuses")] + [(s, s.title()) for s in ORDER_STATUSES]
        filters = (
            textbox("q", "Search by keyword", keyword)
            + select("status", "Status", statuses, status)
            + select("sort", "Sort by", [(k, v[0]) for k, v in ORDER_SORTS.items()], sort)
        )
        return self._grid(
            request,
            path="/sales/orders",
            title="Orders",
            source="orders o JOIN customers c ON c.id = o.customer_id",
            conditions=conditions,
            values=values,
            order=ORDER_SORTS[sort][1],
            columns="o.id, o.number, o.created_at, c.first_name || ' ' || c.last_name, o.total, "
            "o.status",
            headers=("ID", "Purchase Date", "Bill-to Name", "Grand Total", "Status", "Action"),
            cells=lambda r: [
                esc(r[1]),
                esc(r[2]),
                esc(r[3]),
                esc(money(r[4])),
                esc(r[5].title()),
                link(f"/sales/order/{r[0]}", "View"),
            ],
            filters=filters,
        )

    @route("/sales/order/<int:order_id>")
    def order(self, request: Request, order_id: int) -> Response:
        order = self.row(
            "SELECT o.*, c.first_name || ' ' || c.last_name AS customer, c.email, c.id AS cid "
            "FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = ?",
            order_id,
        )
        items = self.db.execute(
            "SELECT name, sku, price, qty FROM order_items WHERE order_id = ? ORDER BY id",
            (order_id,),
        ).fetchall()
        comments = self.db.execute(
            "SELECT body, created_at FROM order_comments WHERE order_id = ? ORDER BY id",
            (order_id,),
        ).fetchall()
        buttons = "".join(
            form(f"/sales/order/{order_id}/{key}", button(label), "post")
            for key, (label, applies, _) in ORDER_ACTIONS.items()
            if order["status"] in applies
        )
        body = h("h1", esc(f"Order # {order['number']}")) + buttons
        body += h("h2", "Order & Account Information")
        body += h("p", esc(f"Order Date: {order['created_at']}"))
        body += h("p", esc(f"Order Status: {order['status'].title()}"))
        body += h("p", "Customer Name: " + link(f"/customer/{order['cid']}", order["customer"]))
        body += h("p", esc(f"Email: {order['email']}"))
        body += h("h2", "Items Ordered") + table(
            ("Product", "SKU", "Price", "Qty", "Row Total"),
            [[esc(n), esc(s), esc(money(p)), esc(q), esc(money(p * q))] for n, s, p, q in items],
        )
        body += h("h2", "Order Totals")
        body += h("p", esc(f"Subtotal: {money(order['subtotal'])}"))
        body += h("p", esc(f"Shipping & Handling: {money(order['shipping'])}"))
        body += h("p", esc(f"Grand Total: {money(order['total'])}"))
        body += h("h2", "Comments History") + h(
            "ul", "".join(h("li", esc(f"{when}: {text}")) for text, when in comments)
        )
        body += form(
            f"/sales/order/{order_id}/comment",
            textarea("comment", "Comment") + button("Submit Comment"),
            "post",
        )
        return self.page(request, f"Order # {order['number']}", body)

    @route("/sales/order/<int:order_id>/<action>", methods=("POST",))
    def order_action(self, request: Request, order_id: int, action: str) -> Response:
        order = self.row("SELECT id, status FROM orders WHERE id = ?", order_id)
        if action == "comment":
            text = request.field("comment")[:4000]
            if text:
                self.db.execute(
                    "INSERT INTO order_comments (order_id, body, created_at) VALUES (?, ?, ?)",
                    (order_id, text, TODAY),
                )
                self.flash(request, "You added a comment to the order.")
            return Response.redirect(f"/sales/order/{order_id}")
        if action not in ORDER_ACTIONS:
            raise HttpError(404, "We can't find the page you are looking for.")
        _, applies, status = ORDER_ACTIONS[action]
        if order["status"] not in applies:
            self.flash(request, f"An order that is {order['status']} cannot be changed so.")
        else:
            self.db.execute("UPDATE orders SET status = ? WHERE id = ?", (status, order_id))
            self.flash(request, f"The order is now {status}.")
        return Response.redirect(f"/sales/order/{order_id}")

    # ------------------------------------------------------------------ products
    @route("/catalog/products")
    def products(self, request: Request) -> Response:
        keyword, status = request.search_arg("q"), request.arg("status")
        sort = request.arg("sort", "id")
        sort = sort if sort in PRODUCT_SORTS else "id"
        conditions, values = [], []
        if keyword:
            words = fts_query(keyword)
            conditions.append(
                "(sku = ? OR id IN (SELECT rowid FROM product_search WHERE product_search MATCH ?))"
                if words
                else "sku = ?"
            )
            values += [keyword.upper(), words] if words else [keyword.upper()]
        if status in ("Enabled", "Disabled"):
            conditions.append("status = ?")
            values.append(status)
        filters = (
            textbox("q", "Search by keyword", keyword)
            + select(
                "status",
                "Status",
                [("", "Any"), ("Enabled", "Enabled"), ("Disabled", "Disabled")],
                status,
            )
            + select("sort", "Sort by", [(k, v[0]) for k, v in PRODUCT_SORTS.items()], sort)
        )
        return self._grid(
            request,
            path="/catalog/products",
            title="Products",
            source="products",
            conditions=conditions,
            values=values,
            order=PRODUCT_SORTS[sort][1],
            columns="id, name, sku, price, quantity, status",
            headers=("ID", "Name", "SKU", "Price", "Quantity", "Status", "Action"),
            cells=lambda r: [
                esc(r[0]),
                esc(r[1]),
                esc(r[2]),
                esc(money(r[3])),
                esc(r[4]),
                esc(r[5]),
                link(f"/catalog/product/{r[0]}", "Edit"),
            ],
            filters=filters,
        )

    @route("/catalog/product/<int:product_id>", methods=("GET", "POST"))
    def product(self, request: Request, product_id: int) -> Response:
        product = self.row("SELECT * FROM products WHERE id = ?", product_id)
        if request.method == "POST":
            error = self._save_product(request, product_id)
            if not error:
                self.flash(request, "You saved the product.")
                return Response.redirect(f"/catalog/product/{product_id}")
            product.update({k: request.field(k) for k in ("name", "sku", "price", "quantity")})
            note = h("div", esc(error), class_="flash")
        else:
            note = ""
        statuses = [("Enabled", "Enabled"), ("Disabled", "Disabled")]
        inner = (
            textbox("name", "Product Name", product["name"])
            + textbox("sku", "SKU", product["sku"])
            + textbox(
                "price",
                "Price",
                f"{float(product['price'] or 0):.2f}"
                if isinstance(product["price"], float)
                else product["price"],
            )
            + textbox("quantity", "Quantity", product["quantity"])
            + select("status", "Enable Product", statuses, str(product["status"]))
            + textarea("description", "Description", str(product["description"]))
            + button("Save")
        )
        body = h("h1", esc(product["name"])) + note
        body += form(f"/catalog/product/{product_id}", inner, "post")
        body += link("/catalog/products", "Back")
        return self.page(request, f"{product['name']} / Products", body)

    def _save_product(self, request: Request, product_id: int) -> str:
        name, sku = request.field("name")[:300], request.field("sku")[:64]
        try:
            price = round(float(request.field("price").replace("$", "").replace(",", "")), 2)
            quantity = int(request.field("quantity"))
        except ValueError:
            return "Price must be a number and Quantity a whole number."
        if not (name and sku) or not (0 <= price < 1e7) or not (0 <= quantity < 1e7):
            return "Name and SKU are required; price and quantity must be positive."
        clash = self.db.execute(
            "SELECT id FROM products WHERE sku = ? AND id != ?", (sku, product_id)
        ).fetchone()
        if clash:
            return f"Another product already has the SKU {sku}."
        status = request.field("status")
        self.db.execute(
            "UPDATE products SET name = ?, sku = ?, price = ?, quantity = ?, status = ?, "
            "description = ? WHERE id = ?",
            (
                name,
                sku,
                price,
                quantity,
                status if status in ("Enabled", "Disabled") else "Enabled",
                request.field("description")[:4000],
                product_id,
            ),
        )
        return ""

    # ------------------------------------------------------------------ customers
    @route("/customers")
    def customers(self, request: Request) -> Response:
        keyword = request.search_arg("q")
        conditions, values = [], []
        if keyword:
            conditions.append(
                "((first_name || ' ' || last_name) LIKE ? OR email LIKE ? OR phone LIKE ?)"
            )
            values += [f"%{keyword}%"] * 3
        return self._grid(
            request,
            path="/customers",
            title="Customers",
            source="customers",
            conditions=conditions,
            values=values,
            order="id",
            columns="id, first_name || ' ' || last_name, email, phone, city, state, created_at",
            headers=("ID", "Name", "Email", "Phone", "City", "State", "Customer Since", "Action"),
            cells=lambda r: [*(esc(v) for v in r), link(f"/customer/{r[0]}", "Edit")],
            filters=textbox("q", "Search by keyword", keyword),
        )

    @route("/customer/<int:customer_id>", methods=("GET", "POST"))
    def customer(self, request: Request, customer_id: int) -> Response:
        customer = self.row("SELECT * FROM customers WHERE id = ?", customer_id)
        fields = (
            ("first_name", "First Name"),
            ("last_name", "Last Name"),
            ("email", "Email"),
            ("phone", "Phone Number"),
            ("street", "Street Address"),
            ("city", "City"),
            ("state", "State"),
            ("zip", "Zip/Postal Code"),
        )
        if request.method == "POST":
            values = {name: request.field(name)[:200] for name, _ in fields}
            group = request.field("customer_group")
            clash = self.db.execute(
                "SELECT id FROM customers WHERE email = ? AND id != ?",
                (values["email"], customer_id),
            ).fetchone()
            if all(values.values()) and group in GROUPS and clash is None:
                self.db.execute(
                    "UPDATE customers SET first_name = :first_name, last_name = :last_name, "
                    "email = :email, phone = :phone, street = :street, city = :city, "
                    "state = :state, zip = :zip, customer_group = :group WHERE id = :id",
                    {**values, "group": group, "id": customer_id},
                )
                self.flash(request, "You saved the customer.")
            else:
                self.flash(request, "Every field is required, and the email must be unused.")
            return Response.redirect(f"/customer/{customer_id}")
        orders = self.db.execute(
            "SELECT id, number, created_at, total, status FROM orders WHERE customer_id = ? "
            "ORDER BY created_at DESC, id DESC",
            (customer_id,),
        ).fetchall()
        name = f"{customer['first_name']} {customer['last_name']}"
        inner = "".join(textbox(key, label, customer[key]) for key, label in fields)
        inner += select(
            "customer_group", "Group", [(g, g) for g in GROUPS], customer["customer_group"]
        )
        body = h("h1", esc(name)) + form(
            f"/customer/{customer_id}", inner + button("Save Customer"), "post"
        )
        body += h("h2", f"Orders ({len(orders)})") + table(
            ("Order", "Purchased", "Grand Total", "Status"),
            [
                [
                    link(f"/sales/order/{i}", number),
                    esc(created[:10]),
                    esc(money(total)),
                    esc(status.title()),
                ]
                for i, number, created, total, status in orders
            ],
        )
        return self.page(request, f"{name} / Customers", body)

    # ------------------------------------------------------------------ reviews
    @route("/reviews")
    def reviews(self, request: Request) -> Response:
        keyword, status = request.search_arg("q"), request.arg("status")
        conditions, values = [], []
        if keyword:
            conditions.append("(p.name LIKE ? OR r.nickname LIKE ? OR r.title LIKE ?)")
            values += [f"%{keyword}%"] * 3
        if status in ("Pending", "Approved", "Not Approved"):
            conditions.append("r.status = ?")
            values.append(status)
        statuses = [
            ("", "Any"),
            ("Pending", "Pending"),
            ("Approved", "Approved"),
            ("Not Approved", "Not Approved"),
        ]
        return self._grid(
            request,
            path="/reviews",
            title="Reviews",
            source="reviews r JOIN products p ON p.id = r.product_id",
            conditions=conditions,
            values=values,
            order="r.created_at DESC, r.id DESC",
            columns="r.id, r.created_at, r.status, r.title, r.nickname, p.name, r.rating",
            headers=("ID", "Created", "Status", "Title", "Nickname", "Product", "Rating", "Action"),
            cells=lambda r: [*(esc(v) for v in r), link(f"/review/{r[0]}", "Edit")],
            filters=textbox("q", "Search by keyword", keyword)
            + select("status", "Status", statuses, status),
        )

    @route("/review/<int:review_id>", methods=("GET", "POST"))
    def review(self, request: Request, review_id: int) -> Response:
        review = self.row(
            "SELECT r.*, p.name AS product FROM reviews r JOIN products p ON p.id = r.product_id "
            "WHERE r.id = ?",
            review_id,
        )
        if request.method == "POST":
            if request.field("delete"):
                self.db.execute("DELETE FROM reviews WHERE id = ?", (review_id,))
                self.flash(request, "The review has been deleted.")
                return Response.redirect("/reviews")
            status = request.field("status")
            if status in ("Pending", "Approved", "Not Approved"):
                self.db.execute("UPDATE reviews SET status = ? WHERE id = ?", (status, review_id))
                self.flash(request, "You saved the review.")
            return Response.redirect(f"/review/{review_id}")
        statuses = [(s, s) for s in ("Approved", "Pending", "Not Approved")]
        body = h("h1", "Edit Review") + h("p", esc(f"Product: {review['product']}"))
        body += h("p", esc(f"Nickname: {review['nickname']}"))
        body += h("p", esc(f"Rating: {review['rating']} of 5"))
        body += h("p", esc(f"Summary: {review['title']}")) + h("p", esc(review["body"]))
        body += form(
            f"/review/{review_id}",
            select("status", "Status", statuses, review["status"])
            + button("Save Review")
            + button("Delete Review", name="delete", value="1"),
            "post",
        )
        return self.page(request, "Edit Review", body)

    # ------------------------------------------------------------------ reports
    def _report(
        self,
        request: Request,
        title: str,
        path: str,
        sql: str,
        headers: tuple[str, ...],
        cells: Callable[[int, tuple[Any, ...]], Sequence[str]],
    ) -> Response:
        """A yearly report: ``sql`` runs with the chosen year's bounds; ``cells`` turns its
        numbered rows into table cells."""
        year = request.arg("year", YEARS[-1])
        year = year if year in YEARS else YEARS[-1]
        rows = self.db.execute(sql, (year, str(int(year) + 1))).fetchall()
        body = h("h1", title) + form(
            path, select("year", "Year", [(y, y) for y in YEARS], year) + button("Show Report")
        )
        body += table(headers, [cells(rank, row) for rank, row in enumerate(rows, start=1)])
        return self.page(request, title, body)

    @route("/reports/bestsellers")
    def bestsellers(self, request: Request) -> Response:
        return self._report(
            request,
            "Bestsellers Report",
            "/reports/bestsellers",
            "SELECT i.name, i.sku, sum(i.qty) AS sold FROM order_items i JOIN orders o ON "
            "o.id = i.order_id WHERE o.status != 'canceled' AND o.created_at >= ? "
            "AND o.created_at < ? GROUP BY i.product_id ORDER BY sold DESC, i.name LIMIT 20",
            ("Rank", "Product", "SKU", "Quantity Ordered"),
            lambda rank, row: [esc(rank), *(esc(value) for value in row)],
        )

    @route("/reports/sales")
    def sales(self, request: Request) -> Response:
        return self._report(
            request,
            "Sales Report",
            "/reports/sales",
            "SELECT substr(o.created_at, 1, 7) AS month, count(*), sum(o.total) FROM orders o "
            "WHERE o.status != 'canceled' AND o.created_at >= ? AND o.created_at < ? "
            "GROUP BY month ORDER BY month",
            ("Period", "Orders", "Sales Total"),
            lambda rank, row: [esc(row[0]), esc(row[1]), esc(money(row[2]))],
        )

    # ------------------------------------------------------------------ sign in
    @route("/login", methods=("GET", "POST"))
    def login(self, request: Request) -> Response:
        return self.sign_in(
            request,
            heading="Welcome, please sign in",
            field="username",
            label="Username",
            lookup="SELECT id, password_hash FROM admin_users WHERE username = ?",
            landing="/",
            submit="Sign in",
        )

    @route("/logout")
    def logout(self, request: Request) -> Response:
        self.log_out(request)
        return Response.redirect("/login")
