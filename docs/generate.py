"""Generate ``docs/environments/<name>.md`` and the README's environment table from the code.

    python docs/generate.py           # rewrite the pages
    python docs/generate.py --check   # exit 1 if a page is out of date (the test suite does this)

Each page mirrors the environment class's docstring (Gymnasium's sections), adds the config
knobs from its JSON Schema, the task counts, and the throughput measured by
``benchmarks/throughput.py`` (``benchmarks/results/throughput.json``).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import llmgym  # noqa: E402
from llmgym.core.config import describe_allowed  # noqa: E402
from llmgym.core.registry import EnvEntry  # noqa: E402

PAGES = ROOT / "docs" / "environments"
README = ROOT / "README.md"
AGENTEVAL = ROOT / "docs" / "agenteval.md"
THROUGHPUT = ROOT / "benchmarks" / "results" / "throughput.json"
TABLE_START, TABLE_END = "<!-- environments:start -->", "<!-- environments:end -->"


def page_name(entry: EnvEntry) -> str:
    """File name of an environment's page: ``wordle.md``."""
    return entry.name.lower() + ".md"


def _env_class(entry: EnvEntry) -> type:
    module, _, name = entry.entry_point.partition(":")
    return getattr(importlib.import_module(module), name)


def _config_table(schema: dict) -> str:
    rows = ["| field | default | allowed | description |", "|---|---|---|---|"]
    for name, field in schema["properties"].items():
        default = json.dumps(field.get("default"))
        description = field.get("description", "").replace("|", "\\|")
        rows.append(f"| `{name}` | `{default}` | {describe_allowed(field)} | {description} |")
    return "\n".join(rows)


def _throughput(entry: EnvEntry) -> str:
    if not THROUGHPUT.exists():
        return "not measured yet (run `python benchmarks/throughput.py`)"
    for row in json.loads(THROUGHPUT.read_text())["results"]:
        if row["env_id"] == entry.id:
            oracle, random, resets = (
                row[k] for k in ("oracle_steps_per_s", "random_steps_per_s", "resets_per_s")
            )
            return (
                f"{oracle:,.0f} steps/s (oracle), {random:,.0f} steps/s (random valid actions), "
                f"{resets:,.0f} resets/s — one CPU core, `python benchmarks/throughput.py`"
            )
    return "not measured yet (run `python benchmarks/throughput.py`)"


def _longest_backtick_run(text: str) -> int:
    """The longest run of backticks in ``text`` (a code fence must be longer)."""
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def render_page(entry: EnvEntry) -> str:
    """The Markdown page of one environment."""
    cls = _env_class(entry)
    env = cls()
    doc = inspect.cleandoc(cls.__doc__ or "")
    summary, _, body = doc.partition("\n\n")
    install = f"`{entry.install_hint}`"
    train, eval_ = len(env.task_ids("train")), len(env.task_ids("eval"))
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
        f"| Install | {install} |",
        f"| Turn limit | {entry.max_episode_steps or 'set by the environment (see Episode End)'} |",
        f"| Tasks | {counts} |",
        f"| Throughput | {_throughput(entry)} |",
        "",
        body.strip(),
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
    rows = ["| Id | Summary | Extra |", "|---|---|---|"]
    for entry in llmgym.ENVIRONMENTS:
        link = f"[`{entry.id}`](docs/environments/{page_name(entry)})"
        rows.append(f"| {link} | {entry.summary} | {entry.extra or '—'} |")
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


def _between(path: Path, start: str, end: str, content: str) -> str | None:
    if not path.exists():
        return None
    text = path.read_text()
    if start not in text or end not in text:
        return None
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{content}\n{end}{tail}"


def expected_files() -> dict[Path, str]:
    """Every generated file and its content (environments whose extra is missing are left out)."""
    files = {PAGES / page_name(e): render_page(e) for e in llmgym.ENVIRONMENTS if e.available}
    for path, start, end, content in (
        (README, TABLE_START, TABLE_END, readme_table()),
        (AGENTEVAL, "<!-- suite:start -->", "<!-- suite:end -->", suite_table()),
    ):
        text = _between(path, start, end, content)
        if text is not None:
            files[path] = text
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
