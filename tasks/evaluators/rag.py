"""Retrieval evaluators: what the subject retrieved against the case's reference contexts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accord.tasks.evaluators.base import CaseEvaluation, Evaluator, evaluator
from accord.tasks.suites.core.metrics import context_recall

if TYPE_CHECKING:
    from accord.engine.context import TaskContext
    from accord.tasks.suites.core.prepared import CaseInput, PreparedTest


@evaluator("context_recall")
class ContextRecall(Evaluator):
    """Mean best normalised Levenshtein similarity of each reference context to a retrieved
    one (Oxy's context recall); reported as `recall`. Cases without references are skipped."""

    kind = "score"
    needs_contexts = True

    async def evaluate(
        self,
        ctx: TaskContext,
        test: PreparedTest,
        case: CaseInput,
        answer: str,
        contexts: tuple[str, ...],
    ) -> CaseEvaluation:
        if not case.contexts:
            return CaseEvaluation()

        return CaseEvaluation(score=context_recall(case.contexts, contexts))
