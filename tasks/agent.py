"""`agent`: a model answers a rendered prompt, optionally with an agent file's tools."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from engine.context import TaskContext
from engine.errors import TaskError
from engine.plan import PlannedTask
from engine.registry import register_task
from engine.spec import TaskSpec


class AgentTaskSpec(TaskSpec):
    """A prompt answered by `agent_ref` (an `.agent.yml`) or an inline `model`."""

    type: Literal["agent"]
    agent_ref: str | None = Field(None, description="Agent file, relative to the root.")
    model: str | None = Field(None, description="Model name from config, or a litellm string.")
    prompt: str = Field(description="The prompt (Jinja).")
    variables: dict[str, Any] = Field(default_factory=dict)
    consistency_run: int = Field(1, ge=1, description="Runs; > 1 selects the most consistent.")
    consistency_prompt: str | None = None
    consistency_model: str | None = None
    consistency_prejudge: Literal["off", "identical", "tolerant"] | None = None

    def templates(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        yield ("prompt",), self.prompt
        for name, value in self.variables.items():
            if isinstance(value, str):
                yield ("variables", name), value
        yield from super().templates()

    def local_names(self) -> frozenset[str]:
        return frozenset(self.variables)

    def sources(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        if self.agent_ref is not None:
            yield ("agent_ref",), self.agent_ref


@register_task("agent", AgentTaskSpec)
async def run_agent(task: PlannedTask, ctx: TaskContext) -> str:
    raise TaskError(ctx.key, "agent tasks are not available in this build of accord")
