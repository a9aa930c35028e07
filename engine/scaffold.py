"""`accord init [DIR]`: a small working project, runnable at once with no key.

A DuckDB database over one CSV, the embedded `local` model, a workflow (SQL, a template, an
agent) with a consistency test that needs no judge, and an evaluation suite of deterministic
checks. Nothing is overwritten: a folder that already holds any of these files is refused.
"""

from __future__ import annotations

from pathlib import Path

from accord.engine.errors import LoadError

FILES: dict[str, str] = {
    "config.yml": """\
# One DuckDB database over the CSV files in data/ (each file is a view: `orders`), and the
# embedded `local` model (no key). Add models under `models:` (see the accord README).
databases:
  - name: shop
    type: duckdb
    dataset: data

defaults:
  database: shop
  model: local
""",
    "data/orders.csv": """\
order_id,region,product,amount
1,North,Laptop,1200
2,South,Monitor,300
3,North,Keyboard,80
4,East,Laptop,1150
5,South,Laptop,1250
6,East,Mouse,40
7,North,Monitor,320
8,West,Keyboard,90
""",
    "revenue.workflow.yml": """\
# accord run revenue.workflow.yml      (then: accord test revenue.workflow.yml)
name: revenue
description: Revenue by region, a headline, and a sentence about it.
tasks:
  - name: by_region
    type: execute_sql
    sql_query: |
      SELECT region, SUM(amount) AS revenue FROM orders GROUP BY region ORDER BY revenue DESC
  - name: headline
    type: formatter
    template: "{{ by_region.region[0] }} leads with {{ by_region.revenue[0] }} in revenue."
  - name: comment
    type: agent
    prompt: |
      In one sentence, comment on this revenue by region:
      {{ by_region }}
tests:
  # The headline is SQL and a template: every run agrees, and no judge is asked.
  - type: consistency
    name: headline is deterministic
    task_ref: headline
    n: 3
""",
    "checks.eval.yml": """\
# accord eval checks.eval.yml: cases, a target and evaluators (no model: `echo` returns the
# input). Change `target` to a model (`local`, or one of config.yml) to evaluate it.
name: checks
target: echo
evaluators:
  - {type: contains, case_sensitive: false}
  - {type: regex, pattern: "[.?!]$", name: ends_a_sentence}
cases:
  - id: capital
    input: The capital of France is Paris.
    expected: paris
  - id: question
    input: Which region sold most?
    expected: region
""",
}


def scaffold(folder: Path) -> list[Path]:
    """Write the project's files into `folder` (created if missing); their paths."""
    if folder.exists() and not folder.is_dir():
        raise LoadError(f"{folder} is a file: give a folder to create the project in")
    taken = [name for name in FILES if (folder / name).exists()]
    if taken:
        raise LoadError(
            f"{folder} already holds {', '.join(taken)}: accord init writes a new project and "
            "overwrites nothing; give an empty or new folder"
        )
    written = []
    for name, text in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
