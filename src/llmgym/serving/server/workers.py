"""A server of several processes (``llmgym serve --workers N``): each worker is a whole server
(its own event loop, session store and environments) on the one port, so light environments
use every core.

Each worker listens on a socket of its own on the port (``SO_REUSEPORT``: the kernel spreads
new connections evenly over them). A session lives in the worker that made it, and its id says
which (``<token>.<worker>``; AgentGym's integer handles by their remainder). A request that
reaches another worker is forwarded to the owner over the owner's Unix socket
(:class:`WorkerRouter`), and a WebSocket is relayed there, unless its client asked to be told
(:data:`DIRECT_HEADER`: ``RemoteEnv`` then connects again until it reaches the owner). Each
protocol says where its requests name a session
(:meth:`~llmgym.serving.server.protocols.ServerProtocol.session_of`); one that cannot say
(MCP's and OpenEnv's, whose MCP sessions the MCP SDK names) is served by one worker only.

Each worker admits ``1/N`` of the server's sessions and memory budget, so the limits hold for
the server as a whole; ``/health`` sums the workers' load.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import multiprocessing
import os
import secrets
import signal
import socket
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import httpx

from llmgym.serving.server.logs import log
from llmgym.serving.server.protocols import ServerProtocol
from llmgym.serving.server.settings import ServerSettings

__all__ = [
    "DIRECT_HEADER",
    "Peers",
    "WorkerPlace",
    "WorkerRouter",
    "run_workers",
    "worker_settings",
]

CLIENT_HEADER = b"x-llmgym-client"
"""The address of a forwarded request's client, read only from a worker's Unix socket."""

DIRECT_HEADER = b"x-llmgym-direct"
"""Sent by a client that would rather reconnect than have its WebSocket relayed: a worker that
does not hold the session answers it 421 (Misdirected Request), and the client's next
connection may reach the owner (:class:`~llmgym.serving.client.RemoteEnv` tries a few times,
then takes the relay)."""

LOCAL_HEADER = "x-llmgym-local"
"""Asks a worker for its own ``/health``, not the sum of all workers'."""

_SKIPPED_HEADERS = frozenset(
    {b"host", b"connection", b"keep-alive", b"transfer-encoding", b"content-length"}
)


@dataclass(frozen=True)
class WorkerPlace:
    """Where one worker stands among the server's workers.

    Attributes:
        index: This worker's index, from 0.
        sockets: The Unix socket of every worker, by index (peers forward requests there).
        instance_id: The server's instance id, the same in every worker (it changes when the
            server restarts, not when one worker does).
    """

    index: int
    sockets: tuple[str, ...]
    instance_id: str

    @property
    def count(self) -> int:
        """How many workers the server has."""
        return len(self.sockets)

    def tag(self, session_id: str) -> str:
        """``session_id`` marked as this worker's."""
        return f"{session_id}.{self.index}"

    def owner(self, key: str | int | None) -> int | None:
        """The worker that holds the session ``key`` names (a tagged id, or an integer handle
        whose remainder by the worker count is its worker); ``None`` if no worker can."""
        if isinstance(key, int) and not isinstance(key, bool):
            return key % self.count
        if isinstance(key, str):
            _, dot, index = key.rpartition(".")
            if dot and index.isdigit() and int(index) < self.count:
                return int(index)
        return None


def worker_settings(settings: ServerSettings, workers: int) -> ServerSettings:
    """The settings of one of ``workers`` workers: its share of the session cap and of the
    memory budget (the per-client quota holds per worker: a client's connections, and so its
    sessions, may all reach one)."""
    if workers == 1:
        return settings
    return replace(
        settings,
        max_sessions=math.ceil(settings.max_sessions / workers),
        max_memory_mb=settings.memory_budget_mb() / workers,
    )


class Peers:
    """This worker's connections to the others, over their Unix sockets."""

    def __init__(self, place: WorkerPlace, token: str | None) -> None:
        self.place = place
        self.authorization = f"Bearer {token}".encode() if token else None
        self._clients: dict[int, httpx.AsyncClient] = {}

    def client(self, index: int) -> httpx.AsyncClient:
        """The HTTP client of worker ``index`` (its connections are kept)."""
        client = self._clients.get(index)
        if client is None:
            transport = httpx.AsyncHTTPTransport(uds=self.place.sockets[index])
            client = httpx.AsyncClient(transport=transport, base_url="http://worker", timeout=None)
            self._clients[index] = client
        return client

    async def loads(self) -> list[dict[str, Any]]:
        """The ``/health`` of every other worker that answers within 5 s."""
        others = [i for i in range(self.place.count) if i != self.place.index]

        async def load(index: int) -> dict[str, Any] | None:
            with contextlib.suppress(httpx.HTTPError, ValueError):
                reply = await self.client(index).get(
                    "/health", headers={LOCAL_HEADER: "1"}, timeout=5.0
                )
                return reply.json()
            return None

        return [x for x in await asyncio.gather(*(load(i) for i in others)) if x is not None]

    async def close(self) -> None:
        for client in self._clients.values():
            await client.aclose()


class WorkerRouter:
    """Sends a request naming a session of another worker to that worker (pure ASGI, behind the
    guard): HTTP requests are forwarded whole over its Unix socket, WebSockets are relayed
    message by message. A request forwarded to this worker has its client's address restored,
    so quotas count the client, not the peer."""

    def __init__(self, app: Any, peers: Peers, protocols: Sequence[ServerProtocol]) -> None:
        self.app = app
        self.peers = peers
        self.place = peers.place
        self.protocols = protocols
        self.authorization = peers.authorization

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if scope.get("client") is None:  # from a peer, over its Unix socket
            _restore_client(scope)
        body: bytes | None = None
        if scope["type"] == "http" and any(p.session_in_body(scope) for p in self.protocols):
            body, receive = await _buffered(receive)
        owner = self._owner(scope, body)
        if owner is None or owner == self.place.index:
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await self._forward(owner, scope, receive if body is None else None, body, send)
        else:
            await self._relay(owner, scope, receive, send)

    def _owner(self, scope: dict[str, Any], body: bytes | None) -> int | None:
        for protocol in self.protocols:
            key = protocol.session_of(scope, body)
            if key is not None:
                return self.place.owner(key)
        return None

    def _headers(self, scope: dict[str, Any]) -> list[tuple[bytes, bytes]]:
        headers = [(k, v) for k, v in scope["headers"] if k not in _SKIPPED_HEADERS]
        headers = [(k, v) for k, v in headers if k != CLIENT_HEADER]
        if self.authorization is not None:  # checked here; maybe sent in the path
            headers = [(k, v) for k, v in headers if k != b"authorization"]
            headers.append((b"authorization", self.authorization))
        client = scope.get("client")
        if client is not None:
            headers.append((CLIENT_HEADER, str(client[0]).encode()))
        return headers

    async def _forward(
        self, owner: int, scope: dict[str, Any], receive: Any, body: bytes | None, send: Any
    ) -> None:
        if body is None:
            body, _ = await _buffered(receive)
        path = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string"):
            path += b"?" + scope["query_string"]
        request = self.peers.client(owner).build_request(
            scope["method"], path.decode("latin-1"), headers=self._headers(scope), content=body
        )
        try:
            response = await self.peers.client(owner).send(request, stream=True)
        except httpx.TransportError:
            await _answer_unavailable(send, owner)
            return
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status_code,
                    "headers": [
                        (k, v) for k, v in response.headers.raw if k.lower() not in _SKIPPED_HEADERS
                    ],
                }
            )
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()

    async def _relay(self, owner: int, scope: dict[str, Any], receive: Any, send: Any) -> None:
        from websockets.asyncio.client import unix_connect
        from websockets.exceptions import ConnectionClosed

        path = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string"):
            path += b"?" + scope["query_string"]
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in self._headers(scope)]
        headers = [(k, v) for k, v in headers if not k.startswith("sec-websocket")]
        headers = [(k, v) for k, v in headers if k != "upgrade"]
        message = await receive()  # websocket.connect
        if message["type"] != "websocket.connect":
            return
        if any(key == DIRECT_HEADER for key, _ in scope["headers"]):
            await _misdirected(send, owner)
            return
        try:
            upstream = await unix_connect(
                self.place.sockets[owner],
                f"ws://worker{path.decode('latin-1')}",
                additional_headers=headers,
                max_size=None,
                compression=None,
            )
        except Exception:  # the owner is gone or refused the stream: close the client's (1011)
            await send({"type": "websocket.close", "code": 1011})
            return
        await send({"type": "websocket.accept"})

        async def downstream() -> None:
            with contextlib.suppress(ConnectionClosed):
                async for data in upstream:
                    kind = "bytes" if isinstance(data, bytes) else "text"
                    await send({"type": "websocket.send", kind: data})
            code = upstream.close_code or 1000
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": code})

        relay = asyncio.create_task(downstream())
        try:
            while True:
                message = await receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("bytes")
                await upstream.send(data if data is not None else message.get("text", ""))
        except ConnectionClosed:
            pass
        finally:
            await upstream.close()
            await asyncio.gather(relay, return_exceptions=True)


def _restore_client(scope: dict[str, Any]) -> None:
    for key, value in scope["headers"]:
        if key == CLIENT_HEADER:
            scope["client"] = (value.decode("latin-1"), 0)
            return


async def _buffered(receive: Any) -> tuple[bytes, Callable[[], Any]]:
    """The whole body of a request (the guard has capped its size), and a ``receive`` that
    hands it on again."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


async def _misdirected(send: Any, owner: int) -> None:
    body = json.dumps(
        {
            "error": "misdirected",
            "message": f"the session is held by the server's worker {owner}: connect again",
            "field": None,
        }
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "websocket.http.response.start", "status": 421, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


async def _answer_unavailable(send: Any, owner: int) -> None:
    body = {
        "error": "session_not_found",
        "message": f"the server's worker {owner}, which held this session, is gone (it "
        "restarted): make a new session",
        "field": None,
    }
    await send(
        {
            "type": "http.response.start",
            "status": 404,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


# ------------------------------------------------------------------------------ processes
_SPAWN = multiprocessing.get_context("spawn")


def run_workers(
    workers: int,
    listening: Sequence[socket.socket],
    start_worker: Callable[[WorkerPlace, socket.socket, socket.socket], None],
) -> None:
    """Run ``workers`` processes, each ``start_worker(place, its_listening_socket,
    its_unix_socket)``, until interrupted (``listening``: a socket per worker, or one they
    share); a worker that dies is started again (its sessions are lost; the others keep
    theirs). ``start_worker`` must be picklable (a module-level function)."""
    with tempfile.TemporaryDirectory(prefix="llmgym-serve-") as directory:
        os.chmod(directory, 0o700)  # peers only: a forwarded request's client header is trusted
        paths = tuple(os.path.join(directory, f"worker{i}.sock") for i in range(workers))
        instance_id = secrets.token_hex(8)
        own_sockets = []
        for path in paths:
            own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            own.bind(path)
            own.listen(2048)
            own_sockets.append(own)

        def start(index: int) -> Any:
            place = WorkerPlace(index, paths, instance_id)
            process = _SPAWN.Process(
                target=start_worker,
                args=(place, listening[index % len(listening)], own_sockets[index]),
                name=f"llmgym-serve-worker-{index}",
            )
            process.start()
            return process

        processes = [start(i) for i in range(workers)]
        stopping = False

        def stop(*_: Any) -> None:
            nonlocal stopping
            stopping = True

        previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            while not stopping:
                for index, process in enumerate(processes):
                    process.join(0.2 / workers)
                    if process.exitcode is not None and not stopping:
                        log(logging.ERROR, "worker.died", worker=index, exitcode=process.exitcode)
                        processes[index] = start(index)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.join(30)
                if process.exitcode is None:
                    process.kill()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
