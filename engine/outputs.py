"""The engine's own output types, registered with the codec: tables and query results."""

from __future__ import annotations

from typing import Any

from accord.engine.codec import register_output
from accord.engine.databases.base import QueryResult
from accord.engine.render import TableView


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


def _table(data: Any) -> TableView:
    return TableView(*_columns_rows(data))


def _query_result(data: Any) -> QueryResult:
    columns, rows = _columns_rows(data)
    sql = data.get("sql")
    if not isinstance(sql, str):
        raise ValueError("a query result's SQL must be text")
    return QueryResult(columns, rows, sql)


register_output(
    "table", TableView, lambda t: {"columns": t.columns, "rows": [list(r) for r in t.rows]}, _table
)
register_output(
    "query_result",
    QueryResult,
    lambda t: {"columns": t.columns, "rows": [list(r) for r in t.rows], "sql": t.sql},
    _query_result,
)
