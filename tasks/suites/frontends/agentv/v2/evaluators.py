"""AgentV's evaluators, as evaluators of the core (one evaluator node each): what they all
have, and their registry.

They are their own family of the check registry (`AGENTV`, named `agentv/...`): AgentV's
`llm_judge` is not accord's (it returns `{score, hits, misses, reasoning}` instead of picking
a choice). Each has `name`, `weight`,
`required` (true: its score must reach 0.8, AgentV's pass; a number: that score) and
`negate`. The members live in `judges` (model and program judges, composites) and `checks`
(tool trajectories, fields, spend, text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, field_validator, model_validator

from ......engine.registry import Namespace
from .....evaluators.base import (
    CHECKS,
    EvaluatorFailure,
    EvaluatorSpec,
    Finding,
    ThresholdSpec,
)
from ....core import scoring_rules
from .cases import AgentVCase

if TYPE_CHECKING:
    from .....evaluators.cases import Case

PASS = scoring_rules.AGENTV_PASS
BORDERLINE = scoring_rules.AGENTV_BORDERLINE
AGENTV: Namespace[type[AgentVEvaluator]] = Namespace(CHECKS, "agentv", "AgentV evaluator")


def agentv(name: str) -> Any:
    def decorate(cls: type[AgentVEvaluator]) -> type[AgentVEvaluator]:
        return AGENTV.add(name, cls)

    return decorate


def verdict_of(score: float) -> str:
    """AgentV's label of a score: `pass`, `borderline` or `fail` (the scoring rule's)."""
    return scoring_rules.agentv().verdict(score)


class AgentVEvaluator(EvaluatorSpec):
    """What every AgentV evaluator has."""

    family: ClassVar[str] = "agentv"

    required: bool | float = Field(  # type: ignore[assignment]
        False, description="true: the score must reach 0.8; a number: that score."
    )
    default_threshold: ClassVar[ThresholdSpec | None] = ThresholdSpec(gte=PASS)
    # `threshold` means something of its own to this type (latency's budget, a code judge's
    # configuration); elsewhere AgentV files have no such key
    own_threshold: ClassVar[bool] = False

    @model_validator(mode="before")
    @classmethod
    def _no_threshold(cls, data: Any) -> Any:
        if isinstance(data, dict) and "threshold" in data and not cls.own_threshold:
            kind = data.get("type", "this")
            raise ValueError(
                f"'threshold' is no key of a {kind} evaluator in AgentV files: a pass score "
                "is written 'required: 0.8' (the test fails below it)"
            )
        return data

    @field_validator("required")
    @classmethod
    def _required_range(cls, value: bool | float) -> bool | float:
        if not isinstance(value, bool) and not 0 <= value <= 1:
            raise ValueError("a required score is between 0 and 1")
        return value

    def gate(self) -> ThresholdSpec | None:
        """Pass at AgentV's 0.8, or at the score `required` gives (no `threshold`: the
        latency evaluator's is its budget)."""
        if not isinstance(self.required, bool):
            return ThresholdSpec(gte=self.required)
        return self.default_threshold

    def scored(
        self, score: float, hits: list[str], misses: list[str], reason: str = "", **extra: Any
    ) -> Finding:
        return Finding(self.id, score=score, reason=reason, hits=hits, misses=misses, **extra)

    def checked(self, ok: bool, line: str) -> Finding:
        """A yes-or-no check: score 1 with `line` a hit, else 0 with it a miss."""
        return self.scored(1.0 if ok else 0.0, [line] if ok else [], [] if ok else [line])


def agentv_case(case: Case) -> AgentVCase:
    if not isinstance(case, AgentVCase):
        raise EvaluatorFailure("this evaluator reads AgentV test cases only")
    return case


def canonical_type(kind: str) -> str:
    """An evaluator type as registered (`contains-any` is `contains_any`)."""
    return kind.replace("-", "_") if kind.replace("-", "_") in AGENTV else kind
