"""AgentV 4's `field-accuracy` and `execution-metrics` graders, computed by accord's
evaluators for AgentV's older format (tasks/suites/agentv: `field_accuracy` in checks.py,
`execution_metrics` in metrics.py), which follow the same graders of AgentV's source
(graders/field-accuracy.ts, graders/execution-metrics.ts).

The test's `expected_output` var is the expected object (AgentV reads it from the last
expected message: an object, or JSON text); the answer must be a JSON object. Where AgentV 4
scores 0 with a reason (no expected object to compare), so does accord. The grader's pass is
AgentV's: score >= 0.8.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import pydantic

from accord.engine.errors import ConfigError
from accord.tasks.evaluators.base import EvaluatorFailure, Finding
from accord.tasks.suites.agentv.cases import AgentVCase
from accord.tasks.suites.agentv.checks import FieldAccuracy
from accord.tasks.suites.agentv.metrics import ExecutionMetrics
from accord.tasks.suites.promptfoo.asserts.agentv_script import PASS, _messages, expected_messages
from accord.tasks.suites.promptfoo.asserts.base import PromptfooAssertion, case_vars

if TYPE_CHECKING:
    from accord.tasks.evaluators.cases import Case, Output
    from accord.tasks.evaluators.judging import EvalContext

KINDS: dict[str, type[FieldAccuracy] | type[ExecutionMetrics]] = {
    "field-accuracy": FieldAccuracy,
    "execution-metrics": ExecutionMetrics,
}
COMMON = frozenset({"type", "metric", "weight"})


def build_seed(entry: dict[str, Any], *, where: str, name: str) -> AgentVSeed:
    kind = str(entry["type"])
    own = {k: v for k, v in entry.items() if k not in COMMON}
    try:
        KINDS[kind].model_validate({"type": kind.replace("-", "_"), **own})
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        place = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"{where}: {kind}: {place + ': ' if place else ''}{first['msg']}"
        ) from None
    weight = entry.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
        raise ConfigError(f"{where}: 'weight' is a number, 0 or more")
    return AgentVSeed(
        type=kind, base_type=kind, name=name, metric=entry.get("metric"),
        weight=float(weight), config=own,
    )  # fmt: skip


class AgentVSeed(PromptfooAssertion):
    deterministic: ClassVar[bool] = True

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        inner = KINDS[self.type].model_validate(
            {"type": self.type.replace("-", "_"), **(self.config or {}), "name": self.id}
        )
        variables = case_vars(case)
        expected = expected_messages(case)
        question = variables.get("input")
        seed_case = AgentVCase(
            id=case.id, input=tuple(_messages(question, "user")),
            question=question if isinstance(question, str) else "",
            expected_messages=tuple(expected),
        )  # fmt: skip
        try:
            found = await inner.evaluate(ev, seed_case, output)
        except EvaluatorFailure as exc:
            if "expected_output holds no JSON object" not in str(exc):
                raise
            # field-accuracy.ts: nothing expected to compare is a 0, not an error
            return self.result(False, 0.0, "No expected data found in expected_output")
        score = found.score or 0.0
        lines = [f"✓ {h}" for h in found.hits] + [f"✗ {m}" for m in found.misses]
        reason = "; ".join(lines) or found.reason
        return self.result(score >= PASS, score, reason)
