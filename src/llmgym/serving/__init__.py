"""Serving environments to clients elsewhere: the host side, the client side, and Ray.

* :mod:`~llmgym.serving.protocol` — the wire format (exact numpy arrays, spaces) and the errors
  both sides share.
* :mod:`~llmgym.serving.hosting` — :class:`~llmgym.serving.hosting.HostedEnv`, one environment
  owned on behalf of a remote client; what the server and the Ray actors wrap.
* :mod:`~llmgym.serving.server` — ``llmgym serve``: the HTTP/WebSocket app (extra ``[serve]``).
* :mod:`~llmgym.serving.client` — :class:`~llmgym.serving.client.RemoteEnv`, a
  ``gymnasium.Env`` whose environment is served elsewhere; registered as ``llmgym/Remote-v0``.
* :mod:`~llmgym.serving.ray_actors` — environments as Ray actors (extra ``[ray]``).

Importing this package imports none of them; the names below load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym

__all__ = [
    "REMOTE_ENV_ID",
    "RemoteEnv",
    "register_remote_env",
    "remote_env_factory",
]

REMOTE_ENV_ID = "llmgym/Remote-v0"
"""The gymnasium id of :class:`~llmgym.serving.client.RemoteEnv`:
``gymnasium.make("llmgym/Remote-v0", url=..., env_id=...)``."""

_CLIENT_NAMES = frozenset(__all__) - {"REMOTE_ENV_ID", "register_remote_env"}


def register_remote_env() -> None:
    """Register :data:`REMOTE_ENV_ID` with gymnasium (idempotent; ``import llmgym`` does it)."""
    if REMOTE_ENV_ID not in gym.registry:
        gym.register(
            id=REMOTE_ENV_ID,
            entry_point="llmgym.serving.client:RemoteEnv",
            disable_env_checker=True,
        )


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        return getattr(importlib.import_module("llmgym.serving.client"), name)
    raise AttributeError(f"module 'llmgym.serving' has no attribute {name!r}")
