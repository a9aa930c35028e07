"""Running tests as nodes of one DAG on one scheduler.

Each test of a file is a container node of a test plan. A workflow test of `task_ref: X`
runs the minimal sub-DAG of X (`subdag.sub_plan`) n times as isolated children of its node,
then judges the answers with `select_consistent`, whose judge calls are leaf nodes of the
same scheduler. Agent tests run the agent's tool loop as leaf nodes. Every test of the file
shares the scheduler, so the global limit and the per-model and per-database limits hold
across tests, and one test's failure never stops the others (keep-going).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from ....engine import variables as workflow_variables
from ....engine.context import TaskContext
from ....engine.errors import AccordError
from ....engine.kinds import register_task
from ....engine.plan import Plan, PlannedTask
from ....engine.render import render
from ....engine.results import Status, TaskResult
from ....engine.runner import RunOptions
from ....engine.scheduler import Observer
from ....engine.spec import TaskSpec, variable_spec
from ...agent.tools import run_agent_loop
from ..core.nodes import evaluator_limits, execute_plan
from ..core.subdag import contexts_of, output_text, sampled, sub_plan
from . import scoring
from .outcomes import SuiteResult, TestOutcome
from .prepared import PreparedSuite, PreparedTest


@dataclass
class Produced:
    """One answer of the tested subject: its text and the SQL behind it, or an error."""

    text: str = ""
    contexts: tuple[str, ...] = ()
    error: str | None = None
    description: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()


class TestNodeSpec(TaskSpec):
    """A test of the file as a node of the test plan (compiled, never written in a file)."""

    __test__ = False  # not a pytest test class

    type: Literal["accord_test"] = "accord_test"
    test: Any = Field(description="The PreparedTest.")
    suite: Any = Field(description="The PreparedSuite the test belongs to.")


class Subject:
    """What a test runs: the sub-DAG of a workflow task, or an agent, once per call."""

    def __init__(self, ctx: TaskContext, suite: PreparedSuite, test: PreparedTest) -> None:
        self.ctx = ctx
        self.suite = suite
        self.test = test
        self.plan: Plan | None = ctx.task.children.get("subject")

    async def answer(self, prompt: str | None, run: int, index: int, label: str) -> Produced:
        """Run the subject once (sample `run`); failures are returned, never raised."""
        try:
            if self.plan is not None:
                return await self._workflow(prompt, run, index, label)
            return await self._agent(prompt or "", run, label)
        except AccordError as exc:
            return Produced(error=exc.text_in(exc.task))

    async def _workflow(self, prompt: str | None, run: int, index: int, label: str) -> Produced:
        assert self.plan is not None and self.test.task_ref is not None
        given = {**self.suite.variables}
        if self.test.variable:
            given[self.test.variable] = prompt
        values = workflow_variables.resolve(
            self.plan.variables, given, where=str(self.plan.path), lines=self.plan.variable_lines
        )
        outputs = await self.ctx.run_child(
            sampled(self.plan, run), dict(values), label=label, index=index, isolated=True
        )
        task_ref = self.test.task_ref
        text = output_text(self.plan, task_ref, outputs[task_ref])
        description = self._description({**values, **outputs})
        return Produced(text, tuple(contexts_of(outputs)), None, description)

    def _description(self, context: dict[str, Any]) -> str | None:
        """The tested task's prompt as it was rendered in this run (the judge's question)."""
        assert self.plan is not None and self.test.task_ref is not None
        spec = self.plan.by_name[self.test.task_ref].spec
        prompt = getattr(spec, "prompt", None)
        if not isinstance(prompt, str):
            return None
        scope = {**self.ctx.run.builtins(), **context}
        try:
            local = {
                k: render(v, scope) if isinstance(v, str) else v
                for k, v in getattr(spec, "variables", {}).items()
            }
            return render(prompt, {**scope, **local})
        except AccordError:
            return prompt

    async def _agent(self, prompt: str, run: int, label: str) -> Produced:
        agent = self.suite.agent
        assert agent is not None
        defaults = {k: variable_spec(v).default for k, v in agent.variables.items()}
        defaults.update(self.suite.variables)  # `accord test -v name=value`

        async def body() -> Produced:
            try:
                reply = await run_agent_loop(
                    agent, prompt, self.ctx, sample=run, variables=defaults
                )
            except AccordError as exc:
                return Produced(error=exc.text_in(exc.task))
            return Produced(
                str(reply), tuple(contexts_of(reply)), tool_calls=tuple(reply.tool_calls)
            )

        (produced,) = await self.ctx.run_leaves([(label.lstrip("."), body)], type="test_run")
        assert isinstance(produced, Produced)
        return produced


@register_task("accord_test", TestNodeSpec, internal=True, container=True)
async def run_test_node(task: PlannedTask, ctx: TaskContext) -> TestOutcome:
    """Run one test; its errors end up in the outcome, so the other tests go on.

    The outcome is handed on by a leaf node (`test_N.outcome`), which the run store keeps
    with the test's digest: a container's own output is not stored, and `--resume` reuses a
    finished test's outcome whole instead of running its subject and judges again."""
    spec = task.spec
    assert isinstance(spec, TestNodeSpec)
    test: PreparedTest = spec.test
    digest = test_digest(spec.suite, test, task)
    run = ctx.run
    key = f"{ctx.key}.{OUTCOME}"
    outcome = None
    if run.resume is not None:
        reused, stored = run.resume.lookup(key, digest, lambda o: isinstance(o, TestOutcome))
        if reused:
            outcome = stored
            if run.store is not None:
                run.store.reused.add(key)
    if outcome is None:
        outcome = await _run_test(ctx, spec.suite, test)
    if run.store is not None and _complete(outcome):
        # only a test that ran cleanly is kept for `--resume` (its output is stored with a
        # digest): one with an error or a failed run or case runs again, as a failed node does
        run.store.input_hashes[key] = digest
    found = outcome

    async def hand_on() -> TestOutcome:
        return found

    (result,) = await ctx.run_leaves([(OUTCOME, hand_on)], type="test_outcome")
    assert isinstance(result, TestOutcome)
    return result


OUTCOME = "outcome"


async def _run_test(ctx: TaskContext, suite: PreparedSuite, test: PreparedTest) -> TestOutcome:
    outcome = new_outcome(suite, test)
    subject = Subject(ctx, suite, test)
    try:
        if test.kind == "consistency":
            await scoring.consistency(ctx, subject, test, outcome)
        else:
            await scoring.cases(ctx, subject, test, outcome)
    except AccordError as exc:
        outcome.error = exc.text_in(exc.task)
    return outcome


def _complete(outcome: TestOutcome) -> bool:
    return (
        outcome.error is None
        and not outcome.failed_runs
        and all(p.verdict is not None for p in outcome.pairs)
        and not any(c.error is not None or c.judge_errors for c in outcome.cases)
    )


def test_digest(suite: PreparedSuite, test: PreparedTest, task: PlannedTask) -> str:
    """What decides a test's outcome: the test as prepared (cases, judging, evaluators), the
    `-v` values, the tested file and agent, and the specs and files of the tested sub-DAG."""
    digest = hashlib.sha256(repr((test, sorted(suite.variables.items()))).encode())
    for path in (suite.path, suite.agent_path):
        if path is not None and path.is_file():
            digest.update(path.read_bytes())
    subject = task.children.get("subject")
    for planned in subject.tasks if subject is not None else ():
        spec = planned.spec
        digest.update(spec.model_dump_json().encode())
        for _loc, relative in spec.sources():
            source = suite.project.root / relative
            if "{" not in relative and source.is_file():
                digest.update(source.read_bytes())
        for path in spec.input_files(suite.project.root):
            if path.is_file():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def new_outcome(suite: PreparedSuite, test: PreparedTest) -> TestOutcome:
    if test.task_ref is not None:
        target = f"task '{test.task_ref}' of {suite.path.name}"
    elif suite.agent_path is not None:
        target = f"agent {suite.agent_path.name}"
    else:
        target = suite.path.name
    return TestOutcome(
        index=test.index,
        name=test.name,
        kind=test.kind,
        target=target,
        n=test.n,
        task_description=test.task_description or "",
    )


# --- the test plan and the run ---------------------------------------------------------------


def build_test_plan(suite: PreparedSuite) -> Plan:
    """One container node per test; workflow tests carry their sub-DAG as a child plan."""
    tasks: list[PlannedTask] = []
    for position, test in enumerate(suite.tests):
        children: dict[str, Plan] = {}
        if suite.plan is not None and test.task_ref is not None:
            children["subject"] = sub_plan(suite.plan, test.task_ref)
        depth = max((t.priority for t in children["subject"].tasks), default=0) if children else 1
        tasks.append(
            PlannedTask(
                name=f"test_{test.index}",
                spec=TestNodeSpec(name=f"test_{test.index}", test=test, suite=suite),
                order=position,
                deps=(),
                priority=depth + 1,
                container=True,
                line=None,
                children=children,
            )
        )
    base = suite.plan
    return Plan(
        name=f"{suite.name} tests",
        path=suite.path,
        root=suite.project.root,
        tasks=tuple(tasks),
        variables=base.variables if base is not None else {},
        outer_refs=frozenset(),
        workflow=base.workflow if base is not None else None,
    )


async def run_tests(
    suite: PreparedSuite, options: RunOptions, observer: Observer | None = None
) -> SuiteResult:
    """Run every test of `suite` on one scheduler, through the runner every evaluation runs
    on (`nodes.execute_plan`: run store, `--resume`); outcomes in file order."""
    plan = build_test_plan(suite)
    started = time.perf_counter()
    result = await execute_plan(
        suite.project, plan, options, observer, _evaluator_limits(suite), suite.max_concurrency
    )
    by_key = {r.key: r for r in result.results}
    outcomes = [_outcome(suite, task, by_key.get(task.name)) for task in plan.tasks]
    return SuiteResult(
        file=suite.path,
        name=suite.name,
        tests=outcomes,
        seconds=time.perf_counter() - started,
        usage=result.usage,
        stats=dict(result.stats),
        run_id=result.run_id,
    )


def _evaluator_limits(suite: PreparedSuite) -> dict[str, int]:
    """The named limit of every evaluator with a `max_concurrency`."""
    return evaluator_limits(
        e for t in suite.tests for e in (*t.evaluators, *(x for c in t.cases for x in c.evaluators))
    )


def _outcome(suite: PreparedSuite, task: PlannedTask, result: TaskResult | None) -> TestOutcome:
    spec = task.spec
    assert isinstance(spec, TestNodeSpec)
    if result is not None and result.status is Status.SUCCEEDED:
        outcome = result.output
        assert isinstance(outcome, TestOutcome)
    else:
        outcome = new_outcome(suite, spec.test)
        outcome.error = (result.error if result else None) or "the test did not run"
    outcome.seconds = result.duration if result is not None else 0.0
    return outcome
