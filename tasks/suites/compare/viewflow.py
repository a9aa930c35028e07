"""`accord view`'s page of a workflow run: its task graph with each task's status, a timeline
of every stored task's start and end (bars that overlap ran at once: the scheduler's real
parallelism), and each task's output (tables, charts, text), a consistency run's samples,
pairwise verdicts and the one chosen.

Times come from the store: a result's `written` is when its task finished and `seconds` how
long it ran (engine/store.py). A chart a task wrote is shown only when it lies in the run's
own folder under `.accord/runs/`, embedded as a data URL in an `<img>` (an image cannot run
a script), up to `IMAGE_BYTES`."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

from .html import e, page
from .storequery import TaskRow, natural
from .storeview import RunRow
from .viewcases import NAV, pre, q

TIMELINE_TASKS = 400  # bars drawn; the table lists every task
OUTPUTS_SHOWN = 100
TABLE_ROWS = 50
IMAGE_BYTES = 2 * 1024 * 1024
COLOURS = {"succeeded": "#2da44e", "failed": "#cf222e", "skipped": "#8c959f",
           "cancelled": "#bf8700"}  # fmt: skip


def _clock(value: float | None) -> str:
    if value is None:
        return "unknown"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(value))


def origin(row: RunRow, tasks: list[TaskRow]) -> float | None:
    """The moment a run's times count from: its start, or its first task's when earlier
    (the run's row is written a moment after its tasks begin)."""
    starts = [t.started for t in tasks if t.started is not None]
    if row.started is not None:
        starts.append(row.started)
    return min(starts) if starts else None


def workflow_page(store: Path, row: RunRow, tasks: list[TaskRow], header: str) -> str:
    summary = row.summary or {}
    graph = summary.get("graph")
    parts = [header, _facts(row, tasks)]
    if isinstance(graph, dict) and graph:
        parts.append("<h2>Task graph</h2>" + dag(graph, tasks))
    parts.append("<h2>Timeline</h2>" + timeline(row, tasks))
    parts.append("<h2>Tasks</h2>" + _task_table(row, tasks))
    parts.append("<h2>Outputs</h2>" + _outputs(store, row, tasks))
    return page(f"Run {row.run_id}", "".join(parts), NAV)


def _facts(row: RunRow, tasks: list[TaskRow]) -> str:
    summary = row.summary or {}
    seconds = summary.get("seconds")
    usage = summary.get("usage") if isinstance(summary.get("usage"), dict) else None
    items = [
        f"workflow <b>{e(row.suite)}</b> ({e(row.path)})",
        f"status <b>{e(row.status)}</b>",
        f"started {e(_clock(row.started))}",
        f"{e(seconds if seconds is not None else '-')} s",
        f"{len(tasks)} stored task result(s)",
        f"at most {peak(tasks)} at once",
    ]
    if usage:
        items.append(
            f"model calls {e(usage.get('calls'))}, tokens {e(usage.get('input_tokens'))} in / "
            f"{e(usage.get('output_tokens'))} out, cost "
            f"{e('unknown' if usage.get('cost') is None else usage.get('cost'))}"
        )
    return f'<p id="facts">{" &middot; ".join(items)}</p>'


def peak(tasks: list[TaskRow]) -> int:
    """The most tasks that were running at one moment."""
    events = sorted(
        [(t.started, 1) for t in tasks if t.started is not None and t.finished is not None]
        + [(t.finished, -1) for t in tasks if t.started is not None and t.finished is not None]
    )  # an end sorts before a start at the same moment
    running = most = 0
    for _when, step in events:
        running += step
        most = max(most, running)
    return most


def _of(name: str, tasks: list[TaskRow]) -> list[TaskRow]:
    """A top-level task's stored rows: its own and those of the tasks inside it."""
    return [t for t in tasks if t.key == name or t.key.startswith((f"{name}.", f"{name}["))]


def _status(rows: list[TaskRow]) -> str:
    found = {t.status for t in rows}
    for status in ("failed", "cancelled", "skipped"):
        if status in found:
            return status
    return "succeeded" if found else "not stored"


def dag(graph: dict[str, Any], tasks: list[TaskRow]) -> str:
    """The top-level tasks in layers (a task one layer right of the last it waits for),
    edges from each dependency, each box coloured by its status with its start and end."""
    names = [n for n in graph if isinstance(n, str)]
    deps = {n: [d for d in graph[n] if d in graph] if isinstance(graph[n], list) else []
            for n in names}  # fmt: skip
    layer: dict[str, int] = {}

    def depth(name: str, seen: frozenset[str] = frozenset()) -> int:
        if name in layer:
            return layer[name]
        if name in seen:  # a cycle (a tampered store): drawn flat
            return 0
        found = max((depth(d, seen | {name}) + 1 for d in deps[name]), default=0)
        layer[name] = found
        return found

    for name in names:
        depth(name)
    columns: dict[int, list[str]] = {}
    for name in names:
        columns.setdefault(layer[name], []).append(name)
    box_w, box_h, gap_x, gap_y, pad = 170, 38, 60, 14, 10
    place = {}
    for col, members in columns.items():
        for row_no, name in enumerate(members):
            place[name] = (pad + col * (box_w + gap_x), pad + row_no * (box_h + gap_y))
    width = pad * 2 + (max(columns) + 1) * (box_w + gap_x) - gap_x
    height = pad * 2 + max(len(m) for m in columns.values()) * (box_h + gap_y) - gap_y
    lines = []
    for name in names:
        x2, y2 = place[name]
        for dep in deps[name]:
            x1, y1 = place[dep]
            lines.append(
                f'<line x1="{x1 + box_w}" y1="{y1 + box_h / 2}" x2="{x2}" y2="{y2 + box_h / 2}" '
                'stroke="#888" marker-end="url(#arrow)"/>'
            )
    boxes = []
    for name in names:
        x, y = place[name]
        rows = _of(name, tasks)
        status = _status(rows)
        starts = [t.started for t in rows if t.started is not None]
        ends = [t.finished for t in rows if t.finished is not None]
        span = f"{max(ends) - min(starts):.2f} s" if starts and ends else ""
        colour = COLOURS.get(status, "#d0d7de")
        label = name if len(name) <= 22 else name[:21] + "…"
        boxes.append(
            f'<g class="task {e(status)}"><title>{e(name)}: {e(status)} {e(span)}</title>'
            f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="5" fill="#fff" '
            f'stroke="{colour}" stroke-width="2"/>'
            f'<text x="{x + 8}" y="{y + 16}" font-size="12">{e(label)}</text>'
            f'<text x="{x + 8}" y="{y + 31}" font-size="10" fill="{colour}">{e(status)} '
            f"{e(span)}</text></g>"
        )
    return (
        f'<svg id="dag" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'role="img" aria-label="task graph"><defs><marker id="arrow" viewBox="0 0 10 10" '
        'refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#888"/></marker></defs>'
        f"{''.join(lines)}{''.join(boxes)}</svg>"
    )


def timeline(row: RunRow, tasks: list[TaskRow]) -> str:
    """A bar per stored task from its start to its end, in order of start; bars that overlap
    ran at the same time."""
    timed = sorted(
        (t for t in tasks if t.started is not None and t.finished is not None),
        key=lambda t: (t.started, natural(t.key)),
    )
    if not timed:
        return "<p>no task of this run has a stored start and end</p>"
    shown = timed[:TIMELINE_TASKS]
    zero = origin(row, tasks) or 0.0
    end = max(t.finished for t in shown if t.finished is not None)
    span = max(end - zero, 1e-6)
    label_w, plot_w, bar_h, pad = 230, 620, 14, 22
    height = pad + len(shown) * (bar_h + 4) + 24
    scale = plot_w / span
    bars = []
    for i, t in enumerate(shown):
        assert t.started is not None and t.finished is not None
        x = label_w + (t.started - zero) * scale
        w = max((t.finished - t.started) * scale, 1.5)
        y = pad + i * (bar_h + 4)
        label = t.key if len(t.key) <= 34 else t.key[:33] + "…"
        bars.append(
            f'<g class="bar {e(t.status)}"><title>{e(t.key)} ({e(t.type)}): {e(t.status)}, '
            f"{t.started - zero:.3f} s to {t.finished - zero:.3f} s</title>"
            f'<text x="{label_w - 6}" y="{y + 11}" font-size="11" text-anchor="end">'
            f"{e(label)}</text>"
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" '
            f'fill="{COLOURS.get(t.status, "#d0d7de")}"/></g>'
        )
    ticks = []
    for k in range(6):
        x = label_w + plot_w * k / 5
        ticks.append(
            f'<line x1="{x:.1f}" y1="{pad - 6}" x2="{x:.1f}" y2="{height - 20}" stroke="#eee"/>'
            f'<text x="{x:.1f}" y="{height - 6}" font-size="10" text-anchor="middle">'
            f"{span * k / 5:.2f} s</text>"
        )
    more = (
        f"<p>the first {TIMELINE_TASKS} of {len(timed)} tasks are drawn</p>"
        if len(timed) > TIMELINE_TASKS
        else ""
    )
    return (
        f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{label_w + plot_w + 20}" '
        f'height="{height}" role="img" aria-label="task timeline">{"".join(ticks)}'
        f"{''.join(bars)}</svg>{more}"
    )


def _task_table(row: RunRow, tasks: list[TaskRow]) -> str:
    zero = origin(row, tasks)

    def at(value: float | None) -> str:
        if value is None or zero is None:
            return "-"
        return f"{value - zero:.3f}"

    body = "".join(
        f'<tr class="{e(t.status)}"><td><a href="#out-{e(t.key)}">{e(t.key)}</a></td>'
        f'<td>{e(t.type)}</td><td class="{e(t.status)}">{e(t.status)}</td>'
        f"<td>{at(t.started)}</td><td>{at(t.finished)}</td>"
        f"<td>{'-' if t.attempts is None else t.attempts}</td>"
        f"<td><pre>{e((t.error or '')[:300])}</pre></td></tr>"
        for t in tasks
    )
    return (
        '<table id="tasks"><tr><th>task</th><th>type</th><th>status</th><th>start (s)</th>'
        f"<th>end (s)</th><th>attempts</th><th>error</th></tr>{body}</table>"
    )


def _outputs(store: Path, row: RunRow, tasks: list[TaskRow]) -> str:
    parts = []
    for t in tasks[:OUTPUTS_SHOWN]:
        if not t.has_output and t.error is None:
            continue
        parts.append(
            f'<h3 id="out-{e(t.key)}">{e(t.key)} <span class="muted">{e(t.type)}</span></h3>'
        )
        if t.error is not None:
            parts.append(f'<div class="failed">{pre(t.error)}</div>')
        if t.has_output:
            parts.append(output_html(store, row, t))
    if len(tasks) > OUTPUTS_SHOWN:
        parts.append(f"<p>the outputs of the first {OUTPUTS_SHOWN} tasks are shown</p>")
    return "".join(parts) or "<p>no stored output</p>"


def output_html(store: Path, row: RunRow, t: TaskRow) -> str:
    value = t.output
    if t.type == "consistency_select" and isinstance(value, dict):
        return consistency(value)
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        return table(value)
    if isinstance(value, str):
        image = _image(store, row, value)
        if image is not None:
            return image
    return pre(value)


def table(rows: list[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for r in rows[:TABLE_ROWS] for k in r))
    head = "".join(f"<th>{e(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{e(_cell(r.get(c)))}</td>" for c in columns) + "</tr>"
        for r in rows[:TABLE_ROWS]
    )
    more = f"<p>{len(rows)} rows, {TABLE_ROWS} shown</p>" if len(rows) > TABLE_ROWS else ""
    return f'<table class="output"><tr>{head}</tr>{body}</table>{more}'


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


VERDICTS = {"A": "consistent", "B": "disagree"}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def consistency(value: dict[str, Any]) -> str:
    """A consistency run: each sample with its score (the chosen one marked), each pair's
    verdict and reasoning, the runs that failed."""
    selected = value.get("selected")
    runs = _list(value.get("runs"))
    samples = "".join(
        f'<tr class="{"good" if r.get("index") == selected else ""}">'
        f"<td>{e(r.get('index'))}{' (chosen)' if r.get('index') == selected else ''}</td>"
        f"<td>{e(r.get('score'))}</td><td>{pre(r.get('output', ''))}</td></tr>"
        for r in runs
        if isinstance(r, dict)
    )
    pairs = "".join(
        f"<tr><td>{e(' & '.join(map(str, _list(p.get('runs')))))}</td>"
        f"<td>{e(VERDICTS.get(str(p.get('verdict')), p.get('verdict')))}"
        f"</td><td>{e(p.get('source'))}</td><td>{pre(p.get('reasoning', ''))}</td></tr>"
        for p in _list(value.get("pairs"))
        if isinstance(p, dict)
    )
    failures = "".join(
        f"<li>run {e(f.get('index'))}: {e(f.get('error'))}</li>"
        for f in _list(value.get("failed_runs"))
        if isinstance(f, dict)
    )  # fmt: skip
    return (
        f'<div class="consistency"><p>chosen: sample {e(selected)}, score {e(value.get("score"))}'
        f"; {e(value.get('judge_calls'))} judge call(s), {e(value.get('pairs_prejudged'))} "
        "pair(s) settled by the pre-judge</p>"
        '<table class="samples"><tr><th>sample</th><th>score</th><th>answer</th></tr>'
        f"{samples}</table>"
        '<table class="pairs"><tr><th>pair</th><th>verdict</th><th>by</th><th>reasoning</th></tr>'
        f"{pairs}</table>"
        + (f"<p>failed runs:</p><ul>{failures}</ul>" if failures else "")
        + "</div>"
    )


_IMAGES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg",
           ".jpeg": "image/jpeg", ".gif": "image/gif"}  # fmt: skip


def _image(store: Path, row: RunRow, value: str) -> str | None:
    """A chart the run wrote, inline; None for any other text (or a file elsewhere)."""
    suffix = Path(value).suffix.lower()
    if suffix not in _IMAGES or "\x00" in value or len(value) > 4096:
        return None
    root = store.parent.parent
    folder = (store.parent / "runs" / row.run_id).resolve()
    try:
        path = (root / value).resolve()
        if not path.is_relative_to(folder) or not path.is_file():
            return None
        if path.stat().st_size > IMAGE_BYTES:
            return None
        data = base64.b64encode(path.read_bytes()).decode("ascii")
    except OSError:
        return None
    return (
        f'<figure><img alt="{e(value)}" src="data:{_IMAGES[suffix]};base64,{data}" '
        f'style="max-width:100%"><figcaption>{e(value)}</figcaption></figure>'
    )


def workflow_href(run_id: str) -> str:
    return f"/run?id={q(run_id)}"
