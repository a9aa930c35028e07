"""The clickhouse database type through clickhouse-connect (the `clickhouse` extra), run on
chDB, ClickHouse's own engine in the process (`host: chdb:///folder`, the chdb package),
through the same client: queries, `readonly = 2` refusing writes in the engine, Oxy's
`host:` forms, and the filter settings a query carries (`settings_prefix` + name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.databases.projects import project, rows, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip(
        "clickhouse_connect", reason="MISSING clickhouse-connect: pip install 'accord[clickhouse]'"
    )
    pytest.importorskip("chdb", reason="MISSING chdb: pip install 'accord[dev]'")
    import clickhouse_connect

    folder = tmp_path_factory.mktemp("chdb")
    client = clickhouse_connect.get_client(dsn=f"chdb://{folder}")
    client.command("CREATE DATABASE IF NOT EXISTS shop")
    client.command(
        "CREATE TABLE shop.sales (region String, amount Int32, sold DateTime) "
        "ENGINE = MergeTree ORDER BY region"
    )
    client.command(
        "INSERT INTO shop.sales VALUES ('EU', 10, '2024-01-15 10:00:00'), "
        "('US', 20, '2024-02-01 09:30:00'), ('EU', 5, '2024-02-20 23:59:00')"
    )
    client.close()
    return f"chdb://{folder}"


def entry(host: str, **extra: str) -> str:
    lines = "".join(f"    {k}: {v}\n" for k, v in extra.items())
    return f"  - name: db\n    type: clickhouse\n    host: {host}\n    database: shop\n{lines}"


def test_query_returns_the_table(tmp_path: Path, store: str) -> None:
    sql = "SELECT region, sum(amount) AS total FROM sales GROUP BY region ORDER BY region"
    assert rows(run(project(tmp_path, entry(store), sql))) == [
        {"region": "EU", "total": 15},
        {"region": "US", "total": 20},
    ]


@pytest.mark.parametrize(
    "sql", ["INSERT INTO sales VALUES ('X', 1, now())", "DROP TABLE sales", "TRUNCATE sales"]
)
def test_read_only_by_default(tmp_path: Path, store: str, sql: str) -> None:
    result = run(project(tmp_path, entry(store), sql))
    assert result.exit_code == 1, result.output
    assert "readonly mode" in result.stderr and "read-only" in result.stderr
    count = rows(run(project(tmp_path, entry(store), "SELECT count() AS n FROM sales")))
    assert count == [{"n": 3}]


def test_writes_allowed_when_read_only_is_false(tmp_path: Path, store: str) -> None:
    create = "CREATE TABLE scratch (x Int32) ENGINE = Memory"
    assert run(project(tmp_path, entry(store, read_only="false"), create)).exit_code == 0
    drop = "DROP TABLE scratch"
    assert run(project(tmp_path, entry(store, read_only="false"), drop)).exit_code == 0


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("https://abc.clickhouse.cloud:8443", ("https", "abc.clickhouse.cloud", 8443)),
        ("https://abc.clickhouse.cloud", ("https", "abc.clickhouse.cloud", 8443)),
        ("localhost", ("http", "localhost", 8123)),
        ("10.0.0.5:9000", ("http", "10.0.0.5", 9000)),
    ],
)
def test_oxys_host_forms(host: str, expected: tuple[str, str, int]) -> None:
    from accord.engine.databases.clickhouse import endpoint

    assert endpoint(host) == expected


def test_filters_become_prefixed_settings_before_readonly() -> None:
    from accord.engine.databases.clickhouse import ClickHouse, ClickHouseDatabase
    from accord.engine.databases.filters import process

    spec = ClickHouseDatabase.model_validate(
        {
            "name": "ch", "type": "clickhouse", "host": "h", "settings_prefix": "SQL_",
            "filters": {
                "tenant_id": {"type": "integer", "default": 0},
                "project_ids": {"type": "array", "items": {"type": "integer"}, "default": []},
            },
        }
    )  # fmt: skip
    db = ClickHouse(spec, Path("."))
    db.use_filters(process("ch", spec.filters, {"tenant_id": "12345", "project_ids": "100,101"}))
    assert list(db.query_settings().items()) == [
        ("SQL_tenant_id", "12345"),
        ("SQL_project_ids", "100,101"),
        ("readonly", 2),
    ]
