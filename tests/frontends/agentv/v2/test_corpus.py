"""Every file of AgentV's corpus runs unchanged under `accord eval`; scores computed by hand
from the scripted judge's answers (tests/frontends/agentv/v2/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI
from tests.frontends.agentv.v2.conftest import records

TARGETS = ("--targets", "targets.test.yaml")


def run(agentv: Path, file: str, *extra: str) -> dict[str, dict]:
    out = agentv.parent / "out.jsonl"
    result = accord("eval", file, *TARGETS, "--output", out, *extra)
    assert result.exit_code in (0, 1), result.stderr
    return records(out)


def test_weighted_evaluators(agentv: Path) -> None:
    found = run(agentv, "weighted-evaluators/evals/dataset.yaml")
    multi = found["weighted-multi-evaluator"]
    # safety 1.0 x3, quality 0.5 x2, style 0.2 x1
    assert multi["score"] == pytest.approx((3 * 1.0 + 2 * 0.5 + 0.2) / 6)
    assert multi["verdict"] == "borderline"
    weights = {e["name"]: e["weight"] for e in multi["evaluator_results"]}
    assert weights == {"safety-check": 3.0, "quality-check": 2.0, "style-check": 1.0}
    disabled = found["experimental-evaluator-disabled"]
    assert disabled["score"] == 1.0  # the 0.0 of the weight-0 evaluator is not counted
    assert [e["score"] for e in disabled["evaluator_results"]] == [1.0, 0.0]
    assert found["equal-weights-default"]["score"] == pytest.approx((1.0 + 0.8 + 0.9) / 3)
    assert found["equal-weights-default"]["verdict"] == "pass"
    assert {r["dataset"] for r in found.values()} == {"weighted-evaluators-examples"}


def test_composite_aggregators(agentv: Path, fake_llm: FakeOpenAI) -> None:
    found = run(agentv, "composite/evals/dataset.yaml")
    weighted = found["weighted-average-example"]["evaluator_results"][0]
    assert weighted["type"] == "composite"
    assert weighted["score"] == pytest.approx(0.3 * 1.0 + 0.7 * 0.5)
    assert [c["weight"] for c in weighted["evaluator_results"]] == [0.3, 0.7]
    # the node script gates on safety (0.5 < 0.8): score 0 whatever the quality
    gate = found["code-judge-safety-gate"]
    assert gate["score"] == 0.0 and gate["verdict"] == "fail"
    assert "Safety check failed" in gate["misses"]
    # the llm_judge aggregator is asked with its prompt file, the members' results in it
    conflict = found["llm-judge-conflict-resolution"]
    assert conflict["score"] == 0.85
    asked = [
        r["messages"][-1]["content"]
        for r in fake_llm.requests
        if r["messages"][-1]["content"].startswith("Review the child evaluator results")
    ]
    assert len(asked) == 1 and '"conciseness"' in asked[0] and '"score": 0.4' in asked[0]
    nested = found["nested-composite"]["evaluator_results"][0]
    content = 0.6 * 0.5 + 0.4 * 1.0
    assert nested["evaluator_results"][0]["score"] == pytest.approx(content)
    assert nested["score"] == pytest.approx(0.7 * content + 0.3 * 1.0)
    assert found["nested-composite"]["verdict"] == "borderline"


def test_basic_files_guidelines_and_code_judge(agentv: Path, fake_llm: FakeOpenAI) -> None:
    found = run(agentv, "basic/evals/dataset.yaml")
    assert set(found) == {
        "code-review-javascript", "code-gen-python-comprehensive", "feature-proposal-brainstorm",
        "coding-multiturn-debug-session", "shorthand-string-example",
        "shorthand-structured-output", "shorthand-array-syntax",
    }  # fmt: skip
    python = found["code-gen-python-comprehensive"]
    by_name = {e["name"]: e for e in python["evaluator_results"]}
    assert by_name["keyword_check"]["type"] == "code_judge"
    assert by_name["keyword_check"]["score"] == 1.0  # `uv run check_python_keywords.py`
    assert by_name["keyword_check"]["hits"] == [
        "Raises exceptions", "Contains docstrings", "Validates types with isinstance",
    ]  # fmt: skip
    assert by_name["code_correctness"]["score"] == 0.6
    assert python["score"] == pytest.approx(0.8) and python["target"] == "azure_base"
    assert python["conversation_id"] == "python-code-generation"
    # the guideline file goes to the system message, not into the user's text
    targets = [r for r in fake_llm.requests if "calculateTotal" in json.dumps(r["messages"])]
    sent = [
        r for r in targets if r["messages"][0]["content"].startswith("You are an expert software")
    ]
    assert len(sent) == 1
    system, user = sent[0]["messages"][0]["content"], sent[0]["messages"][1]["content"]
    assert "SUPERSECRET_INSTRUCTION_MARKER_JAVASCRIPT" in system
    assert "SUPERSECRET" not in user and "calculateTotal" in user
    # expected output file blocks are read into the reference answer the judge sees
    judged = [
        r["messages"][-1]["content"]
        for r in fake_llm.requests
        if r["messages"][-1]["content"].startswith("# Code Correctness Judge")
    ]
    snippet = (agentv / "basic/evals/snippets/python-second-largest.md").read_text().strip()
    assert len(judged) == 1 and snippet.splitlines()[2] in judged[0]
    for case_id in ("feature-proposal-brainstorm", "shorthand-string-example"):
        assert found[case_id]["evaluator_results"][0]["type"] == "llm_judge"
        assert found[case_id]["score"] == 0.9 and found[case_id]["verdict"] == "pass"


def test_jsonl_dataset_with_sidecar(agentv: Path) -> None:
    found = run(agentv, "basic-jsonl/evals/dataset.jsonl")
    assert len(found) == 7
    assert {r["dataset"] for r in found.values()} == {"basic-jsonl"}
    assert found["code-gen-python"]["target"] == "azure_base"
    assert found["shorthand-string-example"]["target"] == "default"
    assert all(r["score"] == 0.9 for r in found.values())


def test_tool_trajectory_modes(agentv: Path) -> None:
    found = run(agentv, "tool-trajectory-simple/evals/dataset.yaml")
    scores = {k: v["score"] for k, v in found.items()}
    assert scores == {
        "any-order-pass": 1.0, "in-order-pass": 1.0, "exact-auth-flow": 1.0,
        "metrics-check": 1.0, "partial-match": pytest.approx(2 / 3), "exact-args-match": 1.0,
        "skip-args-validation": 1.0,
    }  # fmt: skip
    assert found["partial-match"]["verdict"] == "borderline"
    assert found["partial-match"]["misses"] == ["generateReport: called 0 times (required >= 1)"]
    assert found["any-order-pass"]["target"] == "mock_agent"


def test_latency_assertions(agentv: Path) -> None:
    found = run(agentv, "latency-assertions/evals/dataset.yaml", "--target", "mock_agent")
    assert found["latency-pass"]["score"] == 1.0
    assert found["latency-fail"]["score"] == 0.5  # found Read, but 45 ms > 10 ms
    assert "Read took 45 ms (max 10 ms)" in found["latency-fail"]["misses"]
    assert found["mixed-latency"]["score"] == 1.0
    assert found["exact-with-latency"]["score"] == 1.0
    assert found["latency-with-args"]["score"] == 1.0


def test_every_corpus_file_loads(agentv: Path) -> None:
    from accord.tasks.suites.frontends.agentv.frontend import is_agentv_file
    from accord.tasks.suites.frontends.agentv.v2.files import load_agentv_file

    files = sorted(agentv.rglob("dataset.yaml")) + sorted(agentv.rglob("dataset.jsonl"))
    eval_files = [f for f in files if is_agentv_file(f)]
    assert len(eval_files) == 6  # basic-jsonl/evals/dataset.yaml is the sidecar
    total = 0
    for file in eval_files:
        suite = load_agentv_file(file, targets_file=agentv / "targets.test.yaml")
        total += len(suite.cases)
    assert total == 33


def test_pretty_and_json_formats_show_bands(agentv: Path) -> None:
    result = accord("eval", "weighted-evaluators/evals/dataset.yaml", *TARGETS, "--format", "json")
    assert result.exit_code == 1  # a borderline case does not pass
    cases = {c["id"]: c for c in result.suite()["cases"]}
    assert cases["weighted-multi-evaluator"]["verdict"] == "borderline"
    assert cases["weighted-multi-evaluator"]["status"] == "failed"
    assert cases["experimental-evaluator-disabled"]["status"] == "passed"
    pretty = accord("eval", "weighted-evaluators/evals/dataset.yaml", *TARGETS)
    assert "borderline" in pretty.stdout
