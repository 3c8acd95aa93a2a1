"""WebShop's original data: its scraped products and its human (or synthetic) instructions.

Reads the files WebShop's ``setup.sh`` downloads into its ``data/`` folder, as its own
``web_agent_site/engine/engine.py:load_products`` reads them, makes its goals as
``web_agent_site/engine/goal.py`` does, and orders them as ``web_agent_text_env.py``'s
``SimServer`` does (``random.seed(233); random.shuffle(goals)``). The products go into the same
sqlite FTS5 catalogue the generated shop uses (built once per data directory into llmgym's cache
folder), so pages, actions and search are unchanged; the reward is WebShop's
(:mod:`.original_reward`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import itertools
import json
import math
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from llmgym.core.cache import bounded_cache
from llmgym.core.fulltext import cached_database
from llmgym.envs.webshop import original_reward, store
from llmgym.envs.webshop.catalogue import Product
from llmgym.envs.webshop.original_reward import GoalOption, OriginalGoal
from llmgym.envs.webshop.store import Shop, write_catalogue
from llmgym.errors import DataError
from llmgym.originals import DataReport, OriginalSource, missing_data

__all__ = [
    "GOAL_SETS",
    "TEST_GOALS",
    "OriginalShop",
    "WebShopSource",
    "load_shop",
]

GOAL_SETS = ("human", "synthetic")
"""WebShop's two goal sets: its 12,087 crowd-sourced instructions (``human_goals=True``, the
paper's) and one instruction per product and option combination (``human_goals=False``, what
AgentGym's server plays)."""

TEST_GOALS = 500
"""The first 500 shuffled goals are WebShop's test goals (llmgym's ``eval``; the rest is
``train``, WebShop's dev range 500-1,499 included)."""

GOAL_SEED = 233
"""WebShop's seed of the goal shuffle (and AgentGym's of the synthetic price caps)."""

PRICE_RANGE = tuple(10.0 * i for i in range(1, 100))
"""WebShop's price caps: 10, 20, ..., 990 dollars."""

NO_PRICE_CAP = 1_000_000.0
"""The cap of a goal whose product costs 980 dollars or more (WebShop states none)."""

_PRODUCT_FILES = ("items_shuffle.json", "items_shuffle_1000.json")
_ATTRIBUTE_FILES = ("items_ins_v2.json", "items_ins_v2_1000.json")
_HUMAN_FILE = "items_human_ins.json"
_DUMMY_ATTRIBUTE = "DUMMY_ATTR"


@dataclass(frozen=True)
class _Record:
    """What WebShop's goals take from one product."""

    asin: str
    name: str
    query: str
    product_category: str
    price: float
    options: tuple[tuple[str, tuple[str, ...]], ...]
    human: tuple[Mapping[str, Any], ...]
    instruction: str | None
    instruction_attributes: tuple[str, ...]


def _files(data_dir: Path) -> tuple[Path, Path, Path]:
    """The product, attribute and human-instruction files: the full set where its product file
    is present, else the 1,000-product one; in ``data_dir`` or, for a WebShop checkout, in its
    ``data/`` folder.

    Raises:
        DataError: A file of the set is missing.
    """
    in_checkout = data_dir / "data"
    if not any((data_dir / name).is_file() for name in _PRODUCT_FILES) and any(
        (in_checkout / name).is_file() for name in _PRODUCT_FILES
    ):
        data_dir = in_checkout
    full = (data_dir / _PRODUCT_FILES[0]).is_file()
    products = data_dir / _PRODUCT_FILES[0 if full else 1]
    attributes = data_dir / _ATTRIBUTE_FILES[0 if full else 1]
    if not products.is_file():
        raise missing_data(
            data_dir / _PRODUCT_FILES[1],
            f"the product file ({_PRODUCT_FILES[0]} or {_PRODUCT_FILES[1]})",
            "webshop",
        )
    human = data_dir / _HUMAN_FILE
    for path, what in ((attributes, "the attribute file"), (human, "the human instruction file")):
        if not path.is_file():
            raise missing_data(path, what, "webshop")
    return products, attributes, human


def _read_json(path: Path, kind: type) -> Any:
    try:
        with path.open(encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{path}: not readable as JSON ({error})") from error
    if not isinstance(data, kind):
        raise DataError(f"{path}: expected a JSON {kind.__name__}, found {type(data).__name__}")
    return data


def _pricing(raw: Any, where: str) -> list[float]:
    """WebShop's prices of a product: the dollar amounts of its ``pricing`` text (two at
    most), or ``[100.0]`` without one."""
    if not raw:
        return [100.0]
    if not isinstance(raw, str):
        raise DataError(f"{where}: 'pricing' should be a text such as '$12.99', not {raw!r}")
    try:
        prices = [float(Decimal(re.sub(r"[^\d.]", "", part))) for part in raw.split("$")[1:]]
    except InvalidOperation as error:
        raise DataError(f"{where}: 'pricing' {raw!r} is not a dollar price") from error
    if not prices:
        raise DataError(f"{where}: 'pricing' {raw!r} has no dollar price")
    return prices[:2]


def _options(raw: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """WebShop's options: lower-case names, values stripped, ``/`` as ``' | '``, lower case."""
    if not raw:
        return ()
    if not isinstance(raw, dict):
        raise DataError(f"{where}: 'customization_options' should be an object")
    options: dict[str, tuple[str, ...]] = {}
    for name, contents in raw.items():
        if contents is None:
            continue
        try:
            values = tuple(
                str(content["value"]).strip().replace("/", " | ").lower() for content in contents
            )
        except (TypeError, KeyError) as error:
            raise DataError(
                f"{where}: option {name!r} should be a list of {{'value': ...}} objects"
            ) from error
        options[str(name).lower()] = values
    return tuple(options.items())


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _records(
    products_path: Path, attributes_path: Path, human_path: Path
) -> tuple[list[Product], list[_Record]]:
    """The products as ``load_products`` keeps them (ids no longer than 10 characters, not
    ``nan``, the first of each id, with their attributes), and what their goals need."""
    raw_products = _read_json(products_path, list)
    attributes = _read_json(attributes_path, dict)
    human = _read_json(human_path, dict)
    seen: set[str] = set()
    products: list[Product] = []
    records: list[_Record] = []
    for index, raw in enumerate(raw_products):
        where = f"{products_path}: product {index}"
        if not isinstance(raw, dict) or not isinstance(raw.get("asin"), str):
            raise DataError(f"{where}: expected an object with an 'asin' text")
        asin = raw["asin"]
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        try:
            name, query, product_category = raw["name"], raw["query"], raw["product_category"]
        except KeyError as error:
            raise DataError(f"{where} ({asin}): no {error.args[0]!r} field") from error
        bullets = raw.get("small_description")
        bullet_points = tuple(
            _text(b) for b in (bullets if isinstance(bullets, list) else [bullets])
        )
        pricing = _pricing(raw.get("pricing"), f"{where} ({asin})")
        entry = attributes.get(asin)
        has_attributes = isinstance(entry, dict) and "attributes" in entry
        product_attributes = tuple(entry["attributes"]) if has_attributes else (_DUMMY_ATTRIBUTE,)
        product = Product(
            id=len(products) + 1,
            asin=asin,
            product_type=_text(query).lower().strip(),
            brand="",
            title=_text(name),
            category=tuple(part.strip() for part in _text(product_category).split("›")),
            attributes=product_attributes,
            options=_options(raw.get("customization_options"), f"{where} ({asin})"),
            price=_price(asin, pricing),
            rating=None,
            rating_count=0,
            description=_text(raw.get("full_description")),
            features=bullet_points,
            reviews=(),
        )
        entry = entry if isinstance(entry, dict) else {}
        products.append(product)
        records.append(
            _Record(
                asin=asin,
                name=product.title,
                query=product.product_type,
                product_category=_text(product_category),
                price=product.price,
                options=product.options,
                human=tuple(human.get(asin) or ()),
                instruction=entry.get("instruction"),
                instruction_attributes=tuple(entry.get("instruction_attributes") or ()),
            )
        )
    return products, records


def _price(asin: str, pricing: list[float]) -> float:
    """WebShop's price of a product (``generate_product_prices``): its one price, or a uniform
    draw between the two ends of its range. WebShop draws unseeded; here the draw is seeded by
    the product id, so the same on every run."""
    if len(pricing) == 1:
        return pricing[0]
    return random.Random(f"webshop-price:{asin}").uniform(pricing[0], pricing[1])


def _price_cap(price: float, rng: random.Random) -> tuple[float, str]:
    """WebShop's cap: the larger of two of the four multiples of ten above the price."""
    caps = [cap for cap in PRICE_RANGE if cap > price][:4]
    if len(caps) < 2:
        return NO_PRICE_CAP, ""
    _, cap = sorted(rng.sample(caps, 2))
    return cap, f", and price lower than {cap:.2f} dollars"


def _human_goals(records: Sequence[_Record], where: Path) -> list[OriginalGoal]:
    """``get_human_goals``: one goal per instruction with attributes, in product order."""
    rng = random.Random(GOAL_SEED)
    goals = []
    for record in records:
        for number, instruction in enumerate(record.human):
            try:
                attributes = tuple(instruction["instruction_attributes"])
                text, options = instruction["instruction"], instruction["instruction_options"]
            except (TypeError, KeyError) as error:
                raise DataError(
                    f"{where}: instruction {number} of {record.asin} lacks "
                    "'instruction', 'instruction_attributes' or 'instruction_options'"
                ) from error
            if not attributes:
                continue
            cap, cap_text = _price_cap(record.price, rng)
            goals.append(_goal(record, str(text).strip(".") + cap_text, attributes, options, cap))
    random.Random(GOAL_SEED).shuffle(goals)
    return goals


def _with_instructions(records: Sequence[_Record], where: Path) -> tuple[_Record, ...]:
    """The products with a synthetic instruction (``items_ins_v2``'s ``instruction``)."""
    kept = []
    for record in records:
        if record.instruction is None:
            continue
        if not record.instruction_attributes:
            raise DataError(
                f"{where}: {record.asin} has an instruction but no instruction_attributes"
            )
        kept.append(dataclasses.replace(record, human=()))
    return tuple(kept)


def _combinations(record: _Record) -> int:
    """How many synthetic goals a product makes: the product of its option groups' sizes."""
    return math.prod(len(values) for values in dict(record.options).values())


def _synthetic_goals(records: Sequence[_Record]) -> list[OriginalGoal]:
    """``get_synthetic_goals``: per product with an instruction, one goal per combination of
    its option values (names sorted), sharing one price cap; shuffled as WebShop does."""
    rng = random.Random(GOAL_SEED)
    goals = []
    for record in records:
        assert record.instruction is not None
        cap, cap_text = _price_cap(record.price, rng)
        options = dict(record.options)
        names = sorted(options)
        for combination in itertools.product(*(options[name] for name in names)):
            pairs = tuple(zip(names, combination, strict=True))
            option_text = ", and ".join(f"{name}: {value}" for name, value in pairs)
            text = f"{record.instruction}{' with ' + option_text if option_text else ''}{cap_text}"
            goals.append(_goal(record, text, record.instruction_attributes, pairs, cap))
    random.Random(GOAL_SEED).shuffle(goals)
    return goals


def _goal(
    record: _Record,
    text: str,
    attributes: Sequence[str],
    options: Sequence[GoalOption],
    cap: float,
) -> OriginalGoal:
    return OriginalGoal(
        asin=record.asin,
        name=record.name,
        query=record.query,
        product_category=record.product_category,
        instruction=text,
        attributes=tuple(attributes),
        options=tuple(tuple(o) if isinstance(o, list) else o for o in options),
        price_upper=cap,
    )


class OriginalShop:
    """One data directory of WebShop's: its catalogue database and its goals.

    Attributes:
        shop: The products in llmgym's catalogue database (search, pages).
        files: The files read, relative to the data directory.
        products: Products kept (after WebShop's id filter).
        synthetic_count: How many synthetic goals there are (made when first asked for).
    """

    def __init__(
        self,
        shop: Shop,
        files: tuple[str, ...],
        products: int,
        human: tuple[OriginalGoal, ...],
        with_instructions: tuple[_Record, ...],
    ) -> None:
        self.shop = shop
        self.files = files
        self.products = products
        self.synthetic_count = sum(_combinations(record) for record in with_instructions)
        self._human = human
        self._with_instructions = with_instructions

    @cached_property
    def _synthetic(self) -> tuple[OriginalGoal, ...]:
        return tuple(_synthetic_goals(self._with_instructions))

    def goals(self, goal_set: str) -> tuple[OriginalGoal, ...]:
        """The goals of ``goal_set`` (:data:`GOAL_SETS`), in WebShop's shuffled order."""
        return self._human if goal_set == "human" else self._synthetic

    def split(self, goal_set: str, split: str) -> tuple[OriginalGoal, ...]:
        """The goals of llmgym's ``split``: ``eval`` the first :data:`TEST_GOALS`, ``train``
        the rest."""
        goals = self.goals(goal_set)
        return goals[:TEST_GOALS] if split == "eval" else goals[TEST_GOALS:]


def _code_digest() -> str:
    digest = hashlib.sha256()
    for module in (store, original_reward):
        digest.update(Path(inspect.getfile(module)).read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:12]


def _stats(paths: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    return tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in paths)


def load_shop(data_dir: Path, *, progress: bool = True) -> OriginalShop:
    """The WebShop data in ``data_dir`` (read once per process while its files are unchanged;
    its catalogue database is built once into llmgym's cache folder).

    Raises:
        DataError: A file is missing or does not read as WebShop's layout.
    """
    paths = _files(data_dir.resolve())
    return _load(paths, _stats(paths), progress)


@bounded_cache(4)
def _load(
    paths: tuple[Path, Path, Path], stats: tuple[tuple[str, int, int], ...], progress: bool
) -> OriginalShop:
    products, records = _records(*paths)
    human = _human_goals(records, paths[2])
    with_instructions = _with_instructions(records, paths[1])
    del records
    key = hashlib.sha256(repr((stats, _code_digest())).encode()).hexdigest()[:16]
    database = cached_database(
        "webshop-original",
        f"webshop-original-{key}.sqlite3",
        len(products),
        lambda path: write_catalogue(
            path,
            products,
            len(products),
            {"source": "webshop", "files": json.dumps([s[0] for s in stats])},
            progress=progress,
            description="Indexing WebShop's products (once)",
        ),
        what="the WebShop catalogue",
        keep=4,
    )
    return OriginalShop(
        shop=Shop(database, -1, len(products)),
        files=tuple(path.name for path in paths),
        products=len(products),
        human=tuple(human),
        with_instructions=with_instructions,
    )


class WebShopSource(OriginalSource):
    """WebShop's products and instructions, as its ``setup.sh`` downloads them."""

    name = "webshop"
    env_id = "llmgym/WebShop-v0"
    title = "WebShop (1.18M products or the 1,000-product subset; 12,087 human instructions)"
    homepage = "https://github.com/princeton-nlp/WebShop"
    license = (
        "MIT (WebShop's code and data release, LICENSE.md); the products were scraped from "
        "amazon.com"
    )
    fetch_commands = (
        "pip install gdown",
        "gdown https://drive.google.com/uc?id=1EgHdxQ_YxqIQlvvq5iKlCrkEKR6-j0Ib"
        "  # items_shuffle_1000.json",
        "gdown https://drive.google.com/uc?id=1IduG0xl544V_A_jv3tHXC0kyFi7PnyBu"
        "  # items_ins_v2_1000.json",
        "gdown https://drive.google.com/uc?id=14Kb5SPBk_jfdLZ_CDBNitW98QLDlKR5O"
        "  # items_human_ins.json",
        "# for all 1.18M products (setup.sh -d all), instead of the first two:",
        "# gdown https://drive.google.com/uc?id=1A2whVgOO0euk5O13n2iYDM0bQRkkRduB",
        "# gdown https://drive.google.com/uc?id=1s2j6NgHljiZzQNL3veZaAiyW_qDEgBNi",
    )
    layout = (
        "items_shuffle_1000.json   (or items_shuffle.json: all products)\n"
        "items_ins_v2_1000.json    (or items_ins_v2.json)\n"
        "items_human_ins.json"
    )
    agentgym_family = "webshop"
    agentgym_config: ClassVar[Mapping[str, Any]] = {"goals": "synthetic"}
    """The config under which :meth:`agentgym_task_ids` holds: AgentGym's server plays the
    synthetic goals (its ``WebAgentTextEnv`` is made without ``human_goals``)."""

    def check(self, data_dir: Path) -> DataReport:
        data = load_shop(data_dir)
        found = [
            f"{data.files[0]}: {data.products:,} products",
            f"{data.files[1]}: product attributes",
            f"{data.files[2]}: {len(data.goals('human')):,} human goals "
            f"({len(data.split('human', 'eval')):,} test -> eval, "
            f"{len(data.split('human', 'train')):,} -> train)",
            f"synthetic goals (config goals='synthetic', AgentGym's): {data.synthetic_count:,}",
        ]
        splits = {split: len(data.split("human", split)) for split in ("train", "eval")}
        return DataReport(self.name, str(data_dir.resolve()), splits, tuple(found))

    def agentgym_task_ids(self, data_dir: Path) -> Sequence[str]:
        """AgentGym's ``session_id`` ``i`` is WebShop's synthetic goal ``i`` (in the shuffled
        order): ``eval/<i>`` below 500, ``train/<i - 500>`` from there, under
        :attr:`agentgym_config`."""
        count = load_shop(data_dir).synthetic_count
        return _GoalIds(count)


class _GoalIds(Sequence[str]):
    """The task ids of goals ``0 .. count-1`` in WebShop's order (lazy)."""

    def __init__(self, count: int) -> None:
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        if index < TEST_GOALS:
            return f"eval/{index:05d}"
        return f"train/{index - TEST_GOALS:05d}"

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(self._count))
