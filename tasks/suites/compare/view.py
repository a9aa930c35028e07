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
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from ....engine.errors import AccordError
from .comparison import compare_runs
from .html import comparison_body, e, page
from .records import RunRecord
from .storeview import RunRow, case_base, find_row, list_rows, load_run, stored_results
from .viewcases import case_page, cases_page

RUNS_SHOWN = 100
CHART_RUNS = 30


def _q(value: str) -> str:
    return quote(value, safe="")


def _nav() -> str:
    return '<nav><a href="/">runs</a></nav>'


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def figures(record: RunRecord) -> dict[str, Any]:
    """A run's counts, pass rate (over cases with a verdict, by case mean) and mean score."""
    cases = [c for s in record.suites.values() for c in s.cases.values()]
    judged = [c.pass_fraction for c in cases if c.pass_fraction is not None]
    scores = [c.score for c in cases if c.score is not None]
    counts = {"passed": 0, "failed": 0, "error": 0, "recorded": 0}
    for case in cases:
        counts[case.status] = counts.get(case.status, 0) + 1
    return {
        "cases": len(cases),
        **counts,
        "pass_rate": sum(judged) / len(judged) if judged else None,
        "mean_score": sum(scores) / len(scores) if scores else None,
    }


class Site:
    """The pages, over one store."""

    def __init__(self, store: Path, alpha: float) -> None:
        self.store = store
        self.alpha = alpha
        self.port = 0  # set once the server listens

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
            return HTTPStatus.NOT_FOUND, page("Not found", f"<p>no page {e(path)}</p>", _nav())
        try:
            return HTTPStatus.OK, handler(query)
        except AccordError as exc:
            return HTTPStatus.NOT_FOUND, page("Not found", f"<p>{e(exc.text)}</p>", _nav())
        except Exception as exc:  # a bug: the page says so, the server goes on (no traceback)
            sys.stderr.write(f"accord view: internal error on {path}: {type(exc).__name__}\n")
            text = f"<p>internal error: {e(type(exc).__name__)}; this is a bug in accord</p>"
            return HTTPStatus.INTERNAL_SERVER_ERROR, page("Error", text, _nav())

    def _row(self, query: dict[str, str], name: str = "id") -> RunRow:
        return find_row(self.store, query.get(name, "") or "last")

    def index(self, query: dict[str, str]) -> str:
        rows = list_rows(self.store, RUNS_SHOWN)
        body = []
        for row in rows:
            record = load_run(self.store, row)
            f = figures(record)
            started = (
                '<span class="bad" title="not a time in the store">unknown</span>'
                if row.started is None
                else e(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.started)))
            )
            marked = (
                ' class="run bad"' if row.started is None or record.problems else ' class="run"'
            )
            body.append(
                f"<tr{marked}><td>{started}</td>"
                f'<td><a href="/run?id={_q(row.run_id)}">{e(row.run_id)}</a></td>'
                f'<td><a href="/suite?name={_q(row.suite)}">{e(row.suite)}</a></td>'
                f"<td>{e(row.status)}</td><td>{f['cases']}</td><td>{f['passed']}</td>"
                f"<td>{f['failed']}</td><td>{f['error']}</td>"
                f"<td>{_percent(f['pass_rate'])}</td>"
                f"<td>{'-' if f['mean_score'] is None else format(f['mean_score'], '.3f')}</td>"
                "</tr>"
            )
        options = "".join(f'<option value="{e(r.run_id)}">{e(r.run_id)} {e(r.suite)}</option>'
                          for r in rows)  # fmt: skip
        form = (
            '<form action="/compare" method="get" id="compare">compare '
            f'<select name="a">{options}</select> with <select name="b">{options}</select> '
            '<button type="submit">compare</button></form>'
        )
        table = (
            '<table id="runs"><tr><th>started</th><th>run</th><th>suite</th><th>status</th>'
            "<th>cases</th><th>passed</th><th>failed</th><th>errors</th><th>pass rate</th>"
            f"<th>mean score</th></tr>{''.join(body)}</table>"
        )
        empty = "<p>no runs recorded yet</p>" if not rows else ""
        return page(f"Runs in {self.store}", form + table + empty, _nav())

    def run(self, query: dict[str, str]) -> str:
        row = self._row(query)
        return cases_page(row, stored_results(self.store, row.run_id), query)

    def case(self, query: dict[str, str]) -> str:
        row = self._row(query, "run")
        name = query.get("case", "")
        nodes = [
            r for r in stored_results(self.store, row.run_id)
            if r[0].rsplit(".", 1)[0] == name or case_base(r[0])[0] == name
        ]  # fmt: skip
        return case_page(row, name, nodes)

    def compare(self, query: dict[str, str]) -> str:
        a, b = self._row(query, "a"), self._row(query, "b")
        comparison = compare_runs(load_run(self.store, a), load_run(self.store, b))
        return page("Run comparison", comparison_body(comparison, self.alpha), _nav())

    def suite(self, query: dict[str, str]) -> str:
        name = query.get("name", "")
        rows = list(reversed(list_rows(self.store, CHART_RUNS, suite=name)))
        points = [(r, figures(load_run(self.store, r))["pass_rate"]) for r in rows]
        table = "".join(
            f'<tr><td><a href="/run?id={_q(r.run_id)}">{e(r.run_id)}</a></td>'
            f"<td>{_percent(rate)}</td></tr>"
            for r, rate in points
        )
        body = chart(points) + f"<table><tr><th>run</th><th>pass rate</th></tr>{table}</table>"
        return page(f"Suite {name}: pass rate over its last {len(rows)} runs", body, _nav())


def chart(points: list[tuple[RunRow, float | None]]) -> str:
    """The pass rate of each run, oldest first, as an inline SVG line chart."""
    width, height, pad = 640, 200, 30
    shown = [(i, r, v) for i, (r, v) in enumerate(points) if v is not None]
    if not shown:
        return "<p>no run of this suite has a pass rate yet</p>"
    step = (width - 2 * pad) / max(1, len(points) - 1)

    def xy(i: int, v: float) -> tuple[float, float]:
        return pad + i * step, height - pad - v * (height - 2 * pad)

    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(i, v) for i, _r, v in shown))
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="#1f6feb">'
        f"<title>{e(r.run_id)}: {_percent(v)}</title></circle>"
        for i, r, v in shown
        for x, y in [xy(i, v)]
    )
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
        self.send_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
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
