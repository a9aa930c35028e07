"""The one shape every evaluation front-end compiles into: a suite of cases and what was found.

A `Suite` holds `Case`s (the evaluator contract, tasks/evaluators/cases.py), the targets that
answer them and the evaluators that check the answers. The core (`core.nodes`) turns it into
target, evaluator and verdict nodes of one plan; every front-end (eval files, `.test.yml`,
scenario suites, conversations, the Python API) builds a `Suite`, and every report reads the
`SuiteRun` it produces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....engine import codec
from ...evaluators.base import EvaluatorSpec, Finding
from ...evaluators.cases import Case
from .scoring_rules import ScoringRule, rule

if TYPE_CHECKING:
    from ....engine.project import Project
    from .targets import Target


@dataclass(slots=True)
class CaseResult:
    """A case's verdict for one repeat: its output, findings, score and status.

    `status` is `passed`, `failed`, `error` (the target failed, or an evaluator errored with
    nothing else failing) or `recorded` (no evaluator gates it). `verdict` is the label of a
    suite with score bands (AgentV's `pass`, `borderline`, `fail`). Slotted: a suite keeps
    every case's result to its end.
    """

    id: str
    repeat: int
    status: str
    input: Any = None
    expected: Any = None
    output: str | None = None
    score: float | None = None
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    tags: list[str] = field(default_factory=list)
    seconds: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)
    verdict: str | None = None
    warnings: list[str] = field(default_factory=list)
    target: str | None = None
    usage: dict[str, int] | None = None
    cost: float | None = None  # what the target reported its answer cost (USD)

    @property
    def passed(self) -> bool | None:
        return {"passed": True, "failed": False}.get(self.status)

    @property
    def judge_calls(self) -> int:
        return sum(f.judge_calls for f in self.findings)


codec.register_dataclass("eval_case", CaseResult)


class Lifecycle:
    """Hooks around a suite's run and around each case (all optional).

    `before_case` runs in the case's target node before the target answers: an exception
    errors the case with its message; what it returns is the case's workspace folder.
    `after_case` runs in the verdict node after every evaluator and returns warnings.
    """

    async def before_all(self, suite: Suite) -> None:
        return None

    async def after_all(self, suite: Suite) -> list[str]:
        return []

    async def before_case(self, case: Case, repeat: int, run_id: str) -> str | None:
        return None

    async def after_case(
        self, case: Case, repeat: int, run_id: str, workspace: str | None
    ) -> list[str]:
        return []


@dataclass
class Suite:
    """A suite ready to run: cases, targets by name, suite-wide evaluators and settings.

    `default_target` answers cases that name none. `repeat` runs each case that many times
    (pass@k). `short_circuit` keeps judges from cases a deterministic evaluator failed.
    `pass_score` (optional) makes a case pass on its weighted score instead of on every
    gating evaluator. `scoring` names the rule that decides what passed (`scoring_rules`:
    accord's, promptfoo's, AgentV's with its labels, AgentV 4's).
    `trials` makes the repeats trials of one case under a strategy (`pass_at_k`: a trial
    runs only while none before it passed; `mean`; `confidence_interval`). `lifecycle`
    runs hooks around the suite and each case (an eval file's workspace scripts).
    """

    id: str
    cases: Sequence[Case]
    targets: dict[str, Target]
    evaluators: tuple[EvaluatorSpec, ...] = ()
    default_target: str | None = None
    repeat: int = 1
    short_circuit: bool = False
    pass_score: float | None = None
    judge_model: str | None = None
    path: Path | None = None
    project: Project | None = None
    max_concurrency: int | None = None
    target_concurrency: int | None = None
    timeout: float | None = None
    on_case: Callable[[CaseResult], None] | None = None
    trials: str | None = None
    trial_cost_limit: float | None = None  # no further trial once the trials cost this (USD)
    lifecycle: Lifecycle | None = None
    notes: tuple[str, ...] = ()
    run_id: str | None = None  # chosen before the run (a scenario suite's macros are seeded by it)
    frontend: str = ""  # the front-end that loaded it (suites/frontends.py); "": built in Python
    scoring: str = "accord"  # the scoring rule's name (core/scoring_rules.py)

    @property
    def rule(self) -> ScoringRule:
        """The rule that decides this suite's verdicts."""
        return rule(self.scoring)

    def target_for(self, case: Case) -> Target:
        name = case.target or self.default_target
        if name is None or name not in self.targets:
            raise KeyError(name)
        return self.targets[name]

    def evaluators_for(self, case: Case) -> tuple[EvaluatorSpec, ...]:
        """The suite's evaluators then the case's own; a case's evaluator replaces a suite
        evaluator of the same id."""
        from ...evaluators.parsing import merge_evaluators

        return merge_evaluators(self.evaluators, case.evaluators)
