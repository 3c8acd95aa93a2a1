"""docs/authoring.md builds an environment by subclassing TextEnv, a wrapper for it, and a server
protocol: run its code as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from tests.extras import need

DOC = Path(__file__).resolve().parent.parent / "docs" / "authoring.md"

GUIDES = ("Adding a server protocol",)
"""Sections whose code runs on its own, apart from the environment example's."""


def python_blocks(guide: str | None = None) -> list[str]:
    """The page's Python blocks: those of the section ``guide``, or (``None``) those of every
    section that is not a guide."""
    blocks = []
    for section in re.split(r"^## ", DOC.read_text(), flags=re.MULTILINE):
        heading = section.split("\n", 1)[0]
        if (heading == guide) if guide is not None else (heading not in GUIDES):
            blocks += re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    return blocks


def run_blocks(blocks: list[str], monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """Run ``blocks`` in order in one fresh module, as a reader pasting them would."""
    module = types.ModuleType("authoring_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), module.__dict__)
    return module


def test_authoring_example_runs_and_conforms(capsys, monkeypatch) -> None:
    blocks = python_blocks()
    assert len(blocks) >= 2
    module = run_blocks(blocks, monkeypatch)
    printed = capsys.readouterr().out
    assert "{'oracle_success_rate': 1.0}" in printed
    assert module.task_id.startswith("eval/")
    # the wrapper: the rules every second turn, its argument in the spec, the stack re-made
    assert "\nRemember: Find the secret number" in module.observation
    assert module.again.spec.additional_wrappers[-1].kwargs == {"every": 2}
    assert module.again.spec.kwargs == {"largest": 1000}


def test_server_protocol_guide_serves_its_protocol(capsys, monkeypatch) -> None:
    for name in ("fastapi", "uvicorn"):
        need(name)
    from llmgym.serving.server import protocols

    monkeypatch.setattr(protocols, "PROTOCOLS", dict(protocols.PROTOCOLS))
    module = run_blocks(python_blocks("Adding a server protocol"), monkeypatch)
    assert capsys.readouterr().out.strip() == "404 session_not_found"
    assert module.first == "Guess the hidden 5-letter word in 6 guesses. Reply with a single word."
    assert module.answer.startswith("1. crane -> c ")
    assert module.health["status"] == "ok"
    assert not module.thread.is_alive()
