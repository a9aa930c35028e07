"""promptfoo's loader reads AgentV 4 files through a dialect object: promptfoo's modules
import nothing of AgentV's, and a file of promptfoo's form is parsed once, whichever
front-end loads it (the AgentV 4 claim's parse is the load's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from accord.engine import yamlmarks
from accord.tasks.suites.core.frontend import Request, load
from tests.layers import imports_of

SUITES = Path(__file__).resolve().parents[3] / "tasks" / "suites" / "frontends"


def test_no_module_of_promptfoo_imports_agentv() -> None:
    modules = sorted((SUITES / "promptfoo").rglob("*.py"))
    assert len(modules) > 20  # promptfoo's modules, found
    root = SUITES.parents[2]
    offending = [
        line for path in modules for line in imports_of(path, root, "tasks.suites.frontends.agentv")
    ]
    assert offending == []


TESTS = """
tests:
  - {ID}vars: {q: hello}
    assert: [{type: contains, value: hell}]
"""


@pytest.mark.parametrize(("test_id", "frontend"), [("id: one\n    ", "agentv4"), ("", "promptfoo")])
def test_a_file_of_promptfoos_form_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, test_id: str, frontend: str
) -> None:
    # no AgentV-only top-level key: the AgentV 4 claim parses the file to look for test ids
    path = tmp_path / "suite.yaml"
    path.write_text("prompts: ['{{ q }}']\nproviders: [echo]\n" + TESTS.replace("{ID}", test_id))
    parsed: list[Path | None] = []
    lean = yamlmarks._lean

    def counted(*args: Any, **kwargs: Any) -> Any:
        parsed.append(args[2])  # (loader, text, path, marks, duplicates)
        return lean(*args, **kwargs)

    monkeypatch.setattr(yamlmarks, "_lean", counted)
    (suite,) = load(path, Request())
    assert suite.frontend == frontend
    assert [p for p in parsed if p is not None and Path(p).resolve() == path.resolve()] == [path]
