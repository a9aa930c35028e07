"""What an `accord run` process pays beyond its tasks (B16): a workflow of formatters imports
no evaluator, the collector runs at a run's thresholds for the whole command, and the process
leaves its objects to the OS at exit instead of collecting them once more. Each command runs
in a process of its own, as a user runs it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bounds import PROCESS_SECONDS

WriteFile = Callable[[str, str], Path]

# `accord ARGS...`, and at the very end of the process (an exit handler registered before
# accord's, so it runs after them) a line of stderr: the evaluator modules imported, whether
# the progress bar's library was, how many objects the collector no longer scans, and its
# thresholds
WATCHED = """
import atexit, gc, json, sys

def report():
    evaluators = sorted(m for m in sys.modules if m.startswith("accord.tasks.evaluators"))
    line = {
        "evaluators": evaluators,
        "progress_bar": "rich.progress" in sys.modules,
        "frozen": gc.get_freeze_count(),
        "thresholds": gc.get_threshold(),
    }
    sys.stderr.write("\\nEXIT " + json.dumps(line) + "\\n")

atexit.register(report)

from accord.cli import main

main(sys.argv[1:])
"""

FORMATTERS = """
name: formatters
tasks:
  - name: a
    type: formatter
    template: "abc"
  - name: b
    type: formatter
    template: "{{ (a | length) + 1 }} {{ a | upper | replace('A', 'a') }}"
  - name: c
    type: formatter
    template: "{{ (a ~ ' / ' ~ b) | truncate(60) }}"
"""


def accord(*args: str | Path) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", WATCHED, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=PROCESS_SECONDS,
        env={**os.environ, "NO_COLOR": "1"},
    )
    [line] = [line for line in done.stderr.splitlines() if line.startswith("EXIT ")]
    return done, json.loads(line.removeprefix("EXIT "))


def test_a_workflow_of_formatters_imports_no_evaluator(tmp_path: Path, write: WriteFile) -> None:
    write("config.yml", "defaults: {}\n")
    path = write("formatters.workflow.yml", FORMATTERS)

    checked, seen = accord("validate", path)
    assert checked.returncode == 0, checked.stderr
    assert "ok:" in checked.stdout and "(3 tasks)" in checked.stdout
    assert seen["evaluators"] == []

    ran, seen = accord("run", path, "--format", "json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["outputs"] == {"a": "abc", "b": "4 aBC", "c": "abc / 4 aBC"}
    assert seen["evaluators"] == []


@pytest.mark.slow
def test_an_evaluation_still_finds_every_evaluator(tmp_path: Path, write: WriteFile) -> None:
    """The evaluators' registry imports them when it is first read: a suite naming one
    runs it, and an unknown name lists the built-in ones."""
    write("config.yml", "defaults: {}\n")
    path = write(
        "checks.eval.yml",
        """
name: greetings
target: echo
evaluators:
  - {type: contains, value: world}
cases:
  - {id: hi, input: hello world}
""",
    )
    done, seen = accord("eval", path, "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "accord.tasks.evaluators.deterministic" in seen["evaluators"]

    write("checks.eval.yml", path.read_text().replace("type: contains", "type: contain"))
    done, _seen = accord("validate", path)
    assert done.returncode == 2
    assert "unknown type 'contain': did you mean 'contains'?" in done.stderr
    assert "known types: accuracy, assertions, battle, contains," in done.stderr


def test_a_run_exits_with_its_objects_left_out_of_the_collector(
    tmp_path: Path, write: WriteFile
) -> None:
    """After every exit handler of the run (the store and the template cache written), the
    objects still alive are frozen: the interpreter's teardown collections skip them. The
    whole command collected at a run's thresholds, not Python's (700, 10, 10)."""
    write("config.yml", "defaults: {}\n")
    path = write("formatters.workflow.yml", FORMATTERS)
    ran, seen = accord("run", path)
    assert ran.returncode == 0, ran.stderr
    assert "✓ formatters: 3 tasks (3 succeeded)" in ran.stdout
    assert seen["progress_bar"] is False  # stderr is no terminal: no bar is drawn
    assert isinstance(seen["frozen"], int) and seen["frozen"] > 10_000
    assert seen["thresholds"] == [5000, 50, 100]
    with sqlite3.connect(tmp_path / ".accord" / "runs.db") as db:
        [(status,)] = db.execute("SELECT status FROM runs").fetchall()
    assert status == "succeeded"
    assert (tmp_path / ".accord" / "templates" / "templates.data").is_file()
