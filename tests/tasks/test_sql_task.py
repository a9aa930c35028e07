"""`execute_sql` on real DuckDB (dataset folders, database files) and SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pytest

if TYPE_CHECKING:
    from conftest import Project


def test_dataset_folder_has_a_view_per_csv_and_parquet_file(project: Project) -> None:
    duckdb.execute(
        "COPY (SELECT * FROM (VALUES ('apple', 'fruit'), ('kiwi', 'fruit'), ('pear', 'fruit'))"
        " t(product, kind)) TO ? (FORMAT parquet)",
        [str(project.root / "data" / "products.parquet")],
    )
    run = project.run(
        """
        tasks:
          - name: joined
            type: execute_sql
            database: shop
            sql_query: |
              SELECT s.region, r.manager, SUM(s.units) AS units, COUNT(p.kind) AS known
              FROM sales AS s
              JOIN regions AS r USING (region)
              LEFT JOIN products AS p USING (product)
              GROUP BY ALL
              ORDER BY s.region
        """
    )
    assert run.outputs["joined"] == [
        {"region": "East", "manager": "Chloe", "units": 11, "known": 3},
        {"region": "North", "manager": "Ada", "units": 4, "known": 2},
        {"region": "South", "manager": "Ben", "units": 7, "known": 2},
        {"region": "West", "manager": "Dev", "units": 2, "known": 1},
    ]


def test_quoted_file_name_is_found_through_the_dataset_folder(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: by_file
            type: execute_sql
            database: shop
            sql_query: SELECT product, SUM(units) AS units FROM 'sales.csv' GROUP BY 1 ORDER BY 1
          - name: by_view
            type: execute_sql
            database: shop
            sql_query: SELECT product, SUM(units) AS units FROM sales GROUP BY 1 ORDER BY 1
        """
    )
    expected = [
        {"product": "apple", "units": 9},
        {"product": "kiwi", "units": 8},
        {"product": "pear", "units": 7},
    ]
    assert run.outputs["by_file"] == expected
    assert run.outputs["by_view"] == expected


def test_the_only_database_is_the_default(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: count
            type: execute_sql
            sql_query: SELECT COUNT(*) AS n FROM sales
        """
    )
    assert run.outputs["count"] == [{"n": 8}]


def _duckdb_file(path: Path) -> None:
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE stock (item VARCHAR, qty INTEGER)")
    conn.execute("INSERT INTO stock VALUES ('bolt', 40), ('nut', 15)")
    conn.close()


def _sqlite_file(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE stock (item TEXT, qty INTEGER)")
    conn.executemany("INSERT INTO stock VALUES (?, ?)", [("bolt", 40), ("nut", 15)])
    conn.commit()
    conn.close()


@pytest.fixture
def files_project(empty_project: Project) -> Project:
    """A DuckDB file and a SQLite file; SQLite also configured writable (`lite_rw`)."""
    proj = empty_project
    (proj.root / "db").mkdir()
    _duckdb_file(proj.root / "db" / "stock.duckdb")
    _sqlite_file(proj.root / "db" / "stock.sqlite")
    proj.config(
        """
        databases:
          - name: duck
            type: duckdb
            path: db/stock.duckdb
          - name: lite
            type: sqlite
            path: db/stock.sqlite
          - name: lite_rw
            type: sqlite
            path: db/stock.sqlite
            read_only: false
        defaults:
          database: duck
        """
    )
    return proj


def test_duckdb_file_and_sqlite_file(files_project: Project) -> None:
    run = files_project.run(
        """
        tasks:
          - name: from_duckdb
            type: execute_sql
            sql_query: SELECT item, qty FROM stock ORDER BY item
          - name: from_sqlite
            type: execute_sql
            database: lite
            sql_query: SELECT item, qty * 2 AS double_qty FROM stock ORDER BY item
        """
    )
    assert run.outputs["from_duckdb"] == [
        {"item": "bolt", "qty": 40},
        {"item": "nut", "qty": 15},
    ]
    assert run.outputs["from_sqlite"] == [
        {"item": "bolt", "double_qty": 80},
        {"item": "nut", "double_qty": 30},
    ]


@pytest.mark.parametrize(
    ("database", "statement"),
    [
        ("duck", "INSERT INTO stock VALUES ('washer', 1)"),
        ("duck", "CREATE TABLE extra (x INTEGER)"),
        ("lite", "INSERT INTO stock VALUES ('washer', 1)"),
        ("lite", "CREATE TABLE extra (x INTEGER)"),
    ],
)
def test_databases_are_read_only_by_default(
    files_project: Project, database: str, statement: str
) -> None:
    run = files_project.run(
        f"""
        tasks:
          - name: write
            type: execute_sql
            database: {database}
            sql_query: "{statement}"
        """
    )
    assert run.exit_code == 1
    assert "task 'write'" in run.stderr
    assert "read_only: false" in run.stderr
    assert run.status("write") == "failed"


def test_dataset_database_rejects_writes(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: write
            type: execute_sql
            sql_query: CREATE TABLE copy AS SELECT * FROM sales
        """
    )
    assert run.exit_code == 1
    assert "read-only: CREATE statements are not allowed" in run.stderr
    assert "read_only: false" in run.stderr


def test_read_only_false_allows_writes_to_a_duckdb_file(empty_project: Project) -> None:
    proj = empty_project
    tmp_path = proj.root
    (tmp_path / "db").mkdir()
    _duckdb_file(tmp_path / "db" / "stock.duckdb")
    proj.config(
        """
        databases:
          - name: duck
            type: duckdb
            path: db/stock.duckdb
            read_only: false
        """
    )
    run = proj.run(
        """
        tasks:
          - name: write
            type: execute_sql
            sql_query: INSERT INTO stock VALUES ('washer', 7)
          - name: read
            type: execute_sql
            depends_on: [write]
            sql_query: SELECT SUM(qty) AS total FROM stock
        """
    )
    assert run.outputs["read"] == [{"total": 62}]
    conn = duckdb.connect(str(tmp_path / "db" / "stock.duckdb"), read_only=True)
    assert conn.execute("SELECT qty FROM stock WHERE item = 'washer'").fetchall() == [(7,)]
    conn.close()


def test_read_only_false_allows_writes_to_sqlite(files_project: Project) -> None:
    run = files_project.run(
        """
        tasks:
          - name: write
            type: execute_sql
            database: lite_rw
            sql_query: INSERT INTO stock VALUES ('washer', 7)
        """
    )
    assert run.exit_code == 0, run.stderr
    conn = sqlite3.connect(files_project.root / "db" / "stock.sqlite")
    assert conn.execute("SELECT qty FROM stock WHERE item = 'washer'").fetchall() == [(7,)]
    conn.close()


def test_sqlite_text_with_a_semicolon_is_one_query(files_project: Project) -> None:
    run = files_project.run(
        """
        tasks:
          - name: q
            type: execute_sql
            database: lite
            sql_query: "SELECT item || ';' AS tagged FROM stock ORDER BY item;"
        """
    )
    assert run.outputs["q"] == [{"tagged": "bolt;"}, {"tagged": "nut;"}]


def test_sql_query_renders_twice_with_task_variables(project: Project) -> None:
    # The first pass (workflow context) leaves the generated SQL with its literal
    # placeholder; the second pass fills it from the task's variables.
    run = project.run(
        """
        variables:
          threshold: 2
        tasks:
          - name: generated
            type: formatter
            template: >-
              SELECT order_id FROM sales WHERE units > {{ "{{ min_units }}" }} ORDER BY order_id
          - name: filtered
            type: execute_sql
            sql_query: "{{ generated }}"
            variables:
              min_units: "{{ threshold + 2 }}"
        """
    )
    assert run.outputs["generated"].endswith("units > {{ min_units }} ORDER BY order_id")
    assert run.outputs["filtered"] == [{"order_id": 3}, {"order_id": 7}]


def test_sql_file_is_rendered_with_workflow_and_task_variables(project: Project) -> None:
    project.write(
        "queries/by_region.sql",
        """
        SELECT product, units FROM sales
        WHERE region = {{ region | sqlquote }} AND units >= {{ min_units }}
        ORDER BY product
        """,
    )
    run = project.run(
        """
        variables:
          name: by_region
          min_units: 2
        tasks:
          - name: east
            type: execute_sql
            sql_file: "queries/{{ name }}.sql"
            variables:
              region: East
        """
    )
    assert run.outputs["east"] == [
        {"product": "kiwi", "units": 6},
        {"product": "pear", "units": 4},
    ]


def test_sql_file_names_an_unknown_variable_at_validation(project: Project) -> None:
    project.write("q.sql", "SELECT * FROM sales WHERE region = '{{ regoin }}'\n")
    run = project.validate(
        """
        tasks:
          - name: q
            type: execute_sql
            sql_file: q.sql
            variables:
              region: East
        """
    )
    assert run.exit_code == 2
    assert "main.workflow.yml:4:15 tasks[0].sql_file: unknown name 'regoin'" in run.stderr


def test_dry_run_limit_fetches_at_most_that_many_rows(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: sample
            type: execute_sql
            sql_query: SELECT order_id FROM sales ORDER BY order_id
            dry_run_limit: 3
        """
    )
    assert run.outputs["sample"] == [{"order_id": 1}, {"order_id": 2}, {"order_id": 3}]


def test_sql_error_fails_the_task_with_the_database_message(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: broken
            type: execute_sql
            sql_query: SELECT nope FROM sales
        """
    )
    assert run.exit_code == 1
    assert "task 'broken'" in run.stderr
    assert "database 'shop'" in run.stderr
    assert '"nope"' in run.stderr
    assert "Traceback" not in run.stderr


def test_unknown_database_is_a_validation_error_with_a_hint(project: Project) -> None:
    run = project.validate(
        """
        tasks:
          - name: q
            type: execute_sql
            database: shpo
            sql_query: SELECT 1
        """
    )
    assert run.exit_code == 2
    assert "main.workflow.yml:4:" in run.stderr
    assert "unknown database 'shpo'; did you mean 'shop'?" in run.stderr


def test_missing_dataset_folder_fails_with_a_clear_message(empty_project: Project) -> None:
    proj = empty_project
    proj.config(
        """
        databases:
          - name: shop
            type: duckdb
            dataset: missing
        """
    )
    run = proj.run(
        """
        tasks:
          - name: q
            type: execute_sql
            sql_query: SELECT 1 AS one
        """
    )
    assert run.exit_code == 2  # refused with the config before any task runs
    assert "dataset folder 'missing' not found" in run.stderr
    assert "config.yml:" in run.stderr


def test_pivot_without_in_list_explains_the_read_only_refusal(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: wide
            type: execute_sql
            sql_query: PIVOT sales ON region USING SUM(units) GROUP BY product
          - name: listed
            type: execute_sql
            sql_query: |
              PIVOT sales ON region IN ('East', 'West') USING SUM(units) GROUP BY product
              ORDER BY product
        """,
        "--keep-going",
    )
    assert run.exit_code == 1
    assert "list the pivot values with IN (...)" in run.stderr
    assert run.status("listed") == "succeeded"


def test_duckdb_file_reads_dataset_files_relative_to_the_project_root(
    files_project: Project,
) -> None:
    # a read-only database reads the project's dataset folders only
    files_project.write("data/extra.csv", "item,qty\nwasher,3\n")
    sql = "SELECT item, qty FROM stock UNION ALL SELECT item, qty FROM 'data/extra.csv'"
    refused = files_project.run(
        f"""
        tasks:
          - name: joined
            type: execute_sql
            sql_query: "{sql} ORDER BY item"
        """
    )
    assert refused.exit_code == 1
    assert 'Cannot access file "data/extra.csv"' in refused.stderr
    assert "read files of the project's dataset folders only" in refused.stderr
    config = (files_project.root / "config.yml").read_text()
    dataset = "databases:\n  - {name: files, type: duckdb, dataset: data}\n"
    files_project.config(config.replace("databases:\n", dataset))
    run = files_project.run(
        f"""
        tasks:
          - name: joined
            type: execute_sql
            database: duck
            sql_query: "{sql} ORDER BY item"
        """
    )
    assert [row["item"] for row in run.outputs["joined"]] == ["bolt", "nut", "washer"]
