"""AgentV 4's `field-accuracy` and `execution-metrics` graders, computed by accord's
evaluators for AgentV's older format (tasks/suites/agentv: `field_accuracy` in checks.py,
`execution_metrics` in metrics.py), which follow the same graders of AgentV's source
(graders/field-accuracy.ts, graders/execution-metrics.ts).

field-accuracy compares the answer with what AgentV gives its graders as the expected output
(EvalTest.expected_output): a conversation turn's own, and nothing for a test, whose
`expected_output` var is only a var (yaml-parser.ts refuses a test's own `expected_output`).
The expected object is field-accuracy.ts's extractExpectedData: the last expected message
with role `assistant` and a truthy content, that content when it is an object, else its text
read as JSON. With none, AgentV scores 0 ("No expected data found in expected_output") and so
does accord. The answer must be a JSON object. The grader's pass is AgentV's: score >= 0.8.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import pydantic

from .......engine.errors import ConfigError
from ......evaluators.base import Finding
from .....core.scoring_rules import AGENTV_PASS as PASS
from ....promptfoo.asserts.base import PromptfooAssertion, case_vars
from ...v2.cases import AgentVCase
from ...v2.checks import FieldAccuracy
from ...v2.metrics import ExecutionMetrics
from .judge import parse_json
from .script import _messages, expected_messages

if TYPE_CHECKING:
    from ......evaluators.cases import Case, Output
    from ......evaluators.judging import EvalContext

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
    family: ClassVar[str] = "agentv4"
    deterministic: ClassVar[bool] = True

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        inner = KINDS[self.type].model_validate(
            {"type": self.type.replace("-", "_"), **(self.config or {}), "name": self.id}
        )
        variables = case_vars(case)
        question = variables.get("input")
        expected: tuple[dict[str, Any], ...] = ()
        if self.type == "field-accuracy":
            data = expected_data(expected_messages(case))
            if data is None:
                return self.result(False, 0.0, "No expected data found in expected_output")
            expected = ({"role": "assistant", "content": data},)
        seed_case = AgentVCase(
            id=case.id, input=tuple(_messages(question, "user")),
            question=question if isinstance(question, str) else "",
            expected_messages=expected,
        )  # fmt: skip
        found = await inner.evaluate(ev, seed_case, output)
        score = found.score or 0.0
        lines = [f"✓ {h}" for h in found.hits] + [f"✗ {m}" for m in found.misses]
        reason = "; ".join(lines) or found.reason
        return self.result(score >= PASS, score, reason)


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness of a JSON value: an empty object or list is true."""
    return isinstance(value, dict | list) or bool(value)


def expected_data(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """field-accuracy.ts extractExpectedData (lines 123-143 at 58f316ca2): from the last
    message, the first with role `assistant` and a truthy content: an object content as it
    is, a text content read as JSON (parseJsonFromText; text that does not read goes on to
    the message before). None when there is none, or it reads as a falsy value (`if
    (!expectedData)`). What it holds as paths resolve it (resolvePath): a list by its
    indexes, any other value has no fields."""
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") != "assistant" or not _truthy(content):
            continue
        if isinstance(content, str):
            try:
                content = parse_json(content)
            except ValueError:
                continue
        elif not isinstance(content, dict | list):
            continue
        if not _truthy(content):
            return None
        if isinstance(content, dict):
            return content
        if isinstance(content, list):
            return {str(i): v for i, v in enumerate(content)}
        return {}
    return None
