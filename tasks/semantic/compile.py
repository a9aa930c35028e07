"""A semantic query -> one SQL statement over the topic's views.

Each view becomes a derived table exposing its dimensions as `"view"."dim__<name>"`, so the
raw columns of different tables never clash; the view whose measures are aggregated also
exposes its raw columns (`*`), which measure expressions use as written. Measures of different
views are aggregated separately (each from its own view, joined many-to-one to the dimensions'
views, so no row is counted twice) and joined on the dimensions. Output columns are named
`view__field` (`view__field__granularity` for a truncated date).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from .dates import EXAMPLES, DateError, resolve_date
from .joins import Edge, JoinError, JoinGraph, build_graph, entity_owners
from .model import FilterSpec, MeasureSpec, ViewSpec
from .query import (
    CompileError,
    QuerySpec,
    condition,
    limit_offset,
    literal,
    quote,
    same,
    truncated,
)

REFERENCE = re.compile(r"\{\{\s*([A-Za-z_]\w*)(?:\s*\.\s*([A-Za-z_]\w*))?\s*\}\}")
_FILE_TABLE = re.compile(r"\.(csv|parquet|json|csv\.gz|tsv)$", re.IGNORECASE)
_AGGREGATES = {
    "sum": "SUM",
    "average": "AVG",
    "min": "MIN",
    "max": "MAX",
    "count": "COUNT",
}


_DATED = frozenset({"date", "datetime", "timestamp"})

# aggregates that a row repeated by a one-to-many join leaves unchanged
_REPEAT_SAFE = frozenset({"min", "max", "count_distinct"})


def _fan_out(group: _Group, edges: list[Edge], views: dict[str, ViewSpec]) -> list[str] | None:
    """The primary key of the measures' view when a join to the many side would repeat its
    rows under a sum, count, average or custom measure (None when no row is repeated, or no
    measure minds). Without a primary key, or with a measure naming another view's fields,
    the rows cannot be told apart: an error, never a wrong number."""
    fan = next((e for e in edges if not e.forward), None)
    counted = [name for name, spec, _sql, _shown in group.measures if spec.type not in _REPEAT_SAFE]
    if fan is None or not counted:
        return None
    primary = views[group.root].primary
    if primary is not None and not group.refs:
        return primary.key_names
    why = (
        f"it has no primary entity to tell its rows apart: give view '{group.root}' one"
        if primary is None
        else f"the measure uses fields of view(s) {', '.join(group.refs)}: query it without "
        f"the dimensions and filters of '{fan.target}'"
    )
    raise CompileError(
        f"measure '{group.root}.{counted[0]}' would count rows of view '{group.root}' more than "
        f"once: view '{fan.target}' has many rows for each one of '{fan.source}' (entity "
        f"'{fan.entity}'), and {why}"
    )


@dataclass
class _Group:
    """The measures of one view, aggregated from it."""

    root: str
    measures: list[tuple[str, MeasureSpec, str, bool]] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)  # views to join
    refs: list[str] = field(default_factory=list)  # other views the measures name


@dataclass
class Compiled:
    sql: str
    datasource: str | None
    columns: list[str]


class Compiler:
    """Compiles queries over one topic's views for one SQL dialect."""

    def __init__(
        self,
        views: dict[str, ViewSpec],
        *,
        dialect: str = "duckdb",
        base_view: str | None = None,
        variables: dict[str, Any] | None = None,
        default_filters: list[FilterSpec] | None = None,
    ) -> None:
        self.views = views
        self.dialect = dialect
        self.base_view = base_view
        self.variables = dict(variables or {})
        self.default_filters = list(default_filters or [])
        self.graph: JoinGraph
        self.graph, problems = build_graph(views)
        if problems:
            raise CompileError(problems[0])
        self.owners = entity_owners(views)
        self._need: dict[str, set[str]] = {}
        self._star: set[str] = set()
        self._refs: set[str] = set()
        self._filter_views: list[str] = []
        self._ranges: list[str] = []

    # --- names -------------------------------------------------------------------------------

    def split(self, ref: str, want: str | None = None) -> tuple[str, str, str]:
        """(view, field, 'dimension' | 'measure') of 'view.field'."""
        view_name, _, name = ref.partition(".")
        if not name:
            raise CompileError(f"'{ref}': name a field as 'view.field'")
        view = self.views.get(view_name)
        if view is None:
            raise CompileError(
                f"'{ref}': view '{view_name}' is not in the topic (views: {', '.join(self.views)})"
            )
        if view.dimension(name) is not None and want != "measure":
            return view_name, name, "dimension"
        if view.measure(name) is not None and want != "dimension":
            return view_name, name, "measure"
        known = [d.name for d in view.dimensions] if want != "measure" else []
        known += [m.name for m in view.measures] if want != "dimension" else []
        what = want or "field"
        raise CompileError(
            f"'{ref}': view '{view_name}' has no {what} '{name}' (its {what}s: "
            f"{', '.join(known) or 'none'})"
        )

    def _view_of(self, head: str) -> str:
        """A reference's view: a view name, or an entity name (its primary view)."""
        if head in self.views:
            return head
        if head in self.owners:
            return self.owners[head]
        raise CompileError(f"'{{{{{head}....}}}}' names no view or entity of the topic")

    # --- expressions -------------------------------------------------------------------------

    def dimension_sql(self, view: str, name: str, stack: tuple[str, ...] = ()) -> str:
        """A dimension's expression inside its view's derived table."""
        key = f"{view}.{name}"
        if key in stack:
            raise CompileError(f"dimensions reference each other in a cycle: {key}")
        dim = self.views[view].dimension(name)
        if dim is None:
            raise CompileError(f"view '{view}' has no dimension '{name}'")

        def replace(match: re.Match[str]) -> str:
            head, tail = match.group(1), match.group(2)
            if head == "variables" and tail:
                return self._variable(tail)
            if tail is not None and self._view_of(head) != view:
                raise CompileError(
                    f"dimension '{key}' references another view ({match.group(0)}): a "
                    "dimension's expr can use its own view's columns and dimensions only"
                )
            return "(" + self.dimension_sql(view, tail or head, (*stack, key)) + ")"

        return REFERENCE.sub(replace, dim.sql)

    def column(self, view: str, name: str) -> str:
        """A dimension as the outer query sees it (and the note that its table needs it)."""
        self._need.setdefault(view, set()).add(name)
        self._refs.add(view)
        return f"{self.q(view)}.{self.q('dim__' + name)}"

    def _variable(self, name: str) -> str:
        if name not in self.variables:
            raise CompileError(
                f"semantic variable '{name}' has no value: give it in the query's 'variables'"
            )
        return str(self.variables[name])

    def outer_expr(self, view: str, text: str, stack: tuple[str, ...]) -> str:
        """A measure's text with `{{field}}` / `{{view.field}}` references resolved."""

        def replace(match: re.Match[str]) -> str:
            head, tail = match.group(1), match.group(2)
            if head == "variables" and tail:
                return self._variable(tail)
            target, name = (view, head) if tail is None else (self._view_of(head), tail)
            spec = self.views[target]
            if spec.dimension(name) is not None:
                return self.column(target, name)
            measure = spec.measure(name)
            if measure is not None:
                self._refs.add(target)
                return "(" + self.measure_sql(target, measure, stack) + ")"
            raise CompileError(f"{match.group(0)}: view '{target}' has no field '{name}'")

        return REFERENCE.sub(replace, text)

    def measure_sql(self, view: str, measure: MeasureSpec, stack: tuple[str, ...] = ()) -> str:
        """A measure's aggregate expression in the outer query."""
        key = f"{view}.{measure.name}"
        if key in stack:
            raise CompileError(f"measures reference each other in a cycle: {key}")
        stack = (*stack, key)
        self._star.add(view)
        expr = None if measure.expr is None else self.outer_expr(view, measure.expr, stack)
        if measure.type in ("custom", "number"):
            return str(expr)
        where = " AND ".join(f"({self.outer_expr(view, f.expr, stack)})" for f in measure.filters)
        if measure.type == "count" and expr is None:
            return f"COUNT(CASE WHEN {where} THEN 1 END)" if where else "COUNT(*)"
        assert expr is not None
        if where:
            expr = f"CASE WHEN {where} THEN {expr} END"
            if measure.type == "sum":
                # as airlayer's measure_agg_expr: a filtered sum over no matching rows is 0,
                # so custom measures built on it do not turn NULL (only sum: 0 is no average)
                return f"COALESCE(SUM({expr}), 0)"
        if measure.type == "count_distinct":
            return f"COUNT(DISTINCT {expr})"
        if measure.type == "median":
            if self.dialect in ("postgres", "redshift"):
                return f"PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY {expr})"
            if self.dialect in ("sqlite", "mysql", "bigquery"):
                raise CompileError(
                    f"measure '{key}': median is not available on {self.dialect} (use a "
                    "custom measure with the database's own function)"
                )
            if self.dialect == "clickhouse":
                return f"median({expr})"
            return f"MEDIAN({expr})"
        return f"{_AGGREGATES[measure.type]}({expr})"

    def q(self, name: str) -> str:
        """An identifier in the dialect's quotes."""
        return quote(name, self.dialect)

    # --- the statement -----------------------------------------------------------------------

    def source(self, view: str, star: bool) -> str:
        """The derived table of one view: its dimensions under `dim__` names (and its raw
        columns when `star`: the view whose measures the query aggregates)."""
        spec = self.views[view]
        items = [
            f"{self.dimension_sql(view, name)} AS {self.q('dim__' + name)}"
            for name in sorted(self._need.get(view, ()))
        ]
        if star or not items:
            items.insert(0, "*")
        if spec.sql is not None:
            table = f"({REFERENCE.sub(lambda m: self._sub_variable(m), spec.sql)})"
        else:
            assert spec.table is not None
            name = REFERENCE.sub(lambda m: self._sub_variable(m), spec.table)
            table = literal(name) if self.dialect == "duckdb" and _FILE_TABLE.search(name) else name
        return f"(SELECT {', '.join(items)} FROM {table}) AS {self.q(view)}"

    def _sub_variable(self, match: re.Match[str]) -> str:
        if match.group(1) == "variables" and match.group(2):
            return self._variable(match.group(2))
        return match.group(0)

    def join(self, edge: Edge) -> str:
        on = " AND ".join(
            f"{self.column(edge.source, a)} = {self.column(edge.target, b)}"
            for a, b in zip(edge.source_keys, edge.target_keys, strict=True)
        )
        return f"LEFT JOIN {{{edge.target}}} ON {on}"

    def compile(self, query: QuerySpec) -> Compiled:
        """The SQL of `query`, the database its views live on, and its output columns."""
        if not query.measures and not query.dimensions and not query.time_dimensions:
            raise CompileError("the query selects nothing: give measures or dimensions")
        try:
            return self._compile(query)
        except JoinError as exc:
            raise CompileError(str(exc)) from None

    def _compile(self, query: QuerySpec) -> Compiled:
        self._ranges = []
        dims: list[tuple[str, str, str]] = []  # (alias, view, expression)
        for ref in query.dimensions:
            view, name, _ = self.split(ref, "dimension")
            dims.append((f"{view}__{name}", view, self.column(view, name)))
        for td in query.time_dimensions:
            view, name, _ = self.split(td.dimension, "dimension")
            dim = self.views[view].dimension(name)
            assert dim is not None
            if dim.type not in ("date", "datetime", "timestamp", "time"):
                raise CompileError(
                    f"time dimension '{td.dimension}' is of type {dim.type}, not a date"
                )
            column = self.column(view, name)
            alias = f"{view}__{name}"
            if td.date_range is not None:
                self._ranges.append(self._date_range(td.dimension, column, td.date_range))
                self._filter_views.append(view)
            if td.granularity:
                column = truncated(column, td.granularity, self.dialect)
                alias += f"__{td.granularity}"
            dims.append((alias, view, column))
        where, having = self._filters(query)
        measures = [self.split(ref, "measure")[:2] for ref in query.measures]
        groups = self._groups(measures, having, dims)
        statements = [self._group_sql(g, dims, where) for g in groups]
        columns = [a for a, _, _ in dims] + [f"{v}__{m}" for v, m in measures]
        datasource = self._datasource()
        tail = self._tail(query, columns)
        if len(groups) == 1 and not having:
            return Compiled(statements[0] + tail, datasource, columns)
        return Compiled(self._combine(groups, statements, dims, having) + tail, datasource, columns)

    def _date_range(self, ref: str, column: str, bounds: list[Any]) -> str:
        """A time dimension's `date_range: [from, to]` as airlayer's generate() filters it
        (from <= column <= to, both ends included), relative dates resolved."""
        try:
            start, end = (resolve_date(v) for v in bounds)
        except DateError as exc:
            raise CompileError(f"time dimension '{ref}': date_range: {exc}") from None
        for value in (start, end):
            if not isinstance(value, str | dt.date):
                raise CompileError(
                    f"time dimension '{ref}': date_range: {value!r} is not a date ({EXAMPLES})"
                )
        return f"({column} >= {literal(start)} AND {column} <= {literal(end)})"

    def _filters(self, query: QuerySpec) -> tuple[list[str], list[tuple[str, str, FilterSpec]]]:
        """Conditions on dimensions (every group's WHERE) and filters on measures (applied
        to the combined result, by alias)."""
        where: list[str] = list(self._ranges)
        having: list[tuple[str, str, FilterSpec]] = []
        for spec in [*self.default_filters, *query.filters]:
            view, name, kind = self.split(spec.field)
            if kind == "dimension":
                dim = self.views[view].dimension(name)
                dated = dim is not None and dim.type in _DATED
                where.append(condition(self.column(view, name), spec, dated))
                self._filter_views.append(view)
            else:
                having.append((view, name, spec))
        return where, having

    def _groups(
        self,
        measures: list[tuple[str, str]],
        having: list[tuple[str, str, FilterSpec]],
        dims: list[tuple[str, str, str]],
    ) -> list[_Group]:
        groups: dict[str, _Group] = {}
        hidden = [(view, name) for view, name, _ in having]
        for view, name in [*measures, *hidden]:
            group = groups.setdefault(view, _Group(view))
            if all(m[0] != name for m in group.measures):
                spec = self.views[view].measure(name)
                assert spec is not None
                self._refs = set()
                sql = self.measure_sql(view, spec)
                group.measures.append((name, spec, sql, (view, name) in measures))
                group.needed += sorted(self._refs)
                group.refs = sorted({*group.refs, *self._refs} - {view})
        dim_views = [v for _, v, _ in dims] + self._filter_views
        if not groups:
            root = self._root(list(dict.fromkeys(dim_views)))
            groups[root] = _Group(root)
        for group in groups.values():
            group.needed = list(dict.fromkeys([*group.needed, *dim_views]))
        return list(groups.values())

    def _root(self, needed: list[str]) -> str:
        """The view a query without measures joins from: one that reaches every other
        many-to-one (the topic's base_view first), else the first one."""
        order = [v for v in [self.base_view] if v in needed] + needed
        for view in order:
            if self.graph.reaches_all(view, set(needed)):
                return view
        return needed[0]

    def _group_sql(self, group: _Group, dims: list[tuple[str, str, str]], where: list[str]) -> str:
        edges = self.graph.tree(group.root, [v for v in group.needed if v != group.root])
        keys = _fan_out(group, edges, self.views)
        joins = [self.join(e) for e in edges]
        if keys is not None:
            return self._distinct_rows_sql(group, dims, where, edges, joins, keys)
        items = [f"{expr} AS {self.q(alias)}" for alias, _, expr in dims]
        items += [f"{sql} AS {self.q(f'{group.root}__{n}')}" for n, _, sql, _ in group.measures]
        star = bool(group.measures)
        sources = {
            v: self.source(v, star and v == group.root)
            for v in [group.root, *(e.target for e in edges)]
        }
        text = f"SELECT {', '.join(items)}\nFROM {sources[group.root]}"
        for edge, join in zip(edges, joins, strict=True):
            text += "\n" + join.replace("{" + edge.target + "}", sources[edge.target], 1)
        if where:
            text += "\nWHERE " + " AND ".join(where)
        if dims and group.measures:
            # as airlayer's assemble_sql: GROUP BY only with a measure; dimensions alone are
            # one row per joined row
            text += "\nGROUP BY " + ", ".join(expr for _, _, expr in dims)
        return text

    def _distinct_rows_sql(
        self,
        group: _Group,
        dims: list[tuple[str, str, str]],
        where: list[str],
        edges: list[Edge],
        joins: list[str],
        keys: list[str],
    ) -> str:
        """The measures of a view whose rows a one-to-many join repeats, aggregated on their
        own: the distinct (primary key, dimensions) pairs of the joined, filtered rows, joined
        back to the view's rows once each, then grouped by the dimensions. airlayer does the
        same with per-view aggregation in CTEs (generate_with_fanout_protection); this form
        keeps every dimension and filter of the query."""
        root = group.root
        key_items = [f"{self.column(root, k)} AS {self.q('key__' + k)}" for k in keys]
        items = key_items + [f"{expr} AS {self.q(alias)}" for alias, _, expr in dims]
        plain = {v: self.source(v, False) for v in [root, *(e.target for e in edges)]}
        pairs = f"SELECT DISTINCT {', '.join(items)}\nFROM {plain[root]}"
        for edge, join in zip(edges, joins, strict=True):
            pairs += "\n" + join.replace("{" + edge.target + "}", plain[edge.target], 1)
        if where:
            pairs += "\nWHERE " + " AND ".join(where)
        shown = [f"__rows.{self.q(alias)}" for alias, _, _ in dims]
        select = [f"{c} AS {self.q(alias)}" for c, (alias, _, _) in zip(shown, dims, strict=True)]
        select += [f"{sql} AS {self.q(f'{root}__{n}')}" for n, _, sql, _ in group.measures]
        on = " AND ".join(f"{self.column(root, k)} = __rows.{self.q('key__' + k)}" for k in keys)
        text = (
            f"SELECT {', '.join(select)}\nFROM (\n{pairs}\n) AS __rows\n"
            f"JOIN {self.source(root, True)} ON {on}"
        )
        if shown:
            text += "\nGROUP BY " + ", ".join(shown)
        return text

    def _combine(
        self,
        groups: list[_Group],
        statements: list[str],
        dims: list[tuple[str, str, str]],
        having: list[tuple[str, str, FilterSpec]],
    ) -> str:
        names = [f"g{i}" for i in range(len(groups))]
        ctes = [f"{n} AS (\n{s}\n)" for n, s in zip(names, statements, strict=True)]
        aliases = [self.q(a) for a, _, _ in dims]
        if aliases:
            keys = "\nUNION\n".join(f"SELECT {', '.join(aliases)} FROM {n}" for n in names)
            ctes.append(f"keys AS (\n{keys}\n)")
            body = "FROM keys" + "".join(
                f"\nLEFT JOIN {n} ON "
                + " AND ".join(same(f"keys.{a}", f"{n}.{a}", self.dialect) for a in aliases)
                for n in names
            )
            select = [f"keys.{a}" for a in aliases]
        else:
            body = "FROM " + " CROSS JOIN ".join(names)
            select = []
        for n, group in zip(names, groups, strict=True):
            select += [
                f"{n}.{self.q(f'{group.root}__{m}')}" for m, _, _, shown in group.measures if shown
            ]
        text = f"WITH {', '.join(ctes)}\nSELECT {', '.join(select)}\n{body}"
        conditions = []
        for view, name, spec in having:
            n = names[[g.root for g in groups].index(view)]
            conditions.append(condition(f"{n}.{self.q(f'{view}__{name}')}", spec))
        if conditions:
            text += "\nWHERE " + " AND ".join(conditions)
        return text

    def _tail(self, query: QuerySpec, columns: list[str]) -> str:
        orders = []
        for order in query.orders:
            alias = order.field.replace(".", "__", 1)
            matches = [c for c in columns if c == alias or c.startswith(alias + "__")]
            if not matches:
                raise CompileError(
                    f"orders: '{order.field}' is not selected by the query: add it to its "
                    "measures or dimensions"
                )
            orders.append(f"{self.q(matches[0])} {order.direction.upper()}")
        if not query.orders:
            # rows in a stable order: by the dimensions, in the order they were asked for
            orders = [self.q(c) for c in columns[: len(columns) - len(query.measures)]]
        text = "\nORDER BY " + ", ".join(orders) if orders else ""
        return text + limit_offset(query.limit, query.offset, self.dialect)

    def _datasource(self) -> str | None:
        sources = {self.views[v].datasource for v in [*self._need, *self._star, *self._refs]}
        if len(sources) > 1:
            shown = ", ".join(sorted(str(s) for s in sources))
            raise CompileError(
                f"the query's views live on different databases ({shown}): query views of "
                "one datasource at a time"
            )
        return next(iter(sources), None)
