"""The guard in front of every route: the bearer token, the request-body size limit and the
deadlines of a request's body and of an idle WebSocket.

AgentGym's clients send no headers, so on a server with a token the AgentGym routes also take
it as the first path segment, ``/agentgym/<token>/<family>/...``: the guard compares it in
constant time and strips it from the request's path before anything else (the routes, the logs,
uvicorn's access log) sees the path. Whatever else stands where a token would (a wrong one, a
token with nothing after it: ``/agentgym/<token>``) is logged as ``/agentgym/***``, and the
server's token is struck out of every path and query string, for every request, right token or
wrong, before anything can log it.

A request that carried the token is marked in its scope (:data:`AUTHORIZED_SCOPE_KEY`), so that
the connection gate never evicts its connection for another (see
:mod:`~llmgym.serving.server.connections`).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Callable
from typing import Any

from llmgym.serving.server.connections import AUTHORIZED_SCOPE_KEY, WS_IDLE_CLOSE_CODE
from llmgym.serving.server.logs import log, redact
from llmgym.serving.server.schemas import error_reply
from llmgym.serving.server.settings import ServerSettings

__all__ = ["AGENTGYM_PREFIX", "OPEN_PATHS", "Guard"]

AGENTGYM_PREFIX = "/agentgym/"

OPEN_PATHS = frozenset({"/health", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})
"""Paths answered without the token (no session data behind them)."""


class _BodyTooLarge(Exception):
    pass


class _BodyTooSlow(Exception):
    pass


class Guard:
    """Checks the bearer token and the body size before anything else runs (pure ASGI), and
    keeps the token out of every path the logs can show."""

    def __init__(self, app: Any, settings: ServerSettings) -> None:
        self.app = app
        self.token = f"Bearer {settings.token}".encode() if settings.token else None
        self.path_token = settings.token.encode() if settings.token else None
        self.limit = settings.max_body_bytes
        self.body_timeout_s = settings.header_timeout_s
        self.ws_idle_timeout_s = settings.ws_idle_timeout_s

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        proved = self.token is None or hmac.compare_digest(
            headers.get(b"authorization", b""), self.token
        )
        if scope["type"] == "websocket":
            _redact(scope, self.path_token)
            if not proved:  # refused before the handshake completes: the client sees HTTP 403
                log(logging.WARNING, "auth.rejected", path=scope["path"])
                await send({"type": "websocket.close", "code": 1008})
                return
            scope[AUTHORIZED_SCOPE_KEY] = True
            await self.app(scope, self._idle_limited(scope, receive, send), send)
            return
        proved = proved or self._token_in_path(scope)
        _redact(scope, self.path_token)
        if proved:
            scope[AUTHORIZED_SCOPE_KEY] = True
        elif scope["path"] not in OPEN_PATHS:
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


def _redact(scope: dict, token: bytes | None) -> None:
    """Keep secrets out of the logs and uvicorn's access log, which read the path and query
    string of the request's scope (:func:`~llmgym.serving.server.logs.redact`). None of it
    changes what a request routes to: no route has a token in it."""
    secret = token.decode() if token is not None else None
    path = redact(scope["path"], secret)
    raw_query = scope.get("query_string", b"")
    query = redact(raw_query.decode("latin-1"), secret).encode("latin-1")
    if path != scope["path"]:
        scope["path"] = path
        scope["raw_path"] = path.encode()
    if query != raw_query:
        scope["query_string"] = query
