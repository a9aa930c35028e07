"""Oxy's data apps (`.app.yml`): apps written for these tests (tests/frontends/oxy/apps, placed in
a copy of the corpus, which has none, so that they read its data and semantic layer) run with
their controls at their defaults or chosen with `-v controls.NAME=...`; the page they write
shows the figures DuckDB computes for SQL written here by hand, is inert (no script, nothing
loaded from elsewhere, every value escaped) and opens in headless Chromium."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.frontends.oxy.harness import CORPUS, OUR_EXAMPLES_CONFIG, Run, accord, copy_writable

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
    assert not list(root.rglob("*.app.yml"))  # the corpus brings none: all are ours
    shutil.copytree(APPS, root, dirs_exist_ok=True)
    return root


class Page(HTMLParser):
    """What a person reads on the page, by section heading: tables' rows, charts' tooltips,
    legend lines and shapes (the elements drawn in their SVG), the controls' values."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.section = ""
        self.tables: dict[str, list[list[str]]] = {}
        self.tips: dict[str, list[str]] = {}
        self.legend: dict[str, list[str]] = {}
        self.controls: dict[str, str] = {}
        self.shapes: dict[str, list[str]] = {}
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
        if tag in ("rect", "polyline", "circle", "path"):
            self.shapes.setdefault(self.section, []).append(tag)
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


def quarter(day: dt.date) -> str:
    return f"{day.year}-Q{(day.month - 1) // 3 + 1}"


def check_store_review(root: Path, page: Page, store: str, since: str) -> None:
    """Every block of store_review.app.yml against DuckDB, for the given control values."""
    where = f"Date >= DATE '{since}'" + ("" if store == "All" else f" AND Store = {store}")
    leading = query(
        root,
        f"SELECT Store, SUM(Weekly_Sales) AS total FROM 'oxymart.csv' WHERE {where} "
        "GROUP BY Store ORDER BY total DESC LIMIT 4",
    )
    # Oxy's app front-end orders a chart's x values (chartQueries.ts: ORDER BY x)
    assert leading and page.tips["Leading stores"] == [
        f"sales, {s}: {fmt(t)}" for s, t in sorted(leading)
    ]

    weeks = query(
        root,
        f"SELECT Holiday_Flag, SUM(Weekly_Sales) FROM 'oxymart.csv' WHERE {where} "
        "GROUP BY Holiday_Flag ORDER BY Holiday_Flag DESC",
    )
    total = sum(v for _f, v in weeks)
    kinds = {1: "Holiday weeks", 0: "Ordinary weeks"}
    assert page.legend["Holiday share"] == [
        f"{kinds[flag]}: {fmt(v)} ({v / total:.1%})" for flag, v in weeks
    ]

    quarters = query(
        root,
        f"SELECT date_trunc('quarter', Date) AS q, SUM(Weekly_Sales) FROM 'oxymart.csv' "
        f"WHERE {where} GROUP BY q ORDER BY q",
    )
    assert page.tips["Sales per quarter"] == [f"sales, {quarter(q)}: {fmt(v)}" for q, v in quarters]
    assert page.shapes["Sales per quarter"].count("polyline") == 1

    readings = query(
        root,
        "SELECT date_trunc('quarter', Date) AS q, AVG(Temperature), AVG(Fuel_Price) "
        f"FROM 'oxymart.csv' WHERE {where} GROUP BY q ORDER BY q",
    )
    rows = page.tables["Weather and fuel per quarter"]
    assert rows[0] == ["quarter", "measure", "reading"]
    assert rows[1:] == [
        [quarter(q), measure, fmt(value)]
        for q, heat, fuel in readings
        for measure, value in (("Temperature (F)", heat), ("Fuel price ($)", fuel))
    ]
    assert page.tips["Weather and fuel"] == [
        f"Temperature (F), {quarter(q)}: {fmt(heat)}" for q, heat, _f in readings
    ] + [f"Fuel price ($), {quarter(q)}: {fmt(fuel)}" for q, _h, fuel in readings]
    assert page.legend["Weather and fuel"][-2:] == ["Temperature (F)", "Fuel price ($)"]
    assert page.shapes["Weather and fuel"].count("polyline") == 2  # one line per series
    assert page.controls == {"store": store, "since": since}


@pytest.mark.slow
def test_store_review_shows_what_duckdb_computes(corpus: Path) -> None:
    root = corpus / "demo_project"
    _run, page, html = run_app(root / "store_review.app.yml")
    check_store_review(root, page, "All", "2010-07-01")
    stores = query(root, "SELECT DISTINCT Store FROM 'oxymart.csv' ORDER BY Store")
    # the store choices: the rows of the task the select names as its `source`
    # 46 of them: folded under their count, so that they do not push the page down
    listed = f"All, {', '.join(str(s) for (s,) in stores)}"
    assert f"<summary>{len(stores) + 1} choices</summary><small>{listed}</small>" in html
    assert html.count("<svg") == 4  # a bar chart, a pie chart, two line charts


def test_controls_chosen_with_v_filter_every_block(corpus: Path) -> None:
    root = corpus / "demo_project"
    app = root / "store_review.app.yml"
    _run, page, _html = run_app(app, "-v", "controls.store=20", "-v", "controls.since=2012-01-01")
    check_store_review(root, page, "20", "2012-01-01")
    assert len(page.tips["Leading stores"]) == 1


def check_fruit_filters(root: Path, page: Page, fruit: str, since: str, bulk: bool) -> None:
    """Every block of fruit_filters.app.yml against DuckDB, for the given control values."""
    sales = (
        "'fruit_sales.csv' AS s, 'fruit.csv' AS f, 'customer.csv' AS c "
        f"WHERE f.id = s.fruit_id AND c.id = s.customer_id AND s.date >= DATE '{since}'"
        + ("" if fruit == "Any" else f" AND f.name = '{fruit}'")
        + (" AND s.quantity > 2" if bulk else "")
    )
    per_fruit = query(
        root, f"SELECT f.name, SUM(s.amount) AS a FROM {sales} GROUP BY f.name ORDER BY 1"
    )
    assert per_fruit
    assert page.tips["Amount per fruit"] == [f"amount, {n}: {fmt(a)}" for n, a in per_fruit]

    per_gender = dict(query(root, f"SELECT c.gender, SUM(s.amount) FROM {sales} GROUP BY 1"))
    buyers = sorted(({"F": "Women", "M": "Men"}[g], a) for g, a in per_gender.items())
    total = sum(per_gender.values())
    assert page.legend["Amount per buyer"] == [
        f"{b}: {fmt(a)} ({a / total:.1%})" for b, a in buyers
    ]

    detail = query(
        root, f"SELECT s.id, f.name, c.name, s.quantity, s.amount FROM {sales} ORDER BY s.id"
    )
    rows = page.tables["Sales"]
    assert rows[0] == ["id", "fruit", "customer", "quantity", "amount"]
    assert rows[1:] == [[fmt(v) for v in row] for row in detail]


def test_controls_of_every_kind_with_defaults_and_choices(corpus: Path) -> None:
    root = corpus / "examples"
    app = root / "apps" / "fruit_filters.app.yml"
    _run, page, html = run_app(app)
    check_fruit_filters(root, page, "Any", "2024-01-20", bulk=False)
    assert page.controls == {
        "fruit": "Any", "year": "Any", "from_date": "2024-01-20", "bulk_only": "off"
    }  # fmt: skip
    year = dt.date.today().year
    assert f"choices: Any, {year}, {year - 1}, {year - 2})" in html  # options from templates
    assert "choices: Any, apple, banana, cherry, kiwi, mango)" in html

    chosen = ("controls.fruit=mango", "controls.bulk_only=true", "controls.from_date=2024-01-01")
    _run, page, _html = run_app(app, *(a for c in chosen for a in ("-v", c)))
    check_fruit_filters(root, page, "mango", "2024-01-01", bulk=True)
    assert page.controls == {
        "fruit": "mango", "year": "Any", "from_date": "2024-01-01", "bulk_only": "on"
    }  # fmt: skip

    wrong = accord("run", app, "-v", "controls.fruit=durian")
    assert wrong.exit_code == 2
    assert "variable 'controls': 'durian' is not one of ['Any', 'apple', 'banana'" in wrong.stderr
    unknown = accord("run", app, "-v", "controls.colour=red")
    assert unknown.exit_code == 2
    assert "-v controls.colour: 'controls' has no key 'colour' (keys: fruit, year, from_date" in (
        unknown.stderr
    )
    toggle = accord("run", app, "-v", "controls.bulk_only=maybe")
    assert toggle.exit_code == 2
    assert "variable 'controls.bulk_only': 'maybe' is not of type boolean" in toggle.stderr
    assert "Traceback" not in wrong.stderr + unknown.stderr + toggle.stderr


@pytest.mark.parametrize("with_asia", [True, False])
def test_charts_draw_one_line_or_bar_per_series(corpus: Path, with_asia: bool) -> None:
    root = corpus / "examples"
    chosen = () if with_asia else ("-v", "controls.with_asia=false")
    _run, page, _html = run_app(root / "sales_lines.app.yml", *chosen)
    assert page.controls == {"with_asia": "on" if with_asia else "off"}
    revenue = query(
        root,
        "SELECT month, region, revenue FROM 'monthly_revenue_by_region.csv'"
        + ("" if with_asia else " WHERE region != 'Asia'"),
    )
    tips = page.tips["Revenue per region"]
    assert sorted(tips) == sorted(f"{r}, {m}: {fmt(v)}" for m, r, v in revenue)
    regions = list(dict.fromkeys(r for _m, r, _v in revenue))  # in the order of the rows
    assert page.legend["Revenue per region"][-len(regions) :] == regions
    assert page.shapes["Revenue per region"].count("polyline") == len(regions)
    assert len(regions) == (3 if with_asia else 2)

    users = query(root, "SELECT month, platform, users FROM 'monthly_active_user_by_platform.csv'")
    tips = page.tips["Users per platform"]
    assert sorted(tips) == sorted(f"{p}, {m}: {fmt(u / 1000)}" for m, p, u in users)
    platforms = list(dict.fromkeys(p for _m, p, _u in users))
    assert page.legend["Users per platform"][-len(platforms) :] == platforms
    shapes = page.shapes["Users per platform"]
    assert "polyline" not in shapes and shapes.count("rect") == len(users) + len(platforms)


@pytest.mark.parametrize("days_late", ["3", "30"])
def test_the_semantic_app_runs_its_topic(corpus: Path, days_late: str) -> None:
    root = corpus / "examples"
    app = root / "apps" / "overdue_shipments.app.yml"
    chosen = () if days_late == "3" else ("-v", f"controls.days_late={days_late}")
    _run, page, _html = run_app(app, *chosen)
    assert page.controls == {"days_late": days_late}
    expected = query(
        root,
        "SELECT carrier, status, COUNT(*) FROM 'order_shipments.csv' "
        f"WHERE estimated_delivery < current_date - INTERVAL {days_late} DAY "
        "AND status IN ('pending', 'in_transit') "
        "GROUP BY ALL ORDER BY carrier, status",
    )
    assert len(expected) > 1
    rows = page.tables["Overdue by carrier and status"]
    assert rows[0] == [
        "order_shipments__carrier",
        "order_shipments__shipment_status",
        "order_shipments__total_shipments",
    ]
    assert rows[1:] == [[c, s, fmt(n)] for c, s, n in expected]
    assert sorted(page.tips["Overdue shipments"]) == sorted(
        f"{s}, {c}: {fmt(n)}" for c, s, n in expected
    )
    statuses = list(dict.fromkeys(s for _c, s, _n in expected))
    assert page.legend["Overdue shipments"][-len(statuses) :] == statuses


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
    assert links == []  # an image written in Markdown is left out: no "!", no link
    assert "!" not in html.split("<section", 2)[1]
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
