"""Bounded work: hostile actions cost every environment little time and no lasting memory.

The property test throws generated hostile actions at every registered environment: long and
unicode strings, deeply nested JSON, tool calls whose arguments hold huge or non-finite numbers,
SQL with many pattern-matching terms over long values, sheets full of formulas. No step may
raise, and each must finish within :data:`STEP_SECONDS`. A fixed list of such actions, played
again and again, must not make the process grow (:data:`GROWTH_MB`). Also here: the core's
bounded caches (:mod:`llmgym.core.cache`).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmgym import testing
from llmgym.core.cache import LruCache, prune_files, touch
from tests.environments import environment_params

STEP_SECONDS = 2.0
"""The most one hostile step may take (generous: CI machines have two busy cores)."""
GROWTH_MB = 24
"""The most the process may grow over the rounds of the memory test after a first round."""

SLOW = {
    "llmgym/Crafter-v0",
    "llmgym/CrafterPixels-v0",
    "llmgym/ProcgenHeist-v0",
    "llmgym/TextWorld-v0",
    "llmgym/ALFWorld-v0",
    "llmgym/BabyAI-v0",
    "llmgym/SciWorld-v0",
}
KWARGS: dict[str, dict[str, Any]] = {
    "llmgym/SQL-v0": {"mode": "explore", "max_queries": 100},
}
"""Configs under which the checks run (SQL: explore mode, so queries run without ending the
episode; its default time limit of a second per query stays)."""


ENV_IDS = environment_params(SLOW)

# ---------------------------------------------------------------------------- hostile actions
OUT_OF_RANGE = (
    "1e309", "-1e309", "1" + "0" * 400, "-" + "9" * 4_000, "[" + "1" * 500 + "]",
    '{"n": ' + "7" * 400 + "}", "NaN", "Infinity",
)  # fmt: skip
"""JSON texts holding a number beyond the float range, or one JSON does not allow."""
EDGES = ("-0", "-0.0", "1e-400", "5e-324", "1.7976931348623157e308", str(2**1023), "-Infinity")
"""JSON number texts at the edges of the float range (and one more JSON does not allow)."""

_LONG_VALUE = (  # a 98,536-character value and a 50,000-character pattern over it
    "WITH RECURSIVE d(s) AS (SELECT 'a' UNION ALL SELECT s || s FROM d WHERE length(s) < 65536), "
    "v(s) AS (SELECT s || substr(s, 1, 33000) FROM d WHERE length(s) = 65536), "
    "p(q) AS (SELECT '%' || substr(s, 1, 49998) || 'b' FROM v) "
)
_SQL_CONDITIONS = (
    "v.s LIKE p.q",
    "v.s GLOB '*' || substr(p.q, 2)",
    "v.s LIKE '%' || substr(v.s, 1, 99) || 'b'",
    "instr(v.s || 'b', substr(p.q, 2)) > 0",
    "ltrim(v.s, upper(substr(p.q, 2, 5000)) || 'a') = ''",
    "v.s LIKE p.q ESCAPE 'x'",
)


def _json_texts() -> st.SearchStrategy[str]:
    """JSON documents as text (so that they may hold numbers Python cannot write)."""
    scalars = st.one_of(
        st.sampled_from(OUT_OF_RANGE + EDGES),
        st.integers().map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.text(max_size=40).map(lambda text: json.dumps(text, ensure_ascii=False)),
        st.sampled_from(["true", "false", "null", '""', "[]", "{}"]),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
            st.dictionaries(st.text(max_size=12), inner, max_size=4).map(
                lambda d: "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in d.items()) + "}"
            ),
        ),
        max_leaves=16,
    )


def _tool_calls(env: Any) -> st.SearchStrategy[str]:
    """Calls of the environment's tools (any name for other environments) with hostile
    arguments, in the ReAct, JSON and OpenAI (arguments as a string) forms."""
    tools = getattr(env, "tools", None) or {}
    numeric = sorted(  # tools taking numbers (or anything) are drawn twice as often
        name for name, t in tools.items() if any(p.type.kind != "string" for p in t.params)
    )
    names = (
        st.one_of(st.sampled_from(sorted(tools)), st.sampled_from(numeric))
        if numeric
        else st.text(min_size=1, max_size=20)
    )
    values = st.one_of(st.sampled_from(OUT_OF_RANGE), st.sampled_from(EDGES), _json_texts())

    @st.composite
    def call(draw: st.DrawFn) -> str:
        name = draw(names)
        params = [p.name for p in tools[name].params] if name in tools else []
        chosen = draw(
            st.lists(st.sampled_from([*params, "x"]), min_size=1, max_size=3, unique=True)
        )
        fields = [f"{json.dumps(p)}: {draw(values)}" for p in chosen]
        arguments = "{" + ", ".join(fields) + "}"
        form = draw(st.sampled_from(["react", "json", "string"]))
        if form == "react":
            return f"Action: {name} with Action Input: {arguments}"
        if form == "json":
            return f'{{"name": {json.dumps(name)}, "arguments": {arguments}}}'
        return json.dumps({"name": name, "arguments": arguments})

    return call()


FORMULAS = (
    "=" + "+".join(["SUM(A1:Z200)"] * 38),
    "=ROUND(1, 1" + "0" * 400 + ")",
    "=" + "(" * 60 + "1" + ")" * 60,
    "=" + "*".join(["9" * 20] * 24),
    "=PRODUCT(A1:Z200)/MINUS(B2:B9)",
    "=1+2*3-C3/2",
)
"""Formulas that read the whole sheet many times, nest deeply, overflow or are just many."""


def _formulas() -> st.SearchStrategy[str]:
    """Sheet calls full of formulas: whole-sheet ranges, long, deep, huge numbers."""
    formula = st.one_of(
        st.sampled_from(FORMULAS),
        st.integers(1, 60).map(lambda depth: "=" + "(" * depth + "1" + ")" * depth),
        st.integers(1, 300).map(lambda terms: "=" + "*".join(["9" * 20] * terms)),
    )
    update = st.builds(_range_of, formula, st.integers(1, 200), st.integers(1, 26))
    single = formula.map(
        lambda text: json.dumps(
            {"name": "update_cell", "arguments": {"position": "B2", "value": text}}
        )
    )
    return st.one_of(update, single)


def _sql() -> st.SearchStrategy[str]:
    """Queries with many pattern-matching terms over long values."""
    terms = st.lists(st.sampled_from(_SQL_CONDITIONS), min_size=1, max_size=12)
    return terms.map(
        lambda conditions: (
            "```sql\n"
            + _LONG_VALUE
            + "SELECT count(*) FROM v, p WHERE "
            + " OR ".join(conditions)
            + "\n```"
        )
    )


def _hostile(env: Any) -> st.SearchStrategy[Any]:
    strings = st.one_of(
        st.text(max_size=300),
        st.builds(lambda n, c: c * n, st.integers(1_000, 120_000), st.sampled_from("x é🙂\n{[")),
        st.integers(10, 100_000).map(lambda n: "[" * n + "]" * n),
        st.integers(10, 20_000).map(lambda n: '{"a": ' * n + "1" + "}" * n),
        st.sampled_from(testing.HOSTILE_ACTIONS),
        _json_texts(),
        _tool_calls(env),
        _tool_calls(env),  # twice as likely: most of the arguments' code is behind them
        _formulas(),
        _sql(),
    )
    if isinstance(env.action_space, gym.spaces.Discrete):  # pixel variants take indices
        numbers = st.one_of(
            st.integers(),
            st.sampled_from([10**400, -(10**400), -1, int(env.action_space.n)]),
            st.integers(0, int(env.action_space.n) - 1).map(np.int64),
            st.floats(),
        )
        return st.one_of(strings, numbers)
    return strings


# ---------------------------------------------------------------------------- the property
def _make(env_id: str) -> Any:
    env = gym.make(env_id, **KWARGS.get(env_id, {})).unwrapped
    _restart(env)
    return env


def _restart(env: Any) -> None:
    """Reset, then play the oracle's first two actions, so that hostile actions meet a state
    where they can do work (an open sheet, a search page)."""
    env.reset(seed=0)
    for _ in range(2):
        _, _, terminated, truncated, _ = env.step(env.oracle_action())
        if terminated or truncated:
            env.reset(seed=0)
            return


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_hostile_actions_are_cheap_and_never_raise(env_id: str) -> None:
    env = _make(env_id)

    @settings(
        max_examples=200,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(_hostile(env))
    def play(action: Any) -> None:
        start = time.perf_counter()
        observation, _, terminated, truncated, info = env.step(action)
        elapsed = time.perf_counter() - start
        assert elapsed < STEP_SECONDS, f"{elapsed:.2f} s for {_shown(action)}"
        assert env.observation_space.contains(observation)
        assert isinstance(info["invalid_action"], bool)
        if terminated or truncated:
            _restart(env)

    play()
    env.close()


def _shown(action: Any) -> str:
    text = repr(action)
    return text if len(text) <= 120 else text[:117] + "..."


def _fixed_hostile_actions(env: Any) -> list[Any]:
    """A deterministic list of hostile actions built like the property test's."""
    tools = sorted(getattr(env, "tools", None) or {"x": None})
    calls = [
        f'{{"name": "{name}", "arguments": {{"answer": {number}, "value": [{number}]}}}}'
        for name in tools
        for number in OUT_OF_RANGE + EDGES
    ]
    distinct_sql = [  # new statements every round: the statement cache must not keep them
        f"```sql\nSELECT {i}, "
        + ", ".join(
            f"(SELECT count(*) FROM sqlite_master WHERE rootpage > {j})" for j in range(120)
        )
        + "\n```"
        for i in range(90)
    ]
    return [
        *testing.HOSTILE_ACTIONS,
        *calls,
        *distinct_sql,
        "```sql\n" + _LONG_VALUE + "SELECT count(*) FROM v, p WHERE v.s LIKE p.q\n```",
        *(_range_of(text, 200, 26) for text in FORMULAS),
        _range_of("=SUM(A1:G200)", 19, 1),  # within the budget
        "[" * 50_000 + "]" * 50_000,
        "é🙂" * 50_000,
    ]


def _range_of(formula: str, rows: int, columns: int) -> str:
    """A Sheet call writing ``formula`` into the top-left ``rows`` x ``columns`` cells."""
    values = [[formula] * columns] * rows
    end = f"{chr(64 + columns)}{rows}"
    call = {"start_position": "A1", "end_position": end, "values_list": values}
    return json.dumps({"name": "update_range", "arguments": call})


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads the RSS from /proc")
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_hostile_actions_leave_no_lasting_memory(env_id: str) -> None:
    env = _make(env_id)
    actions = _fixed_hostile_actions(env)

    def play_round(round_index: int) -> None:
        _restart(env)
        for index, action in enumerate(actions):
            if isinstance(action, str) and action.startswith("```sql\nSELECT "):
                action = action.replace("SELECT ", f"SELECT {round_index * 1000 + index}, ", 1)
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                _restart(env)

    play_round(0)
    before = _resident_megabytes()
    for round_index in range(1, 4):
        play_round(round_index)
    growth = _resident_megabytes() - before
    assert growth < GROWTH_MB, f"the process grew by {growth:.0f} MB over three rounds"
    env.close()


def _resident_megabytes() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


# ---------------------------------------------------------------------------- core helpers
def test_lru_cache_keeps_the_most_recently_used() -> None:
    cache: LruCache[str, int] = LruCache(2)
    made: list[str] = []

    def make(key: str) -> int:
        made.append(key)
        return len(made)

    assert cache.get_or_create("a", lambda: make("a")) == 1
    assert cache.get_or_create("b", lambda: make("b")) == 2
    assert cache.get_or_create("a", lambda: make("a")) == 1  # kept; now the most recent
    cache.get_or_create("c", lambda: make("c"))  # evicts b
    assert "b" not in cache and "a" in cache and len(cache) == 2
    assert cache.get_or_create("b", lambda: make("b")) == 4
    assert made == ["a", "b", "c", "b"]
    cache.clear()
    assert len(cache) == 0
    with pytest.raises(ValueError, match="at least 1"):
        LruCache(0)


def test_lru_cache_builds_each_value_once_across_threads() -> None:
    cache: LruCache[int, object] = LruCache(4)
    built: list[int] = []

    def build(key: int) -> object:
        built.append(key)
        time.sleep(0.01)
        return object()

    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get_or_create(1, lambda: build(1))))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert built == [1] and len({id(r) for r in results}) == 1


def test_prune_files_keeps_the_most_recently_used(tmp_path: Path) -> None:
    for age, name in enumerate(["old", "mid", "new"]):
        game = tmp_path / "sub" / f"{name}.z8"
        game.parent.mkdir(exist_ok=True)
        game.write_text(name)
        game.with_suffix(".json").write_text("{}")
        os.utime(game, (1_000 + age, 1_000 + age))
    touch(tmp_path / "sub" / "old.z8")  # used again: now the most recent
    deleted = prune_files(tmp_path, "*.z8", 2, companions=(".json",))
    assert deleted == [tmp_path / "sub" / "mid.z8"]
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == [
        "new.json", "new.z8", "old.json", "old.z8",
    ]  # fmt: skip
    assert prune_files(tmp_path, "*.z8", 5) == []
    touch(tmp_path / "missing.z8")  # a file that is gone (or a read-only cache) is no error
