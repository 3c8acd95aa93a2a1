"""The protocols a server speaks: :class:`ServerProtocol`, and the one table of them.

A protocol is a way for clients to reach the server's sessions: its routes, and how a client
names a session in them. Every protocol works on the same
:class:`~llmgym.serving.server.sessions.SessionStore`, so each limit of ``llmgym serve`` (the
token, the body size, time limits, quotas, the session cap, the idle TTL) holds whichever protocol
a client speaks. :data:`PROTOCOLS` names them; :class:`~llmgym.serving.server.settings.
ServerSettings` lists the ones a server speaks (``llmgym serve --protocol NAME ...``), and
:func:`~llmgym.serving.server.app.create_app` mounts those. The table names llmgym's own
protocols by ``"module:Class"``, so that settings can check names without importing any protocol
(nor a protocol's dependencies); :func:`register_protocol` adds one (docs/authoring.md, "Adding a
server protocol").
"""

from __future__ import annotations

import importlib
import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import APIRouter

    from llmgym.serving.server.sessions import SessionStore
    from llmgym.serving.server.settings import ServerSettings

__all__ = [
    "DEFAULT_PROTOCOLS",
    "PROTOCOLS",
    "ServerProtocol",
    "checked_names",
    "get_protocol",
    "register_protocol",
]


class ServerProtocol(ABC):
    """One protocol of a server: its routes over the server's sessions, and what the guard in
    front of every route must know of it.

    A subclass sets :attr:`name` and :attr:`session_key` and builds its routers in
    :meth:`routers`; the other members have defaults that suit a protocol whose clients send
    the token as a header.
    """

    name: str
    """Its name in :data:`PROTOCOLS` and in ``ServerSettings.protocols``."""

    session_key: str
    """How a client names its session in this protocol (the server's start log says it)."""

    open_paths: frozenset[str] = frozenset()
    """Paths answered without the token; they must hold no session's data."""

    token_prefix: str | None = None
    """For clients that cannot send headers: a path prefix after which the first segment may be
    the server's token (``/agentgym/<token>/...``). The guard checks it and takes it out of the
    path before the routes and the logs see the path."""

    def check(self, settings: ServerSettings) -> None:
        """Refuse settings this protocol cannot serve.

        Raises:
            ValueError: Naming the setting and what it must be.
        """
        return None  # most protocols serve any settings

    @abstractmethod
    def routers(self, store: SessionStore) -> list[APIRouter]:
        """Its routers, over ``store`` (``store.settings`` are the server's settings)."""

    single_worker: bool = False
    """Its sessions cannot be found by a server of several workers (``--workers``): a server
    that speaks it runs one worker."""

    def session_of(self, scope: dict[str, Any], body: bytes | None) -> str | int | None:
        """The session key a request names (its ASGI ``scope``; ``body`` where
        :meth:`session_in_body` asked for it), for a server of several workers to send it to
        the worker that holds the session; ``None``: any worker may answer it (it names no
        session, or makes one). A key is a session id of the store, or an integer handle whose
        remainder by the worker count is its worker."""
        return None

    def session_in_body(self, scope: dict[str, Any]) -> bool:
        """Whether :meth:`session_of` needs the request's body to find its session."""
        return False

    def names_route(self, segment: str) -> bool:
        """Whether ``segment``, the first one after :attr:`token_prefix`, names a route rather
        than a token: when a request is refused, the guard hides every other such segment in
        the logs (it may be a mistyped token)."""
        return False

    def amend_openapi(self, schema: dict[str, Any], store: SessionStore) -> None:
        """Add to the server's OpenAPI document what its routes cannot say (called once)."""
        return None  # a protocol outside the document, or one its routes describe, adds nothing


PROTOCOLS: dict[str, str | ServerProtocol] = {
    "llmgym": "llmgym.serving.server.routes:LlmgymProtocol",
    "openenv": "llmgym.serving.server.openenv:OpenEnvProtocol",
    "agentgym": "llmgym.serving.server.agentgym:AgentGymProtocol",
    "mcp": "llmgym.serving.server.mcp:McpProtocol",
}
"""Every protocol a server can speak, by name: a :class:`ServerProtocol`, or the
``"module:Class"`` of one (imported when a server speaks it)."""

DEFAULT_PROTOCOLS: tuple[str, ...] = ("llmgym", "openenv", "agentgym", "mcp")
"""What a server speaks unless told otherwise: llmgym's own protocol at the root, OpenEnv's for
every environment at ``/openenv/<name>``, AgentGym's for every family at
``/agentgym/<family>``, MCP for every environment at ``/mcp/<name>``."""


def register_protocol(protocol: ServerProtocol) -> None:
    """Add ``protocol`` to :data:`PROTOCOLS` under its name; one registered under that name
    before is replaced, with a warning (as ``gymnasium.register`` replaces an environment id)."""
    if protocol.name in PROTOCOLS:
        warnings.warn(f"replacing the server protocol {protocol.name!r}", stacklevel=2)
    PROTOCOLS[protocol.name] = protocol


def checked_names(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` in order without repeats, each the name of a registered protocol.

    Raises:
        ValueError: ``names`` is empty or a bare string, or holds a name no protocol has; the
            message lists those that do.
    """
    if isinstance(names, str) or not names:
        raise ValueError(
            f"protocols={names!r} must be a non-empty sequence of names, such as "
            f"{DEFAULT_PROTOCOLS!r}"
        )
    for name in names:
        if name not in PROTOCOLS:
            raise ValueError(
                f"protocols: {name!r} is not a server protocol; known: {', '.join(PROTOCOLS)}"
            )
    return tuple(dict.fromkeys(names))


def get_protocol(name: str) -> ServerProtocol:
    """The protocol registered as ``name``.

    Raises:
        ValueError: No protocol has that name; the message lists those that do.
    """
    (name,) = checked_names((name,))
    entry = PROTOCOLS[name]
    if isinstance(entry, ServerProtocol):
        return entry
    module, _, attribute = entry.partition(":")
    protocol: ServerProtocol = getattr(importlib.import_module(module), attribute)()
    return protocol
