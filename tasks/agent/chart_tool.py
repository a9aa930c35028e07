"""Oxy's `visualize` agent tool: the model draws a chart of the table its last query returned
(an `execute_sql` or `semantic_query` tool call), drawn like the `visualize` task's charts
and listed in the run's files. Oxy's model writes the chart's data out in full (an ECharts
config); here it names the columns, so the chart shows the rows the query returned.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pydantic

from ...engine.errors import TaskError
from ..visualize import VisualizeSpec, draw

if TYPE_CHECKING:
    from ...engine.context import TaskContext
    from ...engine.spec import OxyToolSpec
    from .tools import Toolbox

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "chart": {"type": "string", "enum": ["bar", "line", "scatter", "pie"]},
        "x": {"type": "string", "description": "Column for the x axis (labels of a pie)."},
        "y": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
            "description": "Column(s) for the y axis (the values of a pie).",
        },
        "title": {"type": "string"},
    },
    "required": ["x", "y"],
}


def visualize_tool(
    spec: OxyToolSpec, ctx: TaskContext, toolbox: Toolbox
) -> tuple[str, str, dict[str, Any], Callable[[dict[str, Any]], Awaitable[str]]]:
    """(name, description, JSON schema, runner) of one visualize tool of an agent."""
    name = spec.name or "visualize"
    extra = spec.model_extra or {}
    description = str(
        extra.get("description")
        or "Draw a chart (bar, line, scatter or pie) of the table your last query returned: "
        "name its columns for x and y."
    )
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{ctx.key}.{name}")
    numbers = itertools.count(1)

    async def run(args: dict[str, Any]) -> str:
        table = toolbox.last_table
        if table is None:
            return "error: no table to draw yet: run a query first, then chart its result"
        fields = {k: args[k] for k in ("chart", "x", "y", "title") if args.get(k) is not None}
        try:
            chart = VisualizeSpec.model_validate(
                {"name": name, "type": "visualize", "data": "last_query", **fields}
            )
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            return f"error: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
        # one file per call: several charts of one answer (and of each sample) all stay
        target = ctx.run.output_dir / "charts" / f"{safe}.{toolbox.sample}.{next(numbers)}.svg"
        try:
            # the model's title is drawn as written: no mathtext parsed from a model's text
            await asyncio.to_thread(draw, table, chart, chart.title, target, ctx.key, False)
        except TaskError as exc:
            return f"error: {exc.message}"
        ctx.run.written.append(target)
        try:
            shown = target.relative_to(ctx.root)
        except ValueError:
            shown = target
        return f"chart written to {shown} ({chart.chart} of {', '.join(table.columns)})"

    return name, description, PARAMETERS, run
