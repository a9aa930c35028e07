"""`workflow`: run another workflow file with typed variables; its outputs become a map."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ..engine import variables as workflow_variables
from ..engine.errors import ConfigError, TaskError
from ..engine.kinds import register_task
from ..engine.plan import PlannedTask
from ..engine.spec import TaskSpec, variable_templates

if TYPE_CHECKING:
    from ..engine.context import TaskContext


class SubWorkflowSpec(TaskSpec):
    """Runs `src` (relative to the project root) as a child of this task."""

    type: Literal["workflow"]
    src: str = Field(description="Path of the child workflow, relative to the root.")
    variables: dict[str, Any] = Field(
        default_factory=dict, description="Values for the child's variables (Jinja)."
    )

    def templates(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        yield from variable_templates(self.variables)
        yield from super().templates()

    def child_variables(self) -> frozenset[str] | None:
        return frozenset(self.variables)

    def subworkflows(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        yield ("src",), self.src


@register_task("workflow", SubWorkflowSpec, container=True)
async def run_subworkflow(task: PlannedTask, ctx: TaskContext) -> dict[str, Any]:
    spec = task.spec
    assert isinstance(spec, SubWorkflowSpec)
    child = task.children[f"workflow:{spec.src}"]
    given = ctx.evaluate_variables(spec.variables)
    try:
        values = workflow_variables.resolve(
            child.variables, given, where=spec.src, lines=child.variable_lines
        )
    except ConfigError as exc:
        raise TaskError(ctx.key, exc.message) from None
    return await ctx.run_child(child, values, label="", index=0, isolated=True)
