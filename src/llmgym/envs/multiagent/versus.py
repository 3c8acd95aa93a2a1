"""A multi-agent game as a single-agent gymnasium environment against fixed opponents.

:class:`VersusEnv` wraps a game's PettingZoo AEC environment (``raw_env``): the learning agent
holds one seat, every other seat is played inside ``step()`` by a scripted player of the game or
by any llmgym :class:`~llmgym.agents.Agent`. It is a :class:`llmgym.TextEnv`, so the ReAct and
chat wrappers, evaluation, rollouts, serving and the conformance suite work on it unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from llmgym.core import Task, TaskRng, TextEnv, Transition, knob
from llmgym.envs.multiagent.api import TextAECEnv
from llmgym.envs.multiagent.game import Game, GameConfig, player_names
from llmgym.envs.multiagent.seats import AgentSeat, PlayerView, ScriptedSeat, Seat
from llmgym.errors import ConfigError

if TYPE_CHECKING:
    from llmgym.agents.base import Agent

__all__ = ["VersusConfig", "VersusEnv", "versus_config"]

MAX_OPPONENT_ACTIONS = 10_000
"""Opponent actions within one step after which the environment gives up (reachable only with
unlimited retries for an opponent that never makes a valid move)."""


class VersusConfig(GameConfig):
    """The knobs a single-agent view adds to its game's config. Not a dataclass of its own:
    :func:`versus_config` declares these fields after the game's, each game with its own
    choices; this class names them for type checkers and ``isinstance``."""

    opponent: str
    seat: str
    agent_invalid_move_retries: int | None


def versus_config(
    base: type[GameConfig], game: type[Game[Any]], *, max_players: int
) -> type[VersusConfig]:
    """The single-agent config of ``game``: ``base``'s knobs plus ``opponent``, ``seat`` and
    ``agent_invalid_move_retries`` (named ``<Base>VersusConfig``, e.g.
    ``ConnectFourVersusConfig``)."""
    seats = ("random", *player_names(max_players))
    name = base.__name__.removesuffix("Config") + "VersusConfig"

    def validate(self: VersusConfig) -> None:
        base.validate(self)
        if self.seat != "random":
            count = game.player_count(self)
            if int(self.seat.rsplit("_", 1)[1]) >= count:
                raise ConfigError(
                    f"{name}.seat",
                    f"{self.seat!r} does not exist in a {count}-player game; allowed: 'random', "
                    + ", ".join(repr(p) for p in player_names(count)),
                )

    namespace = {
        "__module__": base.__module__,
        "__qualname__": name,
        "__doc__": f"{(base.__doc__ or '').strip()} Plus the single-agent knobs: the opponent, the "
        "agent's seat and its own retry budget.",
        "__annotations__": {
            "opponent": str,
            "seat": str,
            "agent_invalid_move_retries": int | None,
        },
        "opponent": knob(
            game.default_policy,
            choices=game.policies,
            doc="The scripted player in every other seat (an Agent passed as opponent= "
            "replaces it).",
        ),
        "seat": knob(
            "random",
            choices=seats,
            doc="The agent's player: 'random' draws it per task (the same for a task id every "
            "time), or a fixed 'player_<i>' (in turn-based games player_0 moves first).",
        ),
        "agent_invalid_move_retries": knob(
            None,
            low=0,
            high=100,
            doc="The agent's own retry budget per turn (null: unlimited, so an invalid action "
            "only costs a step, as in every llmgym environment); opponents follow "
            "invalid_move_retries.",
        ),
        "validate": validate,
    }
    return dataclasses.dataclass(frozen=True)(type(name, (base, VersusConfig), namespace))


class VersusEnv(TextEnv[VersusConfig]):
    """Base class of the single-agent view of a multi-agent game (see the module docstring).

    Subclasses set ``raw_env_class`` (the game's PettingZoo AEC class) and ``config_class``
    (from :func:`versus_config`). ``opponent=`` takes the name of a scripted player (the
    ``opponent`` knob) or an llmgym agent (or a list, one per opponent seat, cycled), which
    replaces the scripted player; each opponent seat plays a fork of it, prompted from its own
    observations.

    ``info`` adds ``seat`` (the agent's player), ``score`` and ``outcome`` (``"win"``,
    ``"draw"`` or ``"loss"``, once the game is over) and ``retries_left``.
    """

    raw_env_class: ClassVar[type[TextAECEnv]]
    max_observation_length = 16_384

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        raw = cls.__dict__.get("raw_env_class")
        if raw is not None:
            cls.env_name = raw.game_class.name
            cls.example = raw.game_class.example

    def __init__(
        self,
        config: VersusConfig | dict[str, Any] | None = None,
        *,
        opponent: str | Agent | Sequence[Agent] | None = None,
        render_mode: str | None = None,
        **overrides: Any,
    ) -> None:
        agents: Agent | Sequence[Agent] | None = None
        if isinstance(opponent, str):
            overrides["opponent"] = opponent
        else:
            agents = opponent
        super().__init__(config, render_mode=render_mode, **overrides)
        self._aec = self.raw_env_class(self.config)
        if agents is None or isinstance(agents, Sequence):
            self._opponent_agents = list(agents or [])
        else:
            self._opponent_agents = [agents]
        self.seat = ""
        self._seats: dict[str, Seat] = {}
        self._carried_reward = 0.0

    @property
    def game_class(self) -> type[Game[Any]]:
        return self.raw_env_class.game_class

    @property
    def game(self) -> Game[Any]:
        """The running game."""
        return self._aec.game

    # ------------------------------------------------------------------ contract
    def task_ids(self, split: str = "train", config: VersusConfig | None = None) -> Sequence[str]:
        return self.game_class.task_ids(split, config or self.config)

    def rules(self) -> str:
        config = self._task.config if self._task is not None else self.config
        if self._opponent_agents:
            opponents = "llmgym agents"
        else:
            opponents = f"the scripted '{config.opponent}' player"
        rules = self.game_class.rules(config)
        return f"{rules} The other seats are played by {opponents}."

    def instance_key(self) -> str:
        return self.game.instance_key()

    def _reset_task(self, task: Task[VersusConfig]) -> tuple[str, str]:
        config = task.config
        aec = self._aec
        seed = int(self.np_random.integers(2**62))  # the game's and each opponent's
        aec.reset(seed=seed, options={"task_id": task.task_id, "config": config})
        players = aec.possible_agents
        seat = config.seat
        self.seat = (
            TaskRng(task.env_name, task.task_id, "seat").choice(players)
            if (seat == "random")
            else seat
        )
        referee = aec.referee
        referee.set_budget(self.seat, config.agent_invalid_move_retries)
        self._seats = {}
        opponents = [p for p in players if p != self.seat]
        for index, player in enumerate(opponents):
            if self._opponent_agents:
                agent = self._opponent_agents[index % len(self._opponent_agents)]
                seat_player: Seat = AgentSeat(agent.fork())
            else:
                seat_player = ScriptedSeat(config.opponent)
            seat_player.reset(PlayerView(referee, player), seed=seed + 1 + index)
            self._seats[player] = seat_player
        self._carried_reward = self._play_opponents()
        return str(aec.observe(self.seat)), self.game.instruction(self.seat)

    def _step(self, action: str) -> Transition:
        aec = self._aec
        if aec.agent_selection != self.seat or self._finished():
            return self._final(str(aec.observe(self.seat)), 0.0)
        aec.step(action)
        ruling = aec.referee.last_ruling[self.seat]
        if not ruling.valid and not (ruling.forfeited or ruling.defaulted):
            info = {"seat": self.seat, "retries_left": aec.infos[self.seat]["retries_left"]}
            return Transition(str(aec.observe(self.seat)), invalid=True, info=info)
        reward = self._play_opponents() + self._carried_reward
        self._carried_reward = 0.0
        observation = str(aec.observe(self.seat))
        if self._finished():
            return self._final(observation, reward, invalid=not ruling.valid)
        return Transition(
            observation, reward=reward, invalid=not ruling.valid, info={"seat": self.seat}
        )

    def oracle_action(self) -> str:
        return self.game.oracle_action(self.seat, self._aec.referee.pending)

    def admissible_actions(self) -> list[str] | None:
        if self._task is None or self._finished():
            return None
        return self.game.legal_actions(self.seat)

    def sample_action(self, rng: np.random.Generator) -> str:
        if self._finished():
            return ""
        return self.game.sample_action(self.seat, rng)

    # ------------------------------------------------------------------ internals
    def _finished(self) -> bool:
        return self.game.finished or self.seat not in self.game.live

    def _final(self, observation: str, reward: float, *, invalid: bool = False) -> Transition:
        game = self.game
        info = {
            "seat": self.seat,
            "outcome": game.outcome(self.seat),
            "score": game.scores[self.seat],
        }
        return Transition(
            observation,
            reward=reward,
            terminated=True,
            success=game.success(self.seat),
            invalid=invalid,
            info=info,
        )

    def _play_opponents(self) -> float:
        """Let the opponents move until the agent is awaited or the game is over; return the
        agent's reward since its last move (PettingZoo's cumulative reward)."""
        aec = self._aec
        for _ in range(MAX_OPPONENT_ACTIONS):
            player = aec.agent_selection
            if player == self.seat:
                return float(aec.last(observe=False)[1])
            if aec.terminations[player] or aec.truncations[player]:
                aec.step(None)
                continue
            seat = self._seats[player]
            observation = aec.observe(player) if seat.reads_observation else ""
            aec.step(seat.act(observation, aec.infos[player]))
        raise RuntimeError(
            f"the opponents sent {MAX_OPPONENT_ACTIONS} actions without reaching the agent's "
            "turn; give them a finite invalid_move_retries"
        )
