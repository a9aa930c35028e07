"""A suite as nodes of one plan on the engine's scheduler.

Each case (times its repeats) is a target node, then one evaluator node per evaluator (each
under its evaluator's named limit), then a verdict node; so an evaluation gets the engine's
global and per-model limits, call cache, usage, run store, `--resume` and progress as a
workflow does. With `short_circuit`, judged evaluator nodes also wait for the case's
deterministic ones and are not asked when one of those failed.

A target that fails fails its node (so `--resume` runs it again) and its case is an error;
an evaluator that cannot give a score records the error on its finding; the run always keeps
going.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import hashlib
import inspect
import re
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ....engine import budget
from ....engine.context import TaskContext
from ....engine.errors import TaskError
from ....engine.executor import WorkFailure
from ....engine.kinds import register_task
from ....engine.plan import Plan, PlannedTask
from ....engine.project import Project
from ....engine.results import RunResult, Status, TaskResult
from ....engine.runner import DEFAULT_CONCURRENCY, PlanParts, RunOptions, execute
from ....engine.scheduler import Observer
from ....engine.spec import TaskSpec
from ...evaluators.base import EvaluatorSpec, Finding, ThresholdSpec
from ...evaluators.cases import Case, Output, case_digest
from ...evaluators.judging import EvalContext
from .cases import CaseResult, Suite
from .targets import SECONDS, WORKSPACE, Target, TargetFailure, time_limit
from .verdicts import SuiteRun, decide

TARGET_LIMIT = "eval:targets"


class EvalNodeSpec(TaskSpec):
    """A node of a compiled suite (never written in a file). The references are excluded
    from the spec's digest; `digest` stands for them (resume reuses an output only when
    the case, target and evaluator are the same)."""

    type: Literal["eval_target", "eval_check", "eval_verdict"]
    digest: str = ""
    repeat: int = 0
    suite_ref: Any = Field(None, exclude=True)
    case_ref: Any = Field(None, exclude=True)
    evaluator_ref: Any = Field(None, exclude=True)
    deps_ref: Any = Field(None, exclude=True)
    limits_ref: tuple[str, ...] = Field((), exclude=True)

    def limit_names(self) -> tuple[str, ...]:
        return self.limits_ref


_NODE_DEFAULTS: dict[str, Any] = {
    "depends_on": [], "retry": None, "timeout": None, "cache": None, "export": None,
    "suite_ref": None, "case_ref": None, "evaluator_ref": None, "deps_ref": None,
    "limits_ref": (), "digest": "", "repeat": 0,
}  # fmt: skip


def node_spec(**fields: Any) -> EvalNodeSpec:
    """A node spec without validation, every field given (pydantic's defaults for missing
    fields inspect a signature each time: 0.6 ms a node)."""
    return EvalNodeSpec.model_construct(**{**_NODE_DEFAULTS, **fields})


def evaluator_limit(spec: EvaluatorSpec) -> str:
    return f"evaluator:{spec.id}"


def evaluator_limits(specs: Iterable[EvaluatorSpec]) -> dict[str, int]:
    """The named scheduler limit of each evaluator with a `max_concurrency`."""
    return {evaluator_limit(s): s.max_concurrency for s in specs if s.max_concurrency}


def _spec_digest(value: Any) -> str:
    text = value.model_dump_json() if isinstance(value, EvaluatorSpec | Target) else repr(value)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_SAFE = re.compile(r"[^\w.@-]+")
# an evaluator's part of a node key: never a dot, so that the key's last dot always ends the
# case's part (`c1.rouge_l`, not `c1.rouge.l`, whose case part would read `c1.rouge`); the
# evaluator's own name, as users see it, is unchanged (`Finding.name` is its id)
_SAFE_PART = re.compile(r"[^\w@-]+")
_OWN_PARTS = ("target", "verdict")  # the case's own nodes: no evaluator takes their names


def case_key(case: Case, repeat: int, repeats: int) -> str:
    base = _SAFE.sub("_", case.id) or "case"
    return base if repeats == 1 else f"{base}@{repeat + 1}"


def _node(
    name: str,
    spec: EvalNodeSpec,
    order: int,
    deps: tuple[str, ...],
    priority: int,
    container: bool = False,
) -> PlannedTask:
    return PlannedTask(
        name=name, spec=spec, order=order, deps=deps, priority=priority, container=container,
        line=None,
    )  # fmt: skip


# a run of a large suite holds about two parts of this many nodes at once (a node in flight
# holds ~5 KB: its spec, task, context and output; B22, 100,000 cases: 6,000 -> 1,500 nodes a
# part, peak RSS 471 -> 426 MiB), and at least `PART_SLOTS` nodes a slot, so that a high
# `--max-concurrency` still finds enough ready nodes
PART_NODES = 1500
PART_SLOTS = 8


def build_plan(suite: Suite) -> tuple[Plan, dict[str, int]]:
    """The suite's plan and the named limits it needs."""
    tasks: list[PlannedTask] = []
    _case_nodes(suite, suite.cases, tasks, 0)
    return _plan(suite, tuple(tasks)), suite_limits(suite)


def suite_limits(suite: Suite) -> dict[str, int]:
    """The named limits a suite's plan needs: its targets', each evaluator's own."""
    limits: dict[str, int] = {}
    if suite.target_concurrency:
        limits[TARGET_LIMIT] = suite.target_concurrency
    for case in suite.cases:
        limits.update(evaluator_limits(suite.evaluators_for(case)))
    return limits


def check_runs(suite: Suite) -> None:
    """Refuse (`budget.ExpansionError`, exit 2) a suite whose cases times repeats pass the
    budget of tests a file may make (engine/budget.py), before anything of it is built or run:
    a repeat count is an expansion too (`repeat: 1000` in a file, `evaluateOptions.repeat`,
    `--repeat`)."""
    if suite.repeat > 1:
        where = f"{suite.path}: " if suite.path is not None else ""
        budget.check_product(
            [("cases", len(suite.cases)), ("repeats", suite.repeat)],
            f"{where}its cases and repeats",
            advice="repeat fewer times, or split the suite",
        )


def plan_size(suite: Suite) -> int:
    """How many nodes the suite's plan has (a progress bar's total), without building it;
    a suite past the budget of runs is refused first (`check_runs`)."""
    check_runs(suite)
    return sum(suite.repeat * (2 + len(suite.evaluators_for(case))) for case in suite.cases)


def plan_parts(suite: Suite, size: int = PART_NODES) -> Iterator[tuple[Plan, Sequence[Case]]]:
    """The suite's plan in parts of about `size` nodes, each part with its cases: a case
    (all its repeats) is in one part, and the tasks are numbered on across parts as in the
    whole plan (`build_plan`), so the scheduler orders them the same way."""
    order = 0
    start = 0
    cases = suite.cases
    while start < len(cases):
        tasks: list[PlannedTask] = []
        end = start
        while end < len(cases) and (end == start or len(tasks) < size):
            order = _case_nodes(suite, cases[end : end + 1], tasks, order)
            end += 1
        yield _plan(suite, tuple(tasks)), cases[start:end]
        start = end


def _plan(suite: Suite, tasks: tuple[PlannedTask, ...]) -> Plan:
    return Plan(
        name=suite.id,
        path=suite.path or Path(f"<suite {suite.id}>"),
        root=suite.project.root if suite.project is not None else Path.cwd(),
        tasks=tasks,
        variables={},
        outer_refs=frozenset(),
    )


def _case_nodes(suite: Suite, cases: Iterable[Case], tasks: list[PlannedTask], order: int) -> int:
    """Append the nodes of `cases` to `tasks`, numbered from `order`; the next number."""
    for case in cases:
        digest = case.digest or case_digest(case)
        target = suite.target_for(case)
        target_digest = f"{digest}:{_spec_digest(target)}"
        evaluators = suite.evaluators_for(case)
        previous: tuple[str, ...] = ()
        for repeat in range(suite.repeat):
            key = case_key(case, repeat, suite.repeat)
            target_name = f"{key}.target"
            construct = node_spec
            tasks.append(
                _node(
                    target_name,
                    construct(
                        name=target_name, type="eval_target", digest=target_digest, repeat=repeat,
                        suite_ref=suite, case_ref=case, evaluator_ref=target, deps_ref=previous,
                        limits_ref=(TARGET_LIMIT,) if suite.target_concurrency else (),
                    ),
                    order, previous, 3,
                )
            )  # fmt: skip
            order += 1
            check_names = _checks(
                suite, case, key, evaluators, target_name, repeat, target_digest, tasks, order
            )
            order += len(check_names)
            verdict = f"{key}.verdict"
            tasks.append(
                _node(
                    verdict,
                    construct(
                        name=verdict, type="eval_verdict", digest=target_digest, repeat=repeat,
                        suite_ref=suite, case_ref=case, deps_ref=(target_name, check_names),
                    ),
                    order, (target_name, *check_names), 1,
                )
            )  # fmt: skip
            order += 1
            if _chained(suite):
                # the next trial runs after this one: only when none passed (pass_at_k) and
                # the trials so far cost less than the limit
                previous = (*previous, verdict)
    return order


def _checks(
    suite: Suite,
    case: Case,
    key: str,
    evaluators: tuple[EvaluatorSpec, ...],
    target_name: str,
    repeat: int,
    target_digest: str,
    tasks: list[PlannedTask],
    order: int,
) -> list[str]:
    names: list[str] = []
    cheap: list[str] = []
    seen = {f"{key}.{part}" for part in _OWN_PARTS}
    for spec in evaluators:
        name = f"{key}.{_SAFE_PART.sub('_', spec.id)}"
        while name in seen:
            name += "_"
        seen.add(name)
        judged = spec.calls_model(suite.judge_model)
        deps = [target_name]
        if suite.short_circuit and judged:
            deps.extend(cheap)
        elif not judged:
            cheap.append(name)
        limits = (evaluator_limit(spec),) if spec.max_concurrency else ()
        check_spec = node_spec(
            name=name, type="eval_check", digest=f"{target_digest}:{_spec_digest(spec)}",
            repeat=repeat, suite_ref=suite, case_ref=case, evaluator_ref=spec,
            deps_ref=tuple(deps[1:]), limits_ref=limits,
        )  # fmt: skip
        tasks.append(_node(name, check_spec, order + len(names), tuple(deps), 2, spec.own_nodes))
        names.append(name)
    return names


def _spec(ctx: TaskContext) -> EvalNodeSpec:
    spec = ctx.task.spec
    assert isinstance(spec, EvalNodeSpec)
    return spec


def _chained(suite: Suite) -> bool:
    """Whether each trial of a case runs after the one before, to stop when it may: under
    pass_at_k (AgentV's runEvalCaseWithTrials breaks once a trial passes) or a cost limit."""
    return suite.repeat > 1 and (suite.trials == "pass_at_k" or suite.trial_cost_limit is not None)


@register_task("eval_target", EvalNodeSpec, internal=True, outputs=(Output, type(None)))
async def run_target(task: PlannedTask, ctx: TaskContext) -> Output | None:
    """The target answers the case; a failure or timeout fails this node (and the case).
    None: a pass_at_k trial not needed (an earlier trial passed). A trial of a chain
    (`_chained`) that fails is an answer holding the error instead: the trial is an error
    (its checks do not run) and the next trial runs, as AgentV runs the next trial after
    one that errored (its runEvalCase scores it 0, a failing verdict)."""
    if not _chained(_spec(ctx).suite_ref):
        return await _run_target(task, ctx)
    try:
        return await _run_target(task, ctx)
    except TaskError as exc:
        return Output(error=exc.message)
    except Exception as exc:  # the engine would record its message alike
        return Output(error=str(exc) or type(exc).__name__)


async def _run_target(task: PlannedTask, ctx: TaskContext) -> Output | None:
    spec = _spec(ctx)
    suite: Suite = spec.suite_ref
    target: Target = spec.evaluator_ref
    spent = 0.0
    for dep in spec.deps_ref or ():
        earlier = ctx.scope.get(dep)
        if earlier is None:
            return None
        if isinstance(earlier, CaseResult):
            if suite.trials == "pass_at_k" and earlier.status == "passed":
                return None
            spent += earlier.cost or 0.0
    if suite.trial_cost_limit is not None and spent and spent >= suite.trial_cost_limit:
        return None
    timeout = time_limit(target, suite.timeout)
    workspace = None
    if suite.lifecycle is not None:
        try:
            workspace = await suite.lifecycle.before_case(
                spec.case_ref, spec.repeat, ctx.run.run_id
            )
        except TargetFailure as exc:
            raise TaskError(ctx.key, str(exc), permanent=True) from None
    started = time.perf_counter()
    WORKSPACE.set(workspace)
    SECONDS.set(timeout)  # the target's programs get the same limit (the node runs in a task)
    try:
        async with asyncio.timeout(timeout):
            output = await target.produce(ctx, spec.case_ref, spec.repeat)
    except TimeoutError:
        raise TaskError(
            ctx.key, f"{target.describe()} gave no answer within {timeout:g} s"
        ) from None
    except TargetFailure as exc:
        raise TaskError(ctx.key, str(exc), permanent=True) from None
    output.seconds = time.perf_counter() - started
    output.workspace = workspace
    return output


@register_task("eval_check", EvalNodeSpec, internal=True, outputs=(Finding, type(None)))
async def run_check(task: PlannedTask, ctx: TaskContext) -> Finding | None:
    """One evaluator on the case's output; its errors are recorded on the finding."""
    spec = _spec(ctx)
    evaluator: EvaluatorSpec = spec.evaluator_ref
    case: Case = spec.case_ref
    suite: Suite = spec.suite_ref
    output: Output | None = ctx.scope.get(f"{task.name.rsplit('.', 1)[0]}.target")
    if output is None or output.error is not None:  # no answer, or a trial that errored
        return None
    for dep in spec.deps_ref or ():
        found = ctx.scope.get(dep)
        # only a failure that counts against the case spares the judge (weight 0 records)
        if (
            isinstance(found, Finding)
            and found.passed is False
            and (found.weight or found.required)
        ):
            ctx.run.count("judge_calls_saved")
            return _finalise(
                evaluator, Finding(evaluator.id, skipped=f"short_circuit: {found.name} failed")
            )
    ev = EvalContext(ctx, suite, spec.repeat, judge=case.judge_model)
    return await evaluate_one(ev, evaluator, case, output)


async def evaluate_one(
    ev: EvalContext, evaluator: EvaluatorSpec, case: Case, output: Output
) -> Finding:
    """One evaluator on one output, with what every evaluator shares applied; its own
    failure (an exception, a reply with no score, a wrong return type) is recorded on the
    finding, never raised: the suite goes on."""
    try:
        finding = None
        if evaluator.portable and ev.task.run.executor.remote:
            finding = await ev.task.run.executor.evaluate(evaluator, case, output)
        if finding is None:
            finding = await evaluator.evaluate(ev, case, output)
        if not isinstance(finding, Finding):
            raise TypeError(f"returned {type(finding).__name__}, not a Finding")
    except (asyncio.CancelledError, MemoryError):
        raise  # out of memory: the run stops (engine/scheduler.py), not this evaluator alone
    except Exception as exc:
        message = str(exc) or type(exc).__name__
        if not isinstance(exc, WorkFailure):  # an evaluator's, or the executor's, reason
            message = f"{type(exc).__name__}: {message}"
        finding = Finding(evaluator.id, error=message)
    finding.judge_calls = max(finding.judge_calls, ev.calls)
    if ev.exchanges and finding.exchanges is None:
        finding.exchanges = ev.exchanges
    return _finalise(evaluator, finding)


def _finalise(spec: EvaluatorSpec, finding: Finding) -> Finding:
    """Apply what every evaluator shares: negate, threshold, weight, required."""
    finding.name = spec.id
    finding.kind = finding.kind or spec.type
    finding.check = spec.check_name
    finding.weight = spec.weight
    finding.required = bool(spec.required)
    finding.deterministic = not spec.calls_model(None)
    if finding.score is not None and spec.negate:
        finding.score = 1.0 - finding.score
        finding.hits, finding.misses = finding.misses, finding.hits
    gate = spec.gate()
    own = finding.threshold  # a Python evaluator's Evaluation may carry its own
    if finding.score is None or finding.error is not None:
        finding.passed = None
        finding.threshold = _gate_text(gate) if gate is not None else own
        return finding
    if own is None and gate is not None:
        finding.passed = gate.holds(finding.score)
        finding.threshold = _gate_text(gate)
    if spec.negate:
        finding.veto = None
    elif finding.veto is not None:
        finding.passed = False
    return finding


def _gate_text(gate: ThresholdSpec) -> str:
    """The gate's text, one string for every finding that gives it (a suite keeps each
    case's findings to its end: `>= 1` a million times otherwise)."""
    return sys.intern(gate.text())


@register_task("eval_verdict", EvalNodeSpec, internal=True, outputs=(CaseResult, type(None)))
async def run_verdict(task: PlannedTask, ctx: TaskContext) -> CaseResult | None:
    """The case's score and verdict from its findings (None: a trial not needed)."""
    spec = _spec(ctx)
    target_name, checks = spec.deps_ref
    output: Output | None = ctx.scope.get(target_name)
    if output is None:
        return None
    suite: Suite = spec.suite_ref
    if output.error is not None:  # a trial whose target failed (run_target)
        return _errored(suite, spec.case_ref, spec.repeat, output.error)
    # sized exactly (a comprehension's list keeps room to grow): the case's result keeps it
    findings: list[Any] = [None] * len(checks)
    for index, name in enumerate(checks):
        findings[index] = ctx.scope.get(name)
    result = decide(suite, spec.case_ref, spec.repeat, output, findings)
    if suite.lifecycle is not None:
        result.warnings = await suite.lifecycle.after_case(
            spec.case_ref, spec.repeat, ctx.run.run_id, output.workspace
        )
    callback = spec.suite_ref.on_case
    if callback is not None:
        outcome = callback(result)
        if inspect.isawaitable(outcome):
            await outcome
    return result


async def execute_plan(
    project: Project,
    plan: Plan,
    options: RunOptions,
    observer: Observer | None,
    limits: dict[str, int],
    max_concurrency: int | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Run an evaluation's plan (a suite's cases, or a file's tests) as every evaluation
    runs: through the engine's runner, so it has a run store row, `--resume`, the call cache
    and the project's limits; it keeps going past a failed node, under the suite's own
    `max_concurrency` when the command gave none."""
    options = _eval_options(options, limits, max_concurrency, run_id)
    return await execute(project, plan, options, observer)


def _eval_options(
    options: RunOptions, limits: dict[str, int], max_concurrency: int | None, run_id: str | None
) -> RunOptions:
    return dataclasses.replace(
        options,
        keep_going=True,
        max_concurrency=options.max_concurrency or max_concurrency,
        limits={**options.limits, **limits},
        run_id=options.run_id or run_id,
    )


async def run_suite(
    suite: Suite, options: RunOptions, observer: Observer | None = None
) -> SuiteRun:
    """Run every case of `suite` on one scheduler; results in case order.

    The plan is built and run in parts (`plan_parts`): each part's case results are taken
    when it finishes and its nodes let go, so a suite of a million cases holds its cases and
    their results, not three nodes of each."""
    from .trials import combine_trials

    project = suite.project
    assert isinstance(project, Project)
    check_runs(suite)
    started = time.perf_counter()
    cases: list[CaseResult] = []
    parts = plan_parts(suite, part_nodes(suite, options))
    held: collections.deque[Sequence[Case]] = collections.deque()

    def next_parts() -> Iterator[Plan]:
        for part, part_cases in parts:
            held.append(part_cases)
            yield part

    def harvest(part: Plan, outputs: dict[str, Any], results: dict[str, TaskResult]) -> None:
        cases.extend(_case_results(suite, held.popleft(), outputs, results))

    head = _plan(suite, ())
    limits = suite_limits(suite)
    if suite.lifecycle is not None:
        await suite.lifecycle.before_all(suite)
    try:
        options = _eval_options(options, limits, suite.max_concurrency, suite.run_id)
        result = await execute(project, head, options, observer, PlanParts(next_parts(), harvest))
    finally:
        warnings = await suite.lifecycle.after_all(suite) if suite.lifecycle is not None else []
    return SuiteRun(
        suite=suite,
        cases=combine_trials(suite, cases),
        seconds=time.perf_counter() - started,
        usage=result.usage,
        stats=dict(result.stats),
        run_id=result.run_id,
        warnings=warnings,
    )


def part_nodes(suite: Suite, options: RunOptions) -> int:
    """How many nodes a part of the suite's plan has (`plan_parts`): `PART_NODES`, more
    under a high concurrency."""
    project = suite.project
    configured = project.config.max_concurrency if isinstance(project, Project) else None
    slots = options.max_concurrency or suite.max_concurrency or configured or DEFAULT_CONCURRENCY
    return max(PART_NODES, PART_SLOTS * slots)


def _case_results(
    suite: Suite, cases: Iterable[Case], outputs: dict[str, Any], results: dict[str, TaskResult]
) -> Iterator[CaseResult]:
    """Each case's result (times its repeats) from its part's outputs and results."""
    for case in cases:
        for repeat in range(suite.repeat):
            key = case_key(case, repeat, suite.repeat)
            verdict = outputs.get(f"{key}.verdict")
            if isinstance(verdict, CaseResult):
                yield verdict
                continue
            target = results.get(f"{key}.target")
            if f"{key}.verdict" in outputs and verdict is None:
                continue  # a trial not needed
            error = (target.error if target is not None else None) or "the case did not run"
            if target is not None and target.status is Status.SKIPPED:
                error = "the case did not run (the suite was stopped)"
            yield _errored(suite, case, repeat, error)


def _errored(suite: Suite, case: Case, repeat: int, error: str) -> CaseResult:
    prefix = ".target: "
    if prefix in error:
        error = error.split(prefix, 1)[1]
    return CaseResult(
        id=case.id, repeat=repeat, status="error", input=case.input, expected=case.expected,
        error=error, tags=list(case.tags), target=case.target,
        verdict=suite.rule.error_label(),
        metadata=dict(case.metadata) if isinstance(case.metadata, dict) else {},
    )  # fmt: skip
