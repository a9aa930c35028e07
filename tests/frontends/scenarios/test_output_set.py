"""`accord eval --output-dir DIR` writes one set of files: a scenario suite's run its own
page and JSON (seed 003's report), the other suites `results.json` and `report.html`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.evals.conftest import accord

SCENARIOS = (
    "agent_class: scen_agents.Echo\n"
    "scenarios:\n  - {expected_output: ok, name: A, input_message: a}\n"
)
SUITE = "target: echo\nevaluators: [{type: contains, value: hi}]\ncases: [{id: hi, input: hi}]\n"


def test_a_scenario_run_writes_only_its_own_report(scenario_project: Callable[..., Path]) -> None:
    root = scenario_project(SCENARIOS)
    result = accord("eval", root / "scenarios.yaml", "--project-root", root,
                    "--output-dir", root / "out")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    names = sorted(p.name for p in (root / "out").iterdir())
    run_id = json.loads((root / "out" / names[1]).read_text())["run_id"]
    assert names == [f"scenarios-{run_id}.html", f"scenarios-{run_id}.json"]
    assert f"report: {root / 'out' / names[0]} (and {names[1]})" in result.stderr
    assert not (root / "reports").exists()  # not also in the default folder


def test_scenarios_and_an_eval_file_each_write_their_own_set(
    scenario_project: Callable[..., Path],
) -> None:
    root = scenario_project(SCENARIOS, {"g.eval.yml": SUITE})
    result = accord("eval", root / "scenarios.yaml", root / "g.eval.yml", "--project-root", root,
                    "--output-dir", root / "out", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    names = sorted(p.name for p in (root / "out").iterdir())
    assert names[:2] == ["report.html", "results.json"] and len(names) == 4
    assert names[2].startswith("scenarios-") and names[2].endswith(".html")
    generic = json.loads((root / "out" / "results.json").read_text())
    assert [s["cases"][0]["id"] for s in generic["suites"]] == ["hi"]  # only the eval file
    assert "<h2 id='g'>" in (root / "out" / "report.html").read_text()
    # stdout still holds every suite
    assert sorted(s["cases"][0]["id"] for s in json.loads(result.stdout)["suites"]) == ["A", "hi"]
