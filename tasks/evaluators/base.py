"""What an evaluator is, and the registry they join.

An evaluator looks at one answer of one case and gives a verdict (pass or fail: the metric is
the proportion that pass, with a Wilson interval) or a score (the metric is the mean). It
declares what it needs from a case (`needs_expected`, `needs_contexts`), so a test whose
cases lack it is refused before anything runs, and the names its judge prompt may use.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

from accord.engine.registry import Registry

if TYPE_CHECKING:
    from accord.engine.context import TaskContext
    from accord.tasks.suites.core.prepared import CaseInput, PreparedTest


@dataclass
class CaseEvaluation:
    """One evaluator's finding on one answer: a verdict or a score (None: none could be
    given, with the cause in `errors`)."""

    verdict: bool | None = None
    score: float | None = None
    reasoning: str = ""
    judge_calls: int = 0
    errors: list[str] = field(default_factory=list)


class Evaluator(ABC):
    """One registered evaluator (a class; the registry holds the class, tests make one)."""

    name: ClassVar[str]
    kind: ClassVar[Literal["verdict", "score"]]
    needs_expected: ClassVar[bool] = False
    needs_contexts: ClassVar[bool] = False
    prompt_names: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    async def evaluate(
        self,
        ctx: TaskContext,
        test: PreparedTest,
        case: CaseInput,
        answer: str,
        contexts: tuple[str, ...],
    ) -> CaseEvaluation:
        """Evaluate `answer` (and the `contexts` the subject retrieved) for `case`."""


EVALUATORS: Registry[type[Evaluator]] = Registry("evaluator")


def evaluator(name: str) -> Callable[[type[Evaluator]], type[Evaluator]]:
    """Class decorator: register an evaluator under `name`."""

    def decorate(cls: type[Evaluator]) -> type[Evaluator]:
        cls.name = name
        return EVALUATORS.add(name, cls)

    return decorate
