"""Documentation stays true: generated pages are current, every page has Gymnasium's sections,
and docs/index.md documents what ``import llmgym`` exports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import llmgym

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = (
    "Description",
    "Action Space",
    "Observation Space",
    "Rewards",
    "Starting State",
    "Episode End",
    "Arguments",
    "Version History",
)


def test_generated_docs_are_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"run `python docs/generate.py`:\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize("entry", llmgym.ENVIRONMENTS, ids=lambda e: e.name)
def test_every_environment_has_a_page_with_all_sections(entry) -> None:
    page = ROOT / "docs" / "environments" / f"{entry.name.lower()}.md"
    assert page.exists(), f"missing {page}"
    text = page.read_text()
    for section in SECTIONS:
        assert f"## {section}" in text, f"{page.name} lacks the section {section!r}"


def test_index_documents_the_public_api() -> None:
    text = (ROOT / "docs" / "index.md").read_text()
    for name in llmgym.__all__:
        assert f"`{name}`" in text, f"docs/index.md does not document llmgym.{name}"


def test_readme_quick_start_names_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert "<!-- test-command -->" in text
    assert text.count("python3 -m venv .venv") == 2
