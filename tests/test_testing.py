"""The conformance checks of :mod:`llmgym.testing`, run against deliberately broken environments.

A small working environment (a counter to bring to a target) passes the whole suite; each
subclass below breaks one rule of the contract, and the suite must reject it with a message
that names the defect.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import pytest

from llmgym import EnvConfig, TextEnv, Transition, knob
from llmgym.core import TaskIdRange, TaskRng, normalize_command, text_space
from llmgym.testing import (
    check_conformance,
    check_hostile_actions,
    check_splits,
    oracle_success_rate,
)

_TICKS = itertools.count()
"""A process-wide counter: what a broken environment leaks into its behaviour."""


@dataclass(frozen=True)
class CounterConfig(EnvConfig):
    """Difficulty knobs of CounterEnv."""

    largest: int = knob(12, low=2, high=1000, doc="Start and target are drawn from 0..largest.")


class CounterEnv(TextEnv[CounterConfig]):
    """Bring a counter to its target with 'up' and 'down', then say 'done'.

    Train targets are even and eval targets odd, so the splits never share an instance.
    """

    config_class = CounterConfig
    env_name = "counter"
    turn_limit = 40

    def task_ids(self, split: str = "train", config: CounterConfig | None = None) -> Sequence[str]:
        return TaskIdRange(split, 40 if split == "train" else 20)

    def _draw(self, rng: TaskRng, split: str) -> tuple[int, int]:
        largest = self.task.config.largest
        if split == "eval":
            target = 2 * rng.randint(0, (largest - 1) // 2) + 1
        else:
            target = 2 * rng.randint(0, largest // 2)
        start = rng.choice([value for value in range(largest + 1) if value != target])
        return start, target

    def _reset_task(self, task: Any) -> tuple[str, str]:
        self._value, self._target = self._draw(task.rng(), task.split)
        self._turns = 0
        return self._show(), "Bring the counter to the target, then say 'done'."

    def _show(self) -> str:
        return f"The counter shows {self._value}; the target is {self._target}."

    def _step(self, action: str) -> Transition:
        command = normalize_command(action)
        if command not in ("up", "down", "done"):
            return self._unknown(action)
        self._turns += 1
        if command == "done":
            solved = self._value == self._target
            return Transition(
                "Solved." if solved else "Wrong.", float(solved), True, success=solved
            )
        self._value += 1 if command == "up" else -1
        return Transition(self._show(), truncated=self._turns >= self.turn_limit)

    def _unknown(self, action: str) -> Transition:
        return self.invalid(f"{self.quote(action)} is not a command: reply up, down or done.")

    def admissible_actions(self) -> list[str]:
        return ["up", "down", "done"]

    def oracle_action(self) -> str:
        if self._value == self._target:
            return "done"
        return "up" if self._value < self._target else "down"


# ------------------------------------------------------------------ one defect per subclass
class NondeterministicInstance(CounterEnv):
    """Numbers its episodes process-wide in the first observation."""

    def _reset_task(self, task: Any) -> tuple[str, str]:
        observation, instruction = super()._reset_task(task)
        return f"{observation} Episode {next(_TICKS)}.", instruction


class NondeterministicSteps(CounterEnv):
    """Rewards depend on the environment object, not only on the task and the actions."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._salt = next(_TICKS)

    def _step(self, action: str) -> Transition:
        transition = super()._step(action)
        transition.reward += self._salt
        return transition


class FlickeringRewards(CounterEnv):
    """Rewards alternate with a process-wide counter."""

    def _step(self, action: str) -> Transition:
        transition = super()._step(action)
        transition.reward += next(_TICKS) % 2
        return transition


class LeakyReset(CounterEnv):
    """Keeps the counter's value from the previous episode."""

    def _reset_task(self, task: Any) -> tuple[str, str]:
        previous = getattr(self, "_value", None)
        observation, instruction = super()._reset_task(task)
        if previous is not None and previous != self._target:
            self._value = previous
        return self._show(), instruction


class SplitBlindRng(CounterEnv):
    """Seeds instances by the task's number only: train/00003 and eval/00003 coincide."""

    def _reset_task(self, task: Any) -> tuple[str, str]:
        self._value, self._target = self._draw(TaskRng(self.env_name, task.index), "train")
        self._turns = 0
        return self._show(), "Bring the counter to the target, then say 'done'."


class UnprefixedEvalIds(CounterEnv):
    """Names its eval tasks 'test/...'."""

    def task_ids(self, split: str = "train", config: CounterConfig | None = None) -> Sequence[str]:
        return TaskIdRange("test" if split == "eval" else split, 20)


class UnstableIds(CounterEnv):
    """Lists its task ids in a different order each time."""

    def task_ids(self, split: str = "train", config: CounterConfig | None = None) -> Sequence[str]:
        ids = list(super().task_ids(split, config))
        shift = next(_TICKS) % len(ids)
        return ids[shift:] + ids[:shift]


class LenientIds(Sequence[str]):
    """Task ids that also accept an unpadded number ('train/1'), as a hand-written parser might."""

    def __init__(self, ids: TaskIdRange) -> None:
        self.ids = ids

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index: Any) -> Any:
        return self.ids[index]

    def index_of(self, task_id: object) -> int | None:
        split, _, number = str(task_id).partition("/")
        if split == self.ids.split and number.isdigit() and int(number) < len(self.ids):
            return int(number)
        return None

    def __contains__(self, task_id: object) -> bool:
        return self.index_of(task_id) is not None


class AliasedIds(CounterEnv):
    """Accepts 'train/1' besides 'train/00001', and builds another instance from it."""

    def task_ids(self, split: str = "train", config: CounterConfig | None = None) -> Sequence[str]:
        return LenientIds(TaskIdRange(split, 40 if split == "train" else 20))


class IgnoresSeed(CounterEnv):
    """Without a task id, always plays the split's first task."""

    def reset(self, *, seed=None, options=None):
        options = dict(options or {})
        options.setdefault("task_id", self.task_ids(options.pop("split", "train"))[0])
        return super().reset(seed=seed, options=options)


class UnseededDraw(CounterEnv):
    """Without a task id, picks a task that the seed does not determine."""

    def reset(self, *, seed=None, options=None):
        options = dict(options or {})
        ids = self.task_ids(options.pop("split", "train"))
        options.setdefault("task_id", ids[next(_TICKS) % len(ids)])
        return super().reset(seed=seed, options=options)


class RaisesOnEmpty(CounterEnv):
    """Raises on an empty action instead of answering it as invalid."""

    def _step(self, action: str) -> Transition:
        if not action:
            raise ValueError("empty command")
        return super()._step(action)


class NonTextObservation(CounterEnv):
    """Returns the observation converted by ``kind`` (int, list or bytes)."""

    kind: Any = int

    def step(self, action):
        observation, *rest = super().step(action)
        converted = {int: len, list: str.split, bytes: str.encode}[self.kind](observation)
        return (converted, *rest)


class TooLongObservation(CounterEnv):
    """Declares an observation space too small for its observations."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.observation_space = text_space(16)


class ControlCharObservation(CounterEnv):
    """Appends an ANSI escape sequence to its observations."""

    def step(self, action):
        observation, *rest = super().step(action)
        return (observation + "\x1b[0m", *rest)


class ResetInfoWithoutTaskId(CounterEnv):
    """Leaves the task id out of reset's info."""

    def reset(self, *, seed=None, options=None):
        observation, info = super().reset(seed=seed, options=options)
        del info["task_id"]
        return observation, info


class ResetInfoWithoutSuccess(CounterEnv):
    """Leaves the success flag out of reset's info (a key of llmgym.core.ResetInfo)."""

    def reset(self, *, seed=None, options=None):
        observation, info = super().reset(seed=seed, options=options)
        del info["success"]
        return observation, info


class StepInfoWithoutSuccess(CounterEnv):
    """Leaves the success flag out of step's info."""

    def step(self, action):
        *head, info = super().step(action)
        del info["success"]
        return (*head, info)


class IntInvalidFlag(CounterEnv):
    """Reports invalid_action as 0 or 1."""

    def step(self, action):
        *head, info = super().step(action)
        info["invalid_action"] = int(info["invalid_action"])
        return (*head, info)


class OracleGivesUp(CounterEnv):
    """An oracle that says 'done' at once, never solving the task."""

    def oracle_action(self) -> str:
        return "done"


class AcceptsAnything(CounterEnv):
    """Treats an unknown action as a valid no-op: invalid_action is never set."""

    def _unknown(self, action: str) -> Transition:
        return Transition("Nothing happens.")


class HostileMovesCounter(CounterEnv):
    """Flags an unknown action mentioning DROP, but still counts up on it."""

    def _unknown(self, action: str) -> Transition:
        if "drop" in action.lower():
            self._value += 1
        return super()._unknown(action)


class HostileEndsEpisode(CounterEnv):
    """Ends the episode on an unknown action."""

    def _unknown(self, action: str) -> Transition:
        return Transition("Goodbye.", terminated=True, invalid=True)


class SilentOnInvalid(CounterEnv):
    """Rejects an unknown action without saying why."""

    def _unknown(self, action: str) -> Transition:
        return self.invalid("")


class NotATextEnv(gym.Env):
    """A plain gymnasium environment."""

    observation_space = gym.spaces.Discrete(2)
    action_space = gym.spaces.Discrete(2)


# ------------------------------------------------------------------ tests
def test_the_working_counter_passes_the_whole_suite() -> None:
    assert check_conformance(CounterEnv) == {"oracle_success_rate": 1.0}


def test_the_working_counter_passes_under_gym_make() -> None:
    gym.register("llmgym-test/Counter-v0", entry_point=CounterEnv, max_episode_steps=60)
    try:
        check_conformance(lambda: gym.make("llmgym-test/Counter-v0", largest=30), hostile_count=60)
    finally:
        del gym.registry["llmgym-test/Counter-v0"]


DEFECTS = [
    (NotATextEnv, "NotATextEnv does not derive from llmgym.TextEnv"),
    (
        NondeterministicInstance,
        "not deterministic: train/00000 with seed 0 in two fresh environments: "
        "reset observation differs",
    ),
    (
        NondeterministicSteps,
        r"not deterministic: train/00000 with seed 0 in two fresh environments: "
        r"step 1 \('\w+'\) reward differs: \d+\.0 vs \d+\.0",
    ),
    (FlickeringRewards, "gymnasium's check_env: Deterministic step rewards are not equivalent"),
    (
        LeakyReset,
        "reset does not restore the task: train/00000 with seed 0, replayed in the same "
        "environment after playing train/00001: reset observation differs",
    ),
    (SplitBlindRng, "train and eval share an instance: train/00000 and eval/00000"),
    (UnprefixedEvalIds, r"task id 'test/\d+' of split 'eval' does not start with 'eval/'"),
    (
        AliasedIds,
        r"task id 'train/0' is accepted but not listed by task_ids\(\), and builds another "
        r"instance than 'train/00000'",
    ),
    (
        IgnoresSeed,
        r"reset ignores the seed: reset\(seed=s, options=\{'split': 'train'\}\) chose "
        r"train/00000 for every seed s in 0\.\.19",
    ),
    (
        UnseededDraw,
        r"not deterministic: reset\(seed=100, options=\{'split': 'train'\}\) chose "
        r"train/\d+ in one environment and train/\d+ in another",
    ),
    (RaisesOnEmpty, r"step\(''\) raised ValueError: empty command"),
    (
        TooLongObservation,
        r"reset observation outside the observation space: \d+ characters, "
        r"more than max_length 16",
    ),
    (
        ControlCharObservation,
        r"step observation outside the observation space: "
        r"characters '\\x1b' outside its character set",
    ),
    (ResetInfoWithoutTaskId, "reset info lacks 'task_id'"),
    (ResetInfoWithoutSuccess, "reset info lacks 'success'"),
    (StepInfoWithoutSuccess, "step info lacks 'success'"),
    (IntInvalidFlag, r"step info\['invalid_action'\] is int, not bool"),
    (OracleGivesUp, r"oracle solved 0% of 20 eval tasks \(bar 95%\)"),
    (
        AcceptsAnything,
        r"hostile action '' was accepted as valid \(info\['invalid_action'\] is False\)",
    ),
    (
        HostileMovesCounter,
        'hostile action "\'; DROP TABLE users; --" changed the state of train/00000: '
        "the oracle then plays 'done' at step",
    ),
    (HostileEndsEpisode, "hostile action '' ended the episode"),
    (SilentOnInvalid, "invalid action '' got no feedback"),
]


@pytest.mark.parametrize(
    ("env_class", "message"), DEFECTS, ids=[env_class.__name__ for env_class, _ in DEFECTS]
)
def test_the_suite_names_each_defect(env_class: type, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_conformance(env_class)


@pytest.mark.parametrize("kind", [int, list, bytes])
def test_a_non_text_observation_is_named(kind: type) -> None:
    env_class = type(f"{kind.__name__.title()}Observation", (NonTextObservation,), {"kind": kind})
    with pytest.raises(AssertionError, match=f"step observation is {kind.__name__}, not str"):
        check_conformance(env_class)


@pytest.mark.parametrize(
    ("env_class", "message"),
    [
        (UnprefixedEvalIds, "task id 'test/00000' of split 'eval' does not start with 'eval/'"),
        (UnstableIds, "task ids are not stable: train task 0 is 'train/000"),
        (SplitBlindRng, r"\(20 of 20 eval tasks checked appear in train\)"),
    ],
)
def test_split_defects_are_named(env_class: type, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_splits(env_class)


def test_the_oracle_rate_is_measured() -> None:
    assert oracle_success_rate(CounterEnv, episodes=10) == 1.0
    assert oracle_success_rate(OracleGivesUp, episodes=10) == 0.0


def test_hostile_actions_can_be_chosen() -> None:
    check_hostile_actions(HostileMovesCounter, ["look", "ATTACK"])
    with pytest.raises(AssertionError, match="hostile action 'drop it' changed the state"):
        check_hostile_actions(HostileMovesCounter, ["look", "drop it", "jump"])


@pytest.mark.parametrize("spelling", ["eval/1", "eval/000001", "EVAL/00001", " eval/00001"])
def test_another_spelling_of_a_task_id_names_the_listed_one(spelling: str) -> None:
    env = CounterEnv()
    with pytest.raises(ValueError, match="the nearest valid id is 'eval/00001'"):
        env.reset(options={"task_id": spelling})


def test_a_task_id_past_the_end_names_the_last_one() -> None:
    with pytest.raises(ValueError, match="the nearest valid id is 'eval/00019'"):
        CounterEnv().reset(options={"task_id": "eval/00020"})
