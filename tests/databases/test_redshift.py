"""type: redshift runs through the PostgreSQL wire protocol (psycopg, the `postgres` extra),
as Oxy connects to Redshift: checked on a real PostgreSQL server started on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.databases.projects import project, rows, run
from tests.databases.servers import Server

pytestmark = pytest.mark.slow


def entry(server: Server, **extra: str) -> str:
    lines = "".join(f"    {k}: {v}\n" for k, v in extra.items())
    return (
        f'  - name: db\n    type: redshift\n    host: 127.0.0.1\n    port: "{server.port}"\n'
        f"    user: {server.user}\n    database: {server.database}\n{lines}"
    )


@pytest.fixture(scope="module")
def warehouse(postgres_server: Server) -> Server:
    import psycopg

    with psycopg.connect(
        host="127.0.0.1", port=postgres_server.port, user="postgres", autocommit=True
    ) as conn:
        conn.execute("DROP TABLE IF EXISTS events")
        conn.execute("CREATE TABLE events (kind text, n int)")
        conn.execute("INSERT INTO events VALUES ('view', 3), ('click', 1), ('view', 2)")
    return postgres_server


def test_query_returns_the_table(tmp_path: Path, warehouse: Server) -> None:
    sql = "SELECT kind, SUM(n) AS total FROM events GROUP BY kind ORDER BY kind"
    assert rows(run(project(tmp_path, entry(warehouse), sql))) == [
        {"kind": "click", "total": 1},
        {"kind": "view", "total": 5},
    ]


def test_read_only_by_default(tmp_path: Path, warehouse: Server) -> None:
    result = run(project(tmp_path, entry(warehouse), "DELETE FROM events"))
    assert result.exit_code == 1
    assert "read-only transaction" in result.stderr


def test_port_defaults_to_redshifts(tmp_path: Path) -> None:
    from accord.engine.databases.postgres import RedshiftDatabase

    spec = RedshiftDatabase(name="db", type="redshift", host="h")
    assert spec.port == 5439
