"""What several commands share: exit statuses and one-line errors, the argument parser, option
types, tables, environment ids."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NoReturn

from llmgym.envs import get_entry, load_entry
from llmgym.errors import LLMGymError

__all__ = [
    "ENV_ID_HELP",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "PORT",
    "USER_ERRORS",
    "CommandParser",
    "NoteGiven",
    "address",
    "format_table",
    "given",
    "integer",
    "json_object",
    "listen_errors",
    "number",
    "resolve_id",
    "run_command",
    "run_module_main",
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


def integer(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An ``argparse`` type: a whole number from ``minimum`` (to ``maximum``); argparse names
    the option in front of the message, which gives the allowed range."""
    allowed = f"an integer >= {minimum}"
    if maximum is not None:
        allowed = f"an integer from {minimum} to {maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {value}")
        return value

    return parse


def number(minimum: float | None = None, *, inclusive: bool = False) -> Callable[[str], float]:
    """An ``argparse`` type: a finite number, above ``minimum`` (or from it, ``inclusive``)
    where one is given."""
    allowed = "a finite number"
    if minimum is not None:
        allowed = f"a number {'>=' if inclusive else '>'} {minimum:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {text!r}") from None
        within = minimum is None or (value >= minimum if inclusive else value > minimum)
        if not (math.isfinite(value) and within):
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {text}")
        return value

    return parse


PORT = integer(0, 65535)
"""An ``argparse`` type: a TCP port (0: the system picks a free one)."""


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


# --------------------------------------------------------------------- parsing, errors
USER_ERRORS = (LLMGymError, KeyError, ValueError, OSError)
"""What ends a command with one line and :data:`EXIT_ERROR`: llmgym's errors, and the built-in
ones bad input raises (an unknown id, a bad value, a missing file)."""


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, as every other error of a command (not
    argparse's usage block), and that suggests the closest choices for a mistyped one
    (``llmgym evl``: did you mean eval?)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    # argparse's own check lists every choice and suggests none (before Python 3.14)
    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is None or value in action.choices:
            return
        if isinstance(action, argparse._SubParsersAction):
            raise argparse.ArgumentError(
                None, f"unknown command {value!r}; {_closest(value, action.choices)}"
            )
        raise argparse.ArgumentError(
            action, f"invalid choice {value!r}; {_closest(value, action.choices)}"
        )


def _closest(value: Any, choices: Iterable[Any]) -> str:
    """``did you mean X?`` for the choices close to ``value``, or the list of choices."""
    names = [str(choice) for choice in choices]
    close = difflib.get_close_matches(str(value), names, n=3, cutoff=0.6)
    if close:
        return f"did you mean {' or '.join(close)}?"
    return f"choose from {', '.join(names)}"


def _error_message(error: BaseException) -> str:
    """One line for ``error``: a KeyError without its quotes, a file error with its file."""
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.strerror}: {error.filename}"
    return str(error)


def run_command(
    run: Callable[[], int], *, prog: str = "llmgym", on_interrupt: Callable[[], str] | None = None
) -> int:
    """``run()``'s exit status; the errors a user can fix, Ctrl-C and a closed pipe end in one
    line on stderr (``on_interrupt``: what to add after Ctrl-C) and their exit status."""
    try:
        code = run()
        sys.stdout.flush()  # a reader that went away shows here, not at the interpreter's exit
        return code
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        if on_interrupt is not None:
            print(on_interrupt(), file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `llmgym list | head -1`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except USER_ERRORS as error:
        print(f"{prog}: error: {_error_message(error)}", file=sys.stderr)
        return EXIT_ERROR


def run_module_main(module: str) -> int:
    """``python -m MODULE`` for a module of llmgym with a ``main()``: imports the module by its
    name and runs its ``main()`` as :func:`run_command` runs a command, so that its errors are
    one line, the missing pip extra its import raises included. The module calls this first
    thing when run as ``__main__``."""
    return run_command(lambda: importlib.import_module(module).main(), prog=f"python -m {module}")


def address(host: str, port: int) -> str:
    """``host:port``, an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@contextlib.contextmanager
def listen_errors(
    where: str, fix: str = "choose another --port (0 picks a free one)"
) -> Iterator[None]:
    """Turns a failure to listen (the port taken, an address not this machine's, a port the
    user may not open) into a one-line error naming ``where`` and ``fix``; other errors, such
    as those of files (which name the file), pass."""
    try:
        yield
    except OSError as error:
        if error.filename is not None or error.errno not in _LISTEN_ERRORS:
            raise
        raise ValueError(f"cannot listen on {where} ({error.strerror}); {fix}") from None


_LISTEN_ERRORS = {errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES}
