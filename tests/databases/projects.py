"""A project with one database entry and a workflow of one SQL task, run by the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from accord.cli import main


def project(tmp_path: Path, entry: str, sql: str, extra_task: str = "") -> Path:
    """config.yml with the database `entry` (YAML lines of one list item, named db) and a
    workflow whose task `q` runs `sql` on it."""
    (tmp_path / "config.yml").write_text("databases:\n" + entry)
    path = tmp_path / "w.workflow.yml"
    path.write_text(
        "tasks:\n  - name: q\n    type: execute_sql\n    database: db\n"
        f"    sql_query: {json.dumps(sql)}\n{extra_task}"
    )
    return path


def run(path: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["run", str(path), "--format", "json", *args])


def rows(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["outputs"]["q"]
