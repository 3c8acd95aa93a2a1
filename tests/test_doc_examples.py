"""Every ```python block of README.md and docs/ (generated pages included) runs as written.

A page reads top to bottom: a block runs after the page's earlier runnable blocks, in a fresh
module of its own, with a temporary working directory. An HTML comment on the line right before
a block's fence marks it (several marks are separated by ``;``):

- ``<!-- fragment -->``: not run (it needs names it does not define, a model server, a network,
  a cluster or a human);
- ``<!-- needs: EXTRA[, EXTRA] -->``: run only when those pip extras of llmgym are installed;
- ``<!-- slow -->``: takes more than a few seconds, so its test is marked slow.

docs/index.md's contributor section documents these marks.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
MARK = re.compile(r"^\s*<!--\s*(?P<marks>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One ```python block of a page."""

    path: Path
    line: int
    code: str
    fragment: bool = False
    slow: bool = False
    needs: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _marks(line: str, where: str) -> dict:
    """The doc-test marks of ``line``: none unless it is an HTML comment made of marks only."""
    match = MARK.match(line)
    if not match:
        return {}
    parts = [part.strip() for part in match["marks"].split(";") if part.strip()]
    known = [part for part in parts if part in ("fragment", "slow") or part.startswith("needs:")]
    if not known:
        return {}  # another comment (<!-- test-command -->, generated-block markers)
    if len(known) != len(parts):
        raise ValueError(f"{where}: unknown doc-test mark in {line.strip()!r}")
    found: dict = {}
    for mark in known:
        if mark.startswith("needs:"):
            found["needs"] = tuple(e.strip() for e in mark[6:].split(",") if e.strip())
        else:
            found[mark] = True
    return found


def page_blocks(path: Path) -> list[Block]:
    """The ```python blocks of a Markdown page, with their marks."""
    lines = path.read_text().splitlines()
    blocks = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        start = index
        index += 1
        body = []
        while index < len(lines):
            closing = FENCE.match(lines[index])
            if closing and closing["fence"].startswith(fence) and not closing["info"].strip():
                break
            body.append(lines[index][indent:] if lines[index][:indent].isspace() else lines[index])
            index += 1
        index += 1
        if opening["info"].strip().split(" ")[0] != "python":
            continue
        where = f"{path.relative_to(ROOT)}:{start + 1}"
        marks = _marks(lines[start - 1], where) if start else {}
        code = "\n" * (start + 1) + "\n".join(body) + "\n"  # tracebacks name the page's lines
        blocks.append(Block(path, start + 1, code, **marks))
    return blocks


BLOCKS = [block for path in PAGES for block in page_blocks(path)]


def _extra_requirements(extra: str) -> list[Requirement]:
    """The requirements llmgym's pip extra ``extra`` adds, from pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    match = re.search(rf"^{re.escape(extra)}\s*=\s*\[(?P<items>.*?)\]\s*$", section, re.M | re.S)
    if not match:
        raise ValueError(f"pyproject.toml has no extra named {extra!r}")
    items = re.findall(r"""["']([^"']+)["']""", match["items"])
    return [Requirement(item) for item in items]


def extra_installed(extra: str) -> bool:
    """Whether every requirement of llmgym's extra ``extra`` is installed in a fitting version."""
    for requirement in _extra_requirements(extra):
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        if requirement.name == "llmgym":
            if not all(extra_installed(inner) for inner in requirement.extras):
                return False
            continue
        try:
            version = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            return False
        if not requirement.specifier.contains(version, prereleases=True):
            return False
    return True


def _param(block: Block):
    marks = [pytest.mark.slow] if block.slow else []
    return pytest.param(block, marks=marks, id=block.label)


def _run(block: Block, module: types.ModuleType) -> None:
    exec(compile(block.code, str(block.path), "exec"), module.__dict__)


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS if not b.fragment])
def test_doc_block_runs(block: Block, tmp_path, monkeypatch) -> None:
    missing = [extra for extra in block.needs if not extra_installed(extra)]
    if missing:
        pytest.skip(f"needs the extra {', '.join(missing)}")
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType("doc_example_" + re.sub(r"\W", "_", block.label))
    monkeypatch.setitem(sys.modules, module.__name__, module)
    earlier = [
        b
        for b in BLOCKS
        if b.path == block.path and b.line < block.line and not b.fragment
        if all(extra_installed(extra) for extra in b.needs)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium: "Overriding environment ..." on a rerun
        for setup in earlier:
            _run(setup, module)
    _run(block, module)


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS if b.fragment])
def test_doc_fragment_is_python(block: Block) -> None:
    """A fragment is not run, but it is still Python."""
    compile(block.code, str(block.path), "exec")


def test_pages_have_python_blocks_and_the_tour_runs() -> None:
    """The collector finds the blocks; docs/index.md opens with a runnable tour."""
    index = page_blocks(ROOT / "docs" / "index.md")
    assert index and not index[0].fragment and not index[0].needs and not index[0].slow
    text = (ROOT / "docs" / "index.md").read_text()
    assert text.index("```python") < text.index("\n## "), "the tour comes before the first section"
    assert sum(not b.fragment for b in BLOCKS) >= 10


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_marks_name_known_extras_and_sit_on_python_blocks(path: Path) -> None:
    lines = path.read_text().splitlines()
    starts = {block.line for block in page_blocks(path)}
    for number, line in enumerate(lines, 1):
        marks = _marks(line, f"{path.name}:{number}")
        if not marks:
            continue
        assert number + 1 in starts, f"{path.name}:{number}: a doc-test mark not before ```python"
        for extra in marks.get("needs", ()):
            _extra_requirements(extra)


def test_mark_parsing() -> None:
    assert _marks("<!-- fragment -->", "x") == {"fragment": True}
    assert _marks("<!-- slow; needs: crafter, train -->", "x") == {
        "slow": True,
        "needs": ("crafter", "train"),
    }
    assert _marks("<!-- test-command -->", "x") == {}
    assert _marks("text", "x") == {}
    with pytest.raises(ValueError, match="unknown doc-test mark"):
        _marks("<!-- slow; fragmnet -->", "x")
    with pytest.raises(ValueError):
        extra_installed("no-such-extra")
