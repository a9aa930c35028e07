"""The `display` task of an app: one self-contained HTML page of its display blocks, written
to `output/<app>.html` in the project and listed in the run's files.

Self-contained and inert: the style is inline, charts are inline SVG, every value from data
or the file is escaped, Markdown is rendered without raw HTML or images, and a
Content-Security-Policy forbids scripts and every outside resource.
"""

from __future__ import annotations

import asyncio
import threading
from html import escape
from typing import TYPE_CHECKING, Any

from ...engine.blocking import call_blocking
from ...engine.errors import TaskError
from ...engine.kinds import register_task
from ...engine.paths import written_by_accord
from ...engine.plan import PlannedTask
from ...engine.render import TableView
from .charts import STOP, axis_chart, number_text, pie_chart, series_of
from .spec import (
    AppChoicesSpec,
    AppPageSpec,
    BarChartBlock,
    ControlSpec,
    LineChartBlock,
    MarkdownBlock,
    PieChartBlock,
    RowBlock,
    TableBlock,
)

if TYPE_CHECKING:
    from ...engine.context import TaskContext

TABLE_ROWS = 1000  # rows of a table block shown on the page
FEW_CHOICES = 12  # a select's choices listed in full; more are folded
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STYLE = """
body { font-family: sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
header p { color: #555; white-space: pre-wrap; }
.controls { display: flex; flex-wrap: wrap; gap: 1rem; background: #f5f5f5; padding: .8rem; }
.controls dt { font-weight: bold; } .controls dd { margin: 0; }
.controls small { color: #666; }
.controls details { max-width: 60ch; } .controls summary { color: #666; cursor: pointer; }
.row { display: grid; gap: 1rem; }
section.block { margin: 1.2rem 0; overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
svg { width: 100%; height: auto; max-height: 420px; }
"""


class _Again:
    """No output is of this class: `--resume` runs the choices again, since what they do is
    set the run's `controls`, which a stored output would not."""


@register_task("app_choices", AppChoicesSpec, internal=True, outputs=(_Again,))
async def run_choices(task: PlannedTask, ctx: TaskContext) -> dict[str, Any]:
    """Each task-fed select's value: its default as the file writes it, or the one given
    (`-v`), which must be one of the task's first column, else its first option; written
    into the run's `controls`."""
    spec = task.spec
    assert isinstance(spec, AppChoicesSpec)
    scope: Any = ctx.scope
    while "controls" not in scope.values:
        scope = scope.parent
    chosen = dict(scope.values["controls"])
    for control in spec.controls:
        assert control.source is not None
        table = ctx.scope.get(control.source)
        if not isinstance(table, TableView) or not table.columns:
            raise TaskError(ctx.key, f"select '{control.name}': task '{control.source}' gave "
                            "no table to list its options")  # fmt: skip
        options = [row[0] for row in table.rows]
        if control.name in chosen:
            given = chosen[control.name]
            if control.default is not None and str(given) == str(control.default):
                continue  # the file's own default stands (Oxy's `All` beside a task's rows)
            match = next((o for o in options if o == given or str(o) == str(given)), _MISSING)
            if match is _MISSING:
                shown = ", ".join(map(str, options[:10])) + (", ..." if len(options) > 10 else "")
                raise TaskError(
                    ctx.key, f"controls.{control.name}={given!s} is not one of the options "
                    f"of task '{control.source}' ({shown or 'none'}): choose one of them",
                    permanent=True,
                )  # fmt: skip
            chosen[control.name] = match
        elif options:
            chosen[control.name] = options[0]  # what the select shows before a choice
        else:
            raise TaskError(ctx.key, f"select '{control.name}': task '{control.source}' lists "
                            "no options, and no value was given", permanent=True)  # fmt: skip
    scope.values["controls"] = chosen
    return chosen


_MISSING = object()


@register_task("app_page", AppPageSpec, internal=True, outputs=(str,))
async def run_page(task: PlannedTask, ctx: TaskContext) -> str:
    spec = task.spec
    assert isinstance(spec, AppPageSpec)
    tables: dict[str, TableView] = {}
    for name in spec.data:
        table = ctx.scope.get(name)
        if not isinstance(table, TableView):
            raise TaskError(ctx.key, f"task '{name}' gave no table to show (a query's result)")
        tables[name] = table
    controls = ctx.scope.get("controls") if spec.controls else {}
    # a daemon thread of its own (engine/blocking.py): Ctrl-C or SIGTERM during a long
    # drawing ends the run at once, where a `to_thread` worker was joined at exit
    # and stops at STOP's signal (charts.py), so that no thread keeps drawing for nothing
    stop = threading.Event()
    token = STOP.set(stop)
    try:
        page = await call_blocking(
            render_page, spec, tables, controls if isinstance(controls, dict) else {}, ctx.key
        )
    finally:
        stop.set()  # done, or the run is ending: a drawing still under way stops
        STOP.reset(token)
    target = written_by_accord(ctx.root, f"output/{spec.app}.html", "the app's page")
    target.parent.mkdir(parents=True, exist_ok=True)
    await asyncio.to_thread(target.write_text, page, encoding="utf-8")
    ctx.run.written.append(target)
    return target.relative_to(ctx.root).as_posix()


def render_page(
    spec: AppPageSpec, tables: dict[str, TableView], controls: dict[str, Any], key: str
) -> str:
    """The whole page as text."""
    title = spec.title or spec.app
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<header><h1>{escape(title)}</h1>",
    ]
    if spec.description.strip():
        parts.append(f"<p>{escape(spec.description.strip())}</p>")
    parts.append("</header>")
    if spec.controls:
        parts.append(_controls(spec.controls, controls, tables))
    parts += [_block(block, tables, key) for block in spec.display]
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p)


def _controls(
    specs: list[ControlSpec], values: dict[str, Any], tables: dict[str, TableView]
) -> str:
    items = []
    for control in specs:
        value = values.get(control.name)
        shown = ("on" if value else "off") if control.control_type == "toggle" else value
        choices = control.options or []
        if control.source is not None and control.source in tables:
            source = tables[control.source]
            choices = [row[0] for row in source.rows] if source.columns else []
        listed = escape(", ".join(map(str, choices)))
        hint = f" <small>(choices: {listed})</small>" if choices else ""
        if len(choices) > FEW_CHOICES:  # folded: a long list would push the page down
            hint = (f" <details><summary>{len(choices):,} choices</summary><small>{listed}"
                    "</small></details>")  # fmt: skip
        items.append(
            f'<div><dt>{escape(control.label or control.name)}</dt><dd data-control="'
            f'{escape(control.name)}">{escape(str(shown))}{hint}</dd></div>'
        )
    return (
        '<dl class="controls" aria-label="Controls (choose with -v controls.NAME=VALUE)">'
        + "".join(items)
        + "</dl>"
    )


# a chart's own width by the columns of its row: its text keeps its size on the page
CHART_WIDTHS = {1: 900, 2: 480}
NARROW = 360


def _block(block: Any, tables: dict[str, TableView], key: str, columns: int = 1) -> str:
    if isinstance(block, RowBlock):
        columns = block.columns or len(block.children)
        inner = "".join(_block(child, tables, key, columns) for child in block.children)
        return (
            f'<div class="row" style="grid-template-columns: repeat({columns}, 1fr)">{inner}</div>'
        )
    if isinstance(block, MarkdownBlock):
        return f'<section class="block markdown">{markdown_html(block.content)}</section>'
    if isinstance(block, TableBlock):
        return _section(block.title, _table(tables[block.data]), "table")
    if isinstance(block, PieChartBlock):
        title = block.title or block.data
        labels, groups = series_of(
            tables[block.data], block.name, block.value, None, key, f"pie chart '{title}'",
            ordered=False,
        )  # fmt: skip
        svg = pie_chart(labels, groups.get(block.value, [None] * len(labels)), title, key)
        return _section(block.title, svg, "chart")
    if isinstance(block, BarChartBlock):  # a line chart is one too
        title = block.title or block.data
        kind = "line" if isinstance(block, LineChartBlock) else "bar"
        labels, groups = series_of(
            tables[block.data], block.x, block.y, block.series, key, f"{kind} chart '{title}'"
        )
        x_label = getattr(block, "x_axis_label", None) or block.x
        y_label = getattr(block, "y_axis_label", None) or block.y
        width = CHART_WIDTHS.get(columns, NARROW)
        svg = axis_chart(kind, labels, groups, title, x_label, y_label, width)
        return _section(block.title, svg, "chart")
    return ""  # controls blocks are drawn at the top of the page


def _section(title: str | None, body: str, kind: str) -> str:
    heading = f"<h2>{escape(title)}</h2>" if title else ""
    return f'<section class="block {kind}">{heading}{body}</section>'


def _table(table: TableView) -> str:
    head = "".join(f"<th>{escape(str(c))}</th>" for c in table.columns)
    rows = []
    for row in table.rows[:TABLE_ROWS]:
        cells = []
        for value in row:
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            numeric = numeric or type(value).__name__ == "Decimal"
            css = ' class="number"' if numeric else ""
            cells.append(f"<td{css}>{escape(number_text(value))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    more = len(table.rows) - TABLE_ROWS
    note = f"<p>{more} more rows not shown.</p>" if more > 0 else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{note}"


def markdown_html(text: str) -> str:
    """CommonMark with tables, raw HTML shown as text and images left out (an image would
    load from elsewhere); markdown-it refuses javascript: and data: links."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    # parsed as images (so that `![alt](url)` is no "!" and a link), drawn as nothing
    md.add_render_rule("image", lambda *_args: "")
    return str(md.render(text))
