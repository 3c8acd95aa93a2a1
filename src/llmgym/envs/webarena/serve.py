"""Serve the WebArena sites on local ports for a real browser (``llmgym webarena serve``).

Each site runs in a :mod:`wsgiref` server with one thread per request, over one shared
:class:`~llmgym.envs.webarena.sites.Web` (the store and its back office share a database, so a
price changed in the back office shows in the store). Sessions are signed with a random secret.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from llmgym.envs.webarena.forum_data import FORUM_PASSWORD, FORUM_USER
from llmgym.envs.webarena.gitlab_data import GITLAB_PASSWORD, GITLAB_USER
from llmgym.envs.webarena.shop_data import ADMIN_PASSWORD, CUSTOMER_PASSWORD
from llmgym.envs.webarena.sites import SITE_CLASSES, Web, site_class
from llmgym.envs.webarena.web import Site
from llmgym.errors import ConfigError

__all__ = ["SIGN_IN", "RunningSite", "serve_sites"]

SIGN_IN = {
    "shop": f"emma.lopez@example.com / {CUSTOMER_PASSWORD}",
    "admin": f"admin / {ADMIN_PASSWORD}",
    "forum": f"{FORUM_USER} / {FORUM_PASSWORD}",
    "gitlab": f"{GITLAB_USER} / {GITLAB_PASSWORD}",
}
"""How to sign in to each site that has a sign-in page (the generated accounts; the wiki has
none)."""


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Requests are not logged (a page load is many of them)."""


@dataclass
class RunningSite:
    """A site being served: its name, URL and server (``stop()`` shuts it down)."""

    site: Site
    url: str
    server: WSGIServer
    thread: threading.Thread

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve_sites(
    names: Sequence[str] | None = None,
    *,
    host: str = "127.0.0.1",
    seed: int = 0,
    port_offset: int | None = 0,
    web: Web | None = None,
) -> list[RunningSite]:
    """Start the sites ``names`` (default: all) on ``host`` at their ports plus
    ``port_offset`` (``None``: ports the system picks), each in a background thread; returns
    them running."""
    classes = [site_class(name) for name in names] if names else list(SITE_CLASSES)
    for cls in classes:
        if port_offset and not 0 < cls.port + port_offset <= 65535:
            raise ConfigError(
                "port_offset",
                f"{port_offset} puts the {cls.name} site at port {cls.port + port_offset}; "
                "ports run from 1 to 65535",
            )
    web = web or Web(seed, secret=secrets.token_hex(16))
    running = []
    for cls in classes:
        site = web.site(cls)
        server = make_server(
            host,
            0 if port_offset is None else cls.port + port_offset,
            site,
            server_class=_ThreadingServer,
            handler_class=_QuietHandler,
        )
        thread = threading.Thread(
            target=server.serve_forever, name=f"webarena-{cls.name}", daemon=True
        )
        thread.start()
        running.append(RunningSite(site, f"http://{host}:{server.server_port}", server, thread))
    return running
