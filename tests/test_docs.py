"""Documentation stays true: generated pages are current, every page has Gymnasium's sections,
docs/index.md documents what ``import llmgym`` exports, and every measured figure in README.md
and docs/*.md is rendered from a committed result under benchmarks/results/."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import llmgym
from benchmarks import figures

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("generate", ROOT / "docs" / "generate.py")
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)

MEASURED = re.compile(
    r"\d[\d,.]*\s?(?:steps/s|resets/s|queries/s|µs|ms\b|×|x faster|times faster|minutes|hours)"
    r"|\d+ of (?:the first )?\d[\d,]* (?:eval|tasks|games|worlds|levels)"
)
"""What a measured figure looks like in prose: a speed, a duration, a count of successes."""
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


@pytest.mark.parametrize(
    "path, name, render", generate.BLOCKS, ids=[f"{p.name}:{n}" for p, n, _ in generate.BLOCKS]
)
def test_generated_figures_match_the_results(path, name, render) -> None:
    start, end = generate.markers(name)
    text = path.read_text()
    block = text.split(start, 1)[1].split(end, 1)[0]
    assert block == f"\n{render()}\n", f"{path.name}:{name} is stale: run `python docs/generate.py`"


def test_readme_speed_table_quotes_the_results() -> None:
    throughput = json.loads((ROOT / "benchmarks/results/throughput.json").read_text())
    wordle = next(r for r in throughput["results"] if r["env_id"] == "llmgym/Wordle-v0")
    readme = (ROOT / "README.md").read_text()
    assert f"Wordle {figures.sig(wordle['oracle_steps_per_s'])}" in readme
    assert figures.readme_speed() in readme


@pytest.mark.parametrize(
    "path", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_no_hand_written_measured_figures(path) -> None:
    """Outside code and generated blocks, the docs carry no speed, duration or success count:
    those are rendered from benchmarks/results/ by docs/generate.py."""
    text = re.sub(r"<!-- ([\w-]+):start -->.*?<!-- \1:end -->", "", path.read_text(), flags=re.S)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    found = [m.group(0) for m in MEASURED.finditer(text)]
    assert not found, f"{path.name}: figures without a result JSON: {found}"


def test_envgen_table_shows_missing_runs(tmp_path, monkeypatch) -> None:
    run = {
        "env": figures.ENVGEN_ENV,
        "schedule_name": "cpu",
        "arm": "ppo",
        "seed": 1,
        "score": 3.0,
        "final_episodes": 130,
        "success": {"collect_wood": 50.0, "eat_plant": 0.0},
        "total_steps": 73_728,
        "seconds": 600.0,
        "machine": {"load_average_1m": 1.5},
        "date": "2026-01-01",
    }
    (tmp_path / "envgen").mkdir()
    (tmp_path / "envgen" / "crafterpixels-ppo-cpu-seed1.json").write_text(json.dumps(run))
    monkeypatch.setattr(figures, "RESULTS", tmp_path)
    table = figures.envgen_table()
    assert table.count("not run") == 3
    assert "| PPO (`--designer none`) | not run | 3.00 (130 episodes) | 3.00 |" in table
    assert "| collect wood | 50% |" in table and "1 of 4 runs committed" in table


def test_readme_counts_the_suite_tasks() -> None:
    suite = json.loads((ROOT / "src" / "llmgym" / "suites" / "agenteval.json").read_text())
    total = sum(len(ids) for ids in suite["tasks"].values())
    assert f"{total:,}-task evaluation suite" in (ROOT / "README.md").read_text()


PIP_INSTALL_LLMGYM = re.compile(
    r"""pip install (?:-U |--upgrade )?(?P<spec>["']?llmgym[^\s"'`]*["']?)(?P<url>\s*@)?"""
)


def pypi_installs(text: str) -> list[str]:
    """``pip install llmgym`` or ``pip install 'llmgym[extra]'`` in ``text``: PyPI's
    ``llmgym`` is another project (``"llmgym[extra] @ git+URL"`` is fine)."""
    return [m.group(0) for m in PIP_INSTALL_LLMGYM.finditer(text) if not m["url"]]


DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("path", DOC_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_install_commands_never_fetch_llmgym_from_pypi(path) -> None:
    found = pypi_installs(path.read_text())
    assert not found, f"{path.name}: install from a clone or the git URL, not {found}"


def test_install_hints_work_from_a_clone() -> None:
    for entry in llmgym.ENVIRONMENTS:
        assert not pypi_installs(entry.install_hint), entry.install_hint
        if entry.extra:
            assert entry.install_hint == f"pip install -e '.[{entry.extra}]'"
            page = (ROOT / "docs" / "environments" / generate.page_name(entry)).read_text()
            assert f"| Install | `{entry.install_hint}` in your clone" in page
    assert pypi_installs("pip install 'llmgym[crafter]', pip install llmgym") == [
        "pip install 'llmgym[crafter]'",
        "pip install llmgym",
    ]
    assert not pypi_installs('pip install "llmgym[crafter] @ git+https://github.com/llmgym/llmgym"')


def test_readme_says_how_to_get_the_code_and_the_license() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "git clone https://github.com/llmgym/llmgym" in readme
    assert "git+https://github.com/llmgym/llmgym" in readme
    assert "[LICENSE](LICENSE)" in readme and "[CITATION.cff](CITATION.cff)" in readme
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()
    citation = (ROOT / "CITATION.cff").read_text()
    assert "cff-version: 1.2.0" in citation and f'version: "{llmgym.__version__}"' in citation
    for reference in ("arXiv:2406.04151", "arXiv:2403.12014"):
        assert reference in citation


OUTSIDE_FENCES = re.compile(r"^(`{3,}).*?^\1`*[ \t]*$", re.M | re.S)
REST_MARKUP = re.compile(r":(?:py:)?[a-z]+:`|(?<!`)``(?!`)")


@pytest.mark.parametrize("entry", llmgym.ENVIRONMENTS, ids=lambda e: e.name)
def test_generated_pages_hold_no_rest_markup(entry) -> None:
    """Docstrings' Sphinx roles and ``literals`` are rendered as Markdown code spans."""
    page = ROOT / "docs" / "environments" / generate.page_name(entry)
    prose = OUTSIDE_FENCES.sub("", page.read_text())
    found = [prose[max(0, m.start() - 30) : m.end() + 30] for m in REST_MARKUP.finditer(prose)]
    assert not found, f"{page.name} holds reST markup: {found}"


@pytest.mark.parametrize(
    "rest, markdown",
    [
        (":class:`~llmgym.core.env.TextEnv`", "`TextEnv`"),
        (":class:`llmgym.TextEnv`", "`llmgym.TextEnv`"),
        (":meth:`~llmgym.TextEnv.reset`", "`reset()`"),
        (":func:`llmgym.runner.rollout.rollout`", "`llmgym.runner.rollout.rollout()`"),
        (":py:mod:`llmgym.core`, :attr:`Task.split`", "`llmgym.core`, `Task.split`"),
        (":data:`!CHARSET` and :exc:`the error <ConfigError>`", "`CHARSET` and `the error`"),
        ("``reset(seed=0)`` and ``a`b``", "`reset(seed=0)` and ``a`b``"),
        ("by `` [SEP] `` and ``x\ny``", "by `  [SEP]  ` and `x\ny`"),
        ("a ```` ```sql ```` block", "a ```` ```sql ```` block"),
        ("``a``\n\nand ``b", "`a`\n\nand ``b"),
        ("text\n```text\n``kept``\n```\n``done``", "text\n```text\n``kept``\n```\n`done`"),
    ],
)
def test_markdown_from_rest(rest, markdown) -> None:
    assert generate.markdown_from_rest(rest) == markdown
