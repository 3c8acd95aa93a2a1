"""Shared test configuration: the ``slow`` marker, the list of environments under test, and
where test servers host sessions."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.alfworld_data import write_alfworld

# The Ray instances and clusters of the tests run on 127.0.0.1 for one test each: without Ray's
# token authentication, whatever token ~/.ray/auth_token holds (set before Ray is imported)
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

_ALFWORLD_DATA: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    # A shell that runs the suite in the background without job control starts it with SIGINT
    # ignored: Python then installs no KeyboardInterrupt handler, and every child process
    # inherits the ignoring. The tests of Ctrl-C need a terminal's default (children of a
    # process with a handler start with SIGINT's default action).
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # llmgym/ALFWorld-v0 has no tasks of its own: every test that loops over the registered
    # environments plays it on small games in ALFWorld's layout, through ALFWorld's own
    # variable (a user's real $ALFWORLD_DATA would make those tests play thousands of games)
    directory = tempfile.mkdtemp(prefix="llmgym-alfworld-")
    _ALFWORLD_DATA.append(directory)
    os.environ["ALFWORLD_DATA"] = str(write_alfworld(Path(directory)))


def pytest_unconfigure(config: pytest.Config) -> None:
    for directory in _ALFWORLD_DATA:
        shutil.rmtree(directory, ignore_errors=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run tests marked slow (CI does)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module", params=["in-process", pytest.param("ray", marks=pytest.mark.slow)])
def hosting(request: pytest.FixtureRequest):
    """Where a test server hosts its sessions, as ``ServerSettings`` fields: in its own process
    (``{}``), or in actors of a local Ray instance started once per module (slow)."""
    if request.param == "in-process":
        yield {}
        return
    from tests.servers import local_ray

    with local_ray():
        yield {"ray": "local"}
