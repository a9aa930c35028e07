"""The `semantic_query` agent tool: the model picks a topic's measures and dimensions (listed
in the tool's schema), the query is checked against the topic and run; a wrong choice comes
back to the model as an error it can correct."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pydantic

from ...engine.databases import QueryError
from ...engine.render import markdown_table
from ..semantic.model import load_layer
from ..semantic.query import CompileError, QuerySpec
from ..semantic.task import compile_query

if TYPE_CHECKING:
    from ...engine.context import TaskContext
    from ...engine.spec import OxyToolSpec
    from .tools import Toolbox

ROWS = 50  # rows of a result shown to the model
_OPS = ["eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "not_in"]


def semantic_tool(
    spec: OxyToolSpec, ctx: TaskContext, toolbox: Toolbox
) -> tuple[str, str, dict[str, Any], Callable[[dict[str, Any]], Awaitable[str]]]:
    """(name, description, JSON schema, runner) of one semantic_query tool of an agent."""
    extra = spec.model_extra or {}
    topic_name = str(extra.get("topic", ""))
    variables = dict(extra.get("variables") or {})
    layer = load_layer(ctx.root)
    topic = layer.topic(topic_name)
    measures: list[str] = []
    dimensions: list[str] = []
    lines: list[str] = []
    for view_name in topic.spec.views:
        view = layer.views.get(view_name)
        if view is None:
            continue
        for m in view.spec.measures:
            measures.append(f"{view_name}.{m.name}")
            lines.append(f"- measure {view_name}.{m.name}: {m.description or m.type}")
        for d in view.spec.dimensions:
            dimensions.append(f"{view_name}.{d.name}")
            lines.append(f"- dimension {view_name}.{d.name} ({d.type}): {d.description or ''}")
    fields = measures + dimensions
    params: dict[str, Any] = {
        "type": "object",
        "properties": {
            "measures": {"type": "array", "items": {"type": "string", "enum": measures}},
            "dimensions": {"type": "array", "items": {"type": "string", "enum": dimensions}},
            "filters": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "field": {"type": "string", "enum": fields},
                        "op": {"type": "string", "enum": _OPS},
                        "value": {},
                        "values": {"type": "array"},
                    },
                    "required": ["field", "op"],
                },
            },
            "orders": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "field": {"type": "string", "enum": fields},
                        "direction": {"type": "string", "enum": ["asc", "desc"]},
                    },
                    "required": ["field"],
                },
            },
            "limit": {"type": "integer", "minimum": 0},
        },
    }
    about = topic.spec.description or f"the {topic_name} topic"
    description = extra.get("description") or (
        f"Query {about} by choosing measures and dimensions (no SQL). Fields:\n" + "\n".join(lines)
    )

    async def run(args: dict[str, Any]) -> str:
        try:
            query = QuerySpec.model_validate(args)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            return f"error: {where}: {first['msg']}"
        try:
            compiled = compile_query(
                ctx.root, topic_name, query, variables, lambda n: ctx.database(n).dialect
            )
        except CompileError as exc:
            return f"error: {exc}"
        try:
            result = await ctx.database(compiled.datasource).query(compiled.sql)
        except QueryError as exc:
            return f"error: {exc.message}"
        toolbox.last_sql, toolbox.last_table = compiled.sql, result
        shown = markdown_table(result.columns, result.rows[:ROWS])
        more = len(result.rows) - ROWS
        return shown + (f"\n({more} more rows not shown)" if more > 0 else "")

    return spec.name or "semantic_query", str(description), params, run
