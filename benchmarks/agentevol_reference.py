"""The oracle and a random agent on the eval tasks of the committed AgentEvol run, for scale.

    python benchmarks/agentevol_reference.py

Reads the environments, config, eval task count, seed and format-error limit from
``benchmarks/results/agentevol.json``, plays the same eval tasks (``choose_tasks(env, "eval",
n, seed)``, episode seeds as the run's evaluation) through the same ReAct chat environment with
the built-in oracle and the random agent (uniform over valid moves), and writes success rate
and moves per episode to ``benchmarks/results/agentevol_reference.json``. Seconds on a CPU.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from bench_utils import write_json

from llmgym.agents import OracleAgent, RandomAgent
from llmgym.runner.rollout import choose_tasks, rollout
from llmgym.wrappers import make_chat_env

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "benchmarks" / "results" / "agentevol.json"
OUT = ROOT / "benchmarks" / "results" / "agentevol_reference.json"


def main() -> int:
    args = json.loads(RUN.read_text())["args"]
    config = json.loads(args["config"]) if args["config"] else None
    kwargs = {"config": config} if config else {}
    agents = {}
    for env_id in args["envs"]:

        def factory(env_id: str = env_id):
            return make_chat_env(env_id, max_format_errors=args["max_format_errors"], **kwargs)

        task_ids = choose_tasks(factory(), "eval", args["eval_tasks"], args["seed"])
        for agent in (OracleAgent(), RandomAgent(seed=args["seed"])):
            runs = rollout(
                factory, agent, task_ids=task_ids, seed=args["seed"] + 10_000, progress=False
            )
            agents.setdefault(env_id, {})[agent.name] = {
                "episodes": len(runs),
                "success_rate": sum(t.success for t in runs) / len(runs),
                "mean_steps": round(statistics.fmean(t.steps for t in runs), 2),
                "max_steps": max(t.steps for t in runs),
            }
            print(env_id, agent.name, agents[env_id][agent.name], flush=True)
    write_json(
        OUT,
        {
            "benchmark": "agentevol_reference",
            "run": "benchmarks/results/agentevol.json",
            "config": args["config"],
            "eval_tasks": args["eval_tasks"],
            "seed": args["seed"],
            "agents": agents,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
