"""What several commands share: exit statuses, tables, environment ids, option types."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from llmgym.envs import get_entry, load_entry

__all__ = [
    "ENV_ID_HELP",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "NoteGiven",
    "format_table",
    "given",
    "json_object",
    "non_negative",
    "resolve_id",
]

EXIT_INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT, as shells report it)."""

EXIT_ERROR = 2
"""The exit status after an error the user can fix (the message says how), as argparse's."""

ENV_ID_HELP = (
    "an environment id in any case, with or without llmgym/ and the version (wordle, "
    "Wordle-v0), or a user environment's module:Class"
)


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain-text table with a header row; floats are shown with three decimals."""

    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    cells = [[cell(row.get(column, "")) for column in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def resolve_id(env_id: str) -> str:
    """The id of an environment named on the command line: any spelling
    :func:`~llmgym.envs.get_entry` accepts (``wordle``, ``Wordle-v0``), or a user environment's
    ``module:Class``."""
    return (load_entry(env_id) if ":" in env_id else get_entry(env_id)).id


def non_negative(text: str) -> int:
    """An ``argparse`` type: an integer >= 0."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def json_object(text: str) -> dict[str, Any]:
    """An ``argparse`` type: a JSON object (``--config``)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


class NoteGiven(argparse.Action):
    """Stores the value like ``store`` and notes that the option was given: options that
    conflict with others only when given (not by their default) are checked with
    :func:`given`."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.given = {*getattr(namespace, "given", ()), self.dest}


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether the option of ``dest`` (stored by :class:`NoteGiven`) was on the command line."""
    return dest in getattr(args, "given", ())


def warn(warnings: Sequence[str], count: int, most: int = 10) -> None:
    """The first ``most`` of ``count`` warnings on stderr, one line each, then how many more
    there were."""
    for warning in warnings[:most]:
        print(f"llmgym: warning: {warning}", file=sys.stderr)
    if count > most:
        print(f"llmgym: warning: {count - most} more warnings like these", file=sys.stderr)
