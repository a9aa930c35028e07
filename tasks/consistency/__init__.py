"""Consistency selection: n answers to one prompt, reduced by pairwise judging.

`consistency_run: n` on an agent task compiles into n `agent_sample` nodes and one
`consistency_select` node in the same DAG. The select node clusters identical answers, lets
the deterministic pre-judge settle what it can, and schedules one judge node per remaining
distinct pair. Every pair judged consistent gives +1 to both answers; score = wins / (k - 1);
the highest score wins and ties go to the lowest run index.

Beside it: `judge` (the default prompt, verdict parsing, one judge call), `prejudge` (the
deterministic comparator) with `facts` (numbers, dates, directions) and `reading` (how an
answer's text is read for them).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from accord.engine import log
from accord.engine.codec import register_dataclass
from accord.engine.errors import TaskError
from accord.engine.plan import PlannedTask
from accord.engine.registry import register_task
from accord.engine.spec import TaskSpec
from accord.tasks.consistency.judge import DEFAULT_PROMPT, JudgeOutcome, Verdict, judge_pair

if TYPE_CHECKING:
    from accord.engine.context import TaskContext

Loc = tuple[str | int, ...]


@dataclass
class ConsistencyResult:
    """The selected answer and how it was chosen. Renders as the selected answer."""

    value: Any
    score: float
    selected: int
    runs: list[dict[str, Any]]
    judge_calls: int
    pairs_prejudged: int
    pairs: list[dict[str, Any]] = field(default_factory=list)
    failed_runs: list[dict[str, Any]] = field(default_factory=list)
    judge_errors: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return str(self.value)

    @property
    def sql(self) -> str | None:
        return getattr(self.value, "sql", None)

    @property
    def table(self) -> Any:
        return getattr(self.value, "table", None)

    def to_json(self) -> dict[str, Any]:
        return {
            "value": str(self.value),
            "score": round(self.score, 6),
            "selected": self.selected,
            "runs": self.runs,
            "judge_calls": self.judge_calls,
            "pairs_prejudged": self.pairs_prejudged,
            "pairs": self.pairs,
            "failed_runs": self.failed_runs,
            "judge_errors": self.judge_errors,
        }


@dataclass(frozen=True)
class SampleFailure:
    """A consistency run that failed; it is dropped from the selection and reported."""

    index: int
    error: str


# --- selection ---------------------------------------------------------------------------


register_dataclass("consistency_result", ConsistencyResult)
register_dataclass("sample_failure", SampleFailure)


@dataclass
class Selection:
    """Inputs of one pairwise reduction."""

    outputs: Sequence[Any]
    task_description: str
    prompt: str
    model: str | None
    prejudge_mode: Literal["off", "identical", "tolerant"]
    pairs: Literal["all", "circular"] = "all"


def pair_plan(count: int, pairs: str) -> list[tuple[int, int]]:
    """All unordered pairs i<j, or Oxy's circular n pairs (i, i+1 mod n)."""
    if pairs == "circular" and count > 2:
        return sorted({tuple(sorted((i, (i + 1) % count))) for i in range(count)})  # type: ignore[misc]
    return list(itertools.combinations(range(count), 2))


async def select_consistent(ctx: TaskContext, selection: Selection) -> ConsistencyResult:
    """Cluster, pre-judge, judge the rest as nodes of the run, score and select."""
    texts = [str(o) for o in selection.outputs]
    count = len(texts)
    if count == 1:
        runs = [{"index": 0, "output": texts[0], "score": 1.0}]
        return ConsistencyResult(selection.outputs[0], 1.0, 0, runs, 0, 0)
    from accord.tasks.consistency.prejudge import normalise, prejudge

    keyer = normalise if selection.prejudge_mode != "off" else (lambda t: t)
    cluster_of: dict[str, int] = {}
    cluster = [cluster_of.setdefault(keyer(t), len(cluster_of)) for t in texts]
    decided: dict[tuple[int, int], tuple[Verdict | None, str, str]] = {}
    to_judge: list[tuple[int, int]] = []
    representative = {c: cluster.index(c) for c in set(cluster)}
    for i, j in pair_plan(count, selection.pairs):
        ci, cj = sorted((cluster[i], cluster[j]))
        if ci == cj:
            continue
        key = (ci, cj)
        if key in decided or key in to_judge:
            continue
        a, b = texts[representative[ci]], texts[representative[cj]]
        early = (
            prejudge(a, b, selection.prejudge_mode) if selection.prejudge_mode != "off" else None
        )
        if early is not None:
            decided[key] = (early, "settled by the pre-judge", "prejudge")
        else:
            to_judge.append(key)
    bodies = [
        (
            f"judge[{representative[ci]},{representative[cj]}]",
            _judge_body(ctx, texts[representative[ci]], texts[representative[cj]], selection),
        )
        for ci, cj in to_judge
    ]
    outcomes: list[JudgeOutcome] = await ctx.run_leaves(bodies, type="judge") if bodies else []
    errors: list[str] = []
    for key, outcome in zip(to_judge, outcomes, strict=True):
        decided[key] = (outcome.verdict, outcome.reasoning, "judge")
        if outcome.error:
            errors.append(
                f"runs {representative[key[0]]} and {representative[key[1]]}: {outcome.error}"
            )
    return _score(selection, texts, cluster, decided, len(to_judge), errors)


def _judge_body(ctx: TaskContext, first: str, second: str, selection: Selection) -> Any:
    async def body() -> JudgeOutcome:
        return await judge_pair(
            ctx,
            first,
            second,
            task_description=selection.task_description,
            prompt=selection.prompt,
            model=selection.model,
        )

    return body


def _score(
    selection: Selection,
    texts: list[str],
    cluster: list[int],
    decided: dict[tuple[int, int], tuple[Verdict | None, str, str]],
    judge_calls: int,
    errors: list[str],
) -> ConsistencyResult:
    count = len(texts)
    wins = [0] * count
    judged = [0] * count
    pairs: list[dict[str, Any]] = []
    prejudged = 0
    for i, j in pair_plan(count, selection.pairs):
        ci, cj = sorted((cluster[i], cluster[j]))
        outcome: tuple[Verdict | None, str, str] = (
            ("A", "identical answers", "identical") if ci == cj else decided[(ci, cj)]
        )
        verdict, reasoning, source = outcome
        if source != "judge":
            prejudged += 1
        pairs.append({"runs": [i, j], "verdict": verdict, "source": source, "reasoning": reasoning})
        if verdict is None:
            continue
        judged[i] += 1
        judged[j] += 1
        if verdict == "A":
            wins[i] += 1
            wins[j] += 1
    scores = [wins[i] / judged[i] if judged[i] else 0.0 for i in range(count)]
    best = max(range(count), key=lambda i: (scores[i], -i))
    runs = [{"index": i, "output": texts[i], "score": round(scores[i], 6)} for i in range(count)]
    return ConsistencyResult(
        selection.outputs[best],
        scores[best],
        best,
        runs,
        judge_calls,
        prejudged,
        pairs,
        judge_errors=errors,
    )


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
    from accord.tasks.agent import answer

    spec = task.spec
    assert isinstance(spec, AgentSampleSpec)
    return await answer(spec.task, ctx, sample=spec.sample)


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
    from accord.tasks.agent import task_agent

    model = agent.consistency_model or ctx.run.project.config.defaults.judge_model
    if model is None:
        model = task_agent(agent, ctx)[0].model or ctx.run.project.default_model
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
