"""The server's JSON-lines logs (logger ``llmgym.serving.server``)."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

__all__ = ["JsonLogFormatter", "configure_logging", "log", "logger"]

logger = logging.getLogger("llmgym.serving.server")
logger.addHandler(logging.NullHandler())


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


def configure_logging(level: str = "info", stream: Any = None) -> None:
    """JSON-lines logs from ``llmgym.serving.server`` on ``stream`` (default: stderr)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
