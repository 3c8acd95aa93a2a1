"""``llmgym report``: one static HTML page of plots over results files and EnvGen runs.

Inputs, in any mix:

* results files of ``llmgym eval --json``: success per environment with 95% Wilson intervals,
  agents side by side; mean turns; invalid-action and format-error rates; a table;
* EnvGen run folders (``llmgym envgen --out``: the ``stats`` of each design call in
  ``events.jsonl``) and EnvGen benchmark results (``benchmarks/envgen_crafter.py``: ``cycles``
  with per-skill ``eval``): per-skill success per cycle, as a heat map.

The plots are matplotlib PNGs embedded in the page (base64), so the one file can be mailed or
attached; all text is HTML-escaped. Needs the [report] extra (matplotlib).
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from llmgym.core.registry import optional_import
from llmgym.runner.evaluation import wilson_interval
from llmgym.viewer.records import (
    Field,
    checked,
    count,
    load_json,
    number,
    problem_line,
    quoted,
    text,
)

__all__ = ["EnvGenRun", "ResultRow", "load_inputs", "write_report"]

_LABEL_CHARS = 60
_MAX_INCHES = 200.0


@dataclass(frozen=True)
class ResultRow:
    """One agent on one environment (a row of a results file)."""

    label: str
    """The agent, with the file's name where two files name the same agent."""
    env_id: str
    episodes: int
    successes: int
    interval: tuple[float, float]
    mean_turns: float
    invalid_rate: float
    """Invalid actions per step that reached the environment."""
    format_error_rate: float
    """Replies without a parseable action, per turn."""

    @property
    def success_rate(self) -> float:
        return self.successes / self.episodes if self.episodes else 0.0


@dataclass
class EnvGenRun:
    """Per-skill success (percent) per cycle of an EnvGen run."""

    name: str
    cycles: list[int] = field(default_factory=list)
    rates: list[dict[str, float]] = field(default_factory=list)


_RESULT = {
    "env_id": Field(text, "", "text"),
    "agent": Field(text, "", "text"),
    "episodes": Field(count, 0, "a count"),
    "success_rate": Field(lambda v: number(v) and 0 <= v <= 1, 0.0, "a number from 0 to 1"),
    "mean_steps": Field(lambda v: number(v) and v >= 0, 0.0, "a number of at least 0"),
    "mean_turns": Field(lambda v: number(v) and v >= 0, 0.0, "a number of at least 0"),
    "invalid_actions": Field(count, 0, "a count"),
    "format_errors": Field(count, 0, "a count"),
}


def load_inputs(
    paths: Sequence[str | os.PathLike[str]], warnings: list[str] | None = None
) -> tuple[list[ResultRow], list[EnvGenRun]]:
    """The result rows and EnvGen runs of ``paths``.

    Within a file, an entry that is not an object, a line of ``events.jsonl`` that holds none
    and a skill's rate that is not a number are skipped, and a field of the wrong type is read
    as its default (no episodes, a rate of 0); with ``warnings``, each is recorded there as
    ``"FILE, WHERE: WHAT (skipped)"`` (or ``(ignored)``).

    Raises:
        ValueError: a path is none of the inputs above (naming it and what was expected).
    """
    warnings = [] if warnings is None else warnings
    files: list[tuple[str, dict[str, Any]]] = []
    runs: list[EnvGenRun] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            runs.append(_envgen_folder(path, warnings))
            continue
        data = _read_object(path)
        if isinstance(data.get("cycles"), list):
            runs.append(_envgen_benchmark(path, data, warnings))
        elif isinstance(data.get("results"), list):
            for position, result in enumerate(data["results"]):
                where = f"{path}, results[{position}]"
                if not isinstance(result, dict):
                    warnings.append(f"{where}: not an object (skipped)")
                    continue
                problems: list[str] = []
                files.append((path.stem, checked(result, _RESULT, problems)))
                if problems:
                    warnings.append(f"{where}: {problem_line(problems)} (ignored)")
        else:
            raise ValueError(
                f"{path}: neither a results file of `llmgym eval --json` (a 'results' list) "
                "nor EnvGen results (a 'cycles' list)"
            )
    agents_per_name: dict[str, set[str]] = {}
    for stem, result in files:
        agents_per_name.setdefault(result["agent"], set()).add(stem)
    rows = []
    for stem, result in files:
        agent = result["agent"]
        label = f"{agent} ({stem})" if len(agents_per_name[agent]) > 1 else agent
        rows.append(_result_row(label, result))
    return rows, runs


def _read_object(path: Path) -> dict[str, Any]:
    try:
        data = load_json(path.read_bytes())
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def _result_row(label: str, result: dict[str, Any]) -> ResultRow:
    """A row of a results file whose fields are checked (:data:`_RESULT`)."""
    episodes = result["episodes"]
    successes = round(result["success_rate"] * episodes)
    return ResultRow(
        label=label,
        env_id=result["env_id"],
        episodes=episodes,
        successes=successes,
        interval=wilson_interval(successes, episodes),
        mean_turns=result["mean_turns"],
        invalid_rate=_ratio(result["invalid_actions"], result["mean_steps"] * episodes),
        format_error_rate=_ratio(result["format_errors"], result["mean_turns"] * episodes),
    )


def _ratio(part: float, whole: float) -> float:
    """``part / whole``; 0 where there is no whole (or it is too small to divide by)."""
    ratio = part / whole if whole else 0.0
    return ratio if math.isfinite(ratio) else 0.0


def _envgen_folder(path: Path, warnings: list[str]) -> EnvGenRun:
    """The ``stats`` an EnvGen run folder's design calls were given (a call without stats, the
    first, has none to show)."""
    events_path = path / "events.jsonl"
    if not events_path.is_file():
        raise ValueError(f"{path}: a folder given to report is an EnvGen run (events.jsonl)")
    run = EnvGenRun(name=path.name)
    with open(events_path, "rb") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{events_path}, line {line_number}"
            try:
                event = load_json(line)
            except ValueError as error:
                warnings.append(f"{where}: {error} (skipped)")
                continue
            if not isinstance(event, dict) or event.get("event") != "designs":
                continue
            stats = event.get("stats")
            if not stats:
                continue
            if not isinstance(stats, dict):
                warnings.append(f"{where}: 'stats' is not an object (skipped)")
                continue
            call = event.get("call")
            run.cycles.append((call if count(call) else len(run.cycles)) + 1)
            run.rates.append(_rates(stats, where, warnings))
    return run


def _envgen_benchmark(path: Path, data: dict[str, Any], warnings: list[str]) -> EnvGenRun:
    arm = data.get("arm")
    run = EnvGenRun(name=f"{path.stem} ({arm if isinstance(arm, str) else 'envgen'})")
    for position, cycle in enumerate(data["cycles"]):
        where = f"{path}, cycles[{position}]"
        if not isinstance(cycle, dict):
            warnings.append(f"{where}: not an object (skipped)")
            continue
        given = cycle.get("cycle")
        run.cycles.append(given if count(given) else position + 1)
        scores = cycle.get("eval") or {}
        if not isinstance(scores, dict):
            warnings.append(f"{where}: 'eval' is not an object (ignored)")
            scores = {}
        run.rates.append(_rates(scores, where, warnings))
    return run


def _rates(stats: dict[str, Any], where: str, warnings: list[str]) -> dict[str, float]:
    """Per-skill success in percent; skills whose value is none of EnvGen's forms are left
    out (and named in ``warnings``)."""
    rates, bad = {}, []
    for skill, value in stats.items():
        rate = _percent(value)
        if rate is None:
            bad.append(f"{quoted(skill)} is not a rate")
        else:
            rates[skill] = rate
    if bad:
        warnings.append(f"{where}: {problem_line(bad)} (skipped)")
    return rates


def _percent(value: Any) -> float | None:
    """A skill's success in percent from EnvGen's forms: ``42.0``, ``[mean, std]`` or
    ``{"mean": m, "std": s}``; ``None`` for anything else."""
    if isinstance(value, dict):
        value = value.get("mean")
    elif isinstance(value, list):
        value = value[0] if value else None
    return float(value) if number(value) else None


# ---------------------------------------------------------------------- plots
def _pyplot() -> Any:
    matplotlib = optional_import("matplotlib", extra="report")
    matplotlib.use("Agg")
    return optional_import("matplotlib.pyplot", extra="report", package="matplotlib")


def _png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _label(text: str) -> str:
    """``text`` as matplotlib draws it literally (``$`` would start mathematics; characters
    that print nothing, as controls and direction overrides, show as ``?``), shortened to
    :data:`_LABEL_CHARS` characters."""
    short = text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"
    return "".join(c if c.isprintable() else "?" for c in short).replace("$", r"\$")


def _inches(size: float) -> float:
    """A figure side, at most :data:`_MAX_INCHES` (matplotlib refuses images over 2**16
    pixels a side)."""
    return min(size, _MAX_INCHES)


def _grouped_bars(
    rows: Sequence[ResultRow], value: str, ylabel: str, title: str, intervals: bool = False
) -> str:
    plt = _pyplot()
    envs = list(dict.fromkeys(r.env_id for r in rows))
    labels = list(dict.fromkeys(r.label for r in rows))
    width = 0.8 / len(labels)
    figure, axes = plt.subplots(
        figsize=(_inches(max(6.0, 1.1 * len(envs) * max(1, len(labels)))), 3.8)
    )
    for i, label in enumerate(labels):
        by_env = {r.env_id: r for r in rows if r.label == label}
        xs = [
            j + (i - (len(labels) - 1) / 2) * width for j, env in enumerate(envs) if env in by_env
        ]
        found = [by_env[env] for env in envs if env in by_env]
        heights = [getattr(r, value) for r in found]
        errors = None
        if intervals:
            # the interval holds the rate; max() only absorbs rounding
            errors = [
                [max(0.0, h - r.interval[0]) for h, r in zip(heights, found, strict=True)],
                [max(0.0, r.interval[1] - h) for h, r in zip(heights, found, strict=True)],
            ]
        axes.bar(
            xs, heights, width, label=_label(label), yerr=errors, capsize=3 if intervals else 0
        )
    axes.set_xticks(range(len(envs)), [_label(env.removeprefix("llmgym/")) for env in envs])
    axes.tick_params(axis="x", rotation=30)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    if intervals:
        axes.set_ylim(0, 1.05)
    axes.legend(fontsize=8)
    axes.grid(axis="y", alpha=0.3)
    return _png(figure)


def _skill_heatmap(run: EnvGenRun) -> str:
    plt = _pyplot()
    skills = sorted({skill for rates in run.rates for skill in rates})
    grid = [[rates.get(skill, 0.0) for rates in run.rates] for skill in skills]
    figure, axes = plt.subplots(
        figsize=(_inches(2.5 + 1.0 * len(run.cycles)), _inches(0.3 * len(skills) + 1.2))
    )
    image = axes.imshow(grid, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    axes.set_yticks(range(len(skills)), [_label(skill) for skill in skills], fontsize=8)
    axes.set_xticks(range(len(run.cycles)), [f"cycle {c}" for c in run.cycles], fontsize=8)
    for y, row in enumerate(grid):
        for x, rate in enumerate(row):
            colour = "white" if rate < 60 else "black"
            axes.text(x, y, f"{rate:.0f}", ha="center", va="center", fontsize=7, color=colour)
    figure.colorbar(image, ax=axes, label="success (%)")
    axes.set_title(f"Per-skill success per cycle: {_label(run.name)}")
    return _png(figure)


# ---------------------------------------------------------------------- the page
_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #1d1d1f; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: .3em .7em; border-bottom: 1px solid #ddd; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; display: block; margin: 1em 0; }
.muted { color: #6b6b70; }
"""


def write_report(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    title: str = "",
    warnings: list[str] | None = None,
) -> Path:
    """Write the report of ``paths`` (see the module docstring) to ``out``; return its path.
    What was skipped in the inputs goes to ``warnings`` (see :func:`load_inputs`)."""
    rows, runs = load_inputs(paths, warnings)
    if not rows and not runs:
        raise ValueError("the inputs hold no results and no EnvGen cycles")
    title = title or "llmgym report"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        '<p class="muted">'
        + html.escape(
            f"{len(paths)} input(s): {', '.join(Path(p).name for p in paths)}; written "
            f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}"
        )
        + "</p>",
    ]
    if rows:
        parts += [
            "<h2>Success per environment</h2>",
            "<p>Bars: success rate; whiskers: 95% Wilson interval.</p>",
            _img(_grouped_bars(rows, "success_rate", "success rate", "Success", intervals=True)),
            "<h2>Turns</h2>",
            _img(_grouped_bars(rows, "mean_turns", "turns per episode", "Mean turns")),
            "<h2>Invalid actions and format errors</h2>",
            _img(_grouped_bars(rows, "invalid_rate", "per step", "Invalid-action rate")),
            _img(_grouped_bars(rows, "format_error_rate", "per turn", "Format-error rate")),
            _table(rows),
        ]
    for run in runs:
        if run.cycles:
            parts += [f"<h2>EnvGen: {html.escape(run.name)}</h2>", _img(_skill_heatmap(run))]
        else:
            parts.append(f"<h2>EnvGen: {html.escape(run.name)}</h2><p>No cycle with stats.</p>")
    parts.append("</body></html>")
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path


def _img(data: str) -> str:
    return f'<img alt="plot" src="data:image/png;base64,{data}">'


def _table(rows: Sequence[ResultRow]) -> str:
    head = (
        "<tr><th>environment</th><th>agent</th><th>episodes</th><th>success</th>"
        "<th>95% interval</th><th>mean turns</th><th>invalid / step</th>"
        "<th>format errors / turn</th></tr>"
    )
    body = "".join(
        f"<tr><td>{html.escape(r.env_id)}</td><td>{html.escape(r.label)}</td>"
        f'<td class="num">{r.episodes}</td><td class="num">{r.success_rate:.3f}</td>'
        f'<td class="num">{r.interval[0]:.3f}-{r.interval[1]:.3f}</td>'
        f'<td class="num">{r.mean_turns:.1f}</td><td class="num">{r.invalid_rate:.3f}</td>'
        f'<td class="num">{r.format_error_rate:.3f}</td></tr>'
        for r in rows
    )
    return f"<table>{head}{body}</table>"
