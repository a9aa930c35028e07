"""The evaluation wing's floors (tasks/suites/__init__.py): core stands below everything,
testing below the front-ends (promptfoo below AgentV:
tests/frontends/promptfoo/test_dialect.py); each floor imports nothing above it, not even
inside a function or for types only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.layers import imports_of

ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "tasks" / "suites"
ABOVE_CORE = ("testing", "frontends", "commands", "reports", "compare")


def found(folder: Path, package: str) -> list[str]:
    return [line for p in sorted(folder.rglob("*.py")) for line in imports_of(p, ROOT, package)]


@pytest.mark.parametrize("above", ABOVE_CORE)
def test_core_imports_nothing_above_it(above: str) -> None:
    assert len(list((SUITES / "core").glob("*.py"))) > 8
    assert found(SUITES / "core", f"tasks.suites.{above}") == []


@pytest.mark.parametrize("above", ("frontends", "commands"))
def test_the_test_pipeline_imports_no_frontend_and_no_command(above: str) -> None:
    assert found(SUITES / "testing", f"tasks.suites.{above}") == []
