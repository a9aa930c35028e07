"""The pairwise reduction: n answers to one prompt, clustered, pre-judged, the remaining
distinct pairs judged as nodes of the run, scored and one selected (see the package)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ...engine.codec import register_dataclass
from .judge import JudgeOutcome, Verdict, judge_pair

if TYPE_CHECKING:
    from ...engine.context import TaskContext


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
    from .prejudge import normalise, prejudge

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
