"""Registries: one mechanism for every closed set (task types, evaluators, databases,
report and export formats)."""

from __future__ import annotations

import pytest

from accord.engine.errors import ConfigError
from accord.engine.registry import TASK_TYPES, Registry, RegistryError


def test_a_duplicate_name_is_an_error() -> None:
    registry: Registry[int] = Registry("widget", plugins=False)
    registry.add("a", 1)
    with pytest.raises(RegistryError, match="widget 'a' is registered twice"):
        registry.add("a", 2)


def test_a_missing_name_lists_the_known_ones() -> None:
    registry: Registry[int] = Registry("widget", plugins=False)
    registry.add("beta", 1)
    registry.add("alpha", 2)
    with pytest.raises(ConfigError, match=r"unknown widget 'gamma' \(known: alpha, beta\)"):
        registry.get("gamma")


def test_reset_forgets_what_a_test_registered() -> None:
    builtin = TASK_TYPES.names()
    formatter = TASK_TYPES.get("formatter")
    TASK_TYPES.add("extra_for_test", formatter)
    assert "extra_for_test" in TASK_TYPES
    TASK_TYPES.reset()
    assert TASK_TYPES.names() == builtin


def test_the_builtin_members_are_registered() -> None:
    from accord.tasks.evaluators import EVALUATORS

    assert {"agent", "execute_sql", "formatter", "loop_sequential"} <= set(TASK_TYPES)
    assert set(EVALUATORS) == {"similarity", "correctness", "context_recall"}
