"""The guard in front of every route: the bearer token and the request-body size limit.

AgentGym's clients send no headers, so on a server with a token the AgentGym routes also take
it as the first path segment, ``/agentgym/<token>/<family>/...``: the guard compares it in
constant time and strips it from the request's path before anything else (the routes, the logs,
uvicorn's access log) sees the path. A wrong one is logged as ``/agentgym/***/...``.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from typing import Any

from llmgym.integrations.agentgym import find_family
from llmgym.serving.server.logs import log
from llmgym.serving.server.schemas import error_reply
from llmgym.serving.server.settings import ServerSettings

__all__ = ["AGENTGYM_PREFIX", "OPEN_PATHS", "Guard"]

AGENTGYM_PREFIX = "/agentgym/"

OPEN_PATHS = frozenset({"/health", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})
"""Paths answered without the token (no session data behind them)."""


class _BodyTooLarge(Exception):
    pass


class Guard:
    """Checks the bearer token and the body size before anything else runs (pure ASGI)."""

    def __init__(self, app: Any, settings: ServerSettings) -> None:
        self.app = app
        self.token = f"Bearer {settings.token}".encode() if settings.token else None
        self.path_token = settings.token.encode() if settings.token else None
        self.limit = settings.max_body_bytes

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
        if self.token is not None and scope["path"] not in OPEN_PATHS:
            given = headers.get(b"authorization", b"")
            if not self._token_in_path(scope) and not hmac.compare_digest(given, self.token):
                _redact_path(scope)
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

    def _token_in_path(self, scope: dict) -> bool:
        """Whether the path is ``/agentgym/<token>/...`` with the server's token; if so, the
        token is taken out of the path."""
        path: str = scope["path"]
        if self.path_token is None or not path.startswith(AGENTGYM_PREFIX):
            return False
        given, slash, rest = path[len(AGENTGYM_PREFIX) :].partition("/")
        if not slash or not hmac.compare_digest(given.encode(), self.path_token):
            return False
        scope["path"] = AGENTGYM_PREFIX + rest
        raw = scope.get("raw_path")
        if raw is not None:
            scope["raw_path"] = (
                AGENTGYM_PREFIX.encode() + raw[len(AGENTGYM_PREFIX) :].partition(b"/")[2]
            )
        return True

    async def _too_large(self, scope: dict, receive: Callable, send: Callable) -> None:
        body = {
            "error": "payload_too_large",
            "message": f"request bodies are limited to {self.limit} bytes",
            "field": None,
        }
        await error_reply(413, body, {"Connection": "close"})(scope, receive, send)


def _redact_path(scope: dict) -> None:
    """Hide what may be a (mistyped, or old) token in an AgentGym path, in the logs and in
    uvicorn's access log, which read the path of the request's scope."""
    path: str = scope["path"]
    if not path.startswith(AGENTGYM_PREFIX):
        return
    first, slash, rest = path[len(AGENTGYM_PREFIX) :].partition("/")
    if slash and find_family(first) is None and first != "lmrlgym":
        scope["path"] = f"{AGENTGYM_PREFIX}***/{rest}"
        scope["raw_path"] = scope["path"].encode()
