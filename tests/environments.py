"""Parametrising a test over every registered environment."""

from __future__ import annotations

from collections.abc import Collection

import pytest

import llmgym


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
