"""`accord eval` on .eval.yml suites: targets, deterministic evaluators, verdicts, formats,
gates, exit codes and bad input."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from tests.conftest import trust_project
from tests.evals.conftest import accord

SUITE = """\
name: greetings
target: echo
evaluators:
  - {type: contains, value: hello}
  - {type: regex, pattern: "world$", weight: 0.5}
cases:
  - {id: hi, input: hello world, tags: [smoke]}
  - {id: bye, input: goodbye world}
  - {id: there, input: hello there}
"""


def test_echo_suite_scores_verdicts_and_figures(project: Callable[..., Path]) -> None:
    root = project({"g.eval.yml": SUITE})
    run = accord("eval", root / "g.eval.yml", "--format", "json")
    assert run.exit_code == 1  # a case failed and no gate was given
    suite = run.suite()
    cases = {c["id"]: c for c in suite["cases"]}
    assert cases["hi"]["status"] == "passed" and cases["hi"]["score"] == 1.0
    # weighted mean: contains 0 (weight 1), regex 1 (weight 0.5) -> 0.5 / 1.5
    assert cases["bye"]["status"] == "failed" and cases["bye"]["score"] == round(1 / 3, 4)
    assert cases["there"]["score"] == round(2 / 3, 4)
    assert suite["counts"] == {"passed": 1, "failed": 2, "error": 0, "recorded": 0}
    assert suite["pass_rate"]["successes"] == 1 and suite["pass_rate"]["n"] == 3
    low, high = suite["pass_rate"]["interval"]
    assert 0.06 < low < 0.07 and 0.79 < high < 0.80  # Wilson 95% for 1/3
    names = [e["name"] for e in suite["evaluators"]]
    assert names == ["contains", "regex"]
    assert "suites" in run.doc() and run.stderr.strip().endswith("2 of 3 case runs did not pass")


def test_gates_tags_cases_and_repeat(project: Callable[..., Path]) -> None:
    root = project({"g.eval.yml": SUITE})
    file = root / "g.eval.yml"
    assert accord("eval", file, "--min-pass-rate", "0.3", "-q").exit_code == 0
    failed = accord("eval", file, "--min-pass-rate", "0.3", "--gate", "lower-bound", "-q")
    assert failed.exit_code == 1 and "pass rate lower bound 0.0615 below 0.3000" in failed.stderr
    assert accord("eval", file, "--min-score", "0.7", "-q").exit_code == 1
    assert accord("eval", file, "--tag", "smoke", "-q").exit_code == 0
    one = accord("eval", file, "--case", "bye", "--repeat", "3", "--format", "json")
    suite = one.suite()
    assert [c["repeat"] for c in suite["cases"]] == [0, 1, 2]
    assert suite["pass_at_k"]["value"] == 0.0 and suite["repeat"] == 3


def test_junit_and_html(project: Callable[..., Path], tmp_path: Path) -> None:
    root = project({"g.eval.yml": SUITE.replace("hello there", "<b>x</b> & hello")})
    report = tmp_path / "out" / "r.html"
    run = accord("eval", root / "g.eval.yml", "--format", "junit", "--report", report)
    suite = ET.fromstring(run.stdout).find("testsuite")
    assert suite is not None and suite.get("failures") == "2" and suite.get("tests") == "3"
    page = report.read_text()
    assert "&lt;b&gt;x&lt;/b&gt; &amp; hello" in page and "<b>x</b>" not in page
    assert "<script" not in page and "http" not in page.split("<body>")[1]


def test_command_target_trace_tool_calls_and_failures(project: Callable[..., Path]) -> None:
    agent = (
        "import json, sys\n"
        "case = json.load(sys.stdin)\n"
        "if case['id'] == 'crash':\n"
        "    sys.exit('exploded')\n"
        "if case['id'] == 'slow':\n"
        "    import time; time.sleep(30)\n"
        "print(json.dumps({'output': 'weather: sunny', 'tool_calls': "
        "[{'name': 'get_weather', 'arguments': {'city': case['input']}}]}))\n"
    )
    suite = f"""\
target: {{type: command, command: [{sys.executable!r}, agent.py], timeout: 2}}
evaluators:
  - {{type: tool_calls, calls: [{{name: get_weather, arguments: {{city: Paris}}}}]}}
  - {{type: contains, value: sunny}}
cases:
  - {{id: ok, input: Paris}}
  - {{id: wrong_city, input: Rome}}
  - {{id: crash, input: x}}
  - {{id: slow, input: x}}
"""
    root = project({"agent.py": agent, "w.eval.yml": suite})
    run = accord("eval", root / "w.eval.yml", "--format", "json")
    cases = {c["id"]: c for c in run.suite()["cases"]}
    assert cases["ok"]["status"] == "passed"
    assert cases["wrong_city"]["status"] == "failed"
    assert "exited with 1: exploded" in cases["crash"]["error"]
    assert cases["slow"]["status"] == "error" and "within 2 s" in cases["slow"]["error"]
    assert run.exit_code == 1


def test_python_target_and_negate_required(project: Callable[..., Path]) -> None:
    module = "def answer(text):\n    return {'answer': text.upper(), 'n': 3}\n"
    suite = """\
target: {type: python, function: "mymod:answer"}
evaluators:
  - {type: is_json}
  - {type: contains, value: SECRET, negate: true, required: true}
  - {type: json_schema, schema: {type: object, required: [answer, n]}}
cases:
  - {id: plain, input: hello}
  - {id: leaks, input: the secret}
"""
    root = project({"mymod.py": module, "p.eval.yml": suite})
    cases = {
        c["id"]: c for c in accord("eval", root / "p.eval.yml", "--format", "json").suite()["cases"]
    }
    assert cases["plain"]["status"] == "passed"
    assert cases["leaks"]["status"] == "failed"
    negated = next(e for e in cases["leaks"]["evaluations"] if e["name"] == "contains")
    assert negated["score"] == 0.0 and negated["required"] is True


def test_several_files_run_at_once_under_one_limit(project: Callable[..., Path]) -> None:
    module = """\
import asyncio
running = peak = 0

async def answer(text):
    global running, peak
    running += 1
    peak = max(peak, running)
    await asyncio.sleep(0.05)
    running -= 1
    return f"{text} (peak {peak})"
"""
    suite = """\
target: {type: python, function: "peakmod:answer"}
evaluators: [{type: contains, value: "peak"}]
cases: [{id: a, input: a}, {id: b, input: b}, {id: c, input: c}]
"""
    root = project({"peakmod.py": module, "one.eval.yml": suite, "two.eval.yml": suite})
    files = (root / "one.eval.yml", root / "two.eval.yml")
    run = accord("eval", *files, "--concurrency", "4", "--format", "json")
    assert run.exit_code == 0
    answers = [c["output"] for s in run.doc()["suites"] for c in s["cases"]]
    peaks = [int(a.rsplit(" ", 1)[1].rstrip(")")) for a in answers]
    # one file after the other would peak at 3 (its cases); each under its own limit, at 6
    assert max(peaks) == 4


def test_bad_input_exits_2_with_lines(project: Callable[..., Path]) -> None:
    schema = (
        "target: echo\nevaluators:\n  - {type: contans}\n"
        "  - {type: contains, threshold: {}}\ncases:\n  - {id: a, input: x}\n"
    )
    semantic = (
        "target: echo\nevaluators: [{type: is_json}]\ncases:\n  - {id: a, input: x}\n"
        "  - {id: a, input: y}\n  - {id: c, input: z, target: nosuchmodel}\n"
    )
    root = project({"b.eval.yml": schema, "s.eval.yml": semantic})
    run = accord("eval", root / "b.eval.yml")
    assert run.exit_code == 2
    assert (
        "b.eval.yml:3:5 evaluators[0]: unknown type 'contans': did you mean 'contains'?"
        in run.stderr
    )
    assert "known types: accuracy, assertions, battle" in run.stderr
    assert "evaluators[1].threshold: a threshold needs at least one bound" in run.stderr
    run = accord("eval", root / "s.eval.yml")
    assert run.exit_code == 2
    assert "s.eval.yml:5:" in run.stderr and "duplicate case id 'a'" in run.stderr
    assert "unknown model 'nosuchmodel'" in run.stderr
    assert "Traceback" not in run.stderr
    missing = accord("eval", root / "nope.eval.yml")
    assert missing.exit_code == 2 and "no such file" in missing.stderr


def test_everything_errored_exits_3(project: Callable[..., Path]) -> None:
    suite = 'target: {type: command, command: [sh, -c, "exit 4"]}\nevaluators: [{type: is_json}]\ncases: [{input: x}]\n'
    root = project({"e.eval.yml": suite})
    trust_project(root)  # inline code, or a program of the PATH: the test's own file
    run = accord("eval", root / "e.eval.yml")
    assert run.exit_code == 3 and "no case produced a result" in run.stderr


def test_resume_reruns_only_failed_cases(project: Callable[..., Path], tmp_path: Path) -> None:
    flag = tmp_path / "fail_once"
    flag.write_text("1")
    script = (
        "import json, os, sys\ncase = json.load(sys.stdin)\n"
        f"flag = {str(flag)!r}\n"
        "open(os.path.join(os.path.dirname(flag), 'calls.txt'), 'a').write(case['id'] + '\\n')\n"
        "if case['id'] == 'b' and os.path.exists(flag):\n    sys.exit('not yet')\n"
        "print(case['input'])\n"
    )
    suite = f"target: {{type: command, command: [{sys.executable!r}, s.py]}}\nevaluators: [{{type: contains, value: x}}]\ncases: [{{id: a, input: x1}}, {{id: b, input: x2}}]\n"
    root = project({"s.py": script, "r.eval.yml": suite})
    first = accord("eval", root / "r.eval.yml", "--format", "json")
    assert [c["status"] for c in first.suite()["cases"]] == ["passed", "error"]
    flag.unlink()
    again = accord("eval", root / "r.eval.yml", "--format", "json", "--resume", "last")
    assert [c["status"] for c in again.suite()["cases"]] == ["passed", "passed"]
    calls = (tmp_path / "calls.txt").read_text().split()
    assert sorted(calls) == ["a", "b", "b"]  # a was reused from the first run
    assert json.loads(again.stdout)["suites"][0]["run_id"] != first.suite()["run_id"]


def test_html_report_renders_in_chromium(project: Callable[..., Path], tmp_path: Path) -> None:
    import re

    import pytest

    from tests.commands.harness import HAS_CHROMIUM, PROBE, dump_dom

    if not HAS_CHROMIUM:
        pytest.skip("LOUD SKIP: /usr/bin/chromium is missing (.ci/run installs it)")
    root = project({"g.eval.yml": SUITE.replace("hello there", "<img src=x onerror=alert(1)>")})
    report = tmp_path / "r.html"
    accord("eval", root / "g.eval.yml", "--format", "html", "--output", report)
    page = tmp_path / "probed.html"
    page.write_text(report.read_text().replace("<head>", "<head>" + PROBE, 1))
    dom, console = dump_dom(page, tmp_path / "profile")
    html_tag = re.search(r"<html[^>]*>", dom)
    assert html_tag is not None and "data-js-error" not in html_tag.group(0)
    assert "Uncaught" not in console
    assert dom.count("<script>") == 1  # the probe only: the data did not become a script
    assert "<img" not in dom and "&lt;img src=x onerror=alert(1)&gt;" in dom
    for text in ("greetings", "Pass rate", "hi", "bye", "contains", "regex"):
        assert text in dom, text
    assert "<svg" in dom  # the chart of case scores


def test_the_html_report_shows_the_gate(project: Callable[..., Path], tmp_path: Path) -> None:
    root = project({"g.eval.yml": SUITE})
    report = tmp_path / "gate.html"
    run = accord("eval", root / "g.eval.yml", "--min-pass-rate", "0.5", "--report", report, "-q")
    assert run.exit_code == 1
    page = report.read_text()
    assert "Gate: --min-pass-rate 0.5, gate mean: FAILED: pass rate 0.3333 below 0.5000" in page
    accord("eval", root / "g.eval.yml", "--report", report, "-q")
    assert "Gate: none (no --min-pass-rate or --min-score given)" in report.read_text()
