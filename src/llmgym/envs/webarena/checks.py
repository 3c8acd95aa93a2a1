"""Helpers for the program checks of content and configuration changes (the forum, GitLab and
wiki templates share them)."""

from __future__ import annotations

from llmgym.envs.webarena.database import Dataset
from llmgym.envs.webarena.tasks import Data

__all__ = ["only_added"]


def only_added(state: Data, dataset: type[Dataset], query: str, *rows: tuple) -> bool:
    """Whether ``query``'s rows after the episode are those of the generated data plus exactly
    ``rows`` (nothing else added, nothing removed or changed)."""
    before, after = state.initial.all(dataset, query), state.all(dataset, query)
    return sorted(after) == sorted([*before, *rows])
