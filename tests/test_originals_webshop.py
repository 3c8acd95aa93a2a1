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
        _instruction(f"i need quick drying swim trunks in navy blue, size large ({i}).", ["quick drying"], ["navy blue", "large"])
        for i in range(300)
    ],
    SHAMPOO: [
        _instruction(f"i want a tea tree shampoo with natural ingredients ({i})", ["tea tree", "natural ingredients"], ["16 fl oz (pack of 2)"])
        for i in range(220)
    ]
    + [_instruction("no attributes, so WebShop skips me", [], [])],
    HEATER: [_instruction(f"i need an oil filled space heater ({i})", ["oil filled"], []) for i in range(5)],
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
