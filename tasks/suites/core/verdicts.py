"""A case's verdict from its findings, and a suite's figures with their intervals.

Case score: the weighted mean of the findings that have a score and a weight above 0.
Verdict: the suite's scoring rule's (`scoring_rules`, accord's by default: `failed` when a
required evaluator failed or errored, or, without a pass bar (the case's `pass_score`, else
the suite's), any gating evaluator failed; with one, the score decides; an evaluator error
with nothing failing makes the case an `error`, never a pass; `recorded`: no evaluator gates
the case).

Suite figures: the pass rate over cases with a verdict (errors count as not passed) with its
95% Wilson interval; the mean score with a 95% interval; per-evaluator pass rates and means;
with repeats, pass@k (a case passes when any of its k repeats does) and pass^k (all do).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...evaluators.base import Finding
from ...evaluators.cases import Case, Output
from .cases import CaseResult, Suite
from .reducers import Metric, mean_interval, mean_metric, proportion, reduce_runs


def decide(
    suite: Suite, case: Case, repeat: int, output: Output, findings: list[Finding]
) -> CaseResult:
    counted = [f for f in findings if f.score is not None and f.weight > 0]
    weights = sum(f.weight for f in counted)
    score = sum(f.weight * (f.score or 0.0) for f in counted) / weights if weights else None
    if len(counted) == 1 and _same_score(counted[0]):
        score = counted[0].score  # the same value, not one more float a case keeps to the end
    rule = suite.rule
    status, score = rule.case(findings, score, pass_bar(suite, case))
    error = None
    if status == "error":
        error = "; ".join(f"{f.name}: {f.error}" for f in findings if f.error is not None)
    return CaseResult(
        verdict=rule.label(status, score),
        target=case.target,
        id=case.id,
        repeat=repeat,
        status=status,
        input=case.input,
        expected=case.expected,
        output=output.text,
        score=score,
        findings=findings,
        error=error,
        tags=list(case.tags),
        # the target's own measure of its request when it has one (a model call's time,
        # without the wait for a slot), as promptfoo's latencyMs times callApi alone
        seconds=output.seconds if output.duration_ms is None else output.duration_ms / 1000,
        # the case's own, not a copy per result (nothing changes a result's metadata in place; a
        # trial's summary makes a new one), which a million cases would each hold
        metadata=case.metadata if isinstance(case.metadata, dict) else {},
        usage=output.usage,
        cost=output.cost,
    )


def _same_score(finding: Finding) -> bool:
    """Whether a lone finding's weighted mean is its own score: weight 1, a float score
    (not -0.0, which the sum makes 0.0)."""
    score = finding.score
    return (
        finding.weight == 1
        and type(score) is float
        and (score != 0.0 or math.copysign(1.0, score) > 0)
    )


def pass_bar(suite: Suite, case: Case) -> float | None:
    """The score a case passes at: its own bar, else the suite's (None: no bar, every gating
    evaluator decides)."""
    return case.pass_score if case.pass_score is not None else suite.pass_score


@dataclass
class EvaluatorFigures:
    name: str
    pass_rate: Metric | None
    mean: Metric | None
    errors: int
    skipped: int
    judge_calls: int
    scoring: list[str]


@dataclass
class SuiteRun:
    """A suite's results: every case (times repeats) in order, and the run's totals."""

    suite: Suite
    cases: list[CaseResult]
    seconds: float = 0.0
    usage: Any = None
    stats: dict[str, int] = field(default_factory=dict)
    run_id: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.suite.id

    def counts(self) -> dict[str, int]:
        out = {"passed": 0, "failed": 0, "error": 0, "recorded": 0}
        for case in self.cases:
            out[case.status] = out.get(case.status, 0) + 1
        return out

    @property
    def judged(self) -> list[CaseResult]:
        return [c for c in self.cases if c.status != "recorded"]

    def pass_rate(self) -> Metric | None:
        judged = self.judged
        return proportion(
            "pass_rate", sum(c.status == "passed" for c in judged), len(judged), "cases"
        )

    def mean_score(self) -> Metric | None:
        return mean_metric("score", [c.score for c in self.cases if c.score is not None], "cases")

    def score_interval(self) -> tuple[float, float] | None:
        return mean_interval([c.score for c in self.cases if c.score is not None])

    def repeats(self) -> dict[str, list[CaseResult]]:
        groups: dict[str, list[CaseResult]] = {}
        for case in self.cases:
            groups.setdefault(case.id, []).append(case)
        return groups

    def pass_at_k(self) -> tuple[Metric | None, Metric | None]:
        """(pass@k, pass^k) over cases, k = the suite's repeat; (None, None) without repeats."""
        if self.suite.repeat < 2:
            return None, None
        groups = [g for g in self.repeats().values() if any(c.status != "recorded" for c in g)]
        runs = [_runs(g) for g in groups]
        any_pass = sum(bool(reduce_runs("pass_at_k", *r).passed) for r in runs)
        all_pass = sum(bool(reduce_runs("pass_hat_k", *r).passed) for r in runs)
        k = self.suite.repeat
        return (
            proportion(f"pass@{k}", any_pass, len(groups), "cases"),
            proportion(f"pass^{k}", all_pass, len(groups), "cases"),
        )

    def evaluators(self) -> list[EvaluatorFigures]:
        names: list[str] = []
        for case in self.cases:
            for finding in case.findings:
                if finding.name not in names:
                    names.append(finding.name)
        out = []
        for name in names:
            found = [f for c in self.cases for f in c.findings if f.name == name]
            verdicts = [f.passed for f in found if f.passed is not None]
            scores = [f.score for f in found if f.score is not None and f.error is None]
            errors = [f for f in found if f.error is not None]
            out.append(
                EvaluatorFigures(
                    name=name,
                    pass_rate=proportion(
                        name, sum(bool(v) for v in verdicts), len(verdicts) + len(errors), "cases"
                    ),
                    mean=mean_metric(name, scores, "cases"),
                    errors=len(errors),
                    skipped=sum(1 for f in found if f.skipped),
                    judge_calls=sum(f.judge_calls for f in found),
                    scoring=sorted({f.scoring for f in found if f.scoring}),
                )
            )
        return out

    @property
    def judge_calls(self) -> int:
        return sum(c.judge_calls for c in self.cases)

    @property
    def judge_calls_saved(self) -> int:
        return self.stats.get("judge_calls_saved", 0)


def _runs(group: list[CaseResult]) -> tuple[list[float], list[bool]]:
    """A case's runs as a reducer takes them: scores (an error scores 0) and passes."""
    scores = [c.score if c.score is not None and c.status != "error" else 0.0 for c in group]
    return scores, [c.status == "passed" for c in group]
