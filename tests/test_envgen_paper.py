"""benchmarks/envgen_paper_table.py: the paper-schedule table from whatever runs exist."""

from __future__ import annotations

import json
import statistics

import pytest

from tests.extras import need

need("scipy")

from benchmarks import envgen_paper_table


def _run(arm: str, seed: int, score: float, wood: float) -> dict:
    success = {skill: 0.0 for skill in ("collect_wood", "collect_coal")}
    success["collect_wood"] = wood
    return {
        "env": "llmgym/CrafterSymbolic-v0",
        "arm": arm,
        "seed": seed,
        "score": score,
        "success": success,
        "seconds": 900.0,
        "commit": "0123456789abcdef",
        "cycles": [
            {"cycle": 1, "designs": [{"purpose": "Practise collect_coal.", "config": {}}]},
            {"cycle": 2, "designs": [{"purpose": "Practise eat_cow: 0% +/- 0%.", "config": {}}]},
        ],
    }


@pytest.fixture
def runs(tmp_path, monkeypatch):
    monkeypatch.setattr(envgen_paper_table, "PAPER_RUNS", tmp_path)
    monkeypatch.setattr(envgen_paper_table, "IMAGES", tmp_path / "img")
    scores = {"ppo": [10.0, 12.0, 11.0], "ppo-envgen-offline": [14.0, 15.5]}
    for arm, values in scores.items():
        for seed, value in enumerate(values):
            run = _run(arm, seed, value, wood=50.0 + seed)
            (tmp_path / f"{arm}-{seed}.json").write_text(json.dumps(run))
    return scores


def test_summary_and_welch_test(runs) -> None:
    from scipy import stats

    data = envgen_paper_table.summary("crafter")
    ppo, envgen = data["arms"]["ppo"], data["arms"]["ppo-envgen-offline"]
    assert ppo["mean"] == pytest.approx(11.0) and ppo["std"] == pytest.approx(1.0)
    assert envgen["std"] == pytest.approx(statistics.stdev(runs["ppo-envgen-offline"]))
    assert ppo["success"]["collect_wood"] == pytest.approx(51.0)
    expected = stats.ttest_ind(runs["ppo-envgen-offline"], runs["ppo"], equal_var=False)
    assert data["welch"]["p"] == pytest.approx(expected.pvalue)
    assert data["arms"]["ppo-curriculum"]["mean"] is None


def test_markdown_marks_missing_runs_and_plot_is_drawn(runs) -> None:
    text = envgen_paper_table.markdown("crafter")
    assert (
        "| PPO (`--designer none`) | 10.0 | 12.0 | 11.0 | not got | not got | 11.0 +/- 1.0 |"
        in text
    )
    assert "PPO + easy-to-hard curriculum | not got" in text and "Welch t-test" in text
    assert "collect wood" in text and "collect coal" not in text.split("Welch")[1].split("\n\n")[1]
    assert "- seed 0: cycle 1: collect_coal; cycle 2: eat_cow" in text
    assert (
        "per skill (percentage points): most above: none; most below: collect wood (-0.5)" in text
    )
    path = envgen_paper_table.plot("crafter")
    assert path is not None and path.stat().st_size > 5000
    assert envgen_paper_table.plot("heist") is None


def test_runs_of_the_old_first_call_order_form_an_arm_of_their_own(runs, tmp_path) -> None:
    from scipy import stats

    older = tmp_path / envgen_paper_table.DECLARATION_ORDER
    older.mkdir()
    for seed, value in enumerate([9.0, 10.0]):
        run = _run("ppo-envgen-offline", seed, value, wood=40.0)
        (older / f"ppo-envgen-offline-{seed}.json").write_text(json.dumps(run))
    data = envgen_paper_table.summary("crafter")
    arm = "ppo-envgen-offline-declaration-order"
    assert data["arms"][arm]["scores"] == [9.0, 10.0]
    assert data["arms"]["ppo-envgen-offline"]["scores"] == runs["ppo-envgen-offline"]
    expected = stats.ttest_ind([9.0, 10.0], runs["ppo"], equal_var=False)
    assert data["welch_vs_ppo"][arm]["p"] == pytest.approx(expected.pvalue)
    text = envgen_paper_table.markdown("crafter")
    label = envgen_paper_table.GAMES["crafter"]["arms"][arm]
    assert f"| {label} | 9.0 | 10.0 | not got |" in text
    assert "- seed 1 (declaration order): cycle 1: collect_coal" in text


def test_a_rerun_is_compared_with_the_run_it_repeats(runs, tmp_path) -> None:
    rerun = tmp_path / envgen_paper_table.RERUN
    rerun.mkdir()
    again = {**_run("ppo", 1, 12.0, wood=51.0), "commit": "fedcba9876543210"}
    again["machine"] = {"cpu": "Intel(R) Xeon(R)", "cpu_level": "x86-64-v3"}
    (rerun / "ppo-1.json").write_text(json.dumps(again))
    first = json.loads((tmp_path / "ppo-1.json").read_text())
    first["machine"] = {"cpu": "AMD EPYC", "cpu_level": "x86-64-v4"}
    (tmp_path / "ppo-1.json").write_text(json.dumps(first))
    text = envgen_paper_table.markdown("crafter")
    assert (
        "Reproduced: PPO (`--designer none`), seed 1, run again at commit fedcba9 on "
        "Intel(R) Xeon(R), x86-64-v3 (the committed run's: AMD EPYC, x86-64-v4): 12.00 against "
        "the committed 12.00 (commit 0123456): bitwise equal (every per-cycle and final "
        "per-skill success)." in text
    )
    assert envgen_paper_table.summary("crafter")["arms"]["ppo"]["scores"] == runs["ppo"]


def test_a_rerun_that_differs_is_measured_against_the_arms_spread(runs, tmp_path) -> None:
    rerun = tmp_path / envgen_paper_table.RERUN
    rerun.mkdir()
    first = json.loads((tmp_path / "ppo-envgen-offline-1.json").read_text())
    first["software"] = {"torch": "2.13.0", "torch_cpu_capability": "AVX2"}
    (tmp_path / "ppo-envgen-offline-1.json").write_text(json.dumps(first))
    again = _run("ppo-envgen-offline", 1, 15.25, wood=50.0)
    again["commit"] = "fedcba9876543210"
    again["cycles"][1]["eval"] = {"collect_wood": {"mean": 42.0, "std": 1.0}}
    again["software"] = {"torch": "2.13.0", "torch_cpu_capability": "AVX512"}
    again["machine"] = {"cpus": 2, "cpu": "AMD EPYC", "cpu_level": "x86-64-v4"}
    (rerun / "ppo-envgen-offline-1.json").write_text(json.dumps(again))
    text = envgen_paper_table.markdown("crafter")
    spread = statistics.stdev(runs["ppo-envgen-offline"])
    assert (
        "PPO + EnvGen (offline designer), seed 1, run again at commit fedcba9 on AMD EPYC, "
        "x86-64-v4 (the committed run's CPU not recorded): 15.25 against the "
        f"committed 15.50 (commit 0123456): -0.25 (the arm's spread: std {spread:.2f} over 2 "
        "seeds), its cycle-2 evaluation already different; recorded software differing: "
        "torch_cpu_capability AVX2 then AVX512." in text
    )


def test_the_conv_experiment_tables_ten_seeds_with_intervals(tmp_path, monkeypatch) -> None:
    from scipy import stats

    monkeypatch.setattr(envgen_paper_table, "EXPERIMENT_RUNS", tmp_path)
    monkeypatch.setattr(envgen_paper_table, "IMAGES", tmp_path / "img")
    scores = {"ppo": [13.0, 12.0, 14.0, 13.5], "ppo-envgen-frontier": [15.0, 14.0, 16.0]}
    for arm, values in scores.items():
        for seed, value in enumerate(values):
            run = _run(arm, seed, value, wood=60.0 if arm == "ppo" else 70.0)
            (tmp_path / f"{arm}-{seed}.json").write_text(json.dumps(run))
    data = envgen_paper_table.summary("crafter-conv")
    test = stats.ttest_ind(scores["ppo-envgen-frontier"], scores["ppo"], equal_var=False)
    interval = test.confidence_interval(0.95)
    frontier = data["welch_vs_ppo"]["ppo-envgen-frontier"]
    assert frontier["p"] == pytest.approx(test.pvalue)
    assert (frontier["low"], frontier["high"]) == pytest.approx((interval.low, interval.high))
    low, high = stats.t.interval(
        0.95, 3, loc=statistics.fmean(scores["ppo"]), scale=statistics.stdev(scores["ppo"]) / 2
    )
    assert data["arms"]["ppo"]["interval"] == pytest.approx((low, high))
    text = envgen_paper_table.markdown("crafter-conv")
    assert "| PPO (`--designer none`) | 13.0, 12.0, 14.0, 13.5, —, —, —, —, —, — |" in text
    assert "| PPO + easy-to-hard curriculum | not got | not got | 26.8 +/- 1.5 |" in text
    low, high = data["arms"]["ppo-envgen-frontier"]["interval"]
    assert f"| PPO + EnvGen (frontier designer) | 3 | 15.0 [{low:.1f}, {high:.1f}] " in text
    assert f"| +1.9 [{interval.low:+.1f}, {interval.high:+.1f}] | {test.pvalue:.3f} |" in text
    assert "PPO + EnvGen (frontier designer) against PPO, per skill (percentage points): " in text
    assert "What PPO + EnvGen (frontier designer) asked for" in text
    assert "(`benchmarks/results/envgen/" + tmp_path.name + "/`)" in text
    assert envgen_paper_table.plot("crafter-conv") is not None


def test_the_experiment_runs_what_is_missing_seed_by_seed(tmp_path, capsys) -> None:
    from benchmarks import envgen_experiment

    for arm, seed in (("ppo", 0), ("ppo-envgen-frontier", 0), ("ppo", 2)):
        (tmp_path / f"{arm}-{seed}.json").write_text(json.dumps(_run(arm, seed, 10.0, 50.0)))
    todo = envgen_experiment.missing(tmp_path)
    assert todo[:4] == [
        ("ppo-envgen-offline", 0),
        ("ppo-curriculum", 0),
        ("ppo", 1),
        ("ppo-envgen-frontier", 1),
    ]
    assert len(todo) == 37 and ("ppo", 2) not in todo and todo[-1] == ("ppo-curriculum", 9)
    command = envgen_experiment.command("ppo-envgen-offline", 0, tmp_path)
    assert command[command.index("--designer") + 1] == "offline"
    assert " ".join(envgen_paper_table.CONV_AGENT) in " ".join(command)
    assert command[-2:] == ["--results", str(tmp_path)]
    argv = ["--dry-run", "--runs", "2", "--results", str(tmp_path)]
    assert envgen_experiment.main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "crafter-conv: 3 of 40 runs committed; 2 to run" and len(out) == 3
    assert "--designer curriculum --seed 0" in out[2]
    # Heist's study: its own runs (the Crafter ones do not count), its own flags, no curriculum
    heist = envgen_experiment.missing(tmp_path, "heist-experiment")
    assert heist[:3] == [("ppo", 0), ("ppo-envgen-frontier", 0), ("ppo-envgen-offline", 0)]
    assert len(heist) == 30
    command = " ".join(
        envgen_experiment.command("ppo-envgen-frontier", 3, tmp_path, "heist-experiment")
    )
    assert "--env llmgym/Heist-v0 --schedule heist --designer frontier --seed 3" in command
    assert "--policy" not in command


def test_several_arms_against_ppo_get_holms_adjusted_p(tmp_path, monkeypatch) -> None:
    from scipy import stats

    monkeypatch.setattr(envgen_paper_table, "EXPERIMENT_RUNS", tmp_path)
    scores = {
        "ppo": [12.0, 11.0, 13.0, 12.5],
        "ppo-envgen-frontier": [12.5, 12.0, 13.5],
        "ppo-envgen-offline": [15.0, 14.0, 16.0],
        "ppo-curriculum": [13.0, 14.0, 12.5],
    }
    for arm, values in scores.items():
        for seed, value in enumerate(values):
            (tmp_path / f"{arm}-{seed}.json").write_text(json.dumps(_run(arm, seed, value, 60.0)))
    raw = {
        arm: stats.ttest_ind(values, scores["ppo"], equal_var=False).pvalue
        for arm, values in scores.items()
        if arm != "ppo"
    }
    smallest, middle, largest = sorted(raw, key=raw.__getitem__)
    holm = {smallest: 3 * raw[smallest]}
    holm[middle] = max(holm[smallest], 2 * raw[middle])
    holm[largest] = min(1.0, max(holm[middle], raw[largest]))
    data = envgen_paper_table.summary("crafter-conv")
    for arm, adjusted in holm.items():
        assert data["welch_vs_ppo"][arm]["holm_p"] == pytest.approx(adjusted)
    text = envgen_paper_table.markdown("crafter-conv")
    assert "| Welch p | Holm p (3 arms) |" in text
    offline = data["welch_vs_ppo"]["ppo-envgen-offline"]
    assert f"| {offline['p']:.3f} | {offline['holm_p']:.3f} |" in text
    assert "| PPO (`--designer none`) | 4 | " in text and "| — | — | — |" in text
