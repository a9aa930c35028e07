"""Trials: a suite's repeats of one case combined into that case's one result, as AgentV's
`trials.ts` combines them, so that a file's summary, gates and exit code count tests, not
trial runs.

`pass_at_k` scores the best trial (the case passes when a trial passed), `mean` the mean,
`confidence_interval` the lower bound of the mean's 95% t-interval (Student's t table of
AgentV's `getTCritical`, 1.96 from 30 degrees of freedom). A trial that errored scores 0 in
the combination, as AgentV's runEvalCase scores it; a case whose trials all errored stays an
error.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from typing import Any

from accord.tasks.suites.core.cases import CaseResult, Suite

# two-sided 95% critical values of Student's t for 1..29 degrees of freedom (standard table)
T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045,
)  # fmt: skip


def t_critical(df: int) -> float:
    return T95[df - 1] if 1 <= df <= len(T95) else 1.96


def _js_sum(values: list[float]) -> float:
    """Left to right, as AgentV's `reduce` adds (Python's `sum` compensates rounding, so a
    mean could differ from AgentV's in the last bit and cross the 0.8 line)."""
    return functools.reduce(operator.add, values, 0.0)


def aggregate(
    scores: list[float], strategy: str, passed: int | None = None
) -> tuple[float, dict[str, Any]]:
    """The score of a case's trials under `strategy`, with what was computed (`passed`:
    how many trials passed, for pass_at_k; default: those scoring 0.8 or more)."""
    if strategy == "pass_at_k":
        count = passed if passed is not None else sum(s >= 0.8 for s in scores)
        return max(scores), {"strategy": strategy, "passed": count, "trials": len(scores)}
    mean = _js_sum(scores) / len(scores)
    if strategy == "mean":
        return mean, {"strategy": strategy, "mean": mean, "min": min(scores), "max": max(scores)}
    if len(scores) < 2:
        return mean, {"strategy": strategy, "mean": mean, "lower": mean, "upper": mean}
    stddev = math.sqrt(_js_sum([(s - mean) ** 2 for s in scores]) / (len(scores) - 1))
    half = t_critical(len(scores) - 1) * (stddev / math.sqrt(len(scores)))
    low, high = max(0.0, mean - half), min(1.0, mean + half)
    return low, {"strategy": strategy, "mean": mean, "lower": low, "upper": high}


def combine_trials(suite: Suite, results: list[CaseResult]) -> list[CaseResult]:
    """One result per case: its trials combined under `suite.trials` (results unchanged
    without trials). The combined result is the best trial's, with the combined score and
    status, and `metadata["trials"]`/`["aggregation"]` saying how it was reached."""
    if not suite.trials or suite.repeat < 2:
        return results
    groups: dict[str, list[CaseResult]] = {}
    for result in results:
        groups.setdefault(result.id, []).append(result)
    return [_combined(suite, trials) for trials in groups.values()]


def _combined(suite: Suite, trials: list[CaseResult]) -> CaseResult:
    scored = [t for t in trials if t.score is not None]
    if not scored or suite.trials is None:
        return trials[-1]
    scores = [t.score if t.score is not None and t.status != "error" else 0.0 for t in trials]
    passed = sum(t.status == "passed" for t in trials)
    score, aggregation = aggregate(scores, suite.trials, passed)
    best = max(scored, key=lambda t: t.score or 0.0)
    pass_score = suite.pass_score if suite.pass_score is not None else 0.8
    if suite.trials == "pass_at_k":
        status = "passed" if passed else "failed"
    else:
        status = "passed" if score >= pass_score else "failed"
    verdict = best.verdict
    if suite.bands is not None:
        passing, borderline = suite.bands
        verdict = "pass" if status == "passed" else "borderline" if score >= borderline else "fail"
        if status != "passed" and score >= passing:
            verdict = "fail"
    summary = [
        {"attempt": t.repeat, "score": t.score, "verdict": t.verdict, "error": t.error}
        for t in trials
    ]
    metadata = {**best.metadata, "trials": summary, "aggregation": aggregation}
    return dataclasses.replace(
        best, score=score, status=status, verdict=verdict, error=None, metadata=metadata
    )
