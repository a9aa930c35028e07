"""`accord test --baseline ... --fail-on-regression`: the gate on Oxy `.test.yml` cases, each
run 3 times (`runs` defaults to 3) and so compared by its mean over its runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.frontends.oxy.harness import SUITE, invoke, project

__all__ = ["project"]
FILE = "agents/sales.agent.test.yml"


def test_a_case_that_stops_passing_fails_the_gate(project: Path) -> None:
    baseline = project / "out" / "main.json"
    first = invoke("test", FILE, "--output-json", baseline, "--format", "json")
    assert first.exit_code == 0, first.output
    cases = json.loads(baseline.read_text())["tests"][0]["cases"]
    assert {c["name"] for c in cases} == {"case 0", "eu"}
    (project / FILE).write_text(SUITE.replace('expected: "10"', 'expected: "11"'))
    gate = ("--baseline", str(baseline), "--fail-on-regression")
    run = invoke("test", FILE, "--format", "json", *gate, "any")
    assert run.exit_code == 1, run.output
    assert "eu: passed -> failed" in run.stderr
    assert "each case is compared by its mean over its samples" in run.stderr
    # 1 case of 2 dropped: no paired test can call that significant
    assert invoke("test", FILE, "--format", "json", *gate, "significant").exit_code == 0
    stored = invoke("test", FILE, "--baseline", "last", "--fail-on-regression", "any")
    assert stored.exit_code == 2  # accord test keeps no runs: its baseline is a file
    assert "records no runs in the run store" in stored.stderr
    assert "accord test --output-json FILE" in stored.stderr


def test_a_figures_only_result_is_refused_as_a_baseline(project: Path) -> None:
    figures = project / "figures.json"
    figures.write_text(invoke("test", FILE, "--format", "json").stdout)
    run = invoke("test", FILE, "--baseline", figures)
    assert run.exit_code == 2
    assert "holds figures, not cases" in run.stderr and "--output-json" in run.stderr
