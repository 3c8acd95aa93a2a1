"""EnvGen's experiments, ten seeds per arm: run the (arm, seed) pairs not committed yet.

    python benchmarks/envgen_experiment.py --dry-run           # what is missing, in run order
    python benchmarks/envgen_experiment.py --runs 4 --jobs 2   # the next four, two at a time
    python benchmarks/envgen_experiment.py --study heist-experiment --runs 3
    python benchmarks/envgen_paper_table.py                    # the tables from what exists

``crafter-conv`` (the default ``--study``, ``envgen_paper_table.GAMES["crafter-conv"]``): four
arms at the paper's schedule with the conv agent: plain PPO, PPO + EnvGen with the frontier and
with the weakest-skill designer, the easy-to-hard curriculum; a run takes about 15 CPU minutes,
the 40 runs about ten CPU hours. ``heist-experiment``: Heist at a tenth of the paper's schedule
with the MLP agent, plain PPO and PPO + EnvGen with both designers (docs/envgen.md gives the
minutes each study's runs took, from their JSON).
Runs go seed by seed, the arms of a seed together, so that whenever a session ends the arms have
(nearly) the same seeds. Each run is one ``envgen_crafter.py`` process with one thread and writes
its JSON into ``benchmarks/results/envgen/experiment/`` when it finishes (commit it). A bar
counts the finished runs; each run's own progress bar and per-cycle lines go to
``runs/experiment/<study>/<arm>-seed<seed>.log``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from envgen_crafter import arm
from envgen_paper_table import EXPERIMENT_RUNS, GAMES, ROOT

STUDIES = tuple(name for name, study in GAMES.items() if study.get("experiment"))
DESIGNERS = {arm(designer): designer for designer in ("none", "frontier", "offline", "curriculum")}
"""``--designer`` of each arm of a study."""


def missing(folder: Path = EXPERIMENT_RUNS, study: str = "crafter-conv") -> list[tuple[str, int]]:
    """The study's ``(arm, seed)`` pairs with no run JSON in ``folder``, seed by seed and, within
    a seed, in the study's arm order."""
    done = set()
    for path in folder.glob("*.json"):
        run = json.loads(path.read_text())
        if run["env"] == GAMES[study]["env"]:
            done.add((run["arm"], run["seed"]))
    return [
        (name, seed)
        for seed in GAMES[study]["seeds"]
        for name in GAMES[study]["arms"]
        if (name, seed) not in done
    ]


def command(
    name: str, seed: int, folder: Path = EXPERIMENT_RUNS, study: str = "crafter-conv"
) -> list[str]:
    """The ``envgen_crafter.py`` command of the study's arm ``name``, seed ``seed``."""
    return [
        sys.executable, str(ROOT / "benchmarks" / "envgen_crafter.py"),
        *GAMES[study]["flags"], "--designer", DESIGNERS[name], "--seed", str(seed),
        "--out", str(ROOT / "runs" / "experiment" / study / f"{name}-seed{seed}"),
        "--results", str(folder),
    ]  # fmt: skip


def _run(name: str, seed: int, folder: Path, study: str) -> tuple[str, int, int]:
    log = ROOT / "runs" / "experiment" / study / f"{name}-seed{seed}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    with log.open("w") as out:
        code = subprocess.run(
            command(name, seed, folder, study),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environment,
        ).returncode
    return name, seed, code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--study", choices=STUDIES, default="crafter-conv")
    parser.add_argument("--runs", type=int, help="run at most this many (default: all missing)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (one core each)")
    parser.add_argument("--results", type=Path, default=EXPERIMENT_RUNS)
    parser.add_argument("--dry-run", action="store_true", help="print the missing runs' commands")
    args = parser.parse_args(argv)
    if args.jobs < 1 or (args.runs is not None and args.runs < 1):
        parser.error("--jobs and --runs take a number of 1 or more")
    study = GAMES[args.study]
    left = missing(args.results, args.study)
    todo = left[: args.runs]
    total = len(study["arms"]) * len(study["seeds"])
    print(f"{args.study}: {total - len(left)} of {total} runs committed; {len(todo)} to run")
    if args.dry_run:
        for name, seed in todo:
            print(" ".join(command(name, seed, args.results, args.study)))
        return 0
    from tqdm import tqdm

    failed = []
    with ThreadPoolExecutor(args.jobs) as pool, tqdm(total=len(todo), unit="run") as bar:
        futures = [pool.submit(_run, name, seed, args.results, args.study) for name, seed in todo]
        for future in as_completed(futures):
            name, seed, code = future.result()
            bar.update()
            bar.write(f"{name} seed {seed}: " + ("done" if code == 0 else f"failed ({code})"))
            if code:
                failed.append(f"{name} seed {seed}")
    if failed:
        print(
            f"failed (logs under runs/experiment/{args.study}/): " + ", ".join(failed),
            file=sys.stderr,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
