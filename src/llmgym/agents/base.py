"""The agent protocol and the built-in agents that need no model."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from typing_extensions import Self

from llmgym.llm import Usage
from llmgym.wrappers.react import format_reply

__all__ = ["Agent", "HumanAgent", "OracleAgent", "Planner", "Playable", "RandomAgent"]


class Playable(Protocol):
    """What :meth:`Agent.reset` receives: a gymnasium environment (any wrappers on it) or a
    multi-agent game's :class:`~llmgym.envs.multiagent.seats.PlayerView`. Agents read llmgym's
    extras (:class:`Planner`, ``tool_schemas``) from ``unwrapped``."""

    @property
    def unwrapped(self) -> object: ...


@runtime_checkable
class Planner(Protocol):
    """The moves an environment suggests itself: every :class:`~llmgym.TextEnv` and
    :class:`~llmgym.envs.multiagent.seats.PlayerView` offers them."""

    def oracle_action(self) -> str: ...

    def sample_action(self, rng: np.random.Generator) -> str: ...


def _planner(env: Playable | None) -> Planner | None:
    inner = env.unwrapped if env is not None else None
    return inner if isinstance(inner, Planner) else None


_ORACLE_THOUGHTS = (
    "From the current state, the next step towards the goal is '{action}'.",
    "I keep to my plan; '{action}' brings me closer to completing the task.",
    "Given what I see, the right move now is '{action}'.",
)


class Agent:
    """Base class of agents: ``act(observation, info) -> str``.

    * :meth:`reset` is called at the start of every episode with the environment being played (or
      ``None`` where the agent cannot see it, e.g. a sub-environment of a vector environment).
    * :meth:`act` returns the reply; with ``react=True`` in ``Thought: ...\\nAction: ...`` form
      (for a :class:`~llmgym.wrappers.ReActWrapper`), otherwise the bare action.
    * :meth:`act_batch` and :meth:`aact` are the batched and async forms.
    * :meth:`fork` gives an independent copy for another concurrent episode (rollouts call it
      once per worker); override it when a shallow copy is not independent.
    * :attr:`usage` counts the tokens of the current episode (zero for agents without a model);
      :attr:`errors` its model requests that failed for good, :attr:`last_error` says why.
    * :meth:`preflight` checks, before a run, that the agent can act at all; :meth:`settings`
      describes it for a results file.
    """

    name: str = "agent"

    def __init__(self, *, react: bool = True) -> None:
        self.react = react
        self.usage = Usage()
        self.errors = 0
        self.last_error: str | None = None

    def reset(self, env: Playable | None, *, seed: int | None = None) -> None:
        """Start of an episode in ``env`` (seeded with ``seed`` where the agent is random)."""
        self.usage = Usage()
        self.errors = 0
        self.last_error = None

    def preflight(self) -> None:
        """Raise if the agent cannot act at all (e.g. its model server is down); called once
        before a run. Agents without a model have nothing to check."""

    def settings(self) -> dict[str, Any]:
        """What a results file records about the agent (a paper reports these)."""
        return {"agent": self.name, "react": self.react}

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The reply to ``observation``."""
        raise NotImplementedError

    def act_batch(self, observations: Sequence[str], infos: Sequence[dict[str, Any]]) -> list[str]:
        """Replies for several episodes at once (default: one :meth:`act` each)."""
        return [self.act(o, i) for o, i in zip(observations, infos, strict=True)]

    async def aact(self, observation: str, info: dict[str, Any]) -> str:
        """Async form of :meth:`act` (default: :meth:`act` in a worker thread)."""
        return await asyncio.to_thread(self.act, observation, info)

    def fork(self) -> Self:
        """An independent copy for a concurrent episode."""
        clone = copy.copy(self)
        clone.usage = Usage()
        return clone

    def _reply(self, action: str, thought: str = "") -> str:
        return format_reply(action, thought, react=self.react)


class OracleAgent(Agent):
    """Plays the environment's own oracle (a planner that reads the true state). With
    ``react=True`` the action is phrased as a ReAct reply with a templated thought.

    It reads ``info["oracle_action"]`` when present (put there by
    :class:`~llmgym.wrappers.OracleHint`, e.g. for vector environments), else asks the
    environment passed to :meth:`reset`."""

    name = "oracle"

    def __init__(self, *, react: bool = True) -> None:
        super().__init__(react=react)
        self._env: Planner | None = None
        self._turn = 0

    def reset(self, env: Playable | None, *, seed: int | None = None) -> None:
        super().reset(env, seed=seed)
        self._env = _planner(env)
        self._turn = 0

    def act(self, observation: str, info: dict[str, Any]) -> str:
        action = info.get("oracle_action")
        if action is None:
            if self._env is None:
                raise RuntimeError(
                    "OracleAgent needs reset(env) or info['oracle_action'] (OracleHint)"
                )
            action = self._env.oracle_action()
        thought = _ORACLE_THOUGHTS[self._turn % len(_ORACLE_THOUGHTS)].format(
            action=action.split("\n")[0][:80]
        )
        self._turn += 1
        return self._reply(action, thought)


class RandomAgent(Agent):
    """Uniformly random valid actions: the admissible ones where the environment lists them,
    otherwise the environment's :meth:`~llmgym.TextEnv.sample_action`. Seeded per episode."""

    name = "random"

    def __init__(self, seed: int | None = None, *, react: bool = True) -> None:
        super().__init__(react=react)
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self._env: Planner | None = None

    def reset(self, env: Playable | None, *, seed: int | None = None) -> None:
        super().reset(env, seed=seed)
        self._env = _planner(env)
        if seed is not None:
            self._rng = np.random.default_rng([self.seed or 0, seed])

    def act(self, observation: str, info: dict[str, Any]) -> str:
        actions = info.get("admissible_actions")
        if actions is not None and len(actions):
            action = str(actions[int(self._rng.integers(len(actions)))])
        elif self._env is not None:
            action = self._env.sample_action(self._rng)
        else:
            raise RuntimeError("RandomAgent needs admissible actions in info or reset(env)")
        return self._reply(action, "I pick an action at random.")

    def fork(self) -> Self:
        clone = super().fork()
        clone._rng = np.random.default_rng(self.seed)
        return clone


class HumanAgent(Agent):
    """A person at the terminal: shows the observation and reads a line. With ``react=True``
    the line is sent as ``Action: <line>`` unless it already has an ``Action:`` label."""

    name = "human"

    def __init__(
        self,
        *,
        react: bool = True,
        read: Callable[[str], str] = input,
        write: Callable[[str], None] = print,
    ) -> None:
        super().__init__(react=react)
        self._read = read
        self._write = write

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self._write(str(info.get("env_observation", observation)))
        actions = info.get("admissible_actions")
        if actions is not None and len(actions):
            self._write("Valid actions: " + ", ".join(map(str, actions)))
        line = self._read("> ")
        if self.react and "action:" not in line.lower():
            return f"Action: {line}"
        return line
