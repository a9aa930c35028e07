"""Trials: a suite's repeats of one case combined into that case's one result, as AgentV's
`trials.ts` combines them, so that a file's summary, gates and exit code count tests, not
trial runs.

The strategy is a reducer of core/reducers.py: `pass_at_k` scores the best trial (the case
passes when a trial passed), `mean` the mean, `confidence_interval` the lower bound of the
mean's 95% t-interval. A trial that errored scores 0 in the combination, as AgentV's
runEvalCase scores it; a case whose trials all errored stays an error.
"""

from __future__ import annotations

import dataclasses

from .cases import CaseResult, Suite
from .reducers import reduce_runs


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
    reduced = reduce_runs(suite.trials, scores, [t.status == "passed" for t in trials])
    score, aggregation = reduced.score, reduced.details
    best = best_run(scored)
    rule = suite.rule
    status = rule.trials(score, reduced.passed, suite.pass_score)
    verdict = best.verdict if rule.bands is None else rule.trial_label(status, score)
    # an errored trial's score is AgentV's TrialResult score: runEvalCase's 0
    summary = [
        {"attempt": t.repeat, "score": score_of, "verdict": t.verdict, "error": t.error}
        for t, score_of in zip(trials, scores, strict=True)
    ]
    metadata = {**best.metadata, "trials": summary, "aggregation": aggregation}
    return dataclasses.replace(
        best, score=score, status=status, verdict=verdict, error=None, metadata=metadata
    )


def best_run(runs: list[CaseResult]) -> CaseResult:
    """The run that stands for a case's runs: the best scored one (the first of equals), else
    the last (every run errored)."""
    scored = [r for r in runs if r.score is not None]
    return max(scored, key=lambda r: r.score or 0.0) if scored else runs[-1]
