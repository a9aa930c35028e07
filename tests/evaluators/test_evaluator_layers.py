"""The evaluator library stands below the suites: nothing under tasks/evaluators imports
`accord.tasks.suites`, not even inside a function or for types only, so an evaluator can be
used (and tested) without the evaluation core or any front-end; the contract it is written
against (`Case`, `Output`, `EvalContext`, `parse_choice`) lives in the library itself."""

from __future__ import annotations

from pathlib import Path

from tests.layers import imports_of

EVALUATORS = Path(__file__).resolve().parents[2] / "tasks" / "evaluators"


def test_nothing_under_evaluators_imports_the_suites() -> None:
    modules = sorted(EVALUATORS.rglob("*.py"))
    assert {"base.py", "cases.py", "judging.py", "judged.py"} <= {m.name for m in modules}
    offending = [
        line for path in modules for line in imports_of(path, EVALUATORS.parent, "tasks.suites")
    ]
    assert offending == []


def test_the_check_finds_a_type_only_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from accord.tasks.suites.core.cases import Suite\n"
        "def f():\n"
        "    from ..suites.oxy import grading\n"
    )
    assert imports_of(module, tmp_path, "tasks.suites", name="accord.tasks.evaluators.m") == [
        "m.py:3: accord.tasks.suites.core.cases",
        "m.py:5: accord.tasks.suites.oxy",
    ]


def test_the_contract_is_the_librarys() -> None:
    """What evaluators are written against is importable from the library alone, and the
    suites use the same objects (not copies)."""
    from accord.tasks.evaluators.cases import Case, Output
    from accord.tasks.evaluators.judging import EvalContext, parse_choice
    from accord.tasks.suites.core import cases, nodes

    assert nodes.Case is Case and nodes.Output is Output and nodes.EvalContext is EvalContext
    assert cases.Suite.__module__ == "accord.tasks.suites.core.cases"
    assert parse_choice("I pick\nAnswer: Yes", ["Yes", "No"]) == "Yes"
