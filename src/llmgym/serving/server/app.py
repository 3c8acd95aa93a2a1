"""The ``llmgym serve`` application: the protocols' routers, the guard, error answers and the
lifespan."""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match, WebSocketRoute

import llmgym
from llmgym.core.registry import optional_import
from llmgym.errors import HostingError
from llmgym.serving.server.connections import (
    KEEP_ALIVE_S,
    ConnectionGate,
    gated_protocols,
    open_file_limit,
    raise_open_file_limit,
)
from llmgym.serving.server.guard import Guard, document_bearer, open_paths, token_routes
from llmgym.serving.server.logs import hide_secrets, log
from llmgym.serving.server.memory import limit_malloc_arenas
from llmgym.serving.server.protocols import ServerProtocol, get_protocol
from llmgym.serving.server.schemas import error_reply, validation_error
from llmgym.serving.server.sessions import SessionStore
from llmgym.serving.server.settings import ServerSettings
from llmgym.serving.server.workers import (
    Peers,
    WorkerPlace,
    WorkerRouter,
    run_workers,
    worker_settings,
)

__all__ = ["create_app", "serve", "uvicorn_config"]


def create_app(settings: ServerSettings | None = None, place: WorkerPlace | None = None) -> FastAPI:
    """The FastAPI application, speaking the protocols ``settings.protocols`` names (run it with
    :func:`serve`, or any ASGI server); ``place``: this process is one of several workers
    (:mod:`~llmgym.serving.server.workers`).

    Raises:
        ValueError: A protocol cannot serve these settings, or two protocols answer the same
            path; the message says which.
    """
    settings = settings or ServerSettings()
    protocols = [get_protocol(name) for name in settings.protocols]
    for protocol in protocols:
        protocol.check(settings)
        if protocol.single_worker and settings.workers > 1:
            raise ValueError(
                f"protocols: {protocol.name} sessions cannot be routed between workers: serve "
                f"{protocol.name} with workers=1 (llmgym serve --workers 1)"
            )
    store = SessionStore(settings, place)
    peers = Peers(place, settings.token) if place is not None else None
    if peers is not None:
        store.peer_loads = peers.loads
    app = _ServerApp(
        settings,
        store,
        protocols,
        title="llmgym environment server",
        version=llmgym.__version__,
        description="Sessions of llmgym text environments: create, reset, step, close.",
        lifespan=_lifespan(store, protocols, peers),
        redirect_slashes=False,
    )
    app.state.store = store
    _answer_errors_as_json(app)
    answered: dict[tuple[str, str], str] = {}
    for protocol in protocols:
        for router in protocol.routers(store):
            _claim_routes(answered, protocol.name, router)
            app.include_router(router)
    if peers is not None:
        app.add_middleware(WorkerRouter, peers=peers, protocols=protocols)
    app.add_middleware(Guard, settings=settings, protocols=protocols)  # the outermost
    return app


def _claim_routes(answered: dict[tuple[str, str], str], protocol: str, router: APIRouter) -> None:
    """Record which protocol answers each method and path of ``router``, refusing one that
    another protocol answers already (the first would shadow it)."""
    for route in router.routes:
        for key in _route_keys(route):
            other = answered.setdefault(key, protocol)
            if other != protocol:
                raise ValueError(
                    f"protocols: {other} and {protocol} both answer {key[0]} {key[1]}; "
                    "a server speaks one of them"
                )


def _route_keys(route: BaseRoute) -> list[tuple[str, str]]:
    path: str = getattr(route, "path", "")
    if isinstance(route, WebSocketRoute):
        return [("WEBSOCKET", path)]
    return [(method, path) for method in sorted(getattr(route, "methods", None) or ())]


def _lifespan(
    store: SessionStore, protocols: Sequence[ServerProtocol], peers: Peers | None
) -> Callable[[FastAPI], Any]:
    """Sweep idle sessions while the server runs; close every session when it stops."""
    settings = store.settings

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        async def sweep() -> None:
            while True:
                await asyncio.sleep(min(settings.ttl_s / 2, 30.0))
                await store.expire_idle()

        disconnect = _connect_ray(settings)
        sweeper = asyncio.create_task(sweep())
        log(
            logging.INFO,
            "server.started",
            instance_id=store.instance_id,
            envs=list(store.served),
            protocols={protocol.name: protocol.session_key for protocol in protocols},
            max_sessions=settings.max_sessions,
            max_sessions_per_client=settings.max_sessions_per_client,
            ttl_s=settings.ttl_s,
            step_timeout_s=settings.step_timeout_s,
            reset_timeout_s=settings.reset_timeout_s,
            config_limits={
                limit.name: limit.maximum if limit.values is None else list(limit.values)
                for limit in settings.limits()
            },
            file_dir=store.policy.file_dir,
            auth=settings.token is not None,
        )
        try:
            yield
        finally:
            sweeper.cancel()
            await store.close_all()
            if disconnect is not None:
                disconnect()
            if peers is not None:
                await peers.close()
            log(logging.INFO, "server.stopped", instance_id=store.instance_id)

    return lifespan


def _connect_ray(settings: ServerSettings) -> Callable[[], None] | None:
    """Connect this process to the Ray cluster of ``settings.ray`` (``local``: start one), unless
    it is connected already; the function that disconnects it again, if it connected."""
    if settings.ray is None:
        return None
    from llmgym.serving import ray_actors

    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": "warning"}
    if settings.ray == "local":
        quiet["include_dashboard"] = False
    if not ray_actors.init(settings.ray, **quiet):
        return None
    log(logging.INFO, "ray.connected", address=settings.ray, **ray_actors.cluster_capacity())
    return ray_actors.ray.shutdown


def _answer_errors_as_json(app: FastAPI) -> None:
    """Every error gets its status and a JSON body ``{"error", "message", "field"}``."""

    @app.exception_handler(HostingError)
    async def hosting_error(request: Request, error: HostingError) -> Response:
        log(
            logging.WARNING if error.status < 500 else logging.ERROR,
            "request.failed",
            path=request.url.path,
            status=error.status,
            error=error.code,
            message=error.message,
        )
        headers = {"Retry-After": "5"} if error.status in (429, 503) else None
        return error_reply(error.status, error.to_dict(), headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> Response:
        return await hosting_error(request, validation_error(error.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        headers = dict(error.headers or {})
        if error.status_code == 405:
            headers["Allow"] = ", ".join(_allowed_methods(app, request))
        return error_reply(
            error.status_code,
            {"error": code, "message": str(error.detail), "field": None},
            headers,
        )


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed_methods(app: FastAPI, request: Request) -> list[str]:
    """Every method some route answers at the request's path (Starlette's own ``Allow`` names
    only the methods of the first route whose path matches)."""
    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL
            for route in app.router.routes
        )
    ]


class _ServerApp(FastAPI):
    """The FastAPI app, whose OpenAPI document also says what the routes cannot: what each
    protocol adds (:meth:`ServerProtocol.amend_openapi`) and the bearer token (which the guard
    middleware enforces)."""

    def __init__(
        self,
        settings: ServerSettings,
        store: SessionStore,
        protocols: Sequence[ServerProtocol],
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.settings = settings
        self.store = store
        self.protocols = protocols

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            schema = super().openapi()
            for protocol in self.protocols:
                protocol.amend_openapi(schema, self.store)
            if self.settings.token is not None:
                document_bearer(schema, open_paths(self.protocols))
            self.openapi_schema = schema
        return self.openapi_schema


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    settings: ServerSettings | None = None,
    *,
    log_level: str = "info",
    access_log: bool = False,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until interrupted. ``port=0`` picks a free port; ``on_ready`` receives the URL."""
    uvicorn = optional_import("uvicorn", extra="serve")
    settings = settings or ServerSettings()
    app = create_app(settings)  # settings a protocol cannot serve fail before anything listens
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # several workers listen on a socket each, on one port: the kernel spreads connections
    # evenly over them (one shared socket would hand most to whichever worker woke last)
    spread = settings.workers > 1 and hasattr(socket, "SO_REUSEPORT")
    sockets = [_listening(family, host, port, spread)]
    bound_port = sockets[0].getsockname()[1]
    if spread:
        sockets += [
            _listening(family, host, bound_port, spread) for _ in range(settings.workers - 1)
        ]
    url = f"http://{f'[{host}]' if family == socket.AF_INET6 else host}:{bound_port}"
    if settings.token is None and host not in ("127.0.0.1", "localhost", "::1"):
        log(
            logging.WARNING,
            "server.open",
            message=f"serving on {host} without a token: anyone who reaches it can use it",
        )
    log(logging.INFO, "server.listening", url=url)
    if on_ready is not None:
        on_ready(url)
    if settings.workers > 1:
        start = functools.partial(_run_worker, settings, log_level, access_log)
        run_workers(settings.workers, sockets, start)
        return
    raise_open_file_limit()
    limit_malloc_arenas()
    config = uvicorn_config(app, settings, log_level=log_level, access_log=access_log)
    log(logging.INFO, "server.connections", **config.connection_gate.load())
    uvicorn.Server(config).run(sockets=sockets)


def _listening(family: socket.AddressFamily, host: str, port: int, spread: bool) -> socket.socket:
    """A socket listening on ``host:port`` (``spread``: one of several on that port)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if spread:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)  # connections made from now on wait for uvicorn instead of being refused
    return sock


def _run_worker(
    settings: ServerSettings,
    log_level: str,
    access_log: bool,
    place: WorkerPlace,
    listening: socket.socket,
    own: socket.socket,
) -> None:
    """One of the workers of :func:`serve` (in a process of its own): the server, on its
    listening socket (or the one all workers share) and on its own Unix socket."""
    from llmgym.serving.server.logs import configure_logging

    uvicorn = optional_import("uvicorn", extra="serve")
    configure_logging(log_level)
    raise_open_file_limit()
    limit_malloc_arenas()
    app = create_app(worker_settings(settings, place.count), place)
    config = uvicorn_config(app, settings, log_level=log_level, access_log=access_log)
    log(logging.INFO, "worker.started", worker=place.index, instance_id=app.state.store.instance_id)
    uvicorn.Server(config).run(sockets=[listening, own])


def uvicorn_config(app: FastAPI, settings: ServerSettings, **options: Any) -> Any:
    """The uvicorn configuration of a server: its connections counted and capped by a
    :class:`~llmgym.serving.server.connections.ConnectionGate` (the config's
    ``connection_gate``) under the process's open-file limit, ``X-Forwarded-For`` read from the
    proxies of ``settings.forwarded_allow_ips`` only, keep-alive past the client's (so
    the server never closes a connection the client is about to reuse), WebSocket messages
    limited like request bodies, no compression (text this short is cheaper to send than to
    deflate)."""
    uvicorn = optional_import("uvicorn", extra="serve")
    gate = ConnectionGate(
        settings.max_connections,
        settings.max_connections_per_client,
        settings.header_timeout_s,
        open_file_limit(),
    )
    defaults = {
        "timeout_keep_alive": KEEP_ALIVE_S,
        "ws_max_size": settings.max_body_bytes,
        "ws_per_message_deflate": False,
        "lifespan": "on",
        "log_level": "info",
        "proxy_headers": bool(settings.forwarded_allow_ips),
        "forwarded_allow_ips": list(settings.forwarded_allow_ips) or None,
        **gated_protocols(gate),
    }
    config = uvicorn.Config(app, **{**defaults, **options})  # it configures uvicorn's logs
    hide_secrets(settings.token, token_routes(getattr(app, "protocols", ())))
    config.connection_gate = gate
    return config
