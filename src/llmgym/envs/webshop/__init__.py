"""WebShop: an offline web shop with a generated catalogue, BM25 search and HTML pages.

Modules: :mod:`~llmgym.envs.webshop.catalogue` (vocabulary and product generator),
:mod:`~llmgym.envs.webshop.store` (the sqlite database and its FTS5 search),
:mod:`~llmgym.envs.webshop.goals` (instructions and the reward),
:mod:`~llmgym.envs.webshop.pages` (HTML pages and their text view) and
:mod:`~llmgym.envs.webshop.env` (the environment).
"""

from llmgym.envs.webshop.env import WebShopConfig, WebShopEnv

__all__ = ["WebShopConfig", "WebShopEnv"]
