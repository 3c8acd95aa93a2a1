"""Oracle and random baselines on the frozen AgentEval suite; updates the docs.

    python benchmarks/agenteval_baselines.py [--concurrency 2] [--envs ENV_ID ...]

Runs ``llmgym eval --suite agenteval`` for the oracle and the random agent (ReAct replies, as an
LLM would give them), writes ``benchmarks/results/agenteval_baselines.json`` and runs
``docs/generate.py``, which renders it in ``docs/agenteval.md`` and on the environment pages.
Environments whose extra is not installed are skipped (and shown as such). With ``--envs``
only those are run again; the others keep their figures from the existing JSON.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from bench_utils import write_json

from llmgym.agents import make_agent
from llmgym.envs import get_entry
from llmgym.runner.evaluation import evaluate
from llmgym.suites import load_suite

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "agenteval_baselines.json"


def run(concurrency: int, env_ids: list[str] | None) -> dict[str, dict[str, dict[str, float]]]:
    """``{env_id: {agent: {"success_rate", "mean_reward", "episodes"}}}`` for ``env_ids``
    (default: every environment of the suite)."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    for env_id, task_ids in load_suite("agenteval").items():
        if env_ids is not None and env_id not in env_ids:
            continue
        if not get_entry(env_id).available:
            table[env_id] = {}
            continue
        for name in ("oracle", "random"):
            result = evaluate(
                env_id, make_agent(name, seed=0), task_ids=task_ids, concurrency=concurrency
            )
            summary = result.summary()
            table.setdefault(env_id, {})[name] = {
                "episodes": summary["episodes"],
                "success_rate": summary["success_rate"],
                "mean_reward": summary["mean_reward"],
            }
            print(f"{env_id:28s} {name:7s} success {summary['success_rate']:.3f}", flush=True)
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--envs", nargs="+", metavar="ENV_ID", help="run only these again")
    args = parser.parse_args(argv)
    table = run(args.concurrency, args.envs)
    if args.envs is not None and RESULTS.exists():
        table = {**json.loads(RESULTS.read_text())["baselines"], **table}
    write_json(
        RESULTS, {"benchmark": "agenteval_baselines", "suite": "agenteval", "baselines": table}
    )
    return subprocess.run([sys.executable, str(ROOT / "docs" / "generate.py")]).returncode


if __name__ == "__main__":
    sys.exit(main())
