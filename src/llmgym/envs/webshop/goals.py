"""Shopping goals drawn from target products, their instructions, and WebShop's reward formula."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from llmgym.core.tasks import TaskRng
from llmgym.envs.webshop.catalogue import Product, Vocabulary, join_words, words

__all__ = ["Goal", "Score", "make_goal", "score_purchase"]


@dataclass(frozen=True)
class Goal:
    """What the instruction asks for: a product type, attributes, option values and a price cap.

    Attributes:
        target: The asin of the product the goal was drawn from (it satisfies every part).
        product_type: The type the buyer wants, e.g. ``men's cargo shorts``.
        category: The type's category path, e.g. ``("Clothing", "Men", "Shorts")``.
        attributes: Attribute phrases the product must have, e.g. ``("elastic waist",)``.
        options: ``(group, value)`` pairs to select, e.g. ``(("size", "large"),)``.
        price_cap: The price must be at most this (the instruction says "lower than").
        instruction: The goal in words.
    """

    target: str
    product_type: str
    category: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    price_cap: float
    instruction: str

    def instance_key(self) -> str:
        """A string identifying the goal's content."""
        return f"{self.target}|{self.instruction}"


@dataclass(frozen=True)
class Score:
    """The parts of WebShop's reward for one purchase.

    ``reward = (attribute_matches + option_matches + price_ok) / (n_attributes + n_options + 1)
    * r_type``.
    """

    r_type: float
    attribute_matches: int
    n_attributes: int
    option_matches: int
    n_options: int
    price_ok: bool

    @property
    def reward(self) -> float:
        matched = self.attribute_matches + self.option_matches + int(self.price_ok)
        return matched / (self.n_attributes + self.n_options + 1) * self.r_type

    def as_dict(self) -> dict[str, Any]:
        """The parts and the reward, JSON-ready."""
        return {**asdict(self), "reward": self.reward}


def make_goal(
    product: Product,
    vocabulary: Vocabulary,
    rng: TaskRng,
    *,
    n_attributes: int,
    n_options: int,
) -> Goal:
    """A goal that ``product`` satisfies exactly, phrased with one of the instruction templates."""
    product_type = vocabulary.types_by_name[product.product_type]
    attributes = rng.sample(product.attributes, min(n_attributes, len(product.attributes)))
    groups = rng.sample(product.options, min(n_options, len(product.options)))
    order = {name: i for i, (name, _) in enumerate(product.options)}
    groups.sort(key=lambda group: order[group[0]])
    options = tuple((name, rng.choice(values)) for name, values in groups)
    price_cap = _price_cap(product.price, rng)

    qualities = [a for a in attributes if a in product_type.qualities]
    features = [a for a in attributes if a not in product_type.qualities]
    desc = product_type.name
    if qualities:
        desc = f"{', '.join(qualities)} {desc}"
    if features:
        desc = f"{desc} with {join_words(features)}"
    article = "" if product_type.plural else _indefinite_article(desc) + " "
    templates = vocabulary.templates
    instruction = rng.choice(templates["instructions"]).format(
        desc=desc,
        a_desc=article + desc,
        options=_options_phrase(options, vocabulary, rng),
        price=f"{price_cap:.2f}",
    )
    return Goal(
        target=product.asin,
        product_type=product.product_type,
        category=product.category,
        attributes=tuple(attributes),
        options=options,
        price_cap=price_cap,
        instruction=instruction,
    )


def _indefinite_article(phrase: str) -> str:
    """``a`` or ``an`` by the sound of the first word (``an organic``, ``a universal``)."""
    if phrase.startswith(("uni", "use", "usa", "eu", "one")):
        return "a"
    return "an" if phrase[:1] in ("a", "e", "i", "o", "u") else "a"


def _price_cap(price: float, rng: TaskRng) -> float:
    """A round budget above ``price``: 10 to 60 percent more, rounded up to 5 or 10 dollars."""
    budget = price * rng.uniform(1.1, 1.6)
    step = 5 if budget < 50 else 10
    return float(math.ceil(budget / step) * step)


def _options_phrase(
    options: tuple[tuple[str, str], ...], vocabulary: Vocabulary, rng: TaskRng
) -> str:
    """``" in navy blue and in size large"`` or, WebShop's terser style, ``", with color: navy
    blue and size: large"``."""
    if not options:
        return ""
    if rng.random() < 0.3:
        generic = vocabulary.templates["option_generic"]
        return ", with " + join_words([generic.format(group=g, value=v) for g, v in options])
    phrases = vocabulary.option_phrases
    return " " + join_words([rng.choice(phrases[g]).format(value=v) for g, v in options])


def score_purchase(
    goal: Goal, product: Product, selected: dict[str, str], vocabulary: Vocabulary
) -> Score:
    """WebShop's reward parts for buying ``product`` with the ``selected`` options.

    * ``r_type``: 1 when the product is of the goal's type. Otherwise WebShop's graded rule on
      the overlap of the type's words with the product's title: 0 without overlap, 0.1 for a
      weak one, 0.5 when the categories share two levels or the overlap is above 0.2. (WebShop
      grants a full 1 in the last case; our catalogue knows every product's true type, so a
      different product type never earns the full reward.)
    * attributes: a goal attribute matches when the product has it, or when the phrase appears
      in its title, features or description.
    * options: a goal option matches when its value is among the selected option values.
    * price: the product's price is at most the goal's cap.
    """
    return Score(
        r_type=_type_reward(goal, product, vocabulary),
        attribute_matches=sum(
            1
            for attribute in goal.attributes
            if attribute in product.attributes
            or f" {' '.join(words(attribute))} " in product.full_text
        ),
        n_attributes=len(goal.attributes),
        option_matches=sum(1 for _, value in goal.options if value in selected.values()),
        n_options=len(goal.options),
        price_ok=product.price <= goal.price_cap,
    )


def _type_reward(goal: Goal, product: Product, vocabulary: Vocabulary) -> float:
    if product.product_type == goal.product_type:
        return 1.0
    wanted = vocabulary.types_by_name[goal.product_type].type_words
    title_score = len(wanted & product.title_words) / len(wanted) if wanted else 0.2
    category_match = len(set(goal.category) & set(product.category)) >= 2
    if title_score == 0.0:
        return 0.0
    if title_score < 0.1:
        return 0.1
    return 0.5 if category_match or title_score > 0.2 else 0.1
