"""`conditional`: run the tasks of the first condition that holds, else the `else` tasks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field

from ..engine.kinds import register_task
from ..engine.plan import PlannedTask
from ..engine.render import single_expression
from ..engine.spec import ChildScope, Spec, TaskSpec

if TYPE_CHECKING:
    from ..engine.context import TaskContext


class ConditionSpec(Spec):
    """One branch: `if` is a Jinja expression, bare (`x > 3`) or wrapped (`{{ x > 3 }}`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    if_: str = Field(alias="if", description="Jinja expression.")
    tasks: list[AnyTask] = Field(min_length=1)  # type: ignore[name-defined]  # noqa: F821


class ConditionalSpec(TaskSpec):
    """The output is the map of outputs of the branch taken (empty when none is)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    type: Literal["conditional"]
    conditions: list[ConditionSpec] = Field(min_length=1)
    else_: list[AnyTask] | None = Field(None, alias="else")  # type: ignore[name-defined]  # noqa: F821

    def templates(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        for index, condition in enumerate(self.conditions):
            source = condition.if_
            if single_expression(source) is None:
                source = "{{ " + source + " }}"
            yield ("conditions", index, "if"), source
        yield from super().templates()

    def child_scopes(self) -> list[ChildScope]:
        scopes = [
            ChildScope(f"if{index}", ("conditions", index, "tasks"), list(c.tasks), frozenset())
            for index, c in enumerate(self.conditions)
        ]
        if self.else_:
            scopes.append(ChildScope("else", ("else",), list(self.else_), frozenset()))
        return scopes


@register_task("conditional", ConditionalSpec, container=True)
async def run_conditional(task: PlannedTask, ctx: TaskContext) -> dict[str, Any]:
    spec = task.spec
    assert isinstance(spec, ConditionalSpec)
    for index, condition in enumerate(spec.conditions):
        if ctx.holds(condition.if_):
            return await ctx.run_child(
                task.children[f"if{index}"], {}, label=f".if{index}", index=index
            )
    if spec.else_:
        return await ctx.run_child(
            task.children["else"], {}, label=".else", index=len(spec.conditions)
        )
    return {}
