"""PettingZoo environments over a :class:`~llmgym.envs.multiagent.game.Game`: AEC and Parallel.

Each game module defines ``raw_env`` (a :class:`TextAECEnv` subclass), ``env()`` (``raw_env``
inside PettingZoo's ``OrderEnforcingWrapper``) and ``parallel_env`` (a :class:`TextParallelEnv`
subclass), following PettingZoo's conventions; :func:`pettingzoo_api` makes the three. Both
environments share the task, seed and invalid-move semantics of the single-agent environments:

* ``reset(seed=None, options=None)`` understands ``task_id``, ``split`` and ``config`` like
  :meth:`llmgym.TextEnv.reset`; the seed picks the task when no ``task_id`` is given and seeds
  the environment's own randomness (default moves).
* Observation and action spaces are :func:`llmgym.core.text_space` per agent; actions may be
  any string.
* Invalid moves get feedback in the player's next observation and ``info["invalid_action"]``;
  the referee's retry budget and policy (``invalid_move_retries``, ``invalid_move_policy``)
  decide what happens next.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium.utils import seeding

from llmgym.core import SPLITS, Task, TaskRng, optional_import, text_space
from llmgym.core.tasks import check_task_id
from llmgym.core.text import clip_text, sanitize_text
from llmgym.envs.multiagent.game import Game, GameConfig, Referee, player_names

if TYPE_CHECKING:
    from pettingzoo import AECEnv, ParallelEnv
else:
    _pettingzoo = optional_import("pettingzoo", extra="multiagent")
    AECEnv, ParallelEnv = _pettingzoo.AECEnv, _pettingzoo.ParallelEnv

__all__ = ["TextAECEnv", "TextObservation", "TextParallelEnv", "make_aec_env", "pettingzoo_api"]

RESET_OPTIONS = ("task_id", "split", "config")
MAX_OBSERVATION_LENGTH = 16_384
MAX_ACTION_LENGTH = 4_096


class TextObservation(str):
    """An observation: a ``str`` that also carries the ``dtype`` of its space.

    PettingZoo's ``api_test`` compares each observation's ``dtype`` with its space's (numpy's
    unicode dtype for :class:`gymnasium.spaces.Text`); a plain ``str`` has none. In every other
    respect this is the string itself (``str(observation)`` gives a plain one).
    """

    __slots__ = ()
    dtype = np.dtype(str)


class _GameHost:
    """What the AEC and Parallel environments share: config, spaces, task choice, referee."""

    game_class: ClassVar[type[Game[Any]]]
    metadata: ClassVar[dict[str, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        game = cls.__dict__.get("game_class")
        if game is not None:
            cls.metadata = {
                "name": f"{game.name}_v{game.version}",
                "render_modes": ["ansi", "human"],
                "is_parallelizable": game.simultaneous,
            }

    def _setup(
        self,
        config: GameConfig | Mapping[str, Any] | None,
        render_mode: str | None,
        overrides: Mapping[str, Any],
    ) -> None:
        base = self.game_class.config_class.coerce(config)
        self.config = base.merged(dict(overrides)) if overrides else base
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not supported; allowed: "
                f"{', '.join(self.metadata['render_modes'])}"
            )
        self.render_mode = render_mode
        self.possible_agents = list(player_names(self.game_class.player_count(self.config)))
        self._observation_spaces = {
            agent: text_space(MAX_OBSERVATION_LENGTH) for agent in self.possible_agents
        }
        self._action_spaces = {
            agent: text_space(MAX_ACTION_LENGTH) for agent in self.possible_agents
        }
        self._task_sampler: TaskRng | None = None
        self._np_random: np.random.Generator | None = None
        self._referee: Referee | None = None

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> Any:
        """The agent's observation space (the same object on every call)."""
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        """The agent's action space (the same object on every call)."""
        return self._action_spaces[agent]

    # ------------------------------------------------------------------ tasks
    def task_ids(self, split: str = "train", config: GameConfig | None = None) -> Sequence[str]:
        """The task ids of ``split`` under ``config`` (default: the environment's config)."""
        return self.game_class.task_ids(split, config or self.config)

    @property
    def referee(self) -> Referee:
        """The current episode's referee (after ``reset``)."""
        if self._referee is None:
            raise RuntimeError("call reset() first")
        return self._referee

    @property
    def game(self) -> Game[Any]:
        """The current episode's game (after ``reset``)."""
        return self.referee.game

    @property
    def np_random(self) -> np.random.Generator:
        """The environment's own random generator (default moves), seeded by ``reset``."""
        if self._np_random is None:
            self._np_random, _ = seeding.np_random()
        return self._np_random

    def _start(self, seed: int | None, options: Mapping[str, Any] | None) -> Game[Any]:
        options = dict(options or {})
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            warnings.warn(
                f"reset options: ignoring unknown key(s) {', '.join(map(repr, unknown))}; "
                f"known keys: {', '.join(RESET_OPTIONS)}",
                stacklevel=3,
            )
        config = self.config.merged(options.get("config"))
        if self.game_class.player_count(config) != len(self.possible_agents):
            raise ValueError(
                "reset options: config changes the number of players; make a new environment "
                "with that config instead"
            )
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
            self._task_sampler = TaskRng("reset-seed", int(seed))
        elif self._task_sampler is None:
            self._task_sampler = TaskRng("reset-seed", int(self.np_random.integers(2**63)))
        task_id = options.get("task_id")
        split = options.get("split")
        if split is not None and split not in SPLITS:
            raise ValueError(
                f"reset options: split={split!r} is not allowed; allowed: {', '.join(SPLITS)}"
            )
        if task_id is None:
            split = split or "train"
            ids = self.game_class.task_ids(split, config)
            if len(ids) == 0:
                raise ValueError(f"split {split!r} has no tasks under config {config}")
            task_id = ids[self._task_sampler.randbelow(len(ids))]
        else:
            split = check_task_id(
                task_id,
                split,
                lambda of: self.game_class.task_ids(of, config),
                self.metadata["name"],
            )
        game = self.game_class(Task(self.game_class.name, task_id, split, config))
        budgets = dict.fromkeys(game.players, config.invalid_move_retries)
        self._referee = Referee(game, budgets, config.invalid_move_policy, self.np_random)
        return game

    def _observation(self, agent: str) -> TextObservation:
        text = clip_text(sanitize_text(self.referee.observation(agent)), MAX_OBSERVATION_LENGTH)
        return TextObservation(text)

    def _reset_info(self, agent: str) -> dict[str, Any]:
        game = self.game
        return {
            "task_id": game.task.task_id,
            "split": game.task.split,
            "instruction": game.instruction(agent),
            **self.referee.status(agent),
        }

    def _info(self, agent: str, done: bool) -> dict[str, Any]:
        info = self.referee.status(agent)
        if done:
            info["outcome"] = self.game.outcome(agent)
            info["score"] = self.game.scores[agent]
            info["success"] = self.game.success(agent)
        return info

    def render(self) -> str | None:
        """``"ansi"``: the whole state (hidden information included); ``"human"``: print it."""
        if self.render_mode is None or self._referee is None:
            return None
        text = self.game.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""


class TextAECEnv(_GameHost, AECEnv):
    """A PettingZoo AEC environment for a text game (``raw_env`` of each game module).

    ``agent_selection`` is the next player the game awaits; after an invalid move with retries
    left it stays on the same player. In a simultaneous game the players of a round are selected
    one after the other and their moves are held sealed until the last one is in.
    """

    def __init__(
        self,
        config: GameConfig | Mapping[str, Any] | None = None,
        *,
        render_mode: str | None = None,
        **overrides: Any,
    ) -> None:
        super().__init__()
        self._setup(config, render_mode, overrides)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode (options: ``task_id``, ``split``, ``config``)."""
        self._start(seed, options)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: self._reset_info(agent) for agent in self.agents}
        self.agent_selection = self.referee.awaiting()[0]
        self._skip_agent_selection = None

    def observe(self, agent: str) -> TextObservation:
        """``agent``'s current observation."""
        return self._observation(agent)

    def step(self, action: Any) -> None:
        """Judge the selected agent's action and move on to the next awaited agent."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        referee = self.referee
        self._cumulative_rewards[agent] = 0.0
        ruling = referee.submit(agent, action)
        game = referee.game
        self.rewards = {a: float(ruling.rewards.get(a, 0.0)) for a in self.agents}
        for name in self.agents:
            done = game.finished or name not in game.live
            self.terminations[name] = done
            self.infos[name] = self._info(name, done)
        self._accumulate_rewards()
        awaiting = referee.awaiting()
        if awaiting:
            self.agent_selection = awaiting[0]
        self._deads_step_first()
        if self.render_mode == "human":
            self.render()


class TextParallelEnv(_GameHost, ParallelEnv):
    """A PettingZoo Parallel environment for a text game (``parallel_env`` of each module).

    Every live agent may send an action each step; the game uses the actions of the players it
    awaits and ignores the others (in a turn-based game only the player to move counts; its
    ``info["to_act"]`` is ``True``). A simultaneous round resolves once every live player has
    made a valid move; a player whose move was invalid sends another in the next step while
    the valid moves of the others stay sealed.
    """

    def __init__(
        self,
        config: GameConfig | Mapping[str, Any] | None = None,
        *,
        render_mode: str | None = None,
        **overrides: Any,
    ) -> None:
        self._setup(config, render_mode, overrides)
        self.agents: list[str] = []

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, TextObservation], dict[str, dict[str, Any]]]:
        """Start an episode (options: ``task_id``, ``split``, ``config``)."""
        self._start(seed, options)
        self.agents = list(self.possible_agents)
        observations = {agent: self._observation(agent) for agent in self.agents}
        return observations, {agent: self._reset_info(agent) for agent in self.agents}

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[
        dict[str, TextObservation],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Apply the awaited players' actions; return per-agent dicts for the agents that were
        live before the step (agents that finish are dropped from ``agents`` afterwards)."""
        referee = self._referee
        if referee is None:
            raise RuntimeError("call reset() before step()")
        live = list(self.agents)
        rewards = dict.fromkeys(live, 0.0)
        for player in referee.awaiting():
            if player not in referee.awaiting():
                continue
            ruling = referee.submit(player, actions.get(player))
            for name, reward in ruling.rewards.items():
                if name in rewards:
                    rewards[name] += float(reward)
        game = referee.game
        terminations = {agent: game.finished or agent not in game.live for agent in live}
        truncations = dict.fromkeys(live, False)
        observations = {agent: self._observation(agent) for agent in live}
        infos = {agent: self._info(agent, terminations[agent]) for agent in live}
        self.agents = [agent for agent in live if not terminations[agent]]
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos


def make_aec_env(raw_env_class: type[TextAECEnv], **kwargs: Any) -> Any:
    """``raw_env_class(**kwargs)`` inside PettingZoo's ``OrderEnforcingWrapper`` (what each game
    module's ``env()`` returns)."""
    from pettingzoo.utils import wrappers

    return wrappers.OrderEnforcingWrapper(raw_env_class(**kwargs))


def pettingzoo_api(
    game: type[Game[Any]], title: str
) -> tuple[type[TextAECEnv], type[TextParallelEnv], Callable[..., Any]]:
    """A game module's PettingZoo entry points, ``raw_env, parallel_env, env = ...``: the AEC
    class, the Parallel class and ``env()`` (the AEC environment in PettingZoo's
    ``OrderEnforcingWrapper``), named and documented for ``game`` (``title``: "Connect Four")."""
    if game.simultaneous:
        aec_turns = "the players of a round are selected in turn and their moves stay sealed "
        aec_turns += "until the last one is in"
        parallel_turns = "every player moves each step"
    else:
        aec_turns = "the player to move is selected"
        parallel_turns = "only the player to move acts"

    class raw_env(TextAECEnv):
        __doc__ = f"{title} as a PettingZoo AEC environment: {aec_turns}."
        __module__ = game.__module__
        __qualname__ = "raw_env"
        game_class = game

    class parallel_env(TextParallelEnv):
        __doc__ = f"{title} as a PettingZoo Parallel environment: {parallel_turns}."
        __module__ = game.__module__
        __qualname__ = "parallel_env"
        game_class = game

    def env(**kwargs: Any) -> Any:
        return make_aec_env(raw_env, **kwargs)

    env.__module__, env.__qualname__ = game.__module__, "env"
    env.__doc__ = f"{title} as a PettingZoo AEC environment in the ``OrderEnforcingWrapper``."
    return raw_env, parallel_env, env
