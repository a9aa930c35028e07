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
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from ...consistency import Selection, pair_plan, select_consistent
from ...evaluators.base import EvaluatorSpec, Finding
from ...evaluators.cases import Case, Output
from ...evaluators.judged import Correctness, Similarity
from ...evaluators.judging import EvalContext
from ...evaluators.parsing import merge_evaluators
from ...evaluators.rag import ContextRecall
from ..core.cases import Suite
from ..core.reducers import mean_metric, proportion
from ..core.scoring_rules import SCORING_RULES
from .outcomes import CaseRecord, PairRecord, RunRecord, TestOutcome
from .prepared import CaseInput, PreparedTest

if TYPE_CHECKING:
    from ....engine.context import TaskContext
    from .plan import Produced, Subject


class Judged(Protocol):
    """A case's or a run's answer, as evaluated."""

    checks: dict[str, bool | None]
    scores: dict[str, float]
    passed: bool | None


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
    if test.evaluators:
        await asyncio.gather(*(_evaluate_run(ctx, test, outcome, answers[i], i) for i in good))
        runs = [outcome.runs[i] for i in good]
        _evaluator_metrics(outcome, (), runs, "runs", accuracy=False)


async def _evaluate_run(
    ctx: TaskContext, test: PreparedTest, outcome: TestOutcome, produced: Produced, run: int
) -> None:
    """The test's evaluators on one run's answer."""
    record = outcome.runs[run]
    run_ctx = dataclasses.replace(
        ctx, key=f"{ctx.key}.run_{run}.eval", order=(*ctx.order, test.n + run)
    )
    case = Case(id=f"run_{run}", input=outcome.task_description)
    output = Output(
        text=produced.text,
        contexts=list(produced.contexts),
        tool_calls=list(produced.tool_calls),
    )
    applied = [(e.id, e) for e in test.evaluators]
    findings = await _evaluate(run_ctx, test, applied, case, output)
    reasons: list[str] = []
    for name, found in findings.items():
        outcome.judge_calls += found.judge_calls
        if found.error is not None:
            outcome.warnings.append(f"run {run}: {name}: {found.error}")
        _note(record, name, found, reasons)
    verdicts = [v for v in record.checks.values() if v is not None]
    record.passed = SCORING_RULES.get("accord").record(verdicts)
    record.reasoning = "\n\n".join(reasons)


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
    subject_case = Case(
        id=case.name, input=case.prompt, expected=case.expected, contexts=case.contexts
    )
    output = Output(
        text=produced.text,
        contexts=list(produced.contexts),
        tool_calls=list(produced.tool_calls),
    )
    findings = await _evaluate(case_ctx, test, _applied(test, case), subject_case, output)
    for name, found in findings.items():
        record.judge_calls += found.judge_calls
        if found.error is not None:
            own = name in test.metrics
            record.judge_errors.append(found.error if own else f"{name}: {found.error}")
        if name in judged:
            record.checks[name] = found.passed if found.error is None else None
            reasons.append(f"{name}: {found.reason}" if len(judged) > 1 else found.reason)
        elif name in test.metrics:  # context recall: a score, no verdict
            if found.score is not None:
                record.scores[name] = found.score
        else:
            _note(record, name, found, reasons)
    verdicts = [v for v in record.checks.values() if v is not None]
    if judged:  # the test's own judge leads: no verdict from it, none for the answer
        record.passed = SCORING_RULES.get("accord").record(
            verdicts, lead=record.checks.get(judged[0])
        )
    elif verdicts:
        record.passed = SCORING_RULES.get("accord").record(verdicts)
    record.reasoning = "\n\n".join(reasons)
    return record


def _note(record: Judged, name: str, found: Finding, reasons: list[str]) -> None:
    """A library evaluator's finding on a case's or a run's record: its score, its verdict,
    and why it failed."""
    if found.score is not None:
        record.scores[name] = found.score
    record.checks[name] = found.passed
    if found.passed is False and found.reason:
        reasons.append(f"{name}: {found.reason}")


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


def _applied(test: PreparedTest, case: CaseInput) -> list[tuple[str, EvaluatorSpec]]:
    """The test's metrics as evaluators, then its evaluators (with the case's own), by name;
    those that compare with reference contexts only for cases that have them."""
    specs = [(name, metric_evaluator(test, name)) for name in test.metrics]
    specs += [(e.id, e) for e in merge_evaluators(test.evaluators, case.evaluators)]
    return [(n, e) for n, e in specs if case.contexts or not e.needs_contexts]


async def _evaluate(
    ctx: TaskContext,
    test: PreparedTest,
    applied: list[tuple[str, EvaluatorSpec]],
    case: Case,
    output: Output,
) -> dict[str, Finding]:
    """Each evaluator on the output, as an evaluator node of the test (under the evaluator's
    `max_concurrency` limit); findings by name, in the order given."""
    from ..core.nodes import evaluate_one, evaluator_limit

    suite = Suite(id=test.name, cases=(), targets={}, judge_model=test.judging.model,
                  project=ctx.run.project)  # fmt: skip

    def body(spec: EvaluatorSpec) -> Callable[[], Awaitable[Finding]]:
        return lambda: evaluate_one(EvalContext(ctx, suite), spec, case, output)

    out: dict[str, Finding] = {}
    leaves: list[tuple[str, Callable[[], Awaitable[Finding]]]] = []
    limits: list[tuple[str, ...]] = []
    for name, spec in applied:
        if spec.own_nodes:  # its judge calls are nodes of their own: run inline
            out[name] = await body(spec)()
            continue
        leaves.append((name, body(spec)))
        limits.append((evaluator_limit(spec),) if spec.max_concurrency else ())
    results = await ctx.run_leaves(leaves, type="evaluator", limits=limits) if leaves else []
    out.update(zip((name for name, _ in leaves), results, strict=True))
    return {name: out[name] for name, _ in applied}


def _with_tool(case: CaseRecord, metric: str) -> bool:
    """A verdict, failed too when the case's `tool` (Oxy's `.test.yml`) was not called."""
    return bool(case.checks[metric]) and case.checks.get("tool") is not False


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
        verdicts = [_with_tool(c, metric) for c in answered if c.checks.get(metric) is not None]
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
    _evaluator_metrics(outcome, test.metrics, answered, "answers")
    if not outcome.metrics:
        cause = judge_errors[0] if judge_errors else "no metric applied"
        outcome.error = f"no answer could be judged; {cause}"
        return
    _no_verdict(test, outcome, answered, judge_errors)


def _no_verdict(
    test: PreparedTest, outcome: TestOutcome, answered: list[CaseRecord], errors: list[str]
) -> None:
    """A judge metric, or an evaluator with a threshold, that gave no verdict on any answer
    leaves the test without a result: its other figures alone would read as a pass."""
    gated = [e.id for e in test.evaluators if e.gate() is not None]
    blind = [
        name
        for name in (*_verdicts(test), *gated)
        if not any(c.checks.get(name) is not None for c in answered)
    ]
    if blind and outcome.error is None:
        cause = errors[0] if errors else "no verdict in any reply"
        outcome.error = (
            f"{', '.join(blind)} gave no verdict on any of {len(answered)} answer(s); "
            f"first: {cause}"
        )
        outcome.metrics.clear()


def _evaluator_metrics(
    outcome: TestOutcome,
    metrics: tuple[str, ...],
    records: Sequence[Judged],
    unit: str,
    *,
    accuracy: bool = True,
) -> None:
    """The library evaluators' figures: a pass rate for each one with a threshold (and
    `accuracy`, the share of answers passing them all, when no judge metric gave it), a
    mean score for the others."""
    names = dict.fromkeys(n for r in records for n in (*r.checks, *r.scores) if n not in metrics)
    for name in names:
        verdicts = [r.checks[name] for r in records if r.checks.get(name) is not None]
        if verdicts:
            value = proportion(name, sum(bool(v) for v in verdicts), len(verdicts), unit)
        else:
            value = mean_metric(name, [r.scores[name] for r in records if name in r.scores], unit)
        if value is not None:
            outcome.metrics[name] = value
    if accuracy and "accuracy" not in outcome.metrics:
        passed = [r.passed for r in records if r.passed is not None]
        value = proportion("accuracy", sum(bool(p) for p in passed), len(passed), unit)
        if value is not None:
            outcome.metrics["accuracy"] = value
