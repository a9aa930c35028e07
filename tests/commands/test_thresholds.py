"""`--min-accuracy` with `--threshold-mode average | all` and `--gate mean | lower-bound`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.commands.conftest import JUDGE_YAML, Script, accord_test
from tests.fakes import Reply

TWO_TESTS = f"""
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
    task_ref: a
    n: 3
  - type: consistency
    task_ref: b
    n: 4
"""


@pytest.fixture
def two_tests(project: Callable[..., Path], script: Script) -> Path:
    script.answer("question a", "1")
    script.answer("question b", "1", "1", "1", "2")  # 3 of 6 pairs agree
    return project({"w.workflow.yml": TWO_TESTS})


def test_average_mode_fails_below_the_mean(two_tests: Path) -> None:
    args = ("--format", "json", "--max-concurrency", "1", "--cache", "off")
    run = accord_test(two_tests, *args, "--min-accuracy", "0.8")
    assert run.exit_code == 1
    assert run.doc["accuracy"] == [1.0, 0.5]  # the result is still printed
    assert run.stderr.strip().splitlines()[-1] == "Average accuracy 0.7500 below threshold 0.8000"
    assert "Average accuracy" not in run.stdout


def test_average_mode_passes_at_the_mean(two_tests: Path, script: Script) -> None:
    script.answer("question b", "1", "1", "1", "2")
    run = accord_test(
        two_tests, "--max-concurrency", "1", "--cache", "off", "--min-accuracy", "0.75"
    )
    assert run.exit_code == 0, run.stderr
    assert "below threshold" not in run.stderr


def _rows(passing: int, failing: int, tag: str) -> list[dict[str, object]]:
    good = [{"query": f"question {tag}{i}", "response": "1"} for i in range(passing)]
    bad = [{"query": f"question {tag}x{i}", "response": "0"} for i in range(failing)]
    return good + bad


FOUR_TESTS = f"""
model: fake
tests:
  - type: custom
    dataset: data/one.yml
    prompt: |
{JUDGE_YAML}
  - type: custom
    dataset: data/two.yml
    prompt: |
{JUDGE_YAML}
  - type: custom
    dataset: data/three.jsonl
    prompt: |
{JUDGE_YAML}
  - type: custom
    dataset: data/four.csv
    prompt: |
{JUDGE_YAML}
"""


@pytest.fixture
def four_tests(project: Callable[..., Path], script: Script) -> Path:
    """Accuracies 1.0, 0.9, 0.78 and 0.7, from YAML, YAML, JSONL and CSV datasets."""
    script.answer("question", "1")
    four = "query,response\n" + "".join(f"{r['query']},{r['response']}\n" for r in _rows(7, 3, "d"))
    return project(
        {
            "a.agent.yml": FOUR_TESTS,
            "data/one.yml": json.dumps(_rows(10, 0, "a")),
            "data/two.yml": json.dumps(_rows(9, 1, "b")),
            "data/three.jsonl": "\n".join(json.dumps(r) for r in _rows(39, 11, "c")),
            "data/four.csv": four,
        }
    )


def test_all_mode_names_each_test_below(four_tests: Path) -> None:
    run = accord_test(
        four_tests, "--format", "json", "--min-accuracy", "0.8", "--threshold-mode", "all"
    )
    assert run.exit_code == 1, run.stderr
    assert run.doc["accuracy"] == [1.0, 0.9, 0.78, 0.7]
    assert run.doc["accuracy_n"] == [10, 10, 50, 10]
    assert run.stderr.strip().splitlines()[-1] == (
        "2 test(s) below threshold 0.8000: Test 3: 0.7800, Test 4: 0.7000"
    )


def test_all_mode_passes_when_every_test_reaches_it(four_tests: Path) -> None:
    run = accord_test(four_tests, "--quiet", "--min-accuracy", "0.7", "--threshold-mode", "all")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.count("✅Eval finished with metrics:") == 4


def test_lower_bound_gate_uses_the_wilson_interval(four_tests: Path) -> None:
    common = ("--format", "json", "--min-accuracy", "0.6", "--threshold-mode", "all")
    mean = accord_test(four_tests, *common)
    assert mean.exit_code == 0, mean.stderr  # every accuracy is at least 0.6
    bound = accord_test(four_tests, *common, "--gate", "lower-bound")
    assert bound.exit_code == 1
    # Wilson 95% lower bounds: 10/10 0.7225, 9/10 0.5958, 39/50 0.6476, 7/10 0.3968
    assert bound.stderr.strip().splitlines()[-1] == (
        "2 test(s) below threshold 0.6000 (95% lower bound): Test 2: 0.5958, Test 4: 0.3968"
    )
    assert [round(ci[0], 4) for ci in bound.doc["accuracy_ci95"]] == [
        0.7225,
        0.5958,
        0.6476,
        0.3968,
    ]


def test_no_accuracy_metric_warns_and_passes(project: Callable[..., Path], script: Script) -> None:
    script.answer("question", "I did not query anything.")
    agent = (
        "model: fake\ntests:\n  - type: custom\n    dataset: rows.yml\n"
        "    metrics: [context_recall]\n"
    )
    rows = "- query: question one\n  relevant_contexts: [SELECT 1]\n"
    path = project({"a.agent.yml": agent, "rows.yml": rows})
    run = accord_test(path, "--format", "json", "--min-accuracy", "0.8", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert "accuracy" not in run.doc and run.doc["recall"] == 0.0
    assert "warning: no accuracy metric found: --min-accuracy 0.8000 was not checked" in run.stderr


@pytest.mark.parametrize("value", ["1.5", "-0.1", "high"])
def test_min_accuracy_outside_0_1_is_invalid(two_tests: Path, value: str) -> None:
    run = accord_test(two_tests, "--min-accuracy", value)
    assert run.exit_code == 2
    assert "--min-accuracy" in run.stderr


def test_a_test_without_result_fails_the_gate(two_tests: Path, script: Script) -> None:
    script.answer("question a", Reply.error(400, "refused"))
    run = accord_test(
        two_tests, "--cache", "off", "--min-accuracy", "0.1", "--threshold-mode", "all"
    )
    assert run.exit_code == 1
    assert "1 test(s) below threshold 0.1000: Test 1: error" in run.stderr
    assert "refused" in run.stderr
