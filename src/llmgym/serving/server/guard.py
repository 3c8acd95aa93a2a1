"""The guard in front of every route: the bearer token, the request-body size limit and the
deadlines of a request's body and of an idle WebSocket.

A protocol whose clients send no headers (AgentGym's) names a path prefix after which the first
segment may be the token, ``/agentgym/<token>/<family>/...``: the guard compares it in constant
time and strips it from the request's path before anything else (the routes, the logs, uvicorn's
access log) sees the path. Whatever else stands where a token would (a wrong one, a token with
nothing after it: ``/agentgym/<token>``) is logged as ``/agentgym/***``, and the server's token
is struck out of every path and query string, for every request, right token or wrong, before
anything can log it.

A request that carried the token is marked in its scope (:data:`AUTHORIZED_SCOPE_KEY`), so that
the connection gate never evicts its connection for another (see
:mod:`~llmgym.serving.server.connections`).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Callable, Sequence
from typing import Any

from llmgym.serving.server.connections import AUTHORIZED_SCOPE_KEY, WS_IDLE_CLOSE_CODE
from llmgym.serving.server.logs import TokenRoutes, log, redact
from llmgym.serving.server.protocols import ServerProtocol
from llmgym.serving.server.schemas import error_reply
from llmgym.serving.server.settings import ServerSettings

__all__ = ["API_DOCS_PATHS", "Guard", "document_bearer", "open_paths", "token_routes"]

API_DOCS_PATHS = frozenset({"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})
"""The API's documents, answered without the token."""


def open_paths(protocols: Sequence[ServerProtocol]) -> frozenset[str]:
    """Paths answered without the token (no session data behind them): the API's documents and
    the protocols' open paths (``/health``)."""
    return API_DOCS_PATHS.union(*(protocol.open_paths for protocol in protocols))


def token_routes(protocols: Sequence[ServerProtocol]) -> TokenRoutes:
    """The path prefixes after which the protocols' clients may send the token, each with the
    predicate that tells a route's name from a token there."""
    return {p.token_prefix: p.names_route for p in protocols if p.token_prefix is not None}


def document_bearer(schema: dict[str, Any], unguarded: frozenset[str]) -> None:
    """Say in an OpenAPI document that its operations need the bearer token (but those at
    the ``unguarded`` paths)."""
    schema.setdefault("components", {})["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer"}
    }
    for path, operations in schema["paths"].items():
        if path not in unguarded:
            for operation in operations.values():
                operation["security"] = [{"bearer": []}]


class _BodyTooLarge(Exception):
    pass


class _BodyTooSlow(Exception):
    pass


class Guard:
    """Checks the bearer token and the body size before anything else runs (pure ASGI), and
    keeps the token out of every path the logs can show."""

    def __init__(
        self, app: Any, settings: ServerSettings, protocols: Sequence[ServerProtocol]
    ) -> None:
        self.app = app
        self.token = f"Bearer {settings.token}".encode() if settings.token else None
        self.path_token = settings.token.encode() if settings.token else None
        self.limit = settings.max_body_bytes
        self.body_timeout_s = settings.header_timeout_s
        self.ws_idle_timeout_s = settings.ws_idle_timeout_s
        self.open_paths = open_paths(protocols)
        self.token_routes = token_routes(protocols)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        proved = self.token is None or hmac.compare_digest(
            headers.get(b"authorization", b""), self.token
        )
        if scope["type"] == "websocket":
            self._redact(scope)
            if not proved:  # refused before the handshake completes: the client sees HTTP 403
                log(logging.WARNING, "auth.rejected", path=scope["path"])
                await send({"type": "websocket.close", "code": 1008})
                return
            scope[AUTHORIZED_SCOPE_KEY] = True
            await self.app(scope, self._idle_limited(scope, receive, send), send)
            return
        proved = proved or self._token_in_path(scope)
        self._redact(scope)
        if proved:
            scope[AUTHORIZED_SCOPE_KEY] = True
        elif scope["path"] not in self.open_paths:
            log(logging.WARNING, "auth.rejected", path=scope["path"])
            body = {
                "error": "unauthorized",
                "message": "send the server's token as 'Authorization: Bearer <token>'",
                "field": None,
            }
            await error_reply(401, body, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._too_large(scope, receive, send)
            return
        received = 0
        body_done = False
        started = False

        async def counting_receive() -> dict:
            nonlocal received, body_done
            if body_done:  # after the body, receive() waits for the client to go away
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.body_timeout_s)
            except TimeoutError:
                raise _BodyTooSlow from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if received > self.limit:
                    raise _BodyTooLarge
            return message

        async def tracking_send(message: dict) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except _BodyTooLarge:
            if not started:
                await self._too_large(scope, receive, send)
        except _BodyTooSlow:
            if not started:
                body = {
                    "error": "request_timeout",
                    "message": f"the request body did not arrive within {self.body_timeout_s:g} "
                    "s of its previous part (--header-timeout)",
                    "field": None,
                }
                await error_reply(408, body, {"Connection": "close"})(scope, receive, send)

    def _token_prefix(self, path: str) -> str | None:
        """The token prefix ``path`` starts with, if any."""
        return next((p for p in self.token_routes if path.startswith(p)), None)

    def _token_in_path(self, scope: dict) -> bool:
        """Whether the path is ``<token prefix><token>/...`` with the server's token; if so,
        the token is taken out of the path."""
        path: str = scope["path"]
        prefix = self._token_prefix(path)
        if self.path_token is None or prefix is None:
            return False
        given, slash, rest = path[len(prefix) :].partition("/")
        if not slash or not hmac.compare_digest(given.encode(), self.path_token):
            return False
        scope["path"] = prefix + rest
        raw = scope.get("raw_path")
        if raw is not None:
            scope["raw_path"] = prefix.encode() + raw[len(prefix) :].partition(b"/")[2]
        return True

    def _redact(self, scope: dict) -> None:
        """Keep secrets out of the logs and uvicorn's access log, which read the path and query
        string of the request's scope (:func:`~llmgym.serving.server.logs.redact`). None of it
        changes what a request routes to: no route has a token in it."""
        secret = self.path_token.decode() if self.path_token is not None else None
        path = redact(scope["path"], secret, self.token_routes)
        raw_query = scope.get("query_string", b"")
        query = redact(raw_query.decode("latin-1"), secret).encode("latin-1")
        if path != scope["path"]:
            scope["path"] = path
            scope["raw_path"] = path.encode()
        if query != raw_query:
            scope["query_string"] = query

    def _idle_limited(self, scope: dict, receive: Callable, send: Callable) -> Callable:
        """``receive`` for a WebSocket that closes it (code :data:`WS_IDLE_CLOSE_CODE`) when
        the client sends nothing for ``ws_idle_timeout_s``; the app then sees a disconnect."""
        limit = self.ws_idle_timeout_s

        async def idle_limited_receive() -> dict:
            try:
                return await asyncio.wait_for(receive(), limit)
            except TimeoutError:
                log(logging.INFO, "stream.idle_closed", path=scope["path"], idle_s=limit)
                reason = f"no message for {limit:g} s (--ws-idle-timeout)"
                close = {"type": "websocket.close", "code": WS_IDLE_CLOSE_CODE, "reason": reason}
                await send(close)
                return {"type": "websocket.disconnect", "code": WS_IDLE_CLOSE_CODE}

        return idle_limited_receive

    async def _too_large(self, scope: dict, receive: Callable, send: Callable) -> None:
        body = {
            "error": "payload_too_large",
            "message": f"request bodies are limited to {self.limit} bytes",
            "field": None,
        }
        await error_reply(413, body, {"Connection": "close"})(scope, receive, send)
