"""``llmgym serve``: every llmgym environment over HTTP, for trainers on other machines.

    pip install -e '.[serve]'
    llmgym serve --host 0.0.0.0 --port 8000 --token "$TOKEN"

A client creates a *session* (one environment instance, private to it), resets and steps it, and
closes it; :class:`llmgym.serving.client.RemoteEnv` does this behind the ``gymnasium.Env`` API. The
server is built to be left running:

* every session has its own lock, so concurrent requests to one session are applied one at a
  time and sessions never share an instance;
* idle sessions expire after ``ttl_s`` seconds, at most ``max_sessions`` exist (503 with
  ``Retry-After`` beyond that) and at most ``max_sessions_per_client`` per client address (429);
* no environment call runs on the event loop: each runs in a worker thread under a wall-clock
  limit (``step_timeout_s``, ``reset_timeout_s``), past which that session is closed (504) while
  every other session and ``/health`` keep answering; environments with a native engine
  (TextWorld, ScienceWorld) run in a child process per session, so that an engine that exits
  or crashes ends one session (502), never the server;
* config fields that raise resource use are capped by the server, and file paths from clients
  are refused unless the operator allows a directory (:mod:`~.policy`);
* every error has its HTTP status and a JSON body ``{"error": code, "message": ..., "field":
  ...}``: 401 (token missing or wrong), 404 (unknown or expired session), 409 (step before reset
  or after the episode ended), 413 (request body over the limit), 422 (invalid request, unknown
  environment, bad config: the ``ConfigError`` message and field), 429 (per-client quota), 502
  and 504 (the session was lost: its process ended, or a call overran its limit), 503 (at
  capacity) — never a 200 with an error inside. A hostile *action* is not an error: the
  environment answers it (``info["invalid_action"]``) as it would locally — an action index out
  of range too;
* observations, ``info`` and actions may hold numpy arrays (pixel environments): they travel
  exactly, as ``{"__ndarray__": base64, "dtype": ..., "shape": [...]}`` (see
  :mod:`llmgym.serving.protocol`);
* ``reset`` and ``step`` carry an optional sequence number, so a client may retry one after a
  dropped connection without applying it twice;
* logs are JSON lines with the session id (logger ``llmgym.serving.server``);
* past one process: ``workers`` server processes share the port, each holding its own sessions
  (:mod:`~.workers`), and with ``ray`` every session's environment is a Ray actor placed on a
  node of the cluster (:class:`~llmgym.serving.ray_actors.RayHostedEnv`); an actor or node that
  dies ends its own sessions only.

The server speaks protocols, each a :class:`~.protocols.ServerProtocol` of one table
(:data:`~.protocols.PROTOCOLS`; ``ServerSettings.protocols`` and ``llmgym serve --protocol``
choose): llmgym's own (:mod:`~.routes`, one router per resource), OpenEnv's (:mod:`~.openenv`)
and AgentGym's (:mod:`~.agentgym`), all over the same sessions. The rest is theirs in common:
:mod:`~.app` (the application), :mod:`~.sessions` (the session store), :mod:`~.schemas`
(bodies and replies), :mod:`~.guard` (token and body size), :mod:`~.policy` (what clients may
configure), :mod:`~.settings`, :mod:`~.workers` (several processes) and :mod:`~.logs`; the
threads and child processes are :mod:`llmgym.serving.isolation`'s.
"""

from llmgym.core.registry import optional_import

optional_import("fastapi", extra="serve")

from llmgym.serving.server.app import create_app, serve, uvicorn_config  # noqa: E402
from llmgym.serving.server.logs import JsonLogFormatter, configure_logging  # noqa: E402
from llmgym.serving.server.protocols import ServerProtocol, register_protocol  # noqa: E402
from llmgym.serving.server.settings import ServerSettings  # noqa: E402

__all__ = [
    "JsonLogFormatter",
    "ServerProtocol",
    "ServerSettings",
    "configure_logging",
    "create_app",
    "register_protocol",
    "serve",
    "uvicorn_config",
]
