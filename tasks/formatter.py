"""`formatter`: render a Jinja template to text."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from ..engine.kinds import register_task
from ..engine.plan import PlannedTask
from ..engine.spec import TaskSpec

if TYPE_CHECKING:
    from ..engine.context import TaskContext


class FormatterSpec(TaskSpec):
    """Renders `template` with every output and variable in scope."""

    type: Literal["formatter"]
    template: str = Field(description="Jinja template.")

    def templates(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        yield ("template",), self.template
        yield from super().templates()


@register_task("formatter", FormatterSpec, outputs=(str,))
async def run_formatter(task: PlannedTask, ctx: TaskContext) -> str:
    spec = task.spec
    assert isinstance(spec, FormatterSpec)
    return ctx.render(spec.template)
