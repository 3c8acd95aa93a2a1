"""The core contract: configs, task ids, the portable RNG, text handling, registration."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from dataclasses import dataclass

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded

import llmgym
from llmgym.core import (
    EnvConfig,
    ResetInfo,
    StepInfo,
    TaskIdRange,
    TaskRng,
    knob,
    split_of,
    unwrapped_text_env,
)
from llmgym.core.registry import EnvEntry, register_entries
from llmgym.core.text import CHARSET, clip_text, normalize_command, quote_action, sanitize_text
from llmgym.envs.maze import MazeConfig
from llmgym.errors import ConfigError, MissingDependencyError


@dataclasses.dataclass(frozen=True)
class InnerConfig(EnvConfig):
    level: int = knob(1, low=0, high=3, doc="A level.")


@dataclasses.dataclass(frozen=True)
class SampleConfig(EnvConfig):
    """A config exercising every kind of knob."""

    count: int = knob(5, low=1, high=9, doc="How many.")
    ratio: float = knob(0.5, low=0.0, high=1.0)
    mode: str = knob("easy", choices=("easy", "hard"))
    rarity: str | float = knob("common", choices=("rare", "common"), low=0.0, high=1.0)
    flag: bool = knob(False)
    inventory: dict[str, int] = knob(default_factory=dict, choices=("wood", "stone"), low=0, high=9)
    inner: InnerConfig = knob(default_factory=InnerConfig)


class TestConfig:
    def test_defaults_and_coercion(self) -> None:
        config = SampleConfig.coerce({"count": 7.0, "ratio": 1})
        assert config.count == 7 and isinstance(config.count, int)
        assert config.ratio == 1.0 and isinstance(config.ratio, float)
        assert SampleConfig.coerce(None) == SampleConfig()

    @pytest.mark.parametrize(
        ("overrides", "field", "words"),
        [
            ({"count": 10}, "SampleConfig.count", "[1, 9]"),
            ({"count": 2.5}, "SampleConfig.count", "not an integer"),
            ({"count": True}, "SampleConfig.count", "not allowed"),
            ({"ratio": float("nan")}, "SampleConfig.ratio", "finite"),
            ({"mode": "medium"}, "SampleConfig.mode", "'easy', 'hard'"),
            ({"rarity": 2.0}, "SampleConfig.rarity", "'rare', 'common' or a number in [0.0, 1.0]"),
            ({"rarity": "very rare"}, "SampleConfig.rarity", "not allowed"),
            ({"flag": "yes"}, "SampleConfig.flag", "true or false"),
            (
                {"inventory": {"gold": 1}},
                "SampleConfig.inventory.gold",
                "allowed keys: wood, stone",
            ),
            ({"inventory": {"wood": 12}}, "SampleConfig.inventory.wood", "[0, 9]"),
            ({"inner": {"level": 5}}, "SampleConfig.inner.level", "[0, 3]"),
            ({"cuont": 3}, "SampleConfig.cuont", "unknown field"),
        ],
    )
    def test_errors_name_field_value_and_range(self, overrides, field, words) -> None:
        with pytest.raises(ConfigError) as error:
            SampleConfig.from_dict(overrides)
        assert error.value.field == field
        assert words in str(error.value)

    def test_merged_is_partial_and_recursive(self) -> None:
        config = SampleConfig().merged({"inner": {"level": 2}, "mode": "hard"})
        assert config.inner.level == 2 and config.mode == "hard" and config.count == 5
        with pytest.raises(ConfigError, match="unknown field"):
            SampleConfig().merged({"nope": 1})

    def test_json_schema(self) -> None:
        schema = SampleConfig.json_schema()
        props = schema["properties"]
        assert schema["additionalProperties"] is False
        assert props["count"] == {
            "type": "integer",
            "minimum": 1,
            "maximum": 9,
            "default": 5,
            "description": "How many.",
        }
        assert props["mode"]["enum"] == ["easy", "hard"]
        assert {"enum": ["rare", "common"]} in props["rarity"]["anyOf"]
        assert props["flag"]["type"] == "boolean"
        assert props["inventory"]["propertyNames"] == {"enum": ["wood", "stone"]}
        assert props["inner"]["properties"]["level"]["maximum"] == 3
        assert schema["description"] == "A config exercising every kind of knob."

    def test_round_trip(self) -> None:
        config = SampleConfig(inventory={"wood": 3}, rarity=0.25)
        assert SampleConfig.from_dict(config.to_dict()) == config


class TestTasks:
    def test_rng_is_portable(self) -> None:
        # Pinned outputs: changing them changes every task instance of every environment.
        rng = TaskRng("golden", "eval/00000")
        assert [rng.randint(0, 999) for _ in range(5)] == GOLDEN_RNG
        rng = TaskRng("golden", 7)
        assert rng.sample(list("abcdefgh"), 3) == GOLDEN_SAMPLE

    def test_rng_helpers(self) -> None:
        rng = TaskRng("x")
        values = [rng.random() for _ in range(1000)]
        assert min(values) >= 0 and max(values) < 1
        items = list(range(10))
        rng.shuffle(items)
        assert sorted(items) == list(range(10))
        assert rng.weighted_choice(["a", "b"], [0, 1]) == "b"
        with pytest.raises(ValueError):
            rng.sample([1, 2], 3)

    def test_task_id_range(self) -> None:
        ids = TaskIdRange("eval", 3)
        assert list(ids) == ["eval/00000", "eval/00001", "eval/00002"]
        assert ids[-1] == "eval/00002" and ids[1:] == ["eval/00001", "eval/00002"]
        assert "eval/00002" in ids and "eval/00003" not in ids and "train/00000" not in ids
        assert "eval/2" not in ids and "eval/000002" not in ids and ids.index_of("eval/2") is None
        assert ids.count("eval/00001") == 1 and ids.count("eval/1") == 0 and len(ids) == 3
        assert ids.index("eval/00002") == 2

    def test_split_of_is_stable(self) -> None:
        assert split_of("abc") == split_of("abc")
        share = sum(split_of(str(i)) == "eval" for i in range(4000)) / 4000
        assert 0.17 < share < 0.23


GOLDEN_RNG = [522, 607, 260, 601, 184]
GOLDEN_SAMPLE = ["a", "c", "b"]


class TestText:
    def test_sanitize_replaces_outside_charset(self) -> None:
        assert sanitize_text("plain text.") == "plain text."
        assert sanitize_text("a\x00b🙂") == "a\ufffdb\ufffd"
        assert all(c in CHARSET for c in sanitize_text("".join(map(chr, range(0, 0x3000)))))

    def test_clip(self) -> None:
        clipped = clip_text("x" * 100, 50)
        assert len(clipped) == 50 and clipped.endswith("truncated]")

    def test_normalize_command(self) -> None:
        assert normalize_command("  **Move   UP.** \n") == "move up"
        assert normalize_command("x" * 2000) == ""
        assert normalize_command("get\x002 logs") == "get 2 logs"

    def test_quote_action_is_short_and_safe(self) -> None:
        quoted = quote_action("\x1b[31m" + "a" * 500)
        assert len(quoted) < 80 and "\x1b" not in quoted
        assert quote_action(None) == "<NoneType>"


class TestEnvContract:
    def test_step_before_reset_and_after_end(self) -> None:
        env = gym.make("llmgym/Maze-v0", width=2, height=2).unwrapped
        with pytest.raises(ResetNeeded):
            env.step("move up")
        env.reset(seed=0)
        while True:
            *_, terminated, _, _ = env.step(env.oracle_action())
            if terminated:
                break
        with pytest.raises(ResetNeeded):
            env.step("move up")

    def test_reset_options_are_checked(self) -> None:
        env = gym.make("llmgym/Maze-v0")
        with pytest.raises(ValueError, match="unknown key 'level'"):
            env.reset(options={"level": 3})
        with pytest.raises(ValueError, match="split='test'"):
            env.reset(options={"split": "test"})
        with pytest.raises(ValueError, match="not a task"):
            env.reset(options={"task_id": "eval/99999999"})
        with pytest.raises(ValueError, match="belongs to split 'eval'"):
            env.reset(options={"task_id": "eval/00001", "split": "train"})
        with pytest.raises(ConfigError, match="MazeConfig.width"):
            env.reset(options={"config": {"width": 100}})

    def test_config_per_episode_and_make_kwargs(self) -> None:
        env = gym.make("llmgym/Maze-v0", width=3)
        assert env.unwrapped.config == MazeConfig(width=3)
        env.reset(seed=0, options={"config": {"observability": "full"}})
        assert env.unwrapped.task.config.observability == "full"
        env.reset(seed=0)
        assert env.unwrapped.task.config == MazeConfig(width=3)
        with pytest.raises(ConfigError, match="MazeConfig.colour"):
            gym.make("llmgym/Maze-v0", colour="red")

    def test_a_failed_reset_leaves_the_env_usable(self) -> None:
        env = gym.make("llmgym/Maze-v0")
        with pytest.raises(ValueError):
            env.reset(options={"split": "bogus"})
        env.reset(seed=0)
        assert env.step("move up")[4]["invalid_action"] in (True, False)

    def test_seed_picks_task_and_sequence(self) -> None:
        env = gym.make("llmgym/Maze-v0")
        first = [env.reset(seed=5)[1]["task_id"], env.reset()[1]["task_id"]]
        second = [env.reset(seed=5)[1]["task_id"], env.reset()[1]["task_id"]]
        assert first == second and first[0] != first[1]

    def test_info_keys_are_those_of_the_typed_dicts(self) -> None:
        assert ResetInfo.__required_keys__ == {
            "instruction",
            "task_id",
            "split",
            "success",
            "invalid_action",
        }
        assert StepInfo.__required_keys__ == {"success", "invalid_action"}
        assert ResetInfo.__optional_keys__ == StepInfo.__optional_keys__ == {"admissible_actions"}
        env = gym.make("llmgym/Maze-v0")  # lists its admissible actions
        _, info = env.reset(seed=0)
        assert set(info) == ResetInfo.__required_keys__ | ResetInfo.__optional_keys__
        *_, info = env.step("move up")
        assert set(info) == StepInfo.__required_keys__ | StepInfo.__optional_keys__

    def test_unwrapped_text_env_names_who_needs_it(self) -> None:
        env = gym.make("llmgym/Maze-v0")
        assert unwrapped_text_env(env) is env.unwrapped
        with pytest.raises(TypeError) as caught:
            unwrapped_text_env(gym.make("CartPole-v1"), "MyWrapper")
        message = str(caught.value)
        assert message.startswith("MyWrapper needs an llmgym environment")
        assert "CartPoleEnv is not one: it lacks admissible_actions, " in message

    @pytest.mark.filterwarnings("ignore:.*render_mode")
    def test_render_modes(self) -> None:
        env = gym.make("llmgym/Maze-v0", render_mode="ansi")
        observation, _ = env.reset(seed=0)
        assert env.render() == observation
        with pytest.raises(ValueError, match="render_mode='rgb_array'"):
            gym.make("llmgym/Maze-v0", render_mode="rgb_array")


class TestRegistry:
    def test_every_entry_is_registered(self) -> None:
        for entry in llmgym.ENVIRONMENTS:
            assert gym.spec(entry.id).entry_point == entry.entry_point

    def test_make_with_module_prefix_in_a_fresh_interpreter(self) -> None:
        code = (
            "import gymnasium as gym; e = gym.make('llmgym:llmgym/Maze-v0'); "
            "print(e.reset(seed=0)[1]['task_id'])"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip().startswith("train/")

    def test_missing_extra_names_the_pip_command(self) -> None:
        entry = EnvEntry(
            id="llmgym/NeedsExtra-v0",
            entry_point="tests.missing_extra_env:Env",
            max_episode_steps=None,
            summary="test",
            extra="fancy",
            requires=("a_module_that_does_not_exist",),
        )
        register_entries((entry,))
        assert not entry.available and entry.install_hint == "pip install -e '.[fancy]'"
        with pytest.raises(
            MissingDependencyError, match=r"clone with: pip install -e '\.\[fancy\]'$"
        ):
            gym.make("llmgym/NeedsExtra-v0")


def test_task_id_sets_kept_per_config_are_bounded() -> None:
    from llmgym import EnvConfig, TextEnv, Transition, knob

    @dataclass(frozen=True)
    class SizeConfig(EnvConfig):
        size: int = knob(3, low=1, high=1000, doc="Tasks per split.")

    class ListedTasks(TextEnv[SizeConfig]):
        """Tasks listed one by one (no TaskIdRange), so the base class keeps their id sets."""

        config_class = SizeConfig

        def task_ids(self, split="train", config=None):
            return [f"{split}/{i:05d}" for i in range((config or self.config).size)]

        def _reset_task(self, task):
            return f"task {task.task_id}", "say done"

        def _step(self, action):
            return Transition("ok", terminated=True, success=True)

        def oracle_action(self):
            return "done"

    env = ListedTasks()
    for size in range(1, 21):  # twenty configs a client might send, each its own id set
        env.reset(options={"task_id": "train/00000", "config": {"size": size}})
    assert 1 <= len(env._task_id_sets) <= 8
