"""SearchQA on Search-R1's original data: a corpus (``wiki-18.jsonl`` / ``corpus.jsonl``, gzip
or not) and question files (Search-R1's parquet, FlashRAG's ``<dataset>/<split>.jsonl``) that
these tests write in the published layouts, read by the real loader and indexed by the real
BM25 index (in a temporary cache folder)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import llmgym  # noqa: F401  (registers the environments)
from llmgym import ConfigError, originals
from llmgym.cli import main
from llmgym.envs.searchqa.env import SearchQAEnv
from llmgym.envs.searchqa.original import (
    AGENTGYM_TEST_DATASETS,
    AGENTGYM_TRAIN_DATASETS,
    Passages,
    SearchR1Source,
    build_index_path,
    load_questions,
)
from llmgym.errors import DataError
from llmgym.originals import get_source
from llmgym.testing import check_conformance
from tests.extras import need

pa = need("pyarrow")
pq = need("pyarrow.parquet")

ENV_ID = "llmgym/SearchQA-v0"

# (title, text, question, golden answers): each question's answer is in its passage only
FACTS = [
    ("Veliston", "Veliston is the capital of Orvania, on the Tamar River.",
     "what is the capital of orvania", ["Veliston"]),
    ("Marta Quellan", "Marta Quellan (born 1871) was a painter born in Dorrow.",
     "in what year was marta quellan born", ["1871"]),
    ("The Glass Orchard", "The Glass Orchard is a novel written by Ilse Brandmoor.",
     "who wrote the glass orchard", ["Ilse Brandmoor", "I. Brandmoor"]),
    ("Kessel Bridge", "Kessel Bridge spans the Ondra river in the town of Pelm.",
     "which river does kessel bridge span", ["Ondra", "the Ondra river"]),
    ("Harrow Lantern", "Harrow Lantern is a lighthouse built in 1902 on Skarn island.",
     "on which island is harrow lantern", ["Skarn"]),
    ("Tobin Ashgrove", "Tobin Ashgrove founded the Ashgrove Mill company in Lurca.",
     "who founded ashgrove mill", ["Tobin Ashgrove"]),
    ("Pell Observatory", "Pell Observatory stands on Mount Cairn above Vost.",
     "on which mountain is pell observatory", ["Mount Cairn"]),
    ("Ressa Dunmore", "Ressa Dunmore composed the opera Winter Heron in 1955.",
     "who composed the opera winter heron", ["Ressa Dunmore"]),
]  # fmt: skip
FILLER = [
    ("Orvania", "Orvania is a country of hills and lakes with a long coast."),
    ("Dorrow", "Dorrow is a market town known for its wool and its fairs."),
    ("Pelm", "Pelm is a small town with an old stone church and a mill."),
]
EVAL_FACTS, TRAIN_FACTS = FACTS[:5], FACTS[5:]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test indexes into its own cache folder, and opens its corpora afresh."""
    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    Passages._instances.clear()


def write_corpus(folder: Path, name: str = "wiki-18.jsonl") -> Path:
    """Search-R1's corpus layout: ``{"id", "contents"}`` lines, contents ``"Title"\\ntext``."""
    rows = [(t, text) for t, text, _, _ in FACTS] + FILLER
    lines = [
        json.dumps({"id": str(i), "contents": f'"{title}"\n{text}'}) + "\n"
        for i, (title, text) in enumerate(rows)
    ]
    path = folder / name
    data = "".join(lines).encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def _flashrag_lines(facts: list[tuple[str, str, str, list[str]]], split: str) -> str:
    return "".join(
        json.dumps({"id": f"{split}_{i}", "question": q, "golden_answers": answers}) + "\n"
        for i, (_, _, q, answers) in enumerate(facts)
    )


def write_flashrag(folder: Path) -> None:
    """FlashRAG's layout: ``<dataset>/<split>.jsonl``; hotpotqa has a dev set, no test set."""
    (folder / "nq").mkdir()
    (folder / "nq" / "test.jsonl").write_text(_flashrag_lines(EVAL_FACTS[:3], "test"))
    (folder / "nq" / "train.jsonl").write_text(_flashrag_lines(TRAIN_FACTS[:2], "train"))
    (folder / "hotpotqa").mkdir()
    (folder / "hotpotqa" / "dev.jsonl").write_text(_flashrag_lines(EVAL_FACTS[3:], "dev"))
    (folder / "hotpotqa" / "train.jsonl").write_text(_flashrag_lines(TRAIN_FACTS[2:], "train"))


def _search_r1_rows(questions: list[tuple[str, str, list[str]]]) -> list[dict[str, Any]]:
    """Rows as Search-R1's ``qa_search_*_merge.py`` writes them (after ``datasets.map``)."""
    rows = []
    for index, (source, question, answers) in enumerate(questions):
        question = question.strip() + ("" if question.endswith("?") else "?")
        rows.append(
            {
                "id": f"test_{index}",
                "question": question,
                "golden_answers": answers,
                "data_source": source,
                "prompt": [{"role": "user", "content": f"Answer ... Question: {question}\n"}],
                "ability": "fact-reasoning",
                "reward_model": {"style": "rule", "ground_truth": {"target": answers}},
                "extra_info": {"split": "test", "index": index},
            }
        )
    return rows


def write_parquet(folder: Path, name: str, questions: list[tuple[str, str, list[str]]]) -> None:
    pq.write_table(pa.Table.from_pylist(_search_r1_rows(questions)), folder / name)


def write_search_r1(folder: Path) -> Path:
    write_corpus(folder)
    write_parquet(folder, "test.parquet", [("nq", q, a) for _, _, q, a in EVAL_FACTS])
    write_parquet(folder, "train.parquet", [("hotpotqa", q, a) for _, _, q, a in TRAIN_FACTS])
    return folder


@pytest.fixture
def flashrag_dir(tmp_path: Path) -> Path:
    write_corpus(tmp_path)
    write_flashrag(tmp_path)
    return tmp_path


@pytest.fixture
def parquet_dir(tmp_path: Path) -> Path:
    return write_search_r1(tmp_path)


def make(data_dir: Path, **config: Any) -> SearchQAEnv:
    env = gym.make(ENV_ID, config={"source": "search-r1", "data_dir": str(data_dir), **config})
    return env.unwrapped  # type: ignore[return-value]


# ------------------------------------------------------------------------------ check()
def test_check_counts_flashrag_files_per_split(flashrag_dir: Path) -> None:
    report = get_source("search-r1").check(flashrag_dir)
    assert dict(report.splits) == {"eval": 5, "train": 3}
    assert report.found[0].startswith("wiki-18.jsonl: ")
    assert report.found[1:] == (
        "nq/test.jsonl: 3 questions (eval)",
        "hotpotqa/dev.jsonl: 2 questions (eval)",
        "nq/train.jsonl: 2 questions (train)",
        "hotpotqa/train.jsonl: 1 question (train)",
    )
    assert "5 eval, 3 train" in report.text()


def test_check_counts_parquet_files_and_prefers_them(parquet_dir: Path) -> None:
    write_flashrag(parquet_dir)
    report = SearchR1Source().check(parquet_dir)
    assert dict(report.splits) == {"eval": 5, "train": 3}
    assert "test.parquet: 5 questions (eval)" in report.found
    questions = load_questions(parquet_dir)
    assert [q.data_source for q in questions["eval"]] == ["nq"] * 5
    assert questions["eval"][0].text == "what is the capital of orvania?"  # as Search-R1 asks
    assert questions["eval"][2].golden_answers == ("Ilse Brandmoor", "I. Brandmoor")


def test_check_reports_an_index_once_built(flashrag_dir: Path) -> None:
    assert "indexed once on first use" in SearchR1Source().check(flashrag_dir).found[0]
    Passages.open(flashrag_dir, progress=False)
    assert "indexed (11 passages)" in SearchR1Source().check(flashrag_dir).found[0]


def test_a_gzipped_corpus_and_corpus_jsonl_are_read(tmp_path: Path) -> None:
    for name in ("wiki-18.jsonl.gz", "corpus.jsonl"):
        folder = tmp_path / name
        folder.mkdir()
        write_corpus(folder, name)
        passages = Passages.open(folder, progress=False)
        assert passages.size == 11
        assert passages.search("Kessel Bridge", 1)[0].title == '"Kessel Bridge"'


# ------------------------------------------------------------------------------- errors
def test_a_missing_corpus_is_named(tmp_path: Path) -> None:
    write_flashrag(tmp_path)
    with pytest.raises(DataError, match=r"wiki-18\.jsonl: the corpus .* is missing"):
        SearchR1Source().check(tmp_path)


def test_missing_questions_are_named(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    with pytest.raises(DataError, match=r"test\.parquet: the questions .* is missing"):
        SearchR1Source().check(tmp_path)


def test_a_bad_corpus_line_is_named_with_its_line(tmp_path: Path) -> None:
    path = write_corpus(tmp_path)
    write_flashrag(tmp_path)
    with path.open("a") as corpus:
        corpus.write('{"id": "99", "text": "no contents"}\n')
    SearchR1Source().check(tmp_path)  # the first line is fine; the index build reads the rest
    with pytest.raises(DataError, match=rf"{path}:12: expected .*contents"):
        Passages.open(tmp_path, progress=False)
    assert not list(build_index_path(path).parent.glob("*"))  # nothing half-built is kept
    path.write_text("not json\n")
    with pytest.raises(DataError, match=rf"{path}:1: not a JSON line"):
        SearchR1Source().check(tmp_path)


def test_bad_question_files_are_named(flashrag_dir: Path) -> None:
    bad = flashrag_dir / "nq" / "test.jsonl"
    bad.write_text('{"id": "a", "question": "who?", "golden_answers": []}\n')
    with pytest.raises(DataError, match=rf"{bad}:1: the golden answers must be"):
        SearchR1Source().check(flashrag_dir)
    bad.write_text('{"id": "a", "golden_answers": ["x"]}\n')
    with pytest.raises(DataError, match=rf"{bad}:1: 'question' must be"):
        SearchR1Source().check(flashrag_dir)


def test_a_parquet_without_search_r1_columns_is_named(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    pq.write_table(pa.table({"question": ["who?"]}), tmp_path / "test.parquet")
    with pytest.raises(DataError, match=r"test\.parquet: the column 'reward_model'"):
        SearchR1Source().check(tmp_path)
    (tmp_path / "test.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match=r"test\.parquet: not a readable parquet file"):
        SearchR1Source().check(tmp_path)


def test_config_errors_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"SearchQAConfig\.data_dir: .*give data_dir"):
        gym.make(ENV_ID, config={"source": "search-r1"})
    with pytest.raises(ConfigError, match=r"SearchQAConfig\.data_dir: .* is not a directory"):
        make(tmp_path / "absent")
    with pytest.raises(ConfigError, match=r"SearchQAConfig\.question_types: .*generated"):
        make(tmp_path, question_types="bridge")
    with pytest.raises(ConfigError, match=r"SearchQAConfig\.source"):
        gym.make(ENV_ID, config={"source": "wikipedia", "data_dir": str(tmp_path)})


# ----------------------------------------------------------------------- index and reuse
def test_the_index_is_built_once_and_rebuilt_when_the_corpus_changes(flashrag_dir: Path) -> None:
    first = Passages.open(flashrag_dir, progress=False)
    built = first.index_path.stat().st_ino  # a rebuild renames a new file into place
    Passages._instances.clear()
    again = Passages.open(flashrag_dir, progress=False)
    assert again.index_path == first.index_path
    assert again.index_path.stat().st_ino == built  # reused, not rebuilt
    corpus = flashrag_dir / "wiki-18.jsonl"
    with corpus.open("a") as file:
        file.write(json.dumps({"id": "11", "contents": '"New"\nA new passage.'}) + "\n")
    changed = Passages.open(flashrag_dir, progress=False)
    assert changed.index_path != first.index_path
    assert changed.size == 12


def test_search_returns_passages_as_search_r1_shows_them(flashrag_dir: Path) -> None:
    env = make(flashrag_dir)
    observation, _ = env.reset(options={"task_id": "eval/00000"})
    assert observation.endswith("Question: what is the capital of orvania?")
    observation, reward, terminated, _, info = env.step("<search>capital of Orvania</search>")
    assert observation.startswith('<information>Doc 1(Title: "Veliston") Veliston is the capital')
    assert info["titles"][0] == '"Veliston"'
    assert (reward, terminated) == (0.0, False)


# ------------------------------------------------------------------------------ episodes
def test_the_oracle_searches_then_answers(parquet_dir: Path) -> None:
    env = make(parquet_dir)
    for task_id in env.task_ids("eval"):
        env.reset(options={"task_id": task_id})
        first = env.oracle_action()
        assert first == f"<search>{env.question.text}</search>"
        env.step(first)
        _, reward, terminated, _, info = env.step(env.oracle_action())
        assert (reward, terminated, info["success"]) == (1.0, True, True)


@pytest.mark.parametrize(
    ("answer", "reward"),
    [
        ("<answer>I. Brandmoor</answer>", 1.0),  # another golden answer
        ("<answer>  the ILSE brandmoor!! </answer>", 1.0),  # SQuAD normalisation
        ("<answer>Ilse Brandmoor, novelist</answer>", 0.0),  # exact match, not substring
        ("<answer>Marta Quellan</answer>", 0.0),  # wrong
    ],
)
def test_exact_match_over_golden_answers(flashrag_dir: Path, answer: str, reward: float) -> None:
    env = make(flashrag_dir)
    env.reset(options={"task_id": "eval/00002"})  # who wrote the glass orchard
    _, got, terminated, _, info = env.step(answer)
    assert (got, terminated, info["success"]) == (reward, True, reward == 1.0)


def test_hostile_replies_are_corrected_not_raised(flashrag_dir: Path) -> None:
    env = make(flashrag_dir)
    env.reset(options={"task_id": "eval/00000"})
    for reply in ("", "<search>the of a</search>", "<search>x", "<answer></answer>", "\x00" * 50):
        observation, reward, terminated, _, info = env.step(reply)
        assert info["invalid_action"] and reward == 0.0 and not terminated
        assert observation.startswith("My previous action is invalid")


def test_conformance(flashrag_dir: Path) -> None:
    check_conformance(lambda: gym.make(ENV_ID, config={
        "source": "search-r1", "data_dir": str(flashrag_dir)
    }), hostile_count=100)  # fmt: skip


# --------------------------------------------------------------------- AgentGym's indices
def test_agentgym_indices_need_its_datasets(flashrag_dir: Path) -> None:
    with pytest.raises(
        DataError, match=r"need 3,610 nq questions at eval position 0; the data holds 3 there"
    ):
        SearchR1Source().agentgym_task_ids(flashrag_dir)


@pytest.fixture(scope="module")
def agentgym_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FlashRAG files of AgentGym's datasets at AgentGym's sizes (its 221,328 items), and one
    extra dataset, which is numbered after them."""
    folder = tmp_path_factory.mktemp("agentgym")
    write_corpus(folder)
    for datasets, split in ((AGENTGYM_TEST_DATASETS, "test"), (AGENTGYM_TRAIN_DATASETS, "train")):
        for dataset, count in datasets:
            (folder / dataset).mkdir(exist_ok=True)
            dev = split == "test" and dataset in ("hotpotqa", "2wikimultihopqa", "musique")
            lines = "".join(
                f'{{"id": "{i}", "question": "{dataset} {split} {i}", "golden_answers": ["a"]}}\n'
                for i in range(count)
            )
            (folder / dataset / ("dev.jsonl" if dev else f"{split}.jsonl")).write_text(lines)
    (folder / "aaa_extra").mkdir()
    (folder / "aaa_extra" / "test.jsonl").write_text(
        '{"id": "0", "question": "extra", "golden_answers": ["b"]}\n'
    )
    return folder


def test_agentgym_indices_follow_its_test_then_train_order(agentgym_dir: Path) -> None:
    """Item i is eval i up to 51,712, then train (AgentGym's TEST_/TRAIN_ITEM_RANGE)."""
    ids = SearchR1Source().agentgym_task_ids(agentgym_dir)
    assert len(ids) == 221_328
    assert (ids[0], ids[51_712], ids[51_713], ids[-1]) == (
        "eval/00000", "eval/51712", "train/00000", "train/169614"
    )  # fmt: skip
    questions = load_questions(agentgym_dir)
    assert questions["eval"][3_610].text == "triviaqa test 0?"  # AgentGym's item 3,610
    assert questions["eval"][51_587].text == "musique test 2416?"
    assert questions["eval"][51_713].text == "extra?"  # after AgentGym's items
    assert questions["train"][130_881 - 51_713].text == "hotpotqa train 0?"


def test_an_agentgym_task_file_plays_agentgym_items(
    agentgym_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``llmgym eval --task-file searchqa_test.json --data DIR``: AgentGym's item ids."""
    # the task file's reader asks every registered source which family it reads; only this
    # one is registered here, so that the test does not depend on the other families' readers
    monkeypatch.setattr(originals, "_SOURCES", {"search-r1": originals._SOURCES["search-r1"]})
    items = [{"item_id": f"searchqa_{i}", "conversations": None} for i in (3_610, 130_881)]
    (tmp_path / "searchqa_test.json").write_text(json.dumps(items))
    trajectories = tmp_path / "runs.jsonl"
    assert main(["eval", "--task-file", str(tmp_path / "searchqa_test.json"),
                 "--data", str(agentgym_dir), "--agent", "oracle",
                 "--trajectories", str(trajectories)]) == 0  # fmt: skip
    played = sorted(trajectories.read_text().splitlines())
    assert len(played) == 2
    assert "triviaqa test 0?" in played[0] and "hotpotqa train 0?" in played[1]


def test_the_generated_default_is_unchanged() -> None:
    env = gym.make(ENV_ID).unwrapped
    assert env.config.source == "generated" and env.config.data_dir == ""
    assert os.environ.get("LLMGYM_CACHE_DIR")  # the autouse fixture isolates the caches


def test_a_corpus_changed_after_indexing_is_not_misread(flashrag_dir: Path) -> None:
    """A plain corpus's passages are read back from the file: a changed file is refused."""
    passages = Passages.open(flashrag_dir, progress=False)
    assert passages.article(1).title == '"Veliston"'
    corpus = flashrag_dir / "wiki-18.jsonl"
    corpus.write_text(corpus.read_text().replace("Veliston", "Velistan"))
    with pytest.raises(DataError, match="the corpus changed since it was indexed"):
        passages.article(1)
    assert Passages.open(flashrag_dir, progress=False).article(1).title == '"Velistan"'


# ------------------------------------------------------------------------------- the CLI
def test_the_cli_checks_and_evaluates_original_data(
    parquet_dir: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["data", "check", "search-r1", str(parquet_dir)]) == 0
    shown = capsys.readouterr().out
    assert "5 eval, 3 train" in shown and "test.parquet: 5 questions (eval)" in shown
    results = tmp_path_factory.mktemp("results") / "oracle.json"
    ids = [f"eval/{i:05d}" for i in range(5)]
    assert main(["eval", ENV_ID, "--data", str(parquet_dir), "--agent", "oracle",
                 "--task-ids", *ids, "--json", str(results)]) == 0  # fmt: skip
    (row,) = json.loads(results.read_text())["results"]
    assert (row["episodes"], row["success_rate"], row["mean_reward"]) == (5, 1.0, 1.0)


def test_data_source_plays_one_dataset(flashrag_dir: Path) -> None:
    """A score per dataset, as Search-R1's table reports them: ``data_source`` keeps one."""
    env = make(flashrag_dir, data_source="hotpotqa")
    assert (len(env.task_ids("eval")), len(env.task_ids("train"))) == (2, 1)
    env.reset(options={"task_id": "eval/00000"})
    assert env.question.text == "which river does kessel bridge span?"
    with pytest.raises(ConfigError, match=r"data_source: 'squad' is not a dataset .* 'nq'"):
        make(flashrag_dir, data_source="squad")
    with pytest.raises(ConfigError, match=r"SearchQAConfig\.data_source: .*source 'generated'"):
        gym.make(ENV_ID, config={"data_source": "nq"})


def test_a_parquet_without_a_question_column_asks_its_prompts_question(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    rows = _search_r1_rows([("nq", "who wrote the glass orchard", ["Ilse Brandmoor"])])
    for row in rows:
        del row["question"], row["golden_answers"]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "test.parquet")
    (question,) = load_questions(tmp_path)["eval"]
    assert (question.text, question.golden_answers) == (
        "who wrote the glass orchard?",
        ("Ilse Brandmoor",),
    )
    rows[0]["prompt"] = [{"role": "user", "content": "no question here"}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "test.parquet")
    with pytest.raises(DataError, match=r"test\.parquet row 0: the prompt holds no 'Question"):
        load_questions(tmp_path)


def test_agentgyms_own_folder_is_a_data_directory(tmp_path: Path) -> None:
    """AgentGym's agentenv-searchqa after its setup.sh: retrieve_data/ and the queries."""
    (tmp_path / "retrieve_data").mkdir()
    write_corpus(tmp_path / "retrieve_data")
    queries = tmp_path / "agentenv_searchqa" / "queries"
    queries.mkdir(parents=True)
    write_parquet(queries, "test.parquet", [("nq", q, a) for _, _, q, a in EVAL_FACTS])
    write_parquet(queries, "train.parquet", [("hotpotqa", q, a) for _, _, q, a in TRAIN_FACTS])
    report = SearchR1Source().check(tmp_path)
    assert dict(report.splits) == {"eval": 5, "train": 3}
    assert report.found[0].startswith("retrieve_data/wiki-18.jsonl: ")
    assert "agentenv_searchqa/queries/test.parquet: 5 questions (eval)" in report.found
    env = make(tmp_path)
    env.reset(options={"task_id": "eval/00004"})
    observation, *_ = env.step("<search>Harrow Lantern lighthouse</search>")
    assert '(Title: "Harrow Lantern")' in observation
