"""An environment module whose optional dependency is absent (used by test_core)."""

from llmgym.core.registry import optional_import

optional_import("a_module_that_does_not_exist", extra="fancy")
