"""Read-only databases refuse every PRAGMA that writes or runs statements, and still answer
the schema queries accord itself makes.

DuckDB's `PRAGMA import_database('data')` ran the dataset folder's schema.sql and load.sql
on a read-only database; SQLite 3.40 refused accord's own `pragma_table_info` query on a
read-only file, so `{{ databases.app.tables }}` in an agent's instructions (docs/models.md's
agent example) failed with "not authorized".
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "data" / "sales.csv").write_text("region,amount\nEU,10\nUS,20\n")
    conn = sqlite3.connect(str(root / "app.db"))
    conn.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
    conn.execute("CREATE VIEW names AS SELECT name FROM customers")
    conn.commit()
    conn.close()
    (root / "config.yml").write_text(
        "databases:\n"
        "  - {name: duck, type: duckdb, dataset: data}\n"
        "  - {name: app, type: sqlite, path: app.db}\n"
    )
    return root


def _run_sql(root: Path, database: str, *queries: str) -> Any:
    """One workflow, one execute_sql task per query, in order."""
    tasks = []
    for index, sql in enumerate(queries):
        after = f"    depends_on: [q{index - 1}]\n" if index else ""
        quoted = sql.replace('"', '\\"')
        tasks.append(
            f"  - name: q{index}\n    type: execute_sql\n    database: {database}\n"
            f'{after}    sql_query: "{quoted}"\n'
        )
    path = root / "w.workflow.yml"
    path.write_text("tasks:\n" + "".join(tasks))
    return CliRunner().invoke(main, ["run", str(path), "--format", "json"])


@pytest.mark.parametrize(
    "pragma",
    [
        "PRAGMA import_database('data')",
        "pragma IMPORT_DATABASE('data')",
        "/* a comment */ PRAGMA \"import_database\"('data')",
        "EXPLAIN ANALYZE PRAGMA import_database('data')",
        "PRAGMA json_execute_serialized_sql('{}')",
        "PRAGMA copy_database('memory', 'other')",
        "PRAGMA enable_profiling",
        "PRAGMA force_checkpoint",
    ],
)
def test_a_read_only_duckdb_refuses_pragmas_that_write_or_run(tmp_path: Path, pragma: str) -> None:
    root = _project(tmp_path)
    # what import_database would run: a table created, and a file written into the folder
    (root / "data" / "schema.sql").write_text("CREATE TABLE planted (a INTEGER);\n")
    (root / "data" / "load.sql").write_text(
        "INSERT INTO planted VALUES (1);\nCOPY planted TO 'data/written.csv';\n"
    )
    result = _run_sql(root, "duck", pragma, "SELECT * FROM planted")
    assert result.exit_code == 1, result.output
    assert "the database is read-only: PRAGMA" in result.stderr
    assert "is not allowed" in result.stderr and "read_only: false" in result.stderr
    assert "Traceback" not in result.output
    assert not (root / "data" / "written.csv").exists()


def test_a_read_only_duckdb_answers_the_pragmas_that_read(tmp_path: Path) -> None:
    root = _project(tmp_path)
    result = _run_sql(
        root,
        "duck",
        "PRAGMA table_info('sales')",
        "PRAGMA show_tables",
        "PRAGMA database_list",
        "PRAGMA version",
        "SHOW TABLES",
        "DESCRIBE sales",
    )
    assert result.exit_code == 0, result.output
    assert '"region"' in result.stdout and '"sales"' in result.stdout


def test_a_read_only_sqlite_answers_accord_s_schema_query_and_still_refuses_writes(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path)
    reads = _run_sql(
        root,
        "app",
        "SELECT m.name AS t, p.name AS c FROM sqlite_master m, pragma_table_info(m.name) p",
        "PRAGMA table_info(customers)",
    )
    assert reads.exit_code == 0, reads.output
    outputs = json.loads(reads.stdout)["outputs"]
    assert {"t": "customers", "c": "name"} in outputs["q0"]
    assert [row["name"] for row in outputs["q1"]] == ["id", "name"]
    for write, said in (
        ("UPDATE sqlite_master SET sql = 'x' WHERE name = 'customers'", "may not be modified"),
        ("PRAGMA writable_schema = ON", "read-only"),
        ("CREATE TEMP TABLE t AS SELECT * FROM pragma_table_info('customers')", "read-only"),
    ):
        refused = _run_sql(root, "app", write)
        assert refused.exit_code == 1, (write, refused.output)
        assert said in refused.stderr, refused.stderr
    conn = sqlite3.connect(str(root / "app.db"))
    schema = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'customers'").fetchone()
    conn.close()
    assert schema == ("CREATE TABLE customers (id INTEGER, name TEXT)",)


def test_the_readme_s_agent_sees_the_tables_of_a_read_only_sqlite(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    root = _project(tmp_path)
    (root / "config.yml").write_text(
        (root / "config.yml").read_text() + fake_model_config(fake_llm)
    )
    (root / "analyst.agent.yml").write_text(
        "model: fake\n"
        "system_instructions: |\n"
        "  You answer questions about {{ databases.app.dialect }} data; tables:\n"
        '  {{ databases.app.tables | join(", ") }}.\n'
        "  {{ databases.app.schema }}\n"
        "tools:\n"
        "  - {name: run_query, type: execute_sql, database: app}\n"
    )
    fake_llm.responder = lambda body: Reply(text="ok")
    path = root / "a.workflow.yml"
    path.write_text(
        "tasks:\n  - name: ask\n    type: agent\n    agent_ref: analyst.agent.yml\n"
        "    prompt: Who are our customers?\n"
    )
    result = CliRunner().invoke(main, ["run", str(path), "--cache", "off"])
    assert result.exit_code == 0, result.output
    assert "not authorized" not in result.output
    system = fake_llm.requests[-1]["messages"][0]["content"]
    assert "about sqlite data; tables:\ncustomers, names." in system
    assert "CREATE TABLE customers (\n  id INTEGER,\n  name TEXT\n);" in system
