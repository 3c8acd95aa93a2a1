"""WebShop: find and buy the product an instruction describes in a generated, offline web shop."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np

from llmgym.core import EnvConfig, Task, TaskIdRange, TextEnv, Transition, knob
from llmgym.core.text import normalize_command
from llmgym.envs.webshop import pages
from llmgym.envs.webshop.catalogue import Product, load_vocabulary
from llmgym.envs.webshop.goals import Goal, Score, make_goal, score_purchase
from llmgym.envs.webshop.original import GOAL_SETS, OriginalShop, load_shop
from llmgym.envs.webshop.original_reward import (
    MATCH_THRESHOLD,
    OriginalGoal,
    normalize_color,
    score_original,
    token_set_ratio,
    type_tagger,
)
from llmgym.envs.webshop.store import Shop, search_terms
from llmgym.errors import ConfigError
from llmgym.originals import GENERATED, data_dir_knob, data_dir_of, source_knob

__all__ = ["WebShopConfig", "WebShopEnv"]

_ACTION = re.compile(r"^(search|click)\s*\[(.*)\]$", re.DOTALL)
_MAX_ACTION_LENGTH = 1_000
_MAX_QUERY_LENGTH = 300
_ORACLE_PAGES = 2


@dataclass(frozen=True)
class WebShopConfig(EnvConfig):
    """Difficulty knobs of :class:`WebShopEnv`."""

    observation_mode: str = knob(
        "simple",
        choices=("simple", "html"),
        doc="'simple': WebShop's text mode, the page's visible strings joined by ' [SEP] '; "
        "'html': the raw HTML page.",
    )
    goal_attributes: int = knob(
        2, low=0, high=5, doc="Attributes the instruction asks for (fewer if the target has fewer)."
    )
    goal_options: int = knob(
        2,
        low=0,
        high=3,
        doc="Options (size, color, flavor, ...) the instruction asks to select (fewer if the "
        "target offers fewer kinds).",
    )
    results_per_page: int = knob(10, low=1, high=25, doc="Search results shown per page.")
    max_results: int = knob(
        50, low=1, high=200, doc="Search results kept (WebShop keeps the top 50)."
    )
    catalogue_size: int = knob(
        10_000,
        low=1_000,
        high=100_000,
        doc="Products in the shop; each new (size, seed) is generated once and cached on disk.",
    )
    catalogue_seed: int = knob(
        0, low=0, high=2**31 - 1, doc="Seed of the generated catalogue (a different shop)."
    )
    show_actions: bool = knob(
        False, doc="Append the actions valid on the page to every observation."
    )
    source: str = source_knob("webshop")
    data_dir: str = data_dir_knob()
    goals: str = knob(
        "human",
        choices=GOAL_SETS,
        doc="With source 'webshop': WebShop's goal set, 'human' (its crowd-sourced "
        "instructions, the paper's) or 'synthetic' (one per product and option combination, "
        "what AgentGym plays).",
    )

    def validate(self) -> None:
        self.require_at_most("results_per_page", "max_results")
        if self.source == GENERATED and self.goals != "human":
            raise ConfigError(
                "WebShopConfig.goals",
                f"{self.goals!r} applies to WebShop's original data only (source 'webshop')",
            )


class WebShopEnv(TextEnv[WebShopConfig]):
    """Find and buy the product an instruction describes, in an offline web shop.

    ## Description
    A rebuild of WebShop (Yao et al., 2022), as used by AgentGym, that needs no download, no
    Java and no server. The shop's catalogue — 10,000 products of 154 types in 18 departments,
    each with a brand, a title, attributes, options (size, color, flavor, capacity, ...), a price,
    a rating, a description, a feature list and reviews — is generated from a seed by llmgym's
    own generator and vocabulary, stored in an sqlite database and searched with sqlite's FTS5
    full-text index ranked by BM25. The database is built on first use (once, with a progress bar)
    and cached under ``platformdirs.user_cache_dir("llmgym")`` (``$LLMGYM_CACHE_DIR`` overrides).
    Pages are real HTML — search, results with pagination, item page with options, description,
    features, reviews, purchase confirmation — turned into WebShop's simple text mode with
    BeautifulSoup.

    Each task's instruction is generated from one target product: its type, some of its
    attributes, one value of some of its option groups and a price cap, in one of several
    phrasings ("i am looking for quick drying men's swim trunks with mesh lining in navy blue
    and size large, and price lower than 30.00 dollars"). Any product that satisfies the
    instruction earns the full reward, not only the target.

    ## Action Space
    Text, WebShop's two commands (case-insensitive):

    * ``search[KEYWORDS]`` — on the search page only: search the catalogue and show the first
      page of the best ``max_results`` products, ranked by BM25 on the query's most selective
      words (at most six; stop words are ignored, and words found in over a tenth of the
      catalogue count only when nothing else is left). A product id finds its product.
    * ``click[ELEMENT]`` — click an element of the page by its text, lower case: ``back to
      search``, ``next >``, ``< prev``, a product id such as ``b0x7k2m9qa``, an option value such
      as ``navy blue``, ``description``, ``features``, ``reviews`` or ``buy now``.

    Anything else — text that is not clickable on this page, a search away from the search
    page, a query without keywords — changes nothing and is answered with the reason and the
    valid actions, with ``info["invalid_action"] = True`` (AgentGym's WebShop silently ignores
    such actions).

    ## Observation Space
    Text. In ``simple`` mode (default) WebShop's format, the visible strings of the page joined
    by `` [SEP] ``: ``Instruction: [SEP] i need ... [SEP] Back to Search [SEP] Page 1 (Total
    results: 50) [SEP] Next > [SEP] B0X7K2M9QA [SEP] <title> [SEP] $24.99 [SEP] ...``. Unlike
    WebShop, the item page also shows the options selected so far (``Selected: size: large``).
    In ``html`` mode, the raw HTML page; clickable elements carry a ``data-action`` attribute and
    selected options ``aria-pressed="true"``. ``info["admissible_actions"]`` lists the page's
    ``click[...]`` actions (``search[...]`` is possible wherever the page has the search form).

    ## Rewards
    On ``buy now``, WebShop's formula, in [0, 1]:
    ``(attribute matches + option matches + price ok) / (attributes + options + 1) * r_type``.
    An attribute matches if the product has it (or its title, features or description say it);
    an option matches if its value is selected; the price is ok if at most the cap. ``r_type``
    is 1 for a product of the goal's type; for another type it follows WebShop's graded rule on
    the overlap of the type's words with the product title: 0.5 for a shared category or a clear
    overlap, 0.1 for a weak one, 0 for none (WebShop gives 1 in the first case; here only the
    right type earns the full reward). ``info["score"]`` has the parts; success means a reward
    of 1.0. Skills (per-part success, for LLM-driven configuration): ``product_type``,
    ``attributes``, ``options``, ``budget``.

    ## Starting State
    The search page with the instruction. Task ``split/N`` targets the N-th product of the
    split; the goal's attributes, options, price cap and wording are drawn from the task id.

    ## Episode End
    Terminates on ``buy now``. Truncated by the registered turn limit (15; AgentGym uses 10).

    ## Arguments
    ``gymnasium.make("llmgym/WebShop-v0", observation_mode="html", goal_attributes=3)``; see
    :class:`WebShopConfig`. Products are split by a hash of their id: with the default catalogue
    9,547 are train targets and 453 eval targets, so an eval target is never a train target (it
    can appear in train episodes as a distractor, as in WebShop). The oracle searches the goal's
    attributes and type, picks a product satisfying the whole instruction from the first two
    result pages (else searches the target's title, then its product id), selects the options
    and buys, in a few steps (measured: see docs/environments/webshop.md). Needs
    the ``webshop`` extra (beautifulsoup4).

    ## Original data
    ``config={"source": "webshop", "data_dir": DIR}`` plays WebShop's own data (Yao et al.,
    2022): ``DIR`` is WebShop's ``data/`` folder as its ``setup.sh`` downloads it —
    ``items_shuffle_1000.json`` and ``items_ins_v2_1000.json`` (``-d small``; or
    ``items_shuffle.json`` and ``items_ins_v2.json`` for all products, read when present) and
    ``items_human_ins.json`` (``llmgym data fetch webshop DIR``; docs/originals.md). Products are
    read as WebShop's ``load_products`` reads them (the first of each id; names, descriptions,
    bullet points, lower-case options, prices from ``pricing``, attributes from ``items_ins_v2``)
    and indexed once into the same FTS5 catalogue (cached per data directory), so pages,
    actions and search are the generated shop's. The goals are WebShop's: ``goals="human"``
    (default) one per crowd-sourced instruction with attributes, ``goals="synthetic"`` one per
    product instruction and option combination (what AgentGym's server plays), with WebShop's
    price caps, shuffled as WebShop does (``random.seed(233)``). Task ``eval/N`` is WebShop's
    test goal ``N`` (its first 500) and ``train/N`` its goal ``500 + N`` (WebShop's dev goals
    are ``train/00000`` to ``train/00999``); AgentGym's item ``i`` is goal ``i`` of the
    synthetic set. The reward is WebShop's ``get_reward``: thefuzz 0.19's ``token_set_ratio``
    above 85 for attributes (or the phrase in the title, bullet points or description) and
    options (after WebShop's ``normalize_color``), the price cap, and ``r_type`` from the query,
    the category path and the nouns of the names — spaCy's tags where spaCy and
    ``en_core_web_sm`` (or ``_lg``) are installed, else every word but function words
    (``info["type_tagger"]`` says which; with the latter, ``r_type`` of a product other than the
    goal's can differ from WebShop's). Prices given as a range are drawn in it once per product
    id (WebShop draws them unseeded at start-up) and the page shows the drawn price; human
    goals' price caps use a generator seeded 233 (WebShop's are unseeded). The oracle reads the
    answer key: it searches the goal product's id, selects the option values closest to the
    goal's by WebShop's option rule, and buys. ``catalogue_size``, ``catalogue_seed``,
    ``goal_attributes`` and ``goal_options`` do not apply.

    ## Version History
    * v0: Initial version.
    """

    config_class = WebShopConfig
    env_name = "webshop"
    skills = ("product_type", "attributes", "options", "budget")
    design_notes = (
        "Every instruction asks for a product type and a price cap; goal_attributes and "
        "goal_options add attributes to match and options to select (the target product has 3-5 "
        "attributes and 1-3 option groups, so larger values are capped). A larger catalogue_size "
        "adds distractors of every type, but each new (catalogue_size, catalogue_seed) builds a "
        "new database once (seconds per 10,000 products), so use few distinct values. Fewer "
        "results_per_page or max_results make the agent page or search again more often."
    )
    skill_practice: ClassVar[dict[str, dict[str, Any]]] = {
        "product_type": {"goal_attributes": 0, "goal_options": 0},
        "attributes": {"goal_attributes": 4, "goal_options": 0},
        "options": {"goal_attributes": 0, "goal_options": 3},
        "budget": {"goal_attributes": 1, "goal_options": 0},
    }
    rules_text = (
        "You are shopping in a web shop. Find and buy the product the instruction describes: "
        "its type, attributes, options (such as size and color) and price limit. Actions: "
        "search[keywords] on the search page, and click[element] with the lower-case text of "
        "a clickable element of the page: a product id, an option value, 'next >', '< prev', "
        "'back to search', 'description', 'features', 'reviews' or 'buy now'. Select every "
        "option the instruction asks for on the product page before clicking 'buy now'."
    )
    example = (
        "Observation: WebShop [SEP] Instruction: [SEP] i need a waterproof bluetooth speaker with "
        "deep bass in black, and price lower than 60.00 dollars [SEP] Search\n"
        "Thought: I search for the product type and its key attributes first.\n"
        "Action: search[waterproof bluetooth speaker deep bass]"
    )

    _goal: Goal | OriginalGoal | None = None
    _instruction_box: pages.Fragment
    _page: pages.Page
    _results: tuple[int, ...] = ()
    _results_page = 1
    _product: Product | None = None
    _selected: dict[str, str]
    _searches = 0
    _score: Score | None = None

    def __init__(self, config: WebShopConfig | dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self.vocabulary = load_vocabulary()
        self.original = self._original_for(self.config)
        self.shop = self._shop_for(self.config)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle and copy without the vocabulary and the shop, which a copy shares: both are
        read-only and loaded once per process, and the shop's connections cannot be pickled."""
        state = super().__getstate__()
        del state["vocabulary"], state["shop"], state["original"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.vocabulary = load_vocabulary()
        config = self.task.config if self._task is not None else self.config
        self.original = self._original_for(config)
        self.shop = self._shop_for(config)

    # ------------------------------------------------------------------ tasks
    @staticmethod
    def _original_for(config: WebShopConfig) -> OriginalShop | None:
        """WebShop's original data where the config names it (``None``: generated)."""
        data_dir = data_dir_of(config)
        return None if data_dir is None else load_shop(data_dir)

    @classmethod
    def _shop_for(cls, config: WebShopConfig) -> Shop:
        original = cls._original_for(config)
        if original is not None:
            return original.shop
        return Shop.open(config.catalogue_seed, config.catalogue_size)

    def task_ids(self, split: str = "train", config: WebShopConfig | None = None) -> TaskIdRange:
        config = config or self.config
        original = self._original_for(config)
        if original is not None:
            return TaskIdRange(split, len(original.split(config.goals, split)))
        shop = self._shop_for(config)
        return TaskIdRange(split, len(shop.split_ids(split)))

    def instance_key(self) -> str:
        return self.goal.instance_key()

    @property
    def goal(self) -> Goal | OriginalGoal:
        """The current goal (after reset): an :class:`OriginalGoal` with WebShop's data."""
        return cast("Goal | OriginalGoal", self.after_reset(self._goal))

    def _reset_task(self, task: Task[WebShopConfig]) -> tuple[str, str]:
        config = task.config
        self.original = self._original_for(config)
        self.shop = self._shop_for(config)
        if self.original is not None:
            self._goal = self.original.split(config.goals, task.split)[task.index]
        else:
            product = self.shop.product(self.shop.split_ids(task.split)[task.index])
            self._goal = make_goal(
                product,
                self.vocabulary,
                task.rng(),
                n_attributes=config.goal_attributes,
                n_options=config.goal_options,
            )
        self._results, self._results_page = (), 1
        self._product, self._selected, self._searches, self._score = None, {}, 0, None
        self._instruction_box = pages.instruction_fragment(self._goal.instruction)
        self._page = pages.search_page(self._instruction_box)
        return self._render(), self._goal.instruction

    # ------------------------------------------------------------------ dynamics
    def _step(self, action: str) -> Transition:
        command = normalize_command(action, max_length=_MAX_ACTION_LENGTH)
        match = _ACTION.match(command)
        if match is None:
            return self._invalid(
                f"{self.quote(action)} is not an action. Use search[keywords] or click[element]."
            )
        verb, argument = match.group(1), " ".join(match.group(2).split())
        if verb == "search":
            return self._search(argument)
        clickable = self._page.clickables.get(argument.strip("'\""))
        if clickable is None:
            if self._page.kind == "search":
                return self._invalid(
                    f"There is nothing called {self.quote(argument)} to click here. Type what you "
                    "are looking for with search[keywords]."
                )
            return self._invalid(f"{self.quote(argument)} is not clickable on this page.")
        return self._click(clickable)

    def _invalid(self, message: str) -> Transition:
        return self.invalid(f"{message} {self._valid_actions_text()}")

    def _valid_actions_text(self) -> str:
        actions = self._available_actions()
        return "Valid actions: " + ", ".join(actions) + "."

    def _available_actions(self) -> list[str]:
        actions = ["search[keywords]"] if self._page.kind == "search" else []
        return actions + [f"click[{label}]" for label in self._page.clickables]

    def _search(self, query: str) -> Transition:
        if self._page.kind != "search":
            return self._invalid("The search bar is on the search page; click[back to search].")
        if len(query) > _MAX_QUERY_LENGTH:
            return self._invalid(f"The query is longer than {_MAX_QUERY_LENGTH} characters.")
        if not search_terms(query):
            return self._invalid(
                f"{self.quote(query)} has no keywords to search for; name the product you want."
            )
        self._results = tuple(self.shop.search(query, self.config_for_episode.max_results))
        self._results_page = 1
        self._searches += 1
        self._show_results()
        return Transition(self._render())

    def _click(self, clickable: pages.Clickable) -> Transition:
        kind, action = self._page.kind, clickable.action
        if action == "back":
            self._product, self._selected = None, {}
            self._page = pages.search_page(self._instruction_box)
        elif action in ("next", "prev") and kind == "results":
            self._results_page += 1 if action == "next" else -1
            self._show_results()
        elif action == "prev" and kind == "item":
            self._product, self._selected = None, {}
            self._show_results()
        elif action == "prev":
            self._show_item()
        elif action == "item":
            product = self.shop.product_by_asin(clickable.arg)
            assert product is not None, clickable.arg
            self._product, self._selected = product, {}
            self._show_item()
        elif action == "option":
            group, _, value = clickable.arg.partition("=")
            self._selected[group] = value
            self._show_item()
        elif action == "detail":
            product = self._current_product()
            self._page = pages.detail_page(self._instruction_box, product, clickable.arg)
        elif action == "buy":
            return self._buy()
        return Transition(self._render())

    def _buy(self) -> Transition:
        product = self._current_product()
        goal = self.goal
        info: dict[str, Any] = {"purchased": product.asin}
        if isinstance(goal, OriginalGoal):
            self._score = _original_score(goal, product, self._selected)
            info["type_tagger"] = type_tagger()[0]
        else:
            self._score = score_purchase(goal, product, self._selected, self.vocabulary)
        reward = self._score.reward
        self._page = pages.purchase_page(self._instruction_box, product, self._selected, reward)
        return Transition(
            self._render(),
            reward=reward,
            terminated=True,
            success=reward >= 1.0 - 1e-9,
            info={**info, "score": self._score.as_dict()},
        )

    def _current_product(self) -> Product:
        assert self._product is not None, "no product page is open"
        return self._product

    def _show_results(self) -> None:
        per_page = self.config_for_episode.results_per_page
        last_page = max(1, math.ceil(len(self._results) / per_page))
        start = (self._results_page - 1) * per_page
        shown = [self.shop.listing(i) for i in self._results[start : start + per_page]]
        self._page = pages.results_page(
            self._instruction_box, shown, self._results_page, len(self._results), last_page
        )

    def _show_item(self) -> None:
        product = self._current_product()
        order = [name for name, _ in product.options]
        self._selected = {name: self._selected[name] for name in order if name in self._selected}
        self._page = pages.item_page(
            self._instruction_box, product, self._selected, self.shop.views(product.id)
        )

    @property
    def config_for_episode(self) -> WebShopConfig:
        """The config of the current episode (the env's config with per-episode overrides)."""
        return self.task.config

    def _render(self) -> str:
        config = self.config_for_episode
        text = self._page.html() if config.observation_mode == "html" else self._page.text()
        if config.show_actions and self._page.kind != "purchase":
            text += "\n\nAvailable actions: " + ", ".join(self._available_actions())
        return text

    # ------------------------------------------------------------------ oracle and actions
    def admissible_actions(self) -> list[str]:
        return [f"click[{label}]" for label in self._page.clickables]

    def sample_action(self, rng: np.random.Generator) -> str:
        clickables = self.admissible_actions()
        if self._page.kind == "search" and (not clickables or rng.random() < 0.5):
            product_type = self.vocabulary.types[int(rng.integers(len(self.vocabulary.types)))]
            attribute = product_type.attributes[int(rng.integers(len(product_type.attributes)))]
            return f"search[{attribute} {product_type.name}]"
        return clickables[int(rng.integers(len(clickables)))]

    def skills_achieved(self) -> frozenset[str]:
        if self._score is None:
            return frozenset()
        score = self._score
        achieved = {
            "product_type": score.r_type == 1.0,
            "attributes": score.attribute_matches == score.n_attributes,
            "options": score.option_matches == score.n_options,
            "budget": score.price_ok,
        }
        return frozenset(skill for skill, done in achieved.items() if done)

    def oracle_action(self) -> str:
        goal = self.goal
        if isinstance(goal, OriginalGoal):
            return self._original_oracle_action(goal)
        kind = self._page.kind
        if kind == "search":
            return f"search[{self._oracle_query()}]"
        if kind == "results":
            return self._oracle_on_results()
        if kind == "item":
            product = self._current_product()
            goal = self.goal
            assert isinstance(goal, Goal)
            for group, value in goal.options:
                if product.option_values.get(value) == group and self._selected.get(group) != value:
                    return f"click[{value}]"
            return "click[buy now]"
        return "click[< prev]"

    def _original_oracle_action(self, goal: OriginalGoal) -> str:
        """With WebShop's data, the answer key: search the goal product's id, open it, select
        the product's option values closest to the goal's options, buy."""
        kind = self._page.kind
        if kind == "search":
            return f"search[{goal.asin}]"
        if kind == "results":
            shown = self._shown_products()
            if any(product.asin == goal.asin for product in shown):
                return f"click[{goal.asin.lower()}]"
            if "next >" in self._page.clickables:
                return "click[next >]"
            return f"click[{shown[0].asin.lower()}]" if shown else "click[back to search]"
        if kind == "item":
            product = self._current_product()
            if product.asin != goal.asin:
                return "click[< prev]"
            for group, value in _closest_options(goal, product).items():
                if self._selected.get(group) != value:
                    return f"click[{' '.join(value.split())}]"
            return "click[buy now]"
        return "click[< prev]"

    def _shown_products(self) -> list[Product]:
        """The products on the current results page."""
        per_page = self.config_for_episode.results_per_page
        start = (self._results_page - 1) * per_page
        return [self.shop.product(i) for i in self._results[start : start + per_page]]

    def _oracle_query(self) -> str:
        """The goal's attributes and type first; then the target's title; then its id."""
        goal = self.goal
        assert isinstance(goal, Goal)
        if self._searches == 0:
            return " ".join((*goal.attributes, goal.product_type))
        target = self.shop.product_by_asin(goal.target)
        assert target is not None
        return target.title if self._searches == 1 else target.asin

    def _oracle_on_results(self) -> str:
        goal = self.goal
        assert isinstance(goal, Goal)
        shown = self._shown_products()
        winners = [product for product in shown if self._satisfies_goal(product)]
        if winners:
            best = next((p for p in winners if p.asin == goal.target), winners[0])
            return f"click[{best.asin.lower()}]"
        has_next = "next >" in self._page.clickables
        if has_next and (self._searches > 1 or self._results_page < _ORACLE_PAGES):
            return "click[next >]"
        if self._searches < 3:
            return "click[back to search]"
        return f"click[{shown[0].asin.lower()}]" if shown else "click[back to search]"

    def _satisfies_goal(self, product: Product) -> bool:
        """Whether buying ``product`` with the goal's options selected earns the full reward."""
        goal = self.goal
        assert isinstance(goal, Goal)
        selected = {
            group: value
            for group, value in goal.options
            if product.option_values.get(value) == group
        }
        return score_purchase(goal, product, selected, self.vocabulary).reward >= 1.0 - 1e-9


def _original_score(goal: OriginalGoal, product: Product, selected: dict[str, str]) -> Score:
    """WebShop's reward of buying ``product`` (one of its original products) with the option
    values ``selected``."""
    return score_original(
        goal,
        name=product.title,
        query=product.product_type,
        product_category=" › ".join(product.category),
        attributes=product.attributes,
        bullet_points=product.features,
        description=product.description,
        price=product.price,
        selected=list(selected.values()),
    )


def _closest_options(goal: OriginalGoal, product: Product) -> dict[str, str]:
    """For each goal option in turn, the product's value that WebShop's option rule scores
    highest against it (above its threshold), one per option group: the oracle's selection."""
    chosen: dict[str, str] = {}
    for option in goal.options:
        wanted = normalize_color(option)
        scored = [
            (token_set_ratio(normalize_color(value), wanted), group, value)
            for group, values in product.options
            if group not in chosen
            for value in values
        ]
        best = max(scored, key=lambda entry: entry[0], default=None)
        if best is not None and best[0] > MATCH_THRESHOLD:
            chosen[best[1]] = best[2]
    return chosen
