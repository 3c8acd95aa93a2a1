"""Running agents on environments: rollouts, evaluation, trajectories and multi-agent matches.

* :mod:`~llmgym.runner.rollout` — play episodes, concurrently, with an agent.
* :mod:`~llmgym.runner.evaluation` — :func:`evaluate` an agent on a split or a suite.
* :mod:`~llmgym.runner.runs` — run an :class:`EvalPlan` over several environments (resumable) and
  :func:`write_results`, the results file ``llmgym view`` and ``llmgym report`` read.
* :mod:`~llmgym.runner.trajectories` — the trajectory records episodes are saved as, and their
  conversion to SFT data.
* :mod:`~llmgym.runner.matches` — agents play a multi-agent game against each other.

The names below load their module on first use (the wrappers record trajectories, and rollouts
use the wrappers, so nothing here is imported eagerly).
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULE_OF = {
    "EvalResult": "evaluation",
    "evaluate": "evaluation",
    "wilson_interval": "evaluation",
    "GameRecord": "matches",
    "MatchResult": "matches",
    "make_player": "matches",
    "play_game": "matches",
    "run_match": "matches",
    "choose_tasks": "rollout",
    "play_episode": "rollout",
    "rollout": "rollout",
    "rollout_vector": "rollout",
    "EvalPlan": "runs",
    "EvalRun": "runs",
    "estimate_plan": "runs",
    "run_plan": "runs",
    "write_results": "runs",
    "Trajectory": "trajectories",
    "append_trajectory": "trajectories",
    "read_trajectories": "trajectories",
    "to_conversations": "trajectories",
    "to_messages": "trajectories",
}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'llmgym.runner' has no attribute {name!r}")
    return getattr(importlib.import_module(f"llmgym.runner.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULE_OF])
