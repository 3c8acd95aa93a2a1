"""WebArena's original task configs (``source="webarena"``), played in headless Chromium.

The tests write task configs in WebArena's own format (``config_files/test.raw.json`` with
``__WIKIPEDIA__``-style placeholders, numbered ``config_files/<task_id>.json``, a Playwright
storage state in ``.auth/``), serve llmgym's WebArena sites on loopback ports, point WebArena's
environment variables at them and play the tasks through the real loader, browser and
evaluators.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import httpx
import pytest

from benchmarks.bench_utils import CHROMIUM
from llmgym.cli import main as cli_main
from llmgym.envs.webarena.env import START_COOKIES
from llmgym.envs.webarena.evaluators import clean_answer, exact_match, must_include, url_match
from llmgym.envs.webarena.live import render_ax_tree
from llmgym.envs.webarena.original import WebArenaSource, load_tasks
from llmgym.envs.webarena.serve import serve_sites
from llmgym.envs.webarena.sites import Web
from llmgym.errors import ConfigError, DataError
from llmgym.testing import check_conformance, run_episode
from tests.chat_server import ChatServer
from tests.extras import need

ENV_ID = "llmgym/WebArena-v0"
SITE_ENV = ("SHOPPING", "SHOPPING_ADMIN", "REDDIT", "GITLAB", "WIKIPEDIA", "MAP", "HOMEPAGE")
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM} (apt-get install chromium)"
)


def _task(task_id: int, start_url: str, intent: str, spec: dict[str, Any], **extra: Any) -> dict:
    """A task config as WebArena writes one."""
    return {
        "sites": ["wikipedia"],
        "task_id": task_id,
        "require_login": False,
        "storage_state": None,
        "start_url": start_url,
        "geolocation": None,
        "intent_template": intent,
        "instantiation_dict": {},
        "intent": intent,
        "require_reset": False,
        "eval": {
            "eval_types": spec["eval_types"],
            "reference_answers": spec.get("reference_answers"),
            "reference_url": spec.get("reference_url", ""),
            "program_html": spec.get("program_html", []),
            "string_note": spec.get("string_note", ""),
            "url_note": "GOLD in PRED",
        },
        "intent_template_id": 9000 + task_id,
        **extra,
    }


WIKI_TASKS = [
    _task(
        0,
        "__WIKIPEDIA__/wiki/Chekreith",
        "What is the population of Chekreith?",
        {"eval_types": ["string_match"], "reference_answers": {"exact_match": "28,277"}},
    ),
    _task(
        1,
        "__WIKIPEDIA__/wiki/Chekreith",
        "On which river does Chekreith lie, and in which country?",
        {
            "eval_types": ["string_match"],
            "reference_answers": {"must_include": ["Chakis River", "Zuchiveis"]},
        },
    ),
    _task(
        2,
        "__WIKIPEDIA__",
        "Open the list of mountain ranges",
        {"eval_types": ["url_match"], "reference_url": "__WIKIPEDIA__/category/Mountain_ranges"},
    ),
    _task(
        3,
        "__WIKIPEDIA__",
        "Open the article on Chekreith and check its population",
        {
            "eval_types": ["url_match", "program_html"],
            "reference_url": "__WIKIPEDIA__/wiki/Chekreith",
            "program_html": [
                {
                    "url": "__WIKIPEDIA__/wiki/Chekreith",
                    "locator": "",
                    "required_contents": {"must_include": ["28277 |OR| 28,277"]},
                },
                {
                    "url": "last",
                    "locator": "document.querySelector('h1').outerText",
                    "required_contents": {"exact_match": "Chekreith"},
                },
            ],
        },
    ),
    _task(
        4,
        "__WIKIPEDIA__",
        "Search the encyclopedia for Chekreith",
        {
            "eval_types": ["program_html"],
            "program_html": [
                {
                    "url": "last",
                    "locator": "document.querySelector('main').outerText",
                    "required_contents": {"must_include": ["Chekreith"]},
                },
                {
                    "url": "last",
                    "locator": "document.querySelector('input[name=pattern]').value",
                    "required_contents": {"exact_match": "Chekreith"},
                },
            ],
        },
        reference_action_sequence={
            "action_set_tag": "playwright",
            "action_sequence": [
                'page.get_by_role("textbox", name="Search Wikipedia").fill("Chekreith")',
                'page.get_by_role("button", name="Search").click()',
                'page.stop("")',
            ],
        },
    ),
]
FUZZY_TASK = _task(
    5,
    "__WIKIPEDIA__/wiki/Chekreith",
    "What kind of place is Chekreith?",
    {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["a city"]}},
)


@pytest.fixture(scope="module")
def web() -> Web:
    return Web(0)


@pytest.fixture(scope="module")
def site_urls(web: Web) -> Iterator[dict[str, str]]:
    running = serve_sites(["wiki", "shop"], port_offset=None, web=web)
    yield {site.site.name: site.url for site in running}
    for site in running:
        site.stop()


@pytest.fixture
def site_env(site_urls: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """WebArena's address variables, pointing at the served sites."""
    for name in SITE_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLMGYM_CHROMIUM", CHROMIUM)
    monkeypatch.delenv("LLMGYM_WEBARENA_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("WIKIPEDIA", site_urls["wiki"])
    monkeypatch.setenv("SHOPPING", site_urls["shop"])
    return site_urls


def write_raw(root: Path, tasks: list[dict]) -> Path:
    """A WebArena checkout's ``config_files/test.raw.json``."""
    (root / "config_files").mkdir(parents=True, exist_ok=True)
    (root / "config_files" / "test.raw.json").write_text(json.dumps(tasks, indent=2))
    return root


def make(data_dir: Path, **config: Any) -> gym.Env:
    return gym.make(
        ENV_ID,
        config={"source": "webarena", "data_dir": str(data_dir), **config},
    )


# ---------------------------------------------------------------------- loader (no browser)
def test_check_counts_the_tasks_of_test_raw_json(tmp_path: Path) -> None:
    write_raw(tmp_path, [*WIKI_TASKS, FUZZY_TASK])
    report = WebArenaSource().check(tmp_path)
    assert dict(report.splits) == {"eval": 6}
    text = report.text()
    assert "test.raw.json in config_files/: 6 tasks (task_id 0-5)" in text
    assert "string_match: 3" in text and "url_match+program_html: 1" in text


def test_numbered_configs_are_read_in_task_id_order(tmp_path: Path) -> None:
    folder = tmp_path / "config_files"
    folder.mkdir()
    for task in WIKI_TASKS[:3]:
        text = json.dumps(task).replace("__WIKIPEDIA__", "http://wiki.test")
        (folder / f"{task['task_id']}.json").write_text(text)
    (folder / "test.raw.json").write_text("[]")  # the numbered files win, as in run.py
    tasks = load_tasks(tmp_path)
    assert [t.task_id for t in tasks] == [0, 1, 2]
    assert (
        tasks[2].config({})["eval"]["reference_url"] == "http://wiki.test/category/Mountain_ranges"
    )
    ids = WebArenaSource().agentgym_task_ids(tmp_path)
    assert ids == ["eval/00000", "eval/00001", "eval/00002"]


def test_a_changed_config_file_is_read_again(tmp_path: Path) -> None:
    write_raw(tmp_path, WIKI_TASKS[:2])
    assert len(load_tasks(tmp_path)) == 2
    write_raw(tmp_path, WIKI_TASKS[:3])
    assert len(load_tasks(tmp_path)) == 3


def test_missing_and_broken_configs_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"config_files/test\.raw\.json: WebArena's task configs"):
        WebArenaSource().check(tmp_path)
    write_raw(tmp_path, [{"task_id": 0, "intent": "x", "start_url": "y"}])
    with pytest.raises(DataError, match=r"test\.raw\.json\[0\]: the task config lacks 'eval'"):
        load_tasks(tmp_path)
    broken = {**WIKI_TASKS[0], "eval": {"eval_types": ["string_match", "llm_vibes"]}}
    write_raw(tmp_path, [broken])
    with pytest.raises(DataError, match="eval.eval_types is"):
        load_tasks(tmp_path)
    (tmp_path / "config_files" / "test.raw.json").write_text("{not json")
    with pytest.raises(DataError, match=r"test\.raw\.json: not JSON"):
        load_tasks(tmp_path)
    write_raw(tmp_path, [WIKI_TASKS[0], WIKI_TASKS[0]])
    with pytest.raises(DataError, match="task_id 0 is in both"):
        load_tasks(tmp_path)


def test_an_unset_site_variable_is_named(tmp_path: Path) -> None:
    write_raw(tmp_path, WIKI_TASKS[:1])
    with pytest.raises(ConfigError, match="set the environment variable WIKIPEDIA"):
        load_tasks(tmp_path)[0].config({})


def test_config_errors_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="data_dir"):
        gym.make(ENV_ID, config={"source": "webarena"}).reset(options={"split": "eval"})
    with pytest.raises(ConfigError, match="is not a directory"):
        make(tmp_path / "absent").reset(options={"split": "eval"})
    write_raw(tmp_path, WIKI_TASKS)
    with pytest.raises(ConfigError, match="train_tasks: 'x' is not a task id"):
        make(tmp_path, train_tasks="x").unwrapped.task_ids("eval")
    with pytest.raises(ConfigError, match="viewport_lines: 120 applies to llmgym's generated"):
        make(tmp_path, viewport_lines=120)
    with pytest.raises(ConfigError, match="train_tasks: '1' applies to WebArena's original"):
        gym.make(ENV_ID, config={"train_tasks": "1"})


def test_splits_follow_train_tasks(tmp_path: Path) -> None:
    write_raw(tmp_path, WIKI_TASKS)
    env = make(tmp_path).unwrapped
    assert env.task_ids("eval") == tuple(f"eval/{i:05d}" for i in range(5))
    assert env.task_ids("train") == ()
    env = make(tmp_path, train_tasks="0, 2-3").unwrapped
    assert env.task_ids("train") == ("train/00000", "train/00001", "train/00002")
    assert env.task_ids("eval") == ("eval/00000", "eval/00001")
    assert make(tmp_path, train_tasks="0-999999").unwrapped.task_ids("eval") == ()


# ---------------------------------------------------------------------- WebArena's scoring rules
def test_string_rules_are_webarenas() -> None:
    assert clean_answer(' "Chakis River" ') == "chakis river"
    assert exact_match("28,277", "'28,277'") == 1.0
    assert exact_match("28,277", "28277") == 0.0
    assert must_include("0", "10 items", tokenize=True) == 0.0
    assert must_include("0", "0 items", tokenize=True) == 1.0
    assert must_include("0", "10 items") == 1.0


def test_url_rule_is_gold_in_pred() -> None:
    gold = "http://h:1/search?q=river |OR| http://h:1/find?q=stream"
    assert url_match(gold, "http://h:1/search?q=river&page=2") == 1.0
    assert url_match(gold, "http://h:1/find/?q=stream") == 1.0
    assert url_match(gold, "http://h:1/search?q=lake") == 0.0
    assert url_match("http://h:1/wiki/A", "http://h:1/wiki/B") == 0.0


# ---------------------------------------------------------------------- in Chromium
@needs_chromium
@pytest.mark.slow
def test_the_oracle_solves_every_kind_and_wrong_answers_score_zero(
    tmp_path: Path, site_env: dict[str, str]
) -> None:
    need("playwright.sync_api")
    write_raw(tmp_path, WIKI_TASKS)
    env = make(tmp_path, settle_ms=50)
    try:
        for task_id in env.unwrapped.task_ids("eval"):
            steps = run_episode(env, _oracle, options={"task_id": task_id}, max_steps=10)
            assert steps[-1][2] == 1.0, (task_id, steps[-1][5])
            assert steps[-1][5]["success"]
        observation, info = env.reset(options={"task_id": "eval/00000"})
        assert "OBJECTIVE: What is the population of Chekreith?" in observation
        assert "heading 'Chekreith'" in observation and f"URL: {site_env['wiki']}" in observation
        _, reward, terminated, _, info = env.step("```stop [28,000]```")
        assert (reward, terminated, info["evaluation"]) == (0.0, True, {"string_match": 0.0})
        env.reset(options={"task_id": "eval/00003"})  # url_match and program_html
        _, reward, _, _, info = env.step("stop []")
        assert reward == 0.0 and info["evaluation"]["url_match"] == 0.0
        env.reset(options={"task_id": "eval/00004"})
        _, reward, _, _, info = env.step("stop []")
        assert reward == 0.0 and info["evaluation"] == {"program_html": 0.0}
    finally:
        env.close()


def _oracle(env: gym.Env) -> str:
    return env.unwrapped.oracle_action()


@needs_chromium
@pytest.mark.slow
def test_actions_drive_chromium_and_hostile_ones_are_refused(
    tmp_path: Path, site_env: dict[str, str]
) -> None:
    need("playwright.sync_api")
    write_raw(tmp_path, WIKI_TASKS)
    env = make(tmp_path, settle_ms=50)
    try:
        observation, _ = env.reset(options={"task_id": "eval/00002"})
        link = next(line for line in observation.splitlines() if "link 'Mountain ranges'" in line)
        node = link.strip().split("]")[0].lstrip("[")
        observation, *_ = env.step(f"click [{node}]")
        assert f"URL: {site_env['wiki']}/category/Mountain_ranges" in observation
        assert "PREVIOUS ACTION: click [" in observation
        observation, *_ = env.step("go_back")
        assert observation.count("Tab ") == 1 and "Main Page" in observation
        for hostile in (
            "click [999999]",
            "goto [file:///etc/passwd]",
            "goto [http://example.invalid/]",
            "tab_focus [7]",
            "press [NoSuchKey]",
            "dance",
        ):
            observation, reward, terminated, _, info = env.step(hostile)
            assert info["invalid_action"] and not terminated and reward == 0.0, hostile
            assert "Invalid action" in observation, hostile
        env.step("new_tab")
        observation, *_ = env.step(f"goto [{site_env['wiki']}/wiki/Chekreith]")
        assert "Tab 1 (current): Chekreith" in observation
        observation, *_ = env.step("close_tab")
        assert "Tab 0 (current): Main Page" in observation
    finally:
        env.close()


@needs_chromium
@pytest.mark.slow
def test_a_login_from_storage_state_and_a_change_checked_by_program_html(
    tmp_path: Path, site_env: dict[str, str], web: Web
) -> None:
    """A shop task as WebArena writes one: signed in from ``.auth/shopping_state.json``, it
    adds a product to the wish list; program_html reads the wish list page."""
    need("playwright.sync_api")
    task = _task(
        0,
        "__SHOPPING__/product/2812",
        "Add the Ulmdal clumping cat litter to my wish list",
        {
            "eval_types": ["program_html"],
            "program_html": [
                {
                    "url": "__SHOPPING__/wishlist",
                    "locator": "document.querySelector('main').outerText",
                    "required_contents": {"must_include": ["Clumping Cat Litter by Ulmdal"]},
                }
            ],
        },
        sites=["shopping"],
        require_login=True,
        storage_state="./.auth/shopping_state.json",
        reference_action_sequence={
            "action_set_tag": "playwright",
            "action_sequence": [
                'page.get_by_role("button", name="Add to Wish List").click()',
                'page.stop("")',
            ],
        },
    )
    write_raw(tmp_path, [task])
    env = make(tmp_path, settle_ms=50)
    try:
        with pytest.raises(DataError, match=r"\.auth/shopping_state\.json: the storage state"):
            env.reset(options={"task_id": "eval/00000"})
        auth = tmp_path / ".auth"
        auth.mkdir()
        cookies = [
            {
                "name": name,
                "value": value,
                "domain": "127.0.0.1",
                "path": "/",
                "expires": -1,
                "httpOnly": False,
                "secure": False,
                "sameSite": "Lax",
            }
            for name, value in START_COOKIES["localhost:7770"].items()
        ]
        (auth / "shopping_state.json").write_text(json.dumps({"cookies": cookies, "origins": []}))
        web.reset()
        observation, _ = env.reset(options={"task_id": "eval/00000"})
        assert "link 'Sign Out'" in observation
        _, reward, _, _, info = env.step("stop []")
        assert reward == 0.0 and info["evaluation"] == {"program_html": 0.0}
        steps = run_episode(env, _oracle, options={"task_id": "eval/00000"}, max_steps=10)
        assert steps[-1][2] == 1.0, steps[-1][5]
    finally:
        env.close()
        web.reset()


@needs_chromium
@pytest.mark.slow
def test_fuzzy_match_asks_the_judge_or_says_there_is_none(
    tmp_path: Path, site_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    need("playwright.sync_api")
    write_raw(tmp_path, [FUZZY_TASK])
    env = make(tmp_path, settle_ms=50)
    try:
        env.reset(options={"split": "eval"})
        observation, reward, terminated, _, info = env.step("stop [a city in Zuchiveis]")
        assert terminated and reward == 0.0 and not info["success"]
        assert info["evaluation"] == {"string_match": None}
        assert "no judge" in " ".join(info["evaluation_notes"]) or "none is configured" in (
            " ".join(info["evaluation_notes"])
        )
        assert "Evaluation: string_match: fuzzy_match needs an LLM judge" in observation
    finally:
        env.close()

    def model(messages: list[dict[str, Any]]) -> str:
        asked = messages[-1]["content"]
        return "correct" if "student answer: a city in zuchiveis" in asked else "incorrect"

    with ChatServer(model) as server:
        monkeypatch.setenv("LLMGYM_WEBARENA_JUDGE_MODEL", "judge")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        env = make(tmp_path, settle_ms=50)
        try:
            env.reset(options={"split": "eval"})
            _, reward, _, _, info = env.step("stop [A city in Zuchiveis]")
            assert reward == 1.0 and info["evaluation"] == {"string_match": 1.0}
            env.reset(options={"split": "eval"})
            _, reward, _, _, _ = env.step("stop [a mountain]")
            assert reward == 0.0
        finally:
            env.close()
        assert "reference answer: a city" in server.requests[0]["body"]["messages"][-1]["content"]

    class Lenient:
        def fuzzy_match(self, pred: str, reference: str, question: str) -> float:
            return 1.0

        def unachievable_match(self, pred: str, reference: str, question: str) -> float:
            return 1.0

    monkeypatch.delenv("LLMGYM_WEBARENA_JUDGE_MODEL")
    env = make(tmp_path, settle_ms=50)
    env.unwrapped.use_judge(Lenient())
    try:
        env.reset(options={"split": "eval"})
        assert env.step("stop [anything]")[1] == 1.0
    finally:
        env.close()


@needs_chromium
@pytest.mark.slow
def test_conformance(tmp_path: Path, site_env: dict[str, str]) -> None:
    need("playwright.sync_api")
    write_raw(tmp_path, WIKI_TASKS)

    def make_env() -> gym.Env:
        return make(tmp_path, settle_ms=50, train_tasks="1")

    figures = check_conformance(make_env, oracle_episodes=4, hostile_count=20)
    assert figures["oracle_success_rate"] == 1.0


# ---------------------------------------------------------------------- the command line
def test_data_check_prints_what_it_found(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_raw(tmp_path, WIKI_TASKS)
    assert cli_main(["data", "check", "webarena", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"webarena data in {tmp_path.resolve()}: 5 eval" in out
    assert "url_match+program_html: 1" in out


@needs_chromium
@pytest.mark.slow
def test_eval_with_data_and_the_oracle_succeeds(
    tmp_path: Path, site_env: dict[str, str], capsys: pytest.CaptureFixture
) -> None:
    need("playwright.sync_api")
    write_raw(tmp_path, WIKI_TASKS)
    argv = ["eval", ENV_ID, "--data", str(tmp_path), "--agent", "oracle", "--quiet"]
    ids = [f"eval/{i:05d}" for i in range(len(WIKI_TASKS))]
    assert cli_main([*argv, "--task-ids", *ids]) == 0
    assert "mean success over 1 environments: 1.000" in capsys.readouterr().out


@needs_chromium
@pytest.mark.slow
def test_agentgym_clients_play_webarena_items_through_serve_data(
    tmp_path: Path, site_env: dict[str, str]
) -> None:
    """``llmgym serve --data webarena=DIR``: AgentGym's WebArena item ``i`` is ``task_id`` ``i``
    (the configs are numbered files here, one missing), played through AgentGym's protocol."""
    need("playwright.sync_api")
    from llmgym.serving.server import ServerSettings
    from tests.servers import LiveServer

    folder = tmp_path / "config_files"
    folder.mkdir()
    for task in (WIKI_TASKS[0], WIKI_TASKS[2]):  # task ids 0 and 2: item 1 is missing
        text = json.dumps(task).replace("__WIKIPEDIA__", site_env["wiki"])
        (folder / f"{task['task_id']}.json").write_text(text)
    settings = ServerSettings(envs=(ENV_ID,), data=(("webarena", str(tmp_path)),))
    with LiveServer(settings) as server, httpx.Client(timeout=120) as http:
        base = f"{server.url}/agentgym/webarena"
        env_idx = http.post(f"{base}/create").json()["env_idx"]

        def call(path: str, **body: Any) -> Any:
            response = http.post(f"{base}/{path}", json={"env_idx": env_idx, **body})
            assert response.status_code == 200, response.text
            return response.json()

        call("reset", idx=2, seed=0)
        assert (
            "OBJECTIVE: Open the list of mountain ranges"
            in http.get(f"{base}/observation", params={"env_idx": env_idx}).json()
        )
        reply = call("step", action=f"```goto [{site_env['wiki']}/category/Mountain_ranges]```")
        assert reply["reward"] == 0.0 and not reply["terminated"]
        reply = call("step", action="```stop []```")
        assert reply["reward"] == 1.0 and reply["terminated"]
        call("reset", idx=0, seed=0)
        assert call("step", action="```stop [28,277]```")["reward"] == 1.0
        missing = http.post(f"{base}/reset", json={"env_idx": env_idx, "idx": 1, "seed": 0})
        assert 400 <= missing.status_code < 500, missing.text


def test_the_tree_follows_webarenas_rules() -> None:
    """``render_ax_tree`` on nodes shaped as ``Accessibility.getFullAXTree`` returns them."""
    parents = {"2": "1", "3": "1", "4": "2", "5": "4", "6": "1", "7": "", "8": "1"}

    def node(node_id: str, role: str, name: str, children: list[str], **extra: Any) -> dict:
        return {
            "nodeId": node_id,
            "parentId": parents.get(node_id),
            "role": {"value": role},
            "name": {"value": name},
            "childIds": children,
            "backendDOMNodeId": int(node_id),
            **extra,
        }

    def prop(name: str, value: Any) -> dict:
        return {"name": name, "value": {"value": value}}

    nodes = [
        node("1", "RootWebArea", "Shop", ["2", "3", "6", "8"]),
        node("2", "generic", "", ["4"]),  # unnamed container: left out, child lifted
        node("3", "link", "Far below", []),  # outside the viewport
        node("4", "button", "Buy", ["5"], properties=[prop("focusable", True)]),  # ignored
        node("5", "StaticText", "Buy", []),  # repeats its parent's name
        node("6", "textbox", "Search", [], properties=[prop("required", False)]),
        node("7", "StaticText", "orphan", []),  # not reached from the root
        node("8", "StaticText", "$12.99", []),
    ]
    bounds = {
        "1": (0.0, 0.0, 10.0, 10.0),
        "2": (0.0, 0.0, 100.0, 20.0),
        "3": (0.0, 5000.0, 80.0, 20.0),
        "4": (0.0, 0.0, 60.0, 20.0),
        "5": (0.0, 0.0, 30.0, 20.0),
        "6": (0.0, 30.0, 200.0, 20.0),
        "8": (0.0, 60.0, 40.0, 20.0),
    }
    text, listed = render_ax_tree(nodes, bounds, (1280, 720))
    assert text.splitlines() == [
        "[1] RootWebArea 'Shop'",
        "\t[2] button 'Buy'",
        "\t[3] textbox 'Search' required: False",
        "\t[4] StaticText '$12.99'",
    ]
    assert listed["2"].bounds == (0.0, 0.0, 60.0, 20.0)
    everything, _ = render_ax_tree(nodes, bounds, None)
    assert "link 'Far below'" in everything
