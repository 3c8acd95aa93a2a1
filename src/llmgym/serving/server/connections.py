"""The connections of ``llmgym serve``: caps, deadlines and the open-file limit.

Every connection costs the server a file descriptor, and a process has a limited number of them
(``RLIMIT_NOFILE``; 1,024 by default on many systems): a client that opens connections and never
finishes a request would otherwise take them all, and an authorised client's next connection
would fail. :class:`ConnectionGate` keeps every connection accounted for, at the level of the
TCP connection (before any HTTP is read):

* at most ``max_connections`` in all and ``max_connections_per_client`` per client address. A
  connection over a cap first evicts the oldest *idle* connection that never sent the server's
  token (one waiting for its first request's headers, or kept alive between requests); if
  there is none, it is answered at once with a JSON 503 (``too_many_connections``, all
  connections) or 429 (one address) with ``Retry-After``, and closed;
* a request's headers must arrive within ``header_timeout_s`` of the connection opening, and
  the next request's within ``header_timeout_s`` plus the keep-alive time of the previous
  response: a connection that sends part of a request line and stops is closed;
* the cap on all connections stays below the process's open-file limit (which
  :func:`raise_open_file_limit` raises to its hard limit where it can), with a reserve for the
  environments' own files and child processes.

An idle WebSocket is closed by the guard (:mod:`~llmgym.serving.server.guard`) with code
:data:`WS_IDLE_CLOSE_CODE`. The gate hooks into uvicorn's HTTP and WebSocket protocols
(:func:`gated_protocols`); any ASGI server can run the app, but only uvicorn with these
protocols gets the caps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, cast

from llmgym.serving.server.logs import log

__all__ = [
    "AUTHORIZED_SCOPE_KEY",
    "KEEP_ALIVE_S",
    "WS_IDLE_CLOSE_CODE",
    "ConnectionGate",
    "gated_protocols",
    "open_file_limit",
    "raise_open_file_limit",
]

KEEP_ALIVE_S = 65
"""Seconds a connection may stay idle between requests (past the clients' own keep-alive, so
the server never closes a connection a client is about to reuse)."""

WS_IDLE_CLOSE_CODE = 4408
"""The close code of a WebSocket that sent no message for ``ws_idle_timeout_s`` (4000-4999 are
the application's; 408 as HTTP's Request Timeout)."""

AUTHORIZED_SCOPE_KEY = "llmgym.authorized"
"""Set in a request's ASGI scope by the guard when the request carried the server's token (or
the server has none): its connection is then never evicted for another."""

OPEN_FILES_RESERVE = 256
"""File descriptors kept out of the connection cap for everything else the server opens (the
environments' files and databases, child processes' pipes, logs)."""

SHED_LOG_INTERVAL_S = 10.0

LINGER_S = 1.0
MAX_LINGERING = 64

_KERNEL_OPEN_FILES = 1 << 20
"""Linux's default ``fs.nr_open``: the most a soft limit may be raised to under an unlimited hard
limit."""


def open_file_limit() -> int | None:
    """This process's soft open-file limit (``None`` where the OS has none to read)."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_open_file_limit() -> int | None:
    """Raise this process's soft open-file limit to its hard limit where the OS allows it;
    returns the soft limit in force afterwards (``None``: unlimited or unknown)."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = _KERNEL_OPEN_FILES if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and target > soft:
        with contextlib.suppress(ValueError, OSError):  # above what the kernel allows
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return open_file_limit()


@dataclass(eq=False)
class _Connection:
    transport: asyncio.Transport
    address: str
    http: Any
    """The connection's HTTP protocol (after an upgrade, the transport's protocol is the
    WebSocket's)."""
    deadline: asyncio.TimerHandle | None = None
    authorized: bool = False

    def upgraded(self) -> bool:
        return self.transport.get_protocol() is not self.http

    def in_request(self) -> bool:
        """Whether a request's headers have arrived and its response is not complete."""
        cycle = getattr(self.http, "cycle", None)
        busy = cycle is not None and not cycle.response_complete
        return busy or bool(getattr(self.http, "pipeline", None))

    def evictable(self) -> bool:
        return not (self.authorized or self.upgraded() or self.in_request())


class ConnectionGate:
    """Counts the server's connections by client address and enforces the caps and the header
    deadline (see the module's docstring).

    Args:
        max_connections: Connections at once, in all (lowered to fit ``open_files``).
        max_connections_per_client: Connections at once from one client address.
        header_timeout_s: Seconds a connection has to deliver a request's headers.
        open_files: The process's open-file limit (``None``: no limit to fit under).
    """

    def __init__(
        self,
        max_connections: int,
        max_connections_per_client: int,
        header_timeout_s: float,
        open_files: int | None = None,
    ) -> None:
        self.max_connections = max_connections
        if open_files is not None:
            self.max_connections = max(1, min(max_connections, open_files - OPEN_FILES_RESERVE))
        self.max_connections_per_client = min(max_connections_per_client, self.max_connections)
        self.header_timeout_s = header_timeout_s
        self.open_files = open_files
        self.connections: OrderedDict[asyncio.Transport, _Connection] = OrderedDict()
        self.by_address: dict[str, OrderedDict[asyncio.Transport, _Connection]] = {}
        self.counts = {"evicted": 0, "refused": 0, "timed_out": 0}
        self._logged_counts = dict(self.counts)
        self._summary_pending = False
        self.lingering = 0
        """Refused connections being drained before they close."""

    # ---------------------------------------------------------------- protocol events
    def admit(self, http: Any, transport: asyncio.Transport) -> bool:
        """A new connection (from the HTTP protocol's ``connection_made``): count it, evicting
        an idle one to make room if need be; or answer it 503/429 and close it (``False``: the
        HTTP protocol must leave it alone)."""
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple | list) and peer else "unix"
        mine = self.by_address.get(address, OrderedDict())
        # over a Unix socket: a peer worker relaying clients, each counted where it connected
        capped = address != "unix"
        if capped and len(mine) >= self.max_connections_per_client and not self._evict(mine):
            self._refuse(
                transport,
                429,
                f"this client address holds {len(mine)} connections, as many as one client "
                f"may (--max-connections-per-client {self.max_connections_per_client})",
            )
            return False
        if len(self.connections) >= self.max_connections and not self._evict(self.connections):
            self._refuse(
                transport,
                503,
                f"the server holds {len(self.connections)} connections, as many as it serves "
                f"(--max-connections {self.max_connections}); retry later",
            )
            return False
        connection = _Connection(transport, address, http)
        self.connections[transport] = connection
        self.by_address.setdefault(address, OrderedDict())[transport] = connection
        self._arm(connection, self.header_timeout_s)
        return True

    def answered(self, http: Any) -> None:
        """A response is complete (``on_response_complete``): the connection may wait for its
        next request, within the keep-alive time and the header deadline."""
        connection = self.connections.get(http.transport)
        if connection is None:
            return
        cycle = getattr(http, "cycle", None)
        if cycle is not None and cycle.scope.get(AUTHORIZED_SCOPE_KEY):
            connection.authorized = True
        self._arm(connection, KEEP_ALIVE_S + self.header_timeout_s)

    def closed(self, transport: asyncio.Transport) -> None:
        """The connection ended (``connection_lost`` of its HTTP or WebSocket protocol)."""
        connection = self.connections.get(transport)
        if connection is not None:
            self._forget(connection)

    def load(self) -> dict[str, Any]:
        """The figures for ``/health`` and the logs: connections open, the caps, and how many
        were evicted, refused or timed out so far."""
        return {
            "connections": len(self.connections),
            "max_connections": self.max_connections,
            "max_connections_per_client": self.max_connections_per_client,
            "open_files": self.open_files,
            **self.counts,
        }

    # ---------------------------------------------------------------- internals
    def _arm(self, connection: _Connection, seconds: float) -> None:
        if connection.deadline is not None:
            connection.deadline.cancel()
        loop = asyncio.get_running_loop()
        connection.deadline = loop.call_later(seconds, self._deadline, connection)

    def _deadline(self, connection: _Connection) -> None:
        """The header deadline passed: close the connection unless it is serving a request
        (its response re-arms the deadline) or became a WebSocket (the guard times those)."""
        connection.deadline = None
        if self.connections.get(connection.transport) is not connection:
            return
        if connection.upgraded() or connection.in_request():
            return
        self._forget(connection)
        connection.transport.close()
        self._count("timed_out")

    def _evict(self, candidates: OrderedDict[asyncio.Transport, _Connection] | dict) -> bool:
        """Close the oldest evictable connection among ``candidates``; whether there was
        one."""
        for connection in candidates.values():
            if connection.evictable():
                self._forget(connection)
                connection.transport.close()
                self._count("evicted")
                return True
        return False

    def _forget(self, connection: _Connection) -> None:
        if connection.deadline is not None:
            connection.deadline.cancel()
            connection.deadline = None
        self.connections.pop(connection.transport, None)
        mine = self.by_address.get(connection.address)
        if mine is not None:
            mine.pop(connection.transport, None)
            if not mine:
                del self.by_address[connection.address]

    def _refuse(self, transport: asyncio.Transport, status: int, message: str) -> None:
        """Answer a connection over a cap and close it. The answer waits for the client's
        first bytes (an HTTP client reads a response after sending its request), for up to
        :data:`LINGER_S`, and what follows is read and dropped, so that the client reads the
        answer instead of a reset; past :data:`MAX_LINGERING` such connections, the answer is
        sent and the connection closed at once."""
        body = json.dumps(
            {"error": "too_many_connections", "message": message, "field": None}
        ).encode()
        reason = b"Too Many Requests" if status == 429 else b"Service Unavailable"
        head = (
            f"HTTP/1.1 {status} ".encode()
            + reason
            + b"\r\ncontent-type: application/json\r\nretry-after: 5\r\nconnection: close\r\n"
            + f"content-length: {len(body)}\r\n\r\n".encode()
        )
        self._count("refused")
        if self.lingering >= MAX_LINGERING:
            transport.write(head + body)
            transport.close()
            return
        transport.set_protocol(_Lingering(self, transport, head + body))

    def _count(self, what: str) -> None:
        """Count an eviction, refusal or timeout. The first is logged at once, the rest every
        10 s as counts (a flood of connections must not become a flood of log lines)."""
        self.counts[what] += 1
        if not self._summary_pending:
            self._summarise()

    def _summarise(self) -> None:
        since = {k: self.counts[k] - self._logged_counts[k] for k in self.counts}
        self._summary_pending = any(since.values())
        if self._summary_pending:
            fields: dict[str, Any] = {**since, **self._open_figures()}
            log(logging.WARNING, "connections.shed", **fields)
            self._logged_counts = dict(self.counts)
            asyncio.get_running_loop().call_later(SHED_LOG_INTERVAL_S, self._summarise)

    def _open_figures(self) -> dict[str, int]:
        return {
            "connections": len(self.connections),
            "addresses": len(self.by_address),
            "max_connections": self.max_connections,
        }


class _Lingering(asyncio.Protocol):
    """A refused connection: its first bytes get ``answer``, the rest are dropped until the
    client closes, or :data:`LINGER_S` pass."""

    def __init__(self, gate: ConnectionGate, transport: asyncio.Transport, answer: bytes) -> None:
        self.gate = gate
        self.transport = transport
        self.answer: bytes | None = answer
        gate.lingering += 1
        self.timer = asyncio.get_running_loop().call_later(LINGER_S, transport.close)

    def data_received(self, data: bytes) -> None:
        if self.answer is not None:
            self.transport.write(self.answer)
            self.answer = None
            if self.transport.can_write_eof():
                self.transport.write_eof()

    def eof_received(self) -> bool:
        return False  # the transport closes

    def connection_lost(self, exc: Exception | None) -> None:
        self.timer.cancel()
        self.gate.lingering -= 1


class _GatedHTTP:
    """Mixed into uvicorn's HTTP protocol: reports connections and responses to the gate."""

    gate: ConnectionGate

    def connection_made(self, transport: Any) -> None:
        if self.gate.admit(self, transport):
            super().connection_made(transport)  # type: ignore[misc]

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)  # type: ignore[misc]
        self.gate.closed(self.transport)  # type: ignore[attr-defined]

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self.gate.answered(self)


class _GatedWebSocket:
    """Mixed into uvicorn's WebSocket protocol: reports the end of an upgraded connection."""

    gate: ConnectionGate

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)  # type: ignore[misc]
        self.gate.closed(self.transport)  # type: ignore[attr-defined]


def gated_protocols(gate: ConnectionGate) -> dict[str, Any]:
    """uvicorn's ``http`` and ``ws`` protocol classes (those it would pick), reporting to
    ``gate``: options for ``uvicorn.Config``."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol
    from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

    options: dict[str, Any] = {
        "http": type("GatedHTTPProtocol", (_GatedHTTP, AutoHTTPProtocol), {"gate": gate})
    }
    if AutoWebSocketsProtocol is not None:
        options["ws"] = type(
            "GatedWebSocketProtocol",
            (_GatedWebSocket, cast("type", AutoWebSocketsProtocol)),
            {"gate": gate},
        )
    return options
