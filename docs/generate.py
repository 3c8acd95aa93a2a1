"""Generate ``docs/environments/<name>.md`` and the generated parts of README.md and docs/*.md.

    python docs/generate.py           # rewrite the pages
    python docs/generate.py --check   # exit 1 if a page is out of date (the test suite does this)

Each page mirrors the environment class's docstring (Gymnasium's sections), adds the config
knobs from its JSON Schema, the task counts, and a *Measured* section: throughput, oracle and
random success and the environment's own benchmarks, from ``benchmarks/results/*.json``.

Every other measured figure in README.md and docs/*.md is generated too, between
``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` markers (``BLOCKS``), by the functions of
``benchmarks/figures.py``: a figure in the docs is the committed result of a committed script.

Docstrings are written for Python readers (Sphinx roles, reST ``literals``); the pages are
Markdown, so :func:`markdown_from_rest` turns that markup into Markdown code spans.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

import llmgym  # noqa: E402
from benchmarks import figures  # noqa: E402
from llmgym import TextEnv  # noqa: E402
from llmgym.core.config import describe_allowed  # noqa: E402
from llmgym.core.registry import EnvEntry  # noqa: E402
from llmgym.originals import GENERATED, get_source, sources_of_env  # noqa: E402

PAGES = ROOT / "docs" / "environments"
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def page_name(entry: EnvEntry) -> str:
    """File name of an environment's page: ``wordle.md``."""
    return entry.name.lower() + ".md"


def _env_class(entry: EnvEntry) -> type[TextEnv[Any]]:
    module, _, name = entry.entry_point.partition(":")
    env_class: type[TextEnv[Any]] = getattr(importlib.import_module(module), name)
    return env_class


def _config_table(schema: dict) -> str:
    rows = ["| field | default | allowed | description |", "|---|---|---|---|"]
    for name, field in schema["properties"].items():
        default = json.dumps(field.get("default"))
        description = markdown_from_rest(field.get("description", "")).replace("|", "\\|")
        rows.append(f"| `{name}` | `{default}` | {describe_allowed(field)} | {description} |")
    return "\n".join(rows)


def _longest_backtick_run(text: str) -> int:
    """The longest run of backticks in ``text`` (a code fence must be longer)."""
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


SPHINX_ROLE = re.compile(
    r":(?:py:)?(?P<role>class|meth|func|mod|attr|data|obj|exc|const):`(?P<target>[^`]+)`"
)
"""A Sphinx cross-reference such as ``:class:`~llmgym.core.env.TextEnv```."""
REST_LITERAL = re.compile(r"(?<!`)``(?!`)(?P<code>(?:(?!\n[ \t]*\n)(?:[^`]|(?<!`)`(?!`)))+)``(?!`)")
"""A reST inline literal, ``code`` between double backticks (longer backtick runs are Markdown)."""
FENCE = re.compile(r"^(`{3,})[^\n]*\n.*?^\1`*[ \t]*$", re.M | re.S)
"""A fenced code block, left as it is."""


def _code_span(code: str) -> str:
    """``code`` as a Markdown code span, fenced by more backticks than it holds."""
    fence = "`" * (_longest_backtick_run(code) + 1)
    # Markdown strips one space from both ends of a span: pad to keep a backtick or a space.
    spaced = code.startswith(" ") and code.endswith(" ") and code.strip()
    pad = " " if code.startswith("`") or code.endswith("`") or spaced else ""
    return f"{fence}{pad}{code}{pad}{fence}"


def _role_text(match: re.Match[str]) -> str:
    """What Sphinx shows for a role: ``~a.b.C`` is ``C``, functions and methods get ``()``."""
    target = match["target"].strip()
    titled = re.fullmatch(r"(?P<title>.+?)\s*<[^<>]+>", target, re.S)
    if titled:
        return _code_span(titled["title"])
    target = target.lstrip("!")
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    if match["role"] in ("meth", "func") and not target.endswith(")"):
        target += "()"
    return _code_span(target)


def markdown_from_rest(text: str) -> str:
    """Turn the reST markup of a docstring (Sphinx roles, ``double-backtick`` literals) into
    Markdown code spans; fenced code blocks are left as they are."""
    parts = []
    position = 0
    for fence in FENCE.finditer(text):
        parts += [_markdown_prose(text[position : fence.start()]), fence.group(0)]
        position = fence.end()
    parts.append(_markdown_prose(text[position:]))
    return "".join(parts)


def _markdown_prose(text: str) -> str:
    text = SPHINX_ROLE.sub(_role_text, text)
    return REST_LITERAL.sub(lambda match: _code_span(match["code"]), text)


def _install_cell(entry: EnvEntry) -> str:
    """The page's *Install* cell: the pip command that adds the extra in a clone of llmgym."""
    how = "[installing llmgym](../../README.md#install)"
    if entry.extra is None:
        return f"no extra, the base install ({how})"
    return f"`{entry.install_hint}` in your clone ({how})"


@contextlib.contextmanager
def _without_original_data(cls: type[TextEnv[Any]]) -> Iterator[None]:
    """Hide the variable through which an environment that plays original data only finds it
    (``$ALFWORLD_DATA``), so its page counts the tasks it has without data, on every machine."""
    source = getattr(cls.config_class(), "source", GENERATED)
    variable = get_source(source).env_var if source != GENERATED else ""
    saved = os.environ.pop(variable, None) if variable else None
    try:
        yield
    finally:
        if saved is not None:
            os.environ[variable] = saved


def render_page(entry: EnvEntry) -> str:
    """The Markdown page of one environment."""
    cls = _env_class(entry)
    with _without_original_data(cls):
        env = cls()
        train, eval_ = len(env.task_ids("train")), len(env.task_ids("eval"))
    doc = markdown_from_rest(inspect.cleandoc(cls.__doc__ or ""))
    summary, _, body = doc.partition("\n\n")
    counts = f"{train:,} train, {eval_:,} eval (default config)"
    lines = [
        f"# {entry.name}",
        "",
        summary,
        "",
        "| | |",
        "|---|---|",
        f"| Id | `{entry.id}` |",
        f"| Class | `{cls.__module__}.{cls.__name__}` |",
        f"| Install | {_install_cell(entry)} |",
        f"| Turn limit | {entry.max_episode_steps or 'set by the environment (see Episode End)'} |",
        f"| Tasks | {counts} |",
        "",
        body.strip(),
        "",
        figures.measured_section(entry.id),
        "",
        "## Config",
        "",
        f"`{cls.config_class.__name__}` — pass it as `config=...`, as keyword arguments to "
        "`gymnasium.make`, or per episode as `reset(options={'config': {...}})`. "
        "`env.unwrapped.config_schema()` returns it as JSON Schema.",
        "",
        _config_table(cls.config_schema()),
        "",
    ]
    if getattr(cls, "example", ""):
        fence = "`" * max(3, _longest_backtick_run(cls.example) + 1)
        lines += ["## Example turn", "", f"{fence}text", cls.example, fence, ""]
    env.close()
    return "\n".join(lines)


def readme_table() -> str:
    """The environment table shown in the README."""
    rows = ["| Id | Summary | Extra | Original data |", "|---|---|---|---|"]
    for entry in llmgym.ENVIRONMENTS:
        link = f"[`{entry.id}`](docs/environments/{page_name(entry)})"
        originals = ", ".join(
            f"[{name}](docs/originals.md#{name})" for name in sources_of_env(entry.id)
        )
        rows.append(f"| {link} | {entry.summary} | {entry.extra or '—'} | {originals or '—'} |")
    return "\n".join(rows)


def suite_table() -> str:
    """The composition of the frozen AgentEval suite (docs/agenteval.md)."""
    data = json.loads((ROOT / "src" / "llmgym" / "suites" / "agenteval.json").read_text())
    rows = ["| environment | tasks | metric | extra |", "|---|---|---|---|"]
    for env_id, task_ids in data["tasks"].items():
        entry = llmgym.get_entry(env_id)
        metric = data.get("metrics", {}).get(env_id, data["default_metric"])
        rows.append(f"| `{env_id}` | {len(task_ids)} | {metric} | {entry.extra or '—'} |")
    total = sum(len(ids) for ids in data["tasks"].values())
    rows.append(f"| **total** | **{total}** | | |")
    return "\n".join(rows)


BLOCKS: tuple[tuple[Path, str, Callable[[], str]], ...] = (
    (README, "environments", readme_table),
    (README, "speed", figures.readme_speed),
    (DOCS / "agenteval.md", "suite", suite_table),
    (DOCS / "agenteval.md", "baselines", figures.agenteval_baselines),
    (DOCS / "envgen.md", "envgen", figures.envgen_table),
    (DOCS / "envgen.md", "envgen-profile", figures.ppo_profile),
    (DOCS / "envgen.md", "crafter-batched-speed", figures.crafter_batched_speed),
    (DOCS / "envgen.md", "envgen-paper-crafter", lambda: figures.envgen_paper("crafter")),
    (DOCS / "envgen.md", "envgen-paper-heist", lambda: figures.envgen_paper("heist")),
    (DOCS / "envgen.md", "envgen-reproducibility", figures.envgen_reproducibility),
    (DOCS / "envgen.md", "envgen-agent", figures.envgen_agent),
    (
        DOCS / "envgen.md",
        "envgen-experiment-crafter",
        lambda: figures.envgen_paper("crafter-conv"),
    ),
    (
        DOCS / "envgen.md",
        "envgen-experiment-heist",
        lambda: figures.envgen_paper("heist-experiment"),
    ),
    (DOCS / "agentevol.md", "agentevol", figures.agentevol_run),
    (DOCS / "originals.md", "originals-bird", figures.originals_bird),
    (DOCS / "originals.md", "originals-webshop", figures.originals_webshop),
    (DOCS / "originals.md", "originals-webarena", figures.originals_webarena),
    (DOCS / "originals.md", "originals-search", figures.originals_search),
    (DOCS / "multiagent.md", "multiagent-oracles", figures.multiagent_oracles),
    (DOCS / "multiagent.md", "multiagent-speed", figures.multiagent_speed),
    (DOCS / "serving.md", "serving", lambda: figures.serving_table("serving.json")),
    (DOCS / "serving.md", "serving-pixels", lambda: figures.serving_table("serving_pixels.json")),
    (DOCS / "serving.md", "serving-pixels-summary", figures.serving_pixels_summary),
    (DOCS / "serving.md", "serving-summary", figures.serving_summary),
    (DOCS / "serving.md", "server-isolation", figures.server_isolation),
    (DOCS / "serving.md", "server-limits", figures.server_limits),
    (DOCS / "serving.md", "serving-scale", figures.serving_scale),
    (DOCS / "viewer.md", "viewer-speed", figures.viewer_speed),
    (DOCS / "integrations.md", "mcp-step", figures.mcp_step),
)
"""The generated parts of hand-written files: ``(file, marker name, content)``."""


def markers(name: str) -> tuple[str, str]:
    """``<!-- NAME:start -->`` and ``<!-- NAME:end -->``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def _replace_block(text: str, name: str, content: str, path: Path) -> str:
    start, end = markers(name)
    if text.count(start) != 1 or text.count(end) != 1:
        raise SystemExit(f"{path.relative_to(ROOT)} must hold {start} and {end} once each")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{content}\n{end}{tail}"


def expected_files() -> dict[Path, str]:
    """Every generated file and its content (environments whose extra is missing are left out)."""
    files = {PAGES / page_name(e): render_page(e) for e in llmgym.ENVIRONMENTS if e.available}
    for path, name, render in BLOCKS:
        text = files.get(path, path.read_text())
        files[path] = _replace_block(text, name, render(), path)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report stale files, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for path, content in expected_files().items():
        current = path.read_text() if path.exists() else None
        if current != content:
            stale.append(path)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content)
    verb = "out of date" if args.check else "written"
    for path in stale:
        print(f"{verb}: {path.relative_to(ROOT)}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
