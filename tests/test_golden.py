"""Task ids name the same instances on every machine and Python version (pinned fingerprints)."""

from __future__ import annotations

import json

import pytest

import llmgym
from tests.environments import ORIGINAL_DATA_ONLY, original_data_only
from tests.test_conformance import SETTINGS
from tests.update_golden import GOLDEN, TASK_IDS, fingerprint

PINNED = json.loads(GOLDEN.read_text())


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(e, marks=[pytest.mark.slow] if SETTINGS.get(e.id, {}).get("slow") else [])
        for e in llmgym.ENVIRONMENTS
    ],
    ids=lambda e: e.name,
)
def test_instances_match_pinned_fingerprints(entry) -> None:
    if not entry.available:
        pytest.skip(f"needs {entry.install_hint}")
    if original_data_only(entry):
        pytest.skip(ORIGINAL_DATA_ONLY)
    assert entry.id in PINNED, (
        f"no pinned instances for {entry.id}: run python tests/update_golden.py"
    )
    for task_id in TASK_IDS:
        assert fingerprint(entry.id, task_id) == PINNED[entry.id][task_id], (
            f"{entry.id} {task_id} changed; if on purpose, bump the version and update golden"
        )
