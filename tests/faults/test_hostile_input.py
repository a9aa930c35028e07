"""Hostile and careless input, each found by trying: a YAML file nested 30,000 deep (it crashed
PyYAML's C composer: exit 139), and a gate that `nan` turned off."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.bounds import PROCESS_SECONDS


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("flow.workflow.yml", "tasks: " + "[" * 30_000),
        ("mapping.workflow.yml", "tasks: " + "{a: " * 30_000),
        ("dashes.workflow.yml", "tasks:\n" + "- " * 30_000 + "x\n"),
        ("config.yml", "databases: " + "[" * 30_000),
        ("a.agent.yml", "model: " + "[" * 30_000),
    ],
)
def test_deep_nesting_is_refused_not_a_crash(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=PROCESS_SECONDS,
    )
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "nested far more than 100 levels deep" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e999"])
def test_a_gate_cannot_be_turned_off_with_nan(tmp_path: Path, value: str) -> None:
    path = tmp_path / "w.workflow.yml"
    path.write_text("tasks:\n  - name: a\n    type: formatter\n    template: x\n")
    result = CliRunner().invoke(main, ["test", str(path), "--min-accuracy", value])
    assert result.exit_code == 2
    assert "--min-accuracy" in result.output


def test_a_variable_nested_2000_deep_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "v.workflow.yml"
    path.write_text(
        "variables:\n  x: {type: array}\ntasks:\n  - name: a\n    type: formatter\n"
        "    template: '{{ x }}'\n"
    )
    value = "x=" + "[" * 2000 + "]" * 2000
    result = CliRunner().invoke(main, ["run", str(path), "-v", value])
    assert result.exit_code == 2
    assert "nested too deeply" in result.stderr and "Traceback" not in result.output


def test_a_sandbox_escape_in_the_consistency_prompt_fails_validate(tmp_path: Path) -> None:
    # it passed validate and was refused only after the n model calls
    path = tmp_path / "c.workflow.yml"
    path.write_text(
        'consistency_prompt: "{{ namespace.__init__.__globals__ }}"\n'
        "tasks:\n  - name: a\n    type: agent\n    prompt: hi\n    consistency_run: 2\n"
    )
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert "consistency_prompt: access to '__globals__' is not allowed" in result.stderr


def test_an_unreadable_dataset_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "t.csv").write_bytes(b"\xff\xfe\x00garbage")
    path = tmp_path / "b.workflow.yml"
    path.write_text("tasks:\n  - name: a\n    type: execute_sql\n    sql_query: SELECT * FROM t\n")
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 1
    assert "dataset file for 't' cannot be read: Invalid Input Error" in result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-Infinity"])
def test_a_number_variable_refuses_nan_and_infinities(tmp_path: Path, value: str) -> None:
    path = tmp_path / "n.workflow.yml"
    path.write_text(
        "variables:\n  x: {type: number, minimum: 0, maximum: 1}\ntasks:\n"
        "  - name: a\n    type: formatter\n    template: '{{ x }}'\n"
    )
    result = CliRunner().invoke(main, ["run", str(path), "-v", f"x={value}"])
    assert result.exit_code == 2
    assert "is not of type number" in result.stderr
