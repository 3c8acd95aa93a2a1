"""Skip a test whose pip extra is not installed, naming the pip command that adds it.

``need("crafter")`` returns the module, or skips with ``needs pip install -e '.[crafter]'``;
with only ``pip install -e '.[test]'`` every test module still collects.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from llmgym.core.registry import install_command

EXTRA_OF_MODULE = {
    "bs4": "webshop",
    "crafter": "crafter",
    "datasets": "trl",
    "fast_downward": "alfworld",
    "fastapi": "serve",
    "matplotlib": "report",
    "mcp": "mcp",
    "mcp.server.mcpserver": "verifiers",
    "minigrid": "babyai",
    "mypy": "test",
    "openenv": "openenv",
    "opensimplex": "crafter",
    "pettingzoo": "multiagent",
    "PIL": "report",
    "playwright": "test",
    "procgen": "procgen",
    "pyarrow": "searchqa",
    "ray": "ray",
    "schemathesis": "test",
    "scienceworld": "sciworld",
    "scipy": "train",
    "stable_baselines3": "train",
    "textworld": "textworld",
    "torch": "train",
    "transformers": "trl",
    "trl": "trl",
    "uvicorn": "serve",
    "verifiers": "verifiers",
    "websockets": "serve",
}
"""The extra that provides each optional module the tests import (see pyproject.toml): a
module's own row, else its top-level package's (mcp 2's ``mcp.server.mcpserver`` comes with
verifiers, the mcp 1 SDK with [mcp])."""


def need(module: str) -> ModuleType:
    """``module``, imported; or skip the test (or the whole test module, at its top) with the
    pip command that installs the extra providing it."""
    extra = EXTRA_OF_MODULE.get(module) or EXTRA_OF_MODULE[module.split(".")[0]]
    return pytest.importorskip(module, reason=f"needs {install_command(extra)}")
