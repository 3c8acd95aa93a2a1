"""Which settings make an EnvGen training run differ between x86 machines, and whether the
portable kernels of ``envgen_crafter.py`` remove the difference.

    python benchmarks/envgen_reproducibility.py   # writes results/envgen_reproducibility.json

"Another machine" is emulated on this one by environment variables that make torch, MKL,
oneDNN and numpy choose what another CPU would make them choose (ATen's kernels at another
instruction set, MKL's code paths, numpy's SIMD kernels), by other thread counts and by other
``PYTHONHASHSEED`` values. Each setting trains one short run (``envgen_crafter.py --obs symbolic``,
offline designer, 2 cycles, so the designer's cycle-2 worlds follow from the cycle-1 evaluation)
in a fresh process, first with ``--fast-kernels`` (each machine's own choice, as runs were made
before the pins) and then with the portable kernels; every run is compared bitwise with the
same mode's run under this machine's own settings: the trained parameters (``policy.pt``), the
per-cycle per-skill success and the final score.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_utils import write_json
from portable_kernels import PORTABLE_KERNELS

SCRIPT = Path(__file__).resolve().parent / "envgen_crafter.py"
RESULT = Path(__file__).resolve().parent / "results" / "envgen_reproducibility.json"
RUN = [
    "--obs", "symbolic", "--designer", "offline", "--seed", "3", "--schedule", "cpu",
    "--cycles", "2", "--gen-steps", "2048", "--orig-steps", "2048", "--final-steps", "4096",
    "--eval-episodes", "4", "--length", "300", "--quiet", "--results", "",
]  # fmt: skip
"""A short run of the loop the paper's runs use (12,288 steps, seconds of CPU time)."""

SETTINGS: dict[str, tuple[str, dict[str, str]]] = {
    "this machine": ("this machine's own choices (the reference)", {}),
    "this machine again": ("this machine again, in a new process (another random hash seed)", {}),
    "aten-default": (
        "ATen's kernels without AVX2 (a CPU below AVX2; AVX-512 likewise picks other ones)",
        {"ATEN_CPU_CAPABILITY": "default"},
    ),
    "mkl-compatible": ("MKL's COMPATIBLE branch", {"MKL_CBWR": "COMPATIBLE"}),
    "mkl-avx": (
        "MKL's code path of a CPU with AVX but not AVX2",
        {"MKL_ENABLE_INSTRUCTIONS": "AVX"},
    ),
    "onednn-sse41": ("oneDNN at most SSE4.1", {"ONEDNN_MAX_CPU_ISA": "SSE41"}),
    "numpy-no-avx2": (
        "numpy's SIMD kernels without AVX2 (X86_V3)",
        {"NPY_DISABLE_CPU_FEATURES": "X86_V3"},
    ),
    "threads-2": (
        "2 OpenMP, MKL and OpenBLAS threads (the script sets torch's to 1)",
        {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"},
    ),
    "hashseed-0": ("a fixed hash seed (str hashes: set and dict order)", {"PYTHONHASHSEED": "0"}),
    "hashseed-1": ("another fixed hash seed", {"PYTHONHASHSEED": "1"}),
}
"""Each setting: what it emulates and the environment variables that do it."""


def train(setting: str, fast: bool, folder: Path) -> dict[str, Any]:
    """One run in a fresh process under ``setting``; its parameters' digest, per-cycle
    success, final score and CPU time."""
    env = {key: value for key, value in os.environ.items() if key not in PORTABLE_KERNELS}
    env.pop("PYTHONHASHSEED", None)
    env.update({"OMP_NUM_THREADS": "1"}, **SETTINGS[setting][1])
    out = folder / f"{setting}-{'fast' if fast else 'portable'}"
    argv = [sys.executable, str(SCRIPT), *RUN, "--out", str(out)]
    subprocess.run([*argv, *(["--fast-kernels"] if fast else [])], env=env, check=True)
    results = json.loads((out / "results.json").read_text())
    state = torch.load(out / "policy.pt")
    digest = hashlib.sha256()
    for name, tensor in state.items():
        digest.update(name.encode() + tensor.numpy().tobytes())
    return {
        "parameters_sha256": digest.hexdigest(),
        "parameters": {name: tensor.tolist() for name, tensor in state.items()},
        "cycles": [
            {skill: stats["mean"] for skill, stats in cycle["eval"].items()}
            for cycle in results["cycles"]
        ],
        "score": results["final"]["score"],
        "final_episodes": results["final"]["episodes"],
        "cpu_seconds": round(sum(results["timing"].values()), 2),
        "timing": results["timing"],
        "software": results["software"],
    }


def compare(run: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """``run`` against ``reference``: bitwise equal or not, and by how much they differ."""
    largest = 0.0
    for name, values in run["parameters"].items():
        difference = torch.tensor(values) - torch.tensor(reference["parameters"][name])
        largest = max(largest, float(difference.abs().max()))
    differing = [
        index + 1
        for index, (mine, theirs) in enumerate(zip(run["cycles"], reference["cycles"], strict=True))
        if mine != theirs
    ]
    return {
        "bitwise_equal": run["parameters_sha256"] == reference["parameters_sha256"]
        and not differing
        and run["score"] == reference["score"],
        "largest_parameter_difference": largest,
        "first_cycle_differing": differing[0] if differing else None,
        "largest_cycle_success_difference": max(
            abs(mine[skill] - theirs[skill])
            for mine, theirs in zip(run["cycles"], reference["cycles"], strict=True)
            for skill in mine
        ),
        "score_difference": run["score"] - reference["score"],
    }


def main() -> int:
    modes: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for mode, fast in (("fast", True), ("portable", False)):
            runs = {setting: train(setting, fast, Path(folder)) for setting in SETTINGS}
            reference = runs["this machine"]
            modes[mode] = {
                setting: {
                    "emulates": SETTINGS[setting][0],
                    "environment": SETTINGS[setting][1],
                    **compare(run, reference),
                    "score": run["score"],
                    "final_episodes": run["final_episodes"],
                    "cpu_seconds": run["cpu_seconds"],
                    "timing": run["timing"],
                    "kernels": run["software"]["kernels"],
                    "parameters_sha256": run["parameters_sha256"],
                }
                for setting, run in runs.items()
            }
            modes[mode]["_reference"] = reference
    fast_reference, portable_reference = (
        modes["fast"].pop("_reference"),
        modes["portable"].pop("_reference"),
    )
    changes = {
        mode: sorted(s for s, row in rows.items() if not row["bitwise_equal"])
        for mode, rows in modes.items()
    }
    cpu = {
        mode: sum(row["cpu_seconds"] for row in rows.values()) / len(rows)
        for mode, rows in modes.items()
    }
    write_json(
        RESULT,
        {
            "benchmark": "envgen_reproducibility",
            "command": "python benchmarks/envgen_reproducibility.py",
            "run": shlex.join(["python", "benchmarks/envgen_crafter.py", *RUN]),
            "portable_kernels": PORTABLE_KERNELS,
            "software": {k: v for k, v in fast_reference["software"].items() if k != "kernels"},
            "settings_that_change_a_run": changes,
            "portable_against_fast_on_this_machine": compare(portable_reference, fast_reference),
            "mean_cpu_seconds": {mode: round(value, 2) for mode, value in cpu.items()},
            "portable_cpu_cost": round(cpu["portable"] / cpu["fast"] - 1, 3),
            "fast": modes["fast"],
            "portable": modes["portable"],
        },
    )
    print(json.dumps(changes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
