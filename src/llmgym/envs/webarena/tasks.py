"""Task templates: WebArena's intents, their evaluators and their oracles.

A :class:`TaskTemplate` is data plus three small programs:

* :meth:`~TaskTemplate.draw` picks an instance's parameters from the pristine site data (read
  through :class:`Data`) and returns an :class:`Instance`: the intent, the start URL, the
  ``params`` the intent mentions, and the evaluators with their reference values;
* :meth:`~TaskTemplate.oracle` plays it: it reads the page through a :class:`PageView` (elements
  found by role and name, never by a remembered id) and the intent's ``params`` only, never the
  evaluators or ``reference``, and returns the next action in WebArena's grammar;
* :meth:`~TaskTemplate.check` (content and configuration changes) inspects the site databases
  after the episode.

The evaluators are WebArena's: :class:`StringMatch` (``exact``, ``must_include`` and a
normalised ``fuzzy`` match that stands in for WebArena's LLM judge, which needs a network),
:class:`UrlMatch` (the final page's path and query) and :class:`ProgramCheck`.
"""

from __future__ import annotations

import difflib
import re
import sqlite3
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar
from urllib.parse import parse_qsl, urlsplit

from llmgym.core.cache import LruCache
from llmgym.core.tasks import TaskRng
from llmgym.envs.webarena.axtree import Node
from llmgym.envs.webarena.browser import Browser
from llmgym.envs.webarena.database import Dataset, pristine

__all__ = [
    "KINDS",
    "Data",
    "Evaluator",
    "Instance",
    "PageView",
    "ProgramCheck",
    "StringMatch",
    "SubjectTemplate",
    "TaskTemplate",
    "UrlMatch",
    "done_when",
    "need",
    "normalize_answer",
]

KINDS = ("information", "navigation", "change")
MAX_TEMPLATES = 100
INSTANCES_PER_SLOT = 1_000
"""Task ``<split>/<n>`` is instance ``n % 1000`` of the template whose slot is ``n // 1000``."""
"""WebArena's three kinds of task: information seeking, navigation, content and configuration."""

T = TypeVar("T")
_PUNCTUATION = re.compile(r"[^\w\s.%/-]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_NOT_AVAILABLE = {"n/a", "na", "none", "not available", "not applicable", "no answer"}


def normalize_answer(text: str) -> str:
    """Lower case, NFKC, no currency signs or thousands separators, single spaces, no quotes or
    trailing full stop: ``' "$1,234.50." '`` -> ``'1234.50'``."""
    text = unicodedata.normalize("NFKC", text).lower().strip()
    text = _THOUSANDS.sub("", text.replace("$", ""))
    text = _PUNCTUATION.sub(" ", text)
    return " ".join(text.split()).strip(" .")


# ---------------------------------------------------------------------------- evaluators
class Evaluator(ABC):
    """One of an instance's checks; every check of an instance must pass."""

    @abstractmethod
    def passes(self, answer: str | None, url: str, state: Data, instance: Instance) -> bool:
        """Whether the episode that ended with ``answer`` (``stop``'s text) on ``url`` passes."""

    def describe(self) -> str:
        return repr(self)


@dataclass(frozen=True)
class StringMatch(Evaluator):
    """WebArena's string match on the ``stop`` answer. ``exact``: equal after
    :func:`normalize_answer`; ``must_include``: each phrase occurs in it (normalised);
    ``fuzzy``: equal after normalisation, or a character similarity of at least 0.9 (WebArena
    asks an LLM here; "N/A" also accepts "not available", "none" and the like)."""

    exact: str | None = None
    must_include: tuple[str, ...] = ()
    fuzzy: str | None = None

    def passes(self, answer: str | None, url: str, state: Data, instance: Instance) -> bool:
        if answer is None:
            return False
        said = normalize_answer(answer)
        if self.exact is not None and said != normalize_answer(self.exact):
            return False
        if any(normalize_answer(phrase) not in said for phrase in self.must_include):
            return False
        if self.fuzzy is not None:
            reference = normalize_answer(self.fuzzy)
            if reference in _NOT_AVAILABLE:
                return said in _NOT_AVAILABLE
            ratio = difflib.SequenceMatcher(None, said, reference).ratio()
            return said == reference or ratio >= 0.9
        return True


@dataclass(frozen=True)
class UrlMatch(Evaluator):
    """WebArena's URL match: the final URL has the reference's host, port and path, and every
    query parameter the reference has (parameters left empty count as absent)."""

    url: str

    def passes(self, answer: str | None, url: str, state: Data, instance: Instance) -> bool:
        want, got = urlsplit(self.url), urlsplit(url)
        if (want.netloc, want.path.rstrip("/")) != (got.netloc, got.path.rstrip("/")):
            return False
        have = {(k, v) for k, v in parse_qsl(got.query) if v}
        return all((k, v) in have for k, v in parse_qsl(want.query) if v)


@dataclass(frozen=True)
class ProgramCheck(Evaluator):
    """The template's :meth:`TaskTemplate.check` on the site databases after the episode."""

    def passes(self, answer: str | None, url: str, state: Data, instance: Instance) -> bool:
        return template(instance.template).check(state, instance)


# ---------------------------------------------------------------------------- instances
@dataclass(frozen=True)
class Instance:
    """One task: what to do (``intent``), where to start, and how it is judged.

    ``params`` are the values the intent mentions (the oracle reads them); ``evaluators`` and
    ``reference`` (hidden values a program check needs, such as a row id) are the answer key.
    """

    template: str
    intent: str
    start_url: str
    params: Mapping[str, Any]
    evaluators: tuple[Evaluator, ...]
    reference: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The instance's content (splits are disjoint by it)."""
        return f"{self.template}\n{self.start_url}\n{self.intent}"


class Data:
    """The site databases a template reads or checks, by dataset: ``data[ShopData]``."""

    def __init__(self, connect: Callable[[type[Dataset]], sqlite3.Connection], seed: int) -> None:
        self._connect, self.seed = connect, seed

    @classmethod
    def pristine(cls, seed: int) -> Data:
        """The generated data of ``seed`` (for drawing instances; never written)."""
        return cls(lambda dataset: pristine(dataset, seed), seed)

    @property
    def initial(self) -> Data:
        """The data as generated, before the episode (for checks that compare)."""
        return Data.pristine(self.seed)

    def __getitem__(self, dataset: type[Dataset]) -> sqlite3.Connection:
        return self._connect(dataset)

    def one(self, dataset: type[Dataset], sql: str, *params: object) -> Any:
        """The first column of the first row of ``sql`` (``None`` if no row)."""
        row = self[dataset].execute(sql, params).fetchone()
        return None if row is None else row[0]

    def all(self, dataset: type[Dataset], sql: str, *params: object) -> list[tuple]:
        return self[dataset].execute(sql, params).fetchall()

    def generated(self, dataset: type[Dataset], sql: str, *params: object) -> list[tuple]:
        """The rows of ``sql`` over the generated data of this seed, memoised per process (the
        lists draws pick from, again and again)."""
        rows = _GENERATED.get_or_create((dataset, self.seed), dict)
        key = (sql, params)
        if key not in rows:
            rows[key] = pristine(dataset, self.seed).execute(sql, params).fetchall()
        return rows[key]


_GENERATED: LruCache[tuple[type[Dataset], int], dict[tuple[str, tuple], list[tuple]]] = LruCache(
    8, name="llmgym.envs.webarena.tasks.generated"
)
"""The rows :meth:`Data.generated` memoised, by dataset and seed (as many as
:func:`~llmgym.envs.webarena.database.pristine` keeps)."""


# ---------------------------------------------------------------------------- the oracle's view
def need(found: T | None, what: str) -> T:
    """``found``, or a :class:`LookupError` saying the page lacks ``what`` (the environment's
    oracle then goes back to the task's start page)."""
    if found is None:
        raise LookupError(f"no {what} on the page")
    return found


class PageView:
    """What an oracle reads: the active page's tree (all of it, in view or not), with helpers
    that turn "click the link 'Orders'" into an action, scrolling first when it is out of view."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.url = browser.url
        self.page = browser.visit.page
        self.title = self.page.title

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def query(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.url).query, keep_blank_values=True))

    def nodes(self, role: str | None = None) -> Iterator[Node]:
        for node in self.page.nodes:
            if role is None or node.role == role:
                yield node

    def find(
        self,
        role: str,
        name: str | None = None,
        *,
        prefix: str | None = None,
        after: Node | None = None,
    ) -> Node | None:
        """The first node of ``role`` named ``name`` (exactly) or starting with ``prefix``,
        after node ``after`` if given."""
        start = after.id if after else 0
        for node in self.page.nodes[start:]:
            if node.role != role:
                continue
            if name is not None and node.name != name:
                continue
            if prefix is not None and not node.name.startswith(prefix):
                continue
            return node
        return None

    def text(self, prefix: str) -> str | None:
        """The rest of the first static text starting with ``prefix`` (``"SKU: "`` -> the SKU)."""
        node = self.find("StaticText", prefix=prefix)
        return node.name[len(prefix) :] if node else None

    def rows(self) -> list[list[Node]]:
        """The cells of each table row with cells (header rows left out)."""
        out: list[list[Node]] = []
        for node in self.page.nodes:
            if node.role == "row":
                out.append([])
            elif node.role == "cell" and out:
                out[-1].append(node)
        return [row for row in out if row]

    def value(self, node: Node) -> str:
        return self.browser.visit.state.values.get(node.id, "")

    def selected(self, combobox: Node) -> str:
        chosen = self.browser.visit.state.selected.get(combobox.id)
        return self.page.nodes[chosen - 1].name if chosen else ""

    # ------------------------------------------------------------------ actions
    def _reach(self, node: Node) -> str | None:
        """``scroll [...]`` if ``node`` is out of view, else ``None``."""
        if node.id in self.browser.visible_ids():
            return None
        order = [node_id for node_id, _ in self.browser.lines()]
        if node.id not in order:
            return None
        first_shown = self.browser.window()[1]
        return "scroll [down]" if order.index(node.id) > first_shown else "scroll [up]"

    def click(self, node: Node) -> str:
        return self._reach(node) or f"click [{node.id}]"

    def type(self, node: Node, text: str, enter: bool = True) -> str:
        return self._reach(node) or f"type [{node.id}] [{text}] [{int(enter)}]"

    def choose(self, combobox: Node, option: str) -> str | None:
        """Click ``option`` of ``combobox`` unless it is selected (``None`` then)."""
        if self.selected(combobox) == option:
            return None
        for option_id in self.page.options.get(combobox.id, ()):
            node = self.page.nodes[option_id - 1]
            if node.name == option:
                return self.click(node)
        raise LookupError(f"{combobox.name!r} has no option {option!r}")

    def fill(self, fields: Mapping[str, str]) -> str | None:
        """Type each labelled text box's wanted value where it differs (one at a time; no
        Enter), then ``None`` when all are filled."""
        for label, wanted in fields.items():
            box = self.find("textbox", label)
            if box is None:
                raise LookupError(f"no text box {label!r} on {self.url}")
            if self.value(box) != wanted:
                return self.type(box, wanted, enter=False)
        return None

    def link(self, name: str, *, prefix: bool = False) -> str:
        node = self.find("link", None if prefix else name, prefix=name if prefix else None)
        if node is None:
            raise LookupError(f"no link {name!r} on {self.url}")
        return self.click(node)

    def button(self, name: str) -> str:
        node = self.find("button", name)
        if node is None:
            raise LookupError(f"no button {name!r} on {self.url}")
        return self.click(node)


# ---------------------------------------------------------------------------- templates
class TaskTemplate(ABC):
    """One WebArena intent template (see the module docstring).

    Class attributes: ``id`` (stable, ``"<site>/<name>"``: it seeds the instances), ``slot``
    (its block of task ids), ``kind``
    (one of :data:`KINDS`), ``sites`` (the site names it uses, the start site first) and
    ``intent`` (the phrasing, with ``{slots}`` filled from ``params``).
    """

    id: ClassVar[str] = ""
    slot: ClassVar[int] = -1
    """The template's number (0-99, unique): its instances are the task ids
    ``<split>/<slot * 1000 + k>``, so adding a template never renumbers another's tasks. The
    store has 0-24, its back office 25-49; the forum takes 50-66, code hosting 67-83, the wiki
    84-99."""
    kind: ClassVar[str] = "information"
    sites: ClassVar[tuple[str, ...]] = ()
    intent: ClassVar[str] = ""

    @abstractmethod
    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        """An instance drawn with ``rng`` from the pristine ``data`` (``None``: draw again)."""

    @abstractmethod
    def oracle(self, page: PageView, params: Mapping[str, Any], memory: dict[str, Any]) -> str:
        """The next action: read ``page`` and the intent's ``params`` (and ``memory``, this
        episode's notes; write it idempotently, keyed by what the page shows), never the key."""

    def check(self, state: Data, instance: Instance) -> bool:
        """For content and configuration changes: whether the databases show the change."""
        raise NotImplementedError(f"{self.id} has no program check")

    def make(
        self,
        params: Mapping[str, Any],
        evaluators: tuple[Evaluator, ...],
        *,
        start_url: str,
        reference: Mapping[str, Any] | None = None,
    ) -> Instance:
        """The instance of ``params`` (the intent is :attr:`intent` filled with them)."""
        return Instance(
            self.id,
            self.intent.format(**params),
            start_url,
            dict(params),
            evaluators,
            dict(reference or {}),
        )


_TEMPLATES: dict[str, TaskTemplate] = {}


class SubjectTemplate(TaskTemplate):
    """A template about one subject drawn at random (a product, a customer, a post, a project):
    :meth:`subject` draws it, :meth:`about` makes the instance about it."""

    def draw(self, data: Data, rng: TaskRng) -> Instance | None:
        subject = self.subject(data, rng)
        return None if subject is None else self.about(data, rng, subject)

    @abstractmethod
    def subject(self, data: Data, rng: TaskRng) -> Any:
        """The subject drawn with ``rng`` (typically a row; ``None``: draw again)."""

    @abstractmethod
    def about(self, data: Data, rng: TaskRng, subject: Any) -> Instance | None:
        """The instance about ``subject`` (``None``: draw again)."""


def done_when(page: PageView, message: str) -> str | None:
    """``stop []`` once the page shows ``message`` (a site's confirmation)."""
    return "stop []" if page.find("StaticText", message) else None


def register(cls: type[TaskTemplate]) -> type[TaskTemplate]:
    """Class decorator: add a template to the environment's task set."""
    if cls.kind not in KINDS:
        raise ValueError(f"{cls.__name__}.kind is {cls.kind!r}; allowed: {KINDS}")
    if cls.id in _TEMPLATES:
        raise ValueError(f"two templates have the id {cls.id!r}")
    if not 0 <= cls.slot < MAX_TEMPLATES or any(t.slot == cls.slot for t in _TEMPLATES.values()):
        raise ValueError(f"{cls.__name__}.slot is {cls.slot}: it must be a free number 0-99")
    _TEMPLATES[cls.id] = cls()
    return cls


def template(template_id: str) -> TaskTemplate:
    """The registered template ``template_id``."""
    return _TEMPLATES[template_id]


def templates() -> tuple[TaskTemplate, ...]:
    """Every registered template, by id."""
    return tuple(_TEMPLATES[key] for key in sorted(_TEMPLATES))
