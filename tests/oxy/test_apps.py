"""Oxy's data apps (`.app.yml`): Oxy's own apps (tests/oxy/apps, placed in a copy of the
corpus where Oxy keeps them) run unchanged with their controls at their defaults or chosen
with `-v controls.NAME=...`; the page they write shows the figures DuckDB computes for SQL
written here by hand, is inert (no script, nothing loaded from elsewhere, every value
escaped) and opens in headless Chromium."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from tests.oxy.test_corpus import CORPUS, OUR_EXAMPLES_CONFIG, Run, accord, copy_writable

APPS = Path(__file__).parent / "apps"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = pytest.mark.skipif(
    not (CORPUS / "demo_project").is_dir(),
    reason=f"Oxy corpus not found at {CORPUS} (set ACCORD_OXY_CORPUS)",
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("apps")
    copy_writable(CORPUS / "demo_project", root / "demo_project")
    copy_writable(CORPUS / "examples", root / "examples")
    (root / "examples" / "config.yml").write_text(OUR_EXAMPLES_CONFIG)
    shutil.copytree(APPS, root, dirs_exist_ok=True)
    return root


class Page(HTMLParser):
    """What a person reads on the page, by section heading: tables' rows, charts' tooltips
    and legend lines, the controls' values."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.section = ""
        self.tables: dict[str, list[list[str]]] = {}
        self.tips: dict[str, list[str]] = {}
        self.legend: dict[str, list[str]] = {}
        self.controls: dict[str, str] = {}
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []
        self._text: list[str] | None = None
        self._where = ""
        self._row: list[str] | None = None
        self._control = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(name, value or "") for name, value in attrs]
        if tag in ("h2", "td", "th", "title", "text", "dd"):
            self._text, self._where = [], tag
        if tag == "dd":
            self._control = dict(attrs).get("data-control") or ""
        if tag == "tr":
            self._row = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "small" and self._where == "dd" and self._text is not None:
            self._text = self._text[:1]  # the value, not the choices
        if tag != self._where or self._text is None:
            if tag == "tr" and self._row is not None:
                self.tables.setdefault(self.section, []).append(self._row)
                self._row = None
            return
        text = "".join(self._text).strip()
        self._text = None
        if tag == "h2":
            self.section = text
        elif tag in ("td", "th") and self._row is not None:
            self._row.append(text)
        elif tag == "title" and "svg" in self.tags:
            self.tips.setdefault(self.section, []).append(text)
        elif tag == "text":
            self.legend.setdefault(self.section, []).append(text)
        elif tag == "dd":
            self.controls[self._control] = text

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def fmt(value: Any) -> str:
    """Oxy's default for numbers on an app's page: whole numbers whole, others 2 decimals."""
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() else f"{value:.2f}"
    return str(value)


def run_app(app: Path, *options: str) -> tuple[Run, Page, str]:
    run = accord("run", app, "--format", "json", *options)
    assert run.exit_code == 0, run.stderr
    root = next(p for p in app.parents if (p / "config.yml").is_file())
    target = root / "output" / f"{app.name.removesuffix('.app.yml')}.html"
    assert run.document["summary"]["files"] == [str(target)]
    html = target.read_text(encoding="utf-8")
    return run, Page(html), html


def query(root: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect() as db:
        db.execute(f"SET file_search_path = '{root / '.db'}'")
        return db.execute(sql).fetchall()


def test_every_app_validates(corpus: Path) -> None:
    apps = sorted(corpus.rglob("*.app.yml"))
    assert len(apps) == 4
    for app in apps:
        result = accord("validate", app)
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith(f"ok: {app} (") and "unsupported" not in result.stderr


def test_insights_shows_what_duckdb_computes(corpus: Path) -> None:
    root = corpus / "demo_project"
    _run, page, html = run_app(root / "insights.app.yml")
    top = query(
        root,
        "SELECT Store, SUM(Weekly_Sales) FROM 'oxymart.csv' WHERE Date >= DATE '2010-01-01' "
        "GROUP BY Store ORDER BY 2 DESC LIMIT 5",
    )
    assert page.tips["Top 5 Stores by Total Sales"] == [
        f"Total_Sales, {store}: {fmt(total)}" for store, total in top
    ]
    holiday = query(
        root,
        "SELECT IF(Holiday_Flag = 1, 'Holiday', 'Non-Holiday'), AVG(Weekly_Sales) "
        "FROM 'oxymart.csv' GROUP BY Holiday_Flag ORDER BY Holiday_Flag DESC",
    )
    total = sum(v for _p, v in holiday)
    assert page.legend["Holiday vs Non-Holiday Sales"] == [
        f"{period}: {fmt(value)} ({value / total:.1%})" for period, value in holiday
    ]
    economic = query(
        root,
        "SELECT month, indicator, value FROM ("
        " SELECT strftime(Date, '%Y-%m') AS month, 'Fuel Price' AS indicator,"
        " AVG(Fuel_Price) AS value FROM 'oxymart.csv' GROUP BY 1"
        " UNION ALL SELECT strftime(Date, '%Y-%m'), 'Unemployment', AVG(Unemployment)"
        " FROM 'oxymart.csv' GROUP BY 1) ORDER BY month, indicator",
    )
    rows = page.tables["Economic Trends Data"]
    assert rows[0] == ["month", "indicator", "value"]
    assert rows[1:] == [[m, i, fmt(v)] for m, i, v in economic]
    assert page.controls == {"store": "All", "start_date": "2010-01-01"}
    stores = query(root, "SELECT DISTINCT CAST(Store AS VARCHAR) FROM 'oxymart.csv'")
    assert all(f"{s}," in html or f"{s})" in html for (s,) in stores)  # the store choices
    assert html.count("<svg") == 6  # 2 bars, 2 pies, 2 line charts


def test_controls_chosen_with_v_filter_every_block(corpus: Path) -> None:
    root = corpus / "demo_project"
    _run, page, _html = run_app(
        root / "insights.app.yml", "-v", "controls.store=20", "-v", "controls.start_date=2012-01-01"
    )
    (total,) = query(
        root,
        "SELECT SUM(Weekly_Sales) FROM 'oxymart.csv' WHERE Store = 20 AND Date >= '2012-01-01'",
    )[0]
    assert page.tips["Top 5 Stores by Total Sales"] == [f"Total_Sales, 20: {fmt(total)}"]
    assert page.controls == {"store": "20", "start_date": "2012-01-01"}


def _demo_values(app: Path) -> str:
    """The VALUES list the controls demo queries (the same in each of its tasks)."""
    spec = yaml.safe_load(app.read_text(encoding="utf-8"))
    sql = spec["tasks"][0]["sql_query"]
    match = re.search(r"\(\s*VALUES(.*?)\) AS t\(([^)]*)\)", sql, re.DOTALL)
    assert match is not None
    return f"(VALUES {match.group(1)}) AS t({match.group(2)})"


def test_controls_demo_with_defaults_and_choices(corpus: Path) -> None:
    app = corpus / "examples" / "apps" / "controls_demo.app.yml"
    values = _demo_values(app)
    _run, page, html = run_app(app)
    by_category = query(
        corpus,
        f"SELECT category, SUM(revenue) FROM {values} WHERE sale_date >= '2024-01-01' "
        "GROUP BY 1 ORDER BY 2 DESC",
    )
    assert page.tips["Revenue by Category"] == [
        f"total_revenue, {c}: {fmt(v)}" for c, v in by_category
    ]
    year = dt.date.today().year
    assert f"choices: All, {year}, {year - 1}, {year - 2}" in html  # options from templates
    assert page.controls["holidays_only"] == "off"

    _run, page, _html = run_app(
        app, "-v", "controls.region=North", "-v", "controls.holidays_only=true"
    )
    detail = query(
        corpus,
        f"SELECT * FROM {values} WHERE region = 'North' AND period = 'Holiday' "
        "AND sale_date >= '2024-01-01'",
    )
    rows = page.tables["Filtered Sales Detail"]
    assert rows[0] == ["region", "category", "period", "sale_date", "revenue"]
    assert rows[1:] == [[fmt(v) for v in row] for row in detail]
    assert page.controls["region"] == "North" and page.controls["holidays_only"] == "on"

    wrong = accord("run", app, "-v", "controls.region=Nowhere")
    assert wrong.exit_code == 2
    assert "variable 'controls': 'Nowhere' is not one of ['All', 'North'" in wrong.stderr
    unknown = accord("run", app, "-v", "controls.colour=red")
    assert unknown.exit_code == 2
    assert "-v controls.colour: 'controls' has no key 'colour' (keys: region, year" in (
        unknown.stderr
    )
    assert "Traceback" not in wrong.stderr + unknown.stderr


def test_line_charts_draw_one_line_per_series(corpus: Path) -> None:
    root = corpus / "examples"
    _run, page, _html = run_app(root / "business_metrics_dashboard.app.yml")
    revenue = query(root, "SELECT month, region, revenue FROM 'monthly_revenue_by_region.csv'")
    tips = page.tips["Monthly Revenue by Region"]
    assert sorted(tips) == sorted(f"{r}, {m}: {fmt(v)}" for m, r, v in revenue)
    regions = list(dict.fromkeys(r for _m, r, _v in revenue))
    assert page.legend["Monthly Revenue by Region"][-len(regions) :] == regions


def test_the_semantic_app_runs_its_topic(corpus: Path) -> None:
    root = corpus / "examples"
    _run, page, _html = run_app(root / "apps" / "example.app.yml")
    rows = page.tables["Semantic query"]
    expected = query(
        root,
        "SELECT estimated_delivery, shipment_id FROM 'order_shipments.csv' "
        "WHERE estimated_delivery < current_date - INTERVAL 7 DAY",
    )
    assert sorted(rows[1:]) == sorted([fmt(d), fmt(s)] for d, s in expected)
    assert len(rows) > 1


CONFIG = "databases:\n  - {name: local, type: duckdb, dataset: data}\n"
HOSTILE = """
title: "</title><script>alert(1)</script>"
description: "<b>bold</b>"
tasks:
  - name: evil
    type: execute_sql
    sql_query: >-
      SELECT '<script>alert(2)</script>' AS "<i>name</i>", 1 AS n
      UNION ALL SELECT '<img src=x onerror=alert(3)>', 2
display:
  - type: markdown
    content: |
      # Notes <script>alert(4)</script>

      <img src="https://example.com/pixel.png"> ![pic](https://example.com/p.png)
      [link](javascript:alert(5))
  - type: table
    title: "<u>evil</u>"
    data: evil
  - type: bar_chart
    title: chart
    data: evil
    x: <i>name</i>
    y: n
"""


def test_the_page_is_inert_and_escaped_in_chromium(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "config.yml").write_text(CONFIG)
    app = tmp_path / "hostile.app.yml"
    app.write_text(HOSTILE)
    _run, page, html = run_app(app)
    assert "script" not in page.tags and "img" not in page.tags
    assert not [a for a in page.attributes if a[0] in ("src", "srcset")]
    links = [value for name, value in page.attributes if name in ("href", "xlink:href")]
    assert links == ["https://example.com/p.png"]  # an image written in Markdown: a link
    assert "[link](javascript:alert(5))" in html  # a javascript: link is left as text
    assert "default-src 'none'" in html  # the policy forbids any script or resource
    assert page.tables["<u>evil</u>"][1] == ["<script>alert(2)</script>", "1"]
    assert "&lt;script&gt;alert(4)&lt;/script&gt;" in html
    assert "chart" in page.tips and "n, <img src=x onerror=alert(3)>: 2" in page.tips["chart"]
    if not Path(CHROMIUM).is_file():
        pytest.skip("LOUD SKIP: /usr/bin/chromium is missing (apt-get install chromium)")
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
        (tmp_path / "output" / "hostile.html").as_uri(),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = Page(done.stdout)
    assert "script" not in dom.tags and "img" not in dom.tags
    assert dom.tables["<u>evil</u>"][1:] == [
        ["<script>alert(2)</script>", "1"],
        ["<img src=x onerror=alert(3)>", "2"],
    ]
    assert dom.tags.count("svg") == 1 and dom.tags.count("rect") >= 2


def test_app_mistakes_are_named_at_their_line(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "config.yml").write_text(CONFIG)
    app = tmp_path / "broken.app.yml"
    app.write_text(
        "tasks:\n  - {name: one, type: execute_sql, sql_query: SELECT 1 AS x}\n"
        "display:\n  - type: table\n    data: onee\n"
        "  - {type: control, name: c, control_type: select, options: [a, b], default: z}\n"
    )
    for command in ("validate", "run"):
        result = accord(command, app)
        assert result.exit_code == 2
        assert f"{app}:5:11 display[0].data: no task 'onee' in the app (tasks: one)" in (
            result.stderr
        )
        assert "display[1].default: default 'z' is not one of the options ['a', 'b']" in (
            result.stderr
        )
        assert "Traceback" not in result.stderr
