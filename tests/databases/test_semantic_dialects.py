"""A semantic query compiled to each database's dialect as airlayer writes it (identifier
quotes, date truncation, LIMIT/OFFSET) and run on the real server or engine: MariaDB
(mysql), PostgreSQL (redshift's dialect over its wire), chDB (clickhouse), fakesnow
(snowflake) and the BigQuery REST server of tests/databases/bigquery_server.py (bigquery:
the real client; the SQL run by DuckDB once sqlglot has turned BigQuery's into DuckDB's).
Each gives the rows computed by hand from the same five sales."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.databases.servers import Server

pytestmark = pytest.mark.slow

SALES = [
    (1, "N", "2024-01-05", 10),
    (2, "N", "2024-01-20", 20),
    (3, "S", "2024-02-03", 5),
    (4, "S", "2024-03-09", 40),
    (5, "N", "2024-03-15", 7),
]
VALUES = ", ".join(f"({i}, '{r}', '{d}', {a})" for i, r, d, a in SALES)
VIEW = """name: sales
datasource: db
table: sales
dimensions:
  - {name: sale_id, type: number, expr: id}
  - {name: region, type: string}
  - {name: day, type: date}
measures:
  - {name: revenue, type: sum, expr: amount}
  - {name: sales_count, type: count}
"""


def _mariadb(server: Server) -> str:
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", database="shop")
    with conn.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS sales")
        cursor.execute("CREATE TABLE sales (id INT, region VARCHAR(4), day DATE, amount INT)")
        cursor.execute(f"INSERT INTO sales VALUES {VALUES}")
    conn.commit()
    conn.close()
    return (
        f"  - name: db\n    type: mysql\n    host: 127.0.0.1\n    port: {server.port}\n"
        "    user: root\n    database: shop\n"
    )


def _redshift(server: Server) -> str:
    import psycopg

    with psycopg.connect(host="127.0.0.1", port=server.port, user="postgres") as conn:
        conn.execute("DROP TABLE IF EXISTS sales")
        conn.execute("CREATE TABLE sales (id int, region text, day date, amount int)")
        conn.execute(f"INSERT INTO sales VALUES {VALUES}")
    return (
        f"  - name: db\n    type: redshift\n    host: 127.0.0.1\n    port: {server.port}\n"
        "    user: postgres\n    database: postgres\n"
    )


def _clickhouse(folder: Path) -> str:
    pytest.importorskip("chdb", reason="MISSING chdb: pip install 'accord[dev]'")
    import clickhouse_connect

    client = clickhouse_connect.get_client(dsn=f"chdb://{folder}")
    client.command("CREATE DATABASE IF NOT EXISTS dialects")
    client.command("DROP TABLE IF EXISTS dialects.sales")
    client.command(
        "CREATE TABLE dialects.sales (id Int32, region String, day Date, amount Int32) "
        "ENGINE = MergeTree ORDER BY id"
    )
    client.command(f"INSERT INTO dialects.sales VALUES {VALUES}")
    client.close()
    return (
        f"  - name: db\n    type: clickhouse\n    host: chdb://{folder}\n    database: dialects\n"
    )


def _snowflake(port: int) -> str:
    import snowflake.connector

    conn = snowflake.connector.connect(
        user="fake", password="snow", account="fakesnow", host="127.0.0.1", port=port,
        protocol="http", session_parameters={"CLIENT_OUT_OF_BAND_TELEMETRY_ENABLED": False},
    )  # fmt: skip
    cursor = conn.cursor()
    cursor.execute("CREATE DATABASE IF NOT EXISTS DIALECTS")
    cursor.execute("CREATE SCHEMA IF NOT EXISTS DIALECTS.PUBLIC")
    cursor.execute("USE SCHEMA DIALECTS.PUBLIC")
    cursor.execute("CREATE OR REPLACE TABLE sales (id INT, region VARCHAR, day DATE, amount INT)")
    cursor.execute(f"INSERT INTO sales VALUES {VALUES}")
    conn.close()
    return (
        "  - name: db\n    type: snowflake\n    account: fakesnow\n    username: fake\n"
        "    password: snow\n    warehouse: wh\n    database: DIALECTS\n    schema: PUBLIC\n"
        f"    host: 127.0.0.1\n    port: {port}\n    protocol: http\n"
    )


def _bigquery(served: Any, folder: Path) -> str:
    import json

    served.fake.load(
        "CREATE SCHEMA IF NOT EXISTS dialects",
        "CREATE OR REPLACE TABLE dialects.sales (id BIGINT, region VARCHAR, day DATE, "
        "amount BIGINT)",
        f"INSERT INTO dialects.sales VALUES {VALUES}",
    )
    (folder / "key.json").write_text(json.dumps(served.key))
    return (
        f"  - name: db\n    type: bigquery\n    key_path: {folder / 'key.json'}\n"
        f"    dataset: dialects\n    api_endpoint: {served.fake.endpoint}\n"
    )


@pytest.fixture(params=["mysql", "redshift", "clickhouse", "snowflake", "bigquery"])
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    makers: dict[str, Callable[[], str]] = {
        "mysql": lambda: _mariadb(request.getfixturevalue("mariadb")),
        "redshift": lambda: _redshift(request.getfixturevalue("postgres_server")),
        "clickhouse": lambda: _clickhouse(tmp_path_factory.mktemp("chdb")),
        "snowflake": lambda: _snowflake(request.getfixturevalue("fakesnow_server")),
        "bigquery": lambda: _bigquery(
            request.getfixturevalue("bigquery_server"), tmp_path_factory.mktemp("bq")
        ),
    }
    return makers[request.param]()


def semantic(tmp_path: Path, entry: str, task: str) -> list[dict[str, Any]]:
    (tmp_path / "config.yml").write_text("databases:\n" + entry)
    (tmp_path / "semantics").mkdir(exist_ok=True)
    (tmp_path / "semantics" / "sales.view.yml").write_text(VIEW)
    (tmp_path / "semantics" / "shop.topic.yml").write_text("name: shop\nviews: [sales]\n")
    path = tmp_path / "q.workflow.yml"
    path.write_text("tasks:\n  - name: q\n    type: semantic_query\n    topic: shop\n" + task)
    result = CliRunner().invoke(main, ["run", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    out: list[dict[str, Any]] = json.loads(result.stdout)["outputs"]["q"]
    # each dialect's own date type: compared as the day it names
    return [{k.lower(): _day(v) for k, v in row.items()} for row in out]


def _day(value: Any) -> Any:
    if isinstance(value, str) and len(value) >= 10 and value[4] == "-":
        return value[:10]
    return int(value) if isinstance(value, float) and value.is_integer() else value


MONTHS = "    time_dimensions: [{dimension: sales.day, granularity: %s}]\n"


@pytest.mark.parametrize(
    ("granularity", "expected"),
    [
        ("month", [("2024-01-01", 30), ("2024-02-01", 5), ("2024-03-01", 47)]),
        ("quarter", [("2024-01-01", 82)]),
        ("year", [("2024-01-01", 82)]),
        ("week", None),  # checked against each dialect's week start below
        ("day", [(d, a) for _, _, d, a in SALES]),
    ],
)
def test_date_truncation(
    tmp_path: Path, database: str, granularity: str, expected: list[tuple[str, int]] | None
) -> None:
    got = semantic(tmp_path, database, "    measures: [sales.revenue]\n" + MONTHS % granularity)
    pairs = [(r[f"sales__day__{granularity}"], r["sales__revenue"]) for r in got]
    if expected is None:
        # a week starts on Monday (ISO; ClickHouse's toMonday, date_trunc) or on Sunday
        # (MySQL's DAYOFWEEK form, as airlayer writes it): either way five sales, in weeks
        assert sum(a for _, a in pairs) == 82 and len(pairs) == 5
        return
    assert pairs == expected


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ("    limit: 2\n", [30, 5]),
        ("    limit: 2\n    offset: 1\n", [5, 47]),
        ("    offset: 2\n", [47]),
    ],
)
def test_limit_and_offset(tmp_path: Path, database: str, window: str, expected: list[int]) -> None:
    task = "    measures: [sales.revenue]\n" + MONTHS % "month" + window
    assert [r["sales__revenue"] for r in semantic(tmp_path, database, task)] == expected


def test_quoted_names_and_a_dimension(tmp_path: Path, database: str) -> None:
    task = "    measures: [sales.revenue, sales.sales_count]\n    dimensions: [sales.region]\n"
    assert semantic(tmp_path, database, task) == [
        {"sales__region": "N", "sales__revenue": 37, "sales__sales_count": 3},
        {"sales__region": "S", "sales__revenue": 45, "sales__sales_count": 2},
    ]


def test_bigquery_is_sent_bigquerys_sql(
    tmp_path: Path, bigquery_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    entry = _bigquery(bigquery_server, tmp_path_factory.mktemp("bq"))
    task = "    measures: [sales.revenue]\n" + MONTHS % "month" + "    offset: 2\n"
    assert [r["sales__revenue"] for r in semantic(tmp_path, entry, task)] == [47]
    sent = bigquery_server.fake.queries()[-1]["query"]["query"]
    assert "TIMESTAMP_TRUNC(`sales`.`dim__day`, MONTH) AS `sales__day__month`" in sent
    assert "LIMIT 9223372036854775807\nOFFSET 2" in sent
