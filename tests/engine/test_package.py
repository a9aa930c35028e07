"""The installed package: only `accord` is put on the import path, so a user project with its
own `tasks.py` and `engine/` package runs accord's Python API and CLI unharmed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.bounds import PROCESS_SECONDS

WORKFLOW = """
tasks:
  - name: totals
    type: execute_sql
    database: local
    sql_query: SELECT SUM(amount) AS total FROM sales
  - name: answer
    type: formatter
    template: "total {{ totals.total[0] }}"
"""

USER_SCRIPT = """
import tasks, engine            # the user's own modules, first on the path
from accord import run_workflow, Status

result = run_workflow("report.workflow.yml")
assert tasks.MINE == "user tasks" and engine.MINE == "user engine", (tasks, engine)
print(result.status is Status.SUCCEEDED, result.outputs["answer"])
"""


def _user_project(tmp_path: Path) -> Path:
    (tmp_path / "tasks.py").write_text('MINE = "user tasks"\n')
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").write_text('MINE = "user engine"\n')
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "sales.csv").write_text("amount\n3\n4\n")
    (tmp_path / "report.workflow.yml").write_text(textwrap.dedent(WORKFLOW))
    (tmp_path / "script.py").write_text(textwrap.dedent(USER_SCRIPT))
    return tmp_path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the installed package only, as a user has it
    return env


def test_a_project_with_its_own_tasks_and_engine_runs_the_python_api(tmp_path: Path) -> None:
    project = _user_project(tmp_path)
    done = subprocess.run(
        [sys.executable, "script.py"],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=PROCESS_SECONDS,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True total 7"


def test_a_project_with_its_own_tasks_and_engine_runs_the_cli(tmp_path: Path) -> None:
    project = _user_project(tmp_path)
    command = [sys.executable, "-m", "accord.cli", "run", "report.workflow.yml", "--format", "json"]
    done = subprocess.run(
        command, cwd=project, env=_env(), capture_output=True, text=True, timeout=PROCESS_SECONDS
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outputs"]["answer"] == "total 7"


def test_accord_does_not_put_engine_or_tasks_on_the_import_path(tmp_path: Path) -> None:
    probe = (
        "import importlib.util, accord.engine, accord.tasks\n"
        "print(importlib.util.find_spec('engine'), importlib.util.find_spec('tasks'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=PROCESS_SECONDS,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "None"]


def test_import_accord_loads_nothing_until_a_name_is_used(tmp_path: Path) -> None:
    probe = (
        "import sys, accord\n"
        "before = sorted(m for m in sys.modules if m.startswith('accord.'))\n"
        "accord.compile_workflow\n"
        "print(before, 'accord.engine.runner' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] True"


def test_the_readme_python_example_runs_as_written(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=PROCESS_SECONDS,
    )
    assert done.returncode == 0, done.stderr
    assert "# Support tickets by team" in done.stdout and "2024-03" in done.stdout
