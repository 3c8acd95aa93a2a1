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

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from llmgym.core.registry import optional_import
from llmgym.errors import HostingError, RemoteEnvError, ServerUnavailableError, SessionLostError
from llmgym.serving.client import ProxyEnv, raise_remote_error
from llmgym.serving.hosting import HostedEnv

ray = optional_import("ray", extra="ray")

__all__ = ["EnvActor", "RayEnv", "init", "ray_env_factory"]


def init(address: str | None = "auto", **ray_init_kwargs: Any) -> None:
    """Connect to a Ray cluster: ``"auto"`` (the one ``ray start`` runs on this machine),
    ``"host:port"``, ``"ray://host:10001"``, or ``"local"`` (start one in this process). Does
    nothing if this process is already connected."""
    if ray.is_initialized():
        return
    ray.init(address=None if address == "local" else address, **ray_init_kwargs)


class _EnvHost:
    """The actor's body: one :class:`~llmgym.serving.hosting.HostedEnv`, made by :meth:`make`
    (not in the constructor, so that a bad id or config comes back as that error, not a dead
    actor)."""

    host: HostedEnv

    def make(self, env_id: str, make_kwargs: Mapping[str, Any]) -> dict[str, Any]:
        self.host = HostedEnv(env_id, make_kwargs)
        return self.host.describe()

    def reset(self, seed: int | None, options: Mapping[str, Any] | None) -> tuple:
        return self.host.reset(seed, options)

    def step(self, action: Any) -> tuple:
        return self.host.step(action)

    def call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        return self.host.call(name, args, kwargs)

    def close(self) -> None:
        self.host.close()


EnvActor = ray.remote(_EnvHost)
"""The Ray actor class that holds one environment."""


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
