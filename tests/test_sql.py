"""SQL-v0: databases, questions, action parsing, grading and the explore mode."""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
import threading
from collections import Counter

import gymnasium as gym
import pytest

from llmgym import ConfigError
from llmgym.envs.sql import SQLEnv
from llmgym.envs.sql.databases import DOMAINS, master_database
from llmgym.envs.sql.env import extract_sql
from llmgym.envs.sql.questions import (
    DIFFICULTIES,
    MAX_GOLD_ROWS,
    SKILLS,
    all_questions,
    questions_for,
)
from llmgym.envs.sql.reading import read_question
from llmgym.envs.sql.sandbox import database_digest
from llmgym.envs.sql.templates import lit
from llmgym.suites import load_suite
from llmgym.testing import check_conformance


def _env(**config) -> SQLEnv:
    return gym.make("llmgym/SQL-v0", **config).unwrapped


def _play(env: SQLEnv, question_filter) -> None:
    """Reset ``env`` to the first train task whose question satisfies ``question_filter``."""
    for task_id in env.task_ids("train"):
        env.reset(options={"task_id": task_id})
        if question_filter(env.question):
            return
    raise AssertionError("no such question")


# ---------------------------------------------------------------------------- databases


def test_databases_are_realistic_and_consistent() -> None:
    assert len(DOMAINS) >= 4
    for name, domain in DOMAINS.items():
        db = master_database(name)
        assert len(domain.tables) >= 4
        assert db.execute("PRAGMA foreign_key_check").fetchall() == [], name
        for table in domain.tables:
            count = db.execute(f"SELECT count(*) FROM {table.name}").fetchone()[0]
            assert count >= 10, (name, table.name)
            if table.label:
                labels = ", ".join(table.label)
                distinct = db.execute(
                    f"SELECT count(*) FROM (SELECT DISTINCT {labels} FROM {table.name})"
                ).fetchone()[0]
                assert distinct == count, f"{name}.{table.name} labels do not identify rows"
    retail = master_database("retail")
    # prices follow their category's range; a delivered order has items
    low, high = retail.execute(
        "SELECT min(unit_price), max(unit_price) FROM products WHERE category = 'Books'"
    ).fetchone()
    assert low >= 4 and high <= 61
    assert retail.execute(
        "SELECT count(*) FROM orders WHERE order_id NOT IN (SELECT order_id FROM order_items)"
    ).fetchone() == (0,)
    flights = master_database("flights")
    # distances are great-circle distances between the airports: Lisbon-Madrid is about 500 km
    assert flights.execute(
        "SELECT count(*) FROM flights WHERE origin = destination OR distance_km < 100"
    ).fetchone() == (0,)


def test_databases_are_the_same_in_a_fresh_process_with_another_hash_seed() -> None:
    script = (
        "import json; from llmgym.envs.sql.databases import DOMAIN_NAMES, master_database; "
        "from llmgym.envs.sql.sandbox import database_digest; "
        "print(json.dumps([database_digest(master_database(n)) for n in DOMAIN_NAMES]))"
    )
    output = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    ).stdout
    assert json.loads(output) == [database_digest(master_database(n)) for n in DOMAINS]


# ---------------------------------------------------------------------------- questions


def test_question_bank_is_large_varied_and_split_by_content() -> None:
    questions = all_questions()
    assert len(questions) >= 1500
    per_database = Counter(q.database for q in questions)
    assert set(per_database) == set(DOMAINS) and min(per_database.values()) >= 250
    assert set(Counter(q.difficulty for q in questions)) == set(DIFFICULTIES)
    assert {s for q in questions for s in q.skills} == set(SKILLS)
    train, eval_ = questions_for("train"), questions_for("eval")
    assert len(train) + len(eval_) == len(questions) and len(eval_) >= 200
    assert not {(q.database, q.sql) for q in train} & {(q.database, q.sql) for q in eval_}
    assert not {(q.database, q.text) for q in train} & {(q.database, q.text) for q in eval_}
    texts = Counter((q.database, q.text) for q in questions)
    assert texts.most_common(1)[0][1] == 1, "two questions share a text"
    for q in questions:
        assert 1 <= len(q.result) <= MAX_GOLD_ROWS
        assert q.ordered == ("LIMIT 3" in q.sql), q.sql


def test_every_config_filter_has_questions_in_both_splits() -> None:
    for split in ("train", "eval"):
        for database in DOMAINS:
            assert questions_for(split, database=database)
        for difficulty in DIFFICULTIES:
            assert questions_for(split, difficulty=difficulty)
        for skill in SKILLS:
            assert questions_for(split, skill=skill)
    env = _env(database="flights", difficulty="challenging", skill="join")
    env.reset(seed=3, options={"split": "eval"})
    assert env.question.database == "flights" and env.question.difficulty == "challenging"
    assert "join" in env.question.skills


def test_oracle_solves_every_eval_question_in_both_modes() -> None:
    for mode in ("single", "explore"):
        env = _env(mode=mode, ordered_comparison=True)
        for task_id in env.task_ids("eval"):
            env.reset(options={"task_id": task_id})
            for _ in range(3):
                _, reward, terminated, _, info = env.step(env.oracle_action())
                if terminated:
                    break
            assert terminated and reward == 1.0 and info["success"], (mode, env.question)


def test_the_oracle_reads_the_question_not_the_answer_key() -> None:
    """With the stored gold query and answer corrupted after reset, the oracle still solves
    every AgentEval task: it builds its query from the question's text and the schema. An
    oracle that replays the gold query (or writes out the answer) fails here."""
    for mode in ("single", "explore"):
        env = _env(mode=mode)
        for task_id in load_suite("agenteval")["llmgym/SQL-v0"]:
            env.reset(options={"task_id": task_id})
            question = env.question
            for _ in range(2):
                env._question = dataclasses.replace(
                    question, sql="SELECT 'corrupted'", result=(("corrupted",),)
                )
                action = env.oracle_action()
                env._question = question
                _, reward, terminated, _, info = env.step(action)
                if terminated:
                    break
            assert terminated and reward == 1.0 and info["success"], (mode, task_id, action)


def test_every_question_reads_back_to_its_gold_query() -> None:
    for q in all_questions():
        assert read_question(q.database, q.text) == q.sql, q.text


@pytest.mark.parametrize(
    ("database", "text", "sql"),
    [
        (
            "retail",
            "How many customers living in Zurich and in the gold loyalty tier are there?",
            "SELECT COUNT(*) FROM customers WHERE city = 'Zurich' AND loyalty_tier = 'gold'",
        ),
        # "living in" is said of cities and countries: the data tells which one Portugal is
        (
            "retail",
            "How many customers living in Portugal are there?",
            "SELECT COUNT(*) FROM customers WHERE country = 'Portugal'",
        ),
        (
            "retail",
            "How many customers living in Atlantis are there?",
            "SELECT COUNT(*) FROM customers WHERE city = 'Atlantis'",
        ),
        (
            "retail",
            "List the names of the products priced above $1,234.50.",
            "SELECT name FROM products WHERE unit_price > 1234.5",
        ),
        (
            "retail",
            "How many orders placed in February 2023 are there?",
            "SELECT COUNT(*) FROM orders WHERE strftime('%Y-%m', order_date) = '2023-02'",
        ),
        (
            "school",
            "What is the average score of enrollments in each subject in the 2025 Spring term? "
            "Return the subject and the average rounded to 2 decimal places.",
            "SELECT co.subject, ROUND(AVG(e.score), 2) FROM enrollments AS e JOIN courses AS co "
            "ON e.course_id = co.course_id WHERE e.term = '2025 Spring' GROUP BY co.subject",
        ),
        ("retail", "What is the weather like?", None),
    ],
)
def test_questions_outside_the_bank_read_too(database: str, text: str, sql: str | None) -> None:
    assert (database, text) not in {(q.database, q.text) for q in all_questions()}
    assert read_question(database, text) == sql


def test_rankings_have_no_ties() -> None:
    """A ranking question ("the highest", "the top 3") has one answer: no row outside the
    answer ties with the last row of the answer on the ranking key."""
    ranked = 0
    for q in all_questions():
        head, _, tail = q.sql.rpartition(" ORDER BY ")
        if not tail.endswith(("LIMIT 1", "LIMIT 3")):
            continue
        key, direction, _, limit = tail.rsplit(" ", 3)
        body = head.split(" FROM ", 1)[1]
        keys = (
            master_database(q.database)
            .execute(f"SELECT {key} FROM {body} ORDER BY {key} {direction}")
            .fetchall()
        )
        k = int(limit)
        assert len(keys) > k and keys[k - 1] != keys[k], q.sql
        if q.ordered:
            assert len(set(keys[:k])) == k, q.sql
        ranked += 1
    assert ranked >= 150


# ---------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("reply", "sql"),
    [
        ("```sql\nSELECT 1\n```", "SELECT 1"),
        ("Thought: easy.\n\nAction:\n```sql\nSELECT 1;\n```", "SELECT 1;"),
        ("```sql\nSELECT 1\n```\nbetter:\n```sql\nSELECT 2\n```", "SELECT 2"),
        ("```SQL SELECT 3```", "SELECT 3"),
        ("```sqlite\nSELECT 4\n```", "SELECT 4"),
        ("```\nSELECT 5\n```", "SELECT 5"),
        ("```sql\nSELECT 6\n```\n```\nSELECT 7\n```", "SELECT 6"),
        ("```python\nprint(1)\n```\n```sql\nSELECT 8\n```\n```text\nnotes\n```", "SELECT 8"),
        ("```sql\nSELECT 9 FROM t\n", "SELECT 9 FROM t"),
        ("SELECT 10", "SELECT 10"),
        ("Thought: count them.\nAction: select count(*) from t</s>", "select count(*) from t"),
        (
            "I think so.\nWITH a AS (SELECT 1) SELECT * FROM a",
            "WITH a AS (SELECT 1) SELECT * FROM a",
        ),
        ("submit SELECT 11", "SELECT 11"),
        ("DROP TABLE t", "DROP TABLE t"),
    ],
)
def test_extract_sql(reply: str, sql: str) -> None:
    assert extract_sql(reply) == sql


@pytest.mark.parametrize(
    "reply",
    ["", "I don't know.", "```python\nimport os\n```", "```sql\n```", "'; DROP TABLE t; --", "42"],
)
def test_extract_sql_finds_nothing(reply: str) -> None:
    assert extract_sql(reply) is None


# ---------------------------------------------------------------------------- grading


def test_single_turn_errors_are_feedback_and_a_wrong_answer_ends_the_episode() -> None:
    env = _env(database="retail")
    env.reset(seed=1, options={"split": "train"})
    for reply, status, feedback in (
        ("no query here", "no_query", "No SQL query found"),
        ("```sql\nSELEKT 1\n```", "error", "starts with SELECT"),
        ("```sql\nSELECT nope FROM orders\n```", "error", "no such column: nope"),
        ("```sql\nDELETE FROM orders\n```", "refused", "read-only"),
    ):
        observation, reward, terminated, _, info = env.step(reply)
        assert info["invalid_action"] and not terminated and reward == 0.0
        assert info["query_status"] == status and feedback in observation
    observation, reward, terminated, _, info = env.step("```sql\nSELECT -1\n```")
    assert terminated and reward == 0.0 and not info["success"] and not info["invalid_action"]
    assert observation.startswith("Wrong answer") and "-1" in observation
    assert info["query_status"] == "wrong" and env.skills_achieved() == frozenset()


def test_result_sets_compare_as_sets_or_in_order() -> None:
    env = _env(ordered_comparison=False)
    _play(env, lambda q: q.ordered and len(q.result[0]) == 1)
    question = env.question
    reversed_rows = "VALUES " + ", ".join(f"({lit(row[0])})" for row in question.result[::-1])
    assert env.step(f"```sql\n{reversed_rows}\n```")[1] == 1.0
    assert env.skills_achieved() == frozenset(question.skills)

    ordered = _env(ordered_comparison=True)
    ordered.reset(options={"task_id": env.task.task_id})
    observation, reward, terminated, _, _ = ordered.step(f"```sql\n{reversed_rows}\n```")
    assert terminated and reward == 0.0 and "Wrong answer" in observation
    ordered.reset(options={"task_id": env.task.task_id})
    assert ordered.step(ordered.oracle_action())[1] == 1.0


def test_duplicates_column_order_and_float_noise() -> None:
    env = _env()
    _play(env, lambda q: q.sql.startswith("SELECT DISTINCT p.first_name, p.last_name"))
    without_distinct = env.question.sql.replace("SELECT DISTINCT", "SELECT")
    assert env.step(f"```sql\n{without_distinct}\n```")[1] == 1.0
    env.reset(options={"task_id": env.task.task_id})
    swapped = env.question.sql.replace("p.first_name, p.last_name", "p.last_name, p.first_name")
    assert env.step(f"```sql\n{swapped}\n```")[1] == 0.0

    # floats compare after rounding to 6 decimals
    _play(env, lambda q: q.sql.startswith("SELECT MAX(") and q.sql.count(" ") == 3)
    for noise, reward in (("1e-9", 1.0), ("1e-3", 0.0)):
        env.reset(options={"task_id": env.task.task_id})
        noisy = env.question.sql.replace(") FROM", f") + {noise} FROM")
        assert env.step(f"```sql\n{noisy}\n```")[1] == reward


def test_observation_shows_schema_samples_question_and_evidence() -> None:
    env = _env(database="library", sample_rows=2)
    observation, info = env.reset(seed=0)
    assert "CREATE TABLE loans (" in observation and "REFERENCES books(book_id)" in observation
    assert "/* 2 example rows from books:" in observation
    assert f"Question: {info['instruction']}" in observation
    natural = _env(database="library", schema_format="natural", sample_rows=0, evidence=False)
    observation, _ = natural.reset(seed=0)
    assert "contains tables such as authors, books, members, loans" in observation
    assert "CREATE TABLE" not in observation and "example rows" not in observation
    assert "Evidence:" not in observation


def test_config_errors_are_precise() -> None:
    with pytest.raises(ConfigError, match="SQLConfig.mode"):
        _env(mode="chat")
    with pytest.raises(ConfigError, match=r"SQLConfig.time_limit_ms.*\[10, 10000\]"):
        _env(time_limit_ms=0)
    with pytest.raises(ConfigError, match="SQLConfig.database"):
        _env(database="bank")
    with pytest.raises(ConfigError, match="SQLConfig.skill: 'join' has no questions") as caught:
        _env(difficulty="simple", skill="join")
    assert "'filter'" in str(caught.value) and "'subquery'" not in str(caught.value)
    assert _env(difficulty="simple", skill="date").task_ids("eval")
    env = _env()
    with pytest.raises(ConfigError, match="SQLConfig.skill"):
        env.reset(options={"config": {"difficulty": "moderate", "skill": "subquery"}})


def test_skill_practice_configs_are_valid_and_focused() -> None:
    env = _env()
    for skill, overrides in SQLEnv.skill_practice.items():
        env.reset(seed=0, options={"config": overrides, "split": "train"})
        assert skill in env.question.skills
        for _ in range(3):
            *_, terminated, _, info = env.step(env.oracle_action())
            if terminated:
                break
        assert info["success"] and skill in env.skills_achieved()


# ---------------------------------------------------------------------------- explore mode


def test_explore_mode_runs_queries_then_submits() -> None:
    env = _env(mode="explore", max_queries=2, shown_rows=3)
    _play(env, lambda q: len(q.result) > 3)
    observation, reward, terminated, _, info = env.step(f"```sql\n{env.question.sql}\n```")
    assert not terminated and reward == 0.0 and info["query_status"] == "ran"
    assert f"returned {len(env.question.result)} rows" in observation
    assert "more rows not shown" in observation and "1 query left" in observation
    env.step("```sql\nSELECT 1\n```")
    observation, _, terminated, _, info = env.step("```sql\nSELECT 2\n```")
    assert info["invalid_action"] and info["query_status"] == "budget_spent" and not terminated
    # 'submit' alone submits the last query that ran (SELECT 1: wrong)
    observation, reward, terminated, _, info = env.step("Action: submit")
    assert terminated and reward == 0.0 and info["query_status"] == "wrong"


def test_explore_mode_submit_forms() -> None:
    env = _env(mode="explore")
    env.reset(seed=4)
    _, _, terminated, _, info = env.step("submit")
    assert info["invalid_action"] and info["query_status"] == "no_query" and not terminated
    gold = env.question.sql
    _, reward, terminated, _, _ = env.step(f"Thought: done.\nsubmit\n```sql\n{gold}\n```")
    assert terminated and reward == 1.0
    env.reset(seed=4)
    assert env.step(f"submit {gold}")[1] == 1.0
    env.reset(seed=4)
    # a run that fails does not become the query to submit
    env.step("```sql\nSELECT nope\n```")
    assert env.step("submit")[4]["query_status"] == "no_query"


def test_explore_mode_conforms() -> None:
    make = functools.partial(gym.make, "llmgym/SQL-v0", mode="explore")
    figures = check_conformance(make, oracle_episodes=20, hostile_count=100)
    assert figures["oracle_success_rate"] == 1.0


def test_an_environment_can_be_stepped_from_another_thread() -> None:
    env = _env()
    env.reset(seed=2)
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(step=env.step(env.oracle_action())))
    worker.start()
    worker.join()
    assert outcome["step"][1] == 1.0
