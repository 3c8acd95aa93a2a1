"""The shop's catalogue: llmgym's own vocabulary data and a deterministic product generator.

Everything here is a pure function of the vocabulary files in ``envs/data/webshop/`` and a seed:
product ``i`` of catalogue ``seed`` is drawn from its own :class:`~llmgym.core.TaskRng` stream, so
the same catalogue is generated on any machine and Python version.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import Any

from llmgym.core.fulltext import words
from llmgym.core.tasks import TaskRng

__all__ = [
    "GENERATOR_VERSION",
    "OptionGroup",
    "Product",
    "ProductType",
    "Review",
    "Vocabulary",
    "generate_product",
    "join_words",
    "load_vocabulary",
    "make_asin",
    "words",
]

GENERATOR_VERSION = 1
"""Bump when the generator changes the catalogue it produces (part of the cache key)."""

_AUDIENCE_WORDS = frozenset({"men", "women", "kids", "s", "unisex"})


@dataclass(frozen=True)
class OptionGroup:
    """A kind of option (``size``, ``color``, ...) and the values one product type draws from."""

    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class ProductType:
    """One kind of product (``men's cargo shorts``) with its attribute and option vocabulary."""

    name: str
    path: tuple[str, ...]
    qualities: tuple[str, ...]
    features: tuple[str, ...]
    options: tuple[OptionGroup, ...]
    price: tuple[float, float]
    uses: tuple[str, ...]

    @cached_property
    def plural(self) -> bool:
        """Whether the name is a plural noun (``shorts``) rather than a singular one (``dress``)."""
        last = self.name.split()[-1]
        return last.endswith("s") and not last.endswith("ss")

    @cached_property
    def type_words(self) -> frozenset[str]:
        """The words that name the type, without audience words (``cargo``, ``shorts``)."""
        return frozenset(words(self.name)) - _AUDIENCE_WORDS

    @property
    def attributes(self) -> tuple[str, ...]:
        return self.qualities + self.features


@dataclass(frozen=True)
class Vocabulary:
    """The word lists and templates the catalogue and the instructions are generated from."""

    types: tuple[ProductType, ...]
    templates: dict[str, Any]
    option_phrases: dict[str, tuple[str, ...]]
    digest: str

    @cached_property
    def types_by_name(self) -> dict[str, ProductType]:
        return {product_type.name: product_type for product_type in self.types}

    @cached_property
    def brands(self) -> tuple[str, ...]:
        """Every brand name the syllable lists make, in a fixed order."""
        starts, ends = self.templates["brand_starts"], self.templates["brand_ends"]
        return tuple(sorted({(start + end).capitalize() for start in starts for end in ends}))


@cache
def load_vocabulary() -> Vocabulary:
    """Read the package's vocabulary files once (``envs/data/webshop/*.json``)."""
    folder = resources.files("llmgym.envs") / "data" / "webshop"
    raw = {
        name: (folder / f"{name}.json").read_bytes() for name in ("types", "options", "templates")
    }
    options = json.loads(raw["options"])
    pools = {
        key: OptionGroup(pool["group"], tuple(pool["values"]))
        for key, pool in options["pools"].items()
    }
    types = tuple(
        ProductType(
            name=row["name"],
            path=tuple(row["path"]),
            qualities=tuple(row["q"]),
            features=tuple(row["f"]),
            options=tuple(pools[key] for key in row["options"]),
            price=(float(row["price"][0]), float(row["price"][1])),
            uses=tuple(row["uses"]),
        )
        for row in json.loads(raw["types"])["types"]
    )
    digest = hashlib.sha256(b"\0".join(raw[k] for k in sorted(raw))).hexdigest()[:12]
    phrases = {group: tuple(forms) for group, forms in options["groups"].items()}
    return Vocabulary(types, json.loads(raw["templates"]), phrases, digest)


@dataclass(frozen=True)
class Review:
    """One customer review: stars out of five and its text."""

    stars: int
    text: str


@dataclass(frozen=True)
class Product:
    """One product of the catalogue, as stored in the shop's database."""

    id: int
    asin: str
    product_type: str
    brand: str
    title: str
    category: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    price: float
    rating: float | None
    rating_count: int
    description: str
    features: tuple[str, ...]
    reviews: tuple[Review, ...]

    @cached_property
    def option_values(self) -> dict[str, str]:
        """Each offered option value -> the name of its group (values are unique per product)."""
        return {value: name for name, values in self.options for value in values}

    @cached_property
    def title_words(self) -> frozenset[str]:
        """The words of the title (for WebShop's title-overlap type check)."""
        return frozenset(words(self.title))

    @cached_property
    def full_text(self) -> str:
        """Title, features and description, lower case with single spaces (attribute checks)."""
        text = " ".join((self.title, *self.features, self.description)).lower()
        return " " + " ".join(words(text)) + " "

    def to_json(self) -> str:
        """The fields that are not stored in their own database columns, as JSON."""
        return json.dumps(
            {
                "type": self.product_type,
                "brand": self.brand,
                "category": self.category,
                "attributes": self.attributes,
                "options": self.options,
                "rating": self.rating,
                "rating_count": self.rating_count,
                "description": self.description,
                "features": self.features,
                "reviews": [(review.stars, review.text) for review in self.reviews],
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_row(cls, row_id: int, asin: str, title: str, price: float, data: str) -> Product:
        """Rebuild a product from its database row."""
        fields = json.loads(data)
        return cls(
            id=row_id,
            asin=asin,
            product_type=fields["type"],
            brand=fields["brand"],
            title=title,
            category=tuple(fields["category"]),
            attributes=tuple(fields["attributes"]),
            options=tuple((name, tuple(values)) for name, values in fields["options"]),
            price=price,
            rating=fields["rating"],
            rating_count=fields["rating_count"],
            description=fields["description"],
            features=tuple(fields["features"]),
            reviews=tuple(Review(stars, text) for stars, text in fields["reviews"]),
        )


_ASIN_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ASIN_SPACE = 36**8


def _grammar(product_type: ProductType) -> dict[str, str]:
    plural = product_type.plural
    return {
        "it": "they" if plural else "it",
        "them": "them" if plural else "it",
        "It": "They" if plural else "It",
        "is": "are" if plural else "is",
        "has": "have" if plural else "has",
        "this": "these" if plural else "this",
        "s": "" if plural else "s",
    }


def join_words(items: list[str] | tuple[str, ...], conjunction: str = "and") -> str:
    """``[a, b, c]`` -> ``"a, b and c"``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


def _title_case(text: str, acronyms: frozenset[str] = frozenset()) -> str:
    """``usb-c fast charging`` -> ``USB-C Fast Charging``; ``built-in`` -> ``Built-in``."""
    return " ".join(
        word.upper() if word.split("-")[0] in acronyms else word[:1].upper() + word[1:]
        for word in text.split()
    )


def make_asin(seed: int, index: int) -> str:
    """The product id of product ``index``: ``B0`` and eight base-36 digits, distinct for every
    index below 36**8 (an affine bijection of the index, so it looks random but never repeats)."""
    mixer = TaskRng("webshop-asin", seed)
    multiplier = 6 * mixer.randbelow(_ASIN_SPACE // 6) + 1  # coprime to 36 = 2*2*3*3
    value = (index * multiplier + mixer.randbelow(_ASIN_SPACE)) % _ASIN_SPACE
    digits = []
    for _ in range(8):
        value, digit = divmod(value, 36)
        digits.append(_ASIN_ALPHABET[digit])
    return "B0" + "".join(reversed(digits))


def generate_product(vocabulary: Vocabulary, seed: int, index: int) -> Product:
    """Product ``index`` (0-based) of the catalogue ``seed``; its database id is ``index + 1``."""
    rng = TaskRng("webshop-catalogue", GENERATOR_VERSION, vocabulary.digest, seed, index)
    product_type = rng.choice(vocabulary.types)
    templates = vocabulary.templates
    asin = make_asin(seed, index)
    brand_pool = TaskRng("webshop-brands", vocabulary.digest, seed, product_type.name).sample(
        vocabulary.brands, 8
    )
    brand = rng.choice(brand_pool)
    attributes = rng.sample(product_type.attributes, rng.randint(3, 5))
    qualities = [a for a in attributes if a in product_type.qualities]
    features = [a for a in attributes if a in product_type.features]
    uses = rng.sample(product_type.uses, 2)
    grammar = _grammar(product_type)
    fill = {**grammar, "brand": brand, "type": product_type.name, "use": uses[0], "use2": uses[1]}

    options = []
    for group in product_type.options:
        count = rng.randint(2, min(7, len(group.values)))
        chosen = set(rng.sample(group.values, count))
        options.append((group.name, tuple(v for v in group.values if v in chosen)))

    low, high = product_type.price
    price = max(1.99, round(rng.uniform(low, high)) - rng.choice((0.01, 0.01, 0.05, 0.51)))
    rating = None if rng.random() < 0.12 else round(rng.uniform(2.8, 5.0), 1)
    rating_count = 0 if rating is None else rng.randint(3, 4800)

    title = _title(rng, templates, product_type, brand, qualities, features, uses[0])
    description = _description(rng, templates, fill, qualities, features)
    bullets = []
    for attribute in attributes:
        kind = "quality_bullets" if attribute in qualities else "feature_bullets"
        bullet = rng.choice(templates[kind])
        bullets.append(bullet.format(**fill, ATTR=attribute.upper(), attr=attribute))
    reviews = _reviews(rng, templates, fill, rating, attributes)
    return Product(
        id=index + 1,
        asin=asin,
        product_type=product_type.name,
        brand=brand,
        title=title,
        category=product_type.path,
        attributes=tuple(attributes),
        options=tuple(options),
        price=float(price),
        rating=rating,
        rating_count=rating_count,
        description=description,
        features=tuple(bullets),
        reviews=reviews,
    )


def _title(
    rng: TaskRng,
    templates: dict[str, Any],
    product_type: ProductType,
    brand: str,
    qualities: list[str],
    features: list[str],
    use: str,
) -> str:
    shown_qualities = qualities[: rng.randint(1, 2)] if qualities else []
    shown_features = features[: rng.randint(1, 2)] if features else []
    if shown_qualities and shown_features:
        forms = templates["titles_qf"]
    elif shown_qualities:
        forms = templates["titles_q"]
    else:
        forms = templates["titles_f"]
    acronyms = frozenset(templates["acronyms"])
    return rng.choice(forms).format(
        brand=brand,
        Type=_title_case(product_type.name, acronyms),
        quals=_title_case(" ".join(shown_qualities), acronyms),
        feats=_title_case(" and ".join(shown_features), acronyms),
        Use=_title_case(use, acronyms),
    )


def _description(
    rng: TaskRng,
    templates: dict[str, Any],
    fill: dict[str, str],
    qualities: list[str],
    features: list[str],
) -> str:
    kind = "both" if qualities and features else "quals" if qualities else "feats"
    sentence = rng.choice(templates["attribute_sentences"][kind]).format(
        **fill, quals=join_words(qualities), feats=join_words(features)
    )
    opening = rng.choice(templates["openings"]).format(**fill)
    closer = rng.choice(templates["closers"]).format(**fill)
    return f"{opening} {sentence[0].upper()}{sentence[1:]} {closer}"


def _reviews(
    rng: TaskRng,
    templates: dict[str, Any],
    fill: dict[str, str],
    rating: float | None,
    attributes: list[str],
) -> tuple[Review, ...]:
    if rating is None:
        return ()
    reviews = []
    for _ in range(rng.randint(1, 3)):
        stars = min(5, max(1, round(rating + rng.uniform(-1.5, 1.0))))
        kind = "reviews_good" if stars >= 4 else "reviews_mixed" if stars == 3 else "reviews_bad"
        text = rng.choice(templates[kind]).format(**fill, attr=rng.choice(attributes))
        reviews.append(Review(stars, text[0].upper() + text[1:]))
    return tuple(reviews)
