"""Chat history, instruction sampling and trajectory recording."""

from __future__ import annotations

import json
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec

from llmgym import TextEnv
from llmgym.envgen import ConfigMixture
from llmgym.runner.trajectories import (
    SCHEMA,
    Trajectory,
    read_trajectories,
    to_conversations,
    to_messages,
)
from llmgym.wrappers import (
    ChatHistory,
    HorizonCurriculum,
    HorizonLimit,
    InstructionSampler,
    OracleHint,
    ReActWrapper,
    RecordTrajectory,
    make_chat_env,
)


def _oracle_reply(env: gym.Env) -> str:
    return f"Thought: plan\nAction: {env.unwrapped.oracle_action()}"


class TestChatHistory:
    def test_messages_alternate_and_start_with_system_and_task(self) -> None:
        env = make_chat_env("llmgym/Maze-v0")
        _, info = env.reset(seed=0)
        messages = info["messages"]
        assert [m["role"] for m in messages] == ["system", "user"]
        assert messages[0]["content"] == info["system_prompt"]
        assert info["instruction"] in messages[1]["content"]
        reply = _oracle_reply(env)
        _, _, _, _, info = env.step(reply)
        assert [m["role"] for m in info["messages"]] == ["system", "user", "assistant", "user"]
        assert info["messages"][2]["content"] == reply
        assert info["messages"][3]["content"] == info["env_observation"]

    def test_window_keeps_task_and_last_turns(self) -> None:
        env = make_chat_env("llmgym/Maze-v0", history_window=2, max_format_errors=None)
        env.reset(seed=0)
        for i in range(5):
            *_, info = env.step(f"garbage {i}")
        roles = [m["role"] for m in info["messages"]]
        assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
        assert info["messages"][-2]["content"] == "garbage 4"
        assert info["messages"][2]["content"] == "garbage 3"

    def test_window_zero_and_messages_are_copies(self) -> None:
        env = ChatHistory(ReActWrapper(gym.make("llmgym/Maze-v0")), window=0)
        _, info = env.reset(seed=0)
        info["messages"].append({"role": "user", "content": "tamper"})
        *_, info = env.step("x")
        assert len(info["messages"]) == 2

    def test_without_react_uses_rules(self) -> None:
        env = ChatHistory(gym.make("llmgym/Wordle-v0"))
        _, info = env.reset(seed=0)
        assert info["messages"][0]["content"] == env.unwrapped.rules()

    def test_negative_window_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="window=-1"):
            ChatHistory(gym.make("llmgym/Maze-v0"), window=-1)


class TestInstructionSampler:
    def test_draws_from_the_split_reproducibly(self) -> None:
        def draws(seed: int) -> list[str]:
            env = InstructionSampler(gym.make("llmgym/TextCraft-v0"), split="eval", seed=seed)
            return [env.reset()[1]["task_id"] for _ in range(20)]

        first = draws(1)
        assert first == draws(1) and first != draws(2)
        assert all(task_id.startswith("eval/") for task_id in first)

    def test_reset_seed_reseeds(self) -> None:
        env = InstructionSampler(gym.make("llmgym/Maze-v0"), split="train")
        a = [env.reset(seed=4)[1]["task_id"]] + [env.reset()[1]["task_id"] for _ in range(3)]
        b = [env.reset(seed=4)[1]["task_id"]] + [env.reset()[1]["task_id"] for _ in range(3)]
        assert a == b

    def test_weights_follow_the_distribution_and_can_change(self) -> None:
        env = InstructionSampler(gym.make("llmgym/Wordle-v0"), split="train", seed=0)
        ids = list(env.task_ids[:3])
        env.set_weights({ids[0]: 1.0, ids[1]: 3.0})
        counts = Counter(env.reset()[1]["task_id"] for _ in range(4000))
        assert set(counts) == {ids[0], ids[1]}
        share = counts[ids[1]] / 4000
        assert abs(share - 0.75) < 4 * np.sqrt(0.75 * 0.25 / 4000)  # within 4 standard errors
        env.set_weights({ids[2]: 1.0})
        assert {env.reset()[1]["task_id"] for _ in range(20)} == {ids[2]}
        env.set_weights(None)
        assert len({env.reset()[1]["task_id"] for _ in range(50)}) > 20

    def test_explicit_task_id_wins(self) -> None:
        env = InstructionSampler(gym.make("llmgym/Maze-v0"), split="train", seed=0)
        assert env.reset(options={"task_id": "eval/00003"})[1]["task_id"] == "eval/00003"

    @pytest.mark.parametrize(
        ("weights", "message"),
        [
            ({"eval/00000": 1.0}, "outside"),
            ([1.0, 2.0], "one entry per task"),
            ({"train/00000": 0.0}, "not all zero"),
        ],
    )
    def test_bad_weights(self, weights, message) -> None:
        env = InstructionSampler(gym.make("llmgym/Maze-v0"), split="train")
        with pytest.raises(ValueError, match=message):
            env.set_weights(weights)


class TestRecordTrajectory:
    def _play(self, path, episodes: int = 2, react: bool = True) -> None:
        env = RecordTrajectory(make_chat_env("llmgym/Wordle-v0", react=react), path, agent="oracle")
        for seed in range(episodes):
            env.reset(seed=seed, options={"split": "eval"})
            env.step("this reply has no action")
            while True:
                *_, terminated, truncated, _ = env.step(_oracle_reply(env))
                if terminated or truncated:
                    break

    def test_schema_and_round_trip(self, tmp_path) -> None:
        path = tmp_path / "traj.jsonl"
        self._play(path)
        lines = path.read_text().splitlines()
        assert len(lines) == 2
        record = json.loads(lines[0])
        assert record["schema"] == SCHEMA and record["env_id"] == "llmgym/Wordle-v0"
        assert record["split"] == "eval" and record["seed"] == 0 and record["agent"] == "oracle"
        assert record["config"] == {
            "word_length": 5,
            "max_guesses": 6,
            "hard_mode": False,
            "feedback": "verbose",
            "candidates": 0,
        }
        assert record["success"] and record["total_reward"] == 1.0 and record["terminated"]
        first, second = record["turns"][:2]
        assert (
            first["format_error"]
            and first["action"] is None
            and first["reply"] == "this reply has no action"
        )
        assert second["thought"] == "plan" and second["action"] and not second["format_error"]
        assert "Format error" in second["observation"]
        trajectories = list(read_trajectories(path))
        assert [t.to_dict() for t in trajectories] == [json.loads(line) for line in lines]
        assert (
            trajectories[0].format_errors == 1 and trajectories[0].steps == len(record["turns"]) - 1
        )

    def test_messages_and_conversations(self, tmp_path) -> None:
        path = tmp_path / "traj.jsonl"
        self._play(path, episodes=1)
        trajectory = next(read_trajectories(path))
        messages = to_messages(trajectory)["messages"]
        assert messages[0] == {"role": "system", "content": trajectory.system_prompt}
        assert [m["role"] for m in messages[1:]] == ["user", "assistant"] * len(trajectory.turns)
        assert messages[2]["content"] == trajectory.turns[0].reply
        assert trajectory.instruction in messages[1]["content"]
        conversations = to_conversations(trajectory)
        assert conversations["item_id"] == f"wordle_{trajectory.task_id}"
        turns = conversations["conversations"]
        assert turns[0]["from"] == "human" and turns[1]["loss"] is False
        assert [t["loss"] for t in turns[3::2]] == [True] * len(trajectory.turns)

    def test_the_same_prompts_as_the_live_loop(self, tmp_path) -> None:
        """Messages rebuilt from a file equal what ChatHistory showed the agent."""
        path = tmp_path / "traj.jsonl"
        env = RecordTrajectory(make_chat_env("llmgym/Maze-v0"), path)
        _, info = env.reset(seed=3)
        while True:
            reply = _oracle_reply(env)
            *_, terminated, truncated, next_info = env.step(reply)
            if terminated or truncated:
                break
            info = next_info
        live = [*info["messages"], {"role": "assistant", "content": reply}]
        assert to_messages(next(read_trajectories(path)))["messages"] == live

    def test_truncated_last_line_is_skipped_and_other_schemas_rejected(self, tmp_path) -> None:
        path = tmp_path / "traj.jsonl"
        self._play(path, episodes=1)
        with open(path, "a") as handle:
            handle.write('{"schema": "llmgym.traj')
        assert len(list(read_trajectories(path))) == 1
        with pytest.raises(ValueError, match="not an llmgym.trajectory.v1"):
            Trajectory.from_dict({"schema": "other"})


def _first_step(env: gym.Env) -> str:
    """The reset and first oracle step of ``env``, as text that differs when any part does."""
    observation, info = env.reset(seed=0)
    *step, step_info = env.step(_oracle_reply(env))
    return json.dumps([observation, info, step, step_info], sort_keys=True, default=repr)


# each llmgym wrapper with non-default arguments, and whether they are JSON (a spec's to_json)
WRAPPER_CASES = [
    (ChatHistory, {"window": 2}, True),
    (
        ReActWrapper,
        {"react": False, "format_penalty": -0.5, "max_format_errors": 5, "include_example": False},
        True,
    ),
    (
        InstructionSampler,
        {
            "split": "eval",
            "seed": 3,
            "weights": [1.0, 3.0],
            "task_ids": ["eval/00001", "eval/00002"],
        },
        True,
    ),
    (OracleHint, {}, True),
    (RecordTrajectory, {"path": "trajectories.jsonl", "agent": "tester", "frames": False}, True),
    (ConfigMixture, {"designs": [{"width": 6, "height": 5}], "ratio": 1.0, "seed": 1}, True),
    (HorizonLimit, {"curriculum": HorizonCurriculum([(0, 2), (3, 4)], unit="episode")}, False),
]


class TestSpec:
    """Each wrapper records its arguments in ``env.spec`` as gymnasium's own wrappers do."""

    @pytest.mark.parametrize(
        ("wrapper", "kwargs", "serialisable"),
        WRAPPER_CASES,
        ids=[wrapper.__name__ for wrapper, _, _ in WRAPPER_CASES],
    )
    def test_spec_lists_the_wrapper_and_remakes_it(
        self, wrapper: type[gym.Wrapper], kwargs: dict, serialisable: bool, tmp_path, monkeypatch
    ) -> None:
        monkeypatch.chdir(tmp_path)  # RecordTrajectory writes there
        inner = gym.make("llmgym/Maze-v0", width=5)
        env = wrapper(inner, **kwargs)
        spec = env.spec
        assert spec is not None and spec.id == "llmgym/Maze-v0" and spec.kwargs == {"width": 5}
        recorded = spec.additional_wrappers[-1]
        assert recorded.name == wrapper.__name__
        assert recorded.entry_point == f"{wrapper.__module__}:{wrapper.__name__}"
        if wrapper is HorizonLimit:
            assert recorded.kwargs["curriculum"].describe() == kwargs["curriculum"].describe()
            assert recorded.kwargs["curriculum"] is not kwargs["curriculum"]  # a copy
        else:
            assert recorded.kwargs == kwargs
        remade = gym.make(spec)
        assert type(remade) is wrapper
        assert _first_step(remade) == _first_step(env)
        if serialisable:
            from_json = gym.make(EnvSpec.from_json(spec.to_json()))
            assert type(from_json) is wrapper
            assert _first_step(from_json) == _first_step(env)
        else:
            with pytest.raises(TypeError, match="HorizonCurriculum is not JSON serializable"):
                spec.to_json()

    def test_the_chat_stack_round_trips_through_json(self) -> None:
        env = OracleHint(make_chat_env("llmgym/Maze-v0", react=False, history_window=1))
        names = [w.name for w in env.spec.additional_wrappers]
        assert names == ["ReActWrapper", "ChatHistory", "OracleHint"]
        remade = gym.make(EnvSpec.from_json(env.spec.to_json()))
        assert str(remade) == str(env)
        assert _first_step(remade) == _first_step(env)


class TestTextEnvAccess:
    def test_a_wrapper_around_a_non_llmgym_env_says_what_it_needs(self) -> None:
        with pytest.raises(TypeError, match=r"^InstructionSampler needs an llmgym environment"):
            InstructionSampler(gym.make("CartPole-v1"))
        env = OracleHint(gym.make("CartPole-v1"))
        with pytest.raises(TypeError, match=r"^OracleHint needs .* CartPoleEnv is not one"):
            env.reset(seed=0)

    def test_text_env_is_the_environment_inside_every_wrapper(self) -> None:
        env = ChatHistory(ReActWrapper(OracleHint(gym.make("llmgym/Maze-v0"))))
        assert env.text_env is env.unwrapped
        assert isinstance(env.text_env, TextEnv)
