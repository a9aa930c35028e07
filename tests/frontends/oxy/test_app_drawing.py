"""How an app's page draws what Oxy's app front-end draws: charts aggregated as
chartQueries.ts aggregates (checked by running its own queries in DuckDB), selects fed by a
task, Oxy's task `mode`, and a page that reads well (margins that hold their labels, folded
long choices), each page also opened in headless Chromium."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.frontends.oxy.harness import accord
from tests.frontends.oxy.test_apps import CHROMIUM, CONFIG, Page, fmt, run_app

ROWS = """k,s,v,day
b,s2,1,2024-01-20
a,s1,1,2024-01-20
a,s1,2,2024-01-21
a,s2,5,2024-01-20
b,,7,2024-01-22
c,s1,,2024-01-22
"""


def app(root: Path, name: str, text: str) -> Path:
    (root / "data").mkdir(exist_ok=True)
    (root / "config.yml").write_text(CONFIG)
    (root / "data" / "rows.csv").write_text(ROWS)
    path = root / f"{name}.app.yml"
    path.write_text(text)
    return path


def oxy(root: Path, sql: str) -> list[tuple[Any, ...]]:
    """One of chartQueries.ts's queries, on the rows as the chart's task returns them."""
    with duckdb.connect() as db:
        db.execute(f"CREATE TABLE t AS SELECT * FROM read_csv('{root / 'data' / 'rows.csv'}')")
        return db.execute(sql).fetchall()


def in_chromium(page: Path, tmp_path: Path, shot: str) -> str:
    """The page's DOM as headless Chromium builds it, and a screenshot beside it."""
    if not Path(CHROMIUM).is_file():
        pytest.skip("LOUD SKIP: /usr/bin/chromium is missing (apt-get install chromium)")
    base = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
    ]  # fmt: skip
    done = subprocess.run([*base, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    picture = tmp_path / shot
    shot_run = subprocess.run(
        [*base, "--window-size=1200,1600", f"--screenshot={picture}", page.as_uri()],
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert shot_run.returncode == 0 and picture.stat().st_size > 10_000
    return done.stdout


CHARTS = """
tasks:
  - {name: rows, type: execute_sql, database: local, sql_query: "SELECT * FROM 'rows.csv'"}
display:
  - {type: bar_chart, title: bars, data: rows, x: k, y: v}
  - {type: bar_chart, title: series, data: rows, x: k, y: v, series: s}
  - {type: line_chart, title: line, data: rows, x: day, y: v}
  - {type: pie_chart, title: pie, data: rows, name: k, value: v}
"""


def test_repeated_x_values_are_summed_as_oxys_front_end_sums_them(tmp_path: Path) -> None:
    path = app(tmp_path, "charts", CHARTS)
    _run, page, _html = run_app(path)
    # getXAxisData + getSimpleAggregatedData: distinct x in order, SUM(y) per x; c's rows
    # hold no number, so c has a place and no bar
    simple = oxy(tmp_path, 'SELECT "k" AS x, SUM("v") AS y FROM t GROUP BY "k" ORDER BY "k"')
    assert simple == [("a", 8), ("b", 8), ("c", None)]
    assert page.tips["bars"] == [f"v, {x}: {y}" for x, y in simple if y is not None]
    # getSeriesData + getSeriesValues: per series value, SUM(y) per x; a null series is
    # matched by no `WHERE s = ?`, so b's 7 is in no series
    series = [
        f"{name}, {x}: {fmt(y)}"
        for (name,) in oxy(tmp_path, 'SELECT DISTINCT "s" FROM t WHERE "s" IS NOT NULL ORDER BY 1')
        for x, y in oxy(tmp_path, f"""SELECT "k" AS x, SUM("v") AS y FROM t WHERE "s" = '{name}'
                                      GROUP BY "k", "s" ORDER BY "k" """)
        if y is not None
    ]  # fmt: skip
    # (the series' own order is DuckDB's DISTINCT's, which is not defined: here first seen)
    assert sorted(page.tips["series"]) == series == ["s1, a: 3", "s2, a: 5", "s2, b: 1"]
    # a line of 6 rows over 3 days: 3 points, each the day's sum, the days shown as dates
    days = oxy(tmp_path, 'SELECT "day", SUM("v") FROM t GROUP BY "day" ORDER BY "day"')
    assert page.tips["line"] == [f"v, {d.isoformat()}: {fmt(y)}" for d, y in days]
    assert page.shapes["line"].count("circle") == 3
    # getPieChartData: SUM(value) per name
    slices = dict(oxy(tmp_path, 'SELECT "k", SUM("v") FROM t GROUP BY "k"'))
    total = 16
    shares = [f"{k}: {fmt(slices[k] or 0)} ({(slices[k] or 0) / total:.1%})"
              for k in ("b", "a", "c")]  # in the order of the rows  # fmt: skip
    assert page.legend["pie"] == shares
    assert page.tips["pie"] == shares[:2]  # c's slice is empty: nothing to hover
    dom = Page(in_chromium(tmp_path / "output" / "charts.html", tmp_path, "charts.png"))
    assert dom.tips == page.tips


FED = """
title: Sales by channel
tasks:
  - name: channels
    type: execute_sql
    database: local
    sql_query: SELECT DISTINCT s FROM 'rows.csv' WHERE s IS NOT NULL ORDER BY 1 DESC
    mode: server
  - name: picked
    type: execute_sql
    database: local
    sql_query: SELECT k, v FROM 'rows.csv' WHERE s = '{{ controls.channel }}'
    mode: client
display:
  - {type: control, name: channel, control_type: select, source: channels}
  - {type: table, title: picked, data: picked}
"""


def test_a_select_fed_by_a_task_starts_at_its_first_option_and_takes_only_its_options(
    tmp_path: Path,
) -> None:
    # docs/apps.md: a select without a default starts at its first option, here the first
    # row of its task (s2, the query orders them descending); Oxy's `mode` is accepted
    path = app(tmp_path, "fed", FED)
    assert accord("validate", path).exit_code == 0
    _run, page, _html = run_app(path)
    assert page.controls == {"channel": "s2"}
    assert page.tables["picked"][1:] == [["b", "1"], ["a", "5"]]
    _run, page, _html = run_app(path, "-v", "controls.channel=s1")
    assert page.controls == {"channel": "s1"}
    assert page.tables["picked"][1:] == [["a", "1"], ["a", "2"], ["c", ""]]
    wrong = accord("run", path, "-v", "controls.channel=Atlantis")
    assert wrong.exit_code == 1
    assert "controls.channel=Atlantis is not one of the options of task 'channels' (s2, s1)" in (
        wrong.stderr
    )
    assert "Traceback" not in wrong.stderr
    # a default the file writes stands beside the task's rows (Oxy's `All`, revenue.app.yml)
    everything = FED.replace("source: channels}", "source: channels, default: All}")
    _run, page, _html = run_app(app(tmp_path, "all", everything))
    assert page.controls == {"channel": "All"}
    bad = app(tmp_path, "bad", FED.replace("mode: server", "mode: browser"))
    refused = accord("validate", bad)
    assert refused.exit_code == 2
    assert re.search(r"bad\.app\.yml:\d+:\d+ tasks\[0\]\.mode: .*'client' or 'server'",
                     refused.stderr)  # fmt: skip


BIG = """
title: Large numbers
tasks:
  - name: weekly
    type: execute_sql
    database: local
    sql_query: >-
      SELECT TIMESTAMP '2010-02-01' + INTERVAL (i) WEEK AS week, 300000000 + i * 1000 AS sales
      FROM range(40) t(i)
  - name: stores
    type: execute_sql
    database: local
    sql_query: SELECT 'store ' || i AS store FROM range(300) t(i)
display:
  - {type: control, name: store, control_type: select, source: stores}
  - type: line_chart
    title: weekly
    data: weekly
    x: week
    y: sales
    x_axis_label: Week of the year
    y_axis_label: Total_Sales
  - type: row
    columns: 2
    children:
      - {type: bar_chart, title: left, data: weekly, x: week, y: sales}
      - {type: bar_chart, title: right, data: weekly, x: week, y: sales}
"""


def svgs(html: str) -> list[tuple[float, list[dict[str, str]]]]:
    """Each chart's width and its text elements (attributes and text)."""
    found = []
    for width, body in re.findall(r'<svg [^>]*viewBox="0 0 (\d+) \d+"[^>]*>(.*?)</svg>', html):
        texts = [
            {**dict(re.findall(r'([\w-]+)="([^"]*)"', attrs)), "text": text}
            for attrs, text in re.findall(r"<text ([^>]*)>([^<]*)</text>", body)
        ]
        found.append((float(width), texts))
    return found


def test_labels_fit_their_chart_and_long_choices_are_folded(tmp_path: Path) -> None:
    path = app(tmp_path, "big", BIG)
    _run, _page, html = run_app(path)
    charts = svgs(html)
    assert [width for width, _texts in charts] == [900, 480, 480]  # a row's charts narrower
    char = 0.6 * 12  # charts.py's estimate of a character's width at its font size
    for width, texts in charts:
        turned = [t for t in texts if "rotate(-30" in t.get("transform", "")]
        ticks = [t for t in texts if t.get("text-anchor") == "end" and "transform" not in t]
        title = next(t for t in texts if "rotate(-90" in t.get("transform", ""))
        # the y-axis title (turned upright, centred on its x) ends before the widest value
        widest = min(float(t["x"]) - char * len(t["text"]) for t in ticks)
        assert float(title["x"]) + 6 < widest
        # timestamps at midnight are dates; the first turned label stays inside the chart
        assert turned and all(re.fullmatch(r"\d{4}-\d\d-\d\d", t["text"]) for t in turned)
        first = turned[0]
        assert float(first["x"]) - char * len(first["text"]) * 0.87 >= 0
        # the x-axis title is under the turned labels, not over the last one
        lowest = max(float(t["y"]) + char * len(t["text"]) * 0.5 for t in turned)
        x_title = next(t for t in texts if t["text"] in ("Week of the year", "week"))
        assert float(x_title["y"]) > lowest
        assert float(x_title["x"]) < width * 0.75
    # 300 choices: their count, the list folded under it
    assert "<summary>300 choices</summary>" in html
    in_chromium(tmp_path / "output" / "big.html", tmp_path, "big.png")
