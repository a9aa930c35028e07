"""The engine knows no task type and no evaluation: nothing under engine/ imports
`accord.tasks`, not even inside a function (DESIGN.md, "Layers and names"); what tasks add,
they register."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def _imports_of_tasks(path: Path, root: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # `from ..tasks import x` climbs out of the engine package into the tasks
            names = [("." * node.level) + (node.module or "")]
        else:
            continue
        for name in names:
            if name.startswith(("accord.tasks", "tasks", "..tasks")):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    return found


def test_nothing_under_engine_imports_the_tasks() -> None:
    modules = sorted(ENGINE.rglob("*.py"))
    assert len(modules) > 30  # the engine's modules, found
    offending = [line for path in modules for line in _imports_of_tasks(path, ENGINE.parent)]
    assert offending == []


def test_the_check_finds_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from accord.tasks.evaluators.base import X\n    return X\n")
    assert _imports_of_tasks(module, tmp_path) == ["m.py:2: accord.tasks.evaluators.base"]
