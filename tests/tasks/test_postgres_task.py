"""execute_sql on a real PostgreSQL server started on loopback for the test session.

.ci/run installs Debian's postgresql package; where the server binaries are missing the tests
are skipped with that reason.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.bounds import PROCESS_SECONDS


def _server_binary(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _as_postgres(command: list[str]) -> list[str]:
    # initdb and postgres refuse to run as root
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def postgres() -> Iterator[int]:
    initdb, pg_ctl = _server_binary("initdb"), _server_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL server binaries are not installed (.ci/run installs postgresql)")
    pytest.importorskip("psycopg", reason="psycopg is installed by make test")
    # pytest's own temporary folders are private to root; the server runs as postgres
    base = Path(tempfile.mkdtemp(prefix="accord-pg-"))
    base.chmod(0o777)
    data = base / "data"
    port = _free_port()
    subprocess.run(
        _as_postgres([initdb, "-D", str(data), "-U", "postgres", "-A", "trust"]),
        check=True,
        capture_output=True,
        timeout=PROCESS_SECONDS,
    )
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1"
    subprocess.run(
        _as_postgres(
            [pg_ctl, "-D", str(data), "-o", options, "-w", "start", "-l", str(base / "log")]
        ),
        check=True,
        capture_output=True,
        timeout=PROCESS_SECONDS,
    )
    import psycopg

    with psycopg.connect(
        host="127.0.0.1", port=port, user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        conn.execute("CREATE TABLE sales (region text, amount int)")
        conn.execute("INSERT INTO sales VALUES ('EU', 10), ('US', 20), ('EU', 5)")
    yield port
    subprocess.run(
        _as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]),
        capture_output=True,
        timeout=PROCESS_SECONDS,
        check=False,
    )
    shutil.rmtree(base, ignore_errors=True)


def project(tmp_path: Path, port: int, sql: str, **db: Any) -> Path:
    extra = "".join(f"    {k}: {v}\n" for k, v in db.items())
    (tmp_path / "config.yml").write_text(
        "databases:\n  - name: pg\n    type: postgres\n    host: 127.0.0.1\n"
        f"    port: {port}\n    user: postgres\n    database: postgres\n{extra}"
    )
    path = tmp_path / "w.workflow.yml"
    path.write_text(
        f'tasks:\n  - name: q\n    type: execute_sql\n    database: pg\n    sql_query: "{sql}"\n'
    )
    return path


def run(path: Path) -> Any:
    return CliRunner().invoke(main, ["run", str(path), "--format", "json"])


def test_query_returns_the_table(tmp_path: Path, postgres: int) -> None:
    path = project(
        tmp_path, postgres, "SELECT region, SUM(amount) AS total FROM sales GROUP BY 1 ORDER BY 1"
    )
    result = run(path)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["q"] == [
        {"region": "EU", "total": 15},
        {"region": "US", "total": 20},
    ]


def test_read_only_by_default(tmp_path: Path, postgres: int) -> None:
    path = project(tmp_path, postgres, "INSERT INTO sales VALUES ('X', 1)")
    result = run(path)
    assert result.exit_code == 1
    assert "read-only transaction" in result.stderr and "q" in result.stderr
    writable = project(tmp_path, postgres, "INSERT INTO sales VALUES ('X', 1)", read_only="false")
    assert run(writable).exit_code == 0


def test_missing_password_variable_is_named(tmp_path: Path, postgres: int) -> None:
    path = project(tmp_path, postgres, "SELECT 1", password_var="ACCORD_TEST_PG_PASSWORD")
    result = run(path)
    assert result.exit_code == 1
    assert "ACCORD_TEST_PG_PASSWORD" in result.stderr


def test_a_timed_out_query_is_cancelled_in_the_server(tmp_path: Path, postgres: int) -> None:
    import psycopg

    path = project(tmp_path, postgres, "SELECT pg_sleep(60)")
    task = "    type: execute_sql\n"
    path.write_text(path.read_text().replace(task, task + "    timeout: 1\n"))
    started = time.perf_counter()
    result = run(path)
    assert time.perf_counter() - started < 10, "the run waited for the query to finish"
    assert result.exit_code == 1
    assert "timed out after 1 s" in result.stderr
    with psycopg.connect(
        host="127.0.0.1", port=postgres, user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        for _ in range(50):  # the cancel request travels on a connection of its own
            running = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'"
            ).fetchone()
            if running == (0,):
                break
            time.sleep(0.1)
    assert running == (0,), "the query still runs in the server"
