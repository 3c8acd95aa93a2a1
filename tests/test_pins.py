"""The frozen AgentEval suite and seeded oracle runs stay byte-identical (pinned digests).

``tests/golden/pins.json`` was written by ``tests/update_pins.py``; a failure here means an
instance, an observation, a reward or the oracle's play changed.
"""

from __future__ import annotations

import json

import pytest

from llmgym.suites import load_suite
from tests.environments import ORIGINAL_DATA_ONLY, environment_params, original_data_only
from tests.test_conformance import SLOW_IDS
from tests.update_pins import ORACLE_TASK_IDS, PINS, oracle_digest, suite_digest

PINNED = json.loads(PINS.read_text())


@pytest.mark.parametrize("entry", environment_params(SLOW_IDS, entries=True))
def test_suite_instances_match_pins(entry) -> None:
    if original_data_only(entry):
        pytest.skip(ORIGINAL_DATA_ONLY)
    suite = load_suite("agenteval").get(entry.id)
    if suite is None:
        assert "suite" not in PINNED.get(entry.id, {})
        return
    assert suite_digest(entry.id, suite) == PINNED[entry.id]["suite"], (
        f"an AgentEval instance of {entry.id} changed"
    )


@pytest.mark.parametrize("entry", environment_params(SLOW_IDS, entries=True))
def test_seeded_oracle_runs_match_pins(entry) -> None:
    if original_data_only(entry):
        pytest.skip(ORIGINAL_DATA_ONLY)
    assert entry.id in PINNED, f"no pins for {entry.id}: run python tests/update_pins.py"
    for task_id in ORACLE_TASK_IDS:
        assert oracle_digest(entry.id, task_id) == PINNED[entry.id]["oracle"][task_id], (
            f"{entry.id} {task_id}: a seeded oracle run changed (observations, rewards or play)"
        )
