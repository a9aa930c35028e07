"""An app's bar, line and pie charts as inline SVG written by hand: text stays text (the page
can be searched and read aloud), every label is escaped, and nothing is loaded or run.
matplotlib's SVG (the `visualize` task's) draws text as paths and names its elements with
ids that would clash between several charts inlined in one page.
"""

from __future__ import annotations

import datetime as dt
import math
import threading
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from decimal import Decimal
from html import escape
from typing import Any, TypeVar

from ...engine.errors import TaskError
from ...engine.render import TableView

WIDTH, HEIGHT = 900, 360  # a chart the page's width (a pie's height)
PLOT_HEIGHT = 280
LEFT, RIGHT, TOP = 16, 16, 16
FONT = 12  # the charts' text, in the drawing's units
CHAR = 0.6 * FONT  # about how wide a character of it is
COS, SIN = math.cos(math.pi / 6), math.sin(math.pi / 6)  # labels turned by 30 degrees
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


def label_text(value: Any) -> str:
    """An x value or a slice's name as a label: a timestamp at midnight as its date (Oxy's
    month and day buckets come back as timestamps), other timestamps to the minute."""
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0) and value.tzinfo is None:
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="minutes")
    if isinstance(value, float | Decimal):
        return number_text(value)
    return "null" if value is None else str(value)


def _in_order(values: Iterable[Any]) -> list[Any]:
    """Distinct values sorted as SQL's ORDER BY sorts one column, nulls last."""
    present = [v for v in values if v is not None]
    try:
        ordered = sorted(present)
    except TypeError:  # mixed types in one column (a file's data): by their text
        ordered = sorted(present, key=str)
    return ordered + ([None] if len(present) != len(values) else [])  # type: ignore[arg-type]


def series_of(
    table: TableView, x: str, y: str, series: str | None, key: str, block: str,
    *, ordered: bool = True,
) -> tuple[list[str], dict[str, list[float | None]]]:  # fmt: skip
    """The x labels and, per series, the sum of y at each label, as Oxy's app front-end
    draws a chart (web-app chartQueries.ts): `SELECT DISTINCT x ... ORDER BY x` for the
    axis, `SUM(y) ... GROUP BY x` for its values (per series value, rows of a null series
    left out); a pie's slices `SUM(value) GROUP BY name` (`ordered=False`: in the order of
    the rows). A label whose rows hold no number has none (SQL's SUM of nulls)."""
    xs = list(stopping(_column(table, x, key, block)))
    ys = [_number(v, y, key) for v in stopping(_column(table, y, key, block))]
    groups: list[Any] = (
        list(stopping(_column(table, series, key, block))) if series else [y] * len(xs)
    )
    seen = dict.fromkeys(xs)
    keys = _in_order(list(seen)) if ordered else list(seen)
    position = {value: i for i, value in enumerate(keys)}
    names = [g for g in dict.fromkeys(groups) if g is not None]
    if len(keys) * len(names) > MAX_POINTS:  # each series holds a place for every label
        raise TaskError(
            key, f"{block}: {len(keys):,} x values times {len(names):,} series make "
            f"{len(keys) * len(names):,} points; a chart draws at most {MAX_POINTS:,}: group "
            "or limit the rows in the query",
        )  # fmt: skip
    out: dict[str, list[float | None]] = {}
    for value, number, group in stopping(zip(xs, ys, groups, strict=True)):
        if group is None:
            continue
        name = str(group)
        row = out.get(name)
        if row is None:  # made once per series (a setdefault default is made on every row)
            row = out[name] = [None] * len(keys)
        if number is not None:
            at = position[value]
            total = row[at]
            row[at] = number if total is None else total + number
    return [label_text(k) for k in keys], out


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


def _svg(body: list[str], title: str, legend: list[str], width: int, height: int) -> str:
    items = []
    x = LEFT
    for index, name in enumerate(legend if len(legend) > 1 else []):
        items.append(
            f'<rect x="{x}" y="{height - 14}" width="10" height="10" '
            f'fill="{COLOURS[index % len(COLOURS)]}"/>'
            f'<text x="{x + 14}" y="{height - 5}" font-size="{FONT}">{escape(name)}</text>'
        )
        x += 24 + round(CHAR * len(name))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}" font-family="sans-serif">' + "".join(body + items) + "</svg>"
    )


def _width_of(text: str) -> float:
    """About how wide a label is drawn, in the chart's units."""
    return CHAR * len(text)


def axis_chart(
    kind: str, labels: list[str], groups: dict[str, list[float | None]], title: str,
    x_label: str, y_label: str, width: int = WIDTH,
) -> str:  # fmt: skip
    """A bar or line chart of the groups' values over the labels. The margins are made to
    hold what they show: the left one the widest value on the axis and the axis' title
    beside it, the bottom one the labels (turned when they do not fit side by side) and the
    axis' title under them; `width` is the drawing's own (narrower in a row of charts, so
    that its text is not shrunk with it)."""
    values = [v for vs in groups.values() for v in vs if v is not None]
    low, high = min([0.0, *values]), max([0.0, *values])
    ticks = _ticks(low, high)
    low, high = min(ticks[0], low), max(ticks[-1], high)
    tick_texts = [number_text(round(tick, 10), ",") for tick in ticks]
    legend = len(groups) > 1
    every = max(1, math.ceil(len(labels) / max(2, (width - 120) // 48)))
    shown = [label for index, label in enumerate(labels) if not index % every]
    longest = max((_width_of(label) for label in shown), default=0.0)
    left = round(max(_width_of(t) for t in tick_texts) + 10 + (2 * FONT if y_label else 0)) + 4
    slot = (width - left - RIGHT) / max(len(labels), 1)
    turned = longest > slot * every - 6
    if turned:  # turned labels end under their point: the first must not pass the edge
        left = max(left, round(longest * COS - slot / 2) + 6)
        slot = (width - left - RIGHT) / max(len(labels), 1)
    under = round(longest * SIN + FONT + 4) if turned else FONT + 6
    plot_h = PLOT_HEIGHT
    height = TOP + plot_h + 6 + under + (FONT + 8 if x_label else 0) + (20 if legend else 0)
    plot_w = width - left - RIGHT

    def y_of(value: float) -> float:
        return TOP + plot_h * (high - value) / ((high - low) or 1)

    body = []
    for tick, text in zip(ticks, tick_texts, strict=True):
        y = y_of(tick)
        body.append(
            f'<line x1="{left}" x2="{width - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="{FONT}" text-anchor="end">'
            f"{escape(text)}</text>"
        )
    base = TOP + plot_h + 6 + FONT
    for index, label in enumerate(labels):
        if index % every:
            continue
        x = left + slot * (index + 0.5)
        turn = f' transform="rotate(-30 {x:.1f} {base})"' if turned else ""
        anchor = "end" if turned else "middle"
        body.append(
            f'<text x="{x:.1f}" y="{base}" font-size="{FONT}" text-anchor="{anchor}"{turn}>'
            f"{escape(label)}</text>"
        )
    bar = slot * 0.8 / max(len(groups), 1)
    for number, (name, series) in enumerate(groups.items()):
        colour = COLOURS[number % len(COLOURS)]
        points = []
        for index, value in enumerate(stopping(series)):
            if value is None:
                continue
            tip = f"<title>{escape(name)}, {escape(labels[index])}: {number_text(value)}</title>"
            if kind == "bar":
                x = left + slot * index + slot * 0.1 + bar * number
                top, bottom = sorted((y_of(value), y_of(0)))
                body.append(
                    f'<rect x="{x:.1f}" y="{top:.1f}" width="{bar:.1f}" '
                    f'height="{bottom - top:.1f}" fill="{colour}">{tip}</rect>'
                )
            else:
                x = left + slot * (index + 0.5)
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
    middle = left + plot_w / 2
    body.append(
        f'<line x1="{left}" x2="{width - RIGHT}" y1="{y_of(0):.1f}" y2="{y_of(0):.1f}" '
        'stroke="#333"/>'
        f'<text x="{FONT}" y="{TOP + plot_h / 2:.1f}" font-size="{FONT}" text-anchor="middle" '
        f'transform="rotate(-90 {FONT} {TOP + plot_h / 2:.1f})">{escape(y_label)}</text>'
        f'<text x="{middle:.1f}" y="{TOP + plot_h + 6 + under + FONT + 2}" font-size="{FONT}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    return _svg(body, title, list(groups), width, height)


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
    return _svg(body, title, [], WIDTH, HEIGHT)
