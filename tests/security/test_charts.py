"""An app's charts from a query that returns many rows or extreme values: drawn in one pass
(200,000 rows in seconds), extreme values drawn or refused with a clear message (never an
internal error), a chart past its points budget refused, and Ctrl-C while a page is drawn
ends `accord run` at once (exit 130)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply

CONFIG = "databases: [{name: d, type: duckdb, dataset: data}]\ndefaults: {database: d}\n"


def _app(root: Path, query: str, *blocks: str) -> Path:
    (root / "config.yml").write_text(CONFIG)
    (root / "data").mkdir(exist_ok=True)
    display = "\n".join(f"  - {block}" for block in blocks)
    (root / "a.app.yml").write_text(
        f"tasks:\n  - name: q\n    type: execute_sql\n    sql_query: {query}\ndisplay:\n{display}\n"
    )
    return root / "a.app.yml"


@pytest.mark.slow
def test_many_rows_are_charted_in_one_pass(tmp_path: Path) -> None:
    app = _app(
        tmp_path,
        "SELECT 'label-' || i AS label, i * 1.5 AS v, 's' || (i % 7) AS s FROM range(200000) t(i)",
        "{type: bar_chart, data: q, x: label, y: v}",
        "{type: line_chart, data: q, x: label, y: v, series: s}",
    )
    started = time.monotonic()
    run = accord("run", app, "--quiet")
    assert run.exit_code == 0, run.stderr + run.stdout
    assert time.monotonic() - started < 30  # quadratic: over 140 s
    page = (tmp_path / "output" / "a.html").read_text()
    assert page.count("<rect") >= 200_000


def test_extreme_values_are_drawn(tmp_path: Path) -> None:
    app = _app(
        tmp_path,
        "SELECT * FROM (VALUES ('a', 0.0::DOUBLE), ('b', 5e-324::DOUBLE)) t(label, v)",
        "{type: bar_chart, data: q, x: label, y: v}",
        "{type: line_chart, data: q, x: label, y: v}",
        "{type: pie_chart, data: q, name: label, value: v}",
    )
    run = accord("run", app, "--quiet")
    assert run.exit_code == 0, run.stderr + run.stdout
    assert (tmp_path / "output" / "a.html").read_text().count("<svg") == 3


def test_values_too_large_to_draw_are_refused_clearly(tmp_path: Path) -> None:
    for kind in ("{type: bar_chart, data: q, x: label, y: v}",
                 "{type: line_chart, data: q, x: label, y: v}",
                 "{type: pie_chart, data: q, name: label, value: v}"):  # fmt: skip
        app = _app(tmp_path, "SELECT * FROM (VALUES ('a', 1e308), ('b', -1e308)) t(label, v)", kind)
        run = accord("run", app, "--quiet")
        assert run.exit_code == 1, run.stderr + run.stdout
        assert "beyond what a chart draws" in run.stderr, run.stderr
        assert "internal error" not in run.stderr and "Traceback" not in run.stderr


def test_a_chart_past_its_points_budget_is_refused(tmp_path: Path) -> None:
    app = _app(
        tmp_path,
        "SELECT 'l' || i AS label, i AS v, 's' || i AS s FROM range(5000) t(i)",
        "{type: line_chart, data: q, x: label, y: v, series: s}",
    )
    started = time.monotonic()
    run = accord("run", app, "--quiet")
    assert time.monotonic() - started < 30
    assert run.exit_code == 1, run.stderr + run.stdout
    assert "5,000 x values times 5,000 series make 25,000,000 points" in run.stderr


def test_ctrl_c_while_a_page_is_drawn_ends_the_run(tmp_path: Path) -> None:
    # twelve charts of 3,000 x 3,000 points: about 15 s of drawing, little to store
    charts = ["{type: line_chart, data: q, x: label, y: v, series: s}"] * 12
    _app(tmp_path, "SELECT 'l' || i AS label, i * 1.5 AS v, 's' || i AS s FROM range(3000) t(i)",
         *charts)  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "accord.cli", "--log-level", "debug", "--log-format", "json",
         "run", "a.app.yml", "--quiet"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if '"task_started"' in line and '"app_page"' in line:
                break
        else:
            raise AssertionError("the page was never started")
        proc.send_signal(signal.SIGINT)
        asked = time.monotonic()
        proc.stderr.read()
        code = proc.wait(timeout=60)
        assert time.monotonic() - asked < 5, time.monotonic() - asked
        assert code == 130
        assert not (tmp_path / "output" / "a.html").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


DEEP = "$" + "\\sqrt{" * 300 + "x" + "}" * 300 + "$"


def test_a_models_deeply_nested_chart_title_is_answered_not_crashed(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        script = [
            Reply.tool("sql", {"sql": "SELECT region, SUM(amount) AS total FROM sales GROUP BY 1"}),
            Reply.tool("chart", {"chart": "bar", "x": "region", "y": "total", "title": DEEP}),
        ]
        return script[done] if done < len(script) else Reply(text="see the chart")

    fake_llm.responder = respond
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "sales.csv").write_text("region,amount\nEU,10\nUS,20\nEU,5\n")
    (tmp_path / "config.yml").write_text(
        fake_model_config(fake_llm) + "databases:\n  - {name: local, type: duckdb, dataset: .db}\n"
    )
    (tmp_path / "main.agent.yml").write_text(
        "model: fake\nsystem_instructions: You answer with data.\ntools:\n"
        "  - {name: sql, type: execute_sql, database: local}\n  - {name: chart, type: visualize}\n"
    )
    (tmp_path / "w.workflow.yml").write_text(
        "tasks:\n  - name: ask\n    type: agent\n    agent_ref: main.agent.yml\n    prompt: go\n"
    )
    run = accord("run", tmp_path / "w.workflow.yml", "--quiet")
    assert run.exit_code == 0, run.stderr + run.stdout
    answers = [r["messages"][-1]["content"] for r in fake_llm.requests
               if r["messages"][-1]["role"] == "tool"]  # fmt: skip
    assert answers[1].startswith("chart written to "), answers  # drawn as written: no math


def test_a_files_deeply_nested_math_title_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text(CONFIG)
    (tmp_path / "data").mkdir()
    (tmp_path / "v.workflow.yml").write_text(
        "tasks:\n  - name: q\n    type: execute_sql\n"
        "    sql_query: SELECT * FROM (VALUES ('a', 1), ('b', 2)) t(label, v)\n"
        "  - name: c\n    type: visualize\n    data: q\n    chart: bar\n    x: label\n"
        f"    y: v\n    title: {json.dumps(DEEP)}\n"
    )
    run = accord("run", tmp_path / "v.workflow.yml", "--quiet")
    assert run.exit_code == 1, run.stderr + run.stdout
    assert "nested too deep for matplotlib's math" in run.stderr, run.stderr
    assert "internal error" not in run.stderr and "RecursionError" not in run.stderr
