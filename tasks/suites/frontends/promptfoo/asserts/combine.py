"""promptfoo's test result from its assertions' results (0.118,
`src/assertions/assertionsResult.ts` `AssertionsResult`).

- score: sum(score x weight) / sum(weight) over every assertion (weight 1 unless given);
  0 when the weights add up to 0.
- pass: every assertion passed (a `weight: 0` assertion always passes); with a `threshold`
  on the test (or on an assert-set) the score decides instead: pass when score >= threshold.
- reason: the reason of the last failed assertion to settle (promptfoo runs a test's
  assertions three at a time: see `settling_order`), else "All assertions passed"; with a
  threshold, "Aggregate score S >= T threshold" (or "<").
- named scores: for each `metric`, the sum of the scores of the assertions naming it.

An assertion that raised makes promptfoo's whole test an error; here, an assertion's error
makes the combined finding an error (never a score).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .....evaluators.base import Finding
from ....core.scoring_rules import promptfoo

if TYPE_CHECKING:
    from .base import PromptfooAssertion


def combine(
    findings: Sequence[Finding],
    assertions: Sequence[PromptfooAssertion],
    *,
    threshold: float | None = None,
    name: str = "assertions",
) -> Finding:
    """The test's (or an assert-set's) result from its assertions' findings, in order."""
    errors = [f for f in findings if f.error is not None]
    if errors:
        first = errors[0]
        return Finding(name, error=f"{first.name}: {first.error}", children=list(findings))
    if not findings:
        return Finding(name, score=1.0, passed=True, reason="No assertions")
    weights = [spec.weight for spec in assertions]
    settled = promptfoo().settle(findings, weights, settling_order(assertions), threshold)
    return Finding(
        name,
        score=settled.score,
        passed=settled.passed,
        reason=settled.reason,
        children=list(findings),
        metadata={"namedScores": named_scores(findings, assertions)},
    )


# how many assertions promptfoo checks at once (assertions/index.ts
# ASSERTIONS_MAX_CONCURRENCY)
AT_ONCE = 3


def settling_order(assertions: Sequence[PromptfooAssertion]) -> list[int]:
    """The order in which promptfoo's assertions of one test settle, whose last failure
    gives the test's reason (assertionsResult.ts addResult). runAssertions runs them
    AT_ONCE at a time, in order, each starting when a slot frees; an assert-set's members
    run in the same pool and the set settles after every other. Each type's `settles` is
    its time: 0 (checked in promptfoo's own process), 1 (a Python process), 2 (a model
    call); equal times settle in the order they started."""
    import heapq

    flat: list[tuple[int, int | None]] = []  # (time, the top-level index; None: a member)
    sets: list[int] = []
    for index, spec in enumerate(assertions):
        members = getattr(spec, "asserts", None)
        if members:
            sets.append(index)
            flat += [(getattr(m, "settles", 0), None) for m in members]
        else:
            wrapped = spec
            while hasattr(wrapped, "inner"):  # a transformed assertion settles as its own
                wrapped = wrapped.inner
            flat.append((getattr(wrapped, "settles", 0), index))
    running: list[tuple[int, int, int | None]] = []  # (finish, start order, index)
    settled: list[int] = []
    now = 0
    for started, (time, owner) in enumerate(flat):
        if len(running) == AT_ONCE:
            now, _, done = heapq.heappop(running)
            settled += [] if done is None else [done]
        heapq.heappush(running, (now + time, started, owner))
    while running:
        _, _, done = heapq.heappop(running)
        settled += [] if done is None else [done]
    return settled + sets


def named_scores(
    findings: Sequence[Finding], assertions: Sequence[PromptfooAssertion]
) -> dict[str, float]:
    """promptfoo's `namedScores`: per `metric`, the sum of its assertions' scores (an
    assert-set's own metric, and the metrics inside it, both count)."""
    scores: dict[str, float] = {}
    for found, spec in zip(findings, assertions, strict=True):
        if found.score is None:
            continue
        own = getattr(spec, "metric", None)  # AgentV's evaluators in a set have none
        if own:
            scores[own] = scores.get(own, 0.0) + found.score
        inner = found.metadata.get("namedScores") if isinstance(found.metadata, dict) else None
        for metric, value in (inner or {}).items():
            if metric != own:
                scores[metric] = scores.get(metric, 0.0) + value
    return scores
