"""Named evaluation suites: frozen lists of task ids per environment.

* ``agenteval`` — llmgym's counterpart of AgentGym's AgentEval: a fixed set of eval-split task
  ids per environment (frozen in ``agenteval.json``; it grows as environments are added).
* ``smoke`` — three eval tasks of every environment, for a quick end-to-end check.

Environments whose pip extra is missing are left out of a run, with a note.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["SUITE_NAMES", "load_suite", "suite_version"]

SUITE_NAMES = ("agenteval", "smoke")


@cache
def _frozen() -> dict[str, Any]:
    text = (resources.files("llmgym.suites") / "agenteval.json").read_text(encoding="utf-8")
    return json.loads(text)


def load_suite(name: str) -> dict[str, list[str]]:
    """``{env_id: [task_id, ...]}`` of the suite ``name``."""
    if name == "agenteval":
        return dict(_frozen()["tasks"])
    if name == "smoke":
        return {env_id: ids[:3] for env_id, ids in _frozen()["tasks"].items()}
    raise ValueError(f"unknown suite {name!r}; choose from: {', '.join(SUITE_NAMES)}")


def suite_version() -> int:
    """The version of the frozen task lists every suite is drawn from (results files record
    it beside the suite's name)."""
    return int(_frozen()["version"])
