"""EnvGen's reference training script (benchmarks/envgen_crafter.py) end to end at tiny scale."""

from __future__ import annotations

import importlib.util
import itertools
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
@pytest.mark.parametrize("designer", ["offline", "frontier"])
def test_symbolic_heist_with_practice_levels(tmp_path, designer: str) -> None:
    argv = [
        "--obs", "symbolic", "--env", "llmgym/Heist-v0", "--schedule", "heist",
        "--gen-steps", "256", "--final-steps", "512", "--n-steps", "16", "--eval-episodes", "2",
        "--designer", designer, "--quiet", "--out", str(tmp_path), "--results", "",
    ]  # fmt: skip
    assert envgen_crafter.main(argv) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    (cycle,) = results["cycles"]
    assert all(d["config"].get("maze_size") for d in cycle["designs"])
    practised = [d["purpose"].split(":")[0].split(".")[0] for d in cycle["designs"]]
    if designer == "frontier":  # the roots of Heist's tech tree, in turn
        assert practised == ["Practise collect_blue_key", "Practise steal_gem"] * 2
    else:
        assert practised[:2] == ["Practise collect_blue_key", "Practise open_blue_door"]
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
        "kernels",
    }  # fmt: skip
    assert arrays["software"]["torch_threads"] == 1
    assert arrays["software"]["kernels"]["kernels"] == "portable"


@pytest.mark.slow
@pytest.mark.parametrize("fast", [False, True])
def test_run_as_a_program_the_script_pins_portable_kernels_unless_told(tmp_path, fast) -> None:
    """Run as a program it sets portable_kernels.PORTABLE_KERNELS before torch is imported (whatever
    the caller's environment says) and records them; --fast-kernels leaves the caller's."""
    import os
    import subprocess
    import sys

    from benchmarks.portable_kernels import PORTABLE_KERNELS

    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "AUTO"}
    env.pop("ONEDNN_MAX_CPU_ISA", None)
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    argv = [*SYMBOLIC_TINY, "--designer", "none", "--results", "", "--out", str(tmp_path)]
    command = [sys.executable, str(SCRIPT), *argv, *(["--fast-kernels"] if fast else [])]
    subprocess.run(command, env=env, check=True, capture_output=True)
    kernels = json.loads((tmp_path / "results.json").read_text())["software"]["kernels"]
    if fast:
        assert kernels["kernels"] == "fast" and kernels["pinned"] is False
        assert kernels["environment"] == {
            "ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "AUTO", "ONEDNN_MAX_CPU_ISA": None,
            "NPY_DISABLE_CPU_FEATURES": None,
        }  # fmt: skip
        assert kernels["torch_cpu_capability"] == "DEFAULT"
    else:
        assert kernels["kernels"] == "portable" and kernels["environment"] == PORTABLE_KERNELS
        import torch

        avx2 = torch.backends.cpu.get_cpu_capability() != "DEFAULT"
        assert kernels["pinned"] is avx2


@pytest.mark.slow
def test_the_frontier_designer_shows_its_choices_and_a_replay_repeats_the_run(
    tmp_path, capsys
) -> None:
    """``--designer frontier``: each cycle's choices (skills, their success and their
    prerequisites') are printed and kept in results.json and the result file of the arm
    ``ppo-envgen-frontier``; ``--designer replay:FOLDER`` re-runs the recorded designs exactly:
    the same environments, so the same run."""
    quiet = [a for a in SYMBOLIC_TINY if a != "--quiet"]
    results_folder = tmp_path / "results"
    argv = [*quiet, "--seed", "2", "--designer", "frontier", "--results", str(results_folder)]
    assert envgen_crafter.main([*argv, "--out", str(tmp_path / "frontier")]) == 0
    printed = capsys.readouterr().out
    assert "designs for cycle 1: practise: collect_wood 0% (no prerequisites)" in printed
    assert "designs for cycle 2: " in printed
    results = json.loads((tmp_path / "frontier" / "results.json").read_text())
    for cycle in results["cycles"]:
        targets = [t["skill"] for t in cycle["choices"]["targets"]]
        assert [d["purpose"].split(":")[0] for d in cycle["designs"]] == [
            f"Practise {targets[k % len(targets)]}" for k in range(4)
        ]
        assert f"designs for cycle {cycle['cycle']}: {cycle['choices']['summary']}" in printed
    (saved,) = results_folder.glob("*.json")
    assert saved.name == "craftersymbolic-ppo-envgen-frontier-custom-seed2.json"
    assert json.loads(saved.read_text())["arm"] == "ppo-envgen-frontier"
    assert json.loads(saved.read_text())["cycles"] == results["cycles"]

    replay = [*SYMBOLIC_TINY, "--seed", "2", "--designer", f"replay:{tmp_path / 'frontier'}"]
    assert envgen_crafter.main([*replay, "--out", str(tmp_path / "replay"), "--results", ""]) == 0
    replayed = json.loads((tmp_path / "replay" / "results.json").read_text())
    assert replayed["cycles"] == results["cycles"] and replayed["final"] == results["final"]


@pytest.mark.slow
def test_the_llm_arm_against_a_local_server_recorded_then_replayed(tmp_path) -> None:
    """``--designer openai:MODEL`` against a real local chat server speaking EnvGen's reply
    format: every prompt and reply is recorded in the run folder; ``replay:`` of that folder
    makes the same designs without a server, and so the same run."""
    from tests.chat_server import ChatServer

    calls = itertools.count(1)

    def model(messages: list[dict]) -> str:
        call = next(calls)
        biome = ("mountain", "grassland", "beaches")[call % 3]
        env = {
            "environment_settings": {"target_biome": biome, "coal_rarity": "very common"},
            "inventory_settings": {"wood": call, "wood_pickaxe": 1},
        }
        block = "```json\n" + json.dumps(env, indent=4) + "\n```"
        return "\n".join(f"Environment {k}:\n{block}\nTeaches mining." for k in (1, 2, 3, 4))

    record = [*SYMBOLIC_TINY, "--seed", "1", "--out", str(tmp_path / "llm"), "--results", ""]
    with ChatServer(model) as server:
        argv = [*record, "--designer", "openai:gpt-4-1106-preview", "--base-url", server.base_url]
        assert envgen_crafter.main(argv) == 0
        requests = [r["body"]["messages"] for r in server.requests]
    assert len(requests) == 2 and requests[0][0]["content"].startswith(
        'You are a environment designer agent for a game called "Crafter".'
    )
    events = [
        json.loads(line)
        for line in (tmp_path / "llm" / "designer" / "events.jsonl").read_text().splitlines()
    ]
    assert [e["content"] for e in events if e["event"] == "prompt"] == [
        messages[-1]["content"] for messages in requests
    ]
    assert len([e for e in events if e["event"] == "reply"]) == 2
    recorded = json.loads((tmp_path / "llm" / "results.json").read_text())
    first, second = (cycle["designs"] for cycle in recorded["cycles"])
    assert first != second and all(d["purpose"] == "Teaches mining." for d in first)

    replay = [*SYMBOLIC_TINY, "--seed", "1", "--out", str(tmp_path / "replay"), "--results", ""]
    folder = tmp_path / "llm" / "designer"
    assert envgen_crafter.main([*replay, "--designer", f"replay:{folder}"]) == 0
    replayed = json.loads((tmp_path / "replay" / "results.json").read_text())
    assert replayed["cycles"] == recorded["cycles"] and replayed["final"] == recorded["final"]


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


@pytest.mark.parametrize(
    ("designer", "message"),
    [
        ("bogus", "--designer bogus: unknown designer 'bogus'; choose from: offline, frontier, "
         "openai:MODEL, replay:FOLDER, curriculum, none"),
        ("replay:{tmp}", "--designer replay:{tmp}: {tmp} holds no recorded design run"),
    ],
)  # fmt: skip
def test_a_bad_designer_is_named_before_training(tmp_path, designer, message) -> None:
    """No traceback: the script exits with what is wrong with --designer and what it takes."""
    designer, message = designer.format(tmp=tmp_path), message.format(tmp=tmp_path)
    argv = [*SYMBOLIC_TINY, "--designer", designer, "--results", "", "--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as exit_info:
        envgen_crafter.main(argv)
    assert str(exit_info.value.code).startswith(message)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--num-envs", "0"], "argument --num-envs: 0 is outside the allowed range [1, inf)"),
        (["--gen-steps", "-5"], "argument --gen-steps: -5 is outside the allowed range [0, inf)"),
        (["--gamma", "1.5"], "argument --gamma: 1.5 is outside the allowed range (0, 1]"),
        (["--learning-rate", "0"], "argument --learning-rate: 0 is outside the allowed range (0"),
        (["--conv-channels", "8,0"], "argument --conv-channels: 0 is outside the allowed range"),
        (["--n-steps", "x"], "argument --n-steps: 'x' is not an integer"),
    ],
)
def test_a_knob_out_of_range_is_named_with_its_range(flags, message, capsys) -> None:
    with pytest.raises(SystemExit):
        envgen_crafter.parse_args(["--obs", "symbolic", *flags])
    assert message in capsys.readouterr().err


def test_more_minibatches_than_rollout_steps_is_refused(tmp_path) -> None:
    argv = [*SYMBOLIC_TINY, "--n-minibatches", "1000", "--results", "", "--out", str(tmp_path)]
    with pytest.raises(SystemExit, match="--n-minibatches 1000: at most one per rollout step"):
        envgen_crafter.main(argv)


def test_a_default_agent_keeps_the_committed_result_names() -> None:
    args = envgen_crafter.parse_args(["--obs", "symbolic"])
    assert envgen_crafter.ppo_settings(args) == envgen_crafter.PPO_SETTINGS
    name = envgen_crafter.result_name("llmgym/CrafterSymbolic-v0", "none", "paper", 2)
    assert name == "craftersymbolic-ppo-paper-seed2.json"
