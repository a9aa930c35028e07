"""`--output` and `--report` are checked before any test runs: a target that cannot be written
exits 2 with a clear message, and no model is called (no result is thrown away)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.commands.conftest import Script, accord_test
from tests.fakes import FakeOpenAI

WORKFLOW = """
tasks:
  - name: a
    type: agent
    prompt: "question a"
tests:
  - type: consistency
    task_ref: a
    n: 2
"""


@pytest.fixture
def workflow(project: Callable[..., Path], script: Script) -> Path:
    script.answer("question a", "1")
    return project({"flows/w.workflow.yml": WORKFLOW})


def refused(fake: FakeOpenAI, workflow: Path, *args: str | Path) -> str:
    run = accord_test(workflow, *args)
    assert run.exit_code == 2, (run.stdout, run.stderr)
    # no result on stdout: nothing, or (with --format json) only the JSON error document
    assert run.stdout == "" or json.loads(run.stdout)["exit_code"] == 2
    assert fake.requests == []  # nothing ran
    assert "Traceback" not in run.stderr
    return run.stderr


@pytest.mark.parametrize(
    ("option", "fmt", "example"),
    [
        ("--output", "junit", "results.xml"),
        ("--output", "json", "results.json"),
        ("--report", "pretty", "report.html"),
    ],
)
def test_a_folder_is_refused(
    workflow: Path, fake_llm: FakeOpenAI, tmp_path: Path, option: str, fmt: str, example: str
) -> None:
    stderr = refused(fake_llm, workflow, "--format", fmt, option, tmp_path)
    assert f"{option} {tmp_path}: is a folder; give a file in it, e.g. " in stderr
    assert str(tmp_path / example) in stderr


def test_a_file_in_place_of_a_folder_is_refused(
    workflow: Path, fake_llm: FakeOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "results").write_text("a file\n")
    target = tmp_path / "results" / "deep" / "out.xml"
    stderr = refused(fake_llm, workflow, "--output", target)
    assert f"'{tmp_path / 'results'}' is a file, not a folder" in stderr


def test_the_tested_file_and_a_shared_target_are_refused(
    workflow: Path, fake_llm: FakeOpenAI, tmp_path: Path
) -> None:
    text = workflow.read_text()
    stderr = refused(fake_llm, workflow, "--output", workflow)
    assert "is the tested file" in stderr
    assert workflow.read_text() == text
    same = tmp_path / "out.txt"
    stderr = refused(fake_llm, workflow, "--output", same, "--report", same)
    assert f"--report {same}: is also given to --output" in stderr


def test_missing_folders_are_created_and_nothing_is_left_on_refusal(
    workflow: Path, fake_llm: FakeOpenAI, tmp_path: Path
) -> None:
    refused(fake_llm, workflow, "--output", tmp_path / "ok" / "r.json", "--report", tmp_path)
    assert not (tmp_path / "ok" / "r.json").exists()  # the probe leaves no file behind
    target = tmp_path / "new" / "dir" / "r.json"
    run = accord_test(workflow, "--format", "json", "--output", target, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert '"accuracy": 1.0' in target.read_text()
