"""Where llmgym keeps data it builds once (search indexes, compiled games): never in the repo."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

__all__ = ["cache_dir"]


def cache_dir(*parts: str) -> Path:
    """``$LLMGYM_CACHE_DIR`` (default: ``platformdirs.user_cache_dir("llmgym")``) joined with
    ``parts``. The folder is not created."""
    override = os.environ.get("LLMGYM_CACHE_DIR")
    root = Path(override) if override else Path(platformdirs.user_cache_dir("llmgym"))
    return root.joinpath(*parts)
