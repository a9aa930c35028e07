"""What a module imports that a layer below must not: tests/engine/test_layers.py (the engine
imports no task) and tests/evaluators/test_evaluator_layers.py (the evaluators no suite)."""

from __future__ import annotations

import ast
from pathlib import Path


def imports_of(path: Path, root: Path, package: str) -> list[str]:
    """Every import of `accord.<package>` (or `<package>`, or `..<last part>` climbing out of
    a sibling package) in the module, functions' and type-only imports included, as
    `file:line: name`."""
    last = package.rsplit(".", 1)[-1]
    prefixes = (f"accord.{package}", package, f"..{last}")
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [("." * node.level) + (node.module or "")]
        else:
            continue
        for name in names:
            if name.startswith(prefixes):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    return found
