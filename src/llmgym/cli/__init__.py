"""The ``llmgym`` command line: list, play, eval, match, collect, envgen, convert, serve, export,
view, report, render, webarena and data.

One module per command, each with ``add_parser(commands)`` (its options) and ``run(args)``
(parse, call the library, print); what a command does lives in the library (an evaluation in
:mod:`llmgym.runner.runs`, the server in :mod:`llmgym.serving.server`, ...). What can go
wrong maps to the exit status in one place, :func:`llmgym.cli.common.run_command` (which
``python -m llmgym.envs.textworld`` shares): 0 done, 1 a run whose every episode failed or a
reader that went away, :data:`EXIT_ERROR` (2) for an :class:`~llmgym.errors.LLMGymError`, a bad
option or another error a user can fix, in one line, and :data:`EXIT_INTERRUPTED` (130) after
Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import threading
from collections.abc import Sequence

import llmgym
from llmgym.cli.common import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    CommandParser,
    format_table,
    run_command,
)

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
    "data",
)
"""The subcommands, in the order ``llmgym --help`` lists them; each is the module
``llmgym.cli.<name>``."""


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
    parser = CommandParser(prog="llmgym", description="Text environments for LLM agents.")
    parser.add_argument("--version", action="version", version=f"llmgym {llmgym.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"llmgym.cli.{name}").add_parser(commands)
    for command in commands.choices.values():
        command.formatter_class = _HelpFormatter
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``llmgym`` command: its exit status (``--help`` and a bad command
    line included)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a mistake already said in one line
        return stop.code if isinstance(stop.code, int) else EXIT_ERROR
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
    """Run the command: errors a user can fix, Ctrl-C and a closed pipe end in one line."""
    on_interrupt = getattr(args, "on_interrupt", None)
    return run_command(
        lambda: args.run(args),
        on_interrupt=(lambda: on_interrupt(args)) if on_interrupt is not None else None,
    )


def _players(args: argparse.Namespace) -> list[str]:
    """The agents a command line names (``--agent``, ``--agents``, ``--opponent``)."""
    named = [getattr(args, "agent", None), *(getattr(args, "agents", None) or ())]
    return [p for p in (*named, getattr(args, "opponent", None)) if p]


def _episodes_in_flight() -> bool:
    return any(
        thread.name.startswith(("llmgym-rollout", "llmgym-match")) and thread.is_alive()
        for thread in threading.enumerate()
    )
