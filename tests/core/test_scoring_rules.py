"""The scoring rules: each family's "passed" in one place (tasks/suites/core/scoring_rules.py).
Expected values: accord's own rule (SPEC.md's verdicts), promptfoo 0.118's
`assertionsResult.ts` (a test without assertions passes at 1; `if (threshold)`), AgentV's
`DEFAULT_THRESHOLD` 0.8 and its 0.6 borderline (packages/core/src/evaluation), AgentV 4's
orchestrator (a failed required grader makes the score 0)."""

from __future__ import annotations

import pytest

from accord.engine.errors import ConfigError
from accord.tasks.evaluators.base import Finding
from accord.tasks.suites.core import scoring_rules
from accord.tasks.suites.core.scoring_rules import SCORING_RULES, rule


def found(
    name: str, *, passed: bool | None, score: float | None = None, **extra: object
) -> Finding:
    return Finding(name, passed=passed, score=score, **extra)  # type: ignore[arg-type]


def test_every_family_has_its_rule_and_an_unknown_name_lists_them() -> None:
    assert set(SCORING_RULES.names()) == {"accord", "promptfoo", "agentv", "agentv4"}
    with pytest.raises(ConfigError, match="scoring rule 'nope'"):
        rule("nope")


def test_a_case_with_no_check_is_recorded_by_accord_and_passes_at_1_by_promptfoo() -> None:
    assert rule("accord").case([], None, None) == ("recorded", None)
    assert rule("promptfoo").case([], None, None) == ("passed", 1.0)


def test_a_failed_required_check_zeroes_the_score_under_agentv4_only() -> None:
    failing = [found("a", passed=False, score=0.5, required=True), found("b", passed=True)]
    assert rule("accord").case(failing, 0.75, None) == ("failed", 0.75)
    assert rule("agentv4").case(failing, 0.75, 0.8) == ("failed", 0.0)


def test_with_a_bar_the_score_decides_and_an_error_is_never_a_pass() -> None:
    checks = [found("a", passed=False, score=0.9)]
    accord = rule("accord")
    assert accord.case(checks, 0.9, 0.8) == ("passed", 0.9)
    assert accord.case(checks, 0.7, 0.8) == ("failed", 0.7)
    errored = [*checks, Finding("b", error="judge down")]
    assert accord.case(errored, 0.9, 0.8) == ("error", 0.9)
    assert accord.case([Finding("b", error="judge down")], None, None) == ("error", None)


def test_agentv_labels_by_its_bands() -> None:
    agentv = rule("agentv")
    assert [agentv.label("passed", s) for s in (0.8, 0.6, 0.59)] == ["pass", "borderline", "fail"]
    assert agentv.label("failed", 0.9) == "fail"  # a failed required check
    assert agentv.label("error", 0.9) == "error"
    assert rule("accord").label("passed", 0.9) is None
    assert agentv.trial_label("failed", 0.7) == "borderline"
    assert agentv.trial_label("failed", 0.85) == "fail"
    assert agentv.trial_label("passed", 0.1) == "pass"


def test_promptfoo_settles_a_set_by_each_assertion_or_by_its_threshold() -> None:
    promptfoo = SCORING_RULES.get("promptfoo")
    findings = [
        found("a", passed=True, score=1.0),
        found("b", passed=False, score=0.0, reason="no"),
    ]
    settled = promptfoo.settle(findings, [1.0, 1.0], [0, 1], None)
    assert (settled.passed, settled.score, settled.reason) == (False, 0.5, "no")
    settled = promptfoo.settle(findings, [1.0, 1.0], [0, 1], 0.5)
    assert (settled.passed, settled.reason) == (True, "Aggregate score 0.50 ≥ 0.5 threshold")
    settled = promptfoo.settle(findings, [1.0, 1.0], [0, 1], 0)
    assert settled.passed is False  # a threshold of 0 is none
    settled = promptfoo.settle(findings, [0.0, 0.0], [0, 1], None)
    assert settled.score == 0.0


def test_agentv4_settles_a_set_at_08_and_a_missed_minimum_zeroes_it() -> None:
    agentv4 = scoring_rules.agentv4()
    findings = [found("a", passed=True, score=0.9), found("b", passed=True, score=0.7)]
    settled = agentv4.settle(findings, [1.0, 1.0], [None, None], None)
    assert (settled.passed, settled.score) == (True, pytest.approx(0.8))
    settled = agentv4.settle(findings, [1.0, 1.0], [None, 0.75], None)
    assert (settled.passed, settled.score) == (False, 0.0)
    assert settled.reason == "required assertion(s) failed: b"


def test_an_answer_with_several_verdicts_passes_when_each_does() -> None:
    accord = rule("accord")
    assert accord.record([True, True]) is True
    assert accord.record([True, False]) is False
    assert accord.record([]) is None
    assert accord.record([True], lead=None) is None
