"""A semantic query (what a `semantic_query` task or tool asks for) and the SQL text pieces
it compiles to: literals, filter conditions, time granularities, per dialect."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...engine.spec import Spec
from .dates import DateError, resolve_date
from .model import FilterSpec

GRANULARITIES = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")
_SQLITE_FORMATS = {
    "year": "%Y-01-01",
    "month": "%Y-%m-01",
    "day": "%Y-%m-%d",
    "hour": "%Y-%m-%d %H:00:00",
    "minute": "%Y-%m-%d %H:%M:00",
    "second": "%Y-%m-%d %H:%M:%S",
}


class CompileError(Exception):
    """The query asks for something the topic does not have; the message says what to do."""


class TimeDimensionSpec(Spec):
    """A date dimension truncated to a granularity, optionally within a date range."""

    dimension: str = Field(description="'view.dimension' of type date or datetime.")
    granularity: (
        Literal["year", "quarter", "month", "week", "day", "hour", "minute", "second"] | None
    ) = None
    date_range: list[Any] | None = Field(None, min_length=2, max_length=2)


class OrderSpec(Spec):
    field: str = Field(description="A measure or dimension the query selects.")
    direction: Literal["asc", "desc"] = "asc"


class QuerySpec(Spec):
    """The fields of a semantic query (a task's, or a model's tool call)."""

    measures: list[str] = Field(default_factory=list, description="'view.measure' names.")
    dimensions: list[str] = Field(default_factory=list, description="'view.dimension' names.")
    time_dimensions: list[TimeDimensionSpec] = Field(default_factory=list)
    filters: list[FilterSpec] = Field(default_factory=list)
    orders: list[OrderSpec] = Field(default_factory=list)
    limit: int | None = Field(None, ge=0, description="At most this many rows.")
    offset: int | None = Field(None, ge=0)


# the dialects quoting with backticks (airlayer's quote_identifier)
_BACKTICKS = ("mysql", "bigquery")
# LIMIT with OFFSET where the dialect takes no OFFSET alone: the largest row count it takes
_NO_BARE_OFFSET = {"mysql": "18446744073709551615", "bigquery": "9223372036854775807"}
_CLICKHOUSE_TRUNC = {
    "year": "toStartOfYear",
    "quarter": "toStartOfQuarter",
    "month": "toStartOfMonth",
    "week": "toMonday",
    "day": "toDate",
    "hour": "toStartOfHour",
    "minute": "toStartOfMinute",
    "second": "toStartOfSecond",
}
_MYSQL_FORMATS = {
    "year": "%Y-01-01",
    "month": "%Y-%m-01",
    "hour": "%Y-%m-%d %H:00:00",
    "minute": "%Y-%m-%d %H:%i:00",
    "second": "%Y-%m-%d %H:%i:%s",
}


def quote(name: str, dialect: str = "duckdb") -> str:
    """A quoted SQL identifier in the dialect's quotes."""
    if dialect in _BACKTICKS:
        return "`" + name.replace("`", "``" if dialect == "mysql" else "\\`") + "`"
    return '"' + name.replace('"', '""') + '"'


def limit_offset(limit: int | None, offset: int | None, dialect: str) -> str:
    """The LIMIT/OFFSET tail in the dialect's form."""
    text = ""
    if limit is None and offset is not None and dialect in _NO_BARE_OFFSET:
        text += f"\nLIMIT {_NO_BARE_OFFSET[dialect]}"
    if limit is not None:
        text += f"\nLIMIT {limit}"
    if offset is not None:
        text += f"\nOFFSET {offset}"
    return text


def literal(value: Any) -> str:
    """A Python value as an SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def normalized(spec: FilterSpec) -> tuple[str, dict[str, Any]]:
    """(op, arguments) of a filter in either of Oxy's forms."""
    if spec.op is not None:
        return spec.op, {
            "value": spec.value,
            "values": spec.values,
            "from": spec.from_,
            "to": spec.to,
        }
    assert spec.filter_type is not None
    if len(spec.filter_type) != 1:
        raise CompileError(f"filter on '{spec.field}': filter_type takes one operator")
    op, arguments = next(iter(spec.filter_type.items()))
    if not isinstance(arguments, dict):
        raise CompileError(
            f"filter on '{spec.field}': '{op}' takes a mapping ({{value: ...}}, "
            "{values: [...]} or {from: ..., to: ...}), not a bare value"
        )
    return str(op), dict(arguments)


_COMPARE = {"eq": "=", "neq": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def condition(column: str, spec: FilterSpec, dated: bool = False) -> str:
    """The SQL condition of one filter on `column`; on a date or datetime field (`dated`)
    relative dates ('now', '7 days ago') become the dates they mean, as in Oxy."""
    op, args = normalized(spec)
    if args.get("values") is None and isinstance(args.get("value"), list):
        args["values"] = args["value"]  # Oxy's docs write `op: in` with a list `value`
    if dated:
        try:
            args = {
                k: [resolve_date(v) for v in a] if isinstance(a, list) else resolve_date(a)
                for k, a in args.items()
            }
        except DateError as exc:
            raise CompileError(f"filter on '{spec.field}': {exc}") from None
    if op in _COMPARE:
        value = args.get("value")
        if value is None and op in ("eq", "neq"):
            return f"{column} IS {'NOT ' if op == 'neq' else ''}NULL"
        return f"{column} {_COMPARE[op]} {literal(value)}"
    if op == "contains":
        return f"{column} LIKE {literal('%' + str(args.get('value', '')) + '%')}"
    if op in ("in", "not_in"):
        values = args.get("values")
        if not isinstance(values, list) or not values:
            raise CompileError(f"filter on '{spec.field}': '{op}' needs 'values', a list")
        items = ", ".join(literal(v) for v in values)
        return f"{column} {'NOT ' if op == 'not_in' else ''}IN ({items})"
    if op in ("in_date_range", "not_in_date_range"):
        start, end = args.get("from"), args.get("to")
        if start is None or end is None:
            raise CompileError(f"filter on '{spec.field}': '{op}' needs 'from' and 'to'")
        inside = f"{column} >= {literal(start)} AND {column} <= {literal(end)}"
        return f"({inside})" if op == "in_date_range" else f"NOT ({inside})"
    raise CompileError(
        f"filter on '{spec.field}': unknown op '{op}' (known: eq, neq, gt, gte, lt, lte, "
        "contains, in, not_in, in_date_range, not_in_date_range)"
    )


def truncated(column: str, granularity: str, dialect: str) -> str:
    """`column` truncated to `granularity` in the database's dialect."""
    if dialect == "sqlite":
        fmt = _SQLITE_FORMATS.get(granularity)
        if fmt is None:
            raise CompileError(
                f"granularity '{granularity}' is not available on SQLite (use one of "
                f"{', '.join(_SQLITE_FORMATS)})"
            )
        return f"strftime({literal(fmt)}, {column})"
    if dialect == "mysql":
        if granularity == "quarter":
            start = f"MAKEDATE(YEAR({column}), 1)"
            return f"DATE_ADD({start}, INTERVAL (QUARTER({column}) - 1) QUARTER)"
        if granularity == "week":  # Sunday, as airlayer's DAYOFWEEK form
            return f"DATE(DATE_SUB({column}, INTERVAL DAYOFWEEK({column}) - 1 DAY))"
        if granularity == "day":
            return f"DATE({column})"
        return f"DATE_FORMAT({column}, {literal(_MYSQL_FORMATS[granularity])})"
    if dialect == "clickhouse":
        return f"{_CLICKHOUSE_TRUNC[granularity]}({column})"
    if dialect == "bigquery":
        return f"TIMESTAMP_TRUNC({column}, {granularity.upper()})"
    if dialect == "snowflake":
        return f"DATE_TRUNC({literal(granularity)}, {column})"
    return f"date_trunc({literal(granularity)}, {column})"


def same(left: str, right: str, dialect: str) -> str:
    """Null-safe equality."""
    if dialect == "sqlite":
        return f"{left} IS {right}"
    if dialect == "mysql":
        return f"{left} <=> {right}"
    if dialect == "clickhouse":
        return f"({left} = {right} OR ({left} IS NULL AND {right} IS NULL))"
    return f"{left} IS NOT DISTINCT FROM {right}"
