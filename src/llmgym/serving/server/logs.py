"""The server's JSON-lines logs (logger ``llmgym.serving.server``), and the filter that keeps
secrets out of every log the server process writes."""

from __future__ import annotations

import functools
import json
import logging
import re
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "JsonLogFormatter",
    "SecretFilter",
    "TokenRoutes",
    "configure_logging",
    "hide_secrets",
    "log",
    "logger",
    "redact",
]

logger = logging.getLogger("llmgym.serving.server")
logger.addHandler(logging.NullHandler())

SERVER_LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "websockets", logger.name)
"""The loggers whose handlers write what a server process logs: the root, uvicorn's (its error
log, its access log), websockets' and llmgym's."""

_AUTHORIZATION = re.compile(r"(?i)(authorization:\s*(?:bearer\s+)?)\S+")

REDACTED = "***"
"""What the logs show in place of a secret."""


_SECRET_PARAMETER = re.compile(
    r"(?i)((?:^|[?&])(?:access_token|token|api_?key|key|password|secret|auth\w*)=)[^&\s#\"']*"
)
"""A query parameter that names a secret (``?token=...``; no route reads one)."""


TokenRoutes = Mapping[str, Callable[[str], bool]]
"""Path prefixes after which a protocol's clients may send the token as the first segment
(``/agentgym/``), each with the predicate telling a route's name from a token there
(``ServerProtocol.token_prefix`` and ``ServerProtocol.names_route``)."""


@functools.lru_cache(maxsize=16)
def _token_segment(prefix: str) -> re.Pattern[str]:
    """The segment after ``prefix`` in a path as logs show it (repeated slashes, any case)."""
    parts = "/+".join(re.escape(part) for part in prefix.strip("/").split("/"))
    return re.compile(rf"(?i)(/+{parts}/+)([^/\s?#\"']+)")


def redact(text: str, token: str | None = None, token_routes: TokenRoutes | None = None) -> str:
    """``text`` (a path, a query string, a log line) with every secret it may hold struck out:
    ``token``, the value of an ``Authorization`` header or of a query parameter named for a
    secret, and the segment after each prefix of ``token_routes`` wherever it names no route
    (where clients send the token: a mistyped one, or one with nothing after it,
    ``/agentgym/<token>``, included)."""
    if token:
        text = text.replace(token, REDACTED)
    text = _AUTHORIZATION.sub(r"\1" + REDACTED, text)
    text = _SECRET_PARAMETER.sub(r"\1" + REDACTED, text)
    for prefix, names_route in (token_routes or {}).items():
        if prefix.strip("/").split("/")[0].lower() not in text.lower():
            continue

        def strike(match: re.Match[str], names_route: Callable[[str], bool] = names_route) -> str:
            return match.group(0) if names_route(match.group(2)) else match.group(1) + REDACTED

        text = _token_segment(prefix).sub(strike, text)
    return text


def log(level: int, event: str, *, exc_info: bool = False, **fields: Any) -> None:
    if logger.isEnabledFor(level):
        logger.log(level, event, exc_info=exc_info, extra={"fields": fields})


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``event`` and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=repr)


class SecretFilter(logging.Filter):
    """Strikes the secrets :func:`redact` finds out of a record's message and fields:
    websockets logs a handshake's request line and headers at debug level, before the guard
    sees the request."""

    def __init__(self, token: str | None, token_routes: TokenRoutes | None = None) -> None:
        super().__init__()
        self.token = token
        self.token_routes = token_routes

    def clean(self, text: str) -> str:
        """``text`` with the secrets struck out (``***``)."""
        return redact(text, self.token, self.token_routes)

    def filter(self, record: logging.LogRecord) -> bool:
        # the template and its arguments are cleaned apart, since formatters such as uvicorn's
        # access log read the arguments; a secret that only shows once they are joined (a
        # header's name and value are two arguments of websockets' debug line) is struck out
        # of the joined message
        if isinstance(record.msg, str):
            record.msg = self.clean(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(self.clean(a) if isinstance(a, str) else a for a in record.args)
        message = record.getMessage()
        cleaned = self.clean(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        fields = getattr(record, "fields", None)
        if fields:
            record.fields = {
                name: self.clean(value) if isinstance(value, str) else value
                for name, value in fields.items()
            }
        return True


def hide_secrets(token: str | None, token_routes: TokenRoutes | None = None) -> None:
    """Put a :class:`SecretFilter` of ``token`` (and ``token_routes``) on every handler of the
    server's loggers (:data:`SERVER_LOGGERS`), in place of any earlier one."""
    for name in SERVER_LOGGERS:
        for handler in logging.getLogger(name).handlers:
            for old in [f for f in handler.filters if isinstance(f, SecretFilter)]:
                handler.removeFilter(old)
            handler.addFilter(SecretFilter(token, token_routes))


def configure_logging(level: str = "info", stream: Any = None) -> None:
    """JSON-lines logs from ``llmgym.serving.server`` on ``stream`` (default: stderr)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
