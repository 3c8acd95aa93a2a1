"""The generated databases: five domains, their schemas and their rows.

Every row comes from :class:`~llmgym.core.TaskRng` streams seeded by the domain's name and from
the package's own vocabulary (``envs/data/sql/vocabulary.json``), so the databases are the same
on every machine. :func:`master_database` builds a domain's database once per process in memory;
sandboxes copy it (``sqlite3`` backup, about a millisecond).
"""

from __future__ import annotations

import math
import sqlite3
import threading
from bisect import bisect_right
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from functools import cache
from itertools import accumulate
from typing import Any, TypeVar

from llmgym.core import TaskRng
from llmgym.envs.sql.schema import Domain, load_domains, load_json

__all__ = [
    "CACHED_STATEMENTS",
    "DOMAINS",
    "DOMAIN_NAMES",
    "generate_rows",
    "master_database",
    "private_copy",
    "vocabulary",
]

T = TypeVar("T")
Rows = dict[str, list[tuple[Any, ...]]]
TableRows = tuple[list[tuple[Any, ...]], ...]
"""A generator's rows for each table, in the schema's table order."""
Vocabulary = dict[str, Any]

DOMAINS: dict[str, Domain] = load_domains()
"""Every database, by name (schemas from ``envs/data/sql/schemas.json``)."""
DOMAIN_NAMES: tuple[str, ...] = tuple(DOMAINS)


# ----------------------------------------------------------------------------- vocabulary


def vocabulary() -> Vocabulary:
    """The package's word lists, value distributions and domain facts
    (``envs/data/sql/vocabulary.json``)."""
    words: Vocabulary = load_json("vocabulary.json")
    return words


class _Draw:
    """A :class:`TaskRng` with the draws row generators need."""

    def __init__(self, *seed: object) -> None:
        self.rng = TaskRng("llmgym-sql-data", *seed)

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def pick(self, items: Sequence[T]) -> T:
        return self.rng.choice(items)

    def chance(self, probability: float) -> bool:
        return self.rng.random() < probability

    def weighted(self, pairs: Sequence[Sequence[Any]]) -> Any:
        """One ``value`` of ``[(value, weight), ...]``."""
        return self.rng.weighted_choice([p[0] for p in pairs], [p[1] for p in pairs])

    def skewed(self, items: Sequence[T], exponent: float = 0.8) -> Callable[[], T]:
        """A sampler that favours early items (weight ``1 / rank**exponent``)."""
        cumulative = list(accumulate(1.0 / (rank**exponent) for rank in range(1, len(items) + 1)))
        total = cumulative[-1]
        return lambda: items[
            min(bisect_right(cumulative, self.rng.random() * total), len(items) - 1)
        ]

    def day(self, first: date, last: date) -> date:
        return date.fromordinal(self.integer(first.toordinal(), last.toordinal()))

    def money(self, low: float, high: float) -> float:
        """A log-uniform price ending in .99 or .49 or .00."""
        value = math.exp(self.rng.uniform(math.log(low), math.log(high)))
        cents = self.pick((0.99, 0.99, 0.49, 0.0))
        return round(max(1.0, math.floor(value)) + cents, 2) if cents else float(round(value))

    def people(self, count: int) -> list[tuple[str, str]]:
        """``count`` distinct (first name, last name) pairs."""
        words = vocabulary()
        firsts, lasts = words["first_names"], words["last_names"]
        chosen = self.rng.sample(range(len(firsts) * len(lasts)), count)
        return [(firsts[i // len(lasts)], lasts[i % len(lasts)]) for i in chosen]


def _iso(day: date) -> str:
    return day.isoformat()


# ----------------------------------------------------------------------------- rows


def _retail_rows(words: Vocabulary, shop: Vocabulary, draw: _Draw) -> TableRows:
    cities = words["cities"]
    city_of = draw.skewed(cities, 0.7)
    customers = []
    for i, (first, last) in enumerate(draw.people(300), start=1):
        city, country = city_of()
        email = f"{first}.{last}{i}@example.com".lower()
        signup = draw.day(date(2020, 1, 1), date(2023, 12, 31))
        customers.append(
            (i, first, last, email, city, country, _iso(signup), draw.weighted(shop["tiers"]))
        )
    products: list[tuple[Any, ...]] = []
    names: set[str] = set()
    categories = shop["categories"]
    while len(products) < 160:
        category = draw.pick(sorted(categories))
        spec = categories[category]
        brand = draw.pick(shop["brands"])
        name = f"{brand} {draw.pick(shop['adjectives'])} {draw.pick(spec['items'])}"
        if name in names:
            continue
        names.add(name)
        price = draw.money(*spec["price"])
        stock = 0 if draw.chance(0.08) else draw.integer(1, 400)
        products.append((len(products) + 1, name, category, brand, price, stock))
    popular_product = draw.skewed(products, 0.6)
    frequent_customer = draw.skewed([c[0] for c in customers], 0.6)
    orders: list[tuple[Any, ...]] = []
    items: list[tuple[Any, ...]] = []
    reviews: list[tuple[Any, ...]] = []
    for order_id in range(1, 1201):
        customer = frequent_customer()
        signup = date.fromisoformat(customers[customer - 1][6])
        day = draw.day(max(signup, date(2022, 1, 1)), date(2024, 6, 30))
        orders.append((order_id, customer, _iso(day), draw.weighted(shop["statuses"])))
        chosen: set[int] = set()
        for _ in range(draw.weighted(shop["items_per_order"])):
            product = popular_product()
            if product[0] in chosen:
                continue
            chosen.add(product[0])
            quantity = draw.weighted(shop["quantities"])
            discount = draw.weighted(shop["discounts"])
            paid = round(product[4] * (1 - discount), 2)
            items.append((len(items) + 1, order_id, product[0], quantity, paid))
    quality = {p[0]: draw.integer(2, 5) for p in products}
    for review_id in range(1, 701):
        product = popular_product()
        rating = min(5, max(1, quality[product[0]] + draw.weighted(shop["rating_offsets"])))
        review_day = draw.day(date(2022, 1, 1), date(2024, 6, 30))
        reviews.append((review_id, product[0], frequent_customer(), rating, _iso(review_day)))
    return customers, products, orders, items, reviews


def _school_rows(words: Vocabulary, school: Vocabulary, draw: _Draw) -> TableRows:
    subjects = school["subjects"]
    teachers = []
    departments = sorted(subjects)
    for i, (first, last) in enumerate(draw.people(36), start=1):
        # two teachers per department first, so that every course has a teacher to draw from
        if i <= 2 * len(departments):
            department = departments[(i - 1) % len(departments)]
        else:
            department = draw.pick(departments)
        hired = draw.integer(1994, 2023)
        salary = 38_000 + (2024 - hired) * 900 + draw.integer(0, 40) * 250
        teachers.append((i, first, last, department, hired, salary))
    courses: list[tuple[Any, ...]] = []
    for subject in sorted(subjects):
        staff = [t[0] for t in teachers if t[3] == subject]
        for base in subjects[subject]:
            for level in school["levels"]:
                if level == "Advanced" and draw.chance(0.4):
                    continue
                title = f"{level} {base}"
                room = f"{draw.pick(school['rooms'])}{draw.integer(1, 30)}"
                credits = draw.weighted(school["credits"])
                courses.append((len(courses) + 1, title, subject, draw.pick(staff), credits, room))
    students, ability = [], {}
    for i, (first, last) in enumerate(draw.people(420), start=1):
        grade = draw.integer(9, 12)
        born = draw.day(date(2017 - grade, 9, 1), date(2018 - grade, 8, 31))
        students.append((i, first, last, grade, draw.pick(school["houses"]), _iso(born)))
        ability[i] = draw.rng.uniform(-12, 12)
    difficulty = {
        c[0]: draw.rng.uniform(-6, 6) + (4 if c[1].startswith("Advanced") else 0) for c in courses
    }
    enrollments: list[tuple[Any, ...]] = []
    seen: set[tuple[int, int]] = set()
    for student in students:
        for _ in range(draw.integer(4, 7)):
            course = draw.pick(courses)
            term = draw.pick(school["terms"])
            if (student[0], course[0]) in seen:
                continue
            seen.add((student[0], course[0]))
            raw = 74 + ability[student[0]] - difficulty[course[0]] + draw.rng.uniform(-14, 14)
            score = round(min(100.0, max(20.0, raw)), 1)
            enrollments.append((len(enrollments) + 1, student[0], course[0], term, score))
    return teachers, students, courses, enrollments


def _distance_km(a: Sequence[Any], b: Sequence[Any]) -> int:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[4], a[5], b[4], b[5]))
    h = math.sin((lat2 - lat1) / 2) ** 2
    h += math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return round(2 * 6371 * math.asin(math.sqrt(h)))


def _flights_rows(words: Vocabulary, air: Vocabulary, draw: _Draw) -> TableRows:
    airports = [tuple(a) for a in air["airports"]]
    airlines = [
        (i, name, code, country, draw.integer(1950, 2015))
        for i, (name, code, country) in enumerate(air["airline_names"], start=1)
    ]
    flights = []
    for airline_id, _, code, country, _ in airlines:
        hub = next(a for a in airports if a[3] == country)
        destinations = draw.rng.sample([a for a in airports if a[0] != hub[0]], draw.integer(6, 10))
        for number, destination in enumerate(destinations):
            distance = _distance_km(hub, destination)
            aircraft, seats = (
                draw.pick(air["aircraft"][:4]) if distance > 1200 else draw.pick(air["aircraft"])
            )
            duration = round(distance / 780 * 60 + 25 + draw.integer(0, 15))
            hour, minute = draw.integer(6, 20), draw.pick(air["departure_minutes"])
            return_hour = (hour + duration // 60 + 1) % 24  # an hour on the ground, then back
            legs = ((hub, destination, hour), (destination, hub, return_hour))
            for leg, (origin, target, departure) in enumerate(legs):
                flights.append((
                    f"{code}{100 + number * 2 + leg}", airline_id, origin[0], target[0],
                    f"{departure:02d}:{minute:02d}", duration + draw.integer(-5, 5), distance,
                    aircraft, seats,
                ))  # fmt: skip
    countries = sorted({a[3] for a in airports})
    nationality = draw.skewed(countries, 0.5)
    passengers = [
        (i, first, last, nationality(), draw.integer(1945, 2006), draw.weighted(air["statuses"]))
        for i, (first, last) in enumerate(draw.people(500), start=1)
    ]
    busy_flight = draw.skewed(flights, 0.5)
    traveller = draw.skewed([p[0] for p in passengers], 0.5)
    bookings = []
    for booking_id in range(1, 2201):
        flight = busy_flight()
        seat_class = draw.weighted(air["seat_classes"])
        base = 35 + flight[6] * draw.rng.uniform(0.06, 0.14)
        price = round(base * air["price_multipliers"][seat_class], 2)
        bags = draw.weighted(air["checked_bags"])
        day = draw.day(date(2024, 1, 1), date(2024, 12, 31))
        bookings.append((booking_id, flight[0], traveller(), _iso(day), seat_class, price, bags))
    return airports, airlines, flights, passengers, bookings


def _hospital_rows(words: Vocabulary, care: Vocabulary, draw: _Draw) -> TableRows:
    departments = [(i, name, floor) for i, (name, floor, _) in enumerate(care["departments"], 1)]
    diagnoses = {i: d[2] for i, d in enumerate(care["departments"], 1)}
    doctors = []
    for i, (first, last) in enumerate(draw.people(48), start=1):
        department = i if i <= len(departments) else draw.integer(1, len(departments))
        doctors.append((i, first, last, department, draw.integer(1990, 2023)))
    cities = [c[0] for c in words["cities"]]
    city_of = draw.skewed(cities, 0.9)
    patients = []
    for i, (first, last) in enumerate(draw.people(520), start=1):
        sex = draw.pick(care["sexes"])
        patients.append(
            (
                i,
                first,
                last,
                sex,
                draw.integer(1935, 2022),
                city_of(),
                draw.weighted(care["blood_types"]),
            )
        )
    children = [p[0] for p in patients if p[4] >= 2008]
    adults = [p[0] for p in patients if p[4] < 2008]
    regular = draw.skewed(adults, 0.4)
    base_fee = {d[0]: 60 + 15 * draw.integer(0, 8) for d in departments}
    appointments = []
    for appointment_id in range(1, 1601):
        doctor = draw.pick(doctors)
        department = doctor[3]
        paediatric = departments[department - 1][1] == "Pediatrics"
        patient = draw.pick(children) if paediatric else regular()
        day = draw.day(date(2023, 1, 1), date(2024, 12, 31))
        fee = round(base_fee[department] * draw.rng.uniform(0.8, 1.5), 2)
        diagnosis = draw.pick(diagnoses[department])
        appointments.append((appointment_id, patient, doctor[0], _iso(day), diagnosis, fee))
    medications = care["medications"]
    prescriptions: list[tuple[Any, ...]] = []
    for appointment in appointments:
        for _ in range(draw.weighted(care["prescriptions_per_appointment"])):
            medication, dose = draw.pick(medications)
            dose_mg = float(dose * draw.pick(care["dose_factors"]))
            days = draw.pick(care["prescription_days"])
            prescriptions.append(
                (len(prescriptions) + 1, appointment[0], medication, dose_mg, days)
            )
    return departments, doctors, patients, appointments, prescriptions


def _library_rows(words: Vocabulary, lib: Vocabulary, draw: _Draw) -> TableRows:
    countries = sorted({c[1] for c in words["cities"]})
    authors = [
        (i, first, last, draw.pick(countries), draw.integer(1900, 1995))
        for i, (first, last) in enumerate(draw.people(90), start=1)
    ]
    genres = lib["genres"]
    favourite = {a[0]: draw.rng.sample(genres, 2) for a in authors}
    prolific = draw.skewed(authors, 0.7)
    books: list[tuple[Any, ...]] = []
    titles: set[str] = set()
    while len(books) < 320:
        pattern = draw.pick(lib["title_patterns"])
        noun, noun2 = draw.rng.sample(lib["title_nouns"], 2)
        title = pattern.format(adjective=draw.pick(lib["title_adjectives"]), noun=noun, noun2=noun2)
        if title in titles:
            continue
        titles.add(title)
        author = prolific()
        year = draw.integer(max(author[4] + 22, 1950), min(author[4] + 85, 2023))
        books.append((
            len(books) + 1, title, author[0], draw.pick(favourite[author[0]]), year,
            draw.integer(90, 880), draw.weighted(lib["copies"]),
        ))  # fmt: skip
    cities = [c[0] for c in words["cities"]]
    members = []
    for i, (first, last) in enumerate(draw.people(330), start=1):
        joined = draw.day(date(2015, 1, 1), date(2024, 6, 30))
        members.append(
            (i, first, last, draw.pick(cities), _iso(joined), draw.weighted(lib["memberships"]))
        )
    popular = draw.skewed(books, 0.6)
    reader = draw.skewed(members, 0.5)
    loans = []
    for loan_id in range(1, 1801):
        book, member = popular(), reader()
        start = draw.day(max(date.fromisoformat(member[4]), date(2023, 1, 1)), date(2024, 11, 30))
        due = start + timedelta(days=21)
        returned = None
        if not draw.chance(0.07):
            returned = _iso(start + timedelta(days=draw.weighted(lib["loan_days"])))
        loans.append((loan_id, book[0], member[0], _iso(start), _iso(due), returned))
    return authors, books, members, loans


_GENERATORS: dict[str, Callable[[Vocabulary, Vocabulary, _Draw], TableRows]] = {
    "retail": _retail_rows,
    "school": _school_rows,
    "flights": _flights_rows,
    "hospital": _hospital_rows,
    "library": _library_rows,
}


@cache
def generate_rows(name: str) -> Rows:
    """The rows of database ``name``, table by table (deterministic)."""
    words = vocabulary()
    tables = _GENERATORS[name](words, words[name], _Draw(name))
    return {table.name: rows for table, rows in zip(DOMAINS[name].tables, tables, strict=True)}


_BUILD_LOCK = threading.Lock()
_MASTERS: dict[str, sqlite3.Connection] = {}
CACHED_STATEMENTS = 32
"""Prepared statements each private copy keeps (sqlite3's statement cache)."""


def master_database(name: str) -> sqlite3.Connection:
    """The in-memory database ``name``, built on first use and kept for the process.

    Treat it as read-only: sandboxes copy it, and question generation reads it.
    """
    with _BUILD_LOCK:
        connection = _MASTERS.get(name)
        if connection is None:
            connection = _MASTERS[name] = _build(DOMAINS[name])
        return connection


def private_copy(name: str) -> sqlite3.Connection:
    """A new in-memory copy of database ``name``, for one owner (a sandbox) to lock down.

    Its statement cache holds :data:`CACHED_STATEMENTS` statements: a cached statement keeps
    its compiled program (up to a few hundred KB for a long query), and parsing a question's
    query again costs microseconds.
    """
    copy = sqlite3.connect(":memory:", check_same_thread=False, cached_statements=CACHED_STATEMENTS)
    source = master_database(name)
    with _BUILD_LOCK:
        source.backup(copy)
    return copy


def _build(domain: Domain) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    connection.executescript(domain.create_script())
    rows = generate_rows(domain.name)
    for table in domain.tables:
        marks = ", ".join("?" * len(table.columns))
        connection.executemany(f"INSERT INTO {table.name} VALUES ({marks})", rows[table.name])
        for column in table.columns:
            if column.references:
                connection.execute(
                    f"CREATE INDEX idx_{table.name}_{column.name} ON {table.name}({column.name})"
                )
    connection.commit()
    return connection
