"""The snowflake database type through snowflake-connector-python (the `snowflake` extra),
on fakesnow's Snowflake emulator (over DuckDB) started on loopback: Oxy's keys, the
read-only rule, Oxy's row-level filters set as session variables a secure view reads, and
their checks (unknown filter, missing value, the 256-byte limit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.databases.projects import project, rows, run

pytestmark = pytest.mark.slow


def entry(port: int, filters: str = "", **extra: str) -> str:
    lines = "".join(f"    {k}: {v}\n" for k, v in extra.items())
    return (
        "  - name: db\n    type: snowflake\n    account: fakesnow\n    username: fake\n"
        "    password_var: ACCORD_TEST_SF_PASSWORD\n    warehouse: wh\n    database: SHOP\n"
        f"    schema: PUBLIC\n    host: 127.0.0.1\n    port: {port}\n    protocol: http\n"
        f"{lines}{filters}"
    )


FILTERS = (
    "    filters:\n      tenant_id:\n        type: integer\n        default: 0\n"
    "      regions:\n        type: array\n        items:\n          type: string\n"
    "        default: []\n"
)


@pytest.fixture(scope="module")
def shop(fakesnow_server: int) -> int:
    import snowflake.connector

    conn = snowflake.connector.connect(
        user="fake", password="snow", account="fakesnow", host="127.0.0.1",
        port=fakesnow_server, protocol="http",
        session_parameters={"CLIENT_OUT_OF_BAND_TELEMETRY_ENABLED": False},
    )  # fmt: skip
    cursor = conn.cursor()
    cursor.execute("CREATE DATABASE IF NOT EXISTS SHOP")
    cursor.execute("CREATE SCHEMA IF NOT EXISTS SHOP.PUBLIC")
    cursor.execute("USE SCHEMA SHOP.PUBLIC")
    cursor.execute("CREATE OR REPLACE TABLE sales (tenant_id INT, region VARCHAR, amount INT)")
    cursor.execute(
        "INSERT INTO sales VALUES (1, 'EU', 10), (1, 'US', 20), (2, 'EU', 5), (2, 'APAC', 7)"
    )
    conn.close()
    return fakesnow_server


@pytest.fixture(autouse=True)
def _password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCORD_TEST_SF_PASSWORD", "snow")


def test_query_returns_the_table(tmp_path: Path, shop: int) -> None:
    sql = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY region"
    assert rows(run(project(tmp_path, entry(shop), sql))) == [
        {"REGION": "APAC", "TOTAL": 7},
        {"REGION": "EU", "TOTAL": 15},
        {"REGION": "US", "TOTAL": 20},
    ]


@pytest.mark.parametrize("sql", ["DELETE FROM sales", "-- note\nDROP TABLE sales"])
def test_read_only_by_default(tmp_path: Path, shop: int, sql: str) -> None:
    result = run(project(tmp_path, entry(shop), sql))
    assert result.exit_code == 1
    assert "read-only" in result.stderr
    count = rows(run(project(tmp_path, entry(shop), "SELECT COUNT(*) AS n FROM sales")))
    assert count == [{"N": 4}]


def test_filters_are_session_variables_the_query_reads(tmp_path: Path, shop: int) -> None:
    # as a row access policy would: the query reads $TENANT_ID and $REGIONS of the session
    sql = (
        "SELECT region, amount FROM sales WHERE tenant_id = $TENANT_ID "
        "AND CONTAINS(',' || $REGIONS || ',', ',' || region || ',') ORDER BY region"
    )
    path = project(tmp_path, entry(shop, FILTERS), sql)
    got = rows(run(path, "--filter", "tenant_id=2", "--filter", "regions=EU,APAC"))
    assert got == [{"REGION": "APAC", "AMOUNT": 7}, {"REGION": "EU", "AMOUNT": 5}]
    got = rows(run(path, "--filter", "tenant_id=1", "--filter", 'regions=["US"]'))
    assert got == [{"REGION": "US", "AMOUNT": 20}]


def test_filter_defaults_fill_what_the_run_leaves_out(tmp_path: Path, shop: int) -> None:
    path = project(tmp_path, entry(shop, FILTERS), "SELECT $TENANT_ID AS t, $REGIONS AS r")
    assert rows(run(path, "--filter", "tenant_id=7")) == [{"T": "7", "R": ""}]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (("--filter", "tenant=1"), "unknown filter 'tenant'"),
        (("--filter", "tenant_id=abc"), "filter 'tenant_id': cannot convert 'abc' to integer"),
        (("--filter", "regions=" + ",".join(["x" * 30] * 9)), "over Snowflake's 256"),
    ],
)
def test_bad_filters_are_refused(
    tmp_path: Path, shop: int, given: tuple[str, ...], said: str
) -> None:
    path = project(tmp_path, entry(shop, FILTERS), "SELECT 1")
    result = run(path, *given)
    assert result.exit_code != 0
    assert said in result.stderr, result.stderr


def test_a_filter_without_default_must_be_given(tmp_path: Path, shop: int) -> None:
    required = "    filters:\n      tenant_id:\n        type: integer\n"
    path = project(tmp_path, entry(shop, required), "SELECT $TENANT_ID AS t")
    result = run(path, "--filter", "tenant_id=3")
    assert rows(result) == [{"T": "3"}]
    other = entry(shop, required + "      region:\n        type: string\n")
    result = run(project(tmp_path, other, "SELECT 1"), "--filter", "tenant_id=3")
    assert result.exit_code != 0
    assert "filter 'region' has no value and no default" in result.stderr
