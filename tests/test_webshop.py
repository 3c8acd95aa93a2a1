"""WebShop: catalogue data, the sqlite/FTS5 search, WebShop's reward formula, HTML pages and their
text view, and the rules of the shop."""

from __future__ import annotations

import dataclasses
import multiprocessing
import re
import sqlite3
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import numpy as np
import pytest

from tests.extras import need

need("bs4")

import llmgym
from llmgym import ConfigError, testing
from llmgym.core.cache import LruCache
from llmgym.core.tasks import TaskRng
from llmgym.envs.webshop import pages
from llmgym.envs.webshop.catalogue import (
    OptionGroup,
    Product,
    ProductType,
    Review,
    Vocabulary,
    generate_product,
    load_vocabulary,
    make_asin,
)
from llmgym.envs.webshop.env import WebShopEnv
from llmgym.envs.webshop.goals import Goal, _indefinite_article, make_goal, score_purchase
from llmgym.envs.webshop.store import MAX_OPEN_SHOPS, Shop, build_database, search_terms

FIXED_LABELS = {
    "back to search",
    "< prev",
    "next >",
    "description",
    "features",
    "reviews",
    "buy now",
}


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return load_vocabulary()


@pytest.fixture(scope="module")
def shop() -> Shop:
    return Shop.open(0, 10_000)


@pytest.fixture
def env() -> WebShopEnv:
    env = gym.make("llmgym/WebShop-v0").unwrapped
    env.reset(options={"task_id": "eval/00000"})
    return env


def make_product(**fields) -> Product:
    base = {
        "id": 1,
        "asin": "B0TEST0001",
        "product_type": "men's cargo shorts",
        "brand": "Norvik",
        "title": "Norvik Lightweight Men's Cargo Shorts with Elastic Waist",
        "category": ("Clothing", "Men", "Shorts"),
        "attributes": ("lightweight", "elastic waist", "quick drying"),
        "options": (("size", ("small", "medium", "large")), ("color", ("black", "khaki"))),
        "price": 24.99,
        "rating": 4.5,
        "rating_count": 10,
        "description": "Meet the Norvik shorts. They are lightweight and quick drying.",
        "features": ("LIGHTWEIGHT: light.", "ELASTIC WAIST: stretchy."),
        "reviews": (Review(5, "Great."),),
    }
    return Product(**{**base, **fields})


def make_goal_for(**fields) -> Goal:
    base = {
        "target": "B0TEST0001",
        "product_type": "men's cargo shorts",
        "category": ("Clothing", "Men", "Shorts"),
        "attributes": ("lightweight", "elastic waist"),
        "options": (("size", "large"), ("color", "khaki")),
        "price_cap": 30.0,
        "instruction": "i need lightweight men's cargo shorts",
    }
    return Goal(**{**base, **fields})


# ------------------------------------------------------------------------------- vocabulary
def test_vocabulary_is_large_and_consistent(vocabulary: Vocabulary) -> None:
    assert len(vocabulary.types) >= 150
    assert len({t.path[0] for t in vocabulary.types}) >= 15, "departments"
    assert len({t.name for t in vocabulary.types}) == len(vocabulary.types)
    assert len(vocabulary.brands) >= 1000
    for product_type in vocabulary.types:
        assert len(product_type.attributes) >= 5, product_type.name
        assert len(set(product_type.attributes)) == len(product_type.attributes)
        assert 0 < product_type.price[0] < product_type.price[1]
        assert len(product_type.uses) >= 2
        names = [group.name for group in product_type.options]
        assert len(set(names)) == len(names), f"{product_type.name}: repeated option group"
        values = [v for group in product_type.options for v in group.values]
        # a click names an element by its text: option values must be unambiguous on a page
        assert len(set(values)) == len(values), f"{product_type.name}: repeated option value"
        assert not set(values) & FIXED_LABELS
        assert not set(values) & set(product_type.attributes), product_type.name
        for group in product_type.options:
            assert group.name in vocabulary.option_phrases, group.name
            assert all(v == v.lower() and v.strip() == v for v in group.values)


def test_catalogue_generation_is_deterministic_and_varied(vocabulary: Vocabulary) -> None:
    first = [generate_product(vocabulary, 0, i) for i in range(300)]
    again = [generate_product(vocabulary, 0, i) for i in range(300)]
    assert first == again
    other_seed = [generate_product(vocabulary, 1, i) for i in range(300)]
    assert [p.title for p in first] != [p.title for p in other_seed]
    assert len({p.product_type for p in first}) > 100
    for product in first:
        product_type = vocabulary.types_by_name[product.product_type]
        assert 3 <= len(product.attributes) <= 5
        assert set(product.attributes) <= set(product_type.attributes)
        assert product_type.price[0] - 1 <= product.price <= product_type.price[1]
        assert [name for name, _ in product.options] == [g.name for g in product_type.options]
        for (_, values), group in zip(product.options, product_type.options, strict=True):
            assert len(values) >= 2 and set(values) <= set(group.values)
        assert product.rating is None or 1.0 <= product.rating <= 5.0
        assert product.description and product.features
        assert len(product.features) == len(product.attributes)
        assert "{" not in product.title + product.description + "".join(product.features)
        assert not re.search(r"\b(Usb|Uv|Led|Spf|Bpa)\b", product.title), product.title


def test_asins_never_repeat() -> None:
    asins = [make_asin(0, i) for i in range(12_000)]
    assert len(set(asins)) == len(asins)
    assert all(re.fullmatch(r"B0[0-9A-Z]{8}", a) for a in asins)
    assert make_asin(0, 5) != make_asin(1, 5)


# ------------------------------------------------------------------------------- database
def test_database_build_and_cache(tmp_path, monkeypatch, vocabulary: Vocabulary) -> None:
    path = tmp_path / "shop.sqlite3"
    build_database(path, vocabulary, seed=3, size=120, progress=False)
    assert path.exists() and not list(tmp_path.glob("*.partial"))
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT count(*) FROM products").fetchone() == (120,)
        meta = dict(connection.execute("SELECT key, value FROM meta"))
    assert meta["complete"] == "1" and meta["size"] == "120" and meta["seed"] == "3"

    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(tmp_path / "cache"))
    shop = Shop.open(seed=5, size=150, progress=False)
    assert shop.path.parent == tmp_path / "cache" / "webshop"
    assert Shop.open(seed=5, size=150) is shop
    modified = shop.path.stat().st_mtime_ns
    reopened = Shop(Shop._database(5, 150, progress=False), 5, 150)
    assert reopened.path == shop.path and shop.path.stat().st_mtime_ns == modified
    assert [reopened.product(i) for i in (1, 150)] == [
        generate_product(vocabulary, 5, 0),
        generate_product(vocabulary, 5, 149),
    ]
    with pytest.raises(sqlite3.OperationalError):  # opened read-only
        reopened._connection().execute("DELETE FROM products")
    assert reopened.product_by_asin(make_asin(5, 9).lower()) == reopened.product(10)


def test_open_catalogues_are_bounded_and_reopen_from_disk(
    tmp_path, monkeypatch, vocabulary: Vocabulary
) -> None:
    """Each new (seed, size) used to stay in memory for good, even from a task_ids call."""
    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(Shop, "_instances", LruCache(MAX_OPEN_SHOPS))
    env = WebShopEnv(catalogue_size=1_000)
    counts = [
        len(env.task_ids("eval", dataclasses.replace(env.config, catalogue_seed=seed)))
        for seed in range(1, MAX_OPEN_SHOPS + 1)
    ]
    assert all(counts) and len(Shop._instances) == MAX_OPEN_SHOPS
    first = Shop.open(1, 1_000)
    built = first.path.stat().st_mtime_ns
    newest = Shop.open(7, 150, progress=False)  # evicts the least recently used: seed 2
    assert len(Shop._instances) == MAX_OPEN_SHOPS and (2, 1_000) not in Shop._instances
    assert newest.product(3) == generate_product(vocabulary, 7, 2)
    for seed in range(3, MAX_OPEN_SHOPS + 2):
        Shop.open(seed + 10, 150, progress=False)
    assert (1, 1_000) not in Shop._instances
    assert first.search("shoes")  # an evicted shop still serves whoever holds it
    again = Shop.open(1, 1_000)  # reopened from the disk cache, not built again
    assert again is not first and again.path == first.path
    assert again.path.stat().st_mtime_ns == built and again.product(5) == first.product(5)


def test_splits_are_disjoint_by_product(shop: Shop) -> None:
    train, eval_ = shop.split_ids("train"), shop.split_ids("eval")
    assert not set(train) & set(eval_)
    assert len(train) + len(eval_) == 10_000
    assert len(train) >= 5_000 and 200 <= len(eval_) <= 1_000


# ------------------------------------------------------------------------------- search
def test_search_ranks_the_product_type_first(shop: Shop) -> None:
    for query, product_type in [
        ("bluetooth speaker", "bluetooth speaker"),
        ("waterproof men's hiking boots", "men's hiking boots"),
        ("organic whole bean coffee", "whole bean coffee"),
        ("dog leash", "dog leash"),
    ]:
        top = [shop.product(i) for i in shop.search(query, 10)]
        assert len(top) == 10
        assert all(p.product_type == product_type for p in top), (query, [p.title for p in top])


def test_search_prefers_products_matching_more_words(shop: Shop) -> None:
    results = [shop.product(i) for i in shop.search("bluetooth speaker stereo pairing", 50)]
    with_feature = [p for p in results if "stereo pairing" in p.attributes]
    assert 5 <= len(with_feature) < 50
    assert results[: len(with_feature)] == with_feature, "a product with fewer matches ranks higher"
    assert all(p.product_type == "bluetooth speaker" for p in results)


def test_search_finds_a_product_by_its_title_or_id(shop: Shop) -> None:
    for product_id in range(1, 10_001, 499):
        product = shop.product(product_id)
        results = shop.search(product.title, 50)
        assert product_id in results[:10], product.title
        assert shop.search(product.asin.lower(), 5)[0] == product_id


def test_search_is_full_text_not_substring(shop: Shop) -> None:
    # stemming: the singular finds the plural; whole words: "wat" is not "water"
    jackets = [shop.product(i) for i in shop.search("jacket", 20)]
    assert jackets and all("jackets" in p.product_type for p in jackets)
    assert shop.search("water", 10) and shop.search("wat", 10) == []
    assert shop.search("xqzzv", 10) == []
    assert search_terms("the and for with") == []
    assert search_terms("I need Men's SHORTS, men's!") == ["men", "shorts"]
    looked_up = shop.query_words(
        "i am looking for a bluetooth speaker, price lower than 50 dollars"
    )
    assert looked_up[:2] == ["bluetooth", "speaker"]
    assert not {"am", "looking", "price", "lower", "dollars"} & set(looked_up)
    words_looked_up = shop.query_words(
        "waterproof lightweight men's rain jackets with adjustable hood in black and x-large"
    )
    assert (
        len(words_looked_up) <= 6 and "rain" in words_looked_up and "black" not in words_looked_up
    )


def _search_in_child(queries: list[str]) -> list[list[int]]:
    return [Shop.open(0, 10_000).search(query, 20, cached=False) for query in queries]


def test_search_from_threads_and_forked_processes(shop: Shop) -> None:
    queries = ["yoga mat non slip", "raw honey glass jar", "led flashlight", "granola"] * 4
    expected = [shop.search(query, 20, cached=False) for query in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(lambda q: shop.search(q, 20, cached=False), queries)) == expected
    if "fork" in multiprocessing.get_all_start_methods():
        # a child forked after the parent used its connection must open its own
        with multiprocessing.get_context("fork").Pool(2) as pool:
            assert pool.apply(_search_in_child, (queries,)) == expected


def test_search_cache_returns_the_same_ranking(shop: Shop) -> None:
    query = "soft crib sheets"
    assert shop.search(query, 30) == shop.search(query, 30, cached=False)
    assert shop.search(query, 5) == shop.search(query, 30)[:5]


# ------------------------------------------------------------------------------- reward
def test_reward_is_one_for_a_full_match(vocabulary: Vocabulary) -> None:
    score = score_purchase(
        make_goal_for(), make_product(), {"size": "large", "color": "khaki"}, vocabulary
    )
    assert (score.r_type, score.attribute_matches, score.option_matches, score.price_ok) == (
        1.0,
        2,
        2,
        True,
    )
    assert score.reward == 1.0


@pytest.mark.parametrize(
    ("selected", "price", "attributes", "expected"),
    [
        ({"size": "large"}, 24.99, ("lightweight", "elastic waist"), 4 / 5),
        ({}, 24.99, ("lightweight", "elastic waist"), 3 / 5),
        ({"size": "large", "color": "khaki"}, 31.00, ("lightweight", "elastic waist"), 4 / 5),
        ({"size": "small", "color": "black"}, 31.00, ("lightweight", "elastic waist"), 2 / 5),
        ({"size": "large", "color": "khaki"}, 24.99, ("lightweight", "drawstring"), 4 / 5),
        ({}, 99.0, ("drawstring", "zip pockets"), 0.0),
    ],
)
def test_reward_formula(vocabulary, selected, price, attributes, expected) -> None:
    goal = make_goal_for(attributes=attributes)
    score = score_purchase(goal, make_product(price=price), selected, vocabulary)
    assert score.reward == pytest.approx(expected)
    matched = score.attribute_matches + score.option_matches + score.price_ok
    assert score.reward == pytest.approx(matched / (len(attributes) + 2 + 1) * score.r_type)


def test_attribute_in_text_counts_and_empty_goal(vocabulary: Vocabulary) -> None:
    product = make_product(attributes=("lightweight",), description="Fully machine washable.")
    goal = make_goal_for(attributes=("machine washable", "elastic waist"), options=())
    score = score_purchase(goal, product, {}, vocabulary)
    assert score.attribute_matches == 2  # one from the description, one from the title
    only_price = make_goal_for(attributes=(), options=())
    assert score_purchase(only_price, product, {}, vocabulary).reward == 1.0
    assert score_purchase(only_price, make_product(price=30.01), {}, vocabulary).reward == 0.0


def test_type_reward_follows_webshop_rules(vocabulary: Vocabulary) -> None:
    goal = make_goal_for(attributes=(), options=())
    other_shorts = make_product(
        product_type="women's running shorts",
        title="Norvik Women's Running Shorts",
        category=("Clothing", "Women", "Shorts"),
    )
    tshirt = make_product(
        product_type="men's t-shirts",
        title="Norvik Soft Men's T-shirts",
        category=("Clothing", "Men", "Shirts"),
    )
    assert score_purchase(goal, other_shorts, {}, vocabulary).r_type == 0.5
    assert score_purchase(goal, tshirt, {}, vocabulary).r_type == 0.0
    assert score_purchase(goal, tshirt, {}, vocabulary).reward == 0.0

    long_name = ProductType(
        "alpha beta gamma delta epsilon zeta",
        ("A", "B", "C"),
        ("q",),
        ("f",),
        (OptionGroup("size", ("s",)),),
        (1.0, 2.0),
        ("u", "v"),
    )
    synthetic = Vocabulary((long_name,), {}, {}, "test")
    goal = make_goal_for(product_type=long_name.name, category=("A", "B", "C"), attributes=())
    weak = make_product(title="Alpha Thing", category=("X", "Y", "Z"))
    assert score_purchase(goal, weak, {}, synthetic).r_type == 0.1
    same_category = make_product(title="Alpha Thing", category=("A", "B", "Z"))
    assert score_purchase(goal, same_category, {}, synthetic).r_type == 0.5


def test_goals_are_satisfied_by_their_target_and_phrased_variously(
    vocabulary: Vocabulary, shop: Shop
) -> None:
    openings = Counter()
    for index, product_id in enumerate(shop.split_ids("eval")[:200]):
        product = shop.product(product_id)
        goal = make_goal(product, vocabulary, TaskRng("t", index), n_attributes=2, n_options=2)
        assert goal.target == product.asin and goal.product_type == product.product_type
        assert set(goal.attributes) <= set(product.attributes) and len(goal.attributes) == 2
        for group, value in goal.options:
            assert product.option_values[value] == group
        assert product.price <= goal.price_cap <= 1.7 * product.price + 10
        assert f"{goal.price_cap:.2f}" in goal.instruction
        assert product.product_type in goal.instruction
        assert all(value in goal.instruction for _, value in goal.options)
        selected = dict(goal.options)
        assert score_purchase(goal, product, selected, vocabulary).reward == 1.0
        openings[" ".join(goal.instruction.split()[:2])] += 1
    assert len(openings) >= 6


def test_indefinite_article() -> None:
    assert [_indefinite_article(p) for p in ("orthopedic bed", "universal mount", "dog bed")] == [
        "an",
        "a",
        "a",
    ]


# ------------------------------------------------------------------------------- pages
def _all_page_kinds(env: WebShopEnv) -> list[pages.Page]:
    seen = [env._page]
    env.step(f"search[{env.goal.product_type}]")
    seen.append(env._page)
    env.step("click[next >]")
    seen.append(env._page)
    first = next(label for label in env._page.clickables if label.startswith("b0"))
    env.step(f"click[{first}]")
    option = next(c.label for c in env._page.clickables.values() if c.action == "option")
    env.step(f"click[{option}]")
    seen.append(env._page)
    for tab in ("description", "features", "reviews"):
        env.step(f"click[{tab}]")
        seen.append(env._page)
        env.step("click[< prev]")
    env.step("click[buy now]")
    seen.append(env._page)
    return seen


def test_text_view_equals_converting_the_whole_html_page(env: WebShopEnv) -> None:
    kinds = set()
    for page in _all_page_kinds(env):
        kinds.add(page.kind)
        html = page.html()
        assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
        assert page.text() == pages.html_to_text(html)
        soup = pages.bs4.BeautifulSoup(html, "html.parser")
        labels = [
            " ".join(e.get_text(" ").split()).lower()
            for e in soup.find_all(attrs={"data-action": True})
        ]
        assert labels == list(page.clickables)
    assert kinds == {"search", "results", "item", "description", "features", "reviews", "purchase"}


def test_stored_views_match_the_html(shop: Shop) -> None:
    for product_id in range(1, 10_001, 997):
        product = shop.product(product_id)
        fresh = pages.product_views(product)
        assert shop.views(product_id) == {k: fresh[k] for k in ("summary", "options")}
        listing = shop.listing(product_id)
        assert listing == pages.Listing(product.asin, product.title, product.price, fresh["result"])
        assert listing.fragment().view == pages.read_fragment(listing.fragment().html)


def test_simple_mode_follows_webshop_format(env: WebShopEnv) -> None:
    observation = env._render()
    assert observation == f"WebShop [SEP] Instruction: [SEP] {env.goal.instruction} [SEP] Search"
    observation, *_ = env.step(f"search[{env.goal.product_type}]")
    head = f"Instruction: [SEP] {env.goal.instruction} [SEP] Back to Search [SEP] Page 1 "
    assert observation.startswith(head + "(Total results: 50) [SEP] Next > [SEP] B0")
    entries = observation.split(" [SEP] Next > [SEP] ", 1)[1].split(" [SEP] ")
    assert len(entries) == 30 and all(re.fullmatch(r"\$[0-9]+\.[0-9]{2}", p) for p in entries[2::3])
    product = env.shop.product_by_asin(entries[0])
    observation, *_ = env.step(f"click[{entries[0].lower()}]")
    groups = " [SEP] ".join(f"{name} [SEP] " + " [SEP] ".join(v) for name, v in product.options)
    assert f"Back to Search [SEP] < Prev [SEP] {groups} [SEP] {product.title}" in observation
    assert observation.endswith("[SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now")


def test_html_mode_gives_the_raw_page() -> None:
    env = gym.make("llmgym/WebShop-v0", observation_mode="html", results_per_page=25).unwrapped
    observation, _ = env.reset(options={"task_id": "train/00003"})
    assert observation.startswith("<!DOCTYPE html>") and 'id="search-form"' in observation
    observation, *_ = env.step(f"search[{env.goal.product_type}]")
    assert observation.count('class="product-link"') == 25
    assert env.observation_space.contains(observation) and not observation.endswith("truncated]")
    first = next(label for label in env._page.clickables if label.startswith("b0"))
    env.step(f"click[{first}]")
    option = next(c for c in env._page.clickables.values() if c.action == "option")
    observation, *_ = env.step(f"click[{option.label}]")
    assert 'aria-pressed="true">' + option.label in observation
    assert pages.html_to_text(observation) == env._page.text()


# ------------------------------------------------------------------------------- rules
def test_an_episode_by_hand(env: WebShopEnv) -> None:
    goal, target = env.goal, env.shop.product_by_asin(env.goal.target)
    env.step(f"search[{target.title}]")
    assert f"click[{target.asin.lower()}]" in env.admissible_actions()
    observation, *_ = env.step(f"Click [{target.asin}]")
    assert target.title in observation
    group, value = goal.options[0]
    wrong = next(v for v in dict(target.options)[group] if v != value)
    env.step(f"click[{wrong}]")
    assert env._selected == {group: wrong}
    for _, value in goal.options:
        env.step(f"click[{value}]")
    assert env._selected == dict(goal.options)
    env.step("click[features]")
    observation, *_ = env.step("click[< prev]")
    assert env._selected == dict(goal.options) and "Selected: " in observation
    observation, reward, terminated, _, info = env.step("click[buy now]")
    assert terminated and reward == 1.0 and info["success"] and info["purchased"] == target.asin
    assert info["score"]["reward"] == 1.0 and "Your score (min 0.0, max 1.0): 1.00" in observation
    assert env.skills_achieved() == frozenset(env.skills)


def test_buying_without_options_or_the_wrong_product_scores_less(env: WebShopEnv) -> None:
    target = env.shop.product_by_asin(env.goal.target)
    env.step(f"search[{target.title}]")
    env.step(f"click[{target.asin.lower()}]")
    _, reward, terminated, _, info = env.step("click[buy now]")
    n_attributes, n_options = len(env.goal.attributes), len(env.goal.options)
    assert terminated and not info["success"] and n_options > 0
    assert reward == pytest.approx((n_attributes + 1) / (n_attributes + n_options + 1))
    assert env.skills_achieved() == {"product_type", "attributes", "budget"}

    env.reset(options={"task_id": "eval/00000"})
    other = "dog leash" if env.goal.product_type != "dog leash" else "yoga mat"
    env.step(f"search[{other}]")
    first = next(label for label in env._page.clickables if label.startswith("b0"))
    env.step(f"click[{first}]")
    _, reward, _, _, info = env.step("click[buy now]")
    assert reward == 0.0 and info["score"]["r_type"] == 0.0


def test_pagination_and_navigation(env: WebShopEnv) -> None:
    env.step(f"search[{env.goal.product_type}]")
    assert "< prev" not in env._page.clickables
    for page in range(2, 6):
        observation, *_ = env.step("click[next >]")
        assert f"Page {page} (Total results: 50)" in observation
    assert "next >" not in env._page.clickables
    assert env.step("click[next >]")[4]["invalid_action"]
    observation, *_ = env.step("click[< prev]")
    assert "Page 4 " in observation
    first = next(label for label in env._page.clickables if label.startswith("b0"))
    env.step(f"click[{first}]")
    observation, *_ = env.step("click[< prev]")
    assert "Page 4 " in observation
    observation, *_ = env.step("click[back to search]")
    assert observation.endswith("[SEP] Search")


def test_invalid_actions_explain_and_change_nothing(env: WebShopEnv) -> None:
    before = env._render()
    long_query = "search[" + "x " * 400 + "]"
    for action in ("click[search]", "click[buy now]", "search[]", "search[!!! ???]", long_query):
        observation, _, terminated, _, info = env.step(action)
        assert info["invalid_action"] and not terminated and "Valid actions:" in observation
        assert env._render() == before
    for action in ("buy", "click", "search bluetooth speaker", "[click]"):
        assert env.step(action)[4]["invalid_action"]
    env.step("search[bluetooth speaker]")
    before = env._render()
    observation, *_, info = env.step("search[running shoes]")
    assert info["invalid_action"] and "click[back to search]" in observation
    observation, *_, info = env.step("click[b0notthere]")
    assert info["invalid_action"] and "not clickable" in observation
    assert env._render() == before


def test_a_search_without_known_words_finds_nothing(env: WebShopEnv) -> None:
    observation, _, _, _, info = env.step("search[qqqzx vvvbn]")
    assert not info["invalid_action"]
    assert "Page 1 (Total results: 0)" in observation and "No products match" in observation
    assert env.admissible_actions() == ["click[back to search]"]


def test_config_knobs_and_errors() -> None:
    env = gym.make("llmgym/WebShop-v0", results_per_page=5, max_results=12, show_actions=True)
    inner = env.unwrapped
    observation, _ = env.reset(options={"task_id": "eval/00001"})
    assert observation.endswith("Available actions: search[keywords]")
    observation, *_ = env.step(f"search[{inner.goal.product_type}]")
    assert "Page 1 (Total results: 12)" in observation and "click[next >]" in observation
    env.step("click[next >]")
    observation, *_ = env.step("click[next >]")
    assert "Page 3 " in observation and observation.count("[SEP] B0") == 2
    env.reset(options={"task_id": "eval/00001", "config": {"goal_attributes": 0}})
    assert inner.goal.attributes == () and len(inner.goal.options) >= 1
    env.reset(options={"task_id": "eval/00001", "config": {"goal_options": 0}})
    assert inner.goal.options == () and len(inner.goal.attributes) == 2
    with pytest.raises(ConfigError) as error:
        gym.make("llmgym/WebShop-v0", results_per_page=20, max_results=10)
    assert error.value.field == "WebShopConfig.results_per_page"
    with pytest.raises(ConfigError, match="observation_mode"):
        gym.make("llmgym/WebShop-v0", observation_mode="text")
    with pytest.raises(ConfigError, match="catalogue_size"):
        gym.make("llmgym/WebShop-v0", catalogue_size=10)


def test_sample_action_is_valid(env: WebShopEnv) -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        action = env.sample_action(rng)
        _, _, terminated, _, info = env.step(action)
        assert not info["invalid_action"], action
        if terminated:
            env.reset()


def test_registered() -> None:
    entry = llmgym.get_entry("WebShop-v0")
    assert entry.extra == "webshop" and entry.requires == ("bs4",)


def test_oracle_copes_with_a_single_search_result() -> None:
    def make():
        return gym.make("llmgym/WebShop-v0", results_per_page=1, max_results=1, goal_options=3)

    assert testing.oracle_success_rate(make, episodes=30) == 1.0


@pytest.mark.slow
def test_oracle_solves_every_eval_task() -> None:
    env = gym.make("llmgym/WebShop-v0")
    inner = env.unwrapped
    longest = 0
    for task_id in inner.task_ids("eval"):
        env.reset(options={"task_id": task_id})
        terminated = truncated = False
        steps = 0
        while not (terminated or truncated):
            _, reward, terminated, truncated, info = env.step(inner.oracle_action())
            steps += 1
        assert info["success"] and reward == 1.0, task_id
        longest = max(longest, steps)
    assert longest <= 10
