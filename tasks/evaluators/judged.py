"""Evaluators an LLM judge decides, through the models door (cache, limits, usage)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accord.tasks.consistency import Selection, select_consistent
from accord.tasks.evaluators.base import CaseEvaluation, Evaluator, evaluator
from accord.tasks.suites.oxy.grading import Grade, grade_answer

if TYPE_CHECKING:
    from accord.engine.context import TaskContext
    from accord.tasks.suites.core.prepared import CaseInput, PreparedTest

JUDGE_NAMES = frozenset({"submission_1", "submission_2", "task_description"})
GRADE_NAMES = frozenset({"question", "expected", "answer"})


@evaluator("similarity")
class Similarity(Evaluator):
    """The expected and the actual answer judged as a consistency pair (pre-judge first)."""

    kind = "verdict"
    needs_expected = True
    prompt_names = JUDGE_NAMES

    async def evaluate(
        self,
        ctx: TaskContext,
        test: PreparedTest,
        case: CaseInput,
        answer: str,
        contexts: tuple[str, ...],
    ) -> CaseEvaluation:
        judging = test.judging
        selection = Selection(
            [case.expected or "", answer],
            case.prompt,
            judging.prompt,
            test.judge_model(self.name),
            judging.prejudge,
        )
        result = await select_consistent(ctx, selection)
        ctx.run.count("judge_calls", result.judge_calls)
        ctx.run.count("judge_calls_saved", 1 - result.judge_calls)
        pair = result.pairs[0]
        verdict = None if pair["verdict"] is None else pair["verdict"] == "A"
        return CaseEvaluation(
            verdict=verdict,
            reasoning=str(pair["reasoning"]),
            judge_calls=result.judge_calls,
            errors=list(result.judge_errors),
        )


@evaluator("correctness")
class Correctness(Evaluator):
    """The PASS/FAIL grader: is the answer correct given the expected one?"""

    kind = "verdict"
    needs_expected = True
    prompt_names = GRADE_NAMES

    async def evaluate(
        self,
        ctx: TaskContext,
        test: PreparedTest,
        case: CaseInput,
        answer: str,
        contexts: tuple[str, ...],
    ) -> CaseEvaluation:
        async def grade() -> Grade:
            return await grade_answer(
                ctx,
                question=case.prompt,
                expected=case.expected or "",
                answer=answer,
                prompt=test.judging.correctness_prompt,
                model=test.judge_model(self.name),
            )

        (result,) = await ctx.run_leaves([("grade", grade)], type="judge")
        assert isinstance(result, Grade)
        ctx.run.count("judge_calls")
        return CaseEvaluation(
            verdict=result.passed,
            reasoning=result.reasoning,
            judge_calls=1,
            errors=[result.error] if result.error else [],
        )
