"""Hostile and careless input, each found by trying: a YAML file nested 30,000 deep (it crashed
PyYAML's C composer: exit 139), and a gate that `nan` turned off."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from accord.cli import main


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
        timeout=120,
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
