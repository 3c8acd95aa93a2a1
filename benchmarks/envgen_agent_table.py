"""The symbolic Crafter agent's variants: what was tried and what each scored.

    python benchmarks/envgen_agent_table.py     # prints the table, writes its README

Reads every run JSON under ``benchmarks/results/envgen/agent/`` (``benchmarks/envgen_crafter.py
--obs symbolic --designer none --variant NAME ...``, screening runs at a part of the paper's
steps and full runs at its 1.96M), the plain-PPO MLP runs at the paper's schedule under
``benchmarks/results/envgen/paper/`` and the plain-PPO runs of the conv agent's experiment under
``benchmarks/results/envgen/experiment/``, and tables per variant and step count: the seeds, the
Crafter score (mean +/- sample std over seeds), wall time per run, and the agent's settings
that differ from ``ppo_torch.PPO_SETTINGS`` (the paper's). Writes the table to the folder's
``README.md``.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ppo_torch import PPO_SETTINGS

ROOT = Path(__file__).resolve().parent.parent
AGENT_RUNS = ROOT / "benchmarks" / "results" / "envgen" / "agent"
PAPER_RUNS = ROOT / "benchmarks" / "results" / "envgen" / "paper"
EXPERIMENT_RUNS = ROOT / "benchmarks" / "results" / "envgen" / "experiment"
PAPER_PPO = (26.4, 2.1)
"""The paper's PPO on Crafter at 1.96M steps (Table 1: pixels, a 4M-parameter ResNet)."""


def _runs() -> list[dict[str, Any]]:
    runs = [json.loads(path.read_text()) for path in sorted(AGENT_RUNS.glob("*.json"))]
    runs += [
        json.loads(path.read_text())
        for path in sorted(PAPER_RUNS.glob("craftersymbolic-ppo-paper-seed*.json"))
    ]
    experiment = [json.loads(path.read_text()) for path in sorted(EXPERIMENT_RUNS.glob("*.json"))]
    return runs + [run for run in experiment if run["designer"] == "none"]


def _agent(run: dict[str, Any]) -> dict[str, Any]:
    """The run's agent; runs made before the JSON recorded it had the default MLP."""
    return run.get("agent") or {"variant": "mlp", **PPO_SETTINGS}


def _changes(agent: dict[str, Any]) -> str:
    changed = []
    for key, default in PPO_SETTINGS.items():
        value = agent.get(key, default)
        if isinstance(default, tuple):
            value = tuple(value)
        if value != default and not (key.startswith("conv_") and agent["policy"] != "conv"):
            changed.append(f"{key}={value}")
    return ", ".join(changed) or "(the paper's settings)"


def rows() -> list[dict[str, Any]]:
    """One row per (variant, steps, settings, Crafter engine): seeds, scores and wall times
    (runs before ``crafter_engine`` was recorded ran on crafter's own)."""
    groups: dict[tuple[str, int, str, str], list[dict[str, Any]]] = {}
    for run in _runs():
        agent = _agent(run)
        engine = run.get("crafter_engine") or "crafter"
        key = (agent["variant"] or "mlp", run["total_steps"], _changes(agent), engine)
        groups.setdefault(key, []).append(run)
    table = []
    for (variant, steps, changes, engine), runs in sorted(
        groups.items(), key=lambda item: (item[0][1], item[0])
    ):
        scores = [run["score"] for run in runs]
        table.append(
            {
                "variant": variant,
                "steps": steps,
                "settings": changes,
                "engine": engine,
                "seeds": sorted(run["seed"] for run in runs),
                "mean": statistics.fmean(scores),
                "sd": statistics.stdev(scores) if len(scores) > 1 else None,
                "minutes": statistics.fmean(run["seconds"] for run in runs) / 60,
                "cpu_minutes": {
                    part: statistics.fmean(run["timing"][part] for run in runs) / 60
                    for part in ("env", "act", "update")
                },
            }
        )
    return table


def markdown() -> str:
    """The table of variants, with what it counts."""
    lines = [
        "Plain PPO in the original game (`--designer none`); the score is the Crafter score (%) "
        "over the episodes of the run's final phase. Screening runs train for a part of the "
        "paper's 1.96M steps from scratch (`--cycles 0 --final-steps N`, the learning rate "
        "annealed over that budget where annealed), so their scores are lower than a full run's "
        "and only compare variants; 1,960,000 steps is the paper's schedule. Minutes of wall "
        "clock per run on the shared 2-core machine (one thread; the engine is "
        "`--crafter-engine`, `arrays` the faster), and the training process's CPU minutes "
        "per run in the game, acting and the update (`timing`), less blurred by the load. "
        f"The paper's PPO: {PAPER_PPO[0]} +/- {PAPER_PPO[1]} at 1.96M steps.",
        "",
        "| variant | steps | settings (vs the paper's MLP) | seeds | score | minutes | engine "
        "| CPU minutes: env / act / update |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows():
        sd = f" +/- {row['sd']:.1f}" if row["sd"] is not None else ""
        seeds = ",".join(str(seed) for seed in row["seeds"])
        lines.append(
            f"| {row['variant']} | {row['steps']:,} | {row['settings']} | {seeds} "
            f"| {row['mean']:.1f}{sd} | {row['minutes']:.1f} | {row['engine']} "
            f"| {' / '.join(f'{value:.1f}' for value in row['cpu_minutes'].values())} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    text = (
        "# The symbolic Crafter agent: variants tried\n\n"
        "Generated by `python benchmarks/envgen_agent_table.py` from the run JSONs in this "
        "folder (and the plain-PPO runs at the paper's schedule in `../paper/`, the MLP's, and "
        "`../experiment/`, the conv agent's).\n\n" + markdown()
    )
    (AGENT_RUNS / "README.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
