"""EnvGen's reference training script (benchmarks/envgen_crafter.py) end to end at tiny scale."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.extras import need

need("stable_baselines3")
need("crafter")

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "envgen_crafter.py"
spec = importlib.util.spec_from_file_location("envgen_crafter", SCRIPT)
envgen_crafter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(envgen_crafter)

TINY = [
    "--cycles", "2", "--gen-steps", "64", "--orig-steps", "64", "--final-steps", "128",
    "--num-envs", "2", "--n-steps", "32", "--eval-episodes", "2", "--length", "40", "--quiet",
]  # fmt: skip


@pytest.mark.slow
def test_crafter_with_the_offline_designer(tmp_path) -> None:
    assert envgen_crafter.main([*TINY, "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["designer"] == "offline" and len(results["cycles"]) == 2
    assert len(results["skills"]) == 22 and results["total_steps"] == 2 * 128 + 128
    first, second = (cycle["designs"] for cycle in results["cycles"])
    assert len(first) == 4 and all(d["purpose"].startswith("Practise") for d in first)
    assert all("succeeds" in d["purpose"] for d in second), "the second designs read the stats"
    assert 0.0 <= results["final"]["score"] <= 100.0 and results["final"]["episodes"] >= 2
    events = [
        json.loads(line)
        for line in (tmp_path / "designer" / "events.jsonl").read_text().splitlines()
    ]
    assert [e["event"] for e in events] == ["designs", "designs"]
    assert (tmp_path / "success.png").stat().st_size > 1000


@pytest.mark.slow
def test_heist_baseline_without_designer(tmp_path) -> None:
    argv = [*TINY, "--env", "llmgym/HeistPixels-v0", "--designer", "none", "--out", str(tmp_path)]
    assert envgen_crafter.main(argv) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["designer"] == "none" and all(
        cycle["designs"] == [] for cycle in results["cycles"]
    )
    assert set(results["final"]["success"]) == set(results["skills"])
    assert not (tmp_path / "designer").exists()


SYMBOLIC_TINY = [
    "--obs", "symbolic", "--cycles", "2", "--gen-steps", "256", "--orig-steps", "256",
    "--final-steps", "512", "--num-envs", "4", "--n-steps", "32", "--eval-episodes", "2",
    "--length", "40", "--quiet",
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("designer", ["offline", "curriculum", "none"])
def test_symbolic_crafter_arms(tmp_path, designer: str) -> None:
    argv = [*SYMBOLIC_TINY, "--designer", designer, "--out", str(tmp_path), "--results", ""]
    assert envgen_crafter.main(argv) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["env"] == "llmgym/CrafterSymbolic-v0" and results["total_steps"] == 2 * 512 + 512
    assert results["final"]["episodes"] >= 4 and 0.0 <= results["final"]["score"] <= 100.0
    assert set(results["timing"]) == {"env", "act", "update"}
    first, second = (cycle["designs"] for cycle in results["cycles"])
    if designer == "curriculum":
        assert first[0]["purpose"] == "Curriculum stage 1: practise collect_wood."
        assert all(d["purpose"].startswith("Curriculum stage 2") for d in second)
    elif designer == "none":
        assert first == second == []


@pytest.mark.slow
def test_symbolic_heist_with_practice_levels(tmp_path) -> None:
    argv = [
        "--obs", "symbolic", "--env", "llmgym/Heist-v0", "--schedule", "heist",
        "--gen-steps", "256", "--final-steps", "512", "--n-steps", "16", "--eval-episodes", "2",
        "--quiet", "--out", str(tmp_path), "--results", "",
    ]  # fmt: skip
    assert envgen_crafter.main(argv) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    (cycle,) = results["cycles"]
    assert all(d["config"].get("maze_size") for d in cycle["designs"])
    assert results["final"]["score"] == results["final"]["success"]["steal_gem"]


@pytest.mark.slow
def test_a_symbolic_run_is_reproducible(tmp_path) -> None:
    """The same seed gives the same run (world draws, designs, sampling, minibatch order),
    also in the folder of an earlier run (whose designer log must not carry over)."""
    finals = []
    for _ in range(2):
        argv = [*SYMBOLIC_TINY, "--seed", "3", "--designer", "offline", "--results", ""]
        assert envgen_crafter.main([*argv, "--out", str(tmp_path)]) == 0
        results = json.loads((tmp_path / "results.json").read_text())
        finals.append((results["final"], results["cycles"]))
    assert finals[0] == finals[1]
    assert finals[0][1][0]["designs"][0]["purpose"] == "Practise collect_wood."


@pytest.mark.slow
def test_both_crafter_engines_give_the_same_run(tmp_path) -> None:
    """PPO on the array engine and on crafter's engine: the same games, so the same run."""
    runs = []
    for engine in ("arrays", "crafter"):
        argv = [*SYMBOLIC_TINY, "--seed", "1", "--designer", "offline", "--results", ""]
        out = tmp_path / engine
        assert envgen_crafter.main([*argv, "--crafter-engine", engine, "--out", str(out)]) == 0
        runs.append(json.loads((out / "results.json").read_text()))
    arrays, reference = runs
    assert arrays["crafter_engine"] == "arrays" and reference["crafter_engine"] == "crafter"
    assert arrays["final"] == reference["final"] and arrays["cycles"] == reference["cycles"]
    assert set(arrays["software"]) == {
        "torch", "numpy", "crafter", "gymnasium", "torch_cpu_capability", "torch_threads",
    }  # fmt: skip
    assert arrays["software"]["torch_threads"] == 1


@pytest.mark.slow
def test_a_conv_agent_records_its_settings(tmp_path) -> None:
    """``--policy conv`` and the PPO knobs reach the run, its JSON and its result file's name."""
    argv = [
        *SYMBOLIC_TINY, "--designer", "none", "--policy", "conv", "--conv-channels", "8,8",
        "--conv-stride", "2", "--layer-norm", "--norm-value", "--anneal-lr", "--ent-coef", "0.02",
        "--variant", "conv-test", "--out", str(tmp_path / "run"), "--results", str(tmp_path),
    ]  # fmt: skip
    assert envgen_crafter.main(argv) == 0
    written = json.loads((tmp_path / "craftersymbolic-ppo-conv-test-custom-seed0.json").read_text())
    agent = written["agent"]
    assert agent["policy"] == "conv" and agent["conv_channels"] == [8, 8]
    assert agent["conv_stride"] == 2
    assert agent["layer_norm"] and agent["norm_value"] and agent["anneal_lr"]
    assert agent["ent_coef"] == 0.02 and agent["gamma"] == 0.95 and agent["variant"] == "conv-test"
    assert 0.0 <= written["score"] <= 100.0


def test_the_conv_policy_is_crafters_alone() -> None:
    with pytest.raises(SystemExit, match="--policy conv: llmgym/CrafterSymbolic-v0 only"):
        envgen_crafter.main(
            ["--obs", "symbolic", "--env", "llmgym/Heist-v0", "--policy", "conv", "--quiet",
             "--schedule", "heist", "--gen-steps", "16", "--final-steps", "16", "--results", ""]
        )  # fmt: skip


def test_a_default_agent_keeps_the_committed_result_names() -> None:
    args = envgen_crafter.parse_args(["--obs", "symbolic"])
    assert envgen_crafter.ppo_settings(args) == envgen_crafter.PPO_SETTINGS
    name = envgen_crafter.result_name("llmgym/CrafterSymbolic-v0", "none", "paper", 2)
    assert name == "craftersymbolic-ppo-paper-seed2.json"
