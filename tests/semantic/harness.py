"""The helpers of the semantic layer's tests: a DuckDB project of three CSV tables with its
views and topic, a workflow of one task, `accord` in this process, and SQL run by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
from click.testing import CliRunner

from accord.cli import main

SALES = """id,store_id,region_id,day,amount
1,1,1,2024-01-05,10
2,1,1,2024-01-20,20
3,2,2,2024-02-03,5
4,2,2,2024-03-09,40
5,1,1,2024-03-15,7
"""
STORES = "id,region_id,name\n1,1,North shop\n2,2,South shop\n"
REGIONS = "id,label\n1,North\n2,South\n"

SALES_VIEW = """name: sales
datasource: local
table: sales.csv
entities:
  - {name: sale, type: primary, key: sale_id}
  - {name: store, type: foreign, key: store_id}
dimensions:
  - {name: sale_id, type: number, expr: id}
  - {name: store_id, type: number}
  - {name: day, type: date}
measures:
  - {name: revenue, type: sum, expr: amount}
  - {name: sales_count, type: count}
  - {name: big_sales, type: count, filters: [{expr: "amount >= 10"}]}
"""
STORES_VIEW = """name: stores
datasource: local
table: stores.csv
entities:
  - {name: store, type: primary, key: store_id}
  - {name: region, type: foreign, key: region_id}
dimensions:
  - {name: store_id, type: number, expr: id}
  - {name: region_id, type: number}
  - {name: store_name, type: string, expr: name}
"""
REGIONS_VIEW = """name: regions
datasource: local
table: regions.csv
entities:
  - {name: region, type: primary, key: region_id}
dimensions:
  - {name: region_id, type: number, expr: id}
  - {name: label, type: string}
"""
TOPIC = "name: shop\nviews: [sales, stores, regions]\n"


def accord(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def project(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / ".db").mkdir()
    for name, text in (("sales", SALES), ("stores", STORES), ("regions", REGIONS)):
        (tmp_path / ".db" / f"{name}.csv").write_text(text)
    (tmp_path / "config.yml").write_text(
        extra + "databases:\n  - {name: local, type: duckdb, dataset: .db}\n"
    )
    views = tmp_path / "semantics"
    views.mkdir()
    (views / "sales.view.yml").write_text(SALES_VIEW)
    (views / "stores.view.yml").write_text(STORES_VIEW)
    (views / "regions.view.yml").write_text(REGIONS_VIEW)
    (views / "shop.topic.yml").write_text(TOPIC)
    return tmp_path


def workflow(root: Path, task: str) -> Path:
    path = root / "q.workflow.yml"
    path.write_text("tasks:\n  - name: q\n    type: semantic_query\n    topic: shop\n" + task)
    return path


def by_hand(root: Path, sql: str) -> list[list[Any]]:
    conn = duckdb.connect()
    conn.execute(f"SET file_search_path = '{root / '.db'}'")
    return [list(r) for r in conn.execute(sql).fetchall()]
