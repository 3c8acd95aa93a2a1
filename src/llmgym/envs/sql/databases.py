"""The generated databases: five domains, their schemas and their rows.

Every row comes from :class:`~llmgym.core.TaskRng` streams seeded by the domain's name and from
the package's own vocabulary (``envs/data/sql_vocabulary.json``), so the databases are the same
on every machine. :func:`master_database` builds a domain's database once per process in memory;
sandboxes copy it (``sqlite3`` backup, about a millisecond).
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from bisect import bisect_right
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from functools import cache
from importlib import resources
from itertools import accumulate
from typing import Any, TypeVar

from llmgym.core import TaskRng
from llmgym.envs.sql.schema import Column, Domain, Relation, Table

__all__ = [
    "DOMAINS",
    "DOMAIN_NAMES",
    "generate_rows",
    "master_database",
    "private_copy",
    "vocabulary",
]

T = TypeVar("T")
Rows = dict[str, list[tuple[Any, ...]]]

# ----------------------------------------------------------------------------- schemas

_ID = "INTEGER"


def _key(name: str) -> Column:
    return Column(name, _ID, role="key")


def _ref(name: str, target: str) -> Column:
    return Column(name, _ID, role="ref", references=target)


def _person(prefix: str = "") -> tuple[Column, Column]:
    return (
        Column("first_name", "TEXT", role="label", noun=f"{prefix}first name"),
        Column("last_name", "TEXT", role="label", noun=f"{prefix}last name"),
    )


RETAIL = Domain(
    name="retail",
    description="an online shop: customers, products, orders with their items, and reviews",
    tables=(
        Table(
            "customers",
            "customer",
            "customers",
            (
                _key("customer_id"),
                *_person(),
                Column("email", "TEXT"),
                Column(
                    "city",
                    "TEXT",
                    role="category",
                    noun="city",
                    plural="cities",
                    where="living in {value}",
                ),
                Column(
                    "country",
                    "TEXT",
                    role="category",
                    noun="country",
                    plural="countries",
                    where="living in {value}",
                ),
                Column(
                    "signup_date",
                    "TEXT",
                    role="date",
                    noun="signup date",
                    when="who signed up in {period}",
                ),
                Column(
                    "loyalty_tier",
                    "TEXT",
                    role="category",
                    noun="loyalty tier",
                    plural="loyalty tiers",
                    where="in the {value} loyalty tier",
                ),
            ),
            label=("first_name", "last_name"),
            label_noun="first and last name",
            label_plural="first and last names",
        ),
        Table(
            "products",
            "product",
            "products",
            (
                _key("product_id"),
                Column("name", "TEXT", role="label", noun="name"),
                Column(
                    "category",
                    "TEXT",
                    role="category",
                    noun="category",
                    plural="categories",
                    where="in the {value} category",
                ),
                Column(
                    "brand",
                    "TEXT",
                    role="category",
                    noun="brand",
                    plural="brands",
                    where="made by {value}",
                ),
                Column(
                    "unit_price",
                    "REAL",
                    role="number",
                    noun="unit price",
                    unit="$",
                    above="priced above {value}",
                    below="priced below {value}",
                ),
                Column(
                    "stock",
                    _ID,
                    role="number",
                    noun="stock",
                    additive=True,
                    above="with more than {value} units in stock",
                    below="with fewer than {value} units in stock",
                ),
            ),
            label=("name",),
            label_noun="name",
            label_plural="names",
        ),
        Table(
            "orders",
            "order",
            "orders",
            (
                _key("order_id"),
                _ref("customer_id", "customers(customer_id)"),
                Column(
                    "order_date", "TEXT", role="date", noun="order date", when="placed in {period}"
                ),
                Column(
                    "status",
                    "TEXT",
                    role="category",
                    noun="status",
                    plural="statuses",
                    where="with status '{value}'",
                ),
            ),
        ),
        Table(
            "order_items",
            "order item",
            "order items",
            (
                _key("order_item_id"),
                _ref("order_id", "orders(order_id)"),
                _ref("product_id", "products(product_id)"),
                Column(
                    "quantity",
                    _ID,
                    role="number",
                    noun="quantity",
                    additive=True,
                    above="with a quantity above {value}",
                    below="with a quantity below {value}",
                ),
                Column(
                    "unit_price",
                    "REAL",
                    role="number",
                    noun="unit price paid",
                    unit="$",
                    above="sold at more than {value} per unit",
                    below="sold at less than {value} per unit",
                ),
            ),
        ),
        Table(
            "reviews",
            "review",
            "reviews",
            (
                _key("review_id"),
                _ref("product_id", "products(product_id)"),
                _ref("customer_id", "customers(customer_id)"),
                Column(
                    "rating",
                    _ID,
                    role="number",
                    noun="rating",
                    above="rated above {value} stars",
                    below="rated below {value} stars",
                ),
                Column(
                    "review_date",
                    "TEXT",
                    role="date",
                    noun="review date",
                    when="written in {period}",
                ),
            ),
        ),
    ),
    relations=(
        Relation(
            "orders",
            "customer_id",
            "customers",
            child_of="placed by {parent}",
            parent_with="who placed {child}",
            parent_without="who have never placed an order",
            most="Which {parent} placed the most orders?",
        ),
        Relation(
            "order_items",
            "product_id",
            "products",
            child_of="for {parent}",
            parent_with="that appear in {child}",
            parent_without="that have never been ordered",
            most="Which {parent} appears in the most order items?",
        ),
        Relation(
            "order_items",
            "order_id",
            "orders",
            child_of="in {parent}",
            parent_with="that contain {child}",
        ),
        Relation(
            "reviews",
            "product_id",
            "products",
            child_of="of {parent}",
            parent_with="that received {child}",
            parent_without="that have no reviews",
            most="Which {parent} received the most reviews?",
        ),
        Relation(
            "reviews",
            "customer_id",
            "customers",
            child_of="written by {parent}",
            parent_with="who wrote {child}",
            parent_without="who have never written a review",
            most="Which {parent} wrote the most reviews?",
        ),
    ),
)

SCHOOL = Domain(
    name="school",
    description="a secondary school: teachers, students, courses and enrolments with scores",
    tables=(
        Table(
            "teachers",
            "teacher",
            "teachers",
            (
                _key("teacher_id"),
                *_person(),
                Column(
                    "department",
                    "TEXT",
                    role="category",
                    noun="department",
                    plural="departments",
                    where="in the {value} department",
                ),
                Column(
                    "hire_year",
                    _ID,
                    role="number",
                    noun="hire year",
                    above="hired after {value}",
                    below="hired before {value}",
                ),
                Column(
                    "salary",
                    _ID,
                    role="number",
                    noun="salary",
                    unit="$",
                    additive=True,
                    above="earning more than {value}",
                    below="earning less than {value}",
                ),
            ),
            label=("first_name", "last_name"),
            label_noun="first and last name",
            label_plural="first and last names",
        ),
        Table(
            "students",
            "student",
            "students",
            (
                _key("student_id"),
                *_person(),
                Column(
                    "grade_level",
                    _ID,
                    role="category",
                    noun="grade level",
                    plural="grade levels",
                    where="in grade {value}",
                ),
                Column(
                    "house",
                    "TEXT",
                    role="category",
                    noun="house",
                    plural="houses",
                    where="in the {value} house",
                ),
                Column(
                    "birth_date", "TEXT", role="date", noun="birth date", when="born in {period}"
                ),
            ),
            label=("first_name", "last_name"),
            label_noun="first and last name",
            label_plural="first and last names",
        ),
        Table(
            "courses",
            "course",
            "courses",
            (
                _key("course_id"),
                Column("title", "TEXT", role="label", noun="title"),
                Column(
                    "subject",
                    "TEXT",
                    role="category",
                    noun="subject",
                    plural="subjects",
                    where="in the subject {value}",
                ),
                _ref("teacher_id", "teachers(teacher_id)"),
                Column(
                    "credits",
                    _ID,
                    role="number",
                    noun="credits",
                    additive=True,
                    above="worth more than {value} credits",
                    below="worth fewer than {value} credits",
                ),
                Column("room", "TEXT"),
            ),
            label=("title",),
            label_noun="title",
            label_plural="titles",
        ),
        Table(
            "enrollments",
            "enrollment",
            "enrollments",
            (
                _key("enrollment_id"),
                _ref("student_id", "students(student_id)"),
                _ref("course_id", "courses(course_id)"),
                Column(
                    "term",
                    "TEXT",
                    role="category",
                    noun="term",
                    plural="terms",
                    where="in the {value} term",
                ),
                Column(
                    "score",
                    "REAL",
                    role="number",
                    noun="score",
                    above="with a score above {value}",
                    below="with a score below {value}",
                ),
            ),
        ),
    ),
    relations=(
        Relation(
            "courses",
            "teacher_id",
            "teachers",
            child_of="taught by {parent}",
            parent_with="who teach {child}",
            parent_without="who teach no course",
            most="Which {parent} teaches the most courses?",
        ),
        Relation(
            "enrollments",
            "student_id",
            "students",
            child_of="of {parent}",
            parent_with="with {child}",
            most="Which {parent} has the most enrollments?",
        ),
        Relation(
            "enrollments",
            "course_id",
            "courses",
            child_of="in {parent}",
            parent_with="with {child}",
            parent_without="that nobody has enrolled in",
            most="Which {parent} has the most enrollments?",
        ),
    ),
)

FLIGHTS = Domain(
    name="flights",
    description="European air travel: airports, airlines, scheduled flights, passengers "
    "and bookings",
    tables=(
        Table(
            "airports",
            "airport",
            "airports",
            (
                Column("airport_code", "TEXT", role="key"),
                Column("name", "TEXT", role="label", noun="name"),
                Column("city", "TEXT", role="text", noun="city"),
                Column(
                    "country",
                    "TEXT",
                    role="category",
                    noun="country",
                    plural="countries",
                    where="in {value}",
                ),
                Column("latitude", "REAL"),
                Column("longitude", "REAL"),
            ),
            label=("name",),
            label_noun="name",
            label_plural="names",
        ),
        Table(
            "airlines",
            "airline",
            "airlines",
            (
                _key("airline_id"),
                Column("name", "TEXT", role="label", noun="name"),
                Column("iata_code", "TEXT"),
                Column(
                    "country",
                    "TEXT",
                    role="category",
                    noun="country",
                    plural="countries",
                    where="based in {value}",
                ),
                Column(
                    "founded_year",
                    _ID,
                    role="number",
                    noun="founding year",
                    above="founded after {value}",
                    below="founded before {value}",
                ),
            ),
            label=("name",),
            label_noun="name",
            label_plural="names",
        ),
        Table(
            "flights",
            "flight",
            "flights",
            (
                Column("flight_number", "TEXT", role="key"),
                _ref("airline_id", "airlines(airline_id)"),
                Column("origin", "TEXT", role="ref", references="airports(airport_code)"),
                Column("destination", "TEXT", role="ref", references="airports(airport_code)"),
                Column("departure_time", "TEXT"),
                Column(
                    "duration_minutes",
                    _ID,
                    role="number",
                    noun="duration in minutes",
                    above="lasting more than {value} minutes",
                    below="lasting less than {value} minutes",
                ),
                Column(
                    "distance_km",
                    _ID,
                    role="number",
                    noun="distance in kilometres",
                    additive=True,
                    above="longer than {value} km",
                    below="shorter than {value} km",
                ),
                Column(
                    "aircraft",
                    "TEXT",
                    role="category",
                    noun="aircraft model",
                    plural="aircraft models",
                    where="with aircraft model {value}",
                ),
                Column(
                    "seats",
                    _ID,
                    role="number",
                    noun="number of seats",
                    additive=True,
                    above="with more than {value} seats",
                    below="with fewer than {value} seats",
                ),
            ),
            label=("flight_number",),
            label_noun="flight number",
            label_plural="flight numbers",
        ),
        Table(
            "passengers",
            "passenger",
            "passengers",
            (
                _key("passenger_id"),
                *_person(),
                Column(
                    "nationality",
                    "TEXT",
                    role="category",
                    noun="nationality",
                    plural="nationalities",
                    where="from {value}",
                ),
                Column(
                    "birth_year",
                    _ID,
                    role="number",
                    noun="birth year",
                    above="born after {value}",
                    below="born before {value}",
                ),
                Column(
                    "frequent_flyer_status",
                    "TEXT",
                    role="category",
                    noun="frequent flyer status",
                    plural="frequent flyer statuses",
                    where="with frequent flyer status '{value}'",
                ),
            ),
            label=("first_name", "last_name"),
            label_noun="first and last name",
            label_plural="first and last names",
        ),
        Table(
            "bookings",
            "booking",
            "bookings",
            (
                _key("booking_id"),
                Column("flight_number", "TEXT", role="ref", references="flights(flight_number)"),
                _ref("passenger_id", "passengers(passenger_id)"),
                Column(
                    "flight_date",
                    "TEXT",
                    role="date",
                    noun="flight date",
                    when="for flights in {period}",
                ),
                Column(
                    "seat_class",
                    "TEXT",
                    role="category",
                    noun="seat class",
                    plural="seat classes",
                    where="in {value} class",
                ),
                Column(
                    "price",
                    "REAL",
                    role="number",
                    noun="price",
                    unit="$",
                    additive=True,
                    above="costing more than {value}",
                    below="costing less than {value}",
                ),
                Column(
                    "checked_bags",
                    _ID,
                    role="number",
                    noun="number of checked bags",
                    additive=True,
                    above="with more than {value} checked bags",
                    below="with fewer than {value} checked bags",
                ),
            ),
        ),
    ),
    relations=(
        Relation(
            "flights",
            "airline_id",
            "airlines",
            child_of="operated by {parent}",
            parent_with="that operate {child}",
            most="Which {parent} operates the most flights?",
        ),
        Relation(
            "bookings",
            "flight_number",
            "flights",
            child_of="on {parent}",
            parent_with="with {child}",
            parent_without="that have no bookings",
            most="Which {parent} has the most bookings?",
        ),
        Relation(
            "bookings",
            "passenger_id",
            "passengers",
            child_of="made by {parent}",
            parent_with="who made {child}",
            parent_without="who have never booked a flight",
            most="Which {parent} made the most bookings?",
        ),
    ),
)

HOSPITAL = Domain(
    name="hospital",
    description="a hospital: departments, doctors, patients, appointments and prescriptions",
    tables=(
        Table(
            "departments",
            "department",
            "departments",
            (
                _key("department_id"),
                Column("name", "TEXT", role="label", noun="name"),
                Column(
                    "floor",
                    _ID,
                    role="category",
                    noun="floor",
                    plural="floors",
                    where="on floor {value}",
                ),
            ),
            label=("name",),
            label_noun="name",
            label_plural="names",
        ),
        Table(
            "doctors",
            "doctor",
            "doctors",
            (
                _key("doctor_id"),
                *_person(),
                _ref("department_id", "departments(department_id)"),
                Column(
                    "hire_year",
                    _ID,
                    role="number",
                    noun="hire year",
                    above="hired after {value}",
                    below="hired before {value}",
                ),
            ),
            label=("first_name", "last_name"),
            label_noun="first and last name",
            label_plural="first and last names",
        ),
        Table(
            "patients",
            "patient",
            "patients",
            (
                _key("patient_id"),
                *_person(),
                Column(
                    "sex",
                    "TEXT",
                    role="category",
                    noun="sex",
                    plural="sexes",
                    where="of sex '{value}'",
                ),
                Column(
                    "birth_year",
                    _ID,
                    role="number",
                    noun="birth year",
                    above="born after {value}",
                    below="born before {value}",
                ),
                Column(
                    "city",
                    "TEXT",
                    role="category",
                    noun="city",
                    plural="cities",
                    where="living in {value}",
                ),
                Column(
                    "blood_type",
                    "TEXT",
                    role="category",
                    noun="blood type",
                    plural="blood types",
                    where="with blood type {value}",
                ),
            ),
            label=("first_name", "last_name"),
            label_noun="first and last name",
            label_plural="first and last names",
        ),
        Table(
            "appointments",
            "appointment",
            "appointments",
            (
                _key("appointment_id"),
                _ref("patient_id", "patients(patient_id)"),
                _ref("doctor_id", "doctors(doctor_id)"),
                Column(
                    "appointment_date",
                    "TEXT",
                    role="date",
                    noun="appointment date",
                    when="held in {period}",
                ),
                Column(
                    "diagnosis",
                    "TEXT",
                    role="category",
                    noun="diagnosis",
                    plural="diagnoses",
                    where="with the diagnosis '{value}'",
                ),
                Column(
                    "fee",
                    "REAL",
                    role="number",
                    noun="fee",
                    unit="$",
                    additive=True,
                    above="with a fee above {value}",
                    below="with a fee below {value}",
                ),
            ),
        ),
        Table(
            "prescriptions",
            "prescription",
            "prescriptions",
            (
                _key("prescription_id"),
                _ref("appointment_id", "appointments(appointment_id)"),
                Column(
                    "medication",
                    "TEXT",
                    role="category",
                    noun="medication",
                    plural="medications",
                    where="for {value}",
                ),
                Column(
                    "dose_mg",
                    "REAL",
                    role="number",
                    noun="dose in mg",
                    above="with a dose above {value} mg",
                    below="with a dose below {value} mg",
                ),
                Column(
                    "days",
                    _ID,
                    role="number",
                    noun="duration in days",
                    additive=True,
                    above="lasting more than {value} days",
                    below="lasting fewer than {value} days",
                ),
            ),
        ),
    ),
    relations=(
        Relation(
            "doctors",
            "department_id",
            "departments",
            child_of="working in {parent}",
            parent_with="with {child}",
            most="Which {parent} has the most doctors?",
        ),
        Relation(
            "appointments",
            "patient_id",
            "patients",
            child_of="of {parent}",
            parent_with="who had {child}",
            parent_without="who have never had an appointment",
            most="Which {parent} had the most appointments?",
        ),
        Relation(
            "appointments",
            "doctor_id",
            "doctors",
            child_of="with {parent}",
            parent_with="who held {child}",
            most="Which {parent} held the most appointments?",
        ),
        Relation(
            "prescriptions",
            "appointment_id",
            "appointments",
            child_of="from {parent}",
            parent_with="that led to {child}",
        ),
    ),
)

LIBRARY = Domain(
    name="library",
    description="a public library: authors, books, members and loans",
    tables=(
        Table(
            "authors",
            "author",
            "authors",
            (
                _key("author_id"),
                *_person(),
                Column(
                    "country",
                    "TEXT",
                    role="category",
                    noun="country",
                    plural="countries",
                    where="from {value}",
                ),
                Column(
                    "birth_year",
                    _ID,
                    role="number",
                    noun="birth year",
                    above="born after {value}",
                    below="born before {value}",
                ),
            ),
            label=("first_name", "last_name"),
            label_noun="first and last name",
            label_plural="first and last names",
        ),
        Table(
            "books",
            "book",
            "books",
            (
                _key("book_id"),
                Column("title", "TEXT", role="label", noun="title"),
                _ref("author_id", "authors(author_id)"),
                Column(
                    "genre",
                    "TEXT",
                    role="category",
                    noun="genre",
                    plural="genres",
                    where="in the {value} genre",
                ),
                Column(
                    "publication_year",
                    _ID,
                    role="number",
                    noun="publication year",
                    above="published after {value}",
                    below="published before {value}",
                ),
                Column(
                    "pages",
                    _ID,
                    role="number",
                    noun="page count",
                    additive=True,
                    above="with more than {value} pages",
                    below="with fewer than {value} pages",
                ),
                Column(
                    "copies",
                    _ID,
                    role="number",
                    noun="number of copies",
                    additive=True,
                    above="with more than {value} copies",
                    below="with fewer than {value} copies",
                ),
            ),
            label=("title",),
            label_noun="title",
            label_plural="titles",
        ),
        Table(
            "members",
            "member",
            "members",
            (
                _key("member_id"),
                *_person(),
                Column(
                    "city",
                    "TEXT",
                    role="category",
                    noun="city",
                    plural="cities",
                    where="living in {value}",
                ),
                Column(
                    "join_date",
                    "TEXT",
                    role="date",
                    noun="join date",
                    when="who joined in {period}",
                ),
                Column(
                    "membership",
                    "TEXT",
                    role="category",
                    noun="membership type",
                    plural="membership types",
                    where="with a {value} membership",
                ),
            ),
            label=("first_name", "last_name"),
            label_noun="first and last name",
            label_plural="first and last names",
        ),
        Table(
            "loans",
            "loan",
            "loans",
            (
                _key("loan_id"),
                _ref("book_id", "books(book_id)"),
                _ref("member_id", "members(member_id)"),
                Column("loan_date", "TEXT", role="date", noun="loan date", when="made in {period}"),
                Column("due_date", "TEXT"),
                Column("return_date", "TEXT", nullable=True),
            ),
        ),
    ),
    relations=(
        Relation(
            "books",
            "author_id",
            "authors",
            child_of="written by {parent}",
            parent_with="who wrote {child}",
            most="Which {parent} wrote the most books?",
        ),
        Relation(
            "loans",
            "book_id",
            "books",
            child_of="of {parent}",
            parent_with="with {child}",
            parent_without="that have never been borrowed",
            most="Which {parent} was borrowed the most times?",
        ),
        Relation(
            "loans",
            "member_id",
            "members",
            child_of="made by {parent}",
            parent_with="who made {child}",
            parent_without="who have never borrowed a book",
            most="Which {parent} made the most loans?",
        ),
    ),
)

DOMAINS: dict[str, Domain] = {d.name: d for d in (RETAIL, SCHOOL, FLIGHTS, HOSPITAL, LIBRARY)}
"""Every database, by name."""
DOMAIN_NAMES: tuple[str, ...] = tuple(DOMAINS)


# ----------------------------------------------------------------------------- vocabulary


@cache
def vocabulary() -> dict[str, Any]:
    """The package's word lists and domain facts (``envs/data/sql_vocabulary.json``)."""
    source = resources.files("llmgym.envs") / "data" / "sql_vocabulary.json"
    return json.loads(source.read_text(encoding="utf-8"))


class _Draw:
    """A :class:`TaskRng` with the draws row generators need."""

    def __init__(self, *seed: object) -> None:
        self.rng = TaskRng("llmgym-sql-data", *seed)

    def int(self, low: int, high: int) -> int:
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
        return date.fromordinal(self.int(first.toordinal(), last.toordinal()))

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


def _retail_rows() -> Rows:
    words = vocabulary()
    shop = words["retail"]
    draw = _Draw("retail")
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
    products, names = [], set()
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
        stock = 0 if draw.chance(0.08) else draw.int(1, 400)
        products.append((len(products) + 1, name, category, brand, price, stock))
    popular_product = draw.skewed(products, 0.6)
    frequent_customer = draw.skewed([c[0] for c in customers], 0.6)
    orders, items, reviews = [], [], []
    for order_id in range(1, 1201):
        customer = frequent_customer()
        signup = date.fromisoformat(customers[customer - 1][6])
        day = draw.day(max(signup, date(2022, 1, 1)), date(2024, 6, 30))
        orders.append((order_id, customer, _iso(day), draw.weighted(shop["statuses"])))
        chosen: set[int] = set()
        for _ in range(draw.weighted(((1, 40), (2, 30), (3, 20), (4, 10)))):
            product = popular_product()
            if product[0] in chosen:
                continue
            chosen.add(product[0])
            quantity = draw.weighted(((1, 60), (2, 25), (3, 10), (5, 5)))
            discount = draw.weighted(((0.0, 75), (0.1, 15), (0.2, 10)))
            paid = round(product[4] * (1 - discount), 2)
            items.append((len(items) + 1, order_id, product[0], quantity, paid))
    quality = {p[0]: draw.int(2, 5) for p in products}
    for review_id in range(1, 701):
        product = popular_product()
        rating = min(5, max(1, quality[product[0]] + draw.weighted(((-1, 25), (0, 50), (1, 25)))))
        review_day = draw.day(date(2022, 1, 1), date(2024, 6, 30))
        reviews.append((review_id, product[0], frequent_customer(), rating, _iso(review_day)))
    return {
        "customers": customers,
        "products": products,
        "orders": orders,
        "order_items": items,
        "reviews": reviews,
    }


def _school_rows() -> Rows:
    words = vocabulary()
    school = words["school"]
    draw = _Draw("school")
    subjects = school["subjects"]
    teachers = []
    departments = sorted(subjects)
    for i, (first, last) in enumerate(draw.people(36), start=1):
        # two teachers per department first, so that every course has a teacher to draw from
        if i <= 2 * len(departments):
            department = departments[(i - 1) % len(departments)]
        else:
            department = draw.pick(departments)
        hired = draw.int(1994, 2023)
        salary = 38_000 + (2024 - hired) * 900 + draw.int(0, 40) * 250
        teachers.append((i, first, last, department, hired, salary))
    courses = []
    for subject in sorted(subjects):
        staff = [t[0] for t in teachers if t[3] == subject]
        for base in subjects[subject]:
            for level in school["levels"]:
                if level == "Advanced" and draw.chance(0.4):
                    continue
                title = f"{level} {base}"
                room = f"{draw.pick(school['rooms'])}{draw.int(1, 30)}"
                credits = draw.weighted(((2, 25), (3, 45), (4, 25), (5, 5)))
                courses.append((len(courses) + 1, title, subject, draw.pick(staff), credits, room))
    students, ability = [], {}
    for i, (first, last) in enumerate(draw.people(420), start=1):
        grade = draw.int(9, 12)
        born = draw.day(date(2017 - grade, 9, 1), date(2018 - grade, 8, 31))
        students.append((i, first, last, grade, draw.pick(school["houses"]), _iso(born)))
        ability[i] = draw.rng.uniform(-12, 12)
    difficulty = {
        c[0]: draw.rng.uniform(-6, 6) + (4 if c[1].startswith("Advanced") else 0) for c in courses
    }
    enrollments, seen = [], set()
    for student in students:
        for _ in range(draw.int(4, 7)):
            course = draw.pick(courses)
            term = draw.pick(school["terms"])
            if (student[0], course[0]) in seen:
                continue
            seen.add((student[0], course[0]))
            raw = 74 + ability[student[0]] - difficulty[course[0]] + draw.rng.uniform(-14, 14)
            score = round(min(100.0, max(20.0, raw)), 1)
            enrollments.append((len(enrollments) + 1, student[0], course[0], term, score))
    return {
        "teachers": teachers,
        "students": students,
        "courses": courses,
        "enrollments": enrollments,
    }


def _distance_km(a: Sequence[Any], b: Sequence[Any]) -> int:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[4], a[5], b[4], b[5]))
    h = math.sin((lat2 - lat1) / 2) ** 2
    h += math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return round(2 * 6371 * math.asin(math.sqrt(h)))


def _flights_rows() -> Rows:
    words = vocabulary()
    air = words["flights"]
    draw = _Draw("flights")
    airports = [tuple(a) for a in air["airports"]]
    airlines = [
        (i, name, code, country, draw.int(1950, 2015))
        for i, (name, code, country) in enumerate(air["airline_names"], start=1)
    ]
    flights = []
    for airline_id, _, code, country, _ in airlines:
        hub = next(a for a in airports if a[3] == country)
        destinations = draw.rng.sample([a for a in airports if a[0] != hub[0]], draw.int(6, 10))
        for number, destination in enumerate(destinations):
            distance = _distance_km(hub, destination)
            aircraft, seats = (
                draw.pick(air["aircraft"][:4]) if distance > 1200 else draw.pick(air["aircraft"])
            )
            duration = round(distance / 780 * 60 + 25 + draw.int(0, 15))
            hour, minute = draw.int(6, 20), draw.pick((0, 5, 15, 20, 30, 40, 45, 55))
            return_hour = (hour + duration // 60 + 1) % 24  # an hour on the ground, then back
            legs = ((hub, destination, hour), (destination, hub, return_hour))
            for leg, (origin, target, departure) in enumerate(legs):
                flights.append((
                    f"{code}{100 + number * 2 + leg}", airline_id, origin[0], target[0],
                    f"{departure:02d}:{minute:02d}", duration + draw.int(-5, 5), distance,
                    aircraft, seats,
                ))  # fmt: skip
    countries = sorted({a[3] for a in airports})
    nationality = draw.skewed(countries, 0.5)
    passengers = [
        (i, first, last, nationality(), draw.int(1945, 2006), draw.weighted(air["statuses"]))
        for i, (first, last) in enumerate(draw.people(500), start=1)
    ]
    busy_flight = draw.skewed(flights, 0.5)
    traveller = draw.skewed([p[0] for p in passengers], 0.5)
    multiplier = {"economy": 1.0, "premium economy": 1.7, "business": 3.2}
    bookings = []
    for booking_id in range(1, 2201):
        flight = busy_flight()
        seat_class = draw.weighted(air["seat_classes"])
        base = 35 + flight[6] * draw.rng.uniform(0.06, 0.14)
        price = round(base * multiplier[seat_class], 2)
        bags = draw.weighted(((0, 40), (1, 45), (2, 15)))
        day = draw.day(date(2024, 1, 1), date(2024, 12, 31))
        bookings.append((booking_id, flight[0], traveller(), _iso(day), seat_class, price, bags))
    return {
        "airports": airports,
        "airlines": airlines,
        "flights": flights,
        "passengers": passengers,
        "bookings": bookings,
    }


def _hospital_rows() -> Rows:
    words = vocabulary()
    care = words["hospital"]
    draw = _Draw("hospital")
    departments = [(i, name, floor) for i, (name, floor, _) in enumerate(care["departments"], 1)]
    diagnoses = {i: d[2] for i, d in enumerate(care["departments"], 1)}
    doctors = []
    for i, (first, last) in enumerate(draw.people(48), start=1):
        department = i if i <= len(departments) else draw.int(1, len(departments))
        doctors.append((i, first, last, department, draw.int(1990, 2023)))
    cities = [c[0] for c in words["cities"]]
    city_of = draw.skewed(cities, 0.9)
    patients = []
    for i, (first, last) in enumerate(draw.people(520), start=1):
        sex = draw.pick(("F", "M"))
        patients.append(
            (
                i,
                first,
                last,
                sex,
                draw.int(1935, 2022),
                city_of(),
                draw.weighted(care["blood_types"]),
            )
        )
    children = [p[0] for p in patients if p[4] >= 2008]
    adults = [p[0] for p in patients if p[4] < 2008]
    regular = draw.skewed(adults, 0.4)
    base_fee = {d[0]: 60 + 15 * draw.int(0, 8) for d in departments}
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
    prescriptions = []
    for appointment in appointments:
        for _ in range(draw.weighted(((0, 30), (1, 50), (2, 20)))):
            medication, dose = draw.pick(medications)
            dose_mg = float(dose * draw.pick((0.5, 1, 1, 1, 2)))
            days = draw.pick((3, 5, 7, 7, 10, 14, 30))
            prescriptions.append(
                (len(prescriptions) + 1, appointment[0], medication, dose_mg, days)
            )
    return {
        "departments": departments,
        "doctors": doctors,
        "patients": patients,
        "appointments": appointments,
        "prescriptions": prescriptions,
    }


def _library_rows() -> Rows:
    words = vocabulary()
    lib = words["library"]
    draw = _Draw("library")
    countries = sorted({c[1] for c in words["cities"]})
    authors = [
        (i, first, last, draw.pick(countries), draw.int(1900, 1995))
        for i, (first, last) in enumerate(draw.people(90), start=1)
    ]
    genres = lib["genres"]
    favourite = {a[0]: draw.rng.sample(genres, 2) for a in authors}
    prolific = draw.skewed(authors, 0.7)
    books, titles = [], set()
    while len(books) < 320:
        pattern = draw.pick(lib["title_patterns"])
        noun, noun2 = draw.rng.sample(lib["title_nouns"], 2)
        title = pattern.format(adjective=draw.pick(lib["title_adjectives"]), noun=noun, noun2=noun2)
        if title in titles:
            continue
        titles.add(title)
        author = prolific()
        year = draw.int(max(author[4] + 22, 1950), min(author[4] + 85, 2023))
        books.append((
            len(books) + 1, title, author[0], draw.pick(favourite[author[0]]), year,
            draw.int(90, 880), draw.weighted(((1, 45), (2, 30), (3, 15), (5, 10))),
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
            returned = _iso(
                start
                + timedelta(days=draw.weighted(((7, 30), (14, 35), (20, 20), (28, 10), (40, 5))))
            )
        loans.append((loan_id, book[0], member[0], _iso(start), _iso(due), returned))
    return {"authors": authors, "books": books, "members": members, "loans": loans}


_GENERATORS: dict[str, Callable[[], Rows]] = {
    "retail": _retail_rows,
    "school": _school_rows,
    "flights": _flights_rows,
    "hospital": _hospital_rows,
    "library": _library_rows,
}


@cache
def generate_rows(name: str) -> Rows:
    """The rows of database ``name``, table by table (deterministic)."""
    return _GENERATORS[name]()


_BUILD_LOCK = threading.Lock()
_MASTERS: dict[str, sqlite3.Connection] = {}


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

    Its statement cache holds 1,024 statements, more than a database has questions, so that
    replayed queries skip parsing.
    """
    copy = sqlite3.connect(":memory:", check_same_thread=False, cached_statements=1024)
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
