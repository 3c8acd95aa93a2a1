"""What a server allows: :class:`ServerSettings`."""

from __future__ import annotations

from dataclasses import dataclass

from llmgym.envs import get_entry

__all__ = ["ServerSettings"]


@dataclass(frozen=True)
class ServerSettings:
    """How a server behaves.

    Attributes:
        envs: The environment ids it serves (``None``: every available one).
        max_sessions: Sessions that may exist at once.
        ttl_s: Seconds a session may stay idle before it is closed.
        token: If set, every request except ``/health`` and the API docs must send
            ``Authorization: Bearer <token>``.
        max_body_bytes: Largest request body accepted (larger: 413).
        inline_call_s: Environment calls faster than this on average run on the event loop.
    """

    envs: tuple[str, ...] | None = None
    max_sessions: int = 256
    ttl_s: float = 600.0
    token: str | None = None
    max_body_bytes: int = 1 << 20
    inline_call_s: float = 0.002

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ValueError(f"max_sessions={self.max_sessions} must be at least 1")
        if self.ttl_s <= 0:
            raise ValueError(f"ttl_s={self.ttl_s} must be positive")
        if self.max_body_bytes < 1024:
            raise ValueError(f"max_body_bytes={self.max_body_bytes} must be at least 1024")
        if self.envs is not None:
            object.__setattr__(self, "envs", tuple(get_entry(e).id for e in self.envs))
