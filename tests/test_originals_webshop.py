"""WebShop's original data: the loader reads files in WebShop's own layout (written here), its
goals come in WebShop's order and split, and purchases earn WebShop's reward."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.extras import need

need("bs4")

import gymnasium as gym

import llmgym  # noqa: F401  (registers the environments)
from llmgym import ConfigError, testing
from llmgym.envs.webshop.env import WebShopEnv
from llmgym.envs.webshop.original import TEST_GOALS, WebShopSource, load_shop
from llmgym.envs.webshop.original_reward import (
    OriginalGoal,
    normalize_color,
    token_set_ratio,
    type_reward,
    type_tagger,
)
from llmgym.errors import DataError
from llmgym.originals import get_source

TRUNKS, SHAMPOO, SPEAKER, HEATER = "B0TRUNKS01", "B0SHAMPOO2", "B0SPEAKER3", "B0HEATER04"


def _product(asin: str, name: str, query: str, category: str, **fields: Any) -> dict[str, Any]:
    """One product as WebShop's items_shuffle files hold it (fields it drops included)."""
    return {
        "asin": asin,
        "name": name,
        "query": query,
        "category": "fashion",
        "product_category": category,
        "full_description": fields.pop("description", f"The {name}."),
        "small_description": fields.pop("bullets", [f"About the {query}"]),
        "pricing": fields.pop("pricing", "$10.00"),
        "customization_options": fields.pop("options", None),
        "images": ["https://example.invalid/image.jpg"],
        "brand": "Brand",
        "seller_id": "S1",
        **fields,
    }


def _values(*values: str) -> list[dict[str, Any]]:
    return [{"value": value, "image": None} for value in values]


PRODUCTS = [
    _product(
        TRUNKS,
        "Men's Quick Dry Swim Trunks with Mesh Lining",
        "Men's Swim Trunks ",
        "Clothing, Shoes & Jewelry › Men › Clothing › Swim › Board Shorts",
        bullets=["Quick drying polyester", "Elastic waist with drawstring"],
        pricing="$24.99",
        options={"Color": _values("Navy Blue", "Black/White"), "Size": _values("Small", "Large")},
    ),
    _product(
        SHAMPOO,
        "Tea Tree Shampoo for Dry Scalp",
        "shampoo",
        "Beauty & Personal Care › Hair Care › Shampoo & Conditioner › Shampoos",
        description="Made with natural ingredients and tea tree oil.",
        bullets="Sulfate free",
        pricing="$12.99 - $19.99",
        options={"Size": _values("8 Fl Oz (Pack of 1)", "16 Fl Oz (Pack of 2)")},
    ),
    _product(
        SPEAKER,
        "Waterproof Bluetooth Speaker",
        "bluetooth speakers",
        "Electronics › Portable Audio & Video › Portable Speakers",
        pricing="",
    ),
    _product(TRUNKS, "A second copy of the trunks", "swim trunks", "Clothing", pricing="$1.00"),
    _product("nan", "No id", "nothing", "Nothing"),
    _product("B0TOOLONGID1", "An id over ten characters", "nothing", "Nothing"),
    _product(
        HEATER,
        "Oil Filled Radiator Space Heater",
        "space heaters",
        "Home & Kitchen › Heating, Cooling & Air Quality › Space Heaters",
        pricing="$995.00",
    ),
]

ATTRIBUTES = {
    TRUNKS: {
        "attributes": ["quick drying", "elastic waist", "mesh lining"],
        "instruction": "Find me quick drying men's swim trunks with elastic waist",
        "instruction_attributes": ["quick drying", "elastic waist"],
    },
    SHAMPOO: {"attributes": ["tea tree", "essential oil", "natural ingredients"]},
    SPEAKER: {"attributes": []},
}


def _instruction(text: str, attributes: list[str], options: list[str]) -> dict[str, Any]:
    return {
        "asin": "",
        "instruction": text,
        "attributes": attributes,
        "options": options,
        "instruction_attributes": attributes,
        "instruction_options": options,
        "assignment_id": "A",
        "worker_id": "W",
    }


HUMAN = {
    TRUNKS: [
        _instruction(
            f"i need quick drying swim trunks in navy blue, size large ({i}).",
            ["quick drying"],
            ["navy blue", "large"],
        )
        for i in range(300)
    ],
    SHAMPOO: [
        _instruction(
            f"i want a tea tree shampoo with natural ingredients ({i})",
            ["tea tree", "natural ingredients"],
            ["16 fl oz (pack of 2)"],
        )
        for i in range(220)
    ]
    + [_instruction("no attributes, so WebShop skips me", [], [])],
    HEATER: [
        _instruction(f"i need an oil filled space heater ({i})", ["oil filled"], [])
        for i in range(5)
    ],
    "B0ABSENT99": [_instruction("a product not in the catalogue", ["absent"], [])],
}
HUMAN_GOALS = 300 + 220 + 5


def write_webshop(folder: Path, *, small: bool = True) -> Path:
    """WebShop's data folder as its setup.sh leaves it (``-d small`` or ``-d all`` names)."""
    folder.mkdir(parents=True, exist_ok=True)
    suffix = "_1000" if small else ""
    (folder / f"items_shuffle{suffix}.json").write_text(json.dumps(PRODUCTS), encoding="utf-8")
    (folder / f"items_ins_v2{suffix}.json").write_text(json.dumps(ATTRIBUTES), encoding="utf-8")
    (folder / "items_human_ins.json").write_text(json.dumps(HUMAN), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_webshop(tmp_path_factory.mktemp("webshop") / "data")


@pytest.fixture(autouse=True, scope="module")
def _cache(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LLMGYM_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


def make(data_dir: Path, **config: Any) -> WebShopEnv:
    env = gym.make(
        "llmgym/WebShop-v0", config={"source": "webshop", "data_dir": str(data_dir), **config}
    )
    return env.unwrapped  # type: ignore[return-value]


# ---------------------------------------------------------------------------- the data
def test_check_counts_goals_per_split(data_dir: Path) -> None:
    report = get_source("webshop").check(data_dir)
    assert dict(report.splits) == {"train": HUMAN_GOALS - TEST_GOALS, "eval": TEST_GOALS}
    text = report.text()
    assert "items_shuffle_1000.json: 4 products" in text  # a repeated id, 'nan', a long id
    assert f"{HUMAN_GOALS} human goals" in text
    assert "synthetic goals (config goals='synthetic', AgentGym's): 4" in text


def test_goals_follow_webshops_order_and_split(data_dir: Path) -> None:
    """Goals in product then instruction order, shuffled as random.seed(233); shuffle(...)."""
    in_file_order = [
        ins["instruction"].strip(".")
        for asin in (TRUNKS, SHAMPOO, HEATER)
        for ins in HUMAN[asin]
        if ins["instruction_attributes"]
    ]
    random.seed(233)
    random.shuffle(in_file_order)
    env = make(data_dir)
    seen = []
    for split in ("eval", "train"):
        for task_id in env.task_ids(split):
            env.reset(options={"task_id": task_id})
            seen.append(env.goal.instruction)
    assert [text.split(", and price lower than")[0] for text in seen] == in_file_order


def test_price_caps_and_prices_follow_webshop(data_dir: Path) -> None:
    goals = load_shop(data_dir).goals("human")
    shop = load_shop(data_dir).shop
    for goal in goals:
        price = shop.product_by_asin(goal.asin).price
        if goal.asin == HEATER:  # $995: WebShop's caps end at 990
            assert goal.price_upper == 1_000_000 and "price lower" not in goal.instruction
            continue
        caps = [10.0 * i for i in range(1, 100) if 10.0 * i > price][:4]
        assert goal.price_upper in caps[1:]
        assert goal.instruction.endswith(f", and price lower than {goal.price_upper:.2f} dollars")
    assert shop.product_by_asin(TRUNKS).price == 24.99
    assert 12.99 <= shop.product_by_asin(SHAMPOO).price <= 19.99  # a draw in the range
    assert shop.product_by_asin(SPEAKER).price == 100.0  # no price: WebShop's $100
    trunks = shop.product_by_asin(TRUNKS)
    assert trunks.options == (
        ("color", ("navy blue", "black | white")),
        ("size", ("small", "large")),
    )
    assert trunks.product_type == "men's swim trunks"
    assert shop.product_by_asin(SPEAKER).attributes == ()
    assert shop.product_by_asin(HEATER).attributes == ("DUMMY_ATTR",)


def test_synthetic_goals_and_agentgym_ids(data_dir: Path) -> None:
    """AgentGym's server plays the synthetic goals: one per option combination."""
    source = WebShopSource()
    assert source.agentgym_config == {"goals": "synthetic"}
    ids = source.agentgym_task_ids(data_dir)
    assert list(ids) == ["eval/00000", "eval/00001", "eval/00002", "eval/00003"]
    env = make(data_dir, goals="synthetic")
    texts = []
    for task_id in ids:
        env.reset(options={"task_id": task_id})
        texts.append(env.goal.instruction)
    stem = "Find me quick drying men's swim trunks with elastic waist with "
    combos = [
        "color: navy blue, and size: small",
        "color: navy blue, and size: large",
        "color: black | white, and size: small",
        "color: black | white, and size: large",
    ]
    random.seed(233)
    random.shuffle(combos)
    assert [t.split(", and price lower")[0] for t in texts] == [stem + c for c in combos]
    assert len({t.split(" dollars")[0][-6:] for t in texts}) == 1  # one cap per product


def test_a_webshop_checkout_is_read_from_its_data_folder(data_dir: Path) -> None:
    checkout = data_dir.parent
    report = get_source("webshop").check(checkout)
    assert dict(report.splits) == {"train": HUMAN_GOALS - TEST_GOALS, "eval": TEST_GOALS}


def test_full_files_are_read_where_present(tmp_path: Path) -> None:
    folder = write_webshop(tmp_path / "data", small=False)
    assert load_shop(folder).files == (
        "items_shuffle.json",
        "items_ins_v2.json",
        "items_human_ins.json",
    )


@pytest.mark.parametrize(
    ("missing", "named"),
    [
        ("items_human_ins.json", "items_human_ins.json"),
        ("items_ins_v2_1000.json", "items_ins_v2_1000.json"),
        ("items_shuffle_1000.json", "items_shuffle_1000.json"),
    ],
)
def test_a_missing_file_is_named(tmp_path: Path, missing: str, named: str) -> None:
    folder = write_webshop(tmp_path / "data")
    (folder / missing).unlink()
    with pytest.raises(DataError, match=rf"{folder / named}: .* is missing"):
        get_source("webshop").check(folder)


def test_a_bad_file_is_named(tmp_path: Path) -> None:
    folder = write_webshop(tmp_path / "data")
    (folder / "items_human_ins.json").write_text("[1, 2", encoding="utf-8")
    with pytest.raises(DataError, match=r"items_human_ins.json: not readable as JSON"):
        load_shop(folder)
    (folder / "items_human_ins.json").write_text("[]", encoding="utf-8")
    with pytest.raises(DataError, match=r"items_human_ins.json: expected a JSON dict, found list"):
        load_shop(folder)
    products = [{**PRODUCTS[0], "pricing": "$1.2.3"}]
    write_webshop(folder)
    (folder / "items_shuffle_1000.json").write_text(json.dumps(products), encoding="utf-8")
    with pytest.raises(DataError, match=r"product 0 \(B0TRUNKS01\): 'pricing' '\$1.2.3'"):
        load_shop(folder)


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    folder = write_webshop(tmp_path / "data")
    assert len(load_shop(folder).goals("human")) == HUMAN_GOALS
    fewer = {TRUNKS: HUMAN[TRUNKS][:10]}
    (folder / "items_human_ins.json").write_text(json.dumps(fewer), encoding="utf-8")
    assert len(load_shop(folder).goals("human")) == 10


# ---------------------------------------------------------------------------- the config
def test_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"WebShopConfig.data_dir: source 'webshop' reads"):
        gym.make("llmgym/WebShop-v0", config={"source": "webshop"})
    with pytest.raises(ConfigError, match=r"WebShopConfig.data_dir: .* is not a directory"):
        gym.make(
            "llmgym/WebShop-v0", config={"source": "webshop", "data_dir": str(tmp_path / "none")}
        )
    with pytest.raises(ConfigError, match=r"WebShopConfig.goals: 'synthetic' applies"):
        gym.make("llmgym/WebShop-v0", config={"goals": "synthetic"})
    with pytest.raises(ConfigError, match=r"WebShopConfig.goals"):
        gym.make("llmgym/WebShop-v0", config={"goals": "robots"})


# ---------------------------------------------------------------------------- the reward
def test_thefuzz_token_set_ratio_as_webshop_uses_it() -> None:
    assert token_set_ratio("essential oil", "essential oils") == 96
    assert token_set_ratio("powder snow", "cool powder snow") == 100  # one side's words
    assert token_set_ratio("Tea-Tree!", "tea tree") == 100  # punctuation and case
    assert token_set_ratio("tea bag", "tea tree") == 60  # "tea" against "tea bag": 6 / 10
    assert token_set_ratio("", "x") == 0
    # a synthetic goal's option is the (name, value) pair, read as its text
    assert token_set_ratio("navy", ("color", "navy")) == 100
    assert normalize_color("navy blue") == "blue"  # WebShop's first colour word, in its order
    assert normalize_color(("color", "navy")) == "navy"
    assert normalize_color(("size", "large")) == ("size", "large")


def _goal(**fields: Any) -> OriginalGoal:
    base: dict[str, Any] = {
        "asin": TRUNKS,
        "name": "Name 1",
        "query": "query 1",
        "product_category": "a › b › c",
        "instruction": "",
        "attributes": (),
        "options": (),
        "price_upper": 50.0,
    }
    return OriginalGoal(**{**base, **fields})


def test_type_reward_follows_webshops_rule() -> None:
    """WebShop's test_get_type_reward cases that need no spaCy model."""

    def nouns(text: str) -> list[str]:
        return text.lower().split()

    goal = _goal()
    assert type_reward(goal, "Name 1", "query 1", "a › b › c", nouns) == 1.0
    assert type_reward(goal, "Name 2", "query 2", "b › c › a", nouns) == 1.0  # categories
    assert type_reward(goal, "Name 2", "query 2", "d › e › f", nouns) == 1.0  # title 0.5
    assert type_reward(goal, "Other 2", "query 2", "a › a › d", nouns) == 0.0  # no shared noun
    long_goal = _goal(name=" ".join(f"w{i}" for i in range(12)))
    assert type_reward(long_goal, "w0 x", "q", "d › e", nouns) == 0.1  # under a tenth
    assert type_reward(long_goal, "w0 w1", "q", "d › e", nouns) == 0.5  # a sixth, no match
    nameless = _goal(name="")  # no nouns: a title score of 0.2, not above 0.2
    assert type_reward(nameless, "anything", "q", "d", nouns) == 0.5
    assert type_reward(nameless, "anything", "query 1", "d", nouns) == 1.0


def _play(env: WebShopEnv, actions: list[str]) -> tuple[float, dict[str, Any]]:
    reward, info = 0.0, {}
    for action in actions:
        _, reward, terminated, _, info = env.step(action)
        assert not info["invalid_action"], (action, info)
        if terminated:
            break
    return float(reward), info


def _task_of(env: WebShopEnv, asin: str) -> str:
    """The first eval task whose goal product is ``asin``."""
    goals = load_shop(Path(env.config.data_dir)).split("human", "eval")
    index = next(i for i, goal in enumerate(goals) if goal.asin == asin)
    return f"eval/{index:05d}"


def test_oracle_buys_the_goal_product(data_dir: Path) -> None:
    env = make(data_dir)
    env.reset(options={"task_id": _task_of(env, TRUNKS)})
    actions = []
    while True:
        action = env.oracle_action()
        actions.append(action)
        _, reward, terminated, _, info = env.step(action)
        if terminated:
            break
    assert actions == [
        f"search[{TRUNKS}]",
        f"click[{TRUNKS.lower()}]",
        "click[navy blue]",
        "click[large]",
        "click[buy now]",
    ]
    assert reward == 1.0 and info["success"]


def test_a_wrong_product_scores_zero_and_wrong_options_partly(data_dir: Path) -> None:
    env = make(data_dir)
    task_id = _task_of(env, TRUNKS)  # quick drying; navy blue, large; a price cap
    env.reset(options={"task_id": task_id})
    reward, info = _play(env, [f"search[{SPEAKER}]", f"click[{SPEAKER.lower()}]", "click[buy now]"])
    assert reward == 0.0 and not info["success"]
    assert info["score"]["r_type"] == 0.0
    env.reset(options={"task_id": task_id})
    reward, info = _play(
        env, [f"search[{TRUNKS}]", f"click[{TRUNKS.lower()}]", "click[small]", "click[buy now]"]
    )
    assert reward == pytest.approx(2 / 4)  # attribute and price: navy blue and large missed
    assert info["score"]["option_matches"] == 0
    env.reset(options={"task_id": task_id})
    reward, _ = _play(
        env,
        [
            f"search[{TRUNKS}]",
            f"click[{TRUNKS.lower()}]",
            "click[black | white]",
            "click[large]",
            "click[buy now]",
        ],
    )
    assert reward == pytest.approx(3 / 4)


def test_attributes_match_fuzzily_or_in_the_text(data_dir: Path) -> None:
    env = make(data_dir)
    env.reset(options={"task_id": _task_of(env, SHAMPOO)})
    reward, info = _play(
        env,
        [
            f"search[{SHAMPOO}]",
            f"click[{SHAMPOO.lower()}]",
            "click[16 fl oz (pack of 2)]",
            "click[buy now]",
        ],
    )
    assert info["score"]["attribute_matches"] == 2 and reward == 1.0


# ---------------------------------------------------------------------------- conformance
def test_conformance(data_dir: Path) -> None:
    figures = testing.check_conformance(
        lambda: make(data_dir), oracle_episodes=20, hostile_count=100
    )
    assert figures["oracle_success_rate"] == 1.0


def test_hostile_actions_are_answered(data_dir: Path) -> None:
    env = make(data_dir)
    env.reset(options={"task_id": "train/00000"})
    for action in ("search[]", "click[nothing here]", "buy", "search[" + "x" * 2000 + "]"):
        _, reward, terminated, _, info = env.step(action)
        assert info["invalid_action"] and reward == 0.0 and not terminated


def test_the_type_tagger_without_a_spacy_model_keeps_content_words() -> None:
    name, nouns = type_tagger()
    if name.startswith("spacy:"):
        pytest.skip("a spaCy model is installed: WebShop's own tagger is used")
    assert name == "words"
    assert nouns("Men's Quick Dry Swim Trunks with 2 Pockets, Navy-Blue") == [
        "men's",
        "quick",
        "dry",
        "swim",
        "trunks",
        "pockets",
        "navy-blue",
    ]
