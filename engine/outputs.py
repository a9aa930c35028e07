"""The engine's own output types, registered with the codec: tables and query results."""

from __future__ import annotations

from typing import Any

from .codec import register_output
from .databases.base import QueryResult
from .render import TableView


def _columns_rows(data: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
    if not isinstance(data, dict):
        raise ValueError("a table's columns and rows expected")
    columns, rows = data.get("columns"), data.get("rows")
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise ValueError("a table's columns must be a list of names")
    if not isinstance(rows, list) or not all(
        isinstance(r, list) and len(r) == len(columns) for r in rows
    ):
        raise ValueError("a table's rows must be lists as long as its columns")
    return columns, [tuple(r) for r in rows]


def table_from_data(data: Any) -> TableView:
    """A table from `{"columns": [...], "rows": [[...]]}`, its shape checked (`ValueError`);
    the run store's and the pinned cache's form of a table."""
    return TableView(*_columns_rows(data))


def _query_result(data: Any) -> QueryResult:
    columns, rows = _columns_rows(data)
    sql = data.get("sql")
    if not isinstance(sql, str):
        raise ValueError("a query result's SQL must be text")
    return QueryResult(columns, rows, sql)


def _table_data(table: TableView) -> dict[str, Any]:
    return {"columns": table.columns, "rows": [list(row) for row in table.rows]}


register_output("table", TableView, _table_data, table_from_data)
register_output(
    "query_result", QueryResult, lambda t: {**_table_data(t), "sql": t.sql}, _query_result
)
