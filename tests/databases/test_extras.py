"""Each database type reached through a client library outside the main install: `validate`
names the extra to install at the database's line of config.yml, and a workflow using the
database is refused there (exit 2) before anything runs. The library is hidden from the
process (its module set to None), as on a machine without the extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from accord.cli import main

KINDS = {
    "mysql": ("pymysql", "  - name: db\n    type: mysql\n    host: 127.0.0.1\n"),
    "snowflake": (
        "snowflake.connector",
        "  - name: db\n    type: snowflake\n    account: a\n    username: u\n",
    ),
    "clickhouse": ("clickhouse_connect", "  - name: db\n    type: clickhouse\n    host: h\n"),
    "postgres": ("psycopg", "  - name: db\n    type: redshift\n    host: 127.0.0.1\n"),
    "bigquery": (
        "google.cloud.bigquery",
        "  - name: db\n    type: bigquery\n    key_path: key.json\n    dataset: shop\n",
    ),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_missing_library_names_the_extra_at_the_databases_line(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, entry = KINDS[kind]
    monkeypatch.setitem(sys.modules, module, None)
    (tmp_path / "config.yml").write_text("# the project's databases\ndatabases:\n" + entry)
    workflow = tmp_path / "w.workflow.yml"
    workflow.write_text(
        "tasks:\n  - name: q\n    type: execute_sql\n    database: db\n    sql_query: SELECT 1\n"
    )
    validated = CliRunner().invoke(main, ["validate", str(tmp_path / "config.yml")])
    assert validated.exit_code == 0, validated.output
    assert "config.yml:4" in validated.stderr
    assert f"pip install 'accord[{kind}]'" in validated.stderr
    assert "cannot connect" not in validated.stderr  # no longer called unsupported
    result = CliRunner().invoke(main, ["run", str(workflow)])
    assert result.exit_code == 2, result.output
    assert "config.yml:4" in result.stderr
    assert f"pip install 'accord[{kind}]'" in result.stderr
    assert "Traceback" not in result.output
