"""Reports: JUnit XML, `--output`, and the self-contained HTML report (checked in Chromium)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.commands.conftest import JUDGE_YAML, Script, accord_test
from tests.commands.harness import HAS_CHROMIUM, PROBE, dump_dom
from tests.fakes import Reply

WORKFLOW = f"""
consistency_prompt: |
{JUDGE_YAML}
tasks:
  - name: a
    type: agent
    prompt: "question a"
  - name: b
    type: agent
    prompt: "question b"
tests:
  - type: consistency
    name: revenue is stable
    task_ref: a
    n: 3
  - type: consistency
    name: region <b>check</b>
    task_ref: b
    n: 3
  - type: consistency
    name: broken
    task_ref: b
    n: 2
    prompt: "S1: {{{{ submission_1 }}}}\\nS2: {{{{ submission_2 }}}}"
"""
HOSTILE = '<script>alert("x")</script> & 2 <b>bold</b>'


@pytest.fixture
def workflow(project: Callable[..., Path], script: Script) -> Path:
    script.answer("question a", "1", "1", "2")
    script.answer("question b", "5", HOSTILE + " 5", "7")
    return project({"w.workflow.yml": WORKFLOW})


def test_junit_per_test_and_average_gate(workflow: Path) -> None:
    args = ("--format", "junit", "--max-concurrency", "1", "--cache", "off")
    run = accord_test(workflow, *args, "--min-accuracy", "0.9")
    assert run.exit_code == 1
    root = ET.fromstring(run.stdout)
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == [
        "Test 1: revenue is stable",
        "Test 2: region <b>check</b>",
        "Test 3: broken",
        "min-accuracy 0.9000",
    ]
    gate = cases[3].find("failure")
    assert gate is not None
    assert gate.get("message", "").startswith("Average accuracy 0.")
    props = {p.get("name"): p.get("value") for p in cases[0].iter("property")}
    assert props == {"accuracy": "0.333333", "accuracy_n": "3"}


def test_junit_all_mode_marks_the_tests_below(workflow: Path) -> None:
    args = ("--format", "junit", "--max-concurrency", "1", "--cache", "off")
    run = accord_test(workflow, *args, "--min-accuracy", "0.5", "--threshold-mode", "all")
    assert run.exit_code == 1
    cases = ET.fromstring(run.stdout).findall("./testsuite/testcase")
    failures = {c.get("name"): c.find("failure") for c in cases}
    assert len(cases) == 3
    first = failures["Test 1: revenue is stable"]
    assert first is not None
    assert first.get("message") == "accuracy 0.3333 below threshold 0.5000"


def test_output_writes_the_result_to_a_file(workflow: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "result.json"
    run = accord_test(workflow, "--format", "json", "--output", target, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert run.stdout == ""
    assert '"accuracy": [' in target.read_text()
    pretty = tmp_path / "result.txt"
    accord_test(workflow, "--output", pretty, "--cache", "off")
    assert "✅Eval finished with metrics:" in pretty.read_text()


def report(workflow: Path, tmp_path: Path) -> str:
    target = tmp_path / "report.html"
    run = accord_test(workflow, "--report", target, "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    return target.read_text(encoding="utf-8")


def test_html_report_is_self_contained_and_escaped(workflow: Path, tmp_path: Path) -> None:
    html = report(workflow, tmp_path)
    assert not re.search(r"https?://|//cdn|<link|<img|@import|\bsrc=", html)
    assert html.count("<script>") == 1  # ours; the model's text is escaped
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; 2 &lt;b&gt;bold" in html
    assert "Test 2: region &lt;b&gt;check&lt;/b&gt;" in html
    assert "<svg" in html and html.count("<rect") == 3  # one bar per scored test
    assert "Comparing the numbers." in html  # judge reasoning
    assert "33.33%" in html  # a score


CLICK = (
    "<script>document.getElementById('only-failing').click();"
    "document.documentElement.setAttribute('data-only-failing',"
    " String(document.body.classList.contains('only-failing')));</script>"
)


@pytest.mark.skipif(
    not HAS_CHROMIUM,
    reason="LOUD SKIP: /usr/bin/chromium is missing; install Debian's chromium package "
    "(.ci/run does) to check the HTML report in a real browser",
)
def test_html_report_opens_in_chromium_without_errors(workflow: Path, tmp_path: Path) -> None:
    html = report(workflow, tmp_path)
    # an error listener before the page's own script, and a click on the filter after it
    probed = html.replace("<head>", "<head>" + PROBE, 1).replace("</body>", CLICK + "</body>", 1)
    page = tmp_path / "probed.html"
    page.write_text(probed, encoding="utf-8")
    dom, console = dump_dom(page, tmp_path / "profile")
    html_tag = re.search(r"<html[^>]*>", dom)
    assert html_tag is not None
    assert "data-js-error" not in html_tag.group(0), html_tag.group(0)
    assert "Uncaught" not in console
    assert 'data-only-failing="true"' in html_tag.group(0)  # the page's script ran
    for title in ("Test 1: revenue is stable", "Test 2: region &lt;b&gt;check&lt;/b&gt;"):
        assert title in dom
    assert "Test 3: broken" in dom
    assert dom.count("<script>") == 3  # the probe, ours, the click: no injected script


def test_a_test_that_failed_appears_in_the_report_with_its_cause(
    project: Callable[..., Path], script: Script, tmp_path: Path
) -> None:
    script.answer("question a", Reply.error(400, "quota exceeded"))
    script.answer("question b", "5")
    html = report(project({"w.workflow.yml": WORKFLOW}), tmp_path)
    assert "Error: all 3 runs failed" in html and "quota exceeded" in html
    assert "no result" in html  # in the chart
