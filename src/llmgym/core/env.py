"""The environment contract: :class:`TextEnv`, the base class of every llmgym environment."""

from __future__ import annotations

import inspect
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, SupportsFloat, TypeGuard, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.core import RenderFrame
from gymnasium.error import ResetNeeded
from typing_extensions import TypeVar, get_protocol_members

from llmgym.core.config import ConfigT, EnvConfig
from llmgym.core.spaces import TextSpace, text_space
from llmgym.core.tasks import SPLITS, Task, TaskRng, check_task_id
from llmgym.core.text import clip_text, quote_action, sanitize_text
from llmgym.core.types import ActT, ObsT, ResetInfo, StepInfo

__all__ = [
    "RESET_OPTIONS",
    "ActT",
    "ObsT",
    "ResetInfo",
    "StepInfo",
    "TextEnv",
    "TextEnvLike",
    "TextSpace",
    "Transition",
    "text_space",
    "unwrapped_text_env",
]

RESET_OPTIONS = ("task_id", "split", "config")
"""The keys ``TextEnv.reset(options=...)`` understands."""

_TASK_ID_SETS_KEPT = 8
"""Task-id sets an environment keeps for ``reset(options={"task_id": ...})`` checks, one per
(split, config); the oldest is dropped first."""

StateT = TypeVar("StateT")


@dataclass(slots=True)
class Transition(Generic[ObsT]):
    """What an environment's :meth:`TextEnv._step` returns; :meth:`TextEnv.step` completes it.

    Attributes:
        observation: Text shown to the agent (clipped and sanitised by the base class), or a
            pixel variant's frame.
        reward: The step's reward.
        terminated: Whether the episode ended by the rules (solved, failed, died).
        truncated: Whether the environment cut the episode short by its own length rule.
        success: The task's success after this step; ``None`` keeps the previous value.
        invalid: Whether the action was not understood or not applicable.
        info: Extra ``info`` entries.
    """

    observation: ObsT
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    success: bool | None = None
    invalid: bool = False
    info: dict[str, Any] | None = field(default=None)


class TextEnv(gym.Env[ObsT, ActT], Generic[ConfigT, ObsT, ActT]):
    """Base class of llmgym environments: text in, text out, deterministic tasks, an oracle.

    A subclass names its config class as the type parameter and in ``config_class``
    (``class MazeEnv(TextEnv[MazeConfig])``, ``config_class = MazeConfig``), so ``self.config``
    and ``self.task.config`` are typed, and implements the abstract hooks:

    * ``config_class`` — an :class:`~llmgym.core.config.EnvConfig` subclass of difficulty knobs.
    * :meth:`task_ids` — the task ids of a split (``"train"`` or ``"eval"``), deterministic.
    * :meth:`_reset_task` — build the instance for a :class:`~llmgym.core.tasks.Task`; return
      ``(first_observation, instruction)``.
    * :meth:`_step` — apply one action (any ``str``) and return a :class:`Transition`.
    * :meth:`oracle_action` — the next action of a planner that reads the true state.
    * optionally :meth:`admissible_actions`, :meth:`sample_action`, :meth:`instance_key`,
      :meth:`rules` (or ``rules_text``, where the rules do not depend on the config) and
      ``example`` (used by prompting wrappers), ``skills`` and :meth:`skills_achieved` (used by
      LLM-driven configuration).

    The base class handles seeding, task choice, config overrides, the standard ``info`` keys
    (:class:`~llmgym.core.ResetInfo`, :class:`~llmgym.core.StepInfo`), keeping observations
    inside :attr:`observation_space`, and rejecting non-text actions without raising.

    Per-episode state is declared in the class body and set by :meth:`_reset_task`: with a
    default where the value is immutable (``_layout: Layout | None = None``, ``_moves = 0``),
    as a bare annotation where it is a container that every reset creates anew
    (``_board: list[Guess]``). State that is ``None`` until the first reset can be read through
    :meth:`after_reset`. A subclass overrides ``__init__`` only for work each instance does once
    (loading data, caches kept across episodes), calling ``super().__init__(config, **overrides)``
    first.

    Observations and actions are text unless the second and third type parameters say
    otherwise: a pixel variant of a game (:class:`~llmgym.core.pixels.PixelEnv`) is a
    ``TextEnv[CrafterConfig, np.ndarray, PixelAction]`` that sets its own spaces and
    :meth:`render` and turns its actions into the commands :meth:`_step` reads with
    :meth:`_command`.

    Environments pickle and ``copy.deepcopy``, also mid-episode: a copy continues exactly as
    the original would (for tree search). An environment whose episode runs in an external
    engine (an interpreter, a virtual machine) names it in :meth:`_engine_holding_state`, and
    copying it while the engine runs raises ``TypeError`` saying so.
    """

    # gymnasium's Env declares it an instance attribute
    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "render_fps": 4}  # noqa: RUF012

    config_class: ClassVar[type[EnvConfig]] = EnvConfig
    config: ConfigT
    env_name: ClassVar[str] = ""
    """Short, stable name used to seed task generation (changing it changes every instance)."""
    max_observation_length: ClassVar[int] = 16_384
    max_action_length: ClassVar[int] = 4_096
    default_split: ClassVar[str] = "train"
    example: ClassVar[str] = ""
    """A short worked example of play (observation, thought, action), for prompts."""
    rules_text: ClassVar[str] = ""
    """What :meth:`rules` returns where the rules do not depend on the config."""
    skills: ClassVar[tuple[str, ...]] = ()
    """Named abilities the environment exercises (Crafter's achievements, Heist's keys). LLM-driven
    configuration (EnvGen) reads per-skill success to target weak skills; ``()`` means the only
    skill is solving the task."""
    design_notes: ClassVar[str] = ""
    """Rules an environment designer must know to write useful configs (e.g. "ores only appear
    in mountains"); shown to LLM designers."""
    skill_practice: ClassVar[dict[str, dict[str, Any]]] = {}
    """Config overrides that make each skill easy to practise; the offline designer uses them."""

    def __init__(
        self,
        config: EnvConfig | Mapping[str, Any] | None = None,
        *,
        render_mode: str | None = None,
        **overrides: Any,
    ) -> None:
        base: Any = self.config_class.coerce(config)
        self.config = base.merged(overrides) if overrides else base
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not supported; "
                f"allowed: {', '.join(self.metadata['render_modes'])}"
            )
        self.render_mode = render_mode
        # text spaces, the default; environments with other observation or action types
        # (see the class docstring) replace them
        self.observation_space = cast("spaces.Space[ObsT]", text_space(self.max_observation_length))
        self.action_space = cast("spaces.Space[ActT]", text_space(self.max_action_length))
        self._task: Task[ConfigT] | None = None
        self._task_sampler: TaskRng | None = None
        self._task_id_sets: dict[tuple[str, ConfigT], frozenset[str]] = {}
        self._episode_over = False
        self._success = False
        self._instruction = ""
        self._last_observation: ObsT | str = ""  # the latest observation ("" before a reset)
        self._first_observation: ObsT | str = ""

    # ---------------------------------------------------------------- subclass hooks
    @abstractmethod
    def task_ids(self, split: str = "train", config: ConfigT | None = None) -> Sequence[str]:
        """All task ids of ``split`` under ``config`` (default: the env's config), in a fixed
        order. Ids start with ``"<split>/"``; train and eval never share an instance."""
        raise NotImplementedError

    @abstractmethod
    def _reset_task(self, task: Task[ConfigT]) -> tuple[ObsT, str]:
        """Build ``task``'s instance; return ``(first_observation, instruction)``."""
        raise NotImplementedError

    @abstractmethod
    def _step(self, action: str) -> Transition[ObsT]:
        """Apply ``action`` (any string, possibly hostile) and describe the outcome."""
        raise NotImplementedError

    @abstractmethod
    def oracle_action(self) -> ActT:
        """The next action of a planner that reads the true state and solves the task."""
        raise NotImplementedError

    def admissible_actions(self) -> list[ActT] | None:
        """The actions that are valid now, where the environment can list them."""
        return None

    def sample_action(self, rng: np.random.Generator) -> ActT:
        """A random *valid* action (admissible where listed), for random agents and benchmarks."""
        actions = self.admissible_actions()
        if actions:
            return actions[int(rng.integers(len(actions)))]
        return self.action_space.sample()

    def instance_key(self) -> str:
        """A string that identifies the current instance's content (for split-disjointness
        checks); environments whose first observation hides the instance override it."""
        return f"{self._instruction}\n{self._first_observation}"

    def skills_achieved(self) -> frozenset[str]:
        """The :attr:`skills` shown so far in this episode."""
        return frozenset()

    def pixel_frame(self) -> np.ndarray | None:
        """A picture of the current state (``uint8`` RGB, height x width x 3) for recordings
        (``RecordTrajectory(frames=True)``) and the viewer, or ``None`` where the environment
        draws none. Drawing never changes the play."""
        return None

    def _engine_holding_state(self) -> str | None:
        """The external engine that holds the running episode's state (e.g. ``"ScienceWorld's
        Java virtual machine"``), or ``None`` where the state is Python objects. While it runs,
        the environment cannot be pickled or copied."""
        return None

    def rules(self) -> str:
        """The task's description and action grammar under the current config, for prompts:
        ``rules_text``, else the first paragraph of the class docstring."""
        return self.rules_text or (type(self).__doc__ or "").strip().split("\n\n")[0]

    # ---------------------------------------------------------------- helpers for subclasses
    @staticmethod
    def invalid(message: str, **info: Any) -> Transition[str]:
        """A transition for an action that was not understood: state unchanged, feedback shown."""
        return Transition(observation=message, invalid=True, info=info or None)

    @staticmethod
    def quote(action: object) -> str:
        """Render a (possibly hostile) action safely for a feedback message."""
        return quote_action(action)

    @staticmethod
    def after_reset(state: StateT | None) -> StateT:
        """``state``, a piece of per-episode state that is ``None`` until the first reset;
        raises :class:`~gymnasium.error.ResetNeeded` while it is ``None``."""
        if state is None:
            raise ResetNeeded("Call reset() before using the environment.")
        return state

    @property
    def task(self) -> Task[ConfigT]:
        """The current task (after :meth:`reset`)."""
        return self.after_reset(self._task)

    @property
    def success(self) -> bool:
        """Whether the current episode's task is solved."""
        return self._success

    @property
    def instruction(self) -> str:
        """The current task's instruction."""
        return self._instruction

    @classmethod
    def config_schema(cls) -> dict[str, Any]:
        """JSON Schema of this environment's config (what LLM-driven configuration reads)."""
        return cls.config_class.json_schema()

    def __getstate__(self) -> dict[str, Any]:
        """What ``pickle`` and ``copy.deepcopy`` save: the instance's attributes.

        Raises:
            TypeError: An external engine holds the episode (:meth:`_engine_holding_state`).
        """
        engine = self._engine_holding_state()
        if engine is not None:
            raise TypeError(
                f"{type(self).__name__} cannot be copied after reset: its state lives in "
                f"{engine}; to repeat an episode, make a new environment, reset it with "
                "options={'task_id': ...} and replay the actions"
            )
        return self.__dict__.copy()

    # ---------------------------------------------------------------- gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsT, dict[str, Any]]:
        """Start an episode.

        Args:
            seed: Seeds the environment's RNG and the choice of task when no ``task_id`` is given.
            options: ``task_id`` (play exactly that task), ``split`` (``"train"`` or ``"eval"``,
                default ``"train"``) and ``config`` (a dict of overrides or a config object, for
                this episode only).

        Returns:
            The first observation and ``info``, a :class:`~llmgym.core.ResetInfo` (typed
            ``dict[str, Any]`` as gymnasium's ``reset`` is).
        """
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            raise ValueError(
                f"reset options: unknown key {unknown[0]!r}; "
                f"allowed keys: {', '.join(RESET_OPTIONS)}"
            )
        config = self.config.merged(options.get("config"))
        split = options.get("split")
        if split is not None and split not in SPLITS:
            raise ValueError(
                f"reset options: split={split!r} is not allowed; allowed: {', '.join(SPLITS)}"
            )
        if seed is not None:
            self._task_sampler = TaskRng("reset-seed", int(seed))
        elif self._task_sampler is None:
            self._task_sampler = TaskRng("reset-seed", int(self.np_random.integers(2**63)))

        task_id = options.get("task_id")
        if task_id is None:
            split = split or self.default_split
            ids = self.task_ids(split, config)
            if len(ids) == 0:
                raise ValueError(f"split {split!r} has no tasks under config {config}")
            task_id = ids[self._task_sampler.randbelow(len(ids))]
        else:
            split = self._split_of(task_id, split, config)

        self._task = Task(self.env_name or type(self).__name__.lower(), task_id, split, config)
        self._episode_over = False
        self._success = False
        observation, self._instruction = self._reset_task(self._task)
        observation = self._emit(observation)
        self._first_observation = observation
        info: ResetInfo[ActT] = {
            "instruction": self._instruction,
            "task_id": task_id,
            "split": split,
            "success": False,
            "invalid_action": False,
        }
        actions = self.admissible_actions()
        if actions is not None:
            info["admissible_actions"] = actions
        return observation, {**info}  # a plain dict, as gymnasium's signature has it

    def step(self, action: ActT) -> tuple[ObsT, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one action. Any string is accepted; other actions are answered as invalid,
        except where the environment translates them (:meth:`_command`).

        Returns:
            ``(observation, reward, terminated, truncated, info)``; ``info`` holds the keys of
            :class:`~llmgym.core.StepInfo` and the environment's own (typed ``dict[str, Any]``
            as gymnasium's ``step`` is).
        """
        if self._task is None:
            raise ResetNeeded("Call reset() before step().")
        if self._episode_over:
            raise ResetNeeded("The episode has ended; call reset() before step().")
        command = self._command(action)
        if command is not None:
            result = self._step(command)
        else:  # only text environments leave actions untranslated: their observations are text
            result = cast(
                "Transition[ObsT]",
                self.invalid(
                    f"Actions must be text, got {type(action).__name__}. "
                    "Reply with a command string."
                ),
            )
        self._episode_over = result.terminated or result.truncated
        if result.success is not None:
            self._success = bool(result.success)
        common: StepInfo[ActT] = {"success": self._success, "invalid_action": result.invalid}
        info: dict[str, Any] = {**common, **(result.info or {})}
        if not self._episode_over:
            actions = self.admissible_actions()
            if actions is not None:
                info["admissible_actions"] = actions
        observation = self._emit(result.observation)
        if self.render_mode == "human":
            self.render()
        return (
            observation,
            float(result.reward),
            bool(result.terminated),
            bool(result.truncated),
            info,
        )

    def render(self) -> RenderFrame | None:
        """``"ansi"``: the latest observation as a string; ``"human"``: print it."""
        if self.render_mode == "ansi":
            return str(self._last_observation)
        if self.render_mode == "human":
            print(self._last_observation)
        return None

    # ---------------------------------------------------------------- internals
    def _command(self, action: ActT) -> str | None:
        """The command :meth:`_step` reads for ``action``; ``None`` for an action that is not
        text. Environments whose actions are not text translate them here."""
        return action if isinstance(action, str) else None

    def _emit(self, observation: ObsT) -> ObsT:
        """Keep a text observation inside the observation space (frames pass unchanged) and
        remember it as the latest observation."""
        if isinstance(observation, str):
            observation = cast(
                "ObsT", clip_text(sanitize_text(observation), self.max_observation_length)
            )
        self._last_observation = observation
        return observation

    def _split_of(self, task_id: object, split: str | None, config: ConfigT) -> str:
        return check_task_id(
            task_id, split, lambda of: self._task_id_set(of, config), type(self).__name__
        )

    def _task_id_set(self, split: str, config: ConfigT) -> Sequence[str] | frozenset[str]:
        ids = self.task_ids(split, config)
        if hasattr(ids, "index_of"):
            return ids
        key = (split, config)
        try:
            cached = self._task_id_sets.get(key)
        except TypeError:  # an unhashable config: check the sequence itself
            return ids
        if cached is None:
            if len(self._task_id_sets) >= _TASK_ID_SETS_KEPT:  # bounded: configs come from clients
                del self._task_id_sets[next(iter(self._task_id_sets))]
            cached = self._task_id_sets[key] = frozenset(ids)
        return cached


class TextEnvLike(Protocol):
    """What llmgym's wrappers, runners and agents read from ``env.unwrapped`` beyond gymnasium's
    API: the contract's read-only part. Every :class:`TextEnv` offers it, and so do the proxies
    of an environment served elsewhere (:class:`~llmgym.serving.client.RemoteEnv`, the Ray
    actors' ``RayEnv``), which answer it remotely. Actions are text, except a pixel variant's
    (an action index), hence ``Any``.
    """

    @property
    def example(self) -> str:
        """A short worked example of play, for prompts."""
        ...

    @property
    def skills(self) -> tuple[str, ...]:
        """The named abilities the environment exercises."""
        ...

    @property
    def instruction(self) -> str:
        """The current task's instruction."""
        ...

    @property
    def success(self) -> bool:
        """Whether the current episode's task is solved."""
        ...

    def task_ids(self, split: str = "train", config: Any = None) -> Sequence[str]:
        """All task ids of ``split``."""
        ...

    def oracle_action(self) -> Any:
        """The next action of a planner that reads the true state."""
        ...

    def admissible_actions(self) -> list[Any] | None:
        """The actions that are valid now, where the environment can list them."""
        ...

    def sample_action(self, rng: np.random.Generator) -> Any:
        """A random valid action."""
        ...

    def rules(self) -> str:
        """The task's description and action grammar, for prompts."""
        ...

    def instance_key(self) -> str:
        """A string that identifies the current instance's content."""
        ...

    def skills_achieved(self) -> frozenset[str]:
        """The skills shown so far in this episode."""
        ...

    def config_schema(self) -> dict[str, Any]:
        """JSON Schema of the environment's config."""
        ...


_TEXT_ENV_MEMBERS = tuple(sorted(get_protocol_members(TextEnvLike)))


def _missing_members(env: object) -> list[str]:
    """The members of :class:`TextEnvLike` that ``env`` lacks, looked up without running a
    property (a proxy's properties are remote calls)."""
    missing = object()
    return [
        name for name in _TEXT_ENV_MEMBERS if inspect.getattr_static(env, name, missing) is missing
    ]


def _offers_text_env_api(env: object) -> TypeGuard[TextEnvLike]:
    return not _missing_members(env)


def unwrapped_text_env(env: gym.Env[Any, Any], needed_by: str = "") -> TextEnvLike:
    """``env.unwrapped``, typed as the llmgym environment it must be: a :class:`TextEnv`, or a
    proxy answering for one (:class:`TextEnvLike`).

    Args:
        env: An environment, with any wrappers around it.
        needed_by: Who needs it (a wrapper's name), for the error message.

    Raises:
        TypeError: ``env.unwrapped`` is not an llmgym environment; the message names
            ``needed_by`` and the members it lacks.
    """
    inner = env.unwrapped
    if isinstance(inner, TextEnv) or _offers_text_env_api(inner):
        return inner
    who = f"{needed_by} needs" if needed_by else "expected"
    raise TypeError(
        f"{who} an llmgym environment (a TextEnv, or a RemoteEnv serving one) inside; "
        f"{type(inner).__name__} is not one: it lacks {', '.join(_missing_members(inner))}"
    )
