"""Parametrising a test over every registered environment."""

from __future__ import annotations

import importlib
from collections.abc import Collection

import pytest

import llmgym
from llmgym.core.registry import EnvEntry
from llmgym.originals import GENERATED

ORIGINAL_DATA_ONLY = (
    "its tasks are a user's original data, not llmgym's (nothing of llmgym's to pin)"
)
"""Why the pinned-instance tests skip an environment that plays original data only."""


def original_data_only(entry: EnvEntry) -> bool:
    """Whether the environment has no generated tasks (``llmgym/ALFWorld-v0``): its config's
    ``source`` has another default than ``"generated"``. Needs the environment's extra."""
    module, _, name = entry.entry_point.partition(":")
    config_class = getattr(importlib.import_module(module), name).config_class
    return getattr(config_class(), "source", GENERATED) != GENERATED


def environment_params(slow: Collection[str], *, entries: bool = False) -> list:
    """One ``pytest.param`` per environment of the table (its id, or its row with
    ``entries=True``), named by the environment; skipped with the pip command when its extra is
    missing, marked slow when its id is in ``slow``."""
    params = []
    for entry in llmgym.ENVIRONMENTS:
        marks = [pytest.mark.slow] if entry.id in slow else []
        if not entry.available:
            marks.append(pytest.mark.skip(reason=f"needs {entry.install_hint}"))
        params.append(pytest.param(entry if entries else entry.id, id=entry.name, marks=marks))
    return params
