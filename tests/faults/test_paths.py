"""Paths stay inside the project: data or a model's answer cannot steer an export elsewhere,
careless paths cannot overwrite what the project reads, and files outside the root (`..`,
absolute paths, symbolic links) are never read into a task or sent to a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "config.yml").write_text("defaults: {}\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("the secret\n")
    return root, outside


def _run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _workflow(root: Path, text: str, name: str = "w") -> Path:
    path = root / f"{name}.workflow.yml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("value", ["../../../../elsewhere/x", "/tmp/x", "a/b", "..", "~root"])
def test_a_loop_value_cannot_steer_an_export(tmp_path: Path, value: str) -> None:
    root, outside = _project(tmp_path)
    path = _workflow(
        root,
        "tasks:\n  - name: each\n    type: loop_sequential\n"
        f"    values: [{json.dumps(value)}]\n    tasks:\n"
        "      - name: out\n        type: formatter\n        template: data\n"
        "        export: {path: 'out/{{ value }}.csv', format: txt}\n",
    )
    result = _run("run", str(path))
    assert result.exit_code == 1, result.output
    assert "values in paths may not contain" in result.stderr
    assert list(outside.iterdir()) == [outside / "secret.txt"]
    assert not (root / "out").exists() or list((root / "out").iterdir()) == []


def test_a_model_s_answer_cannot_steer_an_export(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    root, outside = _project(tmp_path)
    (root / "config.yml").write_text(fake_model_config(fake_llm))
    fake_llm.responder = lambda body: Reply(text="../../elsewhere/pwned")
    path = _workflow(
        root,
        "tasks:\n  - name: name\n    type: agent\n    model: fake\n    prompt: a file name?\n"
        "  - name: report\n    type: formatter\n    template: hi\n"
        "    export: {path: 'reports/{{ name }}.md', format: md}\n",
    )
    result = _run("run", str(path))
    assert result.exit_code == 1
    assert "would pick another folder" in result.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("w.workflow.yml", "a file the project reads"),
        ("config.yml", "a file the project reads"),
        (".accord/runs.db", "inside .accord/"),
        ("../elsewhere/x.csv", "leads outside the project root"),
        ("/tmp/accord-absolute.csv", "is an absolute path"),
    ],
)
def test_careless_export_paths_are_refused_at_validate(
    tmp_path: Path, target: str, message: str
) -> None:
    root, _outside = _project(tmp_path)
    text = (
        "tasks:\n  - name: a\n    type: formatter\n    template: x\n"
        f"    export: {{path: '{target}', format: txt}}\n"
    )
    path = _workflow(root, text)
    for command in ("validate", "run"):
        result = _run(command, str(path))
        assert result.exit_code == 2, result.output
        assert message in result.stderr
    assert path.read_text() == text
    assert (root / "config.yml").read_text() == "defaults: {}\n"


def test_an_export_through_a_symlink_out_of_the_project_is_refused(tmp_path: Path) -> None:
    root, outside = _project(tmp_path)
    (root / "out").symlink_to(outside, target_is_directory=True)
    path = _workflow(
        root,
        "tasks:\n  - name: a\n    type: formatter\n    template: x\n"
        "    export: {path: out/x.txt, format: txt}\n",
    )
    result = _run("run", str(path))
    assert result.exit_code == 2
    assert "through a symbolic link" in result.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@pytest.mark.parametrize(
    ("option", "target", "message"),
    [
        ("--output", "config.yml", "a file the project reads"),
        ("--report", "analyst.agent.yml", "a file the project reads"),
        ("--output", ".accord/runs.db", "inside .accord/"),
    ],
)
def test_accord_test_output_cannot_overwrite_the_project(
    tmp_path: Path, option: str, target: str, message: str
) -> None:
    root, _outside = _project(tmp_path)
    (root / "analyst.agent.yml").write_text("model: local\n")
    (root / ".accord").mkdir()
    (root / ".accord" / "runs.db").write_bytes(b"")
    path = _workflow(
        root,
        "tasks:\n  - name: a\n    type: formatter\n    template: x\n"
        "tests:\n  - {type: consistency, task_ref: a, n: 2}\n",
    )
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    result = _run("test", str(path), option, str(root / target))
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "no test was run" in result.stderr
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sql_file", "../elsewhere/secret.txt"),
        ("sql_file", "/etc/passwd"),
    ],
)
def test_files_read_by_tasks_stay_inside(tmp_path: Path, field: str, value: str) -> None:
    root, _outside = _project(tmp_path)
    (root / ".db").mkdir()
    (root / ".db" / "t.csv").write_text("a\n1\n")
    path = _workflow(root, f"tasks:\n  - name: q\n    type: execute_sql\n    {field}: {value}\n")
    result = _run("validate", str(path))
    assert result.exit_code == 2
    assert "leads outside the project root" in result.stderr or "absolute path" in result.stderr


def test_a_sub_workflow_outside_the_root_is_refused(tmp_path: Path) -> None:
    root, outside = _project(tmp_path)
    (outside / "x.workflow.yml").write_text(
        "tasks:\n  - name: a\n    type: formatter\n    template: x\n"
    )
    path = _workflow(
        root, "tasks:\n  - name: c\n    type: workflow\n    src: ../elsewhere/x.workflow.yml\n"
    )
    result = _run("validate", str(path))
    assert result.exit_code == 2
    assert "sub-workflow '../elsewhere/x.workflow.yml' leads outside the project root" in (
        result.stderr
    )


@pytest.mark.parametrize("glob", ["../elsewhere/*.txt", "/etc/passwd", "docs/*.txt"])
def test_agent_context_never_reads_outside(tmp_path: Path, fake_llm: FakeOpenAI, glob: str) -> None:
    root, outside = _project(tmp_path)
    (root / "docs").mkdir()
    (root / "docs" / "link.txt").symlink_to(outside / "secret.txt")  # used by "docs/*.txt"
    (root / "config.yml").write_text(fake_model_config(fake_llm))
    fake_llm.responder = lambda body: Reply(text="ok")
    (root / "a.agent.yml").write_text(
        "model: fake\nsystem_instructions: '{{ context.notes }}'\n"
        f"context:\n  - {{name: notes, type: file, src: ['{glob}']}}\n"
    )
    path = _workflow(
        root, "tasks:\n  - name: ask\n    type: agent\n    agent_ref: a.agent.yml\n    prompt: hi\n"
    )
    assert _run("validate", str(path)).exit_code == 2
    result = _run("run", str(path))
    assert result.exit_code != 0
    assert "outside the project root" in result.stderr or "absolute path" in result.stderr
    sent = json.dumps(fake_llm.requests)
    assert "the secret" not in sent and "root:" not in sent


def test_accord_test_output_may_not_climb_out_unless_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = _project(tmp_path)
    path = _workflow(
        root,
        "tasks:\n  - name: a\n    type: formatter\n    template: x\n"
        "tests:\n  - {type: consistency, task_ref: a, n: 2}\n",
    )
    monkeypatch.chdir(root)
    climbing = _run("test", str(path), "--output", "../elsewhere/results.xml")
    assert climbing.exit_code == 2
    assert "leads outside the project and the current folder" in climbing.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    absolute = _run("test", str(path), "--output", str(outside / "results.xml"))
    assert absolute.exit_code == 0, absolute.output
    assert (outside / "results.xml").is_file()
