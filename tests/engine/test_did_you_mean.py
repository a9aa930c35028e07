"""The hint of every "unknown name" message comes from one helper, `errors.did_you_mean`."""

from __future__ import annotations

import ast
from pathlib import Path

from accord.engine.errors import did_you_mean

ROOT = Path(__file__).resolve().parents[2]


def test_the_closest_known_name_worded_into_the_message() -> None:
    known = ["model", "models", "database"]
    assert did_you_mean("modle", known) == "; did you mean 'model'?"
    assert did_you_mean("databse", known, before=": ") == ": did you mean 'database'?"
    assert did_you_mean("modle", known, before="", after=" ") == "did you mean 'model'? "


def test_no_hint_when_nothing_is_close() -> None:
    assert did_you_mean("zzz", ["model", "database"]) == ""
    assert did_you_mean("model", []) == ""


def test_the_hint_is_the_same_whatever_the_order_of_the_names() -> None:
    names = ["cat", "bat", "hat"]  # as close to "at" as each other
    assert {did_you_mean("at", order) for order in (names, names[::-1], set(names))} == {
        did_you_mean("at", sorted(names))
    }


def test_no_other_module_computes_close_matches() -> None:
    modules = [
        *(ROOT / "engine").rglob("*.py"),
        *(ROOT / "tasks").rglob("*.py"),
        *(ROOT / "src" / "accord").glob("*.py"),  # (engine/ and tasks/ are links there)
    ]
    assert len(modules) > 200
    found = []
    for path in sorted(modules):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute | ast.alias) and "get_close_matches" in (
                getattr(node, "attr", None),
                getattr(node, "name", None),
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert [where.partition(":")[0] for where in found] == ["engine/errors.py"], found
