"""promptfoo's assertion sets (`type: assert-set`, 0.118 `src/assertions/index.ts`
`runAssertions`): the assertions under `assert:` are scored together as a test's are
(`combine`: the weighted mean; pass when all pass, or at the set's `threshold`), and the set
then counts in its test as one assertion with its own `weight` and `metric`. A set of
`weight: 0` is not forced to pass (only single assertions are, in promptfoo)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from pydantic import Field, SerializeAsAny

from .base import PromptfooAssertion
from .combine import combine

if TYPE_CHECKING:
    from .....evaluators.base import Finding
    from .....evaluators.cases import Case, Output
    from .....evaluators.judging import EvalContext


class AssertSet(PromptfooAssertion):
    asserts: list[SerializeAsAny[PromptfooAssertion]] = Field(default_factory=list)

    def calls_model(self, judge_model: str | None) -> bool:
        return any(a.calls_model(judge_model) for a in self.asserts)

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        from ....core.nodes import evaluate_one

        findings = []
        for spec in self.asserts:
            findings.append(
                await evaluate_one(dataclasses.replace(ev, calls=0), spec, case, output)
            )
        found = combine(findings, self.asserts, threshold=self.pass_threshold, name=self.id)
        found.judge_calls = sum(f.judge_calls for f in findings)
        if self.metric:
            found.metadata["metric"] = self.metric
        return found


def set_children(entry: dict[str, Any]) -> list[Any]:
    items = entry.get("assert")
    return items if isinstance(items, list) else []
