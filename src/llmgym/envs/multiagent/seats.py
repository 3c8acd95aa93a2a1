"""Who plays a seat of a multi-agent game: scripted players and llmgym agents.

* :class:`PlayerView` — one player's handle on a running game, shaped like a single-agent
  llmgym environment (``oracle_action()``, ``sample_action(rng)``, ``rules()``, ``example``), so
  :class:`~llmgym.agents.OracleAgent`, :class:`~llmgym.agents.RandomAgent` and LLM agents play
  a seat without knowing it is shared.
* :class:`ScriptedSeat` — one of the game's scripted players (``greedy``, ``random``, ...).
* :class:`AgentSeat` — an llmgym :class:`~llmgym.agents.Agent`, prompted exactly as the ReAct
  and chat-history wrappers prompt it in a single-agent environment, its replies parsed the same
  way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from llmgym.envs.multiagent.game import Game, Referee
from llmgym.wrappers.react import parse_reply, system_prompt

if TYPE_CHECKING:
    from llmgym.agents.base import Agent

__all__ = ["AgentSeat", "PlayerView", "ScriptedSeat", "Seat"]


class PlayerView:
    """``player``'s side of the game a :class:`Referee` runs."""

    def __init__(self, referee: Referee, player: str) -> None:
        self.referee = referee
        self.player = player

    @property
    def game(self) -> Game:
        return self.referee.game

    @property
    def unwrapped(self) -> PlayerView:
        return self

    @property
    def example(self) -> str:
        return self.game.example

    @property
    def instruction(self) -> str:
        return self.game.instruction(self.player)

    @property
    def success(self) -> bool:
        return self.game.finished and self.game.success(self.player)

    def rules(self) -> str:
        """The game's rules and action grammar."""
        return self.game.rules(self.game.config)

    def oracle_action(self) -> str:
        """The game's oracle move for this player."""
        return self.game.oracle_action(self.player, self.referee.pending)

    def policy_action(self, policy: str, rng: np.random.Generator) -> str:
        """The move of the game's scripted player ``policy`` for this player."""
        return self.game.policy_action(self.player, policy, rng, self.referee.pending)

    def admissible_actions(self) -> list[str] | None:
        """The valid moves now, where the game lists them."""
        return self.game.legal_actions(self.player)

    def sample_action(self, rng: np.random.Generator) -> str:
        """A random valid move."""
        return self.game.sample_action(self.player, rng)


class Seat(Protocol):
    """Whatever chooses the moves of one player; ``reads_observation = False`` tells the
    environment it may pass an empty observation (scripted players read the game itself)."""

    reads_observation: bool

    def reset(self, view: PlayerView, seed: int) -> None: ...

    def act(self, observation: str, info: dict[str, Any]) -> str: ...


class ScriptedSeat:
    """A scripted player of the game (one of ``Game.policies``), with its own seeded RNG."""

    reads_observation = False

    def __init__(self, policy: str) -> None:
        self.policy = policy
        self._view: PlayerView | None = None
        self._seed = 0
        self._rng: np.random.Generator | None = None

    def reset(self, view: PlayerView, seed: int) -> None:
        self._view = view
        self._seed = seed
        self._rng = None  # made on first use: many scripted players never draw

    def act(self, observation: str, info: dict[str, Any]) -> str:
        assert self._view is not None, "reset() first"
        if self._rng is None:
            self._rng = np.random.default_rng(self._seed)
        return self._view.policy_action(self.policy, self._rng)


class AgentSeat:
    """An llmgym agent in a seat, prompted like ``ChatHistory(ReActWrapper(env))`` prompts it.

    Each turn the agent gets the full prompt as the observation (rules, reply format, worked
    example, task, latest observation) and the conversation in ``info["messages"]``; its reply
    is parsed with :func:`~llmgym.wrappers.parse_reply`. A reply without a parseable action is
    passed on as an empty move, which the referee answers as an invalid move (using one retry),
    and the next prompt starts with the format error.

    Attributes:
        messages: The seat's conversation this game (system prompt, observations, replies).
        format_errors: Replies without a parseable action.
    """

    reads_observation = True

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._view: PlayerView | None = None
        self.system_prompt = ""
        self.messages: list[dict[str, str]] = []
        self.format_errors = 0
        self._format_note = ""

    def reset(self, view: PlayerView, seed: int) -> None:
        self._view = view
        self.agent.reset(view, seed=seed)
        self.system_prompt = system_prompt(view.rules(), view.example, react=self.agent.react)
        self.messages = [{"role": "system", "content": self.system_prompt}]
        self.format_errors = 0
        self._format_note = ""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        assert self._view is not None, "reset() first"
        observation = str(observation)
        if self._format_note:
            observation = f"{self._format_note}\n\n{observation}"
        task = f"Your task: {self._view.instruction}\n\n"
        first = len(self.messages) == 1
        content = f"{task}Observation:\n{observation}" if first else observation
        self.messages.append({"role": "user", "content": content})
        prompt = f"{self.system_prompt}\n\n{task}Observation:\n{observation}"
        agent_info = {
            **info,
            "instruction": self._view.instruction,
            "env_observation": observation,
            "messages": list(self.messages),
        }
        reply = self.agent.act(prompt, agent_info)
        self.messages.append({"role": "assistant", "content": reply})
        parsed = parse_reply(reply, require_label=self.agent.react)
        if parsed.action is None:
            self.format_errors += 1
            expected = "Action: <one action>"
            if self.agent.react:
                expected = "Thought: <reasoning>\n" + expected
            self._format_note = f"Format error: {parsed.error}. Reply in the format:\n{expected}"
            return ""
        self._format_note = ""
        return parsed.action
