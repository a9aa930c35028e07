"""The nodes an agent task with `consistency_run: n` compiles into: n `agent_sample` nodes and
one `consistency_select` node, in the same DAG."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ...engine import log
from ...engine.errors import TaskError
from ...engine.kinds import register_task
from ...engine.plan import PlannedTask
from ...engine.spec import TaskSpec
from .judge import DEFAULT_PROMPT
from .select import ConsistencyResult, SampleFailure, Selection, pair_plan, select_consistent

if TYPE_CHECKING:
    from ...engine.context import TaskContext

Loc = tuple[str | int, ...]

# --- the compiled nodes ------------------------------------------------------------------


class AgentSampleSpecBase(TaskSpec):
    """A compiled node that runs sample `sample` of an agent task's prompt; its templates and
    names are the agent task's."""

    sample: int
    task: Any = Field(description="The agent task being sampled.")

    def templates(self) -> Iterable[tuple[Loc, str]]:
        return self.task.templates()  # type: ignore[no-any-return]

    def local_names(self) -> frozenset[str]:
        return self.task.local_names()  # type: ignore[no-any-return]


class AgentSampleSpec(AgentSampleSpecBase):
    """One of the n runs of a consistency task (compiled, never written in a file)."""

    type: Literal["agent_sample"] = "agent_sample"


class ConsistencySelectSpec(TaskSpec):
    """The reduction of a consistency task's runs (compiled, never written in a file)."""

    type: Literal["consistency_select"] = "consistency_select"
    runs: list[str]
    task: Any

    def templates(self) -> Iterable[tuple[Loc, str]]:
        for run in self.runs:
            yield ("runs",), "{{ " + run + " }}"


def consistency_children(task: Any) -> list[TaskSpec]:
    """The n sample specs and the select spec of an agent task with consistency_run > 1."""
    base = task.model_copy(update={"consistency_run": 1, "export": None, "cache": None})
    samples: list[TaskSpec] = [
        AgentSampleSpec(
            name=f"run_{i}", sample=i, task=base, retry=task.retry, timeout=task.timeout
        )
        for i in range(task.consistency_run)
    ]
    select = ConsistencySelectSpec(name="select", runs=[s.name for s in samples], task=task)
    return [*samples, select]


def _sample_failure(task: PlannedTask, key: str, error: str) -> SampleFailure:
    """A run that failed after the task's retries is returned, not raised, so the selection
    can drop it."""
    spec = task.spec
    assert isinstance(spec, AgentSampleSpec)
    log.get().warning("consistency_run_failed", task=key, error=error)
    return SampleFailure(spec.sample, error)


@register_task("agent_sample", AgentSampleSpec, internal=True, on_failure=_sample_failure)
async def run_sample(task: PlannedTask, ctx: TaskContext) -> Any:
    """One run of the agent task's prompt (retried and timed out as the task says)."""
    spec = task.spec
    assert isinstance(spec, AgentSampleSpec)
    return await spec.task.answer(ctx, sample=spec.sample)


@register_task("consistency_select", ConsistencySelectSpec, internal=True, container=True)
async def run_select(task: PlannedTask, ctx: TaskContext) -> ConsistencyResult:
    spec = task.spec
    assert isinstance(spec, ConsistencySelectSpec)
    agent = spec.task
    results = [ctx.scope.get(name) for name in spec.runs]
    failures = [r for r in results if isinstance(r, SampleFailure)]
    answers = [r for r in results if not isinstance(r, SampleFailure)]
    indexes = [i for i, r in enumerate(results) if not isinstance(r, SampleFailure)]
    if not answers:
        raise TaskError(
            ctx.key, f"all {len(results)} consistency runs failed; first: {failures[0].error}"
        )
    custom = agent.consistency_prompt or ctx.plan.sections.get("consistency_prompt")
    mode: Literal["off", "identical", "tolerant"] = agent.consistency_prejudge or (
        "identical" if custom else "tolerant"
    )
    model = agent.consistency_model or ctx.run.project.config.defaults.judge_model
    if model is None:
        model = agent.answering_model(ctx) or ctx.run.project.default_model
    selection = Selection(
        answers,
        ctx.render(agent.prompt, ctx.evaluate_variables(agent.variables)),
        custom or DEFAULT_PROMPT,
        model,
        mode,
    )
    result = await select_consistent(ctx, selection)
    result.selected = indexes[result.selected]
    for run in result.runs:
        run["index"] = indexes[run["index"]]
    result.failed_runs = [{"index": f.index, "error": f.error} for f in failures]
    total_pairs = len(pair_plan(len(answers), "all"))
    ctx.run.count("judge_calls", result.judge_calls)
    ctx.run.count("judge_calls_saved", total_pairs - result.judge_calls)
    if result.score < 0.25:
        log.get().warning("consistency_low", task=ctx.key, score=round(result.score, 3))
    for error in result.judge_errors:
        log.get().warning("judge_error", task=ctx.key, error=error)
    return result
