"""WebShop's reward (``web_agent_site/engine/goal.py:get_reward``), ported for its original data.

The reward of buying a product with some options selected is WebShop's

    (attribute matches + option matches + price ok) / (goal attributes + goal options + 1) * r_type

with its own matching rules:

* an attribute matches when one of the product's attributes scores above 85 by thefuzz's
  ``token_set_ratio`` against it, else when it is a substring of the product's title, bullet
  points or description (lower case);
* an option matches when one selected option value scores above 85 against it, both first
  reduced by WebShop's ``normalize_color`` (the first of its colour words found in the value);
* the price is ok when the product's price is at most the goal's ``price_upper``;
* ``r_type`` compares the goal product's name with the bought one's by their nouns (spaCy's
  part-of-speech tags), their query and their category path (:func:`type_reward`).

``token_set_ratio`` is thefuzz 0.19.0's (the version WebShop's ``requirements.txt`` pins), in its
pure-Python form — :class:`difflib.SequenceMatcher` ratios, rounded to integers — which is what
that version runs without the optional python-Levenshtein, which WebShop does not install.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache

from llmgym.envs.webshop.goals import Score

__all__ = [
    "COLOR_SET",
    "OriginalGoal",
    "TypeTagger",
    "normalize_color",
    "score_original",
    "token_set_ratio",
    "type_reward",
    "type_tagger",
]

COLOR_SET = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure",
    "banana", "beige", "black", "blue", "blush", "bordeaux", "bronze",
    "brown", "burgundy", "camel", "camo", "caramel", "champagne",
    "charcoal", "cheetah", "chestnut", "chocolate", "christmas", "coffee",
    "cognac", "copper", "coral", "cranberry", "cream", "crystal", "dark",
    "denim", "eggplant", "elephant", "espresso", "fuchsia", "gold", "granite",
    "grape", "graphite", "grass", "gray", "green", "grey", "heather", "indigo",
    "ivory", "ivy", "khaki", "lavender", "lemon", "leopard", "light", "lilac",
    "lime", "magenta", "maroon", "mauve", "merlot", "midnight", "mint", "mocha",
    "multicolor", "mushroom", "mustard", "natural", "navy", "nude", "olive",
    "orange", "peach", "pewter", "pink", "plum", "purple", "rainbow", "red",
    "rose", "royal", "rust", "sand", "sapphire", "seashell", "silver", "skull",
    "slate", "steel", "stone", "stonewash", "sunflower", "tan", "taupe", "teal",
    "tiger", "turquoise", "violet", "walnut", "wheat", "white", "wine", "yellow",
)  # fmt: skip
"""WebShop's colour words, in its order (``web_agent_site/engine/normalize.py``)."""

MATCH_THRESHOLD = 85
"""A fuzzy score above this is a match (WebShop's ``score > 85``)."""

GoalOption = str | tuple[str, str]
"""A goal option: a value (human instructions) or a ``(name, value)`` pair (synthetic goals,
which WebShop scores as the pair itself, as its ``dict.items()`` hands them over)."""


@dataclass(frozen=True)
class OriginalGoal:
    """One of WebShop's goals, with what its reward compares.

    Attributes:
        asin: The product the instruction was written for.
        name: That product's name (``r_type`` compares it with the bought product's).
        query: That product's search query (WebShop's ``query``, lower case).
        product_category: That product's category path, ``"A › B › C"``.
        instruction: The instruction text the agent sees, with the price cap.
        attributes: The attributes the instruction asks for.
        options: The options it asks for (:data:`GoalOption`).
        price_upper: The price cap (1,000,000 where WebShop states none).
    """

    asin: str
    name: str
    query: str
    product_category: str
    instruction: str
    attributes: tuple[str, ...]
    options: tuple[GoalOption, ...]
    price_upper: float

    def instance_key(self) -> str:
        """A string identifying the goal's content."""
        return f"{self.asin}|{self.instruction}|{self.options}"


# ---------------------------------------------------------------------------- thefuzz 0.19.0
_NON_WORD = re.compile(r"(?ui)\W")
_LATIN1 = {code: None for code in range(128, 256)}


def _full_process(value: object) -> str:
    """thefuzz's ``full_process(s, force_ascii=True)``: the text of ``value`` (``str()`` of a
    non-string) without the characters 128-255, non-word characters as spaces, trimmed, lower
    case."""
    text = str(value).translate(_LATIN1)
    return _NON_WORD.sub(" ", text).strip().lower()


def _ratio(first: str, second: str) -> int:
    """thefuzz's ``ratio``: SequenceMatcher's ratio in percent, rounded (equal strings 100,
    an empty one 0)."""
    if first == second:
        return 100
    if not first or not second:
        return 0
    return round(100 * SequenceMatcher(None, first, second).ratio())


def token_set_ratio(first: object, second: object) -> int:
    """thefuzz 0.19.0's ``token_set_ratio``: the best ratio between the sorted shared words and
    the shared words followed by each side's own words (0 to 100)."""
    if first is None or second is None:
        return 0
    words_1, words_2 = _full_process(first), _full_process(second)
    if not words_1 or not words_2:
        return 0
    tokens_1, tokens_2 = set(words_1.split()), set(words_2.split())
    shared = " ".join(sorted(tokens_1 & tokens_2))
    only_1 = " ".join(sorted(tokens_1 - tokens_2))
    only_2 = " ".join(sorted(tokens_2 - tokens_1))
    combined_1 = f"{shared} {only_1}".strip()
    combined_2 = f"{shared} {only_2}".strip()
    shared = shared.strip()
    return max(
        _ratio(shared, combined_1), _ratio(shared, combined_2), _ratio(combined_1, combined_2)
    )


def normalize_color(option: GoalOption) -> GoalOption:
    """WebShop's ``normalize_color``: the first colour word found in the value (for a
    ``(name, value)`` pair, a colour word equal to one of its two parts), else the option."""
    for color in COLOR_SET:
        if color in option:
            return color
    return option


# ---------------------------------------------------------------------------- the type reward
TypeTagger = Callable[[str], list[str]]
"""The nouns of a product name, lower case, in order, repeats kept."""

_SPACY_MODELS = ("en_core_web_sm", "en_core_web_lg")
_NOUN_TAGS = ("PNOUN", "NOUN", "PROPN")
_TOKEN = re.compile(r"[^\W_]+(?:['.-][^\W_]+)*", re.UNICODE)
_FUNCTION_WORDS_TEXT = """
a about above across after against all along also am among an and any are around as at be been
before behind below beneath beside between beyond both but by can could did do does down during
each either every few for from had has have he her here hers him his how i if in inside into is
it its itself just may me might more most much must my near neither no nor not of off on once one
only onto or other our out outside over own per plus same she should since so some such than that
the their them then there these they this those though three through throughout to too toward
towards two under until up upon us very via was we were what when where which while who whom
whose why will with within without would yet you your new best great good high top easy extra
super ultra premium small large big long short
"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())


@cache
def type_tagger() -> tuple[str, TypeTagger]:
    """The noun finder of the type reward and its name.

    WebShop keeps the tokens spaCy's English model tags ``NOUN`` or ``PROPN`` (WebShop loads
    ``en_core_web_sm``, AgentGym's copy ``en_core_web_lg``). Where spaCy and one of those models
    are installed they are used (``"spacy:<model>"``); otherwise (``"words"``) every word that
    is not a number or one of a fixed list of function words and common adjectives counts as a
    noun, which keeps more words than spaCy does, so ``r_type`` of a product other than the
    goal's can differ from WebShop's."""
    installed = [model for model in _SPACY_MODELS if importlib.util.find_spec(model) is not None]
    if installed:  # importing spaCy takes seconds: only where a model is there to load
        import spacy

        nlp = spacy.load(installed[0])

        def nouns(text: str) -> list[str]:
            return [t.text.lower() for t in nlp(text) if t.pos_ in _NOUN_TAGS]

        return f"spacy:{installed[0]}", nouns

    def words(text: str) -> list[str]:
        tokens = (token.lower() for token in _TOKEN.findall(text))
        return [t for t in tokens if t not in _FUNCTION_WORDS and not t[:1].isdigit()]

    return "words", words


def _category_parts(path: str) -> set[str]:
    return {part.strip() for part in path.split("›")}


def type_reward(
    goal: OriginalGoal, name: str, query: str, product_category: str, tagger: TypeTagger
) -> float:
    """WebShop's ``get_type_reward``: 1 when the query or two category levels match or over a
    fifth of the goal name's nouns are in the product's name; 0.5 otherwise; 0.1 when under a
    tenth of them are; 0 when none is (a name without nouns scores 0.2)."""
    query_match = query == goal.query
    category_match = len(_category_parts(product_category) & _category_parts(goal.product_category))
    bought, wanted = tagger(name), tagger(goal.name)
    title_score = len(set(bought) & set(wanted)) / len(wanted) if wanted else 0.2
    r_type = 1.0 if query_match or category_match >= 2 or title_score > 0.2 else 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type


# ---------------------------------------------------------------------------- the reward
def _attribute_matches(
    goal: OriginalGoal, attributes: Sequence[str], title: str, bullets: str, description: str
) -> int:
    matches = 0
    for wanted in goal.attributes:
        if any(token_set_ratio(have, wanted) > MATCH_THRESHOLD for have in attributes) or (
            wanted in title.lower() or wanted in bullets.lower() or wanted in description.lower()
        ):
            matches += 1
    return matches


def _option_matches(goal: OriginalGoal, selected: Sequence[str]) -> int:
    chosen = [normalize_color(value) for value in selected]
    matches = 0
    for wanted in (normalize_color(option) for option in goal.options):
        if any(token_set_ratio(have, wanted) > MATCH_THRESHOLD for have in chosen):
            matches += 1
    return matches


def score_original(
    goal: OriginalGoal,
    *,
    name: str,
    query: str,
    product_category: str,
    attributes: Sequence[str],
    bullet_points: Sequence[str],
    description: str,
    price: float,
    selected: Sequence[str],
) -> Score:
    """WebShop's ``get_reward`` of buying the product described by the keyword arguments for
    ``price`` with the option values ``selected``, as :class:`~.goals.Score` parts (whose
    ``reward`` is WebShop's total)."""
    _, tagger = type_tagger()
    return Score(
        r_type=type_reward(goal, name, query, product_category, tagger),
        attribute_matches=_attribute_matches(
            goal, attributes, name, " ".join(bullet_points), description
        ),
        n_attributes=len(goal.attributes),
        option_matches=_option_matches(goal, selected),
        n_options=len(goal.options),
        price_ok=price <= goal.price_upper,
    )
