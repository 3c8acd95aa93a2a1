"""What the simulated services of the tool environments share: their data files, the split of a
generated world's items between train and eval, and helpers their tools use (dates as
arguments, search results)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from functools import cache
from importlib import resources
from typing import Any, Generic, TypeVar

from llmgym.core import split_of
from llmgym.errors import ToolError

__all__ = ["ItemSplit", "load_data", "parse_iso_date", "prompt_texts", "search_results"]

_ISO_DATE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})$")


@cache
def load_data(name: str) -> Any:
    """A vocabulary file of the tool environments (``envs/data/tools/<name>.json``), loaded once."""
    source = resources.files("llmgym.envs") / "data" / "tools" / f"{name}.json"
    return json.loads(source.read_text(encoding="utf-8"))


def prompt_texts(env_name: str) -> tuple[str, str, str]:
    """``(service, notes, example)`` of a built-in tool environment: what it tells the agent
    besides its tools (``envs/data/tools/prompts.json``)."""
    texts = load_data("prompts")[env_name]
    return texts["service"], texts["notes"], texts["example"]


def parse_iso_date(value: str, argument: str) -> date:
    """``value`` as a date, or :class:`ToolError` naming ``argument`` and the expected form."""
    match = _ISO_DATE.match(value.strip())
    if match:
        try:
            return date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            pass
    shown = value if len(value) <= 40 else value[:37] + "..."
    raise ToolError(f"{argument} {json.dumps(shown)} is not a date in the form YYYY-MM-DD")


_Item = TypeVar("_Item")


class ItemSplit(Generic[_Item]):
    """The items of a generated world (cities, films, papers) divided between the train and eval
    splits by a hash of each item's name, ``split_of(f"{prefix}:{name}")``; computed once per
    split."""

    def __init__(
        self, prefix: str, items: Callable[[], Iterable[_Item]], name: Callable[[_Item], str]
    ) -> None:
        self._prefix, self._items, self._name = prefix, items, name
        self._splits: dict[str, tuple[_Item, ...]] = {}

    def __call__(self, split: str) -> tuple[_Item, ...]:
        """The items of ``split``, in the world's order."""
        if split not in self._splits:
            self._splits[split] = tuple(
                item
                for item in self._items()
                if split_of(f"{self._prefix}:{self._name(item)}") == split
            )
        return self._splits[split]


def search_results(
    found: Sequence[_Item], describe: Callable[[_Item], dict[str, Any]], nothing: str
) -> dict[str, list[dict[str, Any]]]:
    """A search tool's result: ``{"results": [...]}``, each item found as ``describe`` shows it;
    :class:`ToolError` saying ``nothing`` when nothing was found."""
    if not found:
        raise ToolError(nothing)
    return {"results": [describe(item) for item in found]}
