"""`accord validate` names at its line every tool and database it cannot run, and passes
where Oxy's validate passes: databases of types accord cannot connect to (domo,
databricks, ...) are noted in config.yml and at each task and agent tool
that uses one; tools accord does not offer (omni_query, ...) are named as not offered to the
model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from accord.cli import main

CONFIG = """databases:
  - {name: local, type: duckdb, dataset: db}
  - {name: wh, type: domo, dataset_id: a, developer_token_var: P, instance: w}
  - {name: events, type: databricks, host: h, token_var: P}
defaults: {database: local}
"""
AGENT = """model: openai/gpt-4o-mini
tools:
  - name: look_up
    type: retrieval
    src: [docs/*.md]
  - name: warehouse_sql
    type: execute_sql
    database: wh
  - name: chart
    type: visualize
  - name: local_sql
    type: execute_sql
  - {name: omni, type: omni_query}
"""
WORKFLOW = """tasks:
  - name: here
    type: execute_sql
    sql_query: SELECT 1 AS one
  - name: there
    type: execute_sql
    database: wh
    sql_query: SELECT 1
"""


def accord(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "db").mkdir()
    (tmp_path / "config.yml").write_text(CONFIG)
    (tmp_path / "ask.agent.yml").write_text(AGENT)
    (tmp_path / "w.procedure.yml").write_text(WORKFLOW)
    return tmp_path


def test_config_notes_each_database_accord_cannot_connect_to(tmp_path: Path) -> None:
    root = _project(tmp_path)
    run = accord("validate", root / "config.yml")
    assert run.exit_code == 0, run.output
    assert run.stdout == f"ok: {root / 'config.yml'} (3 databases, 0 models)\n"
    notes = run.stderr.splitlines()
    assert [n.split(" databases[")[0] for n in notes] == [
        f"note: {root / 'config.yml'}:3:22",
        f"note: {root / 'config.yml'}:4:26",
    ]
    assert "database 'wh' is of type domo, which accord cannot connect to" in notes[0]
    assert "database 'events' is of type databricks" in notes[1]
    assert all("a task that uses it fails when it runs" in n for n in notes)


def test_a_task_on_such_a_database_is_named_at_its_line_and_the_rest_runs(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    path = root / "w.procedure.yml"
    run = accord("validate", path)
    assert run.exit_code == 0, run.output
    assert run.stderr.splitlines() == [
        f"unsupported: {path}:7:15 tasks[1].database: task 'there': database 'wh' is of type "
        "domo, which accord cannot connect to: map it to a duckdb, sqlite or postgres "
        "database in config.yml; the task fails when it runs"
    ]
    run = accord("run", path, "--format", "json")
    assert run.exit_code == 1
    assert "task 'there': database 'wh' is of type domo" in run.stderr


def test_agent_tools_accord_cannot_run_are_named_at_their_lines(tmp_path: Path) -> None:
    root = _project(tmp_path)
    run = accord("validate", root / "ask.agent.yml")
    assert run.exit_code == 0, run.output
    summary = run.stdout
    assert "line 13: the Omni tool (omni_query) is not supported: not offered" in summary
    assert "retrieval" not in summary  # offered: it answers from the project's documents
    assert "line 8: tool 'warehouse_sql': database 'wh' is of type domo" in summary
    assert "each call of it fails" in summary
    assert "visualize" not in summary  # offered: it charts the last query's table
    assert "local_sql" not in summary


def test_bigquery_is_no_longer_noted_as_unsupported(tmp_path: Path) -> None:
    # Oxy's example entry (examples/config.yml): a key file in the project, datasets to browse
    (tmp_path / "bigquery-sample.key").write_text("{}")
    (tmp_path / "config.yml").write_text(
        "databases:\n  - name: primary_database\n    type: bigquery\n"
        "    key_path: bigquery-sample.key\n    datasets:\n      dbt_prod_core:\n"
        '        - "*"\n    dry_run_limit: 1000\n'
    )
    run = accord("validate", tmp_path / "config.yml")
    assert run.exit_code == 0, run.output
    assert run.stderr == ""
