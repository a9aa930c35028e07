"""`battle`: the output against a baseline, judged on `criteria`.

The judge says which is better: challenger (1), tie (0.5) or baseline (0); the default
threshold `gte: 0.5` lets a tie pass. Manual: the baseline is the case's `baseline` (else its
`expected`). Automatic: the baseline of each (suite, case, evaluator) lives in the run store;
with none, the output becomes the baseline and no score is recorded; a winning challenger
replaces it; a tie keeps the old one. `accord runs baselines` lists and resets them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from ...engine.store import runs_db
from .base import EvaluatorFailure, EvaluatorSpec, Finding, ThresholdSpec, evaluator
from .baselines import get_baseline, save_baseline

if TYPE_CHECKING:
    from .cases import Case, Output
    from .judging import EvalContext

CHALLENGER, TIE, BASELINE = "Challenger is better", "Tie", "Baseline is better"
SCORES = {CHALLENGER: 1.0, TIE: 0.5, BASELINE: 0.0}


def battle_prompt(criteria: str, baseline: str, challenger: str) -> str:
    return (
        "Compare two responses on the criteria below and pick the better one, or a tie when "
        f"they are equally good.\n\n[Criteria]\n{criteria}\n\n[Baseline]\n{baseline}\n\n"
        f"[Challenger]\n{challenger}"
    )


async def judge_battle(
    ev: EvalContext, criteria: str, baseline: str, challenger: str, model: str | None
) -> tuple[str, str]:
    """(winner choice, reason)."""
    return await ev.choose(battle_prompt(criteria, baseline, challenger), list(SCORES), model=model)


@evaluator("battle")
class Battle(EvaluatorSpec):
    """The output against a baseline: 1 challenger wins, 0.5 tie, 0 baseline wins."""

    type: Literal["battle"] = "battle"
    criteria: str = Field(min_length=1, description="What makes one response better.")
    baseline: Literal["manual", "automatic"] = Field(
        "automatic",
        description="manual: the case's baseline (or expected); automatic: the best output so "
        "far, kept in the run store.",
    )
    model: str | None = Field(None, description="The judge model (default: the suite's).")
    deterministic: ClassVar[bool] = False
    default_threshold: ClassVar[ThresholdSpec | None] = ThresholdSpec(gte=0.5)

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        if self.baseline == "manual":
            baseline = case.baseline if case.baseline is not None else case.expected_text
            if baseline is None:
                raise EvaluatorFailure("a manual battle needs the case's 'baseline' or 'expected'")
            return await self._judge(ev, baseline, output.text)
        store = runs_db(ev.task.root)
        key = (ev.suite.id, case.id, self.id)
        saved = get_baseline(store, *key)
        if saved is None:
            save_baseline(store, *key, output.text, ev.task.run.run_id)
            return self.finding(
                None,
                "first output saved as the baseline",
                skipped="no baseline yet: saved this output",
            )
        found = await self._judge(ev, saved, output.text)
        if found.score == 1.0:
            save_baseline(store, *key, output.text, ev.task.run.run_id)
            found.metadata["baseline_replaced"] = True
        return found

    async def _judge(self, ev: EvalContext, baseline: str, challenger: str) -> Finding:
        winner, reason = await judge_battle(ev, self.criteria, baseline, challenger, self.model)
        return self.finding(
            SCORES[winner],
            reason,
            metadata={
                "reason": reason,
                "winner": winner,
                "criteria": self.criteria,
                "baseline": baseline,
                "challenger": challenger,
            },
            scoring="model",
        )
