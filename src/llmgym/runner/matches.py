"""Matches: llmgym agents play a multi-agent game against each other.

    from llmgym.agents import make_agent
    from llmgym.runner.matches import run_match

    result = run_match("connect_four", [make_agent("oracle"), make_agent("random")], games=40)
    print(result.standings())   # wins, draws, losses, win rate with a 95% interval, mean score

Every game is played through the game's PettingZoo AEC environment; each seat is an
:class:`~llmgym.envs.multiagent.seats.AgentSeat`, so an LLM agent is prompted exactly as in a
single-agent environment. Seats rotate: game ``g`` plays task ``g // n`` with the agents shifted
by ``g % n`` seats, so with a multiple of ``n`` games (``n`` players) every agent plays every
task from every seat. ``llmgym match`` is the command-line front end.
"""

from __future__ import annotations

import importlib
import logging
import math
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from llmgym.agents import AGENT_NAMES, Agent, make_agent
from llmgym.core import TaskRng
from llmgym.envs import game_entries, get_entry
from llmgym.runner.evaluation import wilson_interval
from llmgym.runner.rollout import sample_task_ids
from llmgym.runner.workers import PerThread, SuccessBar, check_count, run_concurrently
from llmgym.wrappers.react import format_reply

if TYPE_CHECKING:  # importing it needs the [multiagent] extra
    from llmgym.envs.multiagent.api import TextAECEnv

__all__ = [
    "GameRecord",
    "MatchResult",
    "ScriptedAgent",
    "game_env_class",
    "make_player",
    "play_game",
    "run_match",
]

logger = logging.getLogger(__name__)

MAX_MOVES = 2_000
"""Submitted actions after which a game is abandoned (only reachable with unlimited retries)."""


def game_env_class(game: str | type[TextAECEnv]) -> type[TextAECEnv]:
    """The PettingZoo AEC class (``raw_env``) of ``game``: a game name from the environment
    table (``"connect_four"``, also with its version, ``"connect_four_v0"``), the id of its
    single-agent environment (``"llmgym/ConnectFour-v0"``), or a ``raw_env`` class itself."""
    if isinstance(game, type):
        return game
    versioned = re.fullmatch(r"(.+)_v[0-9]+", game)
    games = game_entries()
    entry = games.get(versioned.group(1) if versioned else game)
    if entry is None:
        try:
            entry = get_entry(game)
        except KeyError:
            raise ValueError(
                f"unknown game {game!r}; choose from: {', '.join(games)} "
                "(or the id of a multi-agent game's single-agent environment)"
            ) from None
    if entry.game is None:
        raise ValueError(f"{entry.id} is a single-agent environment, not a multi-agent game")
    module = entry.entry_point.partition(":")[0]
    return importlib.import_module(module).raw_env


class ScriptedAgent(Agent):
    """One of a game's scripted players (``greedy``, ``conceder``, ``shader``, ...) as an
    llmgym agent. It plays multi-agent games only: ``reset`` needs the seat's
    :class:`~llmgym.envs.multiagent.seats.PlayerView`."""

    def __init__(self, policy: str, seed: int | None = None, *, react: bool = True) -> None:
        super().__init__(react=react)
        self.policy = policy
        self.name = policy
        self.seed = seed
        self._view: Any = None
        self._rng = np.random.default_rng(seed)

    def reset(self, env: Any, *, seed: int | None = None) -> None:
        super().reset(env, seed=seed)
        if not hasattr(env, "policy_action"):
            raise TypeError(f"the scripted {self.policy!r} player only plays multi-agent games")
        self._view = env
        self._rng = np.random.default_rng([self.seed or 0, seed or 0])

    def act(self, observation: str, info: dict[str, Any]) -> str:
        action = self._view.policy_action(self.policy, self._rng)
        return format_reply(action, f"The {self.policy} player plays {action}.", react=self.react)


def make_player(
    spec: str,
    game: str | type[TextAECEnv],
    *,
    seed: int | None = None,
    react: bool = True,
    **openai_options: Any,
) -> Agent:
    """An agent for a seat of ``game``: a scripted player of the game (``greedy``, ...) or
    anything :func:`~llmgym.agents.make_agent` builds (``oracle``, ``random``, ``human``,
    ``openai:MODEL``)."""
    policies = game_env_class(game).game_class.policies
    if spec in policies and spec not in ("oracle", "random"):
        return ScriptedAgent(spec, seed, react=react)
    try:
        return make_agent(spec, seed=seed, react=react, **openai_options)
    except ValueError:
        scripted = [p for p in policies if p not in ("oracle", "random")]
        raise ValueError(
            f"unknown player {spec!r}; choose from: {', '.join([*AGENT_NAMES, *scripted])}"
        ) from None


@dataclass
class GameRecord:
    """One finished game."""

    game: int
    task_id: str
    seed: int
    seats: dict[str, str]
    """player -> agent label"""
    scores: dict[str, float] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)
    """player -> ``"win"``, ``"draw"`` or ``"loss"``"""
    success: dict[str, bool] = field(default_factory=dict)
    invalid_moves: dict[str, int] = field(default_factory=dict)
    format_errors: dict[str, int] = field(default_factory=dict)
    forfeited: list[str] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    moves: int = 0
    error: str | None = None
    messages: dict[str, list[dict[str, str]]] | None = None
    """player -> its conversation, when the match keeps them"""

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        if record["messages"] is None:
            del record["messages"]
        return record


@dataclass
class MatchResult:
    """The games of a match and the standings of its agents."""

    game: str
    agents: list[str]
    split: str
    games: list[GameRecord] = field(default_factory=list)
    interrupted: bool = False
    """Ctrl-C ended the match before all its games were played"""

    def standings(self) -> list[dict[str, Any]]:
        """One row per agent: ``games``, ``wins``, ``draws``, ``losses``, ``win_rate`` with its
        95% Wilson interval ``win_ci95``, ``mean_score``, ``success_rate`` (the game's own goal,
        e.g. a good deal in the negotiation), ``invalid_moves``, ``forfeits``,
        ``format_errors``, ``tokens`` and ``errors`` (games that broke)."""
        rows = []
        for label in self.agents:
            played = [
                (record, player)
                for record in self.games
                for player, name in record.seats.items()
                if name == label and record.error is None
            ]
            wins = sum(record.outcomes[p] == "win" for record, p in played)
            draws = sum(record.outcomes[p] == "draw" for record, p in played)
            low, high = wilson_interval(wins, len(played))
            scores = [record.scores[p] for record, p in played]
            rows.append(
                {
                    "agent": label,
                    "games": len(played),
                    "wins": wins,
                    "draws": draws,
                    "losses": len(played) - wins - draws,
                    "win_rate": wins / len(played) if played else 0.0,
                    "win_ci95": [low, high],
                    "mean_score": statistics.fmean(scores) if scores else 0.0,
                    "success_rate": (
                        statistics.fmean(record.success[p] for record, p in played)
                        if played
                        else 0.0
                    ),
                    "invalid_moves": sum(record.invalid_moves[p] for record, p in played),
                    "forfeits": sum(p in record.forfeited for record, p in played),
                    "format_errors": sum(record.format_errors[p] for record, p in played),
                    "tokens": sum(record.tokens[p] for record, p in played),
                    "errors": sum(
                        1
                        for record in self.games
                        if record.error and label in record.seats.values()
                    ),
                }
            )
        return rows

    def to_dict(self) -> dict[str, Any]:
        """The standings plus one record per game."""
        return {
            "game": self.game,
            "agents": self.agents,
            "split": self.split,
            "games": len(self.games),
            "interrupted": self.interrupted,
            "standings": self.standings(),
            "per_game": [record.to_dict() for record in self.games],
        }


def play_game(
    env: Any,
    players: Mapping[str, Agent],
    labels: Mapping[str, str],
    *,
    task_id: str,
    seed: int,
    index: int = 0,
    keep_messages: bool = False,
) -> GameRecord:
    """Play one game of ``env`` (a ``raw_env``) with ``players[player]`` in each seat. An
    exception inside the game is recorded in ``GameRecord.error`` instead of propagating."""
    from llmgym.envs.multiagent.seats import AgentSeat, PlayerView

    record = GameRecord(game=index, task_id=task_id, seed=seed, seats=dict(labels))
    seats = {player: AgentSeat(agent) for player, agent in players.items()}
    try:
        env.reset(seed=seed, options={"task_id": task_id})
        for offset, (player, seat) in enumerate(seats.items()):
            seat.reset(PlayerView(env.referee, player), seed=seed * 1_000 + offset)
        for player in env.agent_iter(MAX_MOVES):
            observation, _, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(seats[player].act(observation, info))
            record.moves += 1
        game = env.game
        if not game.finished:
            raise RuntimeError(f"the game did not finish within {MAX_MOVES} moves")
        record.scores = dict(game.scores)
        record.outcomes = {p: game.outcome(p) for p in game.players}
        record.success = {p: game.success(p) for p in game.players}
        record.forfeited = sorted(env.referee.forfeited)
        record.invalid_moves = dict(env.referee.invalid_moves)
    except Exception as error:  # one broken game must not lose a long match
        logger.exception("game %s (%s, seed %s) failed", index, task_id, seed)
        record.error = f"{type(error).__name__}: {error}"
    record.format_errors = {p: seat.format_errors for p, seat in seats.items()}
    record.tokens = {p: players[p].usage.total_tokens for p in seats}
    if keep_messages:
        record.messages = {p: seat.messages for p, seat in seats.items()}
    return record


def _labels(agents: Sequence[Agent]) -> list[str]:
    names = [agent.name for agent in agents]
    if len(set(names)) == len(names):
        return names
    return [f"{name}#{i + 1}" for i, name in enumerate(names)]


def run_match(
    game: str | type[TextAECEnv],
    agents: Sequence[Agent],
    *,
    games: int = 20,
    split: str = "eval",
    seed: int = 0,
    config: Mapping[str, Any] | None = None,
    concurrency: int = 1,
    progress: bool = True,
    keep_messages: bool = False,
    on_game: Callable[[GameRecord], None] | None = None,
    stop_on_interrupt: bool = False,
) -> MatchResult:
    """Play ``games`` games of ``game`` between ``agents`` (one per player, in seat order for
    the first game, then rotated), ``concurrency`` games at a time.

    Args:
        game: A game name from the environment table, a single-agent id such as
            ``"llmgym/ConnectFour-v0"``, or a ``raw_env`` class.
        agents: One agent per player; each game plays forks of them.
        games: How many games.
        split: The split tasks are drawn from (a seeded sample; each task is played ``n``
            times, once per seat rotation).
        seed: Seeds the task sample; game ``g`` is reset with ``seed + g``.
        config: Config overrides of the game (e.g. ``{"players": 4}``).
        concurrency: Games in flight at once (worker threads).
        progress: Show a progress bar.
        keep_messages: Keep every seat's conversation in the records.
        on_game: Called in the main thread with each finished game.
        stop_on_interrupt: Ctrl-C ends the match early instead of raising: the result holds
            the games finished so far and ``interrupted`` is true.
    """
    check_count("games", games)
    check_count("concurrency", concurrency)
    env_class = game_env_class(game)
    probe = env_class(config)
    players = probe.possible_agents
    if len(agents) != len(players):
        raise ValueError(
            f"{probe.metadata['name']} has {len(players)} players under this config; "
            f"give {len(players)} agents, one per seat (got {len(agents)})"
        )
    labels = _labels(agents)
    needed = math.ceil(games / len(players))
    tasks = sample_task_ids(probe.task_ids(split), needed, TaskRng("match", split, seed))
    records: list[GameRecord | None] = [None] * games
    envs = PerThread(lambda: env_class(config), first=probe)

    def play(index: int) -> GameRecord:
        shift = index % len(players)
        order = [(i + shift) % len(players) for i in range(len(players))]
        seated = {player: agents[order[i]].fork() for i, player in enumerate(players)}
        seat_labels = {player: labels[order[i]] for i, player in enumerate(players)}
        return play_game(
            envs.get(),
            seated,
            seat_labels,
            task_id=tasks[index // len(players)],
            seed=seed + index,
            index=index,
            keep_messages=keep_messages,
        )

    desc = f"{probe.metadata['name']} [{' vs '.join(labels)}]"
    bar = SuccessBar(games, desc, unit="game", enabled=progress)

    def finish(index: int, record: GameRecord) -> None:
        records[index] = record
        bar.add()
        if on_game is not None:
            on_game(record)

    interrupted = False
    try:
        run_concurrently(games, play, finish, concurrency=concurrency, name="llmgym-match")
    except KeyboardInterrupt:
        if not stop_on_interrupt:
            raise
        interrupted = True
    finally:
        bar.close()
    return MatchResult(
        game=probe.metadata["name"],
        agents=labels,
        split=split,
        games=[record for record in records if record is not None],
        interrupted=interrupted,
    )
