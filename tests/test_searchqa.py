"""SearchQA: the generated encyclopedia, its BM25 index, the questions and their splits, the
action grammar and exact-match reward, and an oracle that reads its answers off the passages."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import pickle
import sqlite3

import gymnasium as gym
import pytest

import llmgym
from llmgym import ConfigError
from llmgym.core.cache import LruCache
from llmgym.core.fulltext import Bm25Index, fts5_table, is_complete, write_database
from llmgym.envs.searchqa import corpus as corpus_module
from llmgym.envs.searchqa.corpus import KINDS, MAX_OPEN_CORPORA, Encyclopedia, build_world
from llmgym.envs.searchqa.env import SearchQAEnv, _parse_question
from llmgym.envs.searchqa.questions import (
    Question,
    exact_match,
    normalize_answer,
    questions_for,
)
from llmgym.suites import load_suite
from tests.stopwatch import Stopwatch

ENV_ID = "llmgym/SearchQA-v0"


@pytest.fixture(scope="module")
def corpus() -> Encyclopedia:
    return Encyclopedia.open(0)


@pytest.fixture
def env() -> SearchQAEnv:
    return gym.make(ENV_ID).unwrapped


def _corpus_digest(seed: int) -> str:
    digest = hashlib.sha256()
    for article in build_world(seed).articles():
        digest.update(f"{article.id}\t{article.kind}\t{article.title}\t{article.text}\n".encode())
    return digest.hexdigest()


# ------------------------------------------------------------------------------- the corpus
def test_the_corpus_is_deterministic_and_pinned() -> None:
    """Same seed, same corpus on any machine (the digest is pinned), another seed another."""
    assert _corpus_digest(0) == _corpus_digest(0)
    assert _corpus_digest(0) == ("6677acfd621bca391c0e324fb25bd18653db09b41f5d6b674a35a9096123d580")
    assert _corpus_digest(1) != _corpus_digest(0)


def test_the_corpus_has_thousands_of_linked_articles(corpus: Encyclopedia) -> None:
    world = corpus.world
    articles = list(world.articles())
    assert len(articles) >= 5_000 and corpus.size == len(articles)
    assert {a.kind for a in articles} == set(KINDS)
    titles = [a.title for a in articles]
    assert len(set(titles)) == len(titles)
    for article in articles:
        assert article.text.startswith(article.title)
        assert article.text.count(". ") >= 1 and len(article.text.split()) >= 15
    for entity in world.entities:  # every fact that names an entity names one with an article
        for relation, value in entity.facts.items():
            if relation in ("birthplace", "alma_mater", "director", "author", "founder"):
                assert value in world.by_name, (entity.name, relation, value)
    film = world.by_kind["film"][0]
    director = world.by_name[film.facts["director"]]
    assert film.name in corpus.article(world.entities.index(director) + 1).text


def test_the_index_is_built_once_into_a_bounded_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(Encyclopedia, "_instances", LruCache(MAX_OPEN_CORPORA))
    monkeypatch.setattr(corpus_module, "MAX_CACHED_CORPORA", 2)
    built = Encyclopedia.open(3, progress=False)
    path = built.index.path
    assert path.parent == tmp_path / "searchqa" and is_complete(path, built.size)
    assert not list(tmp_path.rglob("*.partial"))
    assert Encyclopedia.open(3) is built
    inode = path.stat().st_ino
    Encyclopedia._instances.clear()
    again = Encyclopedia.open(3)
    assert again is not built and again.index.path == path
    assert path.stat().st_ino == inode  # reopened, not rebuilt
    assert again.article(7) == built.article(7)
    with pytest.raises(sqlite3.OperationalError):  # opened read-only
        again.index.connection().execute("DELETE FROM articles")
    for seed in (4, 5):  # seed 3 was used last before them: it is deleted
        Encyclopedia.open(seed, progress=False)
    assert sorted(p.name.rsplit("-", 1)[1] for p in path.parent.glob("*.sqlite3")) == [
        "seed4.sqlite3",
        "seed5.sqlite3",
    ]
    assert again.search(again.article(7).title, 1) == [again.article(7)]  # still open


# ------------------------------------------------------------------------------- retrieval
def test_searching_a_name_finds_its_article(corpus: Encyclopedia) -> None:
    articles = list(corpus.world.articles())[::23]
    found = sum(article in corpus.search(article.title, 3) for article in articles)
    assert found / len(articles) >= 0.97
    first = sum(corpus.search(article.title, 1) == [article] for article in articles)
    assert first / len(articles) >= 0.9


def test_search_ranks_fact_queries_and_finds_nothing_for_unknown_words(
    corpus: Encyclopedia,
) -> None:
    film = corpus.world.by_kind["film"][5]
    director = film.facts["director"]
    hits = corpus.search(f"{film.name} directed by", 3)
    assert hits[0].title == film.name and director in hits[0].text
    assert corpus.search("zzqx qqvvw", 3) == []
    assert corpus.search("the of and", 3) == []  # stop words only


def test_the_shared_fts5_helper(tmp_path) -> None:
    """llmgym.core.fulltext on its own: atomic build, BM25 with title weight, word choice."""
    path = tmp_path / "tiny.sqlite3"
    documents = [
        ("Red apples", "apples grow on trees"),
        ("Green pears", "pears and apples are fruit"),
        ("Blue sky", "the sky is blue"),
    ]

    def populate(connection: sqlite3.Connection) -> None:
        connection.executemany(
            "INSERT INTO docs (rowid, title, text) VALUES (?, ?, ?)",
            [(i, title, text) for i, (title, text) in enumerate(documents, start=1)],
        )

    with pytest.raises(ValueError, match="size"):
        write_database(path, fts5_table("docs", ("title", "text"), (5.0, 1.0)), populate, {})
    write_database(path, fts5_table("docs", ("title", "text"), (5.0, 1.0)), populate, {"size": "3"})
    assert is_complete(path, 3) and not is_complete(path, 4)
    index = Bm25Index(path, "docs", 3, {"the", "is"}, common_fraction=0.5)
    assert index.search("apples", 3) == [1, 2]  # the title match first
    # stop words go; "apple" is in 2 of 3 documents (over common_fraction): dropped while
    # rarer words remain, looked up when it is the only word
    assert index.query_words("The apple is red, and blue") == ["red", "and", "blue"]
    assert index.query_words("apple") == ["apple"]
    assert index.search("the is", 3) == []
    with pytest.raises(ValueError, match="weights"):
        fts5_table("docs", ("title",), (1.0, 2.0))


# ------------------------------------------------------------------------------- questions
def test_splits_share_no_question_and_no_entity_asked_about() -> None:
    train, evaluation = questions_for(0, "train"), questions_for(0, "eval")
    assert len(evaluation) >= 1_000 and len(train) >= 10 * len(evaluation)
    assert not {q.text for q in train} & {q.text for q in evaluation}
    train_subjects = {name for q in train for name in q.subjects}
    eval_subjects = {name for q in evaluation for name in q.subjects}
    assert not train_subjects & eval_subjects
    for split in ("train", "eval"):
        types = {q.type for q in questions_for(0, split)}
        assert types == {"single-hop", "bridge", "comparison"}
        assert all(q.type == "bridge" for q in questions_for(0, split, "bridge"))
        assert {q.type for q in questions_for(0, split, "multi-hop")} == {"bridge", "comparison"}


def test_every_question_reads_as_exactly_one_form() -> None:
    for question in questions_for(0, "eval"):
        parsed = _parse_question(question.text)
        assert parsed is not None, question.text
        template, names = parsed
        assert template.type == question.type and names == question.subjects
        assert template.text.format(*names) == question.text


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("The Silent Harbor", "silent harbor"),
        ("  an  Apple, a day!  ", "apple day"),
        ("Marrowen Instruments Ltd.", "marrowen instruments ltd"),
        ("Théâtre", "théâtre"),
        ("", ""),
    ],
)
def test_answers_are_normalised_as_in_squad(given: str, expected: str) -> None:
    assert normalize_answer(given) == expected


def test_exact_match_accepts_aliases_and_nothing_else() -> None:
    question = Question("q", "Velmoria", ("Republic of Velmoria",), "single-hop", ("x",))
    assert exact_match("velmoria.", question.answers)
    assert exact_match("the Republic of Velmoria", question.answers)
    assert not exact_match("Velmoria Republic", question.answers)
    assert not exact_match("Velmorian", question.answers)


# ------------------------------------------------------------------------------- the rules
def test_a_search_returns_the_top_passages(env: SearchQAEnv) -> None:
    observation, info = env.reset(options={"task_id": "eval/00000"})
    assert observation.startswith("Answer the given question.")
    assert observation.endswith(f"Question: {info['instruction']}")
    name = env.question.subjects[0]
    observation, reward, terminated, truncated, info = env.step(
        f"<think>I look it up.</think>\n<search> {name} </search>"
    )
    assert observation.startswith("<information>Doc 1(Title: ")
    assert observation.endswith("</information>") and "\nDoc 3(Title: " in observation
    assert len(info["titles"]) == 3 and name in info["titles"]
    assert not (terminated or truncated or info["invalid_action"]) and reward == 0.0


def test_the_answer_ends_the_episode_with_exact_match_reward(env: SearchQAEnv) -> None:
    env.reset(options={"task_id": "eval/00003"})
    answer = env.question.answer
    *_, reward, terminated, _, info = env.step(f"<ANSWER> {answer.upper()}. </ANSWER>")
    assert (reward, terminated, info["success"]) == (1.0, True, True)
    assert env.skills_achieved() == {env.question.type}
    env.reset(options={"task_id": "eval/00003"})
    observation, reward, terminated, _, info = env.step("<answer>Nobody Atall</answer>")
    assert (reward, terminated, info["success"]) == (0.0, True, False)
    assert "not correct" in observation and env.skills_achieved() == frozenset()


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I think the answer is Paris.",
        "<think>only thinking</think>",
        "<search>unclosed query",
        "<search></search>",
        "<answer>   </answer>",
        "<search>a</search><search>b</search>",
        "<search>x</search> then <answer>y</answer>",
        "<search><answer>nested</answer></search>",
        "<search>the of and</search>",
        "<search>!!! ???</search>",
        "<search>" + "word " * 100 + "</search>",
        "<answer>" + "a" * 500 + "</answer>",
        "<think>" + "x" * 30_000 + "</think><answer>y</answer>",
        "search[Velmoria]",
        "Action: <search",
    ],
)
def test_bad_replies_get_a_correction_and_change_nothing(env: SearchQAEnv, reply: str) -> None:
    env.reset(options={"task_id": "train/00005"})
    before = env.oracle_action()
    observation, reward, terminated, truncated, info = env.step(reply)
    assert info["invalid_action"] and not (terminated or truncated) and reward == 0.0
    assert observation.startswith("My previous action is invalid: ")
    assert "<search> and </search>" in observation and "<answer> and </answer>" in observation
    assert env._turns == 0 and env.oracle_action() == before


@pytest.mark.parametrize(
    "reply", ["<search>" * 2_499, "<search>x" * 2_222, "<answer>" + "</search>" * 2_000]
)
def test_pathological_replies_are_refused_quickly(env: SearchQAEnv, reply: str) -> None:
    """Tags are read in one pass: many open tags do not make a step quadratic."""
    env.reset(options={"task_id": "train/00005"})
    watch = Stopwatch()
    assert env.step(reply)[4]["invalid_action"]
    assert watch.cpu < 0.1


def test_the_turn_limit_counts_valid_turns_only() -> None:
    env = gym.make(ENV_ID, max_turns=2).unwrapped
    env.reset(options={"task_id": "train/00000"})
    assert env.step("no action")[4]["invalid_action"]
    *_, terminated, truncated, _ = env.step("<search>first query</search>")
    assert not (terminated or truncated)
    observation, _, terminated, truncated, info = env.step("<search>second query</search>")
    assert truncated and not terminated and not info["success"]
    assert "Turn limit reached (2 turns)" in observation


def test_config_values_out_of_range_name_the_field() -> None:
    with pytest.raises(ConfigError, match="top_k"):
        gym.make(ENV_ID, top_k=0)
    with pytest.raises(ConfigError, match="question_types"):
        gym.make(ENV_ID, question_types="trivia")
    with pytest.raises(ConfigError, match="max_turns"):
        gym.make(ENV_ID, max_turns=101)


def test_a_copy_continues_as_the_original(env: SearchQAEnv) -> None:
    env.reset(options={"task_id": "eval/00010"})
    env.step(env.oracle_action())
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        action = env.oracle_action()
        assert clone.oracle_action() == action
        assert clone.step(action)[:4] == copy.deepcopy(env).step(action)[:4]


def test_top_k_and_question_types_change_the_episode() -> None:
    env = gym.make(ENV_ID, top_k=1, question_types="comparison").unwrapped
    env.reset(options={"split": "eval"}, seed=3)
    assert env.question.type == "comparison" and len(env.question.subjects) == 2
    _, _, _, _, info = env.step(env.oracle_action())
    assert len(info["titles"]) == 1


# ------------------------------------------------------------------------------- the oracle
_FORGED = "a forged answer key"


def _oracle_episode(env: SearchQAEnv, task_id: str, forge_key: bool) -> tuple[list[str], bool]:
    """Play the oracle on ``task_id``; with ``forge_key`` the stored answer and aliases are
    forged for the whole play and put back only to judge the answer."""
    env.reset(options={"task_id": task_id})
    truth = env._question
    assert truth is not None
    if forge_key:
        env._question = dataclasses.replace(truth, answer=_FORGED, aliases=(_FORGED,))
    actions: list[str] = []
    for _ in range(20):
        actions.append(env.oracle_action())
        if actions[-1].startswith("<answer>"):
            env._question = truth
        *_, terminated, truncated, info = env.step(actions[-1])
        if terminated or truncated:
            return actions, bool(info["success"])
    return actions, False


def test_the_oracle_reads_its_answer_off_the_passages_on_every_eval_task() -> None:
    """With the answer key forged, the oracle plays the same searches and answers on every eval
    task, and solves at least 95% of them (all, when this was written)."""
    env = gym.make(ENV_ID).unwrapped
    task_ids = env.task_ids("eval")
    solved = 0
    for task_id in task_ids:
        actions, success = _oracle_episode(env, task_id, forge_key=False)
        forged_actions, forged_success = _oracle_episode(env, task_id, forge_key=True)
        assert forged_actions == actions, f"{task_id}: the oracle read the answer key"
        assert forged_success == success
        solved += success
    assert solved / len(task_ids) >= 0.95, f"oracle solved {solved} of {len(task_ids)}"


def test_the_environment_is_registered() -> None:
    entry = llmgym.get_entry("searchqa")
    assert entry.id == ENV_ID and entry.extra is None
    assert len(load_suite("agenteval")[ENV_ID]) == 200
