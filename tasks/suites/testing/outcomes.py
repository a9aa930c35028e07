"""What a test produced: its runs, judged pairs or cases, metrics, and errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ....engine import codec
from ..core.reducers import Metric

TestKind = Literal["consistency", "custom", "cases"]


@dataclass
class RunRecord:
    """One run of the tested sub-DAG (or agent): its output text, or why it failed."""

    index: int
    output: str | None = None
    error: str | None = None
    score: float | None = None
    # the test's `evaluators:` on this run's answer
    checks: dict[str, bool | None] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    passed: bool | None = None
    reasoning: str = ""


@dataclass
class PairRecord:
    """A judged pair of runs (run indexes as in the file's `n`)."""

    runs: tuple[int, int]
    verdict: str | None
    source: str
    reasoning: str

    @property
    def consistent(self) -> bool:
        return self.verdict == "A"


@dataclass
class CaseRecord:
    """One case of a custom test or a `.test.yml`, for one run."""

    name: str
    prompt: str
    expected: str | None
    run: int = 0
    output: str | None = None
    passed: bool | None = None
    reasoning: str = ""
    error: str | None = None
    tags: list[str] = field(default_factory=list)
    checks: dict[str, bool | None] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    judge_errors: list[str] = field(default_factory=list)
    judge_calls: int = 0

    @property
    def recall(self) -> float | None:
        """Context recall, when the test measures it."""
        return self.scores.get("context_recall")

    @property
    def failed(self) -> bool:
        return self.passed is False


@dataclass
class TestOutcome:
    """The result of one test: metrics when it produced any, else `error` (its cause)."""

    __test__ = False  # not a pytest test class

    index: int
    name: str
    kind: TestKind
    target: str
    n: int
    metrics: dict[str, Metric] = field(default_factory=dict)
    runs: list[RunRecord] = field(default_factory=list)
    pairs: list[PairRecord] = field(default_factory=list)
    cases: list[CaseRecord] = field(default_factory=list)
    judge_calls: int = 0
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    task_description: str = ""
    seconds: float = 0.0

    @property
    def label(self) -> str:
        """`Test 3` (the position in the file), as threshold messages name tests."""
        return f"Test {self.index}"

    @property
    def title(self) -> str:
        return f"{self.label}: {self.name}"

    @property
    def accuracy(self) -> Metric | None:
        return self.metrics.get("accuracy")

    def case_label(self, case: CaseRecord) -> str:
        """A case's name, with its run number when each case runs more than once."""
        return f"{case.name} (run {case.run + 1})" if self.n > 1 else case.name

    @property
    def failed_runs(self) -> list[RunRecord]:
        return [r for r in self.runs if r.error is not None]


@dataclass
class SuiteResult:
    """Every test of one file, in file order, and the run's totals."""

    file: Path
    name: str
    tests: list[TestOutcome]
    seconds: float = 0.0
    usage: Any = None
    stats: dict[str, int] = field(default_factory=dict)
    run_id: str | None = None  # the run store's id of this file's run (`--resume RUN`)

    @property
    def produced(self) -> list[TestOutcome]:
        """Tests that produced a result (not an error)."""
        return [t for t in self.tests if t.error is None]

    @property
    def model_calls(self) -> int:
        return int(self.usage.total.calls) if self.usage is not None else 0


# a finished test's outcome is stored with its run, so `accord test --resume` can reuse it
for _name, _cls in (
    ("test_outcome", TestOutcome),
    ("test_run", RunRecord),
    ("test_pair", PairRecord),
    ("test_case", CaseRecord),
    ("test_metric", Metric),
):
    codec.register_dataclass(_name, _cls)
