"""The compiled Crafter's numba cache: under llmgym's cache folder, never numba's global
setting changed, and no cache at all (compiled per process) where the folder cannot be
written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.extras import need

need("crafter")

from llmgym.envs.crafter import jit


@pytest.fixture
def fresh_folder() -> Iterator[None]:
    jit._cache_folder.cache_clear()
    yield
    jit._cache_folder.cache_clear()


def _add_one(x: int) -> int:
    return x + 1


def test_compiled_code_is_cached_under_llmgyms_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_folder: None
) -> None:
    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(tmp_path))
    users_setting = jit.numba.config.CACHE_DIR
    compiled = jit.njit(_add_one)
    assert users_setting == jit.numba.config.CACHE_DIR  # numba's own setting is untouched
    assert compiled(41) == 42
    assert list((tmp_path / "numba").rglob("*.nbi")), "no cache index written"


def test_an_unwritable_cache_folder_compiles_without_a_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_folder: None
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("LLMGYM_CACHE_DIR", str(blocker / "cache"))
    assert jit._cache_folder() is None
    compiled = jit.njit(_add_one)
    assert compiled(1) == 2
    assert not compiled._cache.__class__.__name__.endswith("FunctionCache")
