"""An `.eval.yml` `timeout:` bounds every kind of target: the innermost explicit limit wins
(the target's own `timeout`), else the suite's, else the target's default (a command's 60 s,
an `exec:` program's 300 s, an AgentV `cli`'s 120 s). Each target here runs something that
never ends (a program that writes as fast as it can, one that sleeps, a Python function, a
long DuckDB query); the whole `accord eval` process must end at the suite's 2 s, well before
any default."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

LIMIT = 2
WELL_UNDER_DEFAULT = 30.0  # seconds; every default is 60 s or more

FLOOD = "import sys\nc = 'x' * 100000\nwhile True:\n    sys.stdout.write(c)\n"
SLEEP = "import time\ntime.sleep(600)\n"
PYTHON = """\
import os, time

def sleeps(question):
    time.sleep(600)

def writes(question):
    with open(os.devnull, "w") as sink:
        while True:
            sink.write("x" * 100000)
"""
WORKFLOW = """\
tasks:
  - name: count
    type: execute_sql
    database: d
    sql_query: SELECT count(*) FROM range(10000000000000) a
"""


def _project(root: Path) -> None:
    (root / "config.yml").write_text(
        "databases:\n  - name: d\n    type: duckdb\n    dataset: data\ndefaults: {}\n"
    )
    (root / "data").mkdir()
    for name, body in (("flood.py", FLOOD), ("sleep.py", SLEEP)):
        script = root / name
        script.write_text(f"#!{sys.executable}\n{body}")
        script.chmod(0o755)
    (root / "slow.py").write_text(PYTHON)
    (root / "long.workflow.yml").write_text(WORKFLOW)


TARGETS = {
    "command-writes": {"type": "command", "command": ["./flood.py"]},
    "command-sleeps": {"type": "command", "command": ["./sleep.py"]},
    "exec-writes": {"type": "promptfoo-exec", "argv": ["./flood.py"]},
    "exec-sleeps": {"type": "promptfoo-exec", "argv": ["./sleep.py"]},
    "python-writes": {"type": "python", "function": "slow:writes"},
    "python-sleeps": {"type": "python", "function": "slow:sleeps"},
    "workflow-queries": "long.workflow.yml#count",
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(TARGETS))
def test_the_suite_timeout_bounds_the_target(tmp_path: Path, kind: str) -> None:
    _project(tmp_path)
    suite = {
        "name": "bounded",
        "target": TARGETS[kind],
        "timeout": LIMIT,
        "evaluators": [{"type": "contains"}],
        "cases": [{"id": "a", "input": "hi", "expected": "hi"}],
    }
    (tmp_path / "s.eval.yml").write_text(json.dumps(suite))
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli", "eval", "s.eval.yml", "-q", "--cache", "off"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    took = time.monotonic() - started
    assert took < WELL_UNDER_DEFAULT, (took, done.stderr[-2000:])
    assert done.returncode == 3, done.stderr[-2000:]  # no case produced a result
    assert f"within {LIMIT} s" in done.stderr, done.stderr[-2000:]


def test_the_targets_own_timeout_wins_over_the_suites(tmp_path: Path) -> None:
    _project(tmp_path)
    suite = {
        "name": "bounded",
        "target": {"type": "command", "command": ["./sleep.py"], "timeout": 1},
        "timeout": 50,
        "evaluators": [{"type": "contains"}],
        "cases": [{"id": "a", "input": "hi", "expected": "hi"}],
    }
    (tmp_path / "s.eval.yml").write_text(json.dumps(suite))
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli", "eval", "s.eval.yml", "-q", "--cache", "off"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert time.monotonic() - started < WELL_UNDER_DEFAULT
    assert done.returncode == 3, done.stderr[-2000:]  # no case produced a result
    assert "within 1 s" in done.stderr, done.stderr[-2000:]


def _ends_within(root: Path, suite: Path, limit: int) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli", "eval", str(suite), "-q", "--cache", "off"],
        cwd=root, capture_output=True, text=True, timeout=200,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert time.monotonic() - started < WELL_UNDER_DEFAULT, done.stderr[-2000:]
    assert done.returncode == 3, done.stderr[-2000:]  # no case produced a result
    assert f"within {limit} s" in done.stderr, done.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("program", ["./flood.py", "./sleep.py"])
def test_an_agentv_cli_targets_timeout_bounds_it(tmp_path: Path, program: str) -> None:
    """AgentV files have no suite limit: the target's own `timeout_seconds` (else 120 s)."""
    _project(tmp_path)
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command_template: {program} {{OUTPUT_FILE}}\n    cwd: ..\n"
        f"    timeout_seconds: {LIMIT}\n"
    )
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "suite.yaml").write_text(
        "execution:\n  evaluators:\n    - {name: said, type: contains, value: x}\n"
        "tests:\n  - id: a\n    criteria: answers\n    input: hi\n"
    )
    _ends_within(tmp_path, tmp_path / "evals" / "suite.yaml", LIMIT)


@pytest.mark.slow
@pytest.mark.parametrize("program", ["./flood.py", "./sleep.py"])
def test_an_agentv4_catalog_cli_timeout_bounds_it(tmp_path: Path, program: str) -> None:
    _project(tmp_path)
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "providers.yaml").write_text(
        f"- id: cli\n  label: slow\n  command: {program} {{OUTPUT_FILE}}\n  cwd: ..\n"
        f"  timeout_seconds: {LIMIT}\n"
    )
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "suite.yaml").write_text(
        'name: slow\nproviders: [slow]\nprompts: ["{{ input }}"]\ntests:\n'
        "  - id: a\n    vars: {input: hello}\n    assert: [{type: contains, value: x}]\n"
    )
    _ends_within(tmp_path, tmp_path / "evals" / "suite.yaml", LIMIT)
