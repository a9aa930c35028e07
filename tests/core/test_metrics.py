"""Wilson intervals, context recall, the gate, and the minimal sub-DAG."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accord.engine.compile import compile_file
from accord.tasks.evaluators.rag import mean_best_similarity as context_recall
from accord.tasks.suites.core.reducers import Metric, proportion, wilson_interval
from accord.tasks.suites.core.subdag import ancestors, sub_plan
from accord.tasks.suites.testing.gate import check
from accord.tasks.suites.testing.outcomes import TestOutcome


def test_wilson_interval_known_values() -> None:
    # reference values of the Wilson score interval at 95%
    assert wilson_interval(6, 10) == pytest.approx((0.31267, 0.83182), abs=1e-5)
    assert wilson_interval(10, 10) == pytest.approx((0.72247, 1.0), abs=1e-5)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.27753), abs=1e-5)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@given(st.integers(min_value=1, max_value=500), st.data())
def test_wilson_interval_contains_the_proportion(total: int, data: st.DataObject) -> None:
    successes = data.draw(st.integers(min_value=0, max_value=total))
    low, high = wilson_interval(successes, total)
    assert 0.0 <= low <= successes / total <= high <= 1.0


def test_context_recall_is_the_mean_best_similarity() -> None:
    refs = ["SELECT COUNT(*) FROM users", "select 1"]
    assert context_recall(refs, ["select count(*)  from users;", "SELECT 1"]) == 1.0
    assert context_recall(refs, []) == 0.0
    half = context_recall(["abcd"], ["abxy", "zzzz"])
    assert half == pytest.approx(0.5)


def outcome(
    index: int, successes: int | None, total: int = 10, error: str | None = None
) -> TestOutcome:
    test = TestOutcome(index, f"t{index}", "consistency", "task", total, error=error)
    if successes is not None:
        metric = proportion("accuracy", successes, total, "pairs")
        assert isinstance(metric, Metric)
        test.metrics["accuracy"] = metric
    return test


def test_gate_messages() -> None:
    tests = [outcome(1, 9), outcome(2, 10), outcome(3, 39, 50), outcome(4, 7)]
    result = check(tests, 0.8, "all", "mean")
    assert not result.passed and result.failing == (3, 4)
    assert result.messages == ("2 test(s) below threshold 0.8000: Test 3: 0.7800, Test 4: 0.7000",)
    average = check([outcome(1, 10), outcome(2, 5)], 0.8, "average", "mean")
    assert average.messages == ("Average accuracy 0.7500 below threshold 0.8000",)
    assert check([outcome(1, 10), outcome(2, 6)], 0.8, "average", "mean").passed
    bound = check([outcome(1, 10), outcome(2, 6)], 0.8, "average", "lower-bound")
    assert bound.messages == ("Average accuracy lower bound 0.5176 below threshold 0.8000",)
    none = check([outcome(1, None)], 0.8, "average", "mean")
    assert none.passed and none.warning is not None
    errored = check([outcome(1, 10), outcome(2, None, error="boom")], 0.5, "average", "mean")
    assert errored.messages == ("1 test(s) produced no result: Test 2",)


WORKFLOW = """
tasks:
  - name: a
    type: formatter
    template: a
  - name: b
    type: formatter
    template: "{{ a }}"
  - name: c
    type: formatter
    template: c
  - name: d
    type: formatter
    template: "{{ b }} {{ c }}"
  - name: e
    type: formatter
    template: "{{ a }}"
"""


def test_sub_plan_keeps_only_the_ancestors(tmp_path: Path) -> None:
    path = tmp_path / "w.workflow.yml"
    path.write_text(WORKFLOW)
    plan = compile_file(path, tmp_path)
    assert ancestors(plan, "b") == {"a", "b"}
    sub = sub_plan(plan, "d")
    assert [t.name for t in sub.tasks] == ["a", "b", "c", "d"]
    assert {t.name: t.priority for t in sub.tasks} == {"a": 3, "b": 2, "c": 2, "d": 1}
    assert [t.name for t in sub_plan(plan, "e").tasks] == ["a", "e"]
