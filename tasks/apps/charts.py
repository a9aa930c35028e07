"""An app's bar, line and pie charts as inline SVG written by hand: text stays text (the page
can be searched and read aloud), every label is escaped, and nothing is loaded or run.
matplotlib's SVG (the `visualize` task's) draws text as paths and names its elements with
ids that would clash between several charts inlined in one page.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from decimal import Decimal
from html import escape
from typing import Any, TypeVar

from ...engine.errors import TaskError
from ...engine.render import TableView

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 72, 16, 16, 64
T = TypeVar("T")
# set by the page's node when its run ends (Ctrl-C, SIGTERM, a failure elsewhere): a drawing
# under way in its thread stops at its next few thousand rows instead of running on
STOP: ContextVar[threading.Event | None] = ContextVar("accord_drawing_stop", default=None)
_EVERY = 4096  # rows between two looks at STOP
MAX_POINTS = 10_000_000  # x values times series in one chart
MAX_VALUE = 1e300  # the largest size a chart draws (its axis' sums stay finite)
MIN_SPAN = 1e-300  # values closer than this are one value on an axis


class Stopped(Exception):
    """The drawing was asked to stop: its run is ending."""


def stopping(rows: Iterable[T]) -> Iterator[T]:
    """`rows`, ending with `Stopped` once `STOP` is set."""
    event = STOP.get()
    if event is None:
        yield from rows
        return
    for index, row in enumerate(rows):
        if not index % _EVERY and event.is_set():
            raise Stopped
        yield row


COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7")


def number_text(value: Any, separator: str = "") -> str:
    """A number as Oxy's apps show it: integers whole, others with two decimals."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:{separator}.0f}" if value.is_integer() else f"{value:{separator}.2f}"
    if isinstance(value, int):
        return f"{value:{separator}d}"
    return str(value)


def _number(value: Any, column: str, key: str) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TaskError(key, f"column '{column}' holds {value!r}, not a number") from None
    if not math.isfinite(number):
        return None
    if abs(number) > MAX_VALUE:  # the axis' arithmetic would pass the largest float
        raise TaskError(
            key, f"column '{column}' holds {number:g}, beyond what a chart draws (-{MAX_VALUE:g} "
            f"to {MAX_VALUE:g}): scale it in the query",
        )  # fmt: skip
    return number


def _column(table: TableView, name: str, key: str, block: str) -> list[Any]:
    if name not in table.columns:
        raise TaskError(key, f"{block}: no column '{name}' (columns: {', '.join(table.columns)})")
    return table.column(name)


def series_of(
    table: TableView, x: str, y: str, series: str | None, key: str, block: str
) -> tuple[list[str], dict[str, list[float | None]]]:
    """The x labels in first-seen order and, per series, the y value at each label."""
    xs = [str(v) for v in stopping(_column(table, x, key, block))]
    ys = [_number(v, y, key) for v in stopping(_column(table, y, key, block))]
    groups = (
        [str(v) for v in stopping(_column(table, series, key, block))] if series else [y] * len(xs)
    )
    labels = list(dict.fromkeys(xs))
    position = {label: i for i, label in enumerate(labels)}
    count = len(set(groups))
    if len(labels) * count > MAX_POINTS:  # each series holds a place for every label
        raise TaskError(
            key, f"{block}: {len(labels):,} x values times {count:,} series make "
            f"{len(labels) * count:,} points; a chart draws at most {MAX_POINTS:,}: group or "
            "limit the rows in the query",
        )  # fmt: skip
    out: dict[str, list[float | None]] = {}
    for label, value, group in stopping(zip(xs, ys, groups, strict=True)):
        row = out.get(group)
        if row is None:  # made once per series (a setdefault default is made on every row)
            row = out[group] = [None] * len(labels)
        row[position[label]] = value
    return labels, out


def _ticks(low: float, high: float) -> list[float]:
    if not (high - low) / 5 > MIN_SPAN:  # equal, or too close to tell apart on an axis
        high = low + 1
    step = 10 ** math.floor(math.log10((high - low) / 5))
    for factor in (1, 2, 5, 10):
        if (high - low) / (step * factor) <= 6:
            step *= factor
            break
    first = math.floor(low / step) * step
    return [first + i * step for i in range(math.ceil((high - first) / step) + 1)]


def _svg(body: list[str], title: str, legend: list[str]) -> str:
    items = []
    for index, name in enumerate(legend if len(legend) > 1 else []):
        x = LEFT + index * 140
        items.append(
            f'<rect x="{x}" y="{HEIGHT - 14}" width="10" height="10" '
            f'fill="{COLOURS[index % len(COLOURS)]}"/>'
            f'<text x="{x + 14}" y="{HEIGHT - 5}" font-size="11">{escape(name)}</text>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" font-family="sans-serif">' + "".join(body + items) + "</svg>"
    )


def axis_chart(
    kind: str, labels: list[str], groups: dict[str, list[float | None]], title: str,
    x_label: str, y_label: str,
) -> str:  # fmt: skip
    """A bar or line chart of the groups' values over the labels."""
    values = [v for vs in groups.values() for v in vs if v is not None]
    low, high = min([0.0, *values]), max([0.0, *values])
    ticks = _ticks(low, high)
    low, high = min(ticks[0], low), max(ticks[-1], high)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def y_of(value: float) -> float:
        return TOP + plot_h * (high - value) / ((high - low) or 1)

    body = []
    for tick in ticks:
        y = y_of(tick)
        body.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
            f"{escape(number_text(round(tick, 10), ','))}</text>"
        )
    slot = plot_w / max(len(labels), 1)
    every = max(1, math.ceil(len(labels) / 12))  # at most 12 labels under the axis
    for index, label in enumerate(labels):
        if index % every:
            continue
        x = LEFT + slot * (index + 0.5)
        body.append(
            f'<text x="{x:.1f}" y="{TOP + plot_h + 16}" font-size="11" text-anchor="end" '
            f'transform="rotate(-30 {x:.1f} {TOP + plot_h + 16})">{escape(label)}</text>'
        )
    width = slot * 0.8 / max(len(groups), 1)
    for number, (name, series) in enumerate(groups.items()):
        colour = COLOURS[number % len(COLOURS)]
        points = []
        for index, value in enumerate(stopping(series)):
            if value is None:
                continue
            tip = f"<title>{escape(name)}, {escape(labels[index])}: {number_text(value)}</title>"
            if kind == "bar":
                x = LEFT + slot * index + slot * 0.1 + width * number
                top, bottom = sorted((y_of(value), y_of(0)))
                body.append(
                    f'<rect x="{x:.1f}" y="{top:.1f}" width="{width:.1f}" '
                    f'height="{bottom - top:.1f}" fill="{colour}">{tip}</rect>'
                )
            else:
                x = LEFT + slot * (index + 0.5)
                points.append(f"{x:.1f},{y_of(value):.1f}")
                body.append(
                    f'<circle cx="{x:.1f}" cy="{y_of(value):.1f}" r="3" fill="{colour}">'
                    f"{tip}</circle>"
                )
        if points:
            body.insert(
                0,
                f'<polyline points="{" ".join(points)}" fill="none" stroke="{colour}" '
                'stroke-width="2"/>',
            )
    body.append(
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y_of(0):.1f}" y2="{y_of(0):.1f}" '
        'stroke="#333"/>'
        f'<text x="14" y="{TOP + plot_h / 2:.1f}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 14 {TOP + plot_h / 2:.1f})">{escape(y_label)}</text>'
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 20}" font-size="11" text-anchor="end">'
        f"{escape(x_label)}</text>"
    )
    return _svg(body, title, list(groups))


def pie_chart(labels: list[str], values: list[float | None], title: str, key: str) -> str:
    """Slices in the order of the rows, each with its label and share."""
    sizes = [v or 0.0 for v in values]
    if any(size < 0 for size in sizes):
        raise TaskError(key, f"pie chart '{title}': sizes must be 0 or more (use a bar chart)")
    total = sum(sizes) or 1.0
    cx, cy, r = 180.0, HEIGHT / 2 - 10, 130.0
    body = []
    angle = -math.pi / 2
    for index, (label, size) in enumerate(stopping(zip(labels, sizes, strict=True))):
        colour = COLOURS[index % len(COLOURS)]
        share = size / total
        tip = f"<title>{escape(label)}: {number_text(size)} ({share:.1%})</title>"
        if share >= 0.9999:
            body.append(f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="{colour}">{tip}</circle>')
        elif share > 0:
            end = angle + share * 2 * math.pi
            x1, y1 = cx + r * math.cos(angle), cy + r * math.sin(angle)
            x2, y2 = cx + r * math.cos(end), cy + r * math.sin(end)
            large = 1 if share > 0.5 else 0
            body.append(
                f'<path d="M{cx},{cy} L{x1:.1f},{y1:.1f} A{r},{r} 0 {large} 1 {x2:.1f},{y2:.1f} '
                f'Z" fill="{colour}" stroke="#fff">{tip}</path>'
            )
            angle = end
        y = 30 + index * 20
        body.append(
            f'<rect x="340" y="{y - 10}" width="12" height="12" fill="{colour}"/>'
            f'<text x="358" y="{y}" font-size="12">{escape(label)}: {number_text(size)} '
            f"({share:.1%})</text>"
        )
    return _svg(body, title, [])
