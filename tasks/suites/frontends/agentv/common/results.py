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
from datetime import UTC, datetime
from typing import Any

from ......engine.masking import mask_data
from .....evaluators.base import Finding
from .....evaluators.cases import Case
from ....core.cases import CaseResult
from ....core.trials import best_run
from ....core.verdicts import SuiteRun
from ..v2.evaluators import verdict_of


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


def case_record(run: SuiteRun, case: Case, runs: list[CaseResult]) -> dict[str, Any]:
    """A test's record, rendered from what the run decided: a suite with trials has one
    result per test (core/trials.py), its trials and their aggregation in its metadata; of
    plain repeats the best run is shown, as trials are combined."""
    result = best_run(runs)
    record: dict[str, Any] = {
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "test_id": result.id,
        "dataset": getattr(case, "dataset", run.id),
    }
    if getattr(case, "conversation_id", None):
        record["conversation_id"] = getattr(case, "conversation_id", None)
    if "trials" in result.metadata:
        record["aggregation"] = result.metadata["aggregation"]
        record["trials"] = result.metadata["trials"]
    record.update(
        score=result.score,
        verdict=result.verdict,
        hits=[h for f in result.findings for h in f.hits],
        misses=[m for f in result.findings for m in f.misses],
        target=result.target,
        reasoning=_reasoning(result),
        evaluator_results=[finding_record(f) for f in result.findings],
    )
    if result.error:
        record["error"] = result.error
    if result.warnings:
        record["warnings"] = result.warnings
    return record


def render_jsonl(runs: list[SuiteRun]) -> str:
    lines = []
    for run in runs:
        cases = {case.id: case for case in run.suite.cases}
        for case_id, trials in run.repeats().items():
            record = case_record(run, cases[case_id], trials)
            lines.append(json.dumps(mask_data(record), ensure_ascii=False, default=str))
    return "\n".join(lines) + ("\n" if lines else "")
