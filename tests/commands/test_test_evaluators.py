"""`evaluators:` of the library on workflow tests, agent tests and `.test.yml` suites and cases:
their verdicts and scores per answer, their pass rates, and bad entries at their lines."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from accord.cli import main
from tests.commands.conftest import Script, accord_test
from tests.fakes import FakeOpenAI, Reply

WORKFLOW = """
variables:
  city: Paris
tasks:
  - name: greet
    type: formatter
    template: "Weather in {{ city }}: sunny, 21 C"
tests:
  - type: custom
    name: weather lines
    dataset: cities.yml
    workflow_variable_name: city
    evaluators:
      - {type: contains, value: sunny}
      - {type: regex, pattern: "in [A-Z][a-z]+:", name: capitalised}
      - {type: numeric, value: 20, tolerance: 3, name: degrees}
"""
CITIES = """
- {query: Paris, name: paris}
- {query: lyon, name: lyon}
- {query: Oslo, name: oslo}
"""


def test_custom_workflow_test_scores_with_evaluators_only(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    path = project({"weather.workflow.yml": WORKFLOW, "cities.yml": CITIES})
    run = accord_test(path, "--format", "json")
    assert run.exit_code == 0, run.stderr
    doc = run.doc
    # every answer holds "sunny" and 21 degrees; "lyon" is not capitalised
    assert doc["contains"] == 1.0 and doc["contains_n"] == 3
    assert doc["degrees"] == 1.0
    assert doc["capitalised"] == round(2 / 3, 6)
    assert doc["accuracy"] == round(2 / 3, 6) and doc["accuracy_n"] == 3
    assert doc["tests"][0]["cases"] == {"total": 3, "passed": 2, "failed": 1, "errors": 0}
    assert fake_llm.requests == []  # deterministic evaluators never call a model (no similarity)
    pretty = accord_test(path)
    assert "✗ lyon" in pretty.stdout and "capitalised:" in pretty.stdout
    assert "Capitalised: 66.67% (3 answers, 95% CI" in pretty.stdout


def test_evaluators_add_to_metrics_and_threshold_gates_a_score(
    project: Callable[..., Path], script: Script
) -> None:
    script.answer("Paris", "Paris has 2 museums")
    script.answer("Oslo", "Oslo has 3 museums")
    workflow = """
    variables:
      city: Paris
    tasks:
      - name: ask
        type: agent
        model: fake
        prompt: "{{ city }}"
    tests:
      - type: custom
        dataset: cities.yml
        workflow_variable_name: city
        metrics: [correctness]
        evaluators:
          - type: contains_all
            values: [museums, "2"]
            threshold: {gte: 1}
          - {type: contains_any, values: [gallery, museums], name: culture}
    """
    rows = """
    - {query: Paris, response: Paris has 2 museums., name: paris}
    - {query: Oslo, response: Oslo has 2 museums., name: oslo}
    """
    path = project({"m.workflow.yml": workflow, "cities.yml": rows})
    run = accord_test(path, "--format", "json")
    assert run.exit_code == 0, run.stderr
    doc = run.doc
    assert doc["accuracy"] == 0.5  # the correctness judge: Oslo's figure differs
    assert doc["contains_all"] == 0.5 and doc["culture"] == 1.0
    assert len(script.graded) == 2


SUITE = """
target: agents/analyst.agent.yml
evaluators:
  - {type: not_contains, value: Sorry}
  - {type: regex, pattern: "\\\\$", name: dollars}
cases:
  - name: total
    prompt: What is the total revenue?
    expected: Total revenue is $1,200.
  - name: top_region
    prompt: Which region sold most?
    expected: East, with 600 in sales.
    evaluators:
      - {type: contains, value: East, name: dollars}
"""
AGENT = "model: fake\nsystem_instructions: You analyse sales.\n"


def test_suite_and_case_evaluators_of_a_test_file(
    project: Callable[..., Path], script: Script
) -> None:
    script.answer("total revenue", "Sorry, the total is $1200.")
    script.answer("region sold most", "East sold 600.")
    path = project({"sales.test.yml": SUITE, "agents/analyst.agent.yml": AGENT})
    run = accord_test(path, "--format", "json")
    assert run.exit_code == 0, run.stderr
    doc = run.doc
    assert doc["accuracy"] == 1.0  # correctness: both figures match
    assert doc["not_contains"] == 0.5  # "Sorry" in the first answer
    assert doc["dollars"] == 1.0  # "$" in the first; the case's own `dollars` finds "East"
    assert doc["tests"][0]["cases"]["failed"] == 3  # the first case, in each of 3 runs
    junit = accord_test(path, "--format", "junit")
    assert junit.exit_code == 0
    assert "not_contains:" in junit.stdout


def test_consistency_test_evaluates_every_run(project: Callable[..., Path], script: Script) -> None:
    script.answer("How many", '{"orders": 4}', '{"orders": 4}', "four orders")
    workflow = """
    tasks:
      - name: ask
        type: agent
        model: fake
        prompt: How many orders?
    tests:
      - type: consistency
        n: 3
        evaluators:
          - {type: is_json}
    """
    path = project({"c.workflow.yml": workflow})
    run = accord_test(path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert run.doc["is_json"] == round(2 / 3, 6) and run.doc["is_json_n"] == 3
    assert "accuracy" in run.doc  # the pairwise judge's, unchanged
    script.answer("How many", '{"orders": 4}', '{"orders": 4}', "four orders")
    pretty = accord_test(path, "--cache", "off")
    # the runs ask at once: which one gets the third reply is the scheduler's affair
    assert len(re.findall(r"✗ run \d: four orders", pretty.stdout)) == 1, pretty.stdout


def test_bad_evaluator_entries_are_reported_at_their_lines(
    project: Callable[..., Path],
) -> None:
    workflow = """
    variables:
      city: Paris
    tasks:
      - name: greet
        type: formatter
        template: "{{ city }}"
    tests:
      - type: custom
        dataset: cities.yml
        workflow_variable_name: city
        metrics: [similarity]
        evaluators:
          - {type: contians, value: x}
          - {type: contains, value: x, threshold: {}}
      - type: consistency
        n: 2
        evaluators:
          - {type: correctness}
    """
    path = project({"bad.workflow.yml": workflow, "cities.yml": CITIES})
    run = accord_test(path)
    assert run.exit_code == 2
    err = run.stderr
    assert "Traceback" not in err
    assert re.search(
        r"bad\.workflow\.yml:13.*unknown type 'contians': did you mean 'contains'", err
    )
    assert "known types:" in err and "llm_judge" in err
    assert re.search(r"bad\.workflow\.yml:14.*threshold needs at least one bound", err)
    assert re.search(r"bad\.workflow\.yml:18.*consistency test has none", err)


def test_bad_case_evaluator_in_a_test_file(project: Callable[..., Path]) -> None:
    suite = SUITE.replace(
        "{type: contains, value: East, name: dollars}", "{type: contains, valu: x}"
    )
    path = project({"s.test.yml": suite, "agents/analyst.agent.yml": AGENT})
    run = accord_test(path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert re.search(r"s\.test\.yml:13.*cases\[1\]\.evaluators\[0\]\.valu", run.stderr), run.stderr
    assert "unknown key 'valu': did you mean 'value'" in run.stderr
    clash = SUITE.replace("value: Sorry}", "value: Sorry, name: correctness}")
    path = project({"s.test.yml": clash, "agents/analyst.agent.yml": AGENT})
    run = accord_test(path)
    assert run.exit_code == 2
    assert re.search(r"s\.test\.yml:3.*'correctness' is also a metric of this test", run.stderr)


def test_an_evaluators_max_concurrency_holds_in_tests(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    """Six answers judged by an `llm_judge` limited to 2 at a time: never more in flight."""
    lock = threading.Lock()
    flight = {"now": 0, "most": 0}

    def judge(body: dict[str, Any]) -> Reply:
        with lock:
            flight["now"] += 1
            flight["most"] = max(flight["most"], flight["now"])
        time.sleep(0.15)
        with lock:
            flight["now"] -= 1
        return Reply.tool("select_answer", {"reason": "fine", "answer": "yes"})

    fake_llm.responder = judge
    workflow = WORKFLOW.replace(
        "      - {type: contains, value: sunny}\n",
        "      - type: llm_judge\n"
        "        prompt: 'Is this a weather line? {{ output }}'\n"
        "        score_choices: [{name: 'yes', value: 1}, {name: 'no', value: 0}]\n"
        "        max_concurrency: 2\n",
    )
    rows = "\n".join(f"- {{query: City{i}, name: c{i}}}" for i in range(6))
    path = project({"weather.workflow.yml": workflow, "cities.yml": rows})
    run = accord_test(path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert run.doc["llm_judge"] == 1.0 and run.doc["llm_judge_n"] == 6
    assert len(fake_llm.requests) == 6 and flight["most"] == 2


def test_accord_eval_runs_a_test_file_as_a_suite(
    project: Callable[..., Path], script: Script
) -> None:
    script.answer("total revenue", "Sorry, the total is $1200.")
    script.answer("region sold most", "East sold 500.")
    path = project({"sales.test.yml": SUITE, "agents/analyst.agent.yml": AGENT})
    result = CliRunner().invoke(main, ["eval", str(path), "--format", "json"])
    assert result.exit_code == 1, result.stderr  # no gate, and cases failed
    (suite,) = json.loads(result.stdout)["suites"]
    cases = {c["id"]: c for c in suite["cases"]}
    found = {
        name: {e["name"]: e["passed"] for e in case["evaluations"]} for name, case in cases.items()
    }
    assert found == {
        "total": {"correctness": True, "not_contains": False, "dollars": True},
        "top_region": {"correctness": False, "not_contains": True, "dollars": True},
    }
    assert [c["status"] for c in cases.values()] == ["failed", "failed"]
    assert suite["judge_calls"] == 6  # 2 cases, 3 runs each (Oxy's default)
    gated = CliRunner().invoke(main, ["eval", str(path), "--min-score", "0.6", "-q"])
    assert gated.exit_code == 0, gated.stderr  # each case scores 2/3


def test_a_judge_metric_without_any_verdict_leaves_no_result(
    project: Callable[..., Path], script: Script, fake_llm: FakeOpenAI
) -> None:
    """Similarity gave no verdict on any answer: the recall beside it must not make the test
    look passed, in any format."""
    script.answer("Paris", "Paris is lovely")
    script.judge_text = lambda first, second: "I cannot tell."
    workflow = """
    variables:
      city: Paris
    tasks:
      - name: ask
        type: agent
        model: fake
        prompt: "{{ city }}"
    tests:
      - type: custom
        dataset: rows.yml
        workflow_variable_name: city
        metrics: [similarity, context_recall]
    """
    rows = "- {query: Paris, response: Paris is big, relevant_contexts: [SELECT 1], name: p}\n"
    path = project({"r.workflow.yml": workflow, "rows.yml": rows})
    pretty = accord_test(path, "--cache", "off")
    assert pretty.exit_code == 3
    assert "❌ no result" in pretty.stdout and "Recall" not in pretty.stdout
    assert "similarity gave no verdict on any of 1 answer(s)" in pretty.stderr
    doc = accord_test(path, "--format", "json", "--cache", "off")
    assert doc.exit_code == 3 and doc.doc["tests"][0]["status"] == "error"
    assert "recall" not in doc.doc
    junit = accord_test(path, "--format", "junit", "--cache", "off")
    assert "<error" in junit.stdout
