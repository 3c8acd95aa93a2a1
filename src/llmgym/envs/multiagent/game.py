"""The rules side of a multi-agent text game, and the referee that enforces the move policy.

A :class:`Game` is one episode of a game's rules: it builds its instance from a task, parses
moves, applies them, and describes the state to each player. It knows nothing about PettingZoo
or Gymnasium. The :class:`Referee` sits between players and the game: it collects moves (all
of them before a simultaneous round resolves), answers invalid moves with feedback and a retry
budget, and applies the configured policy when the budget runs out. The PettingZoo
environments (:mod:`llmgym.envs.multiagent.api`) and the single-agent
:class:`~llmgym.envs.multiagent.versus.VersusEnv` are thin adapters over these two classes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from llmgym.core import EnvConfig, Task, knob
from llmgym.errors import IllegalMove

__all__ = [
    "Game",
    "GameConfig",
    "GameConfigT",
    "Referee",
    "Ruling",
    "player_names",
]

INVALID_MOVE_POLICIES = ("forfeit", "default_move")


def player_names(count: int) -> tuple[str, ...]:
    """PettingZoo's agent names: ``("player_0", "player_1", ...)``."""
    return tuple(f"player_{i}" for i in range(count))


@dataclass(frozen=True)
class GameConfig(EnvConfig):
    """Knobs every multi-agent game has: how invalid moves are handled."""

    invalid_move_retries: int | None = knob(
        2,
        low=0,
        high=100,
        doc="Invalid moves a player may retry within one turn before invalid_move_policy "
        "applies (null: unlimited retries).",
    )
    invalid_move_policy: str = knob(
        "forfeit",
        choices=INVALID_MOVE_POLICIES,
        doc="When a player runs out of retries: 'forfeit' removes it from the game (it loses); "
        "'default_move' plays the game's default move for it and the game goes on.",
    )


GameConfigT = TypeVar("GameConfigT", bound=GameConfig)
"""A game's config class, as in ``class ConnectFourGame(Game[ConnectFourConfig])``."""


class Game(ABC, Generic[GameConfigT]):
    """The rules of one episode of a multi-agent text game (subclass per game).

    A subclass names its config class as the type parameter and in ``config_class``, so
    :attr:`config` is typed.

    Players are named ``player_0`` .. ``player_{n-1}``. A turn-based game awaits one player at a
    time; a simultaneous game (``simultaneous = True``) awaits every live player and resolves
    the round once all moves are in. Rewards returned by :meth:`apply` and :meth:`eliminate`
    are per-player increments; :meth:`play` and :meth:`forfeit` apply them and keep
    :attr:`scores`, each player's running total.
    """

    name: ClassVar[str] = ""
    """Short stable name, e.g. ``"connect_four"``; it seeds task generation."""
    version: ClassVar[int] = 0
    """Bumped when the rules or the instances change; PettingZoo's name is ``{name}_v{version}``."""
    config_class: ClassVar[type[GameConfig]] = GameConfig
    simultaneous: ClassVar[bool] = False
    example: ClassVar[str] = ""
    """One worked turn (Observation/Thought/Action) for prompts."""
    policies: ClassVar[tuple[str, ...]] = ("random", "oracle")
    """Scripted players :meth:`policy_action` knows (``random`` and ``oracle`` always)."""
    default_policy: ClassVar[str] = "random"
    """The default opponent of the single-agent environment."""

    players: tuple[str, ...]
    live: list[str]
    finished: bool

    # ------------------------------------------------------------------ instance
    @classmethod
    def player_count(cls, config: GameConfigT) -> int:
        """How many players a game under ``config`` has."""
        return 2

    @classmethod
    @abstractmethod
    def task_ids(cls, split: str, config: GameConfigT) -> Sequence[str]:
        """The task ids of ``split``; train and eval never share an instance."""
        raise NotImplementedError

    def __init__(self, task: Task[GameConfigT]) -> None:
        self.task = task
        self.config = task.config
        self.players = player_names(self.player_count(self.config))
        self.live = list(self.players)
        self.finished = False
        self.scores: dict[str, float] = dict.fromkeys(self.players, 0.0)

    # ------------------------------------------------------------------ rules
    @abstractmethod
    def to_act(self) -> list[str]:
        """The players whose move the game awaits now (empty once finished)."""
        raise NotImplementedError

    @abstractmethod
    def parse(self, player: str, action: str) -> Any:
        """``player``'s move from any string; raises :class:`IllegalMove` (state unchanged)."""
        raise NotImplementedError

    @abstractmethod
    def apply(self, moves: Mapping[str, Any]) -> dict[str, float]:
        """Apply the moves of every awaited player; return reward increments."""
        raise NotImplementedError

    def play(self, moves: Mapping[str, Any]) -> dict[str, float]:
        """:meth:`apply` the moves and add the rewards to :attr:`scores`."""
        return self._score(self.apply(moves))

    def forfeit(self, player: str) -> dict[str, float]:
        """:meth:`eliminate` ``player`` and add the rewards to :attr:`scores`."""
        return self._score(self.eliminate(player))

    def _score(self, rewards: dict[str, float]) -> dict[str, float]:
        for player, reward in rewards.items():
            self.scores[player] += reward
        return rewards

    def eliminate(self, player: str) -> dict[str, float]:
        """``player`` forfeits: it leaves the game and its score becomes -1; a game left with
        fewer than two players finishes. Returns reward increments (games add to them, e.g. a
        win for the opponent)."""
        self.live.remove(player)
        if len(self.live) < 2:
            self.finished = True
        return {player: -1.0 - self.scores[player]}

    def default_move(self, player: str, rng: np.random.Generator) -> Any:
        """The move played for a player that ran out of retries under ``default_move``."""
        return self.parse(player, self.sample_action(player, rng))

    # ------------------------------------------------------------------ text
    @abstractmethod
    def observe(self, player: str) -> str:
        """What ``player`` sees now."""
        raise NotImplementedError

    @abstractmethod
    def instruction(self, player: str) -> str:
        """``player``'s goal in one or two sentences."""
        raise NotImplementedError

    @classmethod
    @abstractmethod
    def rules(cls, config: GameConfigT) -> str:
        """The game's rules and action grammar under ``config``, for prompts."""
        raise NotImplementedError

    @abstractmethod
    def render(self) -> str:
        """The whole state (hidden information included), for ``render()`` and logs."""
        raise NotImplementedError

    @abstractmethod
    def instance_key(self) -> str:
        """A string identifying the instance's content (for split-disjointness checks)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ players
    def legal_actions(self, player: str) -> list[str] | None:
        """The valid actions of ``player`` now, where they can be listed."""
        return None

    def sample_action(self, player: str, rng: np.random.Generator) -> str:
        """A random valid action of ``player``."""
        actions = self.legal_actions(player)
        if not actions:
            raise NotImplementedError(f"{type(self).__name__} must implement sample_action")
        return actions[int(rng.integers(len(actions)))]

    @abstractmethod
    def oracle_action(self, player: str, pending: Mapping[str, Any]) -> str:
        """The move of a planner that reads the true state: hidden information, the scripted
        opponents' rules and ``pending`` (moves already submitted in an open round)."""
        raise NotImplementedError

    def policy_action(
        self, player: str, policy: str, rng: np.random.Generator, pending: Mapping[str, Any]
    ) -> str:
        """The move of the scripted player ``policy`` (one of :attr:`policies`)."""
        if policy == "random":
            return self.sample_action(player, rng)
        if policy == "oracle":
            return self.oracle_action(player, pending)
        raise ValueError(f"unknown policy {policy!r}; known: {', '.join(self.policies)}")

    # ------------------------------------------------------------------ outcome
    def success(self, player: str) -> bool:
        """Whether ``player`` achieved the game's goal (the default: it won)."""
        return self.outcome(player) == "win"

    def outcome(self, player: str) -> str:
        """``"win"``, ``"draw"`` or ``"loss"`` for a finished game: a player wins with the
        strictly highest score, draws when it shares the highest score."""
        best = max(self.scores.values())
        if self.scores[player] < best:
            return "loss"
        tied = sum(1 for score in self.scores.values() if score == best)
        return "win" if tied == 1 else "draw"


@dataclass
class Ruling:
    """The referee's answer to one submitted action."""

    player: str
    valid: bool
    rewards: dict[str, float] = field(default_factory=dict)
    feedback: str = ""
    forfeited: bool = False
    defaulted: bool = False


class Referee:
    """Collects moves for a :class:`Game` and enforces the invalid-move policy.

    An invalid action leaves the game untouched: the player sees the reason and may retry. After
    ``budgets[player]`` failed retries within one turn (``None``: unlimited) the ``policy``
    applies: ``"forfeit"`` eliminates the player, ``"default_move"`` plays the game's default
    move for it. In a simultaneous round, valid moves are held sealed until every live player
    has moved; nobody's state changes before that.
    """

    def __init__(
        self,
        game: Game[Any],
        budgets: Mapping[str, int | None],
        policy: str,
        rng: np.random.Generator,
    ) -> None:
        self.game = game
        self.budgets = dict(budgets)
        self.policy = policy
        self.rng = rng
        self.pending: dict[str, Any] = {}
        self.retries_left: dict[str, int | None] = dict(self.budgets)
        self.invalid_moves: dict[str, int] = dict.fromkeys(game.players, 0)
        self.feedback: dict[str, str] = dict.fromkeys(game.players, "")
        self.forfeited: set[str] = set()
        self.last_invalid: dict[str, bool] = dict.fromkeys(game.players, False)
        self.last_ruling: dict[str, Ruling] = {}

    def set_budget(self, player: str, budget: int | None) -> None:
        """Give ``player`` its own retry budget (``None``: unlimited)."""
        self.budgets[player] = budget
        self.retries_left[player] = budget

    def awaiting(self) -> list[str]:
        """Players whose move is still needed to advance the game, in order."""
        if self.game.finished:
            return []
        return [p for p in self.game.to_act() if p not in self.pending]

    def submit(self, player: str, action: object) -> Ruling:
        """Judge ``player``'s action (any object; non-strings are invalid)."""
        if player not in self.awaiting():
            raise ValueError(f"{player} is not awaited now (awaiting: {self.awaiting()})")
        try:
            if action is None:
                raise IllegalMove("No action was given. Reply with a move.")
            if not isinstance(action, str):
                raise IllegalMove(
                    f"Actions must be text, got {type(action).__name__}. Reply with a move."
                )
            move = self.game.parse(player, action)
        except IllegalMove as error:
            ruling = self._reject(player, str(error))
        else:
            ruling = self._accept(player, move, note="")
        self.last_ruling[player] = ruling
        return ruling

    def _reject(self, player: str, reason: str) -> Ruling:
        self.invalid_moves[player] += 1
        self.last_invalid[player] = True
        left = self.retries_left[player]
        if left is None or left > 0:
            remaining = ""
            if left is not None:
                self.retries_left[player] = left - 1
                remaining = f" ({left - 1} {'retry' if left == 2 else 'retries'} left)"
            self.feedback[player] = f"Invalid move: {reason}{remaining}"
            return Ruling(player, valid=False, feedback=self.feedback[player])
        if self.policy == "default_move":
            move = self.game.default_move(player, self.rng)
            ruling = self._accept(
                player,
                move,
                note=f"Invalid move: {reason} You ran out of retries; the default move was "
                "played for you.",
            )
            ruling.valid, ruling.defaulted = False, True
            return ruling
        self.forfeited.add(player)
        self.pending.pop(player, None)
        rewards = self.game.forfeit(player)
        self.feedback[player] = f"Invalid move: {reason} You ran out of retries and forfeit."
        rewards = _merge(rewards, self._resolve_if_complete())
        return Ruling(
            player, valid=False, rewards=rewards, feedback=self.feedback[player], forfeited=True
        )

    def _accept(self, player: str, move: Any, note: str) -> Ruling:
        self.feedback[player] = note
        self.last_invalid[player] = bool(note)
        self.retries_left[player] = self.budgets[player]
        self.pending[player] = move
        return Ruling(player, valid=True, rewards=self._resolve_if_complete())

    def _resolve_if_complete(self) -> dict[str, float]:
        if self.game.finished:
            self.pending.clear()
            return {}
        if not self.pending or self.awaiting():
            return {}
        moves, self.pending = self.pending, {}
        return self.game.play(moves)

    def observation(self, player: str) -> str:
        """``player``'s view: the feedback on its last move (if any), then the game's text."""
        text = self.game.observe(player)
        note = self.feedback[player]
        return f"{note}\n\n{text}" if note else text

    def status(self, player: str) -> dict[str, Any]:
        """The standard per-player ``info`` entries."""
        info: dict[str, Any] = {
            "invalid_action": self.last_invalid[player],
            "invalid_moves": self.invalid_moves[player],
            "retries_left": self.retries_left[player],
            "to_act": player in self.awaiting(),
            "forfeited": player in self.forfeited,
        }
        if info["to_act"]:
            actions = self.game.legal_actions(player)
            if actions is not None:
                info["admissible_actions"] = actions
        return info


def _merge(first: Mapping[str, float], second: Mapping[str, float]) -> dict[str, float]:
    merged = dict(first)
    for player, reward in second.items():
        merged[player] = merged.get(player, 0.0) + reward
    return merged
