"""A dot in an evaluator's name (an `.eval.yml` evaluator `name`, a promptfoo or AgentV 4
assertion's `metric`): every case runs and the name reaches the results as written. A node's
key joins the case's part and the evaluator's with a dot, so the evaluator's part has none."""

from __future__ import annotations

import json
from pathlib import Path

from tests.evals.conftest import accord

EVAL = """\
name: dots
target: echo
evaluators:
  - {type: contains, name: rouge.l}
  - {type: contains, name: rouge_l}
  - {type: contains, name: target}
  - {type: contains, name: verdict}
cases:
  - {id: c1, input: hi, expected: hi}
  - {id: c.2, input: hi, expected: nope}
"""


def test_evaluator_names_with_dots_run_every_case(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text("defaults: {}\n")
    (tmp_path / "x.eval.yml").write_text(EVAL)
    run = accord("eval", tmp_path / "x.eval.yml", "--cache", "off", "--format", "json")
    assert run.exit_code == 1, run.stderr  # c.2 fails its checks: no case errors
    cases = {c["id"]: c for c in run.suite()["cases"]}
    assert cases["c1"]["status"] == "passed"
    assert cases["c.2"]["status"] == "failed"
    for case in cases.values():
        assert [e["name"] for e in case["evaluations"]] == ["rouge.l", "rouge_l", "target",
                                                            "verdict"]  # fmt: skip
        assert case["error"] is None


def test_promptfoo_metric_with_a_dot(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text("defaults: {}\n")
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['{{q}}']\nproviders: [echo]\ntests:\n"
        "  - vars: {q: hello}\n"
        "    assert: [{type: contains, value: hell, metric: answer.quality}]\n"
    )
    out = tmp_path / "out.json"
    run = accord("eval", "-c", tmp_path / "promptfooconfig.yaml", "--cache", "off", "-o", out)
    assert run.exit_code == 0, run.stderr + run.stdout
    result = json.loads(out.read_text())["results"]["results"][0]
    assert result["success"] is True
    assert result["namedScores"] == {"answer.quality": 1}


def test_agentv4_metric_with_a_dot(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text("defaults: {}\n")
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "providers.yaml").write_text("- id: echo\n  label: e\n")
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "suite.yaml").write_text(
        'name: dots\nproviders: [e]\nprompts: ["{{ input }}"]\ntests:\n'
        "  - id: t1\n    vars: {input: hello}\n"
        "    assert: [{type: contains, value: hell, metric: q.v1}]\n"
    )
    run = accord("eval", tmp_path / "evals" / "suite.yaml", "--cache", "off", "--format", "json")
    assert run.exit_code == 0, run.stderr
    (case,) = run.suite()["cases"]
    assert case["status"] == "passed"
    assert [e["name"] for e in case["evaluations"]] == ["q.v1"]
