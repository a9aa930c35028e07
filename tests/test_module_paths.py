"""Module paths written as strings stay absolute and are edited by hand when a module moves
(the front-end list, the lazy command map, the public API table, registries' members, the
entry points): every one of them must import, with its attribute when it names one."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATH = re.compile(r"accord(?:\.\w+)+(?::\w+)?")
# the first name after `accord.` of a string that is a module path (others, like the entry
# point group `accord.plugins` or a codec type name, are names of another kind)
PACKAGE = {p.stem for p in (ROOT / "src" / "accord").iterdir() if not p.name.startswith("_")}


def module_paths() -> dict[str, str]:
    found: dict[str, str] = {}
    for folder in (ROOT / "engine", ROOT / "tasks", ROOT / "src" / "accord"):
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value
                    if PATH.fullmatch(text) and text.split(".")[1].split(":")[0] in PACKAGE:
                        found.setdefault(text, f"{path.relative_to(ROOT)}:{node.lineno}")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for group in project.get("entry-points", {}).values():
        for target in group.values():
            found.setdefault(target, "pyproject.toml")
    for target in project.get("scripts", {}).values():
        found.setdefault(target, "pyproject.toml")
    return found


def resolves(text: str) -> bool:
    module, _, attribute = text.partition(":")
    try:
        value = importlib.import_module(module)
    except ModuleNotFoundError:  # `package.module.attribute` written with dots
        parent, _, attribute = module.rpartition(".")
        value = importlib.import_module(parent)
        return hasattr(value, attribute)
    return not attribute or hasattr(value, attribute)


def test_every_module_path_written_as_a_string_imports() -> None:
    paths = module_paths()
    # the front-ends, the public API table and the registries' members are among them
    assert "accord.tasks.suites.frontends.promptfoo.frontend:FRONTEND" in paths
    assert "accord.tasks.evaluators" in paths
    assert len(paths) > 20
    unresolved = [f"{where}: {text}" for text, where in paths.items() if not resolves(text)]
    assert unresolved == []


def test_a_moved_module_is_caught() -> None:
    assert resolves("accord.tasks.suites.core.frontend:BUILTIN")
    assert not resolves("accord.tasks.suites.core.frontend:NO_SUCH_NAME")
