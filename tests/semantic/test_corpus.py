"""Oxy's semantic layer in the corpus: every view and topic validates, and the semantic
procedures run unchanged, their tables equal to DuckDB SQL written by hand."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from accord.cli import main

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("ACCORD_OXY_CORPUS", REPO.parent / "shared" / "oxy-corpus"))

pytestmark = pytest.mark.skipif(
    not (CORPUS / "examples" / "semantics").is_dir(),
    reason=f"Oxy corpus not found at {CORPUS} (set ACCORD_OXY_CORPUS)",
)

CONFIG = "databases:\n  - {name: local, type: duckdb, dataset: .db}\ndefaults:\n  database: local\n"


def accord(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    project = tmp_path / "examples"
    shutil.copytree(CORPUS / "examples", project)
    for folder, _dirs, files in os.walk(project):
        os.chmod(folder, os.stat(folder).st_mode | stat.S_IWUSR)
        for name in files:
            path = os.path.join(folder, name)
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)
    (project / "config.yml").write_text(CONFIG, encoding="utf-8")
    return project


def by_hand(project: Path, sql: str) -> list[dict[str, Any]]:
    conn = duckdb.connect()
    conn.execute(f"SET file_search_path = '{project / '.db'}'")
    cursor = conn.execute(sql)
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    # as JSON outputs show them (dates in ISO form)
    text = json.dumps(rows, default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v))
    return json.loads(text)  # type: ignore[no-any-return]


def run_outputs(path: Path) -> dict[str, Any]:
    result = accord("run", path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["outputs"]  # type: ignore[no-any-return]


def test_every_view_and_topic_of_the_corpus_validates() -> None:
    files = sorted(CORPUS.glob("*/*semantics/**/*.yml"))
    assert len(files) == 18
    result = accord("validate", *files)
    assert result.exit_code == 0, result.stderr
    assert "ok: " in result.stdout and "(topic, 9 views)" in result.stdout


def test_sales_analytics_equals_duckdb_by_hand(examples: Path) -> None:
    outputs = run_outputs(examples / "procedures/sales_analytics.procedure.yml")
    expected = by_hand(
        examples,
        """
        SELECT f.name AS fruits__fruit_name, o.id AS orders__order_id,
               SUM(i.quantity * i.unit_price * (1 - i.discount_percent / 100))
                 AS order_items__total_revenue,
               COUNT(*) AS order_items__total_items
        FROM 'order_items.csv' i
        LEFT JOIN 'fruit.csv' f ON i.product_id = f.id
        LEFT JOIN 'orders.csv' o ON i.order_id = o.id
        GROUP BY 1, 2 ORDER BY 1, 2
        """,
    )
    assert outputs["sales_data"] == expected
    assert len(expected) == 15


def test_semantic_variables_equals_duckdb_by_hand(examples: Path) -> None:
    outputs = run_outputs(examples / "procedures/semantic_variables.procedure.yml")
    # dimensions only: no GROUP BY, one row per joined row (airlayer's assemble_sql)
    expected = by_hand(
        examples,
        """
        SELECT o.id AS orders__order_id,
               date_trunc('month', s.shipped_date) AS order_shipments__shipped_date__month
        FROM 'order_shipments.csv' s
        LEFT JOIN 'order_items.csv' i ON s.order_id = i.order_id
             AND s.line_item_id = i.line_item_id
        LEFT JOIN 'orders.csv' o ON i.order_id = o.id
        ORDER BY 1, 2 LIMIT 5
        """,
    )
    assert outputs["sales_data"] == expected


def test_measures_of_several_views_are_not_counted_twice(examples: Path) -> None:
    """Order totals by customer next to item revenue by customer: each measure aggregated
    from its own view, as two hand-written queries would."""
    (examples / "q.workflow.yml").write_text(
        """
tasks:
  - name: q
    type: semantic_query
    topic: fruit_business
    measures: [orders.total_order_value, order_items.total_revenue, customers.male_count]
    dimensions: [customers.customer_name]
    filters:
      - {field: orders.total_order_value, op: gt, value: 100}
    orders: [{field: orders.total_order_value, direction: desc}]
""",
        encoding="utf-8",
    )
    outputs = run_outputs(examples / "q.workflow.yml")
    expected = by_hand(
        examples,
        """
        WITH o AS (SELECT c.name, SUM(o.total_amount) AS v FROM 'orders.csv' o
                   LEFT JOIN 'customer.csv' c ON o.customer_id = c.id GROUP BY 1),
             i AS (SELECT c.name, SUM(i.quantity * i.unit_price * (1 - i.discount_percent / 100))
                     AS v
                   FROM 'order_items.csv' i LEFT JOIN 'orders.csv' o ON i.order_id = o.id
                   LEFT JOIN 'customer.csv' c ON o.customer_id = c.id GROUP BY 1),
             m AS (SELECT name, COUNT(CASE WHEN gender = 'M' THEN id END) AS v
                   FROM 'customer.csv' GROUP BY 1)
        SELECT o.name AS customers__customer_name, o.v AS orders__total_order_value,
               i.v AS order_items__total_revenue, m.v AS customers__male_count
        FROM o LEFT JOIN i ON o.name = i.name LEFT JOIN m ON o.name = m.name
        WHERE o.v > 100 ORDER BY o.v DESC
        """,
    )
    assert outputs["q"] == expected


def test_demo_project_custom_measures_equal_duckdb_by_hand(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    shutil.copytree(CORPUS / "demo_project", project)
    os.chmod(project, 0o755)
    (project / "q.workflow.yml").write_text(
        """
tasks:
  - name: q
    type: semantic_query
    topic: retail_analytics
    measures: [oxymart.total_sales, oxymart.holiday_sales_lift_pct, oxymart.holiday_week_count]
    dimensions: [oxymart.year]
    filters:
      - {field: oxymart.store_id, op: in, values: [1, 2]}
    orders: [{field: oxymart.year, direction: desc}]
    limit: 2
    export: {path: output/q.csv, format: csv}
""",
        encoding="utf-8",
    )
    outputs = run_outputs(project / "q.workflow.yml")
    expected = by_hand(
        project,
        """
        SELECT EXTRACT(YEAR FROM CAST(Date AS DATE)) AS oxymart__year,
               SUM(Weekly_Sales) AS oxymart__total_sales,
               (AVG(CASE WHEN Holiday_Flag = 1 THEN Weekly_Sales END) -
                AVG(CASE WHEN Holiday_Flag = 0 THEN Weekly_Sales END)) /
                AVG(CASE WHEN Holiday_Flag = 0 THEN Weekly_Sales END) * 100
                 AS oxymart__holiday_sales_lift_pct,
               COUNT(CASE WHEN Holiday_Flag = 1 THEN 1 END) AS oxymart__holiday_week_count
        FROM 'oxymart.csv' WHERE Store IN (1, 2)
        GROUP BY 1 ORDER BY 1 DESC LIMIT 2
        """,
    )
    assert outputs["q"] == expected
    assert (project / "output/q.csv").read_text().startswith("oxymart__year,oxymart__total_sales")
