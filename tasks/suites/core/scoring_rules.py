"""Where "passed" is decided: one scoring rule per family of files, registered by name. A
`Suite` names its rule (`Suite.scoring`); the case verdict (`verdicts.decide`), the trials of
a case (`trials`), a set of checks combined into one result (promptfoo's assert-sets and
tests, AgentV 4's tests and conversations, AgentV's composites), the scenario judge and Oxy's
test records all ask it, so a new family adds a rule here rather than a flag to `Suite` and a
branch to each place.

- `accord`: a case passes when every gating check passes; with a pass bar (the case's
  `pass_score`, else the suite's), when its weighted score reaches it. An error with nothing
  failing is an `error`; a case no check gates is only `recorded`.
- `promptfoo` (0.118, `src/assertions/assertionsResult.ts`): accord's, and a test with no
  assertion passes at 1; a set of assertions passes when each passed or, with a threshold
  (0 is none: promptfoo tests `if (threshold)`), when the weighted mean reaches it.
- `agentv` (the older format, `packages/core/src/evaluation/`): accord's with AgentV's bar
  0.8 and its labels `pass` (>= 0.8), `borderline` (>= 0.6), `fail`; a composite's weighted
  average of its members' scores.
- `agentv4` (AgentV 4, `orchestrator.ts`, `graders/scoring.ts`): accord's, and a failed
  required check makes the case's score 0; a set passes when its weighted mean reaches the
  threshold (0.8 by default: DEFAULT_THRESHOLD), 0 when a required member scored below its
  minimum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from ....engine.registry import Registry
from ...evaluators.base import Finding

# AgentV's pass score and borderline score (DEFAULT_THRESHOLD; the older format's labels)
AGENTV_PASS = 0.8
AGENTV_BORDERLINE = 0.6
R = TypeVar("R", bound="ScoringRule")


@dataclass(frozen=True, slots=True)
class Settled:
    """A set of checks settled into one result: whether it passed, its score, why."""

    passed: bool
    score: float
    reason: str


def banded(score: float, bands: tuple[float, float]) -> str:
    """A score's label under (pass, borderline) bands: `pass`, `borderline` or `fail`."""
    passing, borderline = bands
    return "pass" if score >= passing else "borderline" if score >= borderline else "fail"


class ScoringRule:
    """accord's rule; the other families change what differs."""

    name: ClassVar[str] = "accord"
    # a failed required check makes the case's score 0
    required_zeroes: ClassVar[bool] = False
    # a case with no check at all passes with score 1 instead of being only recorded
    empty_passes: ClassVar[bool] = False
    # (pass, borderline): each case also gets a label from its score
    bands: ClassVar[tuple[float, float] | None] = None
    # the bar of a case's trials combined when neither the suite nor the reducer gives one
    trial_bar: ClassVar[float] = 0.8

    def case(
        self, findings: Sequence[Finding], score: float | None, bar: float | None
    ) -> tuple[str, float | None]:
        """A case's status and score from its checks' findings, its weighted score and its
        pass bar (None: every gating check decides)."""
        errors = [f for f in findings if f.error is not None]
        required_failed = [
            f for f in findings if (f.required and (f.passed is False or f.error)) or f.veto
        ]
        gating = [f for f in findings if f.passed is not None and (f.weight > 0 or f.required)]
        if required_failed:
            return "failed", 0.0 if self.required_zeroes else score
        if bar is not None and score is not None:
            if score >= bar:
                return ("error" if errors else "passed"), score
            return "failed", score
        if any(f.passed is False for f in gating):
            return "failed", score
        if errors:
            return "error", score
        if gating:
            return "passed", score
        if self.empty_passes and not findings:
            return "passed", 1.0
        return "recorded", score

    def label(self, status: str, score: float | None) -> str | None:
        """The case's label under the rule's bands (None without bands): `pass`,
        `borderline`, `fail`, or `error`; a failed case scoring above the bar is a `fail`."""
        if self.bands is None:
            return None
        if status == "error" or score is None:
            return "error"
        if status == "failed" and score >= self.bands[0]:
            return "fail"
        return banded(score, self.bands)

    def trial_label(self, status: str, score: float) -> str | None:
        """The label of a case's trials combined: `pass` when they passed, else by score
        (never `pass` when they failed)."""
        if self.bands is None:
            return None
        borderline = self.bands[1]
        if status == "passed":
            return "pass"
        return "borderline" if borderline <= score < self.bands[0] else "fail"

    def error_label(self) -> str | None:
        """The label of a case that could not be run at all."""
        return None if self.bands is None else "error"

    def trials(self, score: float, reduced: bool | None, bar: float | None) -> str:
        """The status of a case's trials combined: the reducer's verdict, else the reduced
        score against the bar."""
        if reduced is not None:
            return "passed" if reduced else "failed"
        return "passed" if score >= (self.trial_bar if bar is None else bar) else "failed"

    def record(self, verdicts: Sequence[bool], *, lead: bool | None = True) -> bool | None:
        """An answer with several verdicts (an Oxy test's checks of one answer): passed when
        each passed; none without a verdict, or when the lead check (the test's own judge)
        gave none."""
        if lead is None or not verdicts:
            return None
        return all(verdicts)

    def reaches(self, value: float, bar: float) -> bool:
        """Whether a score (or a judge's mean) reaches a bar."""
        return value >= bar


class PromptfooRule(ScoringRule):
    name = "promptfoo"
    empty_passes = True

    def settle(
        self,
        findings: Sequence[Finding],
        weights: Sequence[float],
        order: Sequence[int],
        threshold: float | None,
    ) -> Settled:
        """A test's (or an assert-set's) assertions, none in error, settled: the weighted mean
        score (0 when the weights add up to 0); pass when each passed, the reason of the last
        to fail in `order` (the order they settle in), or with a threshold the score decides."""
        total = sum((f.score or 0.0) * w for f, w in zip(findings, weights, strict=True))
        weight = sum(weights)
        score = total / weight if weight > 0 else 0.0
        failed = [i for i in order if findings[i].passed is False]
        passed = not failed
        reason = findings[failed[-1]].reason if failed else "All assertions passed"
        if threshold:  # promptfoo tests `if (threshold)`: a threshold of 0 is none
            passed = score >= threshold
            sign = "≥" if passed else "<"
            reason = f"Aggregate score {score:.2f} {sign} {threshold:g} threshold"
        return Settled(passed, score, reason)


class AgentVRule(ScoringRule):
    name = "agentv"
    bands = (AGENTV_PASS, AGENTV_BORDERLINE)

    def verdict(self, score: float) -> str:
        """AgentV's label of one score: `pass`, `borderline` or `fail`."""
        return banded(score, (AGENTV_PASS, AGENTV_BORDERLINE))

    def composite(self, findings: Sequence[Finding]) -> float:
        """A composite's score: its members' weighted average (0 when the weights are 0)."""
        total = sum(f.weight for f in findings)
        return sum(f.weight * (f.score or 0) for f in findings) / total if total else 0.0


class AgentV4Rule(ScoringRule):
    name = "agentv4"
    required_zeroes = True

    def bar(self, threshold: float | None) -> float:
        """The score a test passes at: its threshold, else AgentV's 0.8."""
        return AGENTV_PASS if threshold is None else threshold

    def settle(
        self,
        findings: Sequence[Finding],
        weights: Sequence[float],
        minimums: Sequence[float | None],
        threshold: float | None,
    ) -> Settled:
        """A test's assertions, none in error, settled: 0 when a required one (a minimum
        given) scored below it, else the weighted mean; pass at `threshold` (0.8 unless
        given)."""
        limit = self.bar(threshold)
        failed_required = [
            f.name
            for f, minimum in zip(findings, minimums, strict=True)
            if minimum is not None and (f.score or 0.0) < minimum
        ]
        weight = sum(weights)
        total = sum((f.score or 0.0) * w for f, w in zip(findings, weights, strict=True))
        score = 0.0 if failed_required or weight <= 0 else total / weight
        passed = score >= limit
        reason = (
            f"required assertion(s) failed: {', '.join(failed_required)}"
            if failed_required
            else f"score {score:.3f} {'>=' if passed else '<'} {limit:g}"
        )
        return Settled(passed, score, reason)


SCORING_RULES: Registry[ScoringRule] = Registry("scoring rule", plugins=False)
for _rule in (ScoringRule(), PromptfooRule(), AgentVRule(), AgentV4Rule()):
    SCORING_RULES.add(_rule.name, _rule)


def rule(name: str) -> ScoringRule:
    """The registered rule `name`."""
    return SCORING_RULES.get(name)


def _typed(name: str, kind: type[R]) -> R:
    found = SCORING_RULES.get(name)
    assert isinstance(found, kind)
    return found


def promptfoo() -> PromptfooRule:
    return _typed("promptfoo", PromptfooRule)


def agentv() -> AgentVRule:
    return _typed("agentv", AgentVRule)


def agentv4() -> AgentV4Rule:
    return _typed("agentv4", AgentV4Rule)
