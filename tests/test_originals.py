"""What every original-data family shares (:mod:`llmgym.originals`): the sources' table, the
``llmgym data`` command, ``eval --data``, ``serve --data`` and what a server's clients see of it.
Each family's own loader and rules are tested in ``tests/test_originals_<family>.py``; these
tests play BIRD, whose layout is the smallest to write."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import httpx
import pytest

from llmgym.cli import main
from llmgym.errors import ConfigError
from llmgym.originals import (
    GENERATED,
    data_dir_of,
    get_source,
    original_config,
    source_names,
    sources_of_env,
)
from tests.extras import need
from tests.test_originals_bird import write_bird

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def bird_dir(tmp_path: Path) -> Path:
    return write_bird(tmp_path / "bird")


def test_every_source_says_where_its_data_comes_from() -> None:
    assert set(source_names()) == {
        "bird",
        "webshop",
        "webarena",
        "search-r1",
        "alfworld",
        "textcraft",
    }
    originals_page = (ROOT / "docs" / "originals.md").read_text()
    for name in source_names():
        source = get_source(name)
        assert source.name == name and sources_of_env(source.env_id) == (name,)
        assert source.homepage.startswith("https://"), name
        assert source.license and source.title and source.fetch_commands, name
        assert source.agentgym_family, name
        assert f'<a id="{name}"></a>' in originals_page, f"docs/originals.md lacks {name}"
        page = ROOT / "docs" / "environments" / f"{source.env_id.split('/')[1][:-3].lower()}.md"
        assert "## Original data" in page.read_text(), page.name


def test_an_unknown_source_names_the_nearest() -> None:
    with pytest.raises(ValueError, match=r"no original data source 'brid'; did you mean 'bird'"):
        get_source("brid")
    with pytest.raises(ValueError, match="llmgym/Wordle-v0 reads no original dataset"):
        original_config("llmgym/Wordle-v0", ".")


def test_the_data_directory_is_checked_where_the_config_is_read(tmp_path: Path) -> None:
    from llmgym.envs.sql.env import SQLConfig

    assert data_dir_of(SQLConfig()) is None
    assert SQLConfig().source == GENERATED
    with pytest.raises(ConfigError, match=r"SQLConfig.data_dir: .*give data_dir"):
        data_dir_of(SQLConfig(source="bird"))
    with pytest.raises(ConfigError, match=r"SQLConfig.data_dir: '.*nope' is not a directory"):
        data_dir_of(SQLConfig(source="bird", data_dir=str(tmp_path / "nope")))
    with pytest.raises(ConfigError, match=r"SQLConfig.data_dir: .* source is 'generated'"):
        data_dir_of(SQLConfig(data_dir=str(tmp_path)))
    with pytest.raises(ConfigError, match=r"SQLConfig.source: 'webshop' is not allowed"):
        SQLConfig(source="webshop")


def test_data_list_check_and_fetch_commands(bird_dir: Path, tmp_path: Path, capsys) -> None:
    assert main(["data", "list", "--json"]) == 0
    listed = {row["source"]: row for row in json.loads(capsys.readouterr().out)["sources"]}
    assert listed["bird"]["env"] == "llmgym/SQL-v0" and set(listed) == set(source_names())
    assert main(["data", "check", "bird", str(bird_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["splits"] == {"train": 3, "eval": 3}
    assert main(["data", "check", "bird", str(tmp_path / "absent")]) == 2
    assert "absent: not a directory" in capsys.readouterr().err
    assert main(["data", "check", "birds", str(bird_dir)]) == 2
    assert "invalid choice 'birds'; did you mean bird?" in capsys.readouterr().err
    assert main(["data", "fetch", "bird", str(tmp_path / "new"), "--print"]) == 0
    printed = capsys.readouterr().out
    assert all(command in printed for command in get_source("bird").fetch_commands)
    assert not (tmp_path / "new").exists()  # --print runs nothing


def test_eval_task_file_plays_agentgyms_item_ids_of_the_original(
    bird_dir: Path, tmp_path: Path, capsys
) -> None:
    task_file = tmp_path / "sqlgym_test.json"
    items = [{"item_id": f"sqlgym_{i}", "conversations": []} for i in (4, 0)]
    task_file.write_text(json.dumps(items))
    results = tmp_path / "results.json"
    command = ["eval", "--task-file", str(task_file), "--data", str(bird_dir), "--agent", "oracle"]
    assert main([*command, "--json", str(results), "--quiet"]) == 0
    (row,) = json.loads(results.read_text())["results"]
    # AgentGym's sqlgym numbers train's 3 items 0-2, then dev's: item 4 is dev's second
    assert [e["task_id"] for e in row["per_episode"]] == ["eval/00001", "train/00000"]
    assert row["success_rate"] == 1.0
    items[0]["item_id"] = "sqlgym_6"
    task_file.write_text(json.dumps(items))
    assert main(["eval", "--task-file", str(task_file), "--data", str(bird_dir)]) == 2
    assert "item 0 ('sqlgym_6'): index=6 names no task: items are 0..5" in capsys.readouterr().err


def test_eval_data_refuses_what_it_cannot_apply(bird_dir: Path, capsys) -> None:
    assert main(["eval", "--suite", "agenteval", "--data", str(bird_dir)]) == 2
    assert "name its ENV_ID, not a --suite" in capsys.readouterr().err
    assert main(["eval", "llmgym/Maze-v0", "--data", str(bird_dir), "--agent", "oracle"]) == 2
    assert "llmgym/Maze-v0 reads no original dataset" in capsys.readouterr().err
    remote = ["eval", "llmgym/SQL-v0", "--data", str(bird_dir), "--remote", "http://x"]
    assert main(remote) == 2
    assert "llmgym serve --data FAMILY=DIR" in capsys.readouterr().err


def test_a_server_never_shows_its_data_directory(bird_dir: Path) -> None:
    need("fastapi")
    need("uvicorn")
    from llmgym.serving.server import ServerSettings
    from tests.servers import LiveServer

    settings = ServerSettings(envs=("llmgym/SQL-v0",), data=(("bird", str(bird_dir)),))
    with LiveServer(settings) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        created = http.post(
            "/sessions", json={"env_id": "llmgym/SQL-v0", "task_id": "eval/00000"}
        ).json()
        assert created["env"]["config"]["source"] == "bird"
        assert created["env"]["config"]["data_dir"] == ""
        session = created["session_id"]
        task = http.post(f"/sessions/{session}/call", json={"name": "task"}).json()["result"]
        assert task["config"]["data_dir"] == "" and task["task_id"] == "eval/00000"
        # what a client is shown it may send back; another directory it may not
        shown = {"source": "bird", "data_dir": ""}
        again = http.post(f"/sessions/{session}/reset", json={"options": {"config": shown}})
        assert again.status_code == 200
        other = {"config": {"data_dir": str(bird_dir.parent)}}
        refused = http.post(f"/sessions/{session}/reset", json={"options": other})
        assert refused.status_code == 422 and refused.json()["field"] == "SQLConfig.data_dir"
        generated = {"config": {"source": "generated"}}
        refused = http.post(f"/sessions/{session}/reset", json={"options": generated})
        assert refused.status_code == 422 and "this server's source is 'bird'" in refused.text
        # a file gone from the directory: a 500 that names no path of the server
        shutil.rmtree(bird_dir / "train" / "train_databases")
        broken = http.post(
            f"/sessions/{session}/reset", json={"options": {"task_id": "train/00000"}}
        )
        assert broken.status_code == 500, broken.text
        assert "original dataset cannot serve this" in broken.json()["message"]
        assert not re.search(re.escape(str(bird_dir.parent)), broken.text)


def test_data_agentgym_cannot_number_is_a_json_error(tmp_path: Path, monkeypatch) -> None:
    need("fastapi")
    need("uvicorn")
    need("pyarrow")
    from llmgym.serving.server import ServerSettings
    from tests.servers import LiveServer
    from tests.test_originals_searchqa import write_search_r1

    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "search").mkdir()
    data = write_search_r1(tmp_path / "search")  # a few questions, not AgentGym's 51,713
    settings = ServerSettings(envs=("llmgym/SearchQA-v0",), data=(("search-r1", str(data)),))
    with LiveServer(settings) as server:
        answer = httpx.post(f"{server.url}/agentgym/searchqa/create", json={"id": 0}, timeout=60)
    assert answer.status_code == 500
    body = answer.json()
    assert "cannot be numbered as AgentGym's searchqa items" in body["message"]
    assert str(tmp_path) not in answer.text
