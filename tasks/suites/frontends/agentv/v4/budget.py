"""An AgentV 4 file's run budget (`evaluate_options.budget_usd`), spent as AgentV spends it.

AgentV (apps/cli/src/commands/eval/run-eval.ts, orchestrator.ts runEvaluation) keeps one
tracker per eval file (run-budget-tracker.ts), shared by all of the file's providers: when
a test is about to be dispatched and what the finished tests cost has reached the budget,
the test does not run; its result is an execution error, "Run budget exceeded ($SPENT /
$BUDGET)" (each to four decimals), with score 0. What a test costs is what its target
reported (the provider's `costUsd`, summed over its trials; the graders' calls do not
count; a target that reports no cost adds nothing), added once the test is done. Tests
already running finish.

Here every target of the suite is wrapped by a `BudgetTarget` sharing one tracker: a case
whose first answer is about to be asked when the spent total has reached the budget errors
with AgentV's message; a case already started (a later trial) goes on; each answer's cost
is added when it arrives. The cases run (and are listed) in the order AgentV starts them
(`dispatch_order`), so that one at a time the same tests are stopped. The tracker is kept
per run, so a resumed run starts from nothing, as AgentV's `--resume` does (a new tracker
for the tests still to run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, PrivateAttr

from ....core.targets import Target, TargetFailure

if TYPE_CHECKING:
    from ......engine.context import TaskContext
    from .....evaluators.cases import Case, Output
    from ....core.cases import Suite


@dataclass
class _Spent:
    total: float = 0.0
    started: set[str] = field(default_factory=set)


class Tracker:
    """What one run of a file has spent, and the cases it started."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.runs: dict[str, _Spent] = {}

    def start(self, run_id: str, case: str) -> None:
        """Let the case start, or raise AgentV's budget error when the budget is spent."""
        spent = self.runs.setdefault(run_id, _Spent())
        if case in spent.started:
            return
        if spent.total >= self.budget:  # RunBudgetTracker.isExceeded: >= the cap
            raise TargetFailure(
                f"Run budget exceeded (${_fixed(spent.total)} / ${_fixed(self.budget)})"
            )
        spent.started.add(case)

    def add(self, run_id: str, cost: float | None) -> None:
        if cost is not None:
            self.runs.setdefault(run_id, _Spent()).total += cost


def _fixed(value: float) -> str:
    """JavaScript's toFixed(4): the nearest 4-decimal number, a tie rounded up."""
    return str(Decimal(value).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))


class BudgetTarget(Target):
    """A target whose cases start only while the file's budget is not spent."""

    type: Literal["agentv-budget"] = "agentv-budget"
    inner: Any = Field(None, exclude=True, description="The provider's target.")
    wraps: str = ""  # the inner target's spec, so the digest is the provider's
    budget: float = 0.0
    _tracker: Tracker | None = PrivateAttr(None)

    def describe(self) -> str:
        assert isinstance(self.inner, Target)
        return self.inner.describe()

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        inner = self.inner
        assert isinstance(inner, Target) and self._tracker is not None
        run_id = tctx.run.run_id
        self._tracker.start(run_id, case.id)
        output = await inner.produce(tctx, case, repeat)
        self._tracker.add(run_id, output.cost)
        return output


def budgeted(suite: Suite, budget: float) -> Suite:
    """The suite with each target wrapped under one tracker of `budget` USD, its cases in
    the order AgentV starts them (`dispatch_order`)."""
    import dataclasses

    tracker = Tracker(budget)
    targets: dict[str, Target] = {}
    for name, inner in suite.targets.items():
        wrapped = BudgetTarget(
            inner=inner, wraps=inner.model_dump_json(), budget=budget, timeout=inner.timeout
        )
        wrapped._tracker = tracker
        targets[name] = wrapped
    return dataclasses.replace(suite, targets=targets, cases=dispatch_order(suite.cases))


def dispatch_order(cases: Sequence[Case]) -> list[Case]:
    """The cases in the order AgentV starts them, which decides which ones a budget stops:
    provider by provider (run-eval.ts runs a file's providers one after the other when its
    concurrency is 1), and within a provider the tests grouped by their pass bar
    (groupTestsByRunPolicy: one group per threshold, None apart from any number, in the
    order each first appears, each group run after the one before), in file order within
    a group."""

    def provider(case: Case) -> str:
        # a conversation's case runs on its provider's conversation target (file.py)
        return str(case.target).removesuffix(" (conversation)")

    providers = list(dict.fromkeys(provider(c) for c in cases))
    groups: dict[tuple[str, float | None], int] = {}
    for index, case in enumerate(cases):
        groups.setdefault((provider(case), case.pass_score), index)
    ranked = sorted(
        enumerate(cases),
        key=lambda item: (
            providers.index(provider(item[1])),
            groups[(provider(item[1]), item[1].pass_score)],
            item[0],
        ),
    )
    return [case for _index, case in ranked]
