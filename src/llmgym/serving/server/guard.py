"""The guard in front of every route: the bearer token and the request-body size limit.

A protocol whose clients send no headers (AgentGym's) names a path prefix after which the first
segment may be the token, ``/agentgym/<token>/<family>/...``: the guard compares it in constant
time and strips it from the request's path before anything else (the routes, the logs, uvicorn's
access log) sees the path. A wrong one is logged as ``/agentgym/***/...``.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Sequence
from typing import Any

from llmgym.serving.server.logs import log
from llmgym.serving.server.protocols import ServerProtocol
from llmgym.serving.server.schemas import error_reply
from llmgym.serving.server.settings import ServerSettings

__all__ = ["API_DOCS_PATHS", "Guard", "document_bearer", "open_paths"]

API_DOCS_PATHS = frozenset({"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})
"""The API's documents, answered without the token."""


def open_paths(protocols: Sequence[ServerProtocol]) -> frozenset[str]:
    """Paths answered without the token (no session data behind them): the API's documents and
    the protocols' open paths (``/health``)."""
    return API_DOCS_PATHS.union(*(protocol.open_paths for protocol in protocols))


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


class Guard:
    """Checks the bearer token and the body size before anything else runs (pure ASGI)."""

    def __init__(
        self, app: Any, settings: ServerSettings, protocols: Sequence[ServerProtocol]
    ) -> None:
        self.app = app
        self.token = f"Bearer {settings.token}".encode() if settings.token else None
        self.path_token = settings.token.encode() if settings.token else None
        self.limit = settings.max_body_bytes
        self.open_paths = open_paths(protocols)
        self.token_prefixes = {p.token_prefix: p for p in protocols if p.token_prefix is not None}

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "websocket":
            if self.token is None or hmac.compare_digest(
                dict(scope["headers"]).get(b"authorization", b""), self.token
            ):
                await self.app(scope, receive, send)
            else:  # refused before the handshake completes: the client sees HTTP 403
                log(logging.WARNING, "auth.rejected", path=scope["path"])
                await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if self.token is not None and scope["path"] not in self.open_paths:
            given = headers.get(b"authorization", b"")
            if not self._token_in_path(scope) and not hmac.compare_digest(given, self.token):
                self._redact_path(scope)
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
        started = False

        async def counting_receive() -> dict:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
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

    def _token_prefix(self, path: str) -> str | None:
        """The token prefix ``path`` starts with, if any."""
        return next((p for p in self.token_prefixes if path.startswith(p)), None)

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

    def _redact_path(self, scope: dict) -> None:
        """Hide what may be a (mistyped, or old) token in a path under a token prefix, in the
        logs and in uvicorn's access log, which read the path of the request's scope."""
        path: str = scope["path"]
        prefix = self._token_prefix(path)
        if prefix is None:
            return
        first, slash, rest = path[len(prefix) :].partition("/")
        if slash and not self.token_prefixes[prefix].names_route(first):
            scope["path"] = f"{prefix}***/{rest}"
            scope["raw_path"] = scope["path"].encode()

    async def _too_large(self, scope: dict, receive: Callable, send: Callable) -> None:
        body = {
            "error": "payload_too_large",
            "message": f"request bodies are limited to {self.limit} bytes",
            "field": None,
        }
        await error_reply(413, body, {"Connection": "close"})(scope, receive, send)
