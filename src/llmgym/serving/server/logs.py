"""The server's JSON-lines logs (logger ``llmgym.serving.server``), and the filter that keeps
secrets out of every log the server process writes."""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any

__all__ = [
    "REDACTED",
    "JsonLogFormatter",
    "SecretFilter",
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

_TOKEN_SEGMENT = re.compile(r"(?i)(/+agentgym/+)([^/\s?#\"']+)")
"""The path segment where AgentGym's clients send the token (repeated slashes and any case
included: logs show a path as it was sent)."""

REDACTED = "***"
"""What the logs show in place of a secret."""


_SECRET_PARAMETER = re.compile(
    r"(?i)((?:^|[?&])(?:access_token|token|api_?key|key|password|secret|auth\w*)=)[^&\s#\"']*"
)
"""A query parameter that names a secret (``?token=...``; no route reads one)."""


def redact(text: str, token: str | None = None) -> str:
    """``text`` (a path, a query string, a log line) with every secret it may hold struck out:
    ``token``, the value of an ``Authorization`` header or of a query parameter named for a
    secret, and the segment after ``/agentgym/`` wherever it is not an AgentGym family's name
    (where AgentGym's clients send the token: a mistyped one, or one with nothing after it,
    ``/agentgym/<token>``, included)."""
    from llmgym.integrations.agentgym import find_family

    def strike(match: re.Match[str]) -> str:
        segment = match.group(2)
        if find_family(segment) is not None or segment.lower() == "lmrlgym":
            return match.group(0)
        return match.group(1) + REDACTED

    if token:
        text = text.replace(token, REDACTED)
    text = _AUTHORIZATION.sub(r"\1" + REDACTED, text)
    text = _SECRET_PARAMETER.sub(r"\1" + REDACTED, text)
    return _TOKEN_SEGMENT.sub(strike, text) if "gym" in text.lower() else text


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

    def __init__(self, token: str | None) -> None:
        super().__init__()
        self.token = token

    def clean(self, text: str) -> str:
        """``text`` with the secrets struck out (``***``)."""
        return redact(text, self.token)

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


def hide_secrets(token: str | None) -> None:
    """Put a :class:`SecretFilter` of ``token`` on every handler of the server's loggers
    (:data:`SERVER_LOGGERS`), in place of any earlier one."""
    for name in SERVER_LOGGERS:
        for handler in logging.getLogger(name).handlers:
            for old in [f for f in handler.filters if isinstance(f, SecretFilter)]:
                handler.removeFilter(old)
            handler.addFilter(SecretFilter(token))


def configure_logging(level: str = "info", stream: Any = None) -> None:
    """JSON-lines logs from ``llmgym.serving.server`` on ``stream`` (default: stderr)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
