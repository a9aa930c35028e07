"""The mysql database type on a real MariaDB server started on loopback by the tests
(Debian's mariadb-server; PyMySQL, the `mysql` extra): queries, the read-only rules, Oxy's
`*_var` keys, a cancelled query stopped in the server, and the missing library named."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.databases.projects import project, rows, run
from tests.databases.servers import Server

pytestmark = pytest.mark.slow


def entry(server: Server, **extra: str) -> str:
    lines = "".join(f"    {k}: {v}\n" for k, v in extra.items())
    return (
        f'  - name: db\n    type: mysql\n    host: 127.0.0.1\n    port: "{server.port}"\n'
        f"    user: {server.user}\n    database: {server.database}\n{lines}"
    )


@pytest.fixture(scope="module")
def shop(mariadb: Server) -> Server:
    import pymysql

    conn = pymysql.connect(
        host="127.0.0.1", port=mariadb.port, user="root", database="shop", autocommit=True
    )
    with conn.cursor() as cursor:
        cursor.execute("CREATE TABLE sales (region VARCHAR(8), amount INT, sold DATETIME)")
        cursor.execute(
            "INSERT INTO sales VALUES ('EU', 10, '2024-01-15 10:00:00'), "
            "('US', 20, '2024-02-01 09:30:00'), ('EU', 5, '2024-02-20 23:59:00')"
        )
    conn.close()
    return mariadb


def test_query_returns_the_table(tmp_path: Path, shop: Server) -> None:
    sql = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY region"
    assert rows(run(project(tmp_path, entry(shop), sql))) == [
        {"region": "EU", "total": 15},
        {"region": "US", "total": 20},
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO sales VALUES ('X', 1, NULL)",
        "DROP TABLE sales",
        "/* a comment */ UPDATE sales SET amount = 0",
        "SELECT * FROM sales INTO OUTFILE '/tmp/accord-out.csv'",
    ],
)
def test_read_only_by_default(tmp_path: Path, shop: Server, sql: str) -> None:
    result = run(project(tmp_path, entry(shop), sql))
    assert result.exit_code == 1, result.output
    assert "read-only" in result.stderr
    assert rows(run(project(tmp_path, entry(shop), "SELECT COUNT(*) AS n FROM sales"))) == [
        {"n": 3}
    ]


def test_the_server_refuses_a_write_the_statement_check_lets_through(
    tmp_path: Path, shop: Server
) -> None:
    # a SELECT that writes through a sequence: the session's READ ONLY transaction stops it
    import pymysql

    conn = pymysql.connect(
        host="127.0.0.1", port=shop.port, user="root", database="shop", autocommit=True
    )
    with conn.cursor() as cursor:
        cursor.execute("CREATE SEQUENCE IF NOT EXISTS seq1")
    conn.close()
    result = run(project(tmp_path, entry(shop), "SELECT NEXTVAL(seq1) AS n"))
    assert result.exit_code == 1, result.output
    assert "READ ONLY" in result.stderr or "read-only" in result.stderr


def test_writes_allowed_when_read_only_is_false(tmp_path: Path, shop: Server) -> None:
    path = project(tmp_path, entry(shop, read_only="false"), "CREATE TABLE scratch (x INT)")
    assert run(path).exit_code == 0
    path = project(tmp_path, entry(shop, read_only="false"), "DROP TABLE scratch")
    assert run(path).exit_code == 0


def test_settings_from_the_environment(
    tmp_path: Path, shop: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACCORD_TEST_MY_PORT", str(shop.port))
    monkeypatch.setenv("ACCORD_TEST_MY_DB", "shop")
    monkeypatch.setenv("ACCORD_TEST_MY_PASSWORD", "")
    db = (
        "  - name: db\n    type: mysql\n    host: 127.0.0.1\n    port_var: ACCORD_TEST_MY_PORT\n"
        "    user: root\n    database_var: ACCORD_TEST_MY_DB\n"
        "    password_var: ACCORD_TEST_MY_PASSWORD\n"
    )
    assert rows(run(project(tmp_path, db, "SELECT DATABASE() AS d"))) == [{"d": "shop"}]
    monkeypatch.delenv("ACCORD_TEST_MY_DB")
    result = run(project(tmp_path, db, "SELECT 1"))
    assert result.exit_code == 1
    assert "ACCORD_TEST_MY_DB" in result.stderr and "database_var" in result.stderr


def test_a_wrong_password_is_the_servers_message_and_never_printed(
    tmp_path: Path, shop: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACCORD_TEST_MY_PASSWORD", "s3cret-never-shown")
    db = entry(shop, password_var="ACCORD_TEST_MY_PASSWORD")
    result = run(project(tmp_path, db, "SELECT 1"))
    assert result.exit_code == 1
    assert "Access denied" in result.stderr
    assert "s3cret-never-shown" not in result.output


def test_a_timed_out_query_is_killed_in_the_server(tmp_path: Path, shop: Server) -> None:
    import pymysql

    path = project(tmp_path, entry(shop), "SELECT SLEEP(60)", extra_task="    timeout: 1\n")
    started = time.perf_counter()
    result = run(path)
    assert time.perf_counter() - started < 30, "the run waited for the query to finish"
    assert result.exit_code == 1
    conn = pymysql.connect(host="127.0.0.1", port=shop.port, user="root")
    with conn.cursor() as cursor:
        # the KILL QUERY is sent when the task is cancelled: wait for the server to drop it
        deadline = time.monotonic() + 30
        while True:
            cursor.execute("SELECT COUNT(*) FROM information_schema.processlist "
                           "WHERE info LIKE 'SELECT SLEEP(60)%'")  # fmt: skip
            (running,) = cursor.fetchone()
            if running == 0 or time.monotonic() > deadline:
                break
            cursor.execute("DO SLEEP(0.05)")  # the server's own wait between looks
    conn.close()
    assert running == 0, "the query still runs in the server"
