"""WebShop: an offline web shop with a generated catalogue, BM25 search and HTML pages.

Modules: :mod:`~llmgym.envs.webshop.catalogue` (vocabulary and product generator),
:mod:`~llmgym.envs.webshop.store` (the sqlite database and its FTS5 search),
:mod:`~llmgym.envs.webshop.goals` (instructions and the reward),
:mod:`~llmgym.envs.webshop.pages` (HTML pages and their text view) and
:mod:`~llmgym.envs.webshop.env` (the environment).

The environment is imported on first use, so that the catalogue generator (which WebArena's
store shares) needs no BeautifulSoup.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llmgym.envs.webshop.env import WebShopConfig, WebShopEnv

__all__ = ["WebShopConfig", "WebShopEnv"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("llmgym.envs.webshop.env"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
