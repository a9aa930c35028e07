"""`accord view`: a local, read-only web page over the run store.

Built on the standard library's `http.server`: the pages are a handful of server-rendered
HTML views for one local user, with no script, so a web framework would add a dependency
(and its own server) for routing four URLs. It binds 127.0.0.1 only, answers GET only, opens
the store read-only (storeview), loads nothing from outside the page, and escapes every
stored value: outputs are whatever a model or a command produced, hostile markup included.
Filters are plain GET forms, so every view is a URL (and works without JavaScript).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ....engine.errors import AccordError
from .comparison import compare_runs
from .html import e, page
from .intake import STATUSES, Intake
from .storequery import Index, pass_rate, run_index, task_rows
from .storeview import RunRow, find_row, list_rows, load_run, stored_results
from .viewcases import (
    NAV,
    case_page,
    eval_run_page,
    percent,
    problems_note,
    q,
    select,
    test_cases,
    test_run_page,
)
from .viewcompare import compare_page
from .viewflow import workflow_page

RUNS_LISTED = 1000  # runs the index reads (newest first); filters pick among them
RUNS_SHOWN = 100
CHART_RUNS = 30
SPARK_RUNS = 20
INDEXES_KEPT = 8  # runs whose case index the server keeps (a finished run never changes)
KINDS = ("eval", "test", "workflow")


@dataclass
class Figures:
    """A run's kind and, for a suite's run, its samples by status (a sample: one repeat of
    one case) and cases; a workflow run's tasks by status."""

    kind: str
    counts: dict[str, int]
    cases: int = 0

    @property
    def pass_rate(self) -> float | None:
        return pass_rate(self.counts) if self.kind != "workflow" else None


class Site:
    """The pages, over one store."""

    def __init__(self, store: Path, alpha: float) -> None:
        self.store = store
        self.alpha = alpha
        self.port = 0  # set once the server listens
        self._indexes: OrderedDict[str, Index] = OrderedDict()
        self._figures: dict[str, Figures] = {}
        self._lock = threading.Lock()

    def route(self, path: str, query: dict[str, str]) -> tuple[int, str]:
        handlers = {
            "/": self.index,
            "/run": self.run,
            "/case": self.case,
            "/compare": self.compare,
            "/suite": self.suite,
        }
        handler = handlers.get(path)
        if handler is None:
            return HTTPStatus.NOT_FOUND, page("Not found", f"<p>no page {e(path)}</p>", NAV)
        try:
            return HTTPStatus.OK, handler(query)
        except AccordError as exc:
            return HTTPStatus.NOT_FOUND, page("Not found", f"<p>{e(exc.text)}</p>", NAV)
        except Exception as exc:  # a bug: the page says so, the server goes on (no traceback)
            sys.stderr.write(f"accord view: internal error on {path}: {type(exc).__name__}\n")
            text = f"<p>internal error: {e(type(exc).__name__)}; this is a bug in accord</p>"
            return HTTPStatus.INTERNAL_SERVER_ERROR, page("Error", text, NAV)

    def _row(self, query: dict[str, str], name: str = "id") -> RunRow:
        return find_row(self.store, query.get(name, "") or "last")

    # --- what the pages share, read once per finished run ------------------------------------

    def run_index(self, row: RunRow) -> Index:
        with self._lock:
            found = self._indexes.get(row.run_id)
            if found is not None:
                self._indexes.move_to_end(row.run_id)
                return found
        index = run_index(self.store, row.run_id)
        if row.status != "running":
            with self._lock:
                self._indexes[row.run_id] = index
                while len(self._indexes) > INDEXES_KEPT:
                    self._indexes.popitem(last=False)
        return index

    def figures(self, row: RunRow) -> Figures:
        found = self._figures.get(row.run_id)
        if found is not None:
            return found
        index = self.run_index(row)
        if index.kind == "eval":
            figures = Figures("eval", index.counts(), index.cases)
        elif index.kind == "test":
            cases = test_cases(stored_results(self.store, row.run_id), Intake(row.run_id))
            counts = dict.fromkeys(STATUSES, 0)
            for case in cases:
                counts[case.status] += 1
            figures = Figures("test", counts, len({c.id for c in cases}))
        else:
            tasks = (row.summary or {}).get("tasks")
            figures = Figures("workflow", dict(tasks) if isinstance(tasks, dict) else {})
        if row.status != "running":
            self._figures[row.run_id] = figures
        return figures

    # --- pages -------------------------------------------------------------------------------

    def index(self, query: dict[str, str]) -> str:
        every = list_rows(self.store, RUNS_LISTED)
        suite, file = query.get("suite", ""), query.get("file", "")
        status, kind = query.get("status", ""), query.get("kind", "")
        picked = [
            r for r in every
            if (not suite or r.suite == suite) and (not file or r.path == file)
            and (not status or r.status == status)
            and (not kind or self.figures(r).kind == kind)
        ][:RUNS_SHOWN]  # fmt: skip
        form = (
            '<form action="/" method="get" id="runfilters">'
            + select("suite", "suite or workflow", sorted({r.suite for r in every}), suite)
            + select("file", "file", sorted({r.path for r in every}), file)
            + select("status", "status", sorted({r.status for r in every}), status)
            + select("kind", "kind", list(KINDS), kind)
            + '<button type="submit">filter</button></form>'
        )
        body = [form, compare_form(every, "", "")]
        body.append(self._suites(picked))
        rows = "".join(self._run_row(r) for r in picked)
        body.append(
            '<h2>Runs</h2><table id="runs"><tr><th>started</th><th>run</th><th>kind</th>'
            "<th>suite or workflow</th><th>file</th><th>status</th><th>seconds</th>"
            '<th>cases</th><th title="a sample: one repeat of one case">samples</th>'
            "<th>passed</th><th>failed</th><th>errors</th>"
            f"<th>pass rate (of judged samples)</th></tr>{rows}</table>"
        )
        if not every:
            body.append("<p>no runs recorded yet</p>")
        elif not picked:
            body.append("<p>no run matches these filters</p>")
        note = (
            '<p class="muted">passed, failed and errors count samples (a sample is one repeat '
            "of one case; a case run 3 times is 3 samples), and the pass rate is passed "
            "samples over judged ones: one unit throughout. A workflow run counts its tasks."
            "</p>"
        )
        return page(f"Runs in {self.store}", "".join(body) + note, NAV)

    def _run_row(self, row: RunRow) -> str:
        f = self.figures(row)
        started = (
            '<span class="bad" title="not a time in the store">unknown</span>'
            if row.started is None
            else e(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.started)))
        )
        seconds = (row.summary or {}).get("seconds")
        marked = ' class="run bad"' if row.started is None else ' class="run"'
        if f.kind == "workflow":
            done = f.counts.get("succeeded", 0)
            failed = f.counts.get("failed", 0)
            figures = (
                f"<td>-</td><td>{sum(f.counts.values())} task(s)</td><td>{done}</td>"
                f"<td>{failed}</td><td>-</td><td>-</td>"
            )
        else:
            figures = (
                f"<td>{f.cases}</td><td>{sum(f.counts.values())}</td><td>{f.counts['passed']}"
                f"</td><td>{f.counts['failed']}</td><td>{f.counts['error']}</td>"
                f"<td>{percent(f.pass_rate)}</td>"
            )
        return (
            f"<tr{marked}><td>{started}</td>"
            f'<td><a href="/run?id={q(row.run_id)}">{e(row.run_id)}</a></td><td>{e(f.kind)}</td>'
            f'<td><a href="/suite?name={q(row.suite)}">{e(row.suite)}</a></td>'
            f'<td title="{e(row.path)}">{e(Path(row.path).name)}</td>'
            f'<td class="{e(row.status)}">{e(row.status)}</td>'
            f"<td>{'-' if not isinstance(seconds, int | float) else f'{seconds:.2f}'}</td>"
            f"{figures}</tr>"
        )

    def _suites(self, rows: list[RunRow]) -> str:
        names = list(dict.fromkeys(r.suite for r in rows if self.figures(r).kind != "workflow"))
        if not names:
            return ""
        body = []
        for name in names:
            runs = list(reversed([r for r in rows if r.suite == name][:SPARK_RUNS]))
            points = [(r, self.figures(r).pass_rate) for r in runs]
            last = points[-1][1] if points else None
            body.append(
                f'<tr><td><a href="/suite?name={q(name)}">{e(name)}</a></td>'
                f"<td>{sparkline(points)}</td><td>{percent(last)}</td><td>{len(runs)}</td></tr>"
            )
        return (
            '<h2>Suites</h2><table id="suites"><tr><th>suite</th><th>pass rate over its last '
            "runs (oldest left)</th><th>last run</th><th>runs</th></tr>"
            f"{''.join(body)}</table>"
        )

    def run(self, query: dict[str, str]) -> str:
        row = self._row(query)
        header = self._header(row)
        kind = self.figures(row).kind
        if kind == "eval":
            return eval_run_page(self.store, row, self.run_index(row), query, header)
        if kind == "test":
            return test_run_page(self.store, row, query, header)
        return workflow_page(self.store, row, task_rows(self.store, row), header)

    def _header(self, row: RunRow) -> str:
        earlier = [r for r in list_rows(self.store, RUNS_LISTED, suite=row.suite)
                   if r.started is not None and row.started is not None
                   and r.started < row.started]  # fmt: skip
        links = [
            f'<a href="/suite?name={q(row.suite)}">{e(row.suite)}</a>',
            f'status <span class="{e(row.status)}">{e(row.status)}</span>',
            f"file {e(row.path)}",
        ]
        if earlier:
            links.append(
                f'<a id="compare-previous" href="/compare?a={q(earlier[0].run_id)}&amp;b='
                f'{q(row.run_id)}">compare with the run before ({e(earlier[0].run_id)})</a>'
            )
        problems = []
        if row.started is None:
            problems.append(f"run {row.run_id}: its start time is not a time; shown as unknown")
        return problems_note(problems) + f"<p>{' &middot; '.join(links)}</p>"

    def case(self, query: dict[str, str]) -> str:
        row = self._row(query, "run")
        return case_page(self.store, row, query.get("case", ""), self.run_index(row))

    def compare(self, query: dict[str, str]) -> str:
        a, b = self._row(query, "a"), self._row(query, "b")
        records = (load_run(self.store, a), load_run(self.store, b))
        comparison = compare_runs(*records)
        form = compare_form(list_rows(self.store, RUNS_LISTED), a.run_id, b.run_id)
        return compare_page(self.store, (a, b), records, comparison, self.alpha, form)

    def suite(self, query: dict[str, str]) -> str:
        name = query.get("name", "")
        rows = list(reversed(list_rows(self.store, CHART_RUNS, suite=name)))
        points = [(r, self.figures(r).pass_rate) for r in rows]
        table = "".join(
            f'<tr><td><a href="/run?id={q(r.run_id)}">{e(r.run_id)}</a></td>'
            f"<td>{percent(rate)}</td></tr>"
            for r, rate in points
        )
        body = (
            chart(points)
            + "<table><tr><th>run</th><th>pass rate (of judged samples)</th></tr>"
            + f"{table}</table>"
        )
        return page(f"Suite {name}: pass rate over its last {len(rows)} runs", body, NAV)


def compare_form(rows: list[RunRow], a: str, b: str) -> str:
    """Two lists of runs; by default the baseline is the run before the newest, so the two
    boxes never start on the same run."""
    rows = rows[:RUNS_SHOWN]
    if not a and not b and rows:
        # the newest run that has an earlier run of its suite, and that one; else the two
        # newest runs
        pair = next(
            ((r, o) for i, r in enumerate(rows) for o in rows[i + 1 :] if o.suite == r.suite),
            (rows[0], rows[min(1, len(rows) - 1)]),
        )
        newer, older = pair
        a, b = older.run_id, newer.run_id

    def options(chosen: str) -> str:
        return "".join(
            f'<option value="{e(r.run_id)}"{" selected" if r.run_id == chosen else ""}>'
            f"{e(r.run_id)} {e(r.suite)}</option>"
            for r in rows
        )

    return (
        '<form action="/compare" method="get" id="compare">compare baseline '
        f'<select name="a">{options(a)}</select> with current <select name="b">{options(b)}'
        '</select> <button type="submit">compare</button></form>'
    )


def _pass_rate_marks(
    points: list[tuple[RunRow, float | None]], width: int, height: int, pad: int, radius: float
) -> tuple[str, str] | None:
    """The polyline's points and the dots (each run's pass rate as its tooltip) of a pass
    rate over runs, oldest first; None when no run has one."""
    shown = [(i, r, v) for i, (r, v) in enumerate(points) if v is not None]
    if not shown:
        return None
    step = (width - 2 * pad) / max(1, len(points) - 1)

    def xy(i: int, v: float) -> tuple[float, float]:
        return pad + i * step, height - pad - v * (height - 2 * pad)

    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(i, v) for i, _r, v in shown))
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:g}" fill="#1f6feb">'
        f"<title>{e(r.run_id)}: {percent(v)}</title></circle>"
        for i, r, v in shown
        for x, y in [xy(i, v)]
    )
    return line, dots


def sparkline(points: list[tuple[RunRow, float | None]]) -> str:
    """Pass rates, oldest first, as a small inline SVG (no external resource)."""
    width, height = 160, 28
    marks = _pass_rate_marks(points, width, height, 3, 2.5)
    if marks is None:
        return '<span class="muted">no pass rate</span>'
    line, dots = marks
    return (
        f'<svg class="spark" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" role="img" aria-label="pass rate per run">'
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f6f8fa"/>'
        f'<polyline fill="none" stroke="#1f6feb" stroke-width="1.5" points="{line}"/>'
        f"{dots}</svg>"
    )


def chart(points: list[tuple[RunRow, float | None]]) -> str:
    """The pass rate of each run, oldest first, as an inline SVG line chart."""
    width, height, pad = 640, 200, 30
    marks = _pass_rate_marks(points, width, height, pad, 4)
    if marks is None:
        return "<p>no run of this suite has a pass rate yet</p>"
    line, dots = marks
    axis = (
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
        'stroke="#999"/>'
        f'<text x="2" y="{pad + 4}" font-size="11">100%</text>'
        f'<text x="8" y="{height - pad + 4}" font-size="11">0%</text>'
    )
    return (
        f'<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" role="img" aria-label="pass rate per run">{axis}'
        f'<polyline fill="none" stroke="#1f6feb" stroke-width="2" points="{line}"/>'
        f"{dots}</svg>"
    )


class _Handler(BaseHTTPRequestHandler):
    site: Site
    server_version = "accord-view"

    def do_GET(self) -> None:
        refusal = self._refusal()
        if refusal is not None:
            self.send_error(HTTPStatus.FORBIDDEN, refusal)
            return
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        status, text = self.site.route(parts.path, query)
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        # nothing on these pages may load or run anything, even if escaping ever failed
        self.send_header(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'",
        )
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(data)

    def _refusal(self) -> str | None:
        """Why a request is not the user's own, or None: a Host other than ours (a page
        elsewhere that rebinds its own name to 127.0.0.1 sends its own Host: refusing it
        keeps the runs from being read through the user's browser), or a request a page of
        another site made (`<img src="http://127.0.0.1:8765/compare?...">` carries our Host;
        browsers mark it `Sec-Fetch-Site: cross-site` and, when they send one, give its
        Origin), so no other site can make the view work for it."""
        port = self.site.port
        own = (f"127.0.0.1:{port}", f"localhost:{port}")
        if self.headers.get("Host") not in own:
            return "accord view answers 127.0.0.1 only"
        origin = self.headers.get("Origin")
        if origin is not None and origin not in tuple(f"http://{host}" for host in own):
            return "accord view answers its own pages only"
        if self.headers.get("Sec-Fetch-Site", "none") not in ("none", "same-origin"):
            return "accord view answers its own pages only"
        return None

    def _refuse(self) -> None:
        self.send_error(HTTPStatus.METHOD_NOT_ALLOWED, "accord view is read-only")

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    def log_message(self, format: str, *args: Any) -> None:
        return None  # the terminal shows the URL; one line per request would bury it


def serve(store: Path, port: int, alpha: float) -> None:
    """Serve until Ctrl-C; print the URL first (with `--port 0`, the port picked)."""
    if not store.is_file():
        from ....engine.errors import ConfigError

        raise ConfigError(
            f"no run store at {store}: run `accord eval` or `accord test` in this project "
            "first, or give --project the project's folder"
        )
    list_rows(store, limit=1)  # a store this accord cannot read is refused here, exit 2
    site = Site(store, alpha)
    handler = type("Handler", (_Handler,), {"site": site})
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        from ....engine.errors import ConfigError

        raise ConfigError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror}; give another --port "
            "(0 picks a free one)"
        ) from None
    site.port = int(server.server_address[1])
    url = f"http://127.0.0.1:{site.port}/"
    try:  # from the URL on: Ctrl-C may come the moment it is printed
        sys.stdout.write(f"accord view: {url} (read-only; Ctrl-C ends it)\n")
        sys.stdout.flush()
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    sys.stdout.write("accord view: stopped\n")
