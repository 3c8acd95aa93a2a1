"""Environments as Ray actors, so rollouts and evaluations spread over a Ray cluster.

    pip install -e '.[ray]'

    from llmgym.serving import ray_actors
    from llmgym.runner.evaluation import evaluate

    ray_actors.init("auto")                      # the cluster of `ray start`, or "host:port"
    make = distributed.ray_env_factory("llmgym/TextCraft-v0")
    result = evaluate(make, agent, episodes=500, concurrency=64)

Each :class:`RayEnv` is a ``gymnasium.Env`` whose environment lives in a Ray actor on some node
of the cluster (the node needs llmgym and the environment's extra; the driver does not). The
agent stays in the driver — where the model client or the policy is — and every ``reset``,
``step`` and contract call (``task_ids``, ``oracle_action``, ...) is a call to the actor, so
:func:`llmgym.runner.rollout.rollout`, :func:`llmgym.runner.evaluation.evaluate` and the agents run
unchanged. ``llmgym eval ... --ray ADDRESS`` does the same from the command line.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from llmgym.core.registry import optional_import
from llmgym.errors import (
    CapacityError,
    EnvProcessError,
    EpisodeStateError,
    HostingError,
    RemoteEnvError,
    ServerUnavailableError,
    SessionLostError,
)
from llmgym.serving.client import ProxyEnv, raise_remote_error
from llmgym.serving.hosting import HostedEnv
from llmgym.serving.isolation import SeparateHostedEnv, answer_request

ray = optional_import("ray", extra="ray")

__all__ = ["EnvActor", "RayEnv", "RayHostedEnv", "cluster_capacity", "init", "ray_env_factory"]


def init(address: str | None = "auto", **ray_init_kwargs: Any) -> bool:
    """Connect to a Ray cluster: ``"auto"`` (the one ``ray start`` runs on this machine),
    ``"host:port"``, ``"ray://host:10001"``, or ``"local"`` (start one in this process). Does
    nothing if this process is already connected; says whether it connected."""
    if ray.is_initialized():
        return False
    ray.init(address=None if address == "local" else address, **ray_init_kwargs)
    return True


class _EnvHost:
    """The actor's body: one :class:`~llmgym.serving.hosting.HostedEnv`, made by :meth:`make`
    (not in the constructor, so that a bad id or config comes back as that error, not a dead
    actor)."""

    host: HostedEnv | None = None

    def make(
        self,
        env_id: str,
        make_kwargs: Mapping[str, Any],
        allowed: Collection[str] | None = None,
    ) -> dict[str, Any]:
        self.host = HostedEnv(env_id, make_kwargs, allowed=allowed)
        return self.host.describe()

    def reset(self, seed: int | None, options: Mapping[str, Any] | None) -> tuple:
        return self._host.reset(seed, options)

    def step(self, action: Any) -> tuple:
        return self._host.step(action)

    def call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return self._host.call(name, args, kwargs)

    def close(self) -> None:
        if self.host is not None:
            self.host.close()

    def request(self, operation: str, *args: Any) -> list[Any]:
        """A server's request (:class:`RayHostedEnv`): ``make``, ``reset``, ``step``, ``call``
        or ``close``, answered as a server's child process answers it
        (:func:`~llmgym.serving.isolation.answer_request`)."""
        host = None if operation == "make" else self.host
        return answer_request(host, getattr(self, operation), *args)

    def node_id(self) -> str:
        """The id of the Ray node this actor runs on."""
        return ray.get_runtime_context().get_node_id()

    @property
    def _host(self) -> HostedEnv:
        if self.host is None:
            raise EpisodeStateError("the environment was not made", code="reset_needed")
        return self.host


EnvActor = ray.remote(_EnvHost)
"""The Ray actor class that holds one environment."""


MAKE_ATTEMPTS = 3
"""Actors a new session of :class:`RayHostedEnv` tries before its creation fails."""


class RayHostedEnv(SeparateHostedEnv):
    """A :class:`~llmgym.serving.isolation.SeparateHostedEnv` in a Ray actor (``llmgym serve
    --ray``): the server's sessions spread over the cores and nodes of a Ray cluster, each
    environment in an actor of its own, placed by what it reserves.

    Args:
        env_id: The environment to make.
        make_kwargs: Keyword arguments for ``gymnasium.make``.
        allowed: If given, only these environment ids may be made.
        memory_mb: Memory the actor reserves in Ray's scheduler (its environment's declared
            cost and the actor process's own).
        num_cpus: CPUs the actor reserves (fractions allowed; 0: it is placed by memory alone).

    :meth:`start` refuses a session the cluster has no room for (:class:`CapacityError`)
    rather than leave it waiting for a node. When the actor dies (its node went away, its
    process was killed, or :meth:`kill` stopped it) its calls raise :class:`EnvProcessError`.
    """

    def __init__(
        self,
        env_id: str,
        make_kwargs: Mapping[str, Any] | None = None,
        *,
        allowed: Collection[str] | None = None,
        memory_mb: float,
        num_cpus: float = 0.0,
    ) -> None:
        super().__init__(env_id, make_kwargs, allowed=allowed)
        self.memory_mb = memory_mb
        self.num_cpus = num_cpus
        self._lock = threading.Lock()
        self._actor: Any = None
        self._ended: str | None = None  # why the actor is gone
        self._killed = False  # by kill(): for good

    def start(self) -> None:
        """Start the actor and make the environment in it (the make's errors are raised). An
        actor that dies before it answers — placed on a node that has just failed, which Ray
        has not yet marked dead — is replaced by another, :data:`MAKE_ATTEMPTS` in all."""
        for attempt in range(MAKE_ATTEMPTS):
            try:
                super().start()
                return
            except EnvProcessError:
                with self._lock:
                    if self._killed or attempt == MAKE_ATTEMPTS - 1:
                        raise
                    self._actor, self._ended = None, None
                time.sleep(1.0)

    def _open(self) -> None:
        free = ray.available_resources()
        free_mb = free.get("memory", 0.0) / 2**20
        if free_mb < self.memory_mb or free.get("CPU", 0.0) < self.num_cpus:
            raise CapacityError(
                f"the Ray cluster has no room for a session of {self.env_id} (it reserves "
                f"{self.memory_mb:g} MiB and {self.num_cpus:g} CPU; free: {free_mb:.0f} MiB, "
                f"{free.get('CPU', 0.0):g} CPU); close sessions you no longer use, or retry later"
            )
        actor = EnvActor.options(
            num_cpus=self.num_cpus,
            memory=int(self.memory_mb * 2**20),
            scheduling_strategy="SPREAD",
            max_restarts=0,
        ).remote()
        with self._lock:
            if self._ended is None:
                self._actor = actor
                return
        ray.kill(actor, no_restart=True)  # killed while it was being made
        raise EnvProcessError(f"{self.env_id}: {self._ended}")

    @property
    def node_id(self) -> str:
        """The id of the Ray node the actor runs on (blocking: asks the actor)."""
        try:
            return ray.get(self._actor.node_id.remote())
        except ray.exceptions.RayError as error:
            raise EnvProcessError(f"{self.env_id}: {_ending(error)}") from None

    def close(self) -> None:
        """Close the environment and end the actor (at most a few seconds)."""
        actor = self._actor
        if actor is not None and self._ended is None:
            with contextlib.suppress(ray.exceptions.RayError):
                ray.get(actor.request.remote("close"), timeout=5.0)
        self.kill("it was closed")

    def kill(self, reason: str = "it was stopped") -> None:
        """End the actor now (safe from any thread, at any time)."""
        with self._lock:
            self._killed = True
            if self._ended is None:
                self._ended = f"the environment's Ray actor ended: {reason}"
            actor = self._actor
        if actor is not None:
            with contextlib.suppress(ray.exceptions.RayError, ValueError):
                ray.kill(actor, no_restart=True)

    def _exchange(self, operation: str, *args: Any) -> list[Any]:
        actor = self._actor
        if actor is None or self._ended is not None:
            raise EnvProcessError(f"{self.env_id}: during {operation}, {self._ended}")
        try:
            return ray.get(actor.request.remote(operation, *args))
        except ray.exceptions.RayError as error:
            with self._lock:
                if self._ended is None:
                    self._ended = _ending(error)
            raise EnvProcessError(f"{self.env_id}: during {operation}, {self._ended}") from None


def _ending(error: Exception) -> str:
    """Why a call to an actor got no answer, in a line (Ray's own messages run to pages)."""
    if isinstance(error, ray.exceptions.RayActorError):
        return "the environment's Ray actor died (its process or its node ended)"
    return f"Ray could not complete the call ({type(error).__name__})"


CAPACITY_MAX_AGE_S = 2.0
"""How old :func:`cluster_capacity`'s answer may be: each look is a round trip to Ray's control
store, and a load balancer may poll ``/health`` often."""

_last_capacity: dict[str, Any] = {"at": -CAPACITY_MAX_AGE_S, "capacity": {}}


def cluster_capacity() -> dict[str, Any]:
    """The Ray cluster's live nodes, CPUs and memory, and what of them is free (at most
    :data:`CAPACITY_MAX_AGE_S` old)."""
    if time.monotonic() - _last_capacity["at"] < CAPACITY_MAX_AGE_S:
        return _last_capacity["capacity"]
    total, free = ray.cluster_resources(), ray.available_resources()
    capacity = {
        "nodes": sum(1 for node in ray.nodes() if node.get("Alive")),
        "cpus": total.get("CPU", 0.0),
        "free_cpus": free.get("CPU", 0.0),
        "memory_mb": round(total.get("memory", 0.0) / 2**20),
        "free_memory_mb": round(free.get("memory", 0.0) / 2**20),
    }
    _last_capacity.update(at=time.monotonic(), capacity=capacity)
    return capacity


class RayEnv(ProxyEnv):
    """An environment living in a Ray actor, as a local ``gymnasium.Env``.

    Args:
        env_id: The environment to make in the actor, e.g. ``"llmgym/Wordle-v0"``.
        actor_options: Options for the actor (``num_cpus``, ``resources``,
            ``scheduling_strategy``, ``runtime_env``, ...; see ``ray.actor.ActorClass.options``).
            Ray's default reserves no CPU while the actor runs, so any number of environments
            fit on a node; set ``num_cpus`` for environments that compute hard.
        timeout: Seconds to wait for one call (``None``: no limit).
        render_mode: ``"ansi"`` or ``"human"``, rendered here.
        **make_kwargs: Keyword arguments for ``gymnasium.make`` in the actor.
    """

    def __init__(
        self,
        env_id: str,
        *,
        actor_options: Mapping[str, Any] | None = None,
        timeout: float | None = 300.0,
        render_mode: str | None = None,
        **make_kwargs: Any,
    ) -> None:
        self.timeout = timeout
        self._actor: Any = EnvActor.options(**(actor_options or {})).remote()
        try:
            self._mirror(self._get(self._actor.make.remote(env_id, make_kwargs)), render_mode)
        except BaseException:
            ray.kill(self._actor)
            self._actor = None
            raise

    def __repr__(self) -> str:
        return f"<RayEnv {getattr(self, 'env_id', '?')}>"

    def _get(self, ref: Any) -> Any:
        """The result of an actor call; Ray's failures become llmgym's: the environment's own
        errors as locally, a dead actor :class:`SessionLostError`, anything else Ray raises
        (a timeout, an unreachable actor or node, a lost object) :class:`ServerUnavailableError`."""
        try:
            return ray.get(ref, timeout=self.timeout)
        except ray.exceptions.RayTaskError as error:
            cause = getattr(error, "cause", None)
            if isinstance(cause, HostingError):
                raise_remote_error(cause.code, cause.message, cause.field)
            raise RemoteEnvError(f"the environment's actor raised: {cause or error}") from error
        except _unreachable_actor_errors() as error:
            raise ServerUnavailableError(
                f"the actor holding the environment is unreachable: {error}"
            ) from error
        except ray.exceptions.RayActorError as error:
            raise SessionLostError(f"the actor holding the environment died: {error}") from error
        except ray.exceptions.GetTimeoutError as error:
            raise ServerUnavailableError(
                f"the environment's actor did not answer in {self.timeout} s"
            ) from error
        except ray.exceptions.RayError as error:
            raise ServerUnavailableError(
                f"Ray could not complete the call ({type(error).__name__}: {error})"
            ) from error

    @property
    def actor(self) -> Any:
        """The Ray actor holding the environment."""
        if self._actor is None:
            raise SessionLostError("this RayEnv is closed")
        return self._actor

    def _remote_reset(
        self, seed: int | None, options: dict[str, Any] | None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = self._get(self.actor.reset.remote(seed, options))
        return _writable(observation), info

    def _remote_step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self._get(self.actor.step.remote(action))
        return _writable(observation), reward, terminated, truncated, info

    def _remote_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._get(self.actor.call.remote(name, list(args), kwargs))

    def _remote_close(self) -> None:
        if self._actor is not None:
            try:
                self._get(self._actor.close.remote())
            finally:
                ray.kill(self._actor)
                self._actor = None


def _unreachable_actor_errors() -> tuple[type[Exception], ...]:
    """Ray's error for an actor that is unreachable for now, where Ray has one (2.3x and
    later; it is a ``RayActorError``, which otherwise means the actor died)."""
    error = getattr(ray.exceptions, "ActorUnavailableError", None)
    return (error,) if error is not None else ()


def _writable(observation: Any) -> Any:
    """A frame as the local environment returns it: Ray hands out arrays that are read-only
    views of its object store."""
    if isinstance(observation, np.ndarray) and not observation.flags.writeable:
        return observation.copy()
    return observation


def ray_env_factory(
    env_id: str,
    *,
    react: bool = True,
    actor_options: Mapping[str, Any] | None = None,
    **make_kwargs: Any,
) -> Callable[[], gym.Env]:
    """A zero-argument factory of :class:`RayEnv` wrapped for an LLM agent (as
    :func:`~llmgym.wrappers.make_chat_env` does), for :func:`llmgym.runner.rollout.rollout` and
    :func:`llmgym.runner.evaluation.evaluate`; trajectories record ``env_id``."""
    from llmgym.wrappers import wrap_chat_env

    def make() -> gym.Env:
        return wrap_chat_env(
            RayEnv(env_id, actor_options=actor_options, **make_kwargs), react=react
        )

    return make
