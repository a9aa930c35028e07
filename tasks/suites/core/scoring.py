"""Score a test from its answers: consistency pairs, or cases judged against expectations.

- consistency: n answers, judged pairwise by `select_consistent` (identical answers and
  pre-judged pairs need no judge call). Accuracy = consistent pairs / pairs with a verdict.
- custom and `.test.yml` cases: each answer is compared with the expected one (`similarity`
  through the consistency judge, `correctness` through the PASS/FAIL judge) and its SQL with
  the reference contexts (`context_recall`). Accuracy = answers that pass / answers judged.

A test that produced no answer, or whose answers could not be judged, gets an error with
the cause instead of a score.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from accord.tasks.consistency import Selection, pair_plan, select_consistent
from accord.tasks.evaluators.base import EvaluatorFailure, EvaluatorSpec, Finding
from accord.tasks.evaluators.judged import Correctness, Similarity
from accord.tasks.evaluators.rag import ContextRecall
from accord.tasks.suites.core.cases import Case, Output, Suite
from accord.tasks.suites.core.judging import EvalContext
from accord.tasks.suites.core.metrics import mean_metric, proportion
from accord.tasks.suites.core.outcomes import CaseRecord, PairRecord, RunRecord, TestOutcome
from accord.tasks.suites.core.prepared import CaseInput, PreparedTest

if TYPE_CHECKING:
    from accord.engine.context import TaskContext
    from accord.tasks.suites.core.testing import Produced, Subject

# Oxy reports context recall as `recall`
SCORE_NAMES = {"context_recall": "recall"}
VERDICT_METRICS = ("similarity", "correctness")  # a verdict each; context recall is a score


# --- consistency -------------------------------------------------------------------------------


async def consistency(
    ctx: TaskContext, subject: Subject, test: PreparedTest, outcome: TestOutcome
) -> None:
    """n runs of the subject, then the pairwise judge; accuracy over judged pairs."""
    answers = await asyncio.gather(
        *(subject.answer(test.task_description, run, run, f".run_{run}") for run in range(test.n))
    )
    outcome.runs = [
        RunRecord(i, a.text if a.error is None else None, a.error) for i, a in enumerate(answers)
    ]
    good = [i for i, a in enumerate(answers) if a.error is None]
    failed = [a for a in answers if a.error is not None]
    if failed and good:
        outcome.warnings.append(f"{len(failed)} of {test.n} runs failed; first: {failed[0].error}")
    if not good:
        outcome.error = f"all {test.n} runs failed; first: {failed[0].error}"
        return
    if len(good) == 1:
        outcome.error = (
            f"only 1 of {test.n} runs succeeded, so no pair could be judged; "
            f"first failure: {failed[0].error}"
        )
        return
    outcome.task_description = _description(subject, test, answers[good[0]])
    await _judge_runs(ctx, test, outcome, [answers[i].text for i in good], good)


def _description(subject: Subject, test: PreparedTest, first: Produced) -> str:
    if test.task_description:
        return test.task_description
    if first.description:
        return first.description
    plan = subject.suite.plan
    if plan is not None and plan.description:
        return plan.description
    return f"the output of task '{test.task_ref}'"


async def _judge_runs(
    ctx: TaskContext, test: PreparedTest, outcome: TestOutcome, texts: list[str], good: list[int]
) -> None:
    judging = test.judging
    selection = Selection(
        texts,
        outcome.task_description,
        judging.prompt,
        judging.model,
        judging.prejudge,
        judging.pairs,
    )
    result = await select_consistent(ctx, selection)
    for pair in result.pairs:
        first, second = pair["runs"]
        outcome.pairs.append(
            PairRecord(
                (good[first], good[second]), pair["verdict"], pair["source"], pair["reasoning"]
            )
        )
    for run in result.runs:
        outcome.runs[good[run["index"]]].score = run["score"]
    outcome.judge_calls = result.judge_calls
    ctx.run.count("judge_calls", result.judge_calls)
    ctx.run.count(
        "judge_calls_saved", len(pair_plan(len(texts), judging.pairs)) - result.judge_calls
    )
    outcome.warnings.extend(f"judge: {error}" for error in result.judge_errors)
    judged = [p for p in outcome.pairs if p.verdict is not None]
    metric = proportion("accuracy", sum(p.consistent for p in judged), len(judged), "pairs")
    if metric is None:
        outcome.error = f"no pair could be judged; {result.judge_errors[0]}"
    else:
        outcome.metrics["accuracy"] = metric


# --- cases -----------------------------------------------------------------------------------


async def cases(
    ctx: TaskContext, subject: Subject, test: PreparedTest, outcome: TestOutcome
) -> None:
    """Every case (times n) answered and judged; accuracy, then recall, over the answers."""
    jobs = [
        _case(ctx, subject, test, number, case, run)
        for number, case in enumerate(test.cases)
        for run in range(test.n)
    ]
    outcome.cases = list(await asyncio.gather(*jobs))
    outcome.judge_calls = sum(c.judge_calls for c in outcome.cases)
    _case_metrics(test, outcome)


async def _case(
    ctx: TaskContext, subject: Subject, test: PreparedTest, number: int, case: CaseInput, run: int
) -> CaseRecord:
    index = number * test.n + run
    label = f".case_{number + 1}" + (f".run_{run}" if test.n > 1 else "")
    record = CaseRecord(case.name, case.prompt, case.expected, run, tags=list(case.tags))
    produced = await subject.answer(case.prompt, run, index, label)
    if produced.error is not None:
        record.error = produced.error
        return record
    record.output = produced.text
    case_ctx = dataclasses.replace(ctx, key=f"{ctx.key}{label}", order=(*ctx.order, index))
    reasons: list[str] = []
    judged = _verdicts(test)
    findings = await _evaluate(case_ctx, test, case, produced)
    for name, found in zip(test.metrics, findings, strict=True):
        if found is None:
            continue
        record.judge_calls += found.judge_calls
        if found.error is not None:
            record.judge_errors.append(found.error)
        if name in judged:
            record.checks[name] = found.passed if found.error is None else None
            reasons.append(f"{name}: {found.reason}" if len(judged) > 1 else found.reason)
        elif found.score is not None:
            record.scores[name] = found.score
    record.passed = record.checks.get(judged[0]) if judged else None
    record.reasoning = "\n\n".join(reasons)
    return record


def metric_evaluator(test: PreparedTest, name: str) -> EvaluatorSpec:
    """A test's metric as the evaluator of the library that computes it."""
    judging = test.judging
    if name == "similarity":
        return Similarity(
            prompt=judging.prompt, prejudge=judging.prejudge, model=test.judge_model(name)
        )
    if name == "correctness":
        return Correctness(prompt=judging.correctness_prompt, model=test.judge_model(name))
    return ContextRecall(mode="lexical", similarity_threshold=None)  # Oxy's mean best recall


async def _evaluate(
    ctx: TaskContext, test: PreparedTest, case: CaseInput, produced: Produced
) -> list[Finding | None]:
    """Each metric's evaluator, as an evaluator node of the test; None where it does not
    apply (context recall of a case without reference contexts)."""
    suite = Suite(id=test.name, cases=(), targets={}, judge_model=test.judging.model,
                  project=ctx.run.project)  # fmt: skip
    subject = Case(id=case.name, input=case.prompt, expected=case.expected, contexts=case.contexts)
    output = Output(text=produced.text, contexts=list(produced.contexts))
    leaves = []
    wanted: list[int] = []
    inline: list[tuple[int, Callable[[], Awaitable[Finding]]]] = []
    for position, name in enumerate(test.metrics):
        spec = metric_evaluator(test, name)
        if spec.needs_contexts and not case.contexts:
            continue

        async def body(spec: EvaluatorSpec = spec) -> Finding:
            ev = EvalContext(ctx, suite)
            try:
                found = await spec.evaluate(ev, subject, output)
            except EvaluatorFailure as exc:
                found = Finding(spec.id, error=str(exc))
            found.judge_calls = max(found.judge_calls, ev.calls)
            gate = spec.gate()
            if found.score is not None and found.error is None and gate is not None:
                found.passed = gate.holds(found.score)
            return found

        if spec.own_nodes:  # its judge calls are nodes of their own
            inline.append((position, body))
        else:
            leaves.append((name, body))
            wanted.append(position)
    out: list[Finding | None] = [None] * len(test.metrics)
    for position, body in inline:
        out[position] = await body()
    results = await ctx.run_leaves(leaves, type="evaluator") if leaves else []
    for position, found in zip(wanted, results, strict=True):
        out[position] = found
    return out


def _verdicts(test: PreparedTest) -> list[str]:
    """The test's evaluators that give verdicts, in file order (the first is `accuracy`)."""
    return [m for m in test.metrics if m in VERDICT_METRICS]


def _case_metrics(test: PreparedTest, outcome: TestOutcome) -> None:
    answered = [c for c in outcome.cases if c.error is None]
    errors = [c for c in outcome.cases if c.error is not None]
    if not answered:
        outcome.error = f"all {len(outcome.cases)} answers failed; first: {errors[0].error}"
        return
    if errors:
        outcome.warnings.append(
            f"{len(errors)} of {len(outcome.cases)} answers failed; first: {errors[0].error}"
        )
    judge_errors = [e for c in answered for e in c.judge_errors]
    outcome.warnings.extend(f"judge: {e}" for e in judge_errors)
    for position, metric in enumerate(_verdicts(test)):
        verdicts = [c.checks[metric] for c in answered if c.checks.get(metric) is not None]
        name = "accuracy" if position == 0 else metric
        value = proportion(name, sum(bool(v) for v in verdicts), len(verdicts), "answers")
        if value is not None:
            outcome.metrics[name] = value
    for metric in (m for m in test.metrics if m not in VERDICT_METRICS):
        values = [c.scores[metric] for c in answered if metric in c.scores]
        name = SCORE_NAMES.get(metric, metric)
        mean = mean_metric(name, values, "cases")
        if mean is not None:
            outcome.metrics[name] = mean
    if not outcome.metrics:
        cause = judge_errors[0] if judge_errors else "no metric applied"
        outcome.error = f"no answer could be judged; {cause}"
