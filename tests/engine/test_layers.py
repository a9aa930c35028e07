"""The engine knows no task type and no evaluation: nothing under engine/ imports
`accord.tasks`, not even inside a function (DESIGN.md, "Layers and names"); what tasks add,
they register."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.layers import imports_of

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def test_nothing_under_engine_imports_the_tasks() -> None:
    modules = sorted(ENGINE.rglob("*.py"))
    assert len(modules) > 30  # the engine's modules, found
    offending = [line for path in modules for line in imports_of(path, ENGINE.parent, "tasks")]
    assert offending == []


def test_the_check_finds_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from accord.tasks.evaluators.base import X\n    return X\n")
    assert imports_of(module, tmp_path, "tasks") == ["m.py:2: accord.tasks.evaluators.base"]


# What evaluation adds to files and to the run store: the words the engine's file models, its
# compiler and its store used to hold (a workflow's `tests:` and `consistency_prompt`, a
# battle's baselines), now registered by the tasks that own them.
SECTION_NAMES = {"tests", "consistency_prompt", "task_ref"}
BASELINE_NAMES = {"baseline", "baselines", "battle"}
EVALUATION_NAMES = SECTION_NAMES | BASELINE_NAMES
KNOWS_NO_EVALUATION = {
    **dict.fromkeys(("spec.py", "specbase.py", "plan.py", "compile.py", "loader.py"),
                    SECTION_NAMES),
    **dict.fromkeys(("store.py", *(f"cli/{p.name}" for p in sorted((ENGINE / "cli").glob("*.py")))),
                    BASELINE_NAMES),
}  # fmt: skip


def _names_in(path: Path) -> set[str]:
    """Identifiers, attribute and field names, and the words of string constants that are not
    docstrings (keys such as `("tests", index)`, SQL such as `FROM baselines`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg is not None):
            names.add(node.arg)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            names.update(re.findall(r"[a-z_]+", node.value))
    return names


def test_the_engines_file_models_compiler_and_store_name_no_evaluation() -> None:
    named = {name: sorted(_names_in(ENGINE / name) & words)
             for name, words in KNOWS_NO_EVALUATION.items()}  # fmt: skip
    assert named == {name: [] for name in KNOWS_NO_EVALUATION}


def test_the_check_finds_a_field_a_key_and_a_table(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Docstrings may say tests."""\n'
        "class W:\n    consistency_prompt: str\n"
        "LOC = ('tests', 0, 'task_ref')\nSQL = 'SELECT * FROM baselines'\n"
    )
    found = _names_in(module) & EVALUATION_NAMES
    assert found == {"consistency_prompt", "tests", "task_ref", "baselines"}


def test_tests_and_consistency_prompt_are_sections_the_tasks_register() -> None:
    from accord.engine.kinds import SECTIONS
    from accord.engine.loader import agent_model, workflow_model

    for name in ("tests", "consistency_prompt"):
        check = SECTIONS.get(name).check
        assert check is not None and check.__module__.startswith("accord.tasks."), name
        assert name in workflow_model().model_fields
    assert "tests" in agent_model().model_fields
    assert "consistency_prompt" not in agent_model().model_fields  # a workflow's only
