"""What an evaluator is, what it finds, and the registry evaluators join.

An evaluator is a spec model (what a file writes under `evaluators:`) with an `evaluate`
coroutine: it looks at one output of one case and returns a `Finding` (a score in [0, 1], or
an error saying why none could be given). The evaluation core then applies what every
evaluator shares (`negate`, `threshold`, `weight`, `required`), so an evaluator only scores.
Adding one is one decorated class; third-party evaluators arrive by the `accord.plugins` entry
point like task types.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import Field, model_validator

from ...engine.executor import WorkFailure
from ...engine.registry import Namespace, Registry
from ...engine.specbase import Spec

if TYPE_CHECKING:
    from .cases import Case, Output
    from .judging import EvalContext

BOUNDS = ("gte", "gt", "lte", "lt")


class ThresholdSpec(Spec):
    """Bounds a score must meet to pass; every bound given must hold."""

    gte: float | None = Field(None, allow_inf_nan=False, description="Score >= this.")
    gt: float | None = Field(None, allow_inf_nan=False, description="Score > this.")
    lte: float | None = Field(None, allow_inf_nan=False, description="Score <= this.")
    lt: float | None = Field(None, allow_inf_nan=False, description="Score < this.")

    @model_validator(mode="after")
    def _some_bound(self) -> ThresholdSpec:
        if all(getattr(self, name) is None for name in BOUNDS):
            raise ValueError(
                "a threshold needs at least one bound: gte, gt, lte or lt "
                "(leave 'threshold' out to record the score without gating on it)"
            )
        return self

    def holds(self, score: float) -> bool:
        checks = (
            self.gte is None or score >= self.gte,
            self.gt is None or score > self.gt,
            self.lte is None or score <= self.lte,
            self.lt is None or score < self.lt,
        )
        return all(checks)

    def text(self) -> str:
        signs = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<"}
        return " and ".join(
            f"{signs[n]} {getattr(self, n):g}" for n in BOUNDS if getattr(self, n) is not None
        )


PASS_AT_ONE = ThresholdSpec(gte=1)


@dataclass(slots=True)
class Finding:
    """One evaluator's result on one output.

    `score` is None when no score could be given: `error` then says why (a judge reply with
    no verdict, an exception in a Python evaluator), or `skipped` says why it was not asked
    (short-circuited). `passed` is None when no threshold applies (recorded, not gating).
    `scoring` says how a score with alternatives was computed (`model` or `lexical`).
    `hits` and `misses` list what the evaluator found right and wrong (AgentV's form);
    `children` are the findings a composite evaluator aggregated; `veto` says why this
    finding fails its case whatever its score (a required rubric item not met).
    `exchanges` keeps each judge call's prompt and reply (clipped), for `accord view`.

    Slotted: a suite keeps each case's findings to its end (a million cases, a million
    findings), and a slotted one is ~60 bytes smaller.
    """

    name: str
    score: float | None = None
    passed: bool | None = None
    reason: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    skipped: str | None = None
    judge_calls: int = 0
    weight: float = 1.0
    required: bool = False
    threshold: str | None = None
    scoring: str | None = None
    deterministic: bool = True
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    children: list[Finding] = field(default_factory=list)
    veto: str | None = None
    kind: str | None = None
    check: str | None = None  # the check that made it, as registered: `family/type`
    # each judge call's prompt and reply ({prompt, reply[, error]}), None without one
    exchanges: list[dict[str, str]] | None = None


class EvaluatorSpec(Spec):
    """The fields every evaluator has."""

    type: str
    name: str | None = Field(None, description="The evaluator's id in reports (default: its type).")
    threshold: ThresholdSpec | None = Field(
        None, description="Bounds the score must meet; none: recorded, not gating."
    )
    weight: float = Field(
        1.0, ge=0, allow_inf_nan=False, description="Weight in the case score (0: not counted)."
    )
    required: bool = Field(False, description="A failure of this evaluator fails the case.")
    negate: bool = Field(False, description="Score 1 - score (pass when the check fails).")
    max_concurrency: int | None = Field(
        None, ge=1, description="At most this many evaluations of this evaluator at once."
    )

    deterministic: ClassVar[bool] = True
    # the family of checks it belongs to: its namespace in CHECKS (`accord/contains`)
    family: ClassVar[str] = "accord"
    # its `evaluate` needs nothing of the run (no judge, no files, no context): it may run on
    # another machine (the Ray executor's tasks)
    portable: ClassVar[bool] = False
    default_threshold: ClassVar[ThresholdSpec | None] = PASS_AT_ONE
    needs_expected: ClassVar[bool] = False
    needs_contexts: ClassVar[bool] = False
    prompt_names: ClassVar[frozenset[str]] = frozenset()
    # schedules its own leaf nodes (the consistency judge): run without holding a slot, or
    # its nodes would wait for slots it holds
    own_nodes: ClassVar[bool] = False

    @property
    def id(self) -> str:
        return self.name or self.type

    @property
    def check_name(self) -> str:
        """The check as registered, namespaced by its family: `promptfoo/not-contains`."""
        return sys.intern(f"{self.family}/{self.type}")

    def calls_model(self, judge_model: str | None) -> bool:
        """Whether this evaluation will ask a model (short_circuit keeps those back)."""
        return not self.deterministic

    def gate(self) -> ThresholdSpec | None:
        """The threshold that decides `passed` (the file's, else the evaluator's default)."""
        return self.threshold if self.threshold is not None else self.default_threshold

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        """Score `output` for `case`; raise `EvaluatorFailure` (or any exception) for an
        error; the core catches it and records it on this evaluation."""
        raise NotImplementedError

    def finding(self, score: float | None, reason: str = "", **extra: Any) -> Finding:
        """A finding of this evaluator (the core fills in threshold and verdict)."""
        return Finding(self.id, score=score, reason=reason, **extra)


class EvaluatorFailure(WorkFailure):
    """An evaluation that could not give a score: the message says why."""


EvaluatorT = TypeVar("EvaluatorT", bound=type[EvaluatorSpec])

# every check of every family, namespaced: `accord/contains` (the evaluators of .eval.yml,
# Oxy's tests and the Python API), `promptfoo/contains`, `agentv/llm_judge`,
# `agentv4/skill-used`; each family reads and writes its own names through its namespace
CHECKS: Registry[type[EvaluatorSpec]] = Registry("check", plugins=False)
EVALUATORS: Namespace[type[EvaluatorSpec]] = Namespace(
    CHECKS, "accord", "evaluator", members="accord.tasks.evaluators"
)


def evaluator(name: str) -> Callable[[EvaluatorT], EvaluatorT]:
    """Class decorator: register an evaluator spec under its `type` tag `name`."""

    def decorate(cls: EvaluatorT) -> EvaluatorT:
        EVALUATORS.add(name, cls)
        return cls

    return decorate


def clip(score: float) -> float:
    """A score inside [0, 1] (Ragas' metrics are clipped so)."""
    return min(1.0, max(0.0, float(score)))
