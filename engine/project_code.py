"""Python code a project file names (`agent_class: agents.Support`, a `python` target's
`module:function`): only the project's own. The module must be a file under the project root,
outside the Python installation (a virtualenv kept in the project is the installation, not the
project), and the object it names must be defined there: a name such as `subprocess.Popen`,
or `agents.Popen` for a module that imported it, would let a YAML file run any program.

`module_problem` finds the module's file without running anything (as the import system would
find it, with the root first on `sys.path`), so a file is refused when it is loaded;
`import_from_project` checks again after the import, which a package's own code may steer.
Python callables passed in from Python are the caller's own and are not checked.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

from .errors import AccordError
from .paths import resolved


class ProjectCodeError(AccordError):
    """Code named by a project file that is not the project's own, or cannot be imported."""

    exit_code = 2


def _installation() -> list[Path]:
    """The folders of the running Python's standard library and installed packages."""
    kinds = ("stdlib", "platstdlib", "purelib", "platlib")
    return [resolved(Path(p)) for k, p in sysconfig.get_paths().items() if k in kinds]


def _is_project_file(path: str, root: Path) -> bool:
    real = resolved(Path(path))
    if not real.is_relative_to(resolved(root)):
        return False
    if any(part in ("site-packages", "dist-packages") for part in real.parts):
        return False
    return not any(real.is_relative_to(folder) for folder in _installation())


def search_path(root: Path) -> list[str]:
    """`sys.path` as the import will see it: the project root first unless already on it."""
    return list(sys.path) if str(root) in sys.path else [str(root), *sys.path]


def _locations(name: str, search: list[str]) -> tuple[list[str], list[str]] | None:
    """(the files or folders that make up module `name`, where its submodules are found);
    None when no file holds it."""
    module = sys.modules.get(name)
    if module is not None:
        return _module_files(module), list(getattr(module, "__path__", None) or [])
    for finder in (importlib.machinery.BuiltinImporter, importlib.machinery.FrozenImporter):
        if finder.find_spec(name) is not None:
            return [], []
    spec = importlib.machinery.PathFinder.find_spec(name, search)
    if spec is None:
        return None
    subs = list(spec.submodule_search_locations or [])
    files = [spec.origin] if spec.origin and spec.has_location else subs
    return files, subs


def _module_files(module: ModuleType) -> list[str]:
    file = getattr(module, "__file__", None)
    return [file] if file else list(getattr(module, "__path__", None) or [])


def module_problem(module: str, root: Path) -> str | None:
    """Why `module` is not the project's own code (nothing is imported to find out), or
    None; a module found nowhere is left to the import, which names it."""
    search = search_path(root)
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        found = _locations(name, search)
        if found is None:  # the import will say so; a package may make its submodules
            return None
        files, search = found
        if not files or not all(_is_project_file(f, root) for f in files):
            where = files[0] if files else "built into Python"
            return (
                f"module '{name}' is {where}, not a file of the project (under {root}, outside "
                "the Python installation)"
            )
    return None


def import_from_project(module: str, attribute: str, root: Path, what: str) -> Any:
    """`module.attribute` (dotted), imported with the project root on the path, refused
    unless the module and the object's own module are files of the project."""
    advice = (
        "a project file may name only the project's own Python code: define it in a module "
        "under the project root (a subclass or a function of its own may wrap installed code)"
    )
    problem = module_problem(module, root)
    if problem is not None:
        raise ProjectCodeError(f"{what}: {problem}; {advice}")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        obj: Any = importlib.import_module(module)
        for part in attribute.split("."):
            obj = getattr(obj, part)
    except Exception as exc:
        raise ProjectCodeError(f"cannot import {what}: {type(exc).__name__}: {exc}") from None
    owner = sys.modules.get(getattr(obj, "__module__", None) or "")
    loaded = sys.modules.get(module)
    for checked in (loaded, owner):
        files = _module_files(checked) if checked is not None else []
        if not files or not all(_is_project_file(f, root) for f in files):
            name = checked.__name__ if checked is not None else getattr(obj, "__module__", "?")
            raise ProjectCodeError(
                f"{what}: it comes from module '{name}' "
                f"({files[0] if files else 'built into Python'}), not a file of the project "
                f"under {root}; {advice}"
            )
    return obj
