"""EnvGen at the paper's schedule: the table and plots from whatever runs are committed.

    python benchmarks/envgen_paper_table.py     # prints the tables, writes the PNGs

Reads every run JSON under ``benchmarks/results/envgen/paper/`` (written by
``benchmarks/envgen_crafter.py --schedule paper ...`` and ``--schedule heist ...``), and
per game reports each arm's score (mean +/- sample std over seeds, and the seeds), per-skill
success (mean over seeds), Welch t-tests of each arm against plain PPO (``scipy``; with several
arms also Holm's adjusted p over them), and the paper's numbers for the same arms. Writes
``docs/img/envgen_paper_<game>.png``: the scores per arm next to the paper's, and per-skill
success per arm. ``benchmarks/figures.py`` builds the docs table from the same functions; a
run not committed yet reads "not got".

Runs under ``paper/declaration-order/`` are PPO + EnvGen (offline) runs made before the
offline designer's first call followed the tech tree (it practised the first skills in
declaration order: coal, diamond, drink, iron for Crafter); they form an arm of their own.
Runs under ``paper/rerun/`` and ``experiment/rerun/`` repeat a committed run (same command and
seed) to show that it reproduces.

The experiment with the conv agent (``crafter-conv``: ten seeds per arm, the frontier designer
beside the weakest-skill one; ``benchmarks/envgen_experiment.py`` runs it) reads
``benchmarks/results/envgen/experiment/``; its tables add 95% intervals of each arm's mean and
of its difference from PPO.
"""

from __future__ import annotations

import json
import statistics
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAPER_RUNS = ROOT / "benchmarks" / "results" / "envgen" / "paper"
EXPERIMENT_RUNS = ROOT / "benchmarks" / "results" / "envgen" / "experiment"
IMAGES = ROOT / "docs" / "img"
SEEDS = (0, 1, 2, 3, 4)
DECLARATION_ORDER = "declaration-order"
RERUN = "rerun"

CONV_AGENT = (
    "--policy", "conv", "--conv-stride", "2", "--layer-norm", "--norm-value", "--anneal-lr",
    "--variant", "conv-s2-tuned",
)  # fmt: skip
"""The conv agent's flags (``benchmarks/results/envgen/agent/README.md``)."""
EXPERIMENT_ARMS = {
    "ppo": "PPO (`--designer none`)",
    "ppo-envgen-frontier": "PPO + EnvGen (frontier designer)",
    "ppo-envgen-offline": "PPO + EnvGen (weakest-skill designer)",
    "ppo-curriculum": "PPO + easy-to-hard curriculum",
}
"""The arms of the ten-seed experiments."""
ENVGEN_ARMS = ("ppo-envgen-frontier", "ppo-envgen-offline")
"""Its two offline designers, both set beside the paper's GPT-4 designs."""

GAMES: dict[str, dict[str, Any]] = {
    "crafter": {
        "env": "llmgym/CrafterSymbolic-v0",
        "title": "Crafter (symbolic observation, 1.96M steps)",
        "metric": "Crafter score (%)",
        "arms": {
            "ppo": "PPO (`--designer none`)",
            "ppo-envgen-offline": "PPO + EnvGen (offline designer)",
            "ppo-curriculum": "PPO + easy-to-hard curriculum",
            "ppo-envgen-offline-declaration-order": "PPO + EnvGen (offline designer, first "
            "call in declaration order)",
        },
        "paper": {
            "ppo": (26.4, 2.1),
            "ppo-envgen-offline": (32.2, 0.6),
            "ppo-curriculum": (26.8, 1.5),
        },
        "paper_note": "paper: PPO and PPO + EnvGen (GPT-4-Turbo) from Table 1, easy-to-hard "
        "from Table 2; pixels, 4M-parameter ResNet, 1.96M steps",
    },
    "heist": {
        "env": "llmgym/Heist-v0",
        "title": "Heist (symbolic grid, 0.5M designed + 2M original steps)",
        "metric": "gem success (%)",
        "arms": {
            "ppo": "PPO (`--designer none`)",
            "ppo-envgen-offline": "PPO + EnvGen (offline designer)",
        },
        "paper": {"ppo": (25.9, 13.2), "ppo-envgen-offline": (37.7, 7.5)},
        "paper_note": "paper: Table 8 (25M steps; EnvGen 5M designed + 20M original)",
    },
    "crafter-conv": {
        "env": "llmgym/CrafterSymbolic-v0",
        "title": "Crafter, conv agent (symbolic observation, 1.96M steps)",
        "metric": "Crafter score (%)",
        "experiment": True,
        "seeds": tuple(range(10)),
        "arms": EXPERIMENT_ARMS,
        "paper": {
            "ppo": (26.4, 2.1),
            **dict.fromkeys(ENVGEN_ARMS, (32.2, 0.6)),
            "ppo-curriculum": (26.8, 1.5),
        },
        "paper_note": "paper: PPO and PPO + EnvGen (GPT-4-Turbo designs, shown beside both "
        "offline designers) from Table 1, easy-to-hard from Table 2; pixels, 4M-parameter "
        "ResNet, 1.96M steps. Agent: `--policy conv --conv-stride 2 --layer-norm --norm-value "
        "--anneal-lr` (`benchmarks/results/envgen/agent/README.md`)",
        "flags": ("--obs", "symbolic", "--schedule", "paper", *CONV_AGENT),
    },
    "heist-experiment": {
        "env": "llmgym/Heist-v0",
        "title": "Heist, ten seeds per arm (symbolic grid, 0.5M designed + 2M original steps)",
        "metric": "gem success (%)",
        "experiment": True,
        "seeds": tuple(range(10)),
        "arms": {arm: EXPERIMENT_ARMS[arm] for arm in ("ppo", *ENVGEN_ARMS)},
        "paper": {"ppo": (25.9, 13.2), **dict.fromkeys(ENVGEN_ARMS, (37.7, 7.5))},
        "paper_note": "paper: Table 8 (25M steps; EnvGen 5M designed + 20M original, one "
        "designer call; GPT-4-Turbo designs shown beside both offline designers). Agent: the "
        "MLP of the Heist table above. No curriculum arm: with one designer call a curriculum "
        "has one stage",
        "flags": ("--obs", "symbolic", "--env", "llmgym/Heist-v0", "--schedule", "heist"),
    },
}
"""Each study's env id, arms (label), and the paper's score (mean, std) per arm; an
``experiment`` study reads :data:`EXPERIMENT_RUNS`, has its own ``seeds`` and gives the
``envgen_crafter.py`` arguments its runs share (``flags``; ``benchmarks/envgen_experiment.py``)."""


def _folder(game: str) -> Path:
    return EXPERIMENT_RUNS if GAMES[game].get("experiment") else PAPER_RUNS


def _seeds(game: str) -> tuple[int, ...]:
    return GAMES[game].get("seeds", SEEDS)


def load_runs(game: str) -> dict[str, dict[int, dict[str, Any]]]:
    """``{arm: {seed: run}}`` of ``game``'s committed paper-schedule runs."""
    runs: dict[str, dict[int, dict[str, Any]]] = {}
    runs_folder = _folder(game)
    for folder, suffix in (
        (runs_folder, ""),
        (runs_folder / DECLARATION_ORDER, "-" + DECLARATION_ORDER),
    ):
        for path in sorted(folder.glob("*.json")):
            run = json.loads(path.read_text())
            if run["env"] == GAMES[game]["env"]:
                runs.setdefault(run["arm"] + suffix, {})[run["seed"]] = run
    return runs


def summary(game: str) -> dict[str, Any]:
    """Per arm: seeds, scores, mean, std and per-skill means; Welch t-tests of each other arm
    vs PPO where both have two runs or more (``welch``: PPO + EnvGen (offline) vs PPO)."""
    runs = load_runs(game)
    arms: dict[str, Any] = {}
    for arm in GAMES[game]["arms"]:
        seeds = runs.get(arm, {})
        scores = [seeds[s]["score"] for s in sorted(seeds)]
        skills = next(iter(seeds.values()))["success"] if seeds else {}
        arms[arm] = {
            "seeds": sorted(seeds),
            "scores": scores,
            "mean": statistics.fmean(scores) if scores else None,
            "std": statistics.stdev(scores) if len(scores) > 1 else None,
            "success": {
                skill: statistics.fmean(run["success"][skill] for run in seeds.values())
                for skill in skills
            },
            "minutes": [round(seeds[s]["seconds"] / 60, 1) for s in sorted(seeds)],
            "interval": _interval(scores),
        }
    tests = {
        arm: _welch(arms[arm]["scores"], arms["ppo"]["scores"]) for arm in arms if arm != "ppo"
    }
    done = {arm: test for arm, test in tests.items() if test}
    for arm, adjusted in _holm({arm: test["p"] for arm, test in done.items()}).items():
        done[arm]["holm_p"] = adjusted
    return {
        "game": game,
        "arms": arms,
        "welch": tests["ppo-envgen-offline"],
        "welch_vs_ppo": done,
    }


def _holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjustment of ``p_values`` (one per arm tested against PPO): several arms
    against one baseline are several chances at a small p, which the adjusted values account
    for at the same family-wise error rate."""
    adjusted: dict[str, float] = {}
    running = 0.0
    ranked = sorted(p_values, key=p_values.__getitem__)
    for rank, arm in enumerate(ranked):
        running = max(running, min(1.0, (len(ranked) - rank) * p_values[arm]))
        adjusted[arm] = running
    return adjusted


def _welch(scores: list[float], baseline: list[float]) -> dict[str, float] | None:
    """Welch's t-test of ``scores`` vs ``baseline`` and the 95% interval of the difference of
    their means (Welch-Satterthwaite degrees of freedom); None below two runs in either."""
    if len(scores) < 2 or len(baseline) < 2:
        return None
    from scipy import stats

    with warnings.catch_warnings():
        # seeds of one arm may score alike (Heist counts whole episodes): scipy warns of
        # precision loss in a zero variance, while Welch's t stays well defined
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_ind(scores, baseline, equal_var=False)
        interval = result.confidence_interval(0.95)
    return {
        "t": float(result.statistic),
        "p": float(result.pvalue),
        "difference": statistics.fmean(scores) - statistics.fmean(baseline),
        "low": float(interval.low),
        "high": float(interval.high),
    }


def _interval(scores: list[float]) -> tuple[float, float] | None:
    """The 95% t-interval of the mean of ``scores`` (None below two runs)."""
    if len(scores) < 2:
        return None
    from scipy import stats

    mean, half = statistics.fmean(scores), statistics.stdev(scores) / len(scores) ** 0.5
    low, high = (
        stats.t.interval(0.95, len(scores) - 1, loc=mean, scale=half)
        if half
        else (
            mean,
            mean,
        )
    )
    return float(low), float(high)


def _cell(value: float | None, std: float | None) -> str:
    if value is None:
        return "not got"
    return f"{value:.1f} +/- {std:.1f}" if std is not None else f"{value:.1f}"


def markdown(game: str) -> str:
    """The score table (per arm: seeds, mean +/- std, the paper's), the t-test and the
    per-skill table."""
    info, data, seeds = GAMES[game], summary(game), _seeds(game)
    wide = len(seeds) > len(SEEDS)  # ten seeds: one cell of scores, not a column each
    header = (
        f"scores, seeds {seeds[0]}-{seeds[-1]} in order"
        if wide
        else " | ".join(f"seed {seed}" for seed in seeds)
    )
    rows = [
        f"| arm | {header} | mean +/- std | paper |",
        "|---|" + "---|" * ((1 if wide else len(seeds)) + 2),
    ]
    for arm, label in info["arms"].items():
        result = data["arms"][arm]
        runs = dict(zip(result["seeds"], result["scores"], strict=True))
        if wide:
            got = ", ".join(f"{runs[s]:.1f}" if s in runs else "—" for s in seeds)
            cells = [got if runs else "not got"]
        else:
            cells = [f"{runs[s]:.1f}" if s in runs else "not got" for s in seeds]
        paper = info["paper"].get(arm)
        rows.append(
            f"| {label} | {' | '.join(cells)} | {_cell(result['mean'], result['std'])} | "
            f"{_cell(*paper) if paper else '—'} |"
        )
    parts = ["\n".join(rows), f"{info['metric']}; {info['paper_note']}."]
    if data["welch"]:
        parts.append(
            f"Welch t-test, {info['arms']['ppo-envgen-offline']} vs PPO: "
            f"t = {data['welch']['t']:.2f}, "
            f"p = {data['welch']['p']:.3f}."
        )
    else:
        parts.append("Welch t-test: needs two runs or more in both PPO arms (not got yet).")
    others = [
        f"{info['arms'][arm]}: t = {test['t']:.2f}, p = {test['p']:.3f}"
        for arm, test in data["welch_vs_ppo"].items()
        if arm != "ppo-envgen-offline"
    ]
    if others:
        parts[-1] += " The other arms vs PPO: " + "; ".join(others) + "."
    intervals = _intervals_table(game, data)
    if intervals:
        parts.append(intervals)
    done = {arm: r for arm, r in data["arms"].items() if r["seeds"]}
    if done:
        skills = next(iter(done.values()))["success"]
        shown = [s for s in skills if any(r["success"][s] > 0 for r in done.values())]
        shown.sort(key=lambda s: -max(r["success"][s] for r in done.values()))
        table = [
            "| skill (final phase) | " + " | ".join(info["arms"][a] for a in done) + " |",
            "|---|" + "---|" * len(done),
        ]
        for skill in shown:
            cells = [_percent(r["success"][skill]) for r in done.values()]
            table.append(f"| {skill.replace('_', ' ')} | " + " | ".join(cells) + " |")
        never = len(skills) - len(shown)
        if never:
            table.append(f"\nThe other {never} skills: 0% in every run.")
        parts.append("\n".join(table))
        differences = [
            _skill_differences(label, data["arms"][arm], data["arms"]["ppo"])
            for arm, label in info["arms"].items()
            if arm != "ppo" and not arm.endswith(DECLARATION_ORDER)
        ]
        if any(differences):
            parts.append("\n\n".join(line for line in differences if line))
        requests = _designer_requests(game)
        if requests:
            parts.append(requests)
        minutes = [round(m) for r in done.values() for m in r["minutes"]]
        count = len(minutes)
        span = (
            f"{min(minutes)}" if min(minutes) == max(minutes) else f"{min(minutes)}-{max(minutes)}"
        )
        parts.append(
            f"{count} run{'s' if count > 1 else ''} committed "
            f"(`benchmarks/results/envgen/{_folder(game).name}/`), {span} "
            "minutes a run on the shared 2-core machine (`python "
            "benchmarks/envgen_paper_table.py` draws the plot)."
        )
    reruns = _reruns(game)
    if reruns:
        parts.append(reruns)
    return "\n\n".join(parts)


def _reruns(game: str) -> str:
    """How runs repeated later (``paper/rerun/``, same command and seed) compare with the
    committed run they repeat: bitwise (the same per-cycle and final per-skill success, so the
    same score), or by how much the score differs against the spread of the arm's seeds."""
    runs, arms = load_runs(game), summary(game)["arms"]
    lines = []
    for path in sorted((_folder(game) / RERUN).glob("*.json")):
        again = json.loads(path.read_text())
        first = runs.get(again["arm"], {}).get(again["seed"])
        if again["env"] != GAMES[game]["env"] or first is None:
            continue
        lines.append(
            f"{GAMES[game]['arms'][again['arm']]}, seed {again['seed']}, run again at commit "
            f"{again['commit'][:7]}{_cpus(again, first)}: {again['score']:.2f} against the "
            f"committed {first['score']:.2f} (commit {first['commit'][:7]}): "
            f"{_rerun_agreement(again, first, arms[again['arm']])}."
        )
    return "Reproduced: " + " ".join(lines) if lines else ""


def _cpus(again: dict[str, Any], first: dict[str, Any]) -> str:
    """`` on CPU (level; the committed run's: ...)`` where the rerun records its CPU, else ""."""

    def described(run: dict[str, Any]) -> str | None:
        facts = run.get("machine") or {}
        if "cpu" not in facts:
            return None
        return facts["cpu"] + (f", {facts['cpu_level']}" if "cpu_level" in facts else "")

    mine, theirs = described(again), described(first)
    if mine is None:
        return ""
    if theirs is None:
        return f" on {mine} (the committed run's CPU not recorded)"
    return f" on {mine} (the committed run's: {theirs})"


def _rerun_agreement(again: dict[str, Any], first: dict[str, Any], arm: dict[str, Any]) -> str:
    """``bitwise equal`` or the score's difference against the arm's spread, with the first
    cycle whose evaluation differs and the recorded software that differs."""
    evals = [cycle.get("eval") for cycle in first["cycles"]]
    differing = [
        index + 1
        for index, (mine, theirs) in enumerate(
            zip([cycle.get("eval") for cycle in again["cycles"]], evals, strict=True)
        )
        if mine != theirs
    ]
    if again["score"] == first["score"] and again["success"] == first["success"] and not differing:
        return "bitwise equal (every per-cycle and final per-skill success)"
    spread = (
        f"the arm's spread: std {arm['std']:.2f} over {len(arm['seeds'])} seeds"
        if arm["std"] is not None
        else "the arm has no spread yet (one seed)"
    )
    text = f"{again['score'] - first['score']:+.2f} ({spread})"
    if differing:
        text += f", its cycle-{differing[0]} evaluation already different"
    software = again.get("software") or {}
    changed = [
        f"{key} {first['software'][key]} then {value}"
        for key, value in software.items()
        if key in (first.get("software") or {}) and first["software"][key] != value
    ]
    return text + (f"; recorded software differing: {', '.join(changed)}" if changed else "")


def _skill_differences(label: str, arm: dict[str, Any], ppo: dict[str, Any], most: int = 4) -> str:
    """The skills where ``arm`` (named ``label``) succeeds most above and most below PPO, in
    percentage points of the mean success over seeds ("" without both arms)."""
    if not arm["seeds"] or not ppo["seeds"]:
        return ""
    gaps = {skill: arm["success"][skill] - ppo["success"][skill] for skill in ppo["success"]}
    ranked = sorted(gaps, key=gaps.__getitem__)

    def listed(skills: list[str]) -> str:
        shown = [f"{skill.replace('_', ' ')} ({gaps[skill]:+.1f})" for skill in skills]
        return ", ".join(shown) if shown else "none"

    above = [skill for skill in reversed(ranked) if gaps[skill] >= 0.5][:most]
    below = [skill for skill in ranked if gaps[skill] <= -0.5][:most]
    return (
        f"{label} against PPO, per skill (percentage points): most above: "
        f"{listed(above)}; most below: {listed(below)}."
    )


def _intervals_table(game: str, data: dict[str, Any]) -> str:
    """Per arm with two runs or more: the mean with its 95% interval, and the difference from
    PPO with its 95% interval, Welch's p and, with more than one arm tested, Holm's adjustment
    of it over those arms ("" when no arm has two runs)."""
    rows = []
    several = len(data["welch_vs_ppo"]) > 1
    for arm, label in GAMES[game]["arms"].items():
        result = data["arms"][arm]
        if result["interval"] is None:
            continue
        low, high = result["interval"]
        test = data["welch_vs_ppo"].get(arm)
        versus = (
            f"{test['difference']:+.1f} [{test['low']:+.1f}, {test['high']:+.1f}] | {test['p']:.3f}"
            if test
            else "— | —"
        )
        if several:
            versus += f" | {test['holm_p']:.3f}" if test else " | —"
        rows.append(
            f"| {label} | {len(result['seeds'])} | {result['mean']:.1f} [{low:.1f}, {high:.1f}] "
            f"| {versus} |"
        )
    if not rows:
        return ""
    header = "| arm | runs | mean [95% interval] | difference from PPO [95% interval] | Welch p |"
    rule = "|---|---|---|---|---|"
    if several:
        header += f" Holm p ({len(data['welch_vs_ppo'])} arms) |"
        rule += "---|"
    return "\n".join([header, rule, *rows])


def _designer_requests(game: str) -> str:
    """What each offline designer asked for in each cycle, per committed seed (the purposes of
    its designs, shortened to the skills they practise)."""
    runs, labels = load_runs(game), GAMES[game]["arms"]
    parts = []
    for arm in ("ppo-envgen-frontier", "ppo-envgen-offline"):
        lines = [_requests_line(arm, seed, run) for seed, run in sorted(runs.get(arm, {}).items())]
        older = f"{arm}-{DECLARATION_ORDER}"
        lines += [
            _requests_line(older, seed, run) for seed, run in sorted(runs.get(older, {}).items())
        ]
        if lines:
            parts.append(
                f"What {labels[arm]} asked for (the skills its designs practise):\n\n"
                + "\n".join(lines)
            )
    return "\n\n".join(parts)


def _requests_line(arm: str, seed: int, run: dict[str, Any]) -> str:
    """``- seed S: cycle 1: skill, ...; cycle 2: ...`` for one run (a skill practised by
    several designs of a cycle named once)."""
    cycles = []
    for cycle in run["cycles"]:
        skills = dict.fromkeys(
            design["purpose"].split(":")[0].removeprefix("Practise ").rstrip(".")
            for design in cycle["designs"]
        )
        cycles.append(f"cycle {cycle['cycle']}: {', '.join(skills)}")
    order = " (declaration order)" if arm.endswith(DECLARATION_ORDER) else ""
    return f"- seed {seed}{order}: " + "; ".join(cycles)


def _percent(value: float) -> str:
    if value == 0:
        return "0%"
    return "<1%" if value < 1 else f"{value:.0f}%"


def plot(game: str) -> Path | None:
    """``docs/img/envgen_paper_<game>.png``: scores per arm (dots: seeds; bar: mean) next to
    the paper's, and per-skill success per arm. None when no run exists."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    info, data = GAMES[game], summary(game)
    done = {arm: r for arm, r in data["arms"].items() if r["seeds"]}
    if not done:
        return None
    skills = list(next(iter(done.values()))["success"])
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(6 + 0.35 * len(skills), 4.2), gridspec_kw={"width_ratios": [1, 2.5]}
    )
    for position, (arm, result) in enumerate(done.items()):
        left.bar(position - 0.18, result["mean"], 0.34, color="C0", alpha=0.6)
        left.scatter([position - 0.18] * len(result["scores"]), result["scores"], color="C0", s=12)
        paper = info["paper"].get(arm)
        if paper:
            left.bar(position + 0.18, paper[0], 0.34, yerr=paper[1], color="C1", alpha=0.6)
    left.set_xticks(range(len(done)), [arm for arm in done], rotation=30, ha="right", fontsize=8)
    left.set_ylabel(info["metric"])
    left.set_title("measured (blue) vs paper (orange)", fontsize=9)
    width = 0.8 / len(done)
    for index, (arm, result) in enumerate(done.items()):
        values = [result["success"][s] for s in skills]
        offsets = [k + (index - (len(done) - 1) / 2) * width for k in range(len(skills))]
        right.bar(offsets, values, width, label=arm)
    right.set_xticks(range(len(skills)), skills, rotation=70, ha="right", fontsize=7)
    right.set_ylabel("success in the final phase (%)")
    right.legend(fontsize=7)
    fig.suptitle(info["title"], fontsize=10)
    fig.tight_layout()
    IMAGES.mkdir(parents=True, exist_ok=True)
    path = IMAGES / f"envgen_paper_{game}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main() -> int:
    for game in GAMES:
        print(f"## {GAMES[game]['title']}\n\n{markdown(game)}\n")
        path = plot(game)
        if path:
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
