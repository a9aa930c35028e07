"""One shape for a run whichever way it reached us: a stored run, an `accord eval --format
json` file, an `accord test --output-json` file, or the `SuiteRun`s of the run just made.

A run holds suites; a suite holds cases by id; a case holds one sample per repeat (trial).
The comparison only ever reads these records, and only intake.py makes them: every value in
them is checked (a finite score, a known status, text for names).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Evaluation:
    """One evaluator's finding on one sample."""

    name: str
    passed: bool | None
    score: float | None
    reason: str = ""
    error: str | None = None


@dataclass(frozen=True)
class Sample:
    """One repeat of a case: its status (`passed`, `failed`, `error`, `recorded`), score and
    findings."""

    status: str
    score: float | None
    evaluations: tuple[Evaluation, ...] = ()
    error: str | None = None
    tags: tuple[str, ...] = ()


@dataclass
class CaseRecord:
    """A case and its samples (one per repeat)."""

    id: str
    samples: list[Sample] = field(default_factory=list)

    @property
    def judged(self) -> list[Sample]:
        return [s for s in self.samples if s.status != "recorded"]

    @property
    def pass_fraction(self) -> float | None:
        """The share of its judged samples that passed (errors count as not passed)."""
        judged = self.judged
        return sum(s.status == "passed" for s in judged) / len(judged) if judged else None

    @property
    def status(self) -> str:
        """`passed` when every judged sample passed, `error` when one errored and none
        failed, `failed` when one failed, `recorded` without a verdict."""
        statuses = {s.status for s in self.judged}
        if not statuses:
            return "recorded"
        if "failed" in statuses:
            return "failed"
        return "error" if "error" in statuses else "passed"

    @property
    def score(self) -> float | None:
        scores = [s.score for s in self.samples if s.score is not None]
        return statistics.fmean(scores) if scores else None

    @property
    def errors(self) -> list[str]:
        return [s.error for s in self.samples if s.error]

    def evaluator(self, name: str) -> tuple[float | None, float | None]:
        """This evaluator's (pass fraction, mean score) over the case's samples."""
        found = [e for s in self.samples for e in s.evaluations if e.name == name]
        verdicts = [e.passed for e in found if e.passed is not None]
        scores = [e.score for e in found if e.score is not None]
        return (
            sum(verdicts) / len(verdicts) if verdicts else None,
            statistics.fmean(scores) if scores else None,
        )

    def failing_reasons(self) -> list[str]:
        """Why its samples did not pass: each failed or errored evaluator with its reason."""
        reasons: list[str] = []
        for sample in self.samples:
            if sample.error:
                reasons.append(f"error: {sample.error}")
            for e in sample.evaluations:
                if e.error:
                    reasons.append(f"{e.name}: error: {e.error}")
                elif e.passed is False:
                    reasons.append(f"{e.name}: {e.reason or 'failed'}")
        return list(dict.fromkeys(reasons))


@dataclass
class SuiteRecord:
    """A suite's cases in one run."""

    name: str
    cases: dict[str, CaseRecord] = field(default_factory=dict)
    repeat: int = 1

    def add(self, case_id: str, sample: Sample) -> None:
        self.cases.setdefault(case_id, CaseRecord(case_id)).samples.append(sample)

    @property
    def evaluator_names(self) -> list[str]:
        names = (e.name for c in self.cases.values() for s in c.samples for e in s.evaluations)
        return list(dict.fromkeys(names))


@dataclass
class RunRecord:
    """A run (or a results file) as the comparison sees it."""

    label: str  # the run id, or the file's path
    suites: dict[str, SuiteRecord] = field(default_factory=dict)
    source: str = "store"  # or "file", or "this run"
    started: float | None = None
    run_ids: list[str] = field(default_factory=list)
    workflows: list[str] = field(default_factory=list)  # the store's names of its runs
    problems: list[str] = field(default_factory=list)  # values read as missing, and why

    def suite(self, name: str) -> SuiteRecord:
        return self.suites.setdefault(name, SuiteRecord(name))
