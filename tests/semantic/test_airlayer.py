"""The semantic layer computes what Oxy computes: each query runs through `accord run` and its
rows equal DuckDB SQL written by hand after the SQL that oxy-hq/airlayer's generator
(src/engine/sql_generator.rs) writes for it; the function each case follows is named."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from tests.semantic.harness import SALES_VIEW, accord, by_hand, project, workflow

EXTRA_MEASURES = """  - name: big_revenue
    type: sum
    expr: amount
    filters: [{expr: "amount >= 30"}]
  - {name: big_plus_one, type: custom, expr: "{{big_revenue}} + 1"}
"""


def run_rows(path: Path) -> list[list[Any]]:
    result = accord("run", path, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["outputs"]["q"]
    return [list(r.values()) for r in rows]


def same_rows(got: list[list[Any]], expected: list[list[Any]]) -> None:
    def key(row: list[Any]) -> str:
        return json.dumps(row, default=str)

    # dates as the JSON output shows them
    shown = json.loads(json.dumps(expected, default=lambda v: v.isoformat()))
    assert sorted(got, key=key) == sorted(shown, key=key)


def test_default_filters_in_oxys_operator_key_form(tmp_path: Path) -> None:
    """Oxy's TopicFilter (airlayer src/schema/models.rs) flattens the operator into the
    filter: `field` plus `neq: {value: ...}`; build_query_request puts it before the query's
    own filters, into WHERE (generate)."""
    root = project(tmp_path)
    (root / "semantics" / "shop.topic.yml").write_text(
        "name: shop\nviews: [sales, stores, regions]\ndefault_filters:\n"
        "  - field: sales.store_id\n    neq: {value: 2}\n"
        "  - field: sales.amount_band\n    in: {values: [low, high]}\n"
    )
    (root / "semantics" / "sales.view.yml").write_text(
        SALES_VIEW.replace(
            "  - {name: day, type: date}\n",
            "  - {name: day, type: date}\n"
            "  - {name: amount_band, expr: \"CASE WHEN amount < 10 THEN 'low' ELSE 'high' END\"}\n",
        )
    )
    assert accord("validate", root / "semantics" / "shop.topic.yml").exit_code == 0
    got = run_rows(workflow(root, "    measures: [sales.revenue]\n    dimensions: [sales.day]\n"))
    expected = by_hand(
        root,
        """SELECT day AS sales__day, SUM(amount) AS sales__revenue FROM 'sales.csv'
        WHERE store_id <> 2
          AND (CASE WHEN amount < 10 THEN 'low' ELSE 'high' END) IN ('low', 'high')
        GROUP BY 1""",
    )
    assert len(expected) == 3
    same_rows(got, expected)


def test_a_bare_value_under_an_operator_key_is_refused_not_ignored(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "semantics" / "shop.topic.yml").write_text(
        "name: shop\nviews: [sales]\ndefault_filters:\n  - field: sales.store_id\n    neq: 2\n"
    )
    result = accord("run", workflow(root, "    measures: [sales.revenue]\n"))
    assert result.exit_code != 0
    assert "'neq' takes a mapping" in result.output


def test_a_filtered_sum_over_no_rows_is_zero_and_custom_measures_stay_numbers(
    tmp_path: Path,
) -> None:
    """airlayer measure_agg_expr: a sum with `filters` is COALESCE(SUM(CASE WHEN ...), 0)."""
    root = project(tmp_path)
    (root / "semantics" / "sales.view.yml").write_text(SALES_VIEW + EXTRA_MEASURES)
    got = run_rows(
        workflow(
            root,
            "    measures: [sales.big_revenue, sales.big_plus_one]\n"
            "    dimensions: [stores.store_name]\n",
        )
    )
    expected = by_hand(
        root,
        """SELECT st.name,
               COALESCE(SUM(CASE WHEN s.amount >= 30 THEN s.amount END), 0),
               COALESCE(SUM(CASE WHEN s.amount >= 30 THEN s.amount END), 0) + 1
        FROM 'sales.csv' s LEFT JOIN 'stores.csv' st ON s.store_id = st.id GROUP BY 1""",
    )
    assert sorted(expected) == [["North shop", 0, 1], ["South shop", 40, 41]]
    same_rows(got, expected)


def test_dimensions_without_measures_are_one_row_per_row(tmp_path: Path) -> None:
    """airlayer assemble_sql: GROUP BY only when a measure is selected."""
    root = project(tmp_path)
    got = run_rows(workflow(root, "    dimensions: [sales.store_id, stores.store_name]\n"))
    expected = by_hand(
        root,
        """SELECT s.store_id, st.name FROM 'sales.csv' s
        LEFT JOIN 'stores.csv' st ON s.store_id = st.id""",
    )
    assert len(expected) == 5  # not the 2 distinct pairs
    same_rows(got, expected)


def test_a_query_without_topic_uses_the_views_it_names(tmp_path: Path) -> None:
    """Oxy's resolve_topic (crates/agentic/workflow/src/semantic.rs): no topic, an ad-hoc
    one of the views the measures and dimensions name, without default filters."""
    root = project(tmp_path)
    (root / "semantics" / "shop.topic.yml").write_text(
        "name: shop\nviews: [sales, stores]\ndefault_filters:\n"
        "  - {field: sales.store_id, op: eq, value: 1}\n"
    )
    path = root / "q.workflow.yml"
    path.write_text(
        "tasks:\n  - name: q\n    type: semantic_query\n    measures: [sales.revenue]\n"
        "    dimensions: [stores.store_name]\n"
    )
    assert accord("validate", path).exit_code == 0
    expected = by_hand(
        root,
        """SELECT st.name, SUM(s.amount) FROM 'sales.csv' s
        LEFT JOIN 'stores.csv' st ON s.store_id = st.id GROUP BY 1""",
    )
    same_rows(run_rows(path), expected)
    path.write_text(
        "tasks:\n  - name: q\n    type: semantic_query\n    measures: [sales.revenue]\n"
        "    dimensions: [shops.name]\n"
    )
    result = accord("validate", path)
    assert result.exit_code == 2
    assert "view 'shops' is not defined by any .view.yml" in result.output


def _dated_project(tmp_path: Path) -> Path:
    root = project(tmp_path)
    today = dt.date.today()
    lines = ["id,day,happened,amount"]
    for index, back in enumerate((0, 3, 10, 400)):
        day = today - dt.timedelta(days=back)
        lines.append(f"{index},{day},{day} 12:00:00,{back + 1}")
    (root / ".db" / "events.csv").write_text("\n".join(lines) + "\n")
    (root / "semantics" / "events.view.yml").write_text(
        "name: events\ndatasource: local\ntable: events.csv\n"
        "dimensions:\n  - {name: day, type: date}\n  - {name: happened, type: datetime}\n"
        "measures:\n  - {name: total, type: sum, expr: amount}\n"
    )
    (root / "semantics" / "log.topic.yml").write_text("name: log\nviews: [events]\n")
    return root


def test_relative_dates_in_filters_on_date_and_datetime_fields(tmp_path: Path) -> None:
    """Oxy's jv2s/normalize_date_value turn relative dates into YYYY-MM-DD for date and
    datetime fields; airlayer compiles in_date_range to `col >= from AND col <= to`."""
    root = _dated_project(tmp_path)
    path = root / "q.workflow.yml"
    path.write_text(
        "tasks:\n  - name: q\n    type: semantic_query\n    topic: log\n"
        "    measures: [events.total]\n"
        "    filters:\n"
        "      - {field: events.day, op: in_date_range, from: 7 days ago, to: now}\n"
        "      - {field: events.happened, op: gte, value: 2 weeks ago}\n"
    )
    assert accord("validate", path).exit_code == 0
    expected = by_hand(
        root,
        """SELECT SUM(amount) FROM 'events.csv'
        WHERE day >= current_date - 7 AND day <= current_date
          AND happened >= CAST(current_date - 14 AS TIMESTAMP)""",
    )
    assert expected == [[5]]
    same_rows(run_rows(path), expected)
    path.write_text(path.read_text().replace("2 weeks ago", "a fortnight hence"))
    result = accord("validate", path)
    assert result.exit_code == 2
    assert "'a fortnight hence' is not a date" in result.output


def test_time_dimension_date_range_filters_the_rows(tmp_path: Path) -> None:
    """airlayer generate(): a time dimension's date_range adds `col >= from AND col <= to`."""
    root = project(tmp_path)
    path = workflow(
        root,
        "    measures: [sales.revenue]\n"
        "    time_dimensions:\n"
        "      - dimension: sales.day\n"
        "        granularity: month\n"
        "        date_range: [2024-01-10, '2024-02-28']\n",
    )
    expected = by_hand(
        root,
        """SELECT date_trunc('month', day), SUM(amount) FROM 'sales.csv'
        WHERE day >= '2024-01-10' AND day <= '2024-02-28' GROUP BY 1""",
    )
    assert len(expected) == 2
    same_rows(run_rows(path), expected)
    path.write_text(path.read_text().replace("2024-01-10", "whenever"))
    result = accord("validate", path)
    assert result.exit_code == 2
    assert "date_range: 'whenever' is not a date" in result.output
    assert f"{path}:" in result.output


REFUNDS_VIEW = """name: refunds
datasource: local
table: refunds.csv
entities:
  - {name: refund, type: primary, key: refund_id}
  - {name: sale, type: foreign, key: sale_id}
dimensions:
  - {name: refund_id, type: number, expr: id}
  - {name: sale_id, type: number}
  - {name: reason, type: string}
measures:
  - {name: refunds, type: count}
"""


def test_measures_a_one_to_many_join_would_repeat_are_counted_once(tmp_path: Path) -> None:
    """airlayer generate_with_fanout_protection: the repeated view's measures are aggregated
    on their own (each sale once per reason it has), then joined to the dimensions."""
    root = project(tmp_path)
    (root / ".db" / "refunds.csv").write_text(
        "id,sale_id,reason\n1,1,late\n2,1,broken\n3,1,late\n4,4,late\n"
    )
    (root / "semantics" / "refunds.view.yml").write_text(REFUNDS_VIEW)
    (root / "semantics" / "shop.topic.yml").write_text(
        "name: shop\nviews: [sales, stores, regions, refunds]\n"
    )
    path = workflow(
        root,
        "    measures: [sales.revenue, sales.sales_count, refunds.refunds]\n"
        "    dimensions: [refunds.reason]\n"
        "    filters: [{field: stores.store_name, op: contains, value: shop}]\n",
    )
    expected = by_hand(
        root,
        """WITH pairs AS (
             SELECT DISTINCT s.id AS sale_id, r.reason
             FROM 'sales.csv' s LEFT JOIN 'refunds.csv' r ON r.sale_id = s.id
             LEFT JOIN 'stores.csv' st ON s.store_id = st.id
             WHERE st.name LIKE '%shop%'),
           by_sale AS (
             SELECT p.reason, SUM(s.amount) AS revenue, COUNT(*) AS sales
             FROM pairs p JOIN 'sales.csv' s ON s.id = p.sale_id GROUP BY 1),
           by_refund AS (
             SELECT r.reason, COUNT(*) AS refunds FROM 'refunds.csv' r
             JOIN 'sales.csv' s ON r.sale_id = s.id
             LEFT JOIN 'stores.csv' st ON s.store_id = st.id
             WHERE st.name LIKE '%shop%' GROUP BY 1)
        SELECT b.reason, b.revenue, b.sales, f.refunds
        FROM by_sale b LEFT JOIN by_refund f ON b.reason IS NOT DISTINCT FROM f.reason""",
    )
    # sale 1 (10) has two reasons, sale 4 (40) one; the three others none
    assert sorted(expected, key=str) == sorted(
        [["late", 50, 2, 3], ["broken", 10, 1, 1], [None, 32, 3, None]], key=str
    )
    same_rows(run_rows(path), expected)


def test_a_repeated_view_without_primary_entity_is_still_refused(tmp_path: Path) -> None:
    """Without a primary entity the rows of the measures' view cannot be told apart, so
    there is no per-view aggregation to do: an error naming what to add, never a number."""
    root = project(tmp_path)
    (root / ".db" / "managers.csv").write_text("id,store_id,name\n1,1,Ann\n2,1,Bob\n")
    (root / "semantics" / "managers.view.yml").write_text(
        "name: managers\ndatasource: local\ntable: managers.csv\n"
        "entities:\n  - {name: store, type: foreign, key: store_id}\n"
        "dimensions:\n  - {name: store_id, type: number}\n  - {name: name}\n"
    )
    (root / "semantics" / "sales.view.yml").write_text(
        SALES_VIEW.replace("  - {name: sale, type: primary, key: sale_id}\n", "")
    )
    (root / "semantics" / "shop.topic.yml").write_text(
        "name: shop\nviews: [sales, stores, managers]\n"
    )
    path = workflow(root, "    measures: [sales.revenue]\n    dimensions: [managers.name]\n")
    result = accord("run", path)
    assert result.exit_code != 0
    assert "would count rows of view 'sales' more than once" in result.output
    assert "give view 'sales' one" in result.output
