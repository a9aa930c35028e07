"""The data types of the Python API (seed 001), named and shaped as in the Autoblocks SDK
(`autoblocks.testing.models` at fc6826dd), so that a suite ports by changing its imports.

Human review and production events have no counterpart in accord: their types exist so that
code naming them imports, and `run_test_suite` refuses a human review job with a message.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
from collections.abc import Awaitable
from typing import Any, TypeVar


@dataclasses.dataclass
class Threshold:
    """Bounds a score must meet; every bound given must hold."""

    lt: float | None = None
    lte: float | None = None
    gt: float | None = None
    gte: float | None = None

    def holds(self, score: float) -> bool | None:
        given = []
        if self.lt is not None:
            given.append(score < self.lt)
        if self.lte is not None:
            given.append(score <= self.lte)
        if self.gt is not None:
            given.append(score > self.gt)
        if self.gte is not None:
            given.append(score >= self.gte)
        return all(given) if given else None

    def text(self) -> str:
        signs = (("gte", ">="), ("gt", ">"), ("lte", "<="), ("lt", "<"))
        return " and ".join(
            f"{s} {getattr(self, n):g}" for n, s in signs if getattr(self, n) is not None
        )


@dataclasses.dataclass
class Assertion:
    criterion: str
    passed: bool
    required: bool
    metadata: dict[str, Any] | None = None

    def serialize(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Evaluation:
    """What an evaluator returns: a score, optionally its threshold, metadata, assertions."""

    score: float
    threshold: Threshold | None = None
    metadata: dict[str, Any] | None = None
    assertions: list[Assertion] | None = None

    def passed(self) -> bool | None:
        return None if self.threshold is None else self.threshold.holds(self.score)


@dataclasses.dataclass
class EvaluationWithId:
    id: str
    score: float
    threshold: Threshold | None = None
    metadata: dict[str, Any] | None = None
    assertions: list[Assertion] | None = None


@dataclasses.dataclass
class TestCaseConfig:
    """Set as a test case's `test_case_config` attribute: `repeat_num_times` runs the case
    that many times, each repetition its own case (`<hash>-<i>`), as in the SDK."""

    __test__ = False  # not a pytest test class
    repeat_num_times: int | None = None


@dataclasses.dataclass
class TracerEvent:
    message: str
    timestamp: str
    properties: dict[str, Any]
    trace_id: str | None


class HumanReviewFieldContentType(enum.StrEnum):
    TEXT = "text"
    LINK = "link"
    MARKDOWN = "markdown"
    HTML = "html"


@dataclasses.dataclass
class HumanReviewField:
    name: str
    value: str
    content_type: HumanReviewFieldContentType | None = HumanReviewFieldContentType.TEXT

    def serialize(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "contentType": self.content_type}


@dataclasses.dataclass
class ScoreChoice:
    value: float
    name: str


@dataclasses.dataclass
class EvaluationOverrideField:
    id: str
    name: str
    value: str


@dataclasses.dataclass
class EvaluationOverrideComment:
    field_id: str
    quoted_text: str
    comment_text: str


@dataclasses.dataclass
class EvaluationOverride:
    """A human override of an evaluation. accord keeps none: `make_prompt` always receives
    an empty `recent_overrides`."""

    original_score: ScoreChoice
    override_score: ScoreChoice
    input_fields: list[EvaluationOverrideField] = dataclasses.field(default_factory=list)
    output_fields: list[EvaluationOverrideField] = dataclasses.field(default_factory=list)
    comments: list[EvaluationOverrideComment] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class CreateHumanReviewJob:
    """A human review job of the SDK; accord has no human review (run_test_suite says so)."""

    assignee_email_address: str | list[str]
    name: str
    rubric_id: str | None = None

    def get_assignee_email_addresses(self) -> list[str]:
        given = self.assignee_email_address
        return [given] if isinstance(given, str) else list(given)


class BaseTestCase(abc.ABC):
    """A test case; `hash()` identifies it across runs."""

    @abc.abstractmethod
    def hash(self) -> str: ...

    def serialize(self) -> Any:
        return self

    def serialize_for_human_review(self) -> list[HumanReviewField] | None:
        return None

    def serialize_dataset_item_id(self) -> str | None:
        return None


TestCaseType = TypeVar("TestCaseType", bound=BaseTestCase)
OutputType = TypeVar("OutputType")


def _check_concurrency(cls: type) -> None:
    limit = getattr(cls, "max_concurrency", None)
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise TypeError(f"{cls.__name__}.max_concurrency must be an int")


class BaseTestEvaluator(abc.ABC):
    """An evaluator of test cases: `id`, `max_concurrency`, and a sync or async
    `evaluate_test_case(test_case, output) -> Evaluation | None`. The pass/fail of a score
    is the returned Evaluation's `threshold`, as in the SDK."""

    max_concurrency: int = 10

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _check_concurrency(cls)

    @property
    @abc.abstractmethod
    def id(self) -> str: ...

    @abc.abstractmethod
    def evaluate_test_case(
        self, *args: Any, **kwargs: Any
    ) -> Evaluation | Awaitable[Evaluation | None] | None: ...


class BaseEventEvaluator(abc.ABC):
    """An evaluator of production events (Autoblocks' tracer). accord has no production
    events: such an evaluator alone is refused by `run_test_suite`, as in the SDK."""

    max_concurrency: int = 10

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _check_concurrency(cls)

    @property
    @abc.abstractmethod
    def id(self) -> str: ...

    @abc.abstractmethod
    def evaluate_event(
        self, event: TracerEvent
    ) -> Evaluation | Awaitable[Evaluation | None] | None: ...


class BaseEvaluator(BaseTestEvaluator, BaseEventEvaluator, abc.ABC):
    """An evaluator of test cases and of events; accord runs its `evaluate_test_case`."""
