"""docs/authoring.md builds an environment by subclassing TextEnv, and a wrapper for it: run its
code as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "authoring.md"


def test_authoring_example_runs_and_conforms(capsys, monkeypatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 2
    module = types.ModuleType("authoring_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), module.__dict__)
    printed = capsys.readouterr().out
    assert "{'oracle_success_rate': 1.0}" in printed
    assert module.task_id.startswith("eval/")
    # the wrapper: the rules every second turn, its argument in the spec, the stack re-made
    assert "\nRemember: Find the secret number" in module.observation
    assert module.again.spec.additional_wrappers[-1].kwargs == {"every": 2}
    assert module.again.spec.kwargs == {"largest": 1000}
