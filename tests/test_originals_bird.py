"""BIRD's original layout on SQL-v0 (``source="bird"``): the loader reads what the tests write
in BIRD's published layout; BIRD's execution-match rule, the sandbox on the user's files."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
from pathlib import Path

import gymnasium as gym
import pytest

from llmgym import ConfigError
from llmgym.envs.sql import SQLEnv
from llmgym.envs.sql.bird import BirdSource, load_bird, open_read_only
from llmgym.errors import DataError
from llmgym.originals import get_source, sources_of_env
from llmgym.testing import check_conformance
from tests.extras import need

SHOP_TABLES = """
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER REFERENCES customers(customer_id),
    amount REAL,
    `order date` TEXT
);
INSERT INTO customers VALUES (1, 'Ada', 'Paris'), (2, 'Bo', 'Oslo'), (3, 'Cy', 'Paris');
INSERT INTO orders VALUES (10, 1, 12.5, '2020-01-02'), (11, 1, 7.25, '2021-03-04'),
    (12, 2, 100.0, '2021-05-06'), (13, 3, 0.1, '2022-07-08');
"""
SCHOOL_TABLES = """
CREATE TABLE schools (CDSCode TEXT PRIMARY KEY, County TEXT, `Enrollment (K-12)` REAL,
    `FRPM Count (K-12)` REAL);
CREATE TABLE satscores (cds TEXT REFERENCES schools(CDSCode), AvgScrMath INTEGER);
INSERT INTO schools VALUES ('01', 'Alameda', 400, 100), ('02', 'Alameda', 300, 150),
    ('03', 'Fresno', 200, 20);
INSERT INTO satscores VALUES ('01', 500), ('02', 620), ('03', 480);
"""
TRAIN = [  # BIRD's train.json: no question_id, no difficulty
    {
        "db_id": "shop",
        "question": "How many customers live in Paris?",
        "evidence": "live in Paris refers to city = 'Paris'",
        "SQL": "SELECT COUNT(*) FROM customers WHERE city = 'Paris'",
    },
    {
        "db_id": "shop",
        "question": "List the names of customers who ordered in 2021.",
        "evidence": "in 2021 refers to strftime('%Y', `order date`) = '2021'",
        "SQL": "SELECT T1.name FROM customers AS T1 INNER JOIN orders AS T2 ON "
        "T1.customer_id = T2.customer_id WHERE strftime('%Y', T2.`order date`) = '2021'",
    },
    {
        "db_id": "shop",
        "question": "What is the total amount ordered?",
        "evidence": "",
        "SQL": "SELECT SUM(amount) FROM orders",
    },
]
DEV = [  # BIRD's dev.json (2024-06-27 release): question_id and difficulty
    {
        "question_id": 0,
        "db_id": "school",
        "question": "What is the highest eligible free rate for K-12 students in the schools "
        "in Alameda County?",
        "evidence": "Eligible free rate for K-12 = `FRPM Count (K-12)` / `Enrollment (K-12)`",
        "SQL": "SELECT `FRPM Count (K-12)` / `Enrollment (K-12)` FROM schools WHERE County = "
        "'Alameda' ORDER BY (CAST(`FRPM Count (K-12)` AS REAL) / `Enrollment (K-12)`) DESC "
        "LIMIT 1",
        "difficulty": "simple",
    },
    {
        "question_id": 1,
        "db_id": "school",
        "question": "List the codes of schools in Alameda, highest math score first.",
        "evidence": "",
        "SQL": "SELECT T1.CDSCode FROM schools AS T1 JOIN satscores AS T2 ON T1.CDSCode = T2.cds "
        "WHERE T1.County = 'Alameda' ORDER BY T2.AvgScrMath DESC",
        "difficulty": "moderate",
    },
    {
        "question_id": 2,
        "db_id": "school",
        "question": "Which counties have a school with an average math score over 490?",
        "evidence": "average math score over 490 refers to AvgScrMath > 490",
        "SQL": "SELECT T1.County FROM schools AS T1 JOIN satscores AS T2 ON T1.CDSCode = T2.cds "
        "WHERE T2.AvgScrMath > 490",
        "difficulty": "challenging",
    },
]


def _database(path: Path, script: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(script)
    connection.commit()
    connection.close()
    description = path.parent / "database_description"
    description.mkdir()
    (description / "table.csv").write_text("original_column_name,column_description\n")


def write_bird(root: Path, *, dev_folder: str = "dev_20240627", train: bool = True) -> Path:
    """A BIRD directory as train.zip and dev.zip unzip (with their databases unzipped)."""
    if train:
        (root / "train").mkdir(parents=True)
        (root / "train" / "train.json").write_text(json.dumps(TRAIN, indent=4))
        _database(root / "train" / "train_databases" / "shop" / "shop.sqlite", SHOP_TABLES)
    if dev_folder:
        (root / dev_folder).mkdir(parents=True)
        (root / dev_folder / "dev.json").write_text(json.dumps(DEV, indent=4))
        _database(root / dev_folder / "dev_databases" / "school" / "school.sqlite", SCHOOL_TABLES)
    return root


@pytest.fixture
def bird_dir(tmp_path: Path) -> Path:
    return write_bird(tmp_path / "bird")


def _env(data_dir: Path, **config) -> SQLEnv:
    env: SQLEnv = gym.make(
        "llmgym/SQL-v0", config={"source": "bird", "data_dir": str(data_dir), **config}
    ).unwrapped
    return env


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


# ---------------------------------------------------------------------------- the layout


def test_check_counts_the_splits(bird_dir: Path) -> None:
    report = BirdSource().check(bird_dir)
    assert dict(report.splits) == {"train": 3, "eval": 3}
    text = report.text()
    assert "train/train.json: 3 questions, 2 with evidence, over 1 databases" in text
    assert "dev_20240627/dev.json: 3 questions (challenging 1, moderate 1, simple 1)" in text
    assert "-> llmgym split 'eval'" in text
    assert get_source("bird").name == "bird"
    assert sources_of_env("llmgym/SQL-v0") == ("bird",)


def test_layout_variants_are_accepted(tmp_path: Path) -> None:
    agentgym = write_bird(tmp_path / "agentgym", dev_folder="dev")  # AgentGym's setup.sh
    assert dict(BirdSource().check(agentgym).splits) == {"train": 3, "eval": 3}
    only_dev = write_bird(tmp_path / "only_dev", train=False)
    assert dict(BirdSource().check(only_dev).splits) == {"eval": 3}
    split_folder = only_dev / "dev_20240627"  # pointed at the unzipped folder itself
    assert dict(BirdSource().check(split_folder).splits) == {"eval": 3}
    only_train = write_bird(tmp_path / "only_train", dev_folder="")
    assert dict(BirdSource().check(only_train).splits) == {"train": 3}
    env = _env(only_train)
    assert len(env.task_ids("train")) == 3 and len(env.task_ids("eval")) == 0


def test_birds_2023_dev_format_reads(tmp_path: Path) -> None:
    root = write_bird(tmp_path / "bird", dev_folder="dev")
    old = [  # no question_id, no difficulty; token lists instead
        {key: item[key] for key in ("db_id", "question", "evidence", "SQL")}
        | {f"{key}_toks": item[key].split() for key in ("question", "SQL", "evidence")}
        for item in DEV
    ]
    (root / "dev" / "dev.json").write_text(json.dumps(old))
    questions = load_bird(root).questions("eval")
    assert [(q.question_id, q.difficulty) for q in questions] == [(None, "")] * 3
    assert dict(BirdSource().check(root).splits) == {"train": 3, "eval": 3}


def test_the_newest_dated_release_is_read(tmp_path: Path) -> None:
    root = write_bird(tmp_path / "bird", dev_folder="dev_20230101")
    write_bird(root, dev_folder="dev_20240627", train=False)
    (root / "dev_20240627" / "dev.json").write_text(json.dumps(DEV[:2]))
    assert load_bird(root).files["eval"] == root / "dev_20240627" / "dev.json"
    assert len(load_bird(root).questions("eval")) == 2


def test_an_empty_directory_says_what_was_expected(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"no BIRD split found: expected train/train.json or "):
        BirdSource().check(tmp_path)
    (tmp_path / "dev.zip").write_bytes(b"PK")
    with pytest.raises(DataError, match=r"dev.zip is still zipped: unzip"):
        BirdSource().check(tmp_path)


def test_zipped_or_missing_databases_are_named(tmp_path: Path) -> None:
    root = tmp_path / "bird"
    (root / "dev").mkdir(parents=True)
    (root / "dev" / "dev.json").write_text(json.dumps(DEV))
    (root / "dev" / "dev_databases.zip").write_bytes(b"PK")
    with pytest.raises(DataError, match=r"dev_databases: the databases are still zipped"):
        BirdSource().check(root)
    (root / "dev" / "dev_databases.zip").unlink()
    with pytest.raises(DataError, match=r"dev/dev_databases: the folder of dev databases"):
        BirdSource().check(root)
    (root / "dev" / "dev_databases").mkdir()
    expected = str(root / "dev" / "dev_databases" / "school" / "school.sqlite")
    with pytest.raises(DataError, match=rf"{expected}: database 'school'"):
        BirdSource().check(root)
    (root / "dev" / "dev_databases" / "school").mkdir()
    Path(expected).write_text("version https://git-lfs.github.com/spec/v1\n")
    with pytest.raises(DataError, match=r"school.sqlite: is not an SQLite database"):
        BirdSource().check(root)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"dev.json: does not read as BIRD's JSON list"),
        ('{"db_id": "school"}', r"dev.json: expected a JSON list of questions, found dict"),
        ("[1]", r"dev.json: question 0: expected an object, found int"),
        ('[{"db_id": "school", "question": "q"}]', r"question 0: 'SQL' must be a non-empty"),
        ('[{"db_id": "../x", "question": "q", "SQL": "SELECT 1"}]', r"is not a database folder"),
        (
            '[{"db_id": "school", "question": "q", "SQL": "SELECT 1", "question_id": "7"}]',
            r"question_id must be an integer",
        ),
    ],
)
def test_bad_questions_files_are_named(bird_dir: Path, content: str, message: str) -> None:
    (bird_dir / "dev_20240627" / "dev.json").write_text(content)
    with pytest.raises(DataError, match=message):
        BirdSource().check(bird_dir)
    with pytest.raises(DataError, match=message):
        _env(bird_dir)


def test_a_changed_questions_file_is_read_again(bird_dir: Path) -> None:
    assert len(_env(bird_dir).task_ids("eval")) == 3
    path = bird_dir / "dev_20240627" / "dev.json"
    path.write_text(json.dumps([*DEV, {**DEV[0], "question_id": 3}]))
    os.utime(path, ns=(1, 1))  # a different modification time, whatever the clock's resolution
    assert len(_env(bird_dir).task_ids("eval")) == 4


def test_agentgym_item_ids_are_train_then_dev(bird_dir: Path) -> None:
    ids = BirdSource().agentgym_task_ids(bird_dir)
    assert list(ids) == [f"train/{i:05d}" for i in range(3)] + [f"eval/{i:05d}" for i in range(3)]


# ---------------------------------------------------------------------------- configuration


def test_config_errors(tmp_path: Path, bird_dir: Path, monkeypatch) -> None:
    monkeypatch.delenv("AGENTENV_SQLGYM_BIRD_PATH", raising=False)
    with pytest.raises(ConfigError, match=r"SQLConfig.data_dir: source 'bird' reads its data"):
        gym.make("llmgym/SQL-v0", config={"source": "bird"})
    afile = tmp_path / "file.json"
    afile.write_text("[]")
    with pytest.raises(ConfigError, match=r"SQLConfig.data_dir: .* is not a directory"):
        gym.make("llmgym/SQL-v0", config={"source": "bird", "data_dir": str(afile)})
    with pytest.raises(ConfigError, match=r"SQLConfig.data_dir: .* source is 'generated'"):
        gym.make("llmgym/SQL-v0", config={"data_dir": str(bird_dir)})
    with pytest.raises(ConfigError, match=r"SQLConfig.source"):
        gym.make("llmgym/SQL-v0", config={"source": "spider", "data_dir": str(bird_dir)})
    for name, value in [("database", "retail"), ("skill", "join"), ("ordered_comparison", True)]:
        with pytest.raises(ConfigError, match=rf"SQLConfig.{name}: .* allowed: "):
            _env(bird_dir, **{name: value})
    monkeypatch.setenv("AGENTENV_SQLGYM_BIRD_PATH", str(bird_dir))  # AgentGym's variable
    env = gym.make("llmgym/SQL-v0", config={"source": "bird"}).unwrapped
    assert len(env.task_ids("eval")) == 3


# ---------------------------------------------------------------------------- episodes


def test_the_observation_is_birds_prompt(bird_dir: Path) -> None:
    env = _env(bird_dir, sample_rows=0)
    observation, info = env.reset(options={"task_id": "eval/00000"})
    assert observation.startswith("CREATE TABLE schools (CDSCode TEXT PRIMARY KEY")
    assert (
        "-- External Knowledge: Eligible free rate for K-12 = `FRPM Count (K-12)` / "
        "`Enrollment (K-12)`\n-- Using valid SQLite and understading External Knowledge, answer "
        "the following questions for the tables provided above.\n-- What is the highest "
        "eligible free rate"
    ) in observation
    assert info["instruction"] == DEV[0]["question"]
    assert env.original_question is not None and env.original_question.difficulty == "simple"
    observation, _ = env.reset(options={"task_id": "eval/00000", "config": {"evidence": False}})
    assert "External Knowledge" not in observation
    assert "-- Using valid SQLite, answer the following questions" in observation
    natural, _ = env.reset(
        options={"task_id": "train/00000", "config": {"schema_format": "natural"}}
    )
    assert natural.startswith("shop contains tables such as customers, orders.")
    assert "Table orders has columns such as order_id, customer_id, amount, order date." in natural
    assert "The customer_id of orders is the foreign key of customer_id of customers." in natural
    rows, _ = env.reset(options={"task_id": "train/00000", "config": {"sample_rows": 2}})
    assert "/* 2 example rows from customers:\ncustomer_id | name | city\n1 | Ada | Paris" in rows


@pytest.mark.parametrize("mode", ["single", "explore"])
def test_the_oracle_plays_the_gold_sql(bird_dir: Path, mode: str) -> None:
    env = _env(bird_dir, mode=mode)
    for task_id in [*env.task_ids("train"), *env.task_ids("eval")]:
        env.reset(options={"task_id": task_id})
        for _ in range(3):
            _, reward, terminated, _, info = env.step(env.oracle_action())
            if terminated:
                break
        assert (reward, info["success"], info["query_status"]) == (1.0, True, "correct"), task_id
        assert env.skills_achieved() == frozenset()  # BIRD labels no SQL skills


def test_birds_rule_compares_sets_of_rows(bird_dir: Path) -> None:
    env = _env(bird_dir)

    def score(task_id: str, sql: str) -> tuple[float, str]:
        env.reset(options={"task_id": task_id})
        _, reward, terminated, _, info = env.step(f"```sql\n{sql}\n```")
        assert terminated
        return float(reward), info["query_status"]

    # order and duplicates do not matter (set(predicted) == set(gold))
    ascending = "SELECT T1.CDSCode FROM schools T1 JOIN satscores T2 ON T1.CDSCode = T2.cds "
    ascending += "WHERE T1.County = 'Alameda' ORDER BY T2.AvgScrMath"
    assert score("eval/00001", ascending) == (1.0, "correct")
    assert score("eval/00002", "SELECT 'Alameda' UNION ALL SELECT 'Alameda'") == (1.0, "correct")
    # a wrong answer, an extra column, a rounded value: 0
    assert score("eval/00002", "SELECT County FROM schools") == (0.0, "wrong")
    assert score("eval/00001", "SELECT CDSCode, County FROM schools WHERE County = 'Alameda'") == (
        0.0,
        "wrong",
    )
    assert score("train/00002", "SELECT ROUND(SUM(amount), 1) FROM orders") == (0.0, "wrong")
    assert score("train/00002", "SELECT 119.85") == (1.0, "correct")
    # values compare exactly (llmgym's generated questions round to 6 decimals; BIRD does not)
    assert score("train/00002", "SELECT 119.8500000001") == (0.0, "wrong")


@pytest.mark.parametrize(
    ("gold", "error"),
    [
        ("SELECT no_such_column FROM schools", "SQL error: no such column"),
        ("ATTACH DATABASE 'other.sqlite' AS other", "SQL error: not authorized"),
    ],
)
def test_a_gold_query_that_fails_scores_zero(tmp_path: Path, gold: str, error: str) -> None:
    root = write_bird(tmp_path / "bird")
    broken = [{**DEV[0], "SQL": gold}, *DEV[1:]]
    (root / "dev_20240627" / "dev.json").write_text(json.dumps(broken))
    before = _digest(root)
    env = _env(root)
    env.reset(options={"task_id": "eval/00000"})
    observation, reward, terminated, _, _ = env.step("```sql\nSELECT 1\n```")
    assert (reward, terminated) == (0.0, True)
    assert f"the gold query has no result to compare with ({error}" in observation
    assert _digest(root) == before


def test_the_sandbox_and_time_limit_apply(bird_dir: Path) -> None:
    env = _env(bird_dir, time_limit_ms=50)
    env.reset(options={"task_id": "eval/00000"})
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
    for action, status in [
        (f"```sql\n{endless}\n```", "timeout"),
        ("```sql\nDELETE FROM schools\n```", "refused"),
        ("```sql\nSELECT * FROM pragma_table_info('schools')\n```", "refused"),
        ("```sql\nSELECT load_extension('x')\n```", "refused"),
    ]:
        _, reward, terminated, _, info = env.step(action)
        assert (reward, terminated, info["query_status"]) == (0.0, False, status), action
        assert info["invalid_action"]


def test_the_users_files_are_never_written(bird_dir: Path) -> None:
    before = _digest(bird_dir)
    env = _env(bird_dir, mode="explore")
    for task_id in ["train/00000", "eval/00000"]:
        env.reset(options={"task_id": task_id})
        for action in [
            "```sql\nDELETE FROM customers\n```",
            "```sql\nDROP TABLE schools\n```",
            "```sql\nVACUUM INTO 'copy.sqlite'\n```",
            "```sql\nATTACH DATABASE 'x.sqlite' AS x\n```",
            "```sql\nSELECT * FROM sqlite_master\n```",
            env.oracle_action(),
            "submit",
        ]:
            env.step(action)
    env.close()
    assert _digest(bird_dir) == before  # same files (no journal, no copy), same bytes
    database = bird_dir / "train" / "train_databases" / "shop" / "shop.sqlite"
    connection = open_read_only(database)  # SQLite itself refuses, sandbox or not
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        connection.execute("DELETE FROM customers")
    connection.close()


def test_conformance_on_bird_layout(bird_dir: Path) -> None:
    for mode in ("single", "explore"):
        make = functools.partial(
            gym.make,
            "llmgym/SQL-v0",
            config={"source": "bird", "data_dir": str(bird_dir), "mode": mode},
        )
        figures = check_conformance(make)
        assert figures["oracle_success_rate"] == 1.0


# ---------------------------------------------------------------------------- serving


def test_agentgym_sqlgym_client_plays_bird_items_through_serve(bird_dir: Path) -> None:
    need("fastapi")
    need("uvicorn")
    from llmgym.serving.server import ServerSettings
    from tests.servers import LiveServer
    from tests.test_agentgym import AgentGymClient

    settings = ServerSettings(envs=("llmgym/SQL-v0",), data=(("bird", str(bird_dir)),))
    with LiveServer(settings) as server:
        base = f"{server.url}/agentgym/sqlgym"
        # AgentGym's item ids: train's 3 items are 0-2, dev's are 3-5
        for item_id, gold in [(0, TRAIN[0]["SQL"]), (3, DEV[0]["SQL"]), (5, DEV[2]["SQL"])]:
            client = AgentGymClient(base, "sqlgym")
            client.reset(item_id)
            observation = client.observe()
            question = (TRAIN + DEV)[item_id]["question"]
            assert f"-- {question}" in observation and str(bird_dir) not in observation
            _, reward, done, _ = client.step(f"Thought: the gold query.\n```sql\n{gold}\n```")
            assert (reward, done) == (1.0, True), item_id
            client.reset(item_id)
            _, reward, done, _ = client.step("```sql\nSELECT 42\n```")
            assert (reward, done) == (0.0, True), item_id
            client.close()


# ---------------------------------------------------------------------------- the command line


def test_data_check_and_eval_data_on_the_command_line(
    bird_dir: Path, tmp_path: Path, capsys
) -> None:
    from llmgym.cli import main

    assert main(["data", "check", "bird", str(bird_dir)]) == 0
    assert "3 train, 3 eval" in capsys.readouterr().out
    assert (
        main(["data", "check", "bird", str(tmp_path / "bird" / "train" / "train_databases")]) != 0
    )
    assert "no BIRD split found" in capsys.readouterr().err
    results = tmp_path / "results.json"
    command = ["eval", "llmgym/SQL-v0", "--data", str(bird_dir), "--agent", "oracle"]
    assert main([*command, "--episodes", "3", "--json", str(results), "--quiet"]) == 0
    (row,) = json.loads(results.read_text())["results"]
    assert (row["split"], row["success_rate"]) == ("eval", 1.0)
    assert sorted(e["task_id"] for e in row["per_episode"]) == [f"eval/{i:05d}" for i in range(3)]
