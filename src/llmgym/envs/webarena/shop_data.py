"""The online store's data: catalogue, customers, orders, reviews; generated from a seed.

Products come from WebShop's generator (:func:`~llmgym.envs.webshop.catalogue.generate_product`:
titles, brands, category paths, prices, descriptions, reviews), so the two shops share one
vocabulary; customers, orders, carts and wish lists are drawn here. The signed-in customer of
every episode is customer 1, Emma Lopez (WebArena's shopping account is emma.lopez@gmail.com),
with two dozen orders of her own; the back office is signed in as ``admin``.
"""

from __future__ import annotations

import sqlite3
from typing import ClassVar

from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.generation import random_date, random_datetime
from llmgym.envs.webarena.web import password_hash
from llmgym.envs.webshop.catalogue import Review, generate_product, load_vocabulary

__all__ = [
    "ADMIN_PASSWORD",
    "ADMIN_SESSION",
    "CUSTOMER_PASSWORD",
    "ORDER_STATUSES",
    "SHOP_SESSION",
    "TODAY",
    "ShopData",
]

TODAY = "2023-12-31"
"""The shop's today: orders span 2022 and 2023."""
SHOP_SESSION = "emma-lopez-session"
"""The storefront session of the signed-in customer (customer 1) in the generated data."""
ADMIN_SESSION = "admin-session"
"""The back-office session of the ``admin`` user in the generated data."""
CUSTOMER_PASSWORD = "Password.123"
ADMIN_PASSWORD = "admin1234"
ORDER_STATUSES = ("pending", "processing", "complete", "canceled", "on hold")

_SCHEMA = """
CREATE TABLE categories (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, parent_id INTEGER REFERENCES categories(id)
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY, sku TEXT NOT NULL UNIQUE, name TEXT NOT NULL, brand TEXT NOT NULL,
    category_id INTEGER NOT NULL REFERENCES categories(id), price REAL NOT NULL,
    quantity INTEGER NOT NULL, status TEXT NOT NULL, description TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX products_by_category ON products (category_id, status);
CREATE INDEX products_by_date ON products (created_at);
CREATE VIRTUAL TABLE product_search USING fts5(
    name, brand, description, content='products', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER products_ai AFTER INSERT ON products BEGIN
    INSERT INTO product_search (rowid, name, brand, description)
    VALUES (new.id, new.name, new.brand, new.description);
END;
CREATE TRIGGER products_ad AFTER DELETE ON products BEGIN
    INSERT INTO product_search (product_search, rowid, name, brand, description)
    VALUES ('delete', old.id, old.name, old.brand, old.description);
END;
CREATE TRIGGER products_au AFTER UPDATE OF name, brand, description ON products BEGIN
    INSERT INTO product_search (product_search, rowid, name, brand, description)
    VALUES ('delete', old.id, old.name, old.brand, old.description);
    INSERT INTO product_search (rowid, name, brand, description)
    VALUES (new.id, new.name, new.brand, new.description);
END;
CREATE TABLE customers (
    id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL, phone TEXT NOT NULL,
    street TEXT NOT NULL, city TEXT NOT NULL, state TEXT NOT NULL, zip TEXT NOT NULL,
    customer_group TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE,
    customer_id INTEGER NOT NULL REFERENCES customers(id), created_at TEXT NOT NULL,
    status TEXT NOT NULL, subtotal REAL NOT NULL, shipping REAL NOT NULL, total REAL NOT NULL,
    shipping_method TEXT NOT NULL, ship_name TEXT NOT NULL, ship_street TEXT NOT NULL,
    ship_city TEXT NOT NULL, ship_state TEXT NOT NULL, ship_zip TEXT NOT NULL
);
CREATE INDEX orders_by_customer ON orders (customer_id, created_at);
CREATE INDEX orders_by_status ON orders (status, created_at);
CREATE INDEX orders_by_date ON orders (created_at);
CREATE TABLE order_items (
    id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id), name TEXT NOT NULL, sku TEXT NOT NULL,
    price REAL NOT NULL, qty INTEGER NOT NULL
);
CREATE INDEX order_items_by_order ON order_items (order_id);
CREATE INDEX order_items_by_product ON order_items (product_id);
CREATE TABLE order_comments (
    id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id), body TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE reviews (
    id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES products(id),
    customer_id INTEGER REFERENCES customers(id), nickname TEXT NOT NULL, rating INTEGER NOT NULL,
    title TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL, status TEXT NOT NULL
);
CREATE INDEX reviews_by_product ON reviews (product_id, status);
CREATE INDEX reviews_by_status ON reviews (status, created_at);
CREATE TABLE cart_items (
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    product_id INTEGER NOT NULL REFERENCES products(id), qty INTEGER NOT NULL,
    PRIMARY KEY (customer_id, product_id)
);
CREATE TABLE wishlist_items (
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    product_id INTEGER NOT NULL REFERENCES products(id), added_at TEXT NOT NULL,
    PRIMARY KEY (customer_id, product_id)
);
CREATE TABLE admin_users (
    id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL,
    name TEXT NOT NULL
);
"""

FIRST_NAMES = [
    "Emma",
    "Olivia",
    "Ava",
    "Sophia",
    "Mia",
    "Amelia",
    "Harper",
    "Evelyn",
    "Abigail",
    "Emily",
    "Ella",
    "Grace",
    "Chloe",
    "Lily",
    "Zoe",
    "Nora",
    "Hannah",
    "Leah",
    "Aria",
    "Maya",
    "Liam",
    "Noah",
    "Oliver",
    "Elijah",
    "James",
    "William",
    "Benjamin",
    "Lucas",
    "Henry",
    "Alexander",
    "Mason",
    "Michael",
    "Ethan",
    "Daniel",
    "Jacob",
    "Logan",
    "Jackson",
    "Sebastian",
    "Jack",
    "Owen",
    "Samuel",
    "Matthew",
    "Joseph",
    "Levi",
    "David",
    "John",
    "Wyatt",
    "Carter",
    "Julian",
    "Luke",
    "Grayson",
    "Isaac",
    "Gabriel",
    "Anthony",
    "Dylan",
    "Lincoln",
    "Thomas",
    "Charles",
    "Christopher",
    "Jaxon",
    "Maverick",
    "Josiah",
    "Isaiah",
    "Andrew",
    "Elias",
    "Joshua",
    "Nathan",
    "Caleb",
    "Ryan",
    "Adrian",
    "Miles",
    "Eli",
    "Nolan",
    "Christian",
    "Aaron",
    "Cameron",
    "Ezekiel",
    "Colton",
    "Luca",
]
LAST_NAMES = [
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Garcia",
    "Miller",
    "Davis",
    "Rodriguez",
    "Martinez",
    "Hernandez",
    "Lopez",
    "Gonzalez",
    "Wilson",
    "Anderson",
    "Thomas",
    "Taylor",
    "Moore",
    "Jackson",
    "Martin",
    "Lee",
    "Perez",
    "Thompson",
    "White",
    "Harris",
    "Sanchez",
    "Clark",
    "Ramirez",
    "Lewis",
    "Robinson",
    "Walker",
    "Young",
    "Allen",
    "King",
    "Wright",
    "Scott",
    "Torres",
    "Nguyen",
    "Hill",
    "Flores",
    "Green",
    "Adams",
    "Nelson",
    "Baker",
    "Hall",
    "Rivera",
    "Campbell",
    "Mitchell",
    "Carter",
    "Roberts",
    "Gomez",
    "Phillips",
    "Evans",
    "Turner",
    "Diaz",
    "Parker",
    "Cruz",
    "Edwards",
    "Collins",
    "Reyes",
    "Stewart",
    "Morris",
    "Morales",
    "Murphy",
    "Cook",
    "Rogers",
    "Gutierrez",
    "Ortiz",
    "Morgan",
    "Cooper",
    "Peterson",
    "Bailey",
    "Reed",
    "Kelly",
    "Howard",
    "Ramos",
]
CITIES = (
    ("Seattle", "WA", "981"),
    ("Portland", "OR", "972"),
    ("San Francisco", "CA", "941"),
    ("Los Angeles", "CA", "900"),
    ("San Diego", "CA", "921"),
    ("Phoenix", "AZ", "850"),
    ("Denver", "CO", "802"),
    ("Austin", "TX", "787"),
    ("Dallas", "TX", "752"),
    ("Houston", "TX", "770"),
    ("Chicago", "IL", "606"),
    ("Minneapolis", "MN", "554"),
    ("Detroit", "MI", "482"),
    ("Columbus", "OH", "432"),
    ("Atlanta", "GA", "303"),
    ("Miami", "FL", "331"),
    ("Orlando", "FL", "328"),
    ("Charlotte", "NC", "282"),
    ("Nashville", "TN", "372"),
    ("Boston", "MA", "021"),
    ("New York", "NY", "100"),
    ("Philadelphia", "PA", "191"),
    ("Pittsburgh", "PA", "152"),
    ("Baltimore", "MD", "212"),
    ("Richmond", "VA", "232"),
    ("Salt Lake City", "UT", "841"),
    ("Las Vegas", "NV", "891"),
    ("Kansas City", "MO", "641"),
    ("St. Louis", "MO", "631"),
    ("New Orleans", "LA", "701"),
)
STREETS = (
    "Main St",
    "Oak Ave",
    "Maple Dr",
    "Cedar Ln",
    "Pine St",
    "Elm St",
    "Washington Ave",
    "Lake Rd",
    "Hill St",
    "Park Ave",
    "Sunset Blvd",
    "River Rd",
    "Church St",
    "Highland Ave",
    "Forest Dr",
    "Meadow Ln",
    "Spring St",
    "Lincoln Ave",
    "Jefferson St",
    "Broadway",
)
REVIEW_TITLES = (
    ("Disappointed", "Not worth it", "Broke quickly"),
    ("Not great", "Could be better", "Meh"),
    ("It's okay", "Average", "Does the job"),
    ("Good value", "Pretty good", "Happy with it"),
    ("Love it!", "Excellent", "Highly recommend"),
)
REVIEW_BODIES = (
    ("Stopped working after a week.", "Cheaply made; I returned it."),
    ("Smaller than I expected.", "It works, but the quality is poor."),
    ("Fine for the price.", "Nothing special, but it works."),
    ("Good quality and fast shipping.", "Does what it says."),
    ("Exactly what I needed!", "Great product, would buy again."),
)
SHIPPING_METHODS = (
    ("flatrate", "Flat Rate", 5.0),
    ("express", "Express", 15.0),
    ("free", "Free Shipping", 0.0),
)


class ShopData(Dataset):
    """The store's database (see the module docstring); sizes are fixed per seed."""

    name = "shop"
    version = 1
    products: ClassVar[int] = 3_000
    customers: ClassVar[int] = 500
    orders: ClassVar[int] = 3_000
    own_orders: ClassVar[int] = 24

    def build(self, db: sqlite3.Connection, seed: int) -> None:
        db.executescript(_SCHEMA)
        rng = TaskRng("webarena-shop", seed)
        prices, reviews = self._catalogue(db, seed, rng)
        self._customers(db, rng)
        self._orders(db, rng, prices)
        self._reviews(db, reviews, rng)
        db.execute(
            "INSERT INTO admin_users VALUES (1, 'admin', ?, 'Admin User')",
            (password_hash(ADMIN_PASSWORD, "admin"),),
        )
        db.executemany(
            "INSERT INTO sessions (sid, site, user_id) VALUES (?, ?, 1)",
            [(SHOP_SESSION, "shop"), (ADMIN_SESSION, "admin")],
        )

    def _catalogue(
        self, db: sqlite3.Connection, seed: int, rng: TaskRng
    ) -> tuple[list[float], list[tuple[Review, ...]]]:
        vocabulary = load_vocabulary()
        categories: dict[tuple[str, ...], int] = {}

        def category(path: tuple[str, ...]) -> int:
            if path not in categories:
                parent = category(path[:1]) if len(path) > 1 else None
                categories[path] = len(categories) + 1
                db.execute(
                    "INSERT INTO categories VALUES (?, ?, ?)", (categories[path], path[-1], parent)
                )
            return categories[path]

        rows, prices, reviews, names = [], [], [], set()
        for index in range(self.products):
            product = generate_product(vocabulary, seed, index)
            name = product.title
            if name in names:
                name = f"{name} ({product.asin[-4:]})"
            names.add(name)
            leaf = category((product.category[0], product.category[-1]))
            quantity = 0 if rng.random() < 0.06 else rng.randint(1, 250)
            status = "Disabled" if rng.random() < 0.03 else "Enabled"
            created = random_date(rng, 2020, 2023)
            rows.append(
                (
                    index + 1,
                    product.asin,
                    name,
                    product.brand,
                    leaf,
                    product.price,
                    quantity,
                    status,
                    product.description,
                    created,
                )
            )
            prices.append(product.price)
            reviews.append(product.reviews)
        db.executemany("INSERT INTO products VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
        return prices, reviews

    def _customers(self, db: sqlite3.Connection, rng: TaskRng) -> None:
        rows, emails = [], set()
        for index in range(self.customers):
            if index == 0:
                first, last, (city, state, zip3) = "Emma", "Lopez", CITIES[0]
            else:
                first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
                city, state, zip3 = rng.choice(CITIES)
            email = f"{first}.{last}@example.com".lower()
            while email in emails:
                email = f"{first}.{last}{rng.randint(2, 999)}@example.com".lower()
            emails.add(email)
            rows.append(
                (
                    index + 1,
                    first,
                    last,
                    email,
                    password_hash(CUSTOMER_PASSWORD, email),
                    f"({rng.randint(201, 989)}) 555-{rng.randint(1000, 9999)}",
                    f"{rng.randint(10, 9999)} {rng.choice(STREETS)}",
                    city,
                    state,
                    f"{zip3}{rng.randint(10, 99)}",
                    rng.weighted_choice(("General", "Wholesale", "Retailer"), (8, 1, 1)),
                    random_date(rng, 2019, 2021),
                )
            )
        db.executemany("INSERT INTO customers VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)

    def _orders(self, db: sqlite3.Connection, rng: TaskRng, prices: list[float]) -> None:
        customers = db.execute(
            "SELECT id, first_name || ' ' || last_name, street, city, state, zip FROM customers"
        ).fetchall()
        names = dict(db.execute("SELECT id, name FROM products").fetchall())
        skus = dict(db.execute("SELECT id, sku FROM products").fetchall())
        owners = [1] * self.own_orders + [
            rng.randint(2, self.customers) for _ in range(self.orders - self.own_orders)
        ]
        dated = sorted((random_datetime(rng, 2022, 2023, hours=(7, 22)), owner) for owner in owners)
        orders = []
        items: list[tuple[int, int, str, str, float, int]] = []
        for number, (created, owner) in enumerate(dated, start=1):
            customer = customers[owner - 1]
            lines: dict[int, int] = {}
            for _ in range(rng.weighted_choice((1, 2, 3, 4), (5, 3, 2, 1))):
                product = rng.randint(1, self.products)
                lines[product] = lines.get(product, 0) + rng.weighted_choice((1, 2, 3), (8, 2, 1))
            subtotal = round(sum(prices[p - 1] * q for p, q in lines.items()), 2)
            method, _, fee = rng.weighted_choice(SHIPPING_METHODS, (6, 2, 2))
            fee = 0.0 if method == "free" else fee
            status = _status(rng, created)
            orders.append(
                (
                    number,
                    f"{number:09d}",
                    owner,
                    created,
                    status,
                    subtotal,
                    fee,
                    round(subtotal + fee, 2),
                    method,
                    customer[1],
                    *customer[2:],
                )
            )
            items.extend(
                (number, p, names[p], skus[p], prices[p - 1], q) for p, q in sorted(lines.items())
            )
        db.executemany("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", orders)
        db.executemany(
            "INSERT INTO order_items (order_id, product_id, name, sku, price, qty) "
            "VALUES (?,?,?,?,?,?)",
            items,
        )
        wished = rng.sample(range(1, self.products + 1), 3)
        db.executemany(
            "INSERT INTO wishlist_items VALUES (1, ?, ?)",
            [(product, random_date(rng, 2023, 2023)) for product in wished],
        )

    def _reviews(
        self, db: sqlite3.Connection, reviews: list[tuple[Review, ...]], rng: TaskRng
    ) -> None:
        rows = []
        for product_id, generated in enumerate(reviews, start=1):
            count = rng.weighted_choice((0, 1, 2, 3, 4, 5, 6), (2, 2, 3, 3, 2, 1, 1))
            for index in range(count):
                source = generated[index] if index < len(generated) else None
                stars = source.stars if source else rng.randint(1, 5)
                body = source.text if source else rng.choice(REVIEW_BODIES[stars - 1])
                first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
                status = "Pending" if rng.random() < 0.05 else "Approved"
                rows.append(
                    (
                        product_id,
                        None,
                        f"{first} {last[0]}.",
                        stars,
                        rng.choice(REVIEW_TITLES[stars - 1]),
                        body,
                        random_date(rng, 2021, 2023),
                        status,
                    )
                )
        db.executemany(
            "INSERT INTO reviews (product_id, customer_id, nickname, rating, title, body, "
            "created_at, status) VALUES (?,?,?,?,?,?,?,?)",
            rows,
        )


def _status(rng: TaskRng, created: str) -> str:
    if created >= "2023-12-01":
        return rng.weighted_choice(("pending", "processing", "on hold", "canceled"), (4, 4, 1, 1))
    return rng.weighted_choice(("complete", "canceled", "on hold"), (17, 2, 1))
