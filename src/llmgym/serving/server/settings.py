"""What a server allows: :class:`ServerSettings`."""

from __future__ import annotations

import os
from dataclasses import dataclass

from llmgym.envs import all_entries, get_entry
from llmgym.originals import get_source
from llmgym.serving.server.policy import DEFAULT_CONFIG_LIMITS, ConfigLimit, ConfigPolicy
from llmgym.serving.server.protocols import DEFAULT_PROTOCOLS, checked_names

__all__ = [
    "DEFAULT_SESSION_MEMORY_MB",
    "RAY_ACTOR_MEMORY_MB",
    "ServerSettings",
    "machine_memory_mb",
]

DEFAULT_SESSION_MEMORY_MB = 8.0
"""What a session of an environment that declares no memory cost reserves: a margin over an
in-process environment's own state (the data its sessions share is held once, in bounded
caches)."""


RAY_ACTOR_MEMORY_MB = 100.0
"""What a session's Ray actor reserves besides its environment's declared cost: the actor's own
process (a Python interpreter with Ray and llmgym imported; ``benchmarks/serving_scale.py``
measures it, docs/serving.md shows the figure)."""


def machine_memory_mb() -> float:
    """The machine's physical memory in MiB (4 GiB where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (ValueError, OSError, AttributeError):
        return 4096.0


@dataclass(frozen=True)
class ServerSettings:
    """How a server behaves, and what a client may not change (each has an ``llmgym serve``
    flag; see docs/serving.md, "Security model").

    Attributes:
        envs: The environment ids it serves (``None``: every available one).
        max_sessions: Sessions that may exist at once.
        max_sessions_per_client: Sessions one client address may hold at once (429 beyond).
        ttl_s: Seconds a session may stay idle before it is closed.
        token: If set, every request except ``/health`` and the API docs must send
            ``Authorization: Bearer <token>``.
        max_body_bytes: Largest request body or stream message accepted (larger: 413).
        max_json_depth: Deepest nesting of arrays and objects in a body or message (deeper:
            422).
        step_timeout_s: Wall-clock limit of one ``step`` or remote call; past it the session
            is closed (504) and its environment discarded.
        reset_timeout_s: The same for making an environment and ``reset``.
        config_limits: Limits on config fields that raise resource use; they replace
            :data:`~llmgym.serving.server.policy.DEFAULT_CONFIG_LIMITS` field by field.
        file_dir: The directory whose files clients may name in config fields that name a file
            (``None``: no file paths from clients).
        isolate: Environments to run in a child process per session, besides those the
            environment table marks ``isolated`` (``("all",)``: every one).
        worker_threads: Threads that run environment calls.
        protocols: The protocols it speaks, by their names in
            :data:`~llmgym.serving.server.protocols.PROTOCOLS` (default: llmgym's own, OpenEnv's
            for every environment at ``/openenv/<name>``, AgentGym's). OpenEnv's alone is an
            OpenEnv Space: the one environment of ``envs``, at the root (``/ws``, ``/schema``,
            ...).
        max_connections: Connections open at once, in all (lowered to fit the process's
            open-file limit); over it, an idle connection that never sent the token is closed to
            make room, or the new one is answered 503.
        max_connections_per_client: Connections open at once from one client address (the
            same, answered 429).
        header_timeout_s: Seconds a connection has to deliver a request's headers (after its
            previous response: the keep-alive time more), and a request's body between two of
            its parts (408 past it).
        ws_idle_timeout_s: Seconds a WebSocket may stay without a message from its client before
            the server closes it (code 4408; :class:`~llmgym.serving.client.RemoteEnv`
            reconnects on its next message).
        max_memory_mb: The memory budget of the sessions: each session reserves its
            environment's declared cost (the environment table's ``memory_mb``, or
            :data:`DEFAULT_SESSION_MEMORY_MB`) and a session that would go over is refused (503)
            (``None``: half the machine's memory).
        forwarded_allow_ips: Addresses of reverse proxies whose ``X-Forwarded-For`` header names
            the client (its sessions then count against that address's quota); from any
            other peer the header is ignored (none by default: a client could otherwise name
            any address).
        data: Original datasets this server plays, as ``(source, directory)`` pairs
            (:mod:`llmgym.originals`, ``llmgym serve --data FAMILY=DIR``): the source's
            environment reads that directory in every session, and clients can neither change
            nor see the directory.
        ray: Host every session's environment in a Ray actor of the cluster at this address
            (``"auto"``: the one ``ray start`` runs on this machine, ``"host:port"``,
            ``"ray://host:10001"``, or ``"local"``: start one in this process); ``None``: in
            this process (or a child process, for ``isolate``). Each actor reserves its
            environment's memory (:meth:`ray_memory_mb`) and ``ray_cpus`` CPUs; the memory
            budget (``max_memory_mb``) then applies only if given.
        workers: Server processes on the one listening socket (``llmgym serve --workers``):
            each holds its own sessions, and the session cap and memory budget are shared out
            among them (:mod:`~llmgym.serving.server.workers`).
        ray_cpus: CPUs each session's actor reserves on Ray (fractions allowed; 0: placed by
            memory alone, the right choice for sessions that mostly wait for a model).
    """

    envs: tuple[str, ...] | None = None
    max_sessions: int = 256
    max_sessions_per_client: int = 64
    ttl_s: float = 600.0
    token: str | None = None
    max_body_bytes: int = 1 << 20
    max_json_depth: int = 32
    step_timeout_s: float = 30.0
    reset_timeout_s: float = 120.0
    config_limits: tuple[ConfigLimit, ...] = ()
    file_dir: str | None = None
    isolate: tuple[str, ...] = ()
    worker_threads: int = 64
    protocols: tuple[str, ...] = DEFAULT_PROTOCOLS
    max_connections: int = 4096
    max_connections_per_client: int = 256
    header_timeout_s: float = 10.0
    ws_idle_timeout_s: float = 300.0
    max_memory_mb: float | None = None
    forwarded_allow_ips: tuple[str, ...] = ()
    data: tuple[tuple[str, str], ...] = ()
    ray: str | None = None
    ray_cpus: float = 0.0
    workers: int = 1

    def __post_init__(self) -> None:
        for name, least in (
            ("max_sessions", 1),
            ("max_sessions_per_client", 1),
            ("max_body_bytes", 1024),
            ("max_json_depth", 2),
            ("worker_threads", 1),
            ("max_connections", 1),
            ("max_connections_per_client", 1),
            ("workers", 1),
        ):
            if getattr(self, name) < least:
                raise ValueError(f"{name}={getattr(self, name)} must be at least {least}")
        for name in (
            "ttl_s",
            "step_timeout_s",
            "reset_timeout_s",
            "header_timeout_s",
            "ws_idle_timeout_s",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}={getattr(self, name)} must be positive")
        if not self.ray_cpus >= 0:
            raise ValueError(f"ray_cpus={self.ray_cpus} must be at least 0")
        if self.ray is not None and not self.ray:
            raise ValueError("ray: give an address, 'auto' or 'local'")
        if self.ray == "local" and self.workers > 1:
            raise ValueError(
                "ray='local' starts Ray inside the server's process, once per worker: with "
                "workers > 1 start one with 'ray start --head' and give ray='auto'"
            )
        if self.max_memory_mb is not None and not self.max_memory_mb > 0:
            raise ValueError(f"max_memory_mb={self.max_memory_mb} must be positive")
        if self.file_dir is not None and not os.path.isdir(self.file_dir):
            raise ValueError(f"file_dir={self.file_dir!r} is not a directory")
        if self.envs is not None:
            object.__setattr__(self, "envs", tuple(get_entry(e).id for e in self.envs))
        object.__setattr__(self, "protocols", checked_names(self.protocols))
        if self.isolate != ("all",):
            object.__setattr__(self, "isolate", tuple(get_entry(e).id for e in self.isolate))
        self._check_data()
        self.policy().validate()

    def _check_data(self) -> None:
        envs = [get_source(name).env_id for name, _ in self.data]  # unknown names raise
        for (name, directory), env_id in zip(self.data, envs, strict=True):
            if envs.count(env_id) > 1:
                raise ValueError(f"data: {env_id} is given two sources; give it one")
            if not os.path.isdir(directory):
                raise ValueError(f"data: {name}={directory!r} is not a directory")

    def original_config(self, env_id: str) -> dict[str, str]:
        """The config fields the server fixes for ``env_id``: ``source`` and ``data_dir`` where
        ``data`` gives it an original dataset, else none."""
        for name, directory in self.data:
            if get_source(name).env_id == env_id:
                return {"source": name, "data_dir": os.path.realpath(directory)}
        return {}

    def limits(self) -> tuple[ConfigLimit, ...]:
        """The config limits in force: the defaults, with ``config_limits`` replacing them."""
        given = {(limit.env_id, limit.field) for limit in self.config_limits}
        defaults = [d for d in DEFAULT_CONFIG_LIMITS if (d.env_id, d.field) not in given]
        return (*defaults, *self.config_limits)

    def policy(self) -> ConfigPolicy:
        """The checks of clients' config overrides (limits and file paths)."""
        originals = {get_source(name).env_id: name for name, _ in self.data}
        return ConfigPolicy(self.limits(), self.file_dir, originals=originals)

    def isolated(self, env_id: str) -> bool:
        """Whether sessions of ``env_id`` run in a child process each."""
        return self.isolate == ("all",) or env_id in self.isolate or get_entry(env_id).isolated

    def memory_budget_mb(self) -> float:
        """The sessions' memory budget: ``max_memory_mb``, or half the machine's memory (on
        Ray, where the cluster's scheduler reserves the sessions' memory: no budget)."""
        if self.max_memory_mb is not None:
            return self.max_memory_mb
        return float("inf") if self.ray is not None else machine_memory_mb() / 2

    def session_memory_mb(self, env_id: str) -> float:
        """The memory a session of ``env_id`` reserves in the budget."""
        declared = get_entry(env_id).memory_mb
        return declared if declared is not None else DEFAULT_SESSION_MEMORY_MB

    def ray_memory_mb(self, env_id: str) -> float:
        """The memory a session's Ray actor reserves: its environment's
        (:meth:`session_memory_mb`) and the actor process's own
        (:data:`RAY_ACTOR_MEMORY_MB`)."""
        return self.session_memory_mb(env_id) + RAY_ACTOR_MEMORY_MB

    def served(self) -> tuple[str, ...]:
        """The ids served: ``envs``, or every available environment."""
        served = self.envs or tuple(e.id for e in all_entries() if e.available)
        return (*served, *(e for e in self._original_envs() if e not in served))

    def _original_envs(self) -> tuple[str, ...]:
        return tuple(get_source(name).env_id for name, _ in self.data)
