"""Results as AgentV writes them: one JSON record per test (`--output results.jsonl`).

A record has `timestamp`, `test_id`, `dataset`, `score`, `verdict` (pass >= 0.8, borderline
>= 0.6, fail), `hits`, `misses`, `target`, `reasoning` and `evaluator_results` (`name`,
`type`, `score`, `weight`, `verdict`, `hits`, `misses`, `reasoning`, and a composite's own
`evaluator_results`). With trials, `trials` lists each one and `aggregation` says how they
were combined: `pass_at_k` (the best trial's score), `mean`, or `confidence_interval` (the
lower bound of the mean's 95% t-interval).
"""

from __future__ import annotations

import json
import math
import statistics
from datetime import UTC, datetime
from typing import Any

from accord.engine.masking import mask_data
from accord.tasks.evaluators.base import Finding
from accord.tasks.suites.agentv.evaluators import verdict_of
from accord.tasks.suites.core.cases import Case, CaseResult
from accord.tasks.suites.core.verdicts import SuiteRun

# two-sided 95% critical values of Student's t for 1..29 degrees of freedom (standard table)
T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045,
)  # fmt: skip


def t_critical(df: int) -> float:
    return T95[df - 1] if 1 <= df <= len(T95) else 1.96


def aggregate(scores: list[float], strategy: str) -> tuple[float, dict[str, Any]]:
    """The score of a test's trials under `strategy`, with what was computed."""
    if strategy == "pass_at_k":
        passed = sum(s >= 0.8 for s in scores)
        return max(scores), {"strategy": strategy, "passed": passed, "trials": len(scores)}
    mean = statistics.fmean(scores)
    if strategy == "mean":
        return mean, {"strategy": strategy, "mean": mean, "min": min(scores), "max": max(scores)}
    if len(scores) < 2:
        return mean, {"strategy": strategy, "mean": mean, "lower": mean, "upper": mean}
    half = t_critical(len(scores) - 1) * statistics.stdev(scores) / math.sqrt(len(scores))
    low, high = max(0.0, mean - half), min(1.0, mean + half)
    return low, {"strategy": strategy, "mean": mean, "lower": low, "upper": high}


def finding_record(finding: Finding) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": finding.name,
        "type": finding.kind,
        "score": finding.score,
        "weight": finding.weight,
        "verdict": "error" if finding.score is None else verdict_of(finding.score),
        "hits": finding.hits,
        "misses": finding.misses,
    }
    if finding.veto:
        record["verdict"] = "fail"
    if finding.reason:
        record["reasoning"] = finding.reason
    if finding.error:
        record["error"] = finding.error
    if finding.children:
        record["evaluator_results"] = [finding_record(c) for c in finding.children]
    return record


def _reasoning(result: CaseResult) -> str:
    parts = [f"{f.name}: {f.reason}" for f in result.findings if f.reason]
    return " | ".join(parts)


def case_record(run: SuiteRun, case: Case, trials: list[CaseResult]) -> dict[str, Any]:
    scored = [t for t in trials if t.score is not None]
    best = max(scored, key=lambda t: t.score or 0.0) if scored else trials[-1]
    record: dict[str, Any] = {
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "test_id": best.id,
        "dataset": getattr(case, "dataset", run.id),
    }
    if getattr(case, "conversation_id", None):
        record["conversation_id"] = getattr(case, "conversation_id", None)
    score = best.score
    if run.suite.trials and len(trials) > 1 and scored:
        score, aggregation = aggregate([t.score or 0.0 for t in scored], run.suite.trials)
        record["aggregation"] = aggregation
        record["trials"] = [
            {"attempt": t.repeat, "score": t.score, "verdict": t.verdict, "error": t.error}
            for t in trials
        ]
    verdict = (
        best.verdict if len(trials) == 1 else ("error" if score is None else verdict_of(score))
    )
    record.update(
        score=score,
        verdict=verdict,
        hits=[h for f in best.findings for h in f.hits],
        misses=[m for f in best.findings for m in f.misses],
        target=best.target,
        reasoning=_reasoning(best),
        evaluator_results=[finding_record(f) for f in best.findings],
    )
    if best.error:
        record["error"] = best.error
    if best.warnings:
        record["warnings"] = best.warnings
    return record


def render_jsonl(runs: list[SuiteRun]) -> str:
    lines = []
    for run in runs:
        cases = {case.id: case for case in run.suite.cases}
        for case_id, trials in run.repeats().items():
            record = case_record(run, cases[case_id], trials)
            lines.append(json.dumps(mask_data(record), ensure_ascii=False, default=str))
    return "\n".join(lines) + ("\n" if lines else "")
