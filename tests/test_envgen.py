"""EnvGen: tolerant parsing, validation and repair, designers against a real local chat server,
replay, the offline designer, the config mixture and the command line."""

from __future__ import annotations

import json
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest

import llmgym
from llmgym.cli import main
from llmgym.envgen import (
    ConfigMixture,
    Design,
    DesignSpec,
    LLMDesigner,
    ReplayDesigner,
    RuleBasedDesigner,
    RunLog,
    SkillStats,
    extract_json,
    make_mixture_vector_env,
    parse_designs,
)
from llmgym.envs.maze import MazeConfig
from llmgym.llm import ChatClient
from tests.chat_server import ChatServer
from tests.extras import need

VALID = {
    "environments": [
        {"purpose": f"size {w}", "config": {"width": w, "height": w}} for w in (3, 4, 5, 6)
    ]
}


def _fenced(value) -> str:
    return f"Here you go!\n```json\n{json.dumps(value)}\n```\nThese target small mazes."


class TestExtractJson:
    @pytest.mark.parametrize(
        "reply",
        [
            '{"a": 1}',
            'Sure, here it is:\n{"a": 1}\nLet me know!',
            '```json\n{"a": 1}\n```',
            '```\n{"a": 1,}\n```',
            '{"a": 1, // the size\n}',
            "{'a': 1}",
            '<think>{"b": 2}</think>{"a": 1}',
        ],
    )
    def test_tolerated_forms(self, reply: str) -> None:
        assert extract_json(reply) == {"a": 1}

    def test_python_literals_and_several_blocks(self) -> None:
        assert extract_json('{"x": True, "y": None}') == {"x": True, "y": None}
        assert extract_json('```json\n{"a": 1}\n```\ntext\n```json\n{"a": 2}\n```') == [
            {"a": 1},
            {"a": 2},
        ]

    @pytest.mark.parametrize("reply", ["", "no json at all", "{broken", "```json\n{\n```"])
    def test_no_json(self, reply: str) -> None:
        with pytest.raises(ValueError):
            extract_json(reply)


class TestParseDesigns:
    def test_valid_and_shapes(self) -> None:
        parsed = parse_designs(_fenced(VALID), MazeConfig)
        assert parsed.problems == [] and [d.config["width"] for d in parsed.designs] == [3, 4, 5, 6]
        bare = parse_designs('[{"purpose": "p", "width": 4}]', MazeConfig)
        assert bare.designs == [Design("p", {"width": 4})]
        named = parse_designs(
            '{"Environment 1": {"config": {"width": 4}}, '
            '"Environment 2": {"config": {"height": 9}}}',
            MazeConfig,
        )
        assert len(named.designs) == 2

    def test_strings_are_coerced(self) -> None:
        parsed = parse_designs(
            '{"environments": [{"purpose": "p", "config": {"width": "7", "loopiness": "0.5"}}]}',
            MazeConfig,
        )
        assert parsed.designs[0].config == {"width": 7, "loopiness": 0.5}

    def test_every_problem_is_reported_with_field_and_range(self) -> None:
        reply = json.dumps(
            {
                "environments": [
                    {"purpose": "too big", "config": {"width": 99, "height": 5, "colour": "red"}},
                    {"purpose": "no config"},
                    {"purpose": "fine", "config": {"width": 4}},
                    "not an object",
                ]
            }
        )
        parsed = parse_designs(reply, MazeConfig)
        text = "\n".join(parsed.problems)
        assert (
            "Environment 1: MazeConfig.width: 99 is outside the allowed range; "
            "allowed: a number in [2, 30]" in text
        )
        assert "Environment 1: MazeConfig.colour: unknown field" in text
        assert "Environment 2: 'config' sets no parameter" in text and "Environment 4" in text
        assert parsed.designs == [Design("fine", {"width": 4})]
        assert parsed.partial == [Design("too big", {"height": 5})]


def _spec() -> DesignSpec:
    return DesignSpec.from_env_id("llmgym/Maze-v0")


def test_spec_reads_the_environment() -> None:
    spec = _spec()
    assert spec.skills == ("success",) and spec.config_class is MazeConfig
    assert "rectangular maze" in spec.description
    assert any(
        line.startswith("- width: integer 2..30 (default 6)") for line in spec.parameter_lines()
    )


class TestLLMDesigner:
    def test_repairs_then_adapts_in_one_conversation(self, tmp_path) -> None:
        bad = {
            "environments": [
                {"purpose": "x", "config": {"width": 50}},
                {"purpose": "y", "config": {"height": 3, "size": 2}},
            ]
        }
        replies = iter([_fenced(bad), _fenced(VALID), "Based on the scores:\n" + json.dumps(VALID)])
        with ChatServer(lambda messages: next(replies)) as server:
            designer = LLMDesigner(
                _spec(), ChatClient("designer", base_url=server.base_url), run=RunLog(tmp_path)
            )
            first = designer.propose()
            assert [d.config["width"] for d in first] == [3, 4, 5, 6]
            repair = server.requests[1]["body"]["messages"][-1]["content"]
            assert "MazeConfig.width: 50 is outside the allowed range" in repair
            assert "MazeConfig.size: unknown field" in repair
            designer.propose(SkillStats({"success": (35.0, 5.0)}))
            update = server.requests[2]["body"]["messages"]
        assert [m["role"] for m in update] == ["user", "assistant", "user", "assistant", "user"]
        assert (
            "- success: 35% +/- 5%" in update[-1]["content"]
            and '"width": 3' in update[-1]["content"]
        )
        kinds = [e["event"] for e in RunLog(tmp_path).events]
        assert (
            kinds.count("prompt") == 3 and kinds.count("reply") == 3 and kinds.count("designs") == 2
        )
        assert kinds.count("validation") == 3

    def test_nothing_valid_keeps_previous_and_timeouts_are_survived(self, tmp_path, caplog) -> None:
        replies = iter([_fenced(VALID)] + ["I cannot do that."] * 3 + [_fenced(VALID)])
        with ChatServer(
            lambda m: next(replies), faults=[None, None, None, None, ("slow", 2.0), ("slow", 2.0)]
        ) as server:
            client = ChatClient(
                "designer", base_url=server.base_url, timeout=0.3, max_retries=1, backoff=0.01
            )
            designer = LLMDesigner(_spec(), client, repair_rounds=2, run=RunLog(tmp_path))
            first = designer.propose()
            assert (
                designer.propose(SkillStats({"success": (10.0, 0.0)})) == first
            )  # non-JSON, 3 rounds
            assert designer.propose(SkillStats({"success": (10.0, 0.0)})) == first  # timed out
        events = RunLog(tmp_path).events
        assert any(e["event"] == "error" and "no answer within" in e["message"] for e in events)
        assert "keeping the previous ones" in caplog.text

    def test_paper_schedule_four_calls_and_exact_replay(self, tmp_path) -> None:
        def model(messages):
            call = sum(m["role"] == "assistant" for m in messages)
            return _fenced(
                {
                    "environments": [
                        {
                            "purpose": f"call {call}",
                            "config": {"width": 3 + call, "loopiness": 0.1 * call},
                        }
                    ]
                }
            )

        with ChatServer(model) as server:
            designer = LLMDesigner(
                _spec(), ChatClient("d", base_url=server.base_url), n=1, run=RunLog(tmp_path)
            )
            recorded = [designer.propose()] + [
                designer.propose(SkillStats({"success": (20.0 * k, 1.0)})) for k in (1, 2, 3)
            ]
            assert len(server.requests) == 4
        replay = ReplayDesigner(_spec(), tmp_path, n=1)
        replayed = [replay.propose()] + [
            replay.propose(SkillStats({"success": (20.0 * k, 1.0)})) for k in (1, 2, 3)
        ]
        assert replayed == recorded and [d[0].config["width"] for d in recorded] == [3, 4, 5, 6]

    def test_resumes_a_recorded_conversation(self, tmp_path) -> None:
        with ChatServer(lambda m: _fenced(VALID)) as server:
            client = ChatClient("d", base_url=server.base_url)
            LLMDesigner(_spec(), client, run=RunLog(tmp_path)).propose()
            resumed = LLMDesigner(_spec(), client, run=RunLog(tmp_path))
            assert len(resumed.messages) == 2 and resumed.previous
            resumed.propose(SkillStats({"success": (50.0, 0.0)}))
            assert len(server.requests[-1]["body"]["messages"]) == 3


class TestRuleBasedDesigner:
    def test_targets_the_weakest_skills(self) -> None:
        spec = DesignSpec(
            env_id="x",
            name="x",
            description="",
            skills=("a", "b", "c"),
            config_class=MazeConfig,
            practice={"a": {"width": 3}, "b": {"width": 4}, "c": {"width": 5}},
        )
        designer = RuleBasedDesigner(spec, n=2)
        designs = designer.propose(
            SkillStats({"a": (90.0, 1.0), "b": (10.0, 2.0), "c": (40.0, 0.0)})
        )
        assert [d.config for d in designs] == [{"width": 4}, {"width": 5}]
        assert "b" in designs[0].purpose and "10%" in designs[0].purpose

    def test_equally_weak_skills_are_practised_in_turn(self) -> None:
        spec = DesignSpec(
            env_id="x",
            name="x",
            description="",
            skills=("a", "b", "c", "d"),
            config_class=MazeConfig,
            practice={s: {"width": w} for s, w in zip("abcd", (3, 4, 5, 6), strict=True)},
        )
        designer = RuleBasedDesigner(spec, n=2)
        zero = SkillStats({s: (0.0, 0.0) for s in "abcd"})
        rounds = [[d.config["width"] for d in designer.propose(zero)] for _ in range(3)]
        assert rounds == [[3, 4], [5, 6], [3, 4]]

    def test_first_call_walks_down_the_tech_tree(self) -> None:
        """Skills ordered by their prerequisites, not by declaration: one skill per depth
        first (the one more skills need), then the next of each depth."""
        skills = ("diamond", "drink", "pickaxe", "stone", "table", "wood")
        spec = DesignSpec(
            env_id="x",
            name="x",
            description="",
            skills=skills,
            config_class=MazeConfig,
            practice={s: {"width": w} for w, s in enumerate(skills, 3)},
            requirements={
                "diamond": ("pickaxe", "stone"),
                "pickaxe": ("table", "wood"),
                "stone": ("pickaxe",),
                "table": ("wood",),
            },
        )
        assert spec.depths() == {
            "diamond": 4, "drink": 0, "pickaxe": 2, "stone": 3, "table": 1, "wood": 0
        }  # fmt: skip
        assert spec.tech_tree_order() == ("wood", "table", "pickaxe", "stone", "diamond", "drink")
        designs = RuleBasedDesigner(spec, n=3).propose()
        assert [d.purpose for d in designs] == [
            "Practise wood.", "Practise table.", "Practise pickaxe."
        ]  # fmt: skip
        assert [d.config["width"] for d in designs] == [8, 7, 5]

    def test_requirements_must_be_skills_without_cycles(self) -> None:
        base = {"env_id": "x", "name": "x", "description": "", "config_class": MazeConfig}
        cyclic = DesignSpec(
            **base, skills=("a", "b", "c"), requirements={"a": ("b",), "b": ("c",), "c": ("a",)}
        )
        with pytest.raises(ValueError, match="cycle: a -> b -> c -> a"):
            cyclic.depths()
        with pytest.raises(ValueError, match="'a' requires 'z', which is not a skill"):
            DesignSpec(**base, skills=("a",), requirements={"a": ("z",)}).tech_tree_order()

    def test_crafter_first_call_follows_its_recipes(self) -> None:
        """Crafter's depths come from crafter's own recipes (data.yaml), so the first call
        practises wood, table, wood pickaxe and stone rather than the alphabetical coal,
        diamond, drink and iron."""
        need("crafter")
        spec = DesignSpec.from_env_id("llmgym/Crafter-v0")
        depths = spec.depths()
        assert [depths[s] for s in ("collect_wood", "place_table", "make_wood_pickaxe")] == [
            0,
            1,
            2,
        ]
        assert depths["collect_stone"] == depths["collect_coal"] == 3
        assert depths["collect_iron"] == 5 and depths["make_iron_pickaxe"] == 6
        assert max(depths.values()) == depths["collect_diamond"] == 7
        assert depths["eat_cow"] == depths["wake_up"] == depths["collect_drink"] == 0
        designs = RuleBasedDesigner(spec).propose()
        practised = ["collect_wood", "place_table", "make_wood_pickaxe", "collect_stone"]
        assert [d.purpose for d in designs] == [f"Practise {s}." for s in practised]
        assert [d.config for d in designs] == [dict(spec.practice[s]) for s in practised]
        second = RuleBasedDesigner(spec, run=RunLog(None))
        second.propose()
        later = [d.purpose for d in second.propose()]
        assert later == [
            f"Practise {s}."
            for s in ("make_stone_pickaxe", "collect_iron", "make_iron_pickaxe", "collect_diamond")
        ]

    def test_size_curriculum_without_practice_configs(self) -> None:
        designer = RuleBasedDesigner(_spec(), n=2)
        easy = designer.propose(SkillStats({"success": (10.0, 0.0)}))
        hard = designer.propose(SkillStats({"success": (90.0, 0.0)}))
        assert all(d.config["width"] < 6 for d in easy) and all(d.config["width"] > 6 for d in hard)
        for design in easy + hard:
            MazeConfig().merged(design.config)  # valid


class TestMixture:
    def test_ratio_and_uniform_designs(self) -> None:
        designs = [Design("a", {"width": 3}), Design("b", {"width": 4})]
        env = ConfigMixture(gym.make("llmgym/Maze-v0"), designs, ratio=0.3, seed=0)
        counts = Counter(env.reset()[1]["design"] for _ in range(2000))
        share = (counts[0] + counts[1]) / 2000
        assert abs(share - 0.3) < 4 * np.sqrt(0.3 * 0.7 / 2000)
        assert abs(counts[0] - counts[1]) < 4 * np.sqrt(600 * 0.25)
        env.reset()
        for _ in range(20):
            _, info = env.reset()
            width = env.unwrapped.task.config.width
            assert width == {-1: 6, 0: 3, 1: 4}[info["design"]]

    def test_bad_ratio(self) -> None:
        with pytest.raises(ValueError, match="ratio=1.5"):
            ConfigMixture(gym.make("llmgym/Maze-v0"), ratio=1.5)

    def test_vector_env_takes_new_designs_without_restarting_workers(self) -> None:
        vec = make_mixture_vector_env("llmgym/Maze-v0", 2, [Design("a", {"width": 3})], ratio=1.0)
        try:
            workers = [process.pid for process in vec.processes]
            _, info = vec.reset(seed=0)
            assert list(info["design"]) == [0, 0]
            vec.call("set_designs", [Design("b", {"width": 5}), Design("c", {"width": 7})])
            assert vec.get_attr("configs") == ([{"width": 5}, {"width": 7}],) * 2
            _, info = vec.reset()
            assert set(info["design"]) <= {0, 1}
            assert [process.pid for process in vec.processes] == workers
            assert all(process.is_alive() for process in vec.processes)
        finally:
            vec.close()


def test_cli_envgen_offline_with_stats(tmp_path, capsys) -> None:
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps({"success": {"mean": 80.0, "std": 5.0}}))
    assert (
        main(
            ["envgen", "Maze-v0", "--out", str(tmp_path / "run"), "--stats", str(stats), "--n", "3"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.count("Environment ") == 3 and "harder" in out
    saved = json.loads((tmp_path / "run" / "designs.json").read_text())
    assert len(saved) == 3 and all(d["config"]["width"] > 6 for d in saved)


@pytest.mark.parametrize(
    "entry",
    [e for e in llmgym.ENVIRONMENTS if e.available],
    ids=lambda e: e.name,
)
def test_declared_practice_configs_are_valid(entry) -> None:
    try:
        spec = DesignSpec.from_env_id(entry.id)
    except ValueError:
        pytest.skip("no config schema")
    assert set(spec.practice) <= set(spec.skills), "practice configs for undeclared skills"
    for overrides in spec.practice.values():
        spec.config_class().merged(overrides)  # raises ConfigError if invalid
