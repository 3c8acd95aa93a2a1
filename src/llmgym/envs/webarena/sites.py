"""The sites of the WebArena environment, and :class:`Web`: one environment's set of them.

Each site is a :class:`~llmgym.envs.webarena.web.Site` subclass with a ``port`` and a
``dataset``; sites that share a dataset (the store and its back office) share one database.
Add a site by appending its class to :data:`SITE_CLASSES`.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from llmgym.envs.webarena.admin import ShopAdmin
from llmgym.envs.webarena.database import Database, Dataset
from llmgym.envs.webarena.forum import Forum
from llmgym.envs.webarena.gitlab import Gitlab
from llmgym.envs.webarena.shop import Shop
from llmgym.envs.webarena.web import Site
from llmgym.envs.webarena.wiki import Wiki

__all__ = ["SITE_CLASSES", "Web", "site_class"]

SITE_CLASSES: tuple[type[Site], ...] = (Shop, ShopAdmin, Forum, Gitlab, Wiki)
"""Every site, in the order ``llmgym webarena serve`` lists them."""


def site_class(name: str) -> type[Site]:
    """The site class called ``name`` (``"shop"``, ``"admin"``, ...)."""
    for cls in SITE_CLASSES:
        if cls.name == name:
            return cls
    raise KeyError(f"no site {name!r}; sites: {', '.join(c.name for c in SITE_CLASSES)}")


class Web:
    """The sites of one environment over its own working databases, built on first use.

    ``web.site_at("localhost:7770")`` finds a site by host and port; :meth:`reset` restores
    every database an episode wrote to. Pickles as its databases (written ones as an image).
    """

    def __init__(self, seed: int = 0, *, secret: str = "llmgym") -> None:
        self.seed, self.secret = seed, secret
        self.databases: dict[str, Database] = {}
        self._sites: dict[str, Site] = {}

    def database(self, dataset: type[Dataset]) -> Database:
        """The working copy of ``dataset``."""
        if dataset.name not in self.databases:
            self.databases[dataset.name] = Database(dataset, self.seed)
        return self.databases[dataset.name]

    def connection(self, dataset: type[Dataset]) -> sqlite3.Connection:
        return self.database(dataset).connection

    def site(self, cls: type[Site]) -> Site:
        """The instance of site ``cls`` over this web's database."""
        if cls.name not in self._sites:
            self._sites[cls.name] = cls(self.connection(cls.dataset), secret=self.secret)
        return self._sites[cls.name]

    def site_at(self, host: str) -> Site | None:
        """The site reached at ``host`` (``localhost:PORT``), if any."""
        name, _, port = host.partition(":")
        if name != "localhost" or not port.isdigit():
            return None
        for cls in SITE_CLASSES:
            if cls.port == int(port):
                return self.site(cls)
        return None

    def reset(self) -> None:
        for database in self.databases.values():
            database.reset()

    def __getstate__(self) -> dict[str, Any]:
        return {"seed": self.seed, "secret": self.secret, "databases": self.databases}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.seed, self.secret = state["seed"], state["secret"]
        self.databases, self._sites = state["databases"], {}
