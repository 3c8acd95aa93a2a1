"""Every exception llmgym raises on purpose, under one root: ``except LLMGymError`` catches them
all. Classes keep the built-in base callers already catch them by (a :class:`ConfigError` is a
``ValueError``, a :class:`MissingDependencyError` an ``ImportError``, ...)::

    LLMGymError
    ├── ConfigError (ValueError)            a config value is unknown, mistyped or out of range
    ├── MissingDependencyError (ImportError) a pip extra is not installed; names the fix
    ├── ChatError (RuntimeError)            a chat-completions request failed for good
    │   └── ServerUnavailableError          a server a run depends on is gone: stop the run
    ├── RemoteEnvError (RuntimeError)       a served environment could not do what was asked
    │   ├── ServerUnavailableError          (the same class: a ChatError and a RemoteEnvError)
    │   ├── SessionLostError                its session expired, was closed, or was lost
    │   ├── ServerBusyError                 the server is at its session limit
    │   ├── AuthenticationError (PermissionError)
    │   └── EpisodeEndedError (gymnasium.error.ResetNeeded)
    ├── HostingError                        a request a server cannot serve (HTTP status, code)
    │   ├── InvalidRequestError (422)
    │   │   └── ValidationFailure           a body that does not match its schema
    │   ├── EpisodeStateError (409)
    │   ├── OutOfSequenceError (409)
    │   ├── SessionNotFoundError (404)
    │   ├── QuotaError (429)
    │   ├── CapacityError (503)
    │   ├── EnvProcessError (502)
    │   ├── CallTimeoutError (504)
    │   └── EnvRaisedError (500)
    ├── JsonRpcError                        an MCP request answered with a JSON-RPC error
    ├── NestingError (ValueError)           JSON nested deeper than a reader allows
    ├── QueryError                          SQL-v0's sandbox: a query produced no result
    ├── HttpError                           WebArena-v0's sites: answer with an error page
    ├── ToolError                           a tool environment's tool is not applicable
    ├── NoGoal                              a tool environment's goal template: draw again
    └── IllegalMove                         a multi-agent game: a move not understood or allowed

    PluginWarning (UserWarning)             an installed package's environments were skipped

Users of the library meet the first four branches. The others are raised and caught inside
llmgym, and matter to authors of environments and servers: a server answers a
:class:`HostingError` with its HTTP status and JSON body, an environment turns a
:class:`ToolError` or an :class:`IllegalMove` into feedback to the agent. The ``llmgym`` command
ends with exit status 2 and a one-line message on any :class:`LLMGymError`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gymnasium.error import ResetNeeded

__all__ = [
    "AuthenticationError",
    "CallTimeoutError",
    "CapacityError",
    "ChatError",
    "ConfigError",
    "DataError",
    "EnvProcessError",
    "EnvRaisedError",
    "EpisodeEndedError",
    "EpisodeStateError",
    "HostingError",
    "HttpError",
    "IllegalMove",
    "InvalidRequestError",
    "JsonRpcError",
    "LLMGymError",
    "MissingDependencyError",
    "NestingError",
    "NoGoal",
    "OutOfSequenceError",
    "PluginWarning",
    "QueryError",
    "QuotaError",
    "RemoteEnvError",
    "ServerBusyError",
    "ServerUnavailableError",
    "SessionLostError",
    "SessionNotFoundError",
    "ToolError",
    "ValidationFailure",
]


class LLMGymError(Exception):
    """The root of every exception llmgym raises on purpose."""


# ----------------------------------------------------------------- configuration, install
class ConfigError(LLMGymError, ValueError):
    """A configuration value is unknown, of the wrong type, or outside its allowed range."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class MissingDependencyError(LLMGymError, ImportError):
    """An optional dependency (a pip extra) is not installed; the message names the fix."""


class DataError(LLMGymError, ValueError):
    """A directory of original data (:mod:`llmgym.originals`) lacks something its published
    layout has, or holds a file that does not read as that layout; the message names the path."""


# ------------------------------------------------------------------ servers a run talks to
class ChatError(LLMGymError, RuntimeError):
    """A chat request failed for good (after retries where retrying made sense)."""


class RemoteEnvError(LLMGymError, RuntimeError):
    """A remote environment (``llmgym serve``, a Ray actor) could not do what was asked."""


class ServerUnavailableError(ChatError, RemoteEnvError):
    """A server the run depends on is gone, and the run should stop rather than go on failing:
    so many model requests in a row failed, or an environment's server (or Ray actor) could not
    be reached, or did not answer within its timeout, after the client's retries."""


class SessionLostError(RemoteEnvError):
    """The session is gone: it expired, was closed, or the server restarted."""


class ServerBusyError(RemoteEnvError):
    """The server is at its session limit."""


class AuthenticationError(RemoteEnvError, PermissionError):
    """The server wants a token and did not get the right one."""


class EpisodeEndedError(RemoteEnvError, ResetNeeded):
    """``step`` before the first ``reset`` or after the episode ended (as locally, a
    ``gymnasium.error.ResetNeeded``)."""


# --------------------------------------------------------------------- the serving side
class HostingError(LLMGymError):
    """A request that cannot be served; ``status`` is its HTTP status, ``code`` a stable name."""

    status: ClassVar[int] = 500
    code: str = "internal_error"

    def __init__(self, message: str, *, field: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code

    def to_dict(self) -> dict[str, Any]:
        """The JSON error body: ``{"error": code, "message": ..., "field": ...}``."""
        return {"error": self.code, "message": self.message, "field": self.field}

    def __reduce__(self) -> tuple[Any, ...]:  # keep field and code across pickling (Ray)
        return (_rebuild_error, (type(self), self.message, self.field, self.code))


def _rebuild_error(
    cls: type[HostingError], message: str, field: str | None, code: str
) -> HostingError:
    return cls(message, field=field, code=code)


class InvalidRequestError(HostingError):
    """The request is malformed or names something that does not exist (HTTP 422)."""

    status = 422
    code = "invalid_request"


class ValidationFailure(InvalidRequestError):
    """A body that does not match its schema; ``detail`` lists every problem."""

    def __init__(self, message: str, field: str | None, detail: list[dict[str, Any]]) -> None:
        super().__init__(message, field=field)
        self.detail = detail

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "detail": self.detail}


class EpisodeStateError(HostingError):
    """``step`` before the first ``reset`` or after the episode ended (HTTP 409)."""

    status = 409
    code = "episode_ended"


class OutOfSequenceError(HostingError):
    """A request's ``seq`` neither follows nor repeats the last applied one, or repeats it with
    another request (409)."""

    status = 409
    code = "out_of_sequence"


class SessionNotFoundError(HostingError):
    """The session does not exist here: never created, closed, expired, lost, or a restart
    (404)."""

    status = 404
    code = "session_not_found"


class QuotaError(HostingError):
    """This client address holds as many sessions as one client may (429, with
    ``Retry-After``)."""

    status = 429
    code = "quota_exceeded"


class CapacityError(HostingError):
    """Every session slot is taken (503, with ``Retry-After``)."""

    status = 503
    code = "at_capacity"


class EnvProcessError(HostingError):
    """The child process of a session's environment ended (``exit()``, a crash, killed); the
    session is closed (502)."""

    status = 502
    code = "session_lost"


class CallTimeoutError(HostingError):
    """An environment call overran the server's wall-clock limit; its session is closed (504)."""

    status = 504
    code = "session_lost"


class EnvRaisedError(HostingError):
    """The environment in a child process raised an exception (500); ``details`` holds the
    child's traceback, for the server's log."""

    def __init__(self, message: str, details: str) -> None:
        super().__init__(message)
        self.details = details


class JsonRpcError(LLMGymError):
    """What an MCP request gets that is not a step of the environment: a JSON-RPC error
    (``code``, ``message``, optional ``data``)."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` object."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class NestingError(LLMGymError, ValueError):
    """JSON nested deeper than a reader allows."""


# ------------------------------------------------------------- inside the environments
class QueryError(LLMGymError):
    """SQL-v0's sandbox: the query did not produce a result.

    Attributes:
        kind: ``"error"`` (SQLite rejected it: syntax, unknown column, ...), ``"refused"`` (the
            sandbox does not allow it), ``"timeout"`` (over the time limit) or ``"too_large"``
            (over the row or size bound).
        message: What went wrong, for the agent.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class HttpError(LLMGymError):
    """Raised by a handler of a WebArena-v0 site to answer with an error page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = int(status)
        self.message = message


class ToolError(LLMGymError):
    """Raised by a tool whose arguments are well-typed but not applicable (an unknown id, a date
    outside the data), or by ``Toolkit.call`` for an unknown tool or bad arguments; the
    message is shown to the agent and the action counts as invalid."""


class NoGoal(LLMGymError):
    """Raised by a goal template (or a helper it calls) when this draw has no suitable instance:
    the environment draws again, as when the template returns ``None``."""


class IllegalMove(LLMGymError):
    """Raised by :meth:`~llmgym.envs.multiagent.game.Game.parse` for a move that is not
    understood or not allowed now; the message says why and what would be valid."""


# ---------------------------------------------------------------------------- warnings
class PluginWarning(UserWarning):
    """An installed package's ``llmgym.envs`` entry point could not be loaded (it is skipped)."""
