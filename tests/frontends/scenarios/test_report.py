"""The scenario suite report: escaped, self-contained HTML and JSON (checked in Chromium)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from accord.tasks.evaluators.base import Finding
from accord.tasks.suites.core.cases import CaseResult, Suite
from accord.tasks.suites.core.verdicts import SuiteRun
from accord.tasks.suites.frontends.scenarios.report import (
    markdown_html,
    render_scenario_html,
    scenario_data,
    write_scenario_reports,
)
from tests.bounds import PROCESS_SECONDS

HOSTILE = '<script>alert(1)</script> "quotes" & co'
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt; &quot;quotes&quot; &amp; co"
GREETING = f"Greeting {HOSTILE}"
REFUND = "Refund policy"
GPT = "gpt-4o (temperature 0.1)"
AGENT = "shop.agents:SupportAgent"
OUTPUT = f"Hello {HOSTILE}!\nSecond line with `code`.\n```html\n{HOSTILE}\n```\nBye."
# a script that ran would call alert: the probe records it instead of blocking the browser
PROBE = (
    "<script>window.alert = function (m) {"
    "document.documentElement.setAttribute('data-alert', String(m)); };</script>"
)
EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:|//)""", re.IGNORECASE)


def judged(scores: dict[str, float], reason: str = "fine") -> Finding:
    """The scenario judge's finding: one child per metric, scores on 0..1."""
    mean = sum(scores.values()) / len(scores)
    children = [Finding(name=n, score=s / 10, reason=f"{n}: {reason}") for n, s in scores.items()]
    return Finding(
        name="scenario_judge",
        score=mean / 10,
        passed=all(s >= 7 for s in scores.values()),
        children=children,
        metadata={"mean": mean},
    )


def result(
    scenario: str, model: str, status: str, findings: list[Finding], **extra: Any
) -> CaseResult:
    scores = [c.score for f in findings for c in f.children if c.score is not None]
    return CaseResult(
        id=f"{scenario} [{model}]",
        repeat=0,
        status=status,
        input=extra.pop("input", f"Say hello to {HOSTILE}"),
        expected=extra.pop("expected", "A friendly greeting"),
        score=sum(scores) / len(scores) if scores else None,
        findings=findings,
        seconds=1.25,
        usage=extra.pop("usage", {"input": 12, "output": 30}),
        metadata={
            "scenario": scenario,
            "description": "Greets the user",
            "model": model,
            "agent": AGENT,
            "criteria": "Is polite & short",
            "pass_threshold": 7.0,
            "judge_model": "judge-1",
            "metrics": ["coherence", "accuracy"],
        },
        **extra,
    )


@pytest.fixture
def run() -> SuiteRun:
    good, poor = (
        judged({"coherence": 9, "accuracy": 8}, HOSTILE),
        judged({"coherence": 8, "accuracy": 5}),
    )
    no_verdict = Finding(name="scenario_judge", error="the judge gave no verdict")
    crash = f"RuntimeError: agent exploded {HOSTILE}"
    cases = [
        result(GREETING, GPT, "passed", [good], output=OUTPUT),
        result(GREETING, "default", "failed", [poor], output="Hi"),
        result(REFUND, GPT, "error", [], error=crash, usage=None),
        result(REFUND, "default", "error", [no_verdict], output="Refunds take 5 days."),
    ]
    suite = Suite(id="demo", cases=[], targets={})
    return SuiteRun(suite=suite, cases=cases, seconds=4.5, run_id="20240101-120000-ab12")


def test_the_json_has_the_figures_and_round_trips(run: SuiteRun, tmp_path: Path) -> None:
    html_path, json_path = write_scenario_reports(run, tmp_path / "out" / "nested", seed=42)
    assert html_path == tmp_path / "out" / "nested" / "demo-20240101-120000-ab12.html"
    assert json_path == html_path.with_suffix(".json")
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data == json.loads(json.dumps(scenario_data(run, seed=42)))
    assert (data["suite"], data["run_id"], data["seed"]) == ("demo", run.run_id, 42)
    assert data["counts"] == {"passed": 1, "failed": 1, "error": 2, "recorded": 0}
    assert data["pass_rate"]["value"] == 0.25
    low, high = data["pass_rate"]["interval"]
    assert 0 < low < 0.25 < high < 1
    first, second, third, fourth = data["cases"]
    assert (first["scenario"], first["model"], first["agent"]) == (GREETING, GPT, AGENT)
    assert first["output"] == OUTPUT and first["input"] == f"Say hello to {HOSTILE}"
    assert first["score"] == 8.5 and second["score"] == 6.5 and third["score"] is None
    assert [(m["name"], m["score"], m["passed"]) for m in second["metrics"]] == [
        ("coherence", 8.0, True),
        ("accuracy", 5.0, False),
    ]
    assert first["metrics"][0]["reason"] == f"coherence: {HOSTILE}"
    assert third["error"] == f"RuntimeError: agent exploded {HOSTILE}"
    assert [m["passed"] for m in third["metrics"]] == [None, None]
    assert fourth["error"] == "the judge gave no verdict"
    assert first["usage"] == {"input": 12, "output": 30} and first["seconds"] == 1.25


def test_every_value_is_escaped_and_nothing_is_external(run: SuiteRun) -> None:
    page = render_scenario_html(run, seed=42)
    assert "<script" not in page.lower()
    assert ESCAPED in page  # scenario name, input, output, explanation, error
    assert f"Greeting {ESCAPED} [{GPT}]" in page
    assert f"coherence: {ESCAPED}" in page
    assert "<details>" in page and page.count("<summary>") == 4
    assert not EXTERNAL.search(page) and "<link" not in page and "@import" not in page
    assert "Pass rate: <b>25.00% (1/4 cases, 95% CI" in page
    assert "1 passed, 1 failed, 2 errors" in page and "seed 42" in page
    rows = "".join(re.findall(r"<tr class='row'>.*?</tr>", page))
    badges = re.findall(r"<span class='badge (\w+)'[^>]*>(\w+) ([\d.na/]+)</span>", rows)
    assert badges == [
        ("ok", "coherence", "9.0"),
        ("ok", "accuracy", "8.0"),
        ("ok", "coherence", "8.0"),
        ("bad", "accuracy", "5.0"),
        ("none", "coherence", "n/a"),
        ("none", "accuracy", "n/a"),
        ("none", "coherence", "n/a"),
        ("none", "accuracy", "n/a"),
    ]


def test_markdown_is_escaped_first_then_code_blocks_and_line_breaks() -> None:
    text = "a & b\n```py\nx = '<b>'\n```\nend `c<d>`\r\nlast"
    assert markdown_html(text) == (
        "a &amp; b<pre><code class='language-py'>x = &#x27;&lt;b&gt;&#x27;</code></pre>"
        "end <code>c&lt;d&gt;</code><br>\nlast"
    )
    assert markdown_html("```\n<i>\nunclosed") == "```<br>\n&lt;i&gt;<br>\nunclosed"
    assert markdown_html(None) == ""


def test_file_names_are_safe(tmp_path: Path) -> None:
    suite = Suite(id="../my suite/ü", cases=[], targets={})
    html_path, json_path = write_scenario_reports(SuiteRun(suite=suite, cases=[]), tmp_path)
    assert html_path.name == "my-suite-run.html" and json_path.name == "my-suite-run.json"
    assert html_path.parent == tmp_path
    assert json.loads(json_path.read_text())["pass_rate"] is None


class Rows(HTMLParser):
    """The text of each cell of the table's main rows, as the browser built them."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.in_row = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.in_row = ("class", "row") in attrs
            if self.in_row:
                self.rows.append([])
        elif tag == "td" and self.in_row:
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self.in_row = False

    def handle_data(self, data: str) -> None:
        if self.in_row and self.rows[-1]:
            self.rows[-1][-1] += data


def chromium() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).is_file():
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail("chromium is missing in CI: the HTML report must be checked in a browser")
        pytest.skip("LOUD SKIP: /usr/bin/chromium is missing (.ci/run installs it)")
    return path


def test_the_report_renders_in_chromium(run: SuiteRun, tmp_path: Path) -> None:
    browser = chromium()
    page, _ = write_scenario_reports(run, tmp_path / "report", seed=42)
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("<head>", "<head>" + PROBE, 1))
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
        probed.as_uri(),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=PROCESS_SECONDS, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    parser = Rows()
    parser.feed(dom)
    assert parser.rows == [
        [AGENT, GREETING, GPT, "passed", "8.5", "coherence 9.0accuracy 8.0"],
        [AGENT, GREETING, "default", "failed", "6.5", "coherence 8.0accuracy 5.0"],
        [AGENT, REFUND, GPT, "error", "n/a", "coherence n/aaccuracy n/a"],
        [AGENT, REFUND, "default", "error", "n/a", "coherence n/aaccuracy n/a"],
    ]
    assert "Pass rate: <b>25.00% (1/4 cases, 95% CI" in dom
    html_tag = re.search(r"<html[^>]*>", dom)
    assert html_tag is not None and "data-alert" not in html_tag.group(0)
    assert dom.count("<script") == 1  # the probe only: the hostile text stayed text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert '<code class="language-html">&lt;script&gt;alert(1)&lt;/script&gt;' in dom
    assert dom.count("<details>") == 4 and "Uncaught" not in done.stderr
    assert not EXTERNAL.search(page.read_text(encoding="utf-8")) and not EXTERNAL.search(dom)
