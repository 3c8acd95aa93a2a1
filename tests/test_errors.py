"""``llmgym.errors`` holds every public exception of the library, under one root, with the
built-in bases callers catch them by; the command line maps the whole hierarchy to one exit
status."""

from __future__ import annotations

import ast
import builtins
import pickle
import socket
from pathlib import Path

import pytest
from gymnasium.error import ResetNeeded

import llmgym
from llmgym import errors
from llmgym.agents import OpenAIChatAgent
from llmgym.cli import main
from llmgym.serving.client import RemoteEnv

SRC = Path(llmgym.__file__).resolve().parent


def _is_exception_base(base: ast.expr) -> bool:
    name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
    builtin = getattr(builtins, name, None)
    known = isinstance(builtin, type) and issubclass(builtin, BaseException)
    return known or name in errors.__all__ or name in ("ResetNeeded", "LLMGymError")


def test_every_public_exception_class_is_defined_in_llmgym_errors() -> None:
    elsewhere = [
        f"{path.relative_to(SRC)}:{node.lineno} {node.name}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "errors.py" or path.parent != SRC
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
        and not node.name.startswith("_")
        and any(_is_exception_base(base) for base in node.bases)
    ]
    assert elsewhere == []


def test_one_root_and_the_builtin_bases_callers_rely_on() -> None:
    classes = [getattr(errors, name) for name in errors.__all__]
    assert all(issubclass(c, BaseException) for c in classes)
    assert [c.__name__ for c in classes if not issubclass(c, errors.LLMGymError)] == [
        "PluginWarning"
    ]
    assert issubclass(errors.PluginWarning, UserWarning)
    builtin_bases = {
        errors.ConfigError: ValueError,
        errors.MissingDependencyError: ImportError,
        errors.ChatError: RuntimeError,
        errors.RemoteEnvError: RuntimeError,
        errors.AuthenticationError: PermissionError,
        errors.EpisodeEndedError: ResetNeeded,
        errors.NestingError: ValueError,
    }
    for error, base in builtin_bases.items():
        assert issubclass(error, base), error
    assert llmgym.ConfigError is errors.ConfigError
    assert llmgym.MissingDependencyError is errors.MissingDependencyError


def _dead_url() -> str:
    """A loopback address nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_a_gone_model_server_and_a_gone_environment_server_raise_one_class() -> None:
    with pytest.raises(errors.ServerUnavailableError) as environment_server:
        RemoteEnv(_dead_url(), "llmgym/Wordle-v0", retries=0)
    agent = OpenAIChatAgent(
        "m", base_url=f"{_dead_url()}/v1", max_retries=0, max_consecutive_failures=1
    )
    with pytest.raises(errors.ServerUnavailableError) as model_server:
        agent.act("hello", {})
    assert type(environment_server.value) is type(model_server.value)
    assert isinstance(model_server.value, errors.ChatError)
    assert isinstance(environment_server.value, errors.RemoteEnvError)


def test_hosting_errors_keep_their_field_and_code_across_pickling() -> None:
    error = errors.InvalidRequestError("bad width", field="width", code="invalid_config")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is errors.InvalidRequestError
    assert copy.to_dict() == {"error": "invalid_config", "message": "bad width", "field": "width"}
    assert copy.status == 422


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "maze", "--config", '{"width": 1000}', "--quiet"], "width"),  # ConfigError
        (["eval", "no-such-env", "--quiet"], "no-such-env"),  # KeyError
    ],
)
def test_the_command_line_ends_every_llmgym_error_in_one_line_with_status_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith("llmgym: error: ") and error.count("\n") == 1 and message in error
