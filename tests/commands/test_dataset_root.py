"""A custom test's `dataset:` is relative to the project root, and a missing one says so
(not "not found under" the tested file's folder)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.commands.conftest import accord_test
from tests.fakes import FakeOpenAI

WORKFLOW = """
variables:
  question: "How many?"
tasks:
  - name: count
    type: agent
    prompt: "{{ question }}"
tests:
  - type: custom
    dataset: flows/cases.yml
    workflow_variable_name: question
"""


def test_missing_dataset_names_the_project_root(
    project: Callable[..., Path], fake_llm: FakeOpenAI, tmp_path: Path
) -> None:
    path = project({"flows/w.workflow.yml": WORKFLOW})
    run = accord_test(path, "--format", "json")
    assert run.exit_code == 2, run.stderr
    assert fake_llm.requests == []
    root = tmp_path.resolve()
    assert (
        f"{path}:9:14 tests[0].dataset: dataset file 'flows/cases.yml' not found under the "
        f"project root {root} (paths are relative to it, not to this file)"
    ) in run.stderr
    assert f"under {root / 'flows'}" not in run.stderr
