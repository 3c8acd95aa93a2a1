"""EnvGen designers: the frontier rule on hand-made success rates, EnvGen's Crafter prompt and
reply format against a real local chat server, and exact replay of a recorded design run."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from llmgym.envgen import (
    ConfigMixture,
    Design,
    DesignSpec,
    EnvGenPrompt,
    FrontierDesigner,
    LLMDesigner,
    ReplayDesigner,
    RunLog,
    SkillStats,
    envgen_overrides,
    make_designer,
    prompt_style,
)
from llmgym.envs.maze import MazeConfig
from llmgym.llm import ChatClient
from tests.chat_server import ChatServer
from tests.extras import need

ROOT = Path(__file__).resolve().parent.parent
SKILLS = ("wood", "table", "pickaxe", "stone", "drink", "sword_fight")


def _tree() -> DesignSpec:
    """wood -> table -> pickaxe -> stone; drink alone; sword_fight's world hands over a sword
    that the pickaxe's skill yields."""
    return DesignSpec(
        env_id="x",
        name="x",
        description="",
        skills=SKILLS,
        config_class=MazeConfig,
        practice={s: {"width": w} for w, s in enumerate(SKILLS, 3)},
        requirements={"table": ("wood",), "pickaxe": ("table", "wood"), "stone": ("pickaxe",)},
        practice_requirements={"sword_fight": ("pickaxe",)},
    )


def _rates(**means: float) -> SkillStats:
    return SkillStats({skill: (means.get(skill, 0.0), 1.0) for skill in SKILLS})


class TestFrontierDesigner:
    def test_practises_weak_skills_whose_prerequisites_are_achieved(self) -> None:
        designer = FrontierDesigner(_tree(), n=4)
        choice = designer.choose(_rates(wood=90, table=30, pickaxe=0, stone=0, drink=10))
        # stone is at 0% but its pickaxe is not achieved: out of reach, not chosen; nor is the
        # fight whose world hands over what the pickaxe's skill makes
        assert choice.targets == ("pickaxe", "drink", "table")
        assert choice.blocked == {"stone": ("pickaxe",), "sword_fight": ("pickaxe",)}
        assert choice.learnt == ("wood",)
        designs = designer.propose(_rates(wood=90, table=30, pickaxe=0, stone=0, drink=10))
        # fewer targets than designs: the frontier is repeated, nothing beyond it added
        assert [d.config["width"] for d in designs] == [5, 7, 4, 5]
        assert designs[0].purpose == (
            "Practise pickaxe: the agent succeeds 0% (needs table 30%, wood 90%)."
        )

    def test_a_learnt_skill_is_dropped_and_the_next_ones_come_in(self) -> None:
        designer = FrontierDesigner(_tree(), n=3)
        before = designer.choose(_rates(wood=90, table=30, pickaxe=5, drink=10))
        after = designer.choose(_rates(wood=90, table=60, pickaxe=25, drink=10))
        assert "table" in before.targets and "stone" not in before.targets
        assert "table" in after.learnt and "table" not in after.targets
        assert after.targets == ("stone", "sword_fight", "drink")
        assert after.waiting == ("pickaxe",)  # within reach, but n=3

    def test_first_call_practises_the_roots_and_ties_follow_the_tech_tree(self) -> None:
        designer = FrontierDesigner(_tree(), n=2)
        assert designer.choose(None).targets == ("wood", "drink")
        assert [d.purpose for d in designer.propose()] == [
            "Practise wood: nothing measured yet; it needs no other skill.",
            "Practise drink: nothing measured yet; it needs no other skill.",
        ]

    def test_once_everything_is_learnt_it_practises_the_weakest(self) -> None:
        choice = FrontierDesigner(_tree(), n=2).choose(
            SkillStats({s: (60.0 + i, 0.0) for i, s in enumerate(reversed(SKILLS))})
        )
        assert choice.all_learnt and choice.targets == ("sword_fight", "drink")

    def test_choices_go_to_the_run_log_with_the_reasons(self, tmp_path) -> None:
        designer = FrontierDesigner(_tree(), n=2, run=RunLog(tmp_path))
        designer.propose(_rates(wood=90, table=30, drink=10))
        (event,) = RunLog(tmp_path).events
        choices = event["choices"]
        assert choices == designer.choices
        assert choices["targets"][0] == {
            "skill": "pickaxe",
            "success": 0.0,
            "prerequisites": {"table": 30.0, "wood": 90.0},
        }
        assert choices["blocked"]["stone"] == {"pickaxe": 0.0}
        assert "practise: pickaxe 0% (needs table 30%, wood 90%)" in choices["summary"]
        assert "out of reach (a prerequisite < 20%): stone (pickaxe 0%)" in choices["summary"]

    def test_bad_thresholds_and_specs_without_practice(self) -> None:
        with pytest.raises(ValueError, match="reached_at <= learnt_at"):
            FrontierDesigner(_tree(), reached_at=60, learnt_at=50)
        with pytest.raises(ValueError, match="no skill_practice configs"):
            FrontierDesigner(DesignSpec.from_env_id("llmgym/Maze-v0"))

    def test_crafter_follows_the_stone_age_chain(self) -> None:
        """Hand-made Crafter rates of an agent that places tables and makes wood tools but
        mines little stone: iron and skeletons are out of reach, stone tools are not."""
        need("crafter")
        spec = DesignSpec.from_env_id("llmgym/CrafterSymbolic-v0")
        assert spec.practice_requirements["defeat_skeleton"] == ("make_stone_sword",)
        means = {"collect_wood": 90, "place_table": 80, "make_wood_pickaxe": 60}
        means |= {"make_wood_sword": 55, "collect_stone": 25, "collect_sapling": 95}
        means |= {"place_plant": 90, "collect_drink": 60, "wake_up": 70, "eat_cow": 45}
        stats = SkillStats({s: (float(means.get(s, 0)), 0.0) for s in spec.skills})
        designer = make_designer(spec, "frontier")
        designs = designer.propose(stats)
        choice = designer.choose(stats)
        assert set(choice.targets) <= {
            "collect_coal", "place_stone", "place_furnace", "make_stone_pickaxe",
            "make_stone_sword", "eat_plant", "defeat_zombie",
        }  # fmt: skip
        assert len(choice.targets) == 4 and "collect_stone" in choice.waiting
        for far in ("collect_iron", "make_iron_pickaxe", "collect_diamond", "defeat_skeleton"):
            assert far in choice.blocked
        assert [d.config for d in designs] == [dict(spec.practice[s]) for s in choice.targets]

    def test_heist_follows_its_keys_and_doors(self) -> None:
        """Heist's tech tree: the first call (no rates) practises the roots, the blue key and
        the gem; an agent that holds the blue key but rarely opens its door practises the door,
        and the green key waits behind it."""
        spec = DesignSpec.from_env_id("llmgym/Heist-v0")
        first = FrontierDesigner(spec).choose(None)
        assert first.targets == ("collect_blue_key", "steal_gem")
        stats = SkillStats(
            {s: (m, 0.0) for s, m in zip(spec.skills, (60, 10, 2, 1, 0, 0, 25), strict=True)}
        )
        later = FrontierDesigner(spec).choose(stats)
        assert later.targets == ("open_blue_door", "steal_gem")
        assert later.blocked["collect_green_key"] == ("open_blue_door",)
        for design in FrontierDesigner(spec).propose(stats):
            gym.make("llmgym/Heist-v0", config=design.config).reset(seed=0)


def test_heist_tech_tree_keeps_the_committed_offline_designs() -> None:
    """Declaring Heist's requirements leaves its tech-tree order the declaration order, so the
    offline designer's design is the one the committed Heist runs trained on."""
    spec = DesignSpec.from_env_id("llmgym/Heist-v0")
    assert spec.tech_tree_order() == spec.skills
    committed = ROOT / "benchmarks" / "results" / "envgen" / "paper"
    run = json.loads((committed / "heist-ppo-envgen-offline-heist-seed0.json").read_text())
    designs = make_designer(spec, "offline").propose()
    assert [{"purpose": d.purpose, "config": d.config} for d in designs] == (
        run["cycles"][0]["designs"]
    )


# EnvGen's prompt -------------------------------------------------------------------------------


def _envgen_reply(envs: list[dict], note: str = "") -> str:
    """A reply in EnvGen's format: a header, a fenced block per environment with a ``//``
    comment and Python's ``True``, and the purpose after it."""
    parts = ["Here are the environments.\n"]
    for k, env in enumerate(envs, start=1):
        body = json.dumps(env, indent=4).replace(
            '"environment_settings": {', ('"environment_settings": { // the world')
        )
        parts.append(f"**Environment {k}:**\n```json\n{body}\n```\nPurpose: env {k}. {note}\n")
    return "\n".join(parts)


MOUNTAIN = {
    "environment_settings": {"target_biome": "mountain", "coal_rarity": "very_common"},
    "inventory_settings": {"wood_pickaxe": 1, "wood": 3},
}


class TestEnvGenPrompt:
    def test_style_defaults(self) -> None:
        need("crafter")
        crafter = DesignSpec.from_env_id("llmgym/Crafter-v0")
        maze = DesignSpec.from_env_id("llmgym/Maze-v0")
        assert prompt_style(crafter).name == "envgen"
        assert prompt_style(crafter, "generic").name == "generic"
        assert prompt_style(maze).name == "generic"
        with pytest.raises(ValueError, match="not Crafter"):
            prompt_style(maze, "envgen")
        with pytest.raises(ValueError, match="choose from auto, generic, envgen"):
            prompt_style(maze, "paper")

    def test_reads_several_blocks_comments_and_python_literals(self) -> None:
        need("crafter")
        spec = DesignSpec.from_env_id("llmgym/Crafter-v0")
        grass = {
            "environment_settings": {"target_biome": "grassland", "tree_rarity": "Very Common"},
            "inventory_settings": {},
        }
        reply = _envgen_reply([MOUNTAIN, grass]).replace('"wood": 3', '"wood": 3, "x": True')
        parsed = EnvGenPrompt().parse(reply, spec)
        assert parsed.designs[0] == Design(
            "Purpose: env 2.",
            {"target_biome": "grassland", "tree_rarity": "very common"},
        )
        assert parsed.partial[0].config == {
            "target_biome": "mountain",
            "coal_rarity": "very common",
            "inventory": {"wood_pickaxe": 1, "wood": 3},
        }
        assert parsed.problems == [
            "Environment 1: inventory_settings.x: unknown item; the items are sapling, wood, "
            "stone, coal, iron, diamond, wood_pickaxe, stone_pickaxe, iron_pickaxe, wood_sword, "
            "stone_sword, iron_sword"
        ]

    def test_mapping_clamps_counts_and_names_what_is_not_allowed(self) -> None:
        overrides, problems = envgen_overrides(
            {
                "environment_settings": {"target_biome": "lava", "spawn_zombies": 0},
                "inventory_settings": {"wood": 12, "iron_sword": 2, "stone": 2.5, "coal": -1},
                "notes": "x",
            }
        )
        assert overrides == {"inventory": {"wood": 9, "iron_sword": 1}}
        assert problems == [
            "notes: unknown section; the sections are environment_settings, inventory_settings",
            "environment_settings.target_biome: 'lava' is not allowed; allowed: grassland | "
            "mountain | beaches | natural",
            "environment_settings.spawn_zombies: unknown parameter; the parameters are "
            "target_biome, coal_rarity, iron_rarity, diamond_rarity, tree_rarity",
            "inventory_settings.wood: 12 is outside 0-9; clamped to 9",
            "inventory_settings.iron_sword: 2 is outside 0-1; clamped to 1",
            "inventory_settings.stone: 2.5 is not a whole number in 0-9",
            "inventory_settings.coal: -1 is outside 0-9; clamped to 0",
        ]

    def test_the_papers_conversation_recorded_and_replayed(self, tmp_path) -> None:
        """Call 1: EnvGen's generation prompt. Call 2: its update prompt (scores and the
        previous environments) in a new conversation. Call 3: the short update in the same
        conversation. Out-of-range counts are sent back, then clamped. Every prompt and reply
        is recorded; a replay gives the same designs without a model."""
        need("crafter")
        spec = DesignSpec.from_env_id("llmgym/Crafter-v0")
        too_much = {**MOUNTAIN, "inventory_settings": {"wood_pickaxe": 1, "wood": 30}}
        replies = iter(
            [
                _envgen_reply([MOUNTAIN] * 4),
                _envgen_reply([too_much] * 4),
                _envgen_reply([too_much] * 4, "Same again."),
                _envgen_reply([{"environment_settings": {"target_biome": "beaches"}}] * 4),
            ]
        )
        stats = [
            SkillStats(
                {s: (38.0, 6.0) if s == "collect_coal" else (0.0, 0.0) for s in spec.skills}
            ),
            SkillStats({s: (50.0, 2.4) for s in spec.skills}),
        ]
        with ChatServer(lambda messages: next(replies)) as server:
            designer = LLMDesigner(
                spec,
                ChatClient("gpt-4-1106-preview", base_url=server.base_url),
                repair_rounds=1,
                run=RunLog(tmp_path),
            )
            recorded = [designer.propose(), designer.propose(stats[0]), designer.propose(stats[1])]
            bodies = [request["body"] for request in server.requests]
        first, update, repair, again = (body["messages"] for body in bodies)
        assert all(body["temperature"] == 0.0 for body in bodies)
        assert len(first) == 1 and first[0]["content"].startswith(
            'You are a environment designer agent for a game called "Crafter".\n'
            "Your job is to design four environments"
        )
        text = first[0]["content"]
        assert (
            "Here is a list of things an agent would need to learn how to do:\n"
            + "\n".join(spec.skills)
            + "\n\n"
        ) in text
        assert "target_biome: grassland | mountain | beaches | natural" in text
        assert "coal_rarity: very common | common | rare" in text
        assert "wood_pickaxe: 0-1" in text and "diamond: 0-9" in text
        assert "stone can only be mined with a wood_pickaxe" in text
        assert "You do not need to use every parameter setting" in text
        assert 'Environment 1:\n```json\n{\n    "environment_settings": {' in text
        assert len(update) == 1, "EnvGen's first update starts a new conversation"
        assert "collect_coal: 38% +/- 6%\ncollect_diamond: 0% +/- 0%" in update[0]["content"]
        assert (
            "Here is the set of environments that the agent learned the above tasks in:\n"
            'Environment 1:\n```json\n{\n    "environment_settings": {\n'
            '        "target_biome": "mountain",\n        "coal_rarity": "very common"\n'
        ) in update[0]["content"]
        assert "Environment 4:" in update[0]["content"]
        assert "wake up achievement" in update[0]["content"]
        assert [m["role"] for m in repair] == ["user", "assistant", "user"]
        assert "inventory_settings.wood: 30 is outside 0-9; clamped to 9" in repair[-1]["content"]
        assert [m["role"] for m in again] == ["user", "assistant", "user", "assistant", "user"]
        assert again[-1]["content"].startswith(
            "Those environments resulted in the agent improving up to these scores: \n"
            "collect_coal: 50% +/- 2%\n"
        )
        assert again[-1]["content"].endswith(
            "Could you generate new environments based on these scores?\n"
        )
        # after the repair round the model repeated itself: its counts were clamped
        assert recorded[1][0].config["inventory"] == {"wood_pickaxe": 1, "wood": 9}
        assert recorded[2][0].config == {"target_biome": "beaches"}

        events = RunLog(tmp_path).events
        assert [e["event"] for e in events].count("prompt") == 4
        replies_logged = [e for e in events if e["event"] == "reply"]
        assert len(replies_logged) == 4 and replies_logged[0]["model"] == "gpt-4-1106-preview"
        assert replies_logged[0]["params"] == {"temperature": 0.0}
        assert [e["content"] for e in events if e["event"] == "prompt"] == [
            m[-1]["content"] for m in (first, update, repair, again)
        ]
        resumed = LLMDesigner(
            spec, ChatClient("m", base_url="http://127.0.0.1:9"), run=RunLog(tmp_path)
        )
        assert resumed.messages == [
            *again,
            {"role": "assistant", "content": replies_logged[-1]["content"]},
        ]

        replay = ReplayDesigner(spec, tmp_path)
        replayed = [replay.propose(), replay.propose(stats[0]), replay.propose(stats[1])]
        assert replayed == recorded and replay.source == "llm"


# Replay ----------------------------------------------------------------------------------------

RECORDED = [
    [
        {
            "purpose": "mine",
            "config": {"target_biome": "mountain", "inventory": {"wood_pickaxe": 1}},
        },
        {"purpose": "trees", "config": {"target_biome": "grassland", "tree_rarity": "very common"}},
    ],
    [
        {"purpose": "water", "config": {"target_biome": "beaches", "zombie_density": 0.0}},
        {"purpose": "iron", "config": {"iron_rarity": 0.5, "inventory": {"stone_pickaxe": 1}}},
    ],
]


def test_a_design_folder_written_by_hand_replays_exactly(tmp_path) -> None:
    """The recorded format (``events.jsonl``) written here, replayed: the designs are the
    recorded configs, and environments made from them in the training mixture start exactly
    as environments made from the recorded configs directly (the same seed, the same first
    observation)."""
    need("crafter")
    folder = tmp_path / "run" / "designer"
    folder.mkdir(parents=True)
    events = [
        {"event": "designs", "call": call, "designer": "llm", "stats": None, "designs": designs}
        for call, designs in enumerate(RECORDED)
    ]
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    spec = DesignSpec.from_env_id("llmgym/CrafterSymbolic-v0")
    replay = make_designer(spec, f"replay:{tmp_path / 'run'}", n=2)  # the run's folder works too
    replayed = [replay.propose(), replay.propose(SkillStats({}))]
    assert [[d.to_dict() for d in call] for call in replayed] == RECORDED
    assert replay.propose() == replayed[-1], "past the record: the last designs"

    starts = []
    for call, designs in enumerate(replayed):
        mixture = ConfigMixture(gym.make(spec.env_id), designs, ratio=1.0, seed=call)
        for seed in (5, 6, 7):
            observation, info = mixture.reset(seed=seed)
            recorded = RECORDED[call][info["design"]]["config"]
            direct = gym.make(spec.env_id, config=recorded)
            expected, _ = direct.reset(seed=seed)
            assert np.array_equal(observation, expected)
            config = mixture.unwrapped.task.config
            assert config == direct.unwrapped.task.config
            assert all(getattr(config, key) == value for key, value in recorded.items())
            starts.append(observation)
    assert len({o.tobytes() for o in starts}) > 1, "different designs make different worlds"

    with pytest.raises(ValueError, match="no recorded design run"):
        ReplayDesigner(spec, tmp_path / "empty")
