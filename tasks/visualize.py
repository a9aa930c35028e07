"""`visualize`: draw a chart of a table with matplotlib and write it as SVG or PNG."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ..engine.errors import TaskError
from ..engine.kinds import register_task
from ..engine.plan import PlannedTask
from ..engine.render import TableView
from ..engine.spec import TaskSpec

if TYPE_CHECKING:
    from ..engine.context import TaskContext

_REF = re.compile(r"^\s*(?:\{\{\s*)?([A-Za-z_][A-Za-z0-9_]*)(?:\s*\}\})?\s*$")
_PLOT_LOCK = threading.Lock()  # pyplot's state is global


class VisualizeSpec(TaskSpec):
    """A chart file under the run's output folder; the output is its path."""

    type: Literal["visualize"]
    data: str = Field(description="The task whose table is drawn (`sales` or `{{ sales }}`).")
    chart: Literal["bar", "line", "scatter", "pie"] = "bar"
    x: str = Field(description="Column for the x axis (labels for a pie).")
    y: str | list[str] = Field(description="Column(s) for the y axis (values for a pie).")
    title: str | None = Field(None, description="Chart title (Jinja).")
    format: Literal["svg", "png"] = "svg"

    def data_ref(self) -> str | None:
        match = _REF.match(self.data)
        return match.group(1) if match else None

    def references(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        ref = self.data_ref()
        if ref is not None:
            yield ("data",), ref

    def templates(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        if self.data_ref() is None:
            yield ("data",), self.data
        if self.title:
            yield ("title",), self.title
        yield from super().templates()


def _numbers(values: list[Any], column: str, key: str) -> list[float]:
    out = []
    for value in values:
        try:
            out.append(float(value) if value is not None else float("nan"))
        except (TypeError, ValueError):
            raise TaskError(key, f"column '{column}' holds {value!r}, not a number") from None
    return out


def draw(
    table: TableView,
    spec: VisualizeSpec,
    title: str | None,
    target: Path,
    key: str,
    math: bool = True,
) -> None:
    """Draw the chart into `target`. `math`: a title between `$` is matplotlib's mathtext (a
    title a model wrote is drawn as it is written, `math=False`); mathtext nested too deep
    for its parser, like data matplotlib refuses, is a `TaskError`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ys = [spec.y] if isinstance(spec.y, str) else list(spec.y)
    for column in [spec.x, *ys]:
        if column not in table.columns:
            raise TaskError(
                key, f"no column '{column}' in the data (columns: {', '.join(table.columns)})"
            )
    labels = [str(v) for v in table.column(spec.x)]
    with _PLOT_LOCK:
        figure, axes = plt.subplots(figsize=(8, 4.5))
        try:
            if spec.chart == "pie":
                sizes = _numbers(table.column(ys[0]), ys[0], key)
                if any(size < 0 for size in sizes):
                    raise TaskError(
                        key,
                        f"a pie chart needs values of 0 or more; column '{ys[0]}' has "
                        f"{min(sizes):g} (use a bar chart for signed values)",
                    )
                axes.pie(sizes, labels=labels, autopct="%1.1f%%")
                axes.axis("equal")
            else:
                width = 0.8 / len(ys)
                for index, column in enumerate(ys):
                    values = _numbers(table.column(column), column, key)
                    if spec.chart == "bar":
                        positions = [i + index * width for i in range(len(labels))]
                        axes.bar(positions, values, width=width, label=column)
                    elif spec.chart == "line":
                        axes.plot(labels, values, marker="o", label=column)
                    else:
                        axes.scatter(labels, values, label=column)
                if spec.chart == "bar":
                    axes.set_xticks([i + (len(ys) - 1) * width / 2 for i in range(len(labels))])
                    axes.set_xticklabels(labels, rotation=30 if len(labels) > 6 else 0)
                axes.set_xlabel(spec.x)
                axes.set_ylabel(", ".join(ys))
                if len(ys) > 1:
                    axes.legend()
            if title:
                axes.set_title(title, parse_math=math)
            figure.tight_layout()
            target.parent.mkdir(parents=True, exist_ok=True)
            figure.savefig(str(target), format=spec.format)
            if spec.format == "svg":  # a Word export embeds pictures, not SVG: a PNG twin
                figure.savefig(str(target.with_suffix(".png")), format="png", dpi=150)
        except ValueError as exc:  # matplotlib refuses the data
            raise TaskError(key, f"cannot draw the {spec.chart} chart: {exc}") from None
        except RecursionError:  # mathtext (`$...$`) nested past what its parser follows
            raise TaskError(
                key, f"cannot draw the {spec.chart} chart: a text between '$' is nested too "
                "deep for matplotlib's math: write it flatter",
            ) from None  # fmt: skip
        finally:
            plt.close(figure)


@register_task("visualize", VisualizeSpec)
async def run_visualize(task: PlannedTask, ctx: TaskContext) -> str:
    import asyncio

    spec = task.spec
    assert isinstance(spec, VisualizeSpec)
    ref = spec.data_ref()
    table = ctx.scope.get(ref) if ref is not None else ctx.evaluate(spec.data)
    if not isinstance(table, TableView):
        raise TaskError(ctx.key, f"data '{spec.data}' is not a table (got {type(table).__name__})")
    title = ctx.render(spec.title) if spec.title else None
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", ctx.key)
    target = ctx.run.output_dir / "charts" / f"{safe}.{spec.format}"
    await asyncio.to_thread(draw, table, spec, title, target, ctx.key)
    ctx.run.written.append(target)
    try:
        return str(target.relative_to(ctx.root))
    except ValueError:
        return str(target)
