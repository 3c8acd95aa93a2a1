"""The ``llmgym`` command line: list, play, eval, match, collect, envgen, convert, serve, export,
view, report, render and webarena.

One module per command, each with ``add_parser(commands)`` (its options) and ``run(args)``
(parse, call the library, print); what a command does lives in the library (an evaluation in
:mod:`llmgym.runner.runs`, the server in :mod:`llmgym.serving.server`, ...). :func:`main` maps
what can go wrong to the exit status, in one place: 0 done, 1 a run whose every episode failed
or a reader that went away, :data:`EXIT_ERROR` (2) for an :class:`~llmgym.errors.LLMGymError`
or another error a user can fix, in one line, and :data:`EXIT_INTERRUPTED` (130) after Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import threading
from collections.abc import Sequence

import llmgym
from llmgym.cli.common import EXIT_ERROR, EXIT_INTERRUPTED, format_table
from llmgym.errors import LLMGymError

__all__ = ["COMMANDS", "EXIT_ERROR", "EXIT_INTERRUPTED", "build_parser", "format_table", "main"]

COMMANDS = (
    "list",
    "play",
    "eval",
    "match",
    "collect",
    "envgen",
    "convert",
    "serve",
    "export",
    "view",
    "report",
    "render",
    "webarena",
)
"""The subcommands, in the order ``llmgym --help`` lists them; each is the module
``llmgym.cli.<name>``."""

USER_ERRORS = (LLMGymError, KeyError, ValueError, OSError)
"""What ends a command with one line and :data:`EXIT_ERROR`: llmgym's errors, and the built-in
ones bad input raises (an unknown id, a bad value, a missing file)."""


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default after its help, unless the help names it already or the
    default is nothing to show (``None``, ``False``)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default is None or action.default is False:
            return text
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``llmgym`` command."""
    parser = argparse.ArgumentParser(prog="llmgym", description="Text environments for LLM agents.")
    parser.add_argument("--version", action="version", version=f"llmgym {llmgym.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"llmgym.cli.{name}").add_parser(commands)
    for command in commands.choices.values():
        command.formatter_class = _HelpFormatter
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``llmgym`` command."""
    args = build_parser().parse_args(argv)
    if getattr(args, "native_tools", False):
        args.react = False
    if "human" in _players(args):
        args.quiet = True  # a progress bar would garble the person's prompt
    code = _run(args)
    if code == EXIT_INTERRUPTED and _episodes_in_flight():
        # Each worker thread would play its episode to the end (minutes, with a slow model)
        # before the interpreter may exit; what finished is written already.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _run(args: argparse.Namespace) -> int:
    """Run the command; errors a user can fix, Ctrl-C and a closed pipe end in one line."""
    try:
        code = args.run(args)
        sys.stdout.flush()  # a reader that went away shows here, not at the interpreter's exit
        return code
    except KeyboardInterrupt:
        print("\nllmgym: interrupted", file=sys.stderr)
        if getattr(args, "on_interrupt", None):
            print(args.on_interrupt(args), file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `llmgym list | head -1`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except USER_ERRORS as error:
        print(f"llmgym: error: {_message(error)}", file=sys.stderr)
        return EXIT_ERROR


def _message(error: Exception) -> str:
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.strerror}: {error.filename}"
    return str(error)


def _players(args: argparse.Namespace) -> list[str]:
    """The agents a command line names (``--agent``, ``--agents``, ``--opponent``)."""
    named = [getattr(args, "agent", None), *(getattr(args, "agents", None) or ())]
    return [p for p in (*named, getattr(args, "opponent", None)) if p]


def _episodes_in_flight() -> bool:
    return any(
        thread.name.startswith(("llmgym-rollout", "llmgym-match")) and thread.is_alive()
        for thread in threading.enumerate()
    )
