"""`loop_sequential`: run nested tasks once per value, `concurrency` iterations at a time."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ..engine.errors import TaskError
from ..engine.kinds import register_task
from ..engine.plan import PlannedTask
from ..engine.render import TableView
from ..engine.spec import ChildScope, TaskSpec

if TYPE_CHECKING:
    from ..engine.context import TaskContext


class LoopSpec(TaskSpec):
    """Iterates `values`; inside, `{{ value }}` and `{{ <loop name>.value }}` are the item.

    The output is a list with one mapping per value, in the order of `values`, keyed by the
    nested task names plus `value`. Values keep their types (Oxy turns them into text).
    """

    type: Literal["loop_sequential"]
    values: list[Any] | str = Field(description="A YAML list, or a Jinja expression.")
    tasks: list[AnyTask] = Field(min_length=1, description="Tasks run for each value.")  # type: ignore[name-defined]  # noqa: F821
    concurrency: int = Field(1, ge=1, description="Iterations run at once.")

    def templates(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        if isinstance(self.values, str):
            yield ("values",), self.values
        yield from super().templates()

    def child_scopes(self) -> list[ChildScope]:
        return [ChildScope("body", ("tasks",), list(self.tasks), frozenset({self.name, "value"}))]


def loop_values(spec: LoopSpec, ctx: TaskContext) -> list[Any]:
    if isinstance(spec.values, list):
        return spec.values
    value = ctx.evaluate(spec.values)
    if isinstance(value, TableView):
        if len(value.columns) == 1:
            return value.column(value.columns[0])
        return list(value)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise TaskError(
                ctx.key,
                f"values {spec.values.strip()!r} gave text, not a list: {value[:80]!r}",
            ) from None
    if isinstance(value, dict):
        return list(value)
    if not isinstance(value, list | tuple):
        raise TaskError(ctx.key, f"values must yield a list, got {type(value).__name__}")
    return list(value)


@register_task("loop_sequential", LoopSpec, container=True)
async def run_loop(task: PlannedTask, ctx: TaskContext) -> list[dict[str, Any]]:
    spec = task.spec
    assert isinstance(spec, LoopSpec)
    import asyncio  # task modules load for `accord validate`, which runs nothing async

    values = loop_values(spec, ctx)
    body = task.children["body"]
    gate = asyncio.Semaphore(spec.concurrency)

    async def iteration(index: int, value: Any) -> dict[str, Any]:
        async with gate:
            names = {"value": value, spec.name: {"value": value}}
            outputs = await ctx.run_child(body, names, label=f"[{index}]", index=index)
            return {**outputs, "value": value}

    results = await asyncio.gather(
        *(iteration(i, v) for i, v in enumerate(values)), return_exceptions=True
    )
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        first = errors[0]
        if isinstance(first, TaskError):
            raise TaskError(
                ctx.key,
                f"{len(errors)} of {len(values)} iterations failed; first: {first.message}",
            )
        raise first
    return [r for r in results if isinstance(r, dict)]
