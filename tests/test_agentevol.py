"""The AgentEvol reference pipeline (benchmarks/agentevol.py) end to end at tiny scale, and its
learning-data construction."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.extras import need

need("trl")

from llmgym.agents import OracleAgent, RandomAgent
from llmgym.runner.rollout import rollout
from llmgym.runner.trajectories import to_messages

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "agentevol.py"
spec = importlib.util.spec_from_file_location("agentevol", SCRIPT)
agentevol = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agentevol)


@pytest.fixture(scope="module")
def trajectories():
    expert = rollout("llmgym/Maze-v0", OracleAgent(), split="train", episodes=4, progress=False)
    collected = rollout(
        "llmgym/Maze-v0",
        RandomAgent(seed=0),
        split="train",
        episodes=12,
        seed=100,
        progress=False,
        make_kwargs={"config": {"width": 3, "height": 3, "step_limit": 10}},
    )
    return expert, collected


def test_learning_set_is_expert_plus_successful_collected(trajectories) -> None:
    expert, collected = trajectories
    assert {t.success for t in collected} == {True, False}, "need both outcomes"
    bc = agentevol.weighted_learning_set(expert, [], seed=0)
    learn = agentevol.weighted_learning_set(expert, collected, seed=0)
    assert [e["source"] for e in bc] == ["expert"] * len(expert)
    kept = [e for e in learn if e["source"] == "collected"]
    assert len(kept) == sum(t.success for t in collected) > 0
    assert {e["task"] for e in kept} == {f"{t.env_id}:{t.task_id}" for t in collected if t.success}
    assert [e["messages"] for e in learn if e["source"] == "expert"] == [e["messages"] for e in bc]
    assert learn != bc


def test_fractional_rewards_are_kept_with_that_probability(trajectories) -> None:
    _, collected = trajectories
    template = collected[0]
    partial = []
    for i in range(400):
        clone = type(template).from_dict(
            {**template.to_dict(), "task_id": f"train/{i:05d}", "total_reward": 0.25}
        )
        partial.append(clone)
    kept = sum(
        e["source"] == "collected" for e in agentevol.weighted_learning_set([], partial, seed=1)
    )
    assert 100 - 4 * (400 * 0.25 * 0.75) ** 0.5 < kept < 100 + 4 * (400 * 0.25 * 0.75) ** 0.5


def test_preference_pairs_share_the_prompt(trajectories) -> None:
    expert, collected = trajectories
    failed = [t for t in collected if not t.success]
    same_task = [
        type(f).from_dict({**f.to_dict(), "task_id": expert[0].task_id}) for f in failed[:1]
    ]
    pairs = agentevol.preference_pairs([expert[0], *same_task])
    assert len(pairs) == 1
    pair = pairs[0]
    assert pair["prompt"][0]["role"] == "system" and pair["chosen"][0]["role"] == "assistant"
    assert (
        pair["chosen"] == to_messages(expert[0])["messages"][2:]
        and pair["chosen"] != pair["rejected"]
    )


@pytest.mark.slow
@pytest.mark.parametrize("dpo", [False, True], ids=["sft", "dpo"])
def test_pipeline_end_to_end_at_tiny_scale(tmp_path, dpo: bool) -> None:
    argv = [
        "--envs", "llmgym/Maze-v0", "--config", '{"width": 2, "height": 2, "step_limit": 6}',
        "--bc-tasks", "4", "--explore-tasks", "6", "--k", "2", "--iterations", "1",
        "--eval-tasks", "2", "--max-new-tokens", "16", "--layers", "1", "--hidden-size", "32",
        "--vocab-size", "400", "--epochs", "1", "--max-length", "1024", "--temperature", "1.5",
        "--out", str(tmp_path), "--no-copy", "--quiet",
    ]  # fmt: skip
    assert agentevol.main(argv + (["--dpo"] if dpo else [])) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert [s["name"] for s in results["stages"]] == ["bc", "iter1"]
    assert results["expert_trajectories"] == 4 and (tmp_path / "success.png").stat().st_size > 1000
    iteration = results["stages"][1]
    assert iteration["explored"] == 12
    assert ("preference_pairs" in iteration) is dpo
    for stage in results["stages"]:
        assert 0.0 <= stage["eval_success"]["llmgym/Maze-v0"] <= 1.0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--k", "0"], "argument --k: 0 is outside the allowed range [1, inf)"),
        (["--learning-rate", "-1"], "argument --learning-rate: -1 is outside the allowed range"),
        (["--hidden-size", "130"], "--hidden-size: 130 is not a multiple of the model's 4"),
    ],
)
def test_a_bad_knob_is_named_with_what_it_takes(flags, message, capsys) -> None:
    with pytest.raises(SystemExit):
        agentevol.parse_args(flags)
    assert message in capsys.readouterr().err
