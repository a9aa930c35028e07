"""What a module imports that a layer below must not: tests/engine/test_layers.py (the engine
imports no task) and tests/evaluators/test_evaluator_layers.py (the evaluators no suite)."""

from __future__ import annotations

import ast
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def module_of(path: Path) -> list[str]:
    """The dotted name of a module of the package, as parts (`accord.tasks.x`): the top-level
    engine/ and tasks/ folders are `accord.engine` and `accord.tasks` (src/accord's links)."""
    path = path.resolve()
    for top, prefix in (
        (REPOSITORY / "src" / "accord", ("accord",)),
        (REPOSITORY / "engine", ("accord", "engine")),
        (REPOSITORY / "tasks", ("accord", "tasks")),
    ):
        if path.is_relative_to(top):
            return [*prefix, *path.relative_to(top).with_suffix("").parts]
    return list(path.with_suffix("").parts[-1:])


def absolute(node: ast.ImportFrom, module: list[str]) -> str:
    """The module an import statement names, a relative one resolved against `module`."""
    if not node.level:
        return node.module or ""
    package = module if module[-1] == "__init__" else module[:-1]
    package = [part for part in package if part != "__init__"]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(path: Path, root: Path, package: str, name: str | None = None) -> list[str]:
    """Every import of `accord.<package>` (or `<package>`) in the module, relative imports
    resolved, functions' and type-only imports included, as `file:line: name`. `name`: the
    module's dotted name, when the file is not one of the package's own."""
    module = name.split(".") if name else module_of(path)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node, module)
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if any(
                name == f"{p}" or name.startswith(f"{p}.") for p in (f"accord.{package}", package)
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
                break
    return found
