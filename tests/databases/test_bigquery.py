"""The bigquery database type through google-cloud-bigquery (the `bigquery` extra), on a
loopback server the tests start that speaks the REST calls the client makes and answers
from DuckDB (tests/databases/bigquery_server.py): a service-account key file of the test's
own, exchanged for a token; Oxy's keys (key_path, key_path_var, dataset, dry_run_limit);
each statement dry-run first and refused unless BigQuery calls it a SELECT."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.databases.bigquery_server import PROJECT, Served
from tests.databases.projects import project, rows, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shop(bigquery_server: Served) -> Served:
    bigquery_server.fake.load(
        "CREATE SCHEMA IF NOT EXISTS shop",
        "CREATE OR REPLACE TABLE shop.sales (region VARCHAR, amount BIGINT, sold DATE, "
        "price DOUBLE, paid BOOLEAN)",
        "INSERT INTO shop.sales VALUES ('EU', 10, '2024-01-15', 1.5, true), "
        "('US', 20, '2024-02-01', 2.25, false), ('EU', 5, '2024-02-20', NULL, NULL)",
    )
    return bigquery_server


def key_file(folder: Path, served: Served, name: str = "keys/bq.json") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(served.key))
    return path


def entry(served: Served, **extra: Any) -> str:
    lines = "".join(f"    {k}: {v}\n" for k, v in extra.items())
    return (
        "  - name: db\n    type: bigquery\n    dataset: shop\n"
        f"    api_endpoint: {served.fake.endpoint}\n{lines}"
    )


def test_query_returns_the_table(tmp_path: Path, shop: Served) -> None:
    key_file(tmp_path, shop)
    sql = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY region"
    path = project(tmp_path, entry(shop, key_path="keys/bq.json"), sql)
    assert rows(run(path)) == [{"region": "EU", "total": 15}, {"region": "US", "total": 20}]
    # a dry run first, then the query itself, both on the default dataset
    dry, real = shop.fake.queries()[-2:]
    assert dry["dryRun"] is True and not real.get("dryRun")
    assert real["query"]["defaultDataset"] == {"projectId": PROJECT, "datasetId": "shop"}


def test_values_keep_their_types(tmp_path: Path, shop: Served) -> None:
    key_file(tmp_path, shop)
    sql = "SELECT sold, price, paid, region FROM sales ORDER BY sold"
    path = project(tmp_path, entry(shop, key_path="keys/bq.json"), sql)
    assert rows(run(path)) == [
        {"sold": "2024-01-15", "price": 1.5, "paid": True, "region": "EU"},
        {"sold": "2024-02-01", "price": 2.25, "paid": False, "region": "US"},
        {"sold": "2024-02-20", "price": None, "paid": None, "region": "EU"},
    ]


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("DELETE FROM sales WHERE TRUE", "DELETE"),
        ("-- a note\nUPDATE sales SET amount = 0 WHERE TRUE", "UPDATE"),
        ("CREATE TABLE scratch (x INT64)", "CREATE_TABLE"),
        ("SELECT 1; DROP TABLE sales", "SCRIPT"),
    ],
)
def test_read_only_by_default_refused_after_a_dry_run(
    tmp_path: Path, shop: Served, sql: str, kind: str
) -> None:
    key_file(tmp_path, shop)
    db = entry(shop, key_path="keys/bq.json")
    result = run(project(tmp_path, db, sql))
    assert result.exit_code == 1, result.output
    assert f"BigQuery's dry run calls this statement {kind}" in result.stderr
    assert "read-only" in result.stderr and "read_only: false" in result.stderr
    # only the dry run reached BigQuery
    assert shop.fake.queries()[-1]["dryRun"] is True
    count = rows(run(project(tmp_path, db, "SELECT COUNT(*) AS n FROM sales")))
    assert count == [{"n": 3}]


def test_writes_allowed_when_read_only_is_false(tmp_path: Path, shop: Served) -> None:
    key_file(tmp_path, shop)
    db = entry(shop, key_path="keys/bq.json", read_only="false")
    assert run(project(tmp_path, db, "CREATE TABLE scratch (x INT64)")).exit_code == 0
    assert run(project(tmp_path, db, "DROP TABLE scratch")).exit_code == 0
    # no dry run without a dry_run_limit: the statement was sent as it is
    assert not shop.fake.queries()[-1].get("dryRun")


def test_dry_run_limit_refuses_a_query_reading_more(tmp_path: Path, shop: Served) -> None:
    key_file(tmp_path, shop)
    # the fake counts 8 bytes a cell: sales is 3 rows of 5 columns, 120 bytes
    db = entry(shop, key_path="keys/bq.json", dry_run_limit=100)
    result = run(project(tmp_path, db, "SELECT region FROM sales"))
    assert result.exit_code == 1, result.output
    assert "would process 120 bytes, over the dry_run_limit of 100 bytes" in result.stderr
    db = entry(shop, key_path="keys/bq.json", dry_run_limit=120)
    assert rows(run(project(tmp_path, db, "SELECT COUNT(*) AS n FROM sales"))) == [{"n": 3}]


def test_a_query_error_is_bigquerys_message(tmp_path: Path, shop: Served) -> None:
    key_file(tmp_path, shop)
    result = run(project(tmp_path, entry(shop, key_path="keys/bq.json"), "SELECT * FROM nowhere"))
    assert result.exit_code == 1, result.output
    assert "nowhere" in result.stderr and "Traceback" not in result.output


def test_key_path_var_names_the_key_file(
    tmp_path: Path, shop: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = key_file(tmp_path / "elsewhere", shop, "secret-folder/key.json")
    monkeypatch.setenv("ACCORD_TEST_BQ_KEY", str(path))
    db = entry(shop, key_path_var="ACCORD_TEST_BQ_KEY")
    assert rows(run(project(tmp_path, db, "SELECT COUNT(*) AS n FROM sales"))) == [{"n": 3}]
    # a wrong path from the environment is named by its variable, the path never shown
    monkeypatch.setenv("ACCORD_TEST_BQ_KEY", str(tmp_path / "secret-folder" / "gone.json"))
    result = run(project(tmp_path, db, "SELECT 1"))
    assert result.exit_code == 1, result.output
    assert "the key file named by ACCORD_TEST_BQ_KEY (key_path_var) is not a file" in (
        result.stderr
    )
    assert "secret-folder" not in result.output
    monkeypatch.delenv("ACCORD_TEST_BQ_KEY")
    result = run(project(tmp_path, db, "SELECT 1"))
    assert result.exit_code == 1
    assert "environment variable ACCORD_TEST_BQ_KEY (key_path_var) is not set" in result.stderr


def test_a_wrong_key_path_is_named(tmp_path: Path, shop: Served) -> None:
    path = project(tmp_path, entry(shop, key_path="keys/missing.json"), "SELECT 1")
    validated = run_cli("validate", str(path))
    assert validated.exit_code == 0, validated.output  # as a read-only DuckDB file: warned
    result = run(path)
    assert result.exit_code == 1, result.output
    # warned at its line when the run starts, then the task's error
    assert f"{(tmp_path / 'config.yml').resolve()}:6:15 databases[0].key_path" in result.stderr
    assert "key file 'keys/missing.json' not found under the project root" in result.stderr
    assert "database 'db': key_path 'keys/missing.json' is not a file" in result.stderr
    assert "Traceback" not in result.output


def test_a_key_file_that_is_no_key_is_refused_without_showing_it(
    tmp_path: Path, shop: Served
) -> None:
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "bq.json").write_text('{"private_key": "PRIVATE-never-shown"}')
    result = run(project(tmp_path, entry(shop, key_path="keys/bq.json"), "SELECT 1"))
    assert result.exit_code == 1, result.output
    assert "the key file cannot be used: not a service-account key" in result.stderr
    assert "PRIVATE-never-shown" not in result.output


def test_a_key_the_token_exchange_refuses_is_an_error(tmp_path: Path, shop: Served) -> None:
    from tests.databases.bigquery_server import service_account_key

    other, _public = service_account_key(shop.key["token_uri"])  # a key the server never saw
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "bq.json").write_text(json.dumps(other))
    result = run(project(tmp_path, entry(shop, key_path="keys/bq.json"), "SELECT 1"))
    assert result.exit_code == 1, result.output
    assert "invalid_grant" in result.stderr
    assert other["private_key"].splitlines()[1] not in result.output


def run_cli(*args: str) -> Any:
    from click.testing import CliRunner

    from accord.cli import main

    return CliRunner().invoke(main, list(args))


def test_columns_lists_the_datasets_tables(tmp_path: Path, shop: Served) -> None:
    import asyncio

    from accord.engine.databases.bigquery import BigQuery, BigQueryDatabase

    key_file(tmp_path, shop)
    spec = BigQueryDatabase.model_validate(
        {"name": "db", "type": "bigquery", "key_path": "keys/bq.json", "dataset": "shop",
         "api_endpoint": shop.fake.endpoint}
    )  # fmt: skip
    listed = asyncio.run(BigQuery(spec, tmp_path).columns())
    assert [row[:2] for row in listed.rows] == [
        ("sales", "region"), ("sales", "amount"), ("sales", "sold"), ("sales", "price"),
        ("sales", "paid"),
    ]  # fmt: skip


def test_filters_are_not_applied_as_oxy_applies_none(tmp_path: Path, shop: Served) -> None:
    # Oxy applies row-level filters to ClickHouse and Snowflake only
    key_file(tmp_path, shop)
    path = project(
        tmp_path, entry(shop, key_path="keys/bq.json"), "SELECT COUNT(*) AS n FROM sales"
    )
    result = run(path, "--filter", "tenant_id=1")
    assert rows(result) == [{"n": 3}]
    assert "database 'db' declares no filters" in result.stderr
