"""The `agent` task type: a model answers a rendered prompt, with an agent file's instructions
and tools; `consistency_run: n` compiles it into n samples and a selection
(`accord.tasks.consistency.nodes`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ...engine.errors import AccordError, ValidationError
from ...engine.kinds import register_task
from ...engine.paths import PathError, inside
from ...engine.plan import PlannedTask
from ...engine.spec import AgentSpec, ChildScope, TaskSpec, variable_templates
from ..consistency.nodes import consistency_children
from .agent_files import agent_file_issues, instruction_issues, load_agent
from .tools import AgentAnswer, run_agent_loop

if TYPE_CHECKING:
    from ...engine.context import TaskContext

Loc = tuple[str | int, ...]


class AgentTaskSpec(TaskSpec):
    """A prompt answered by `agent_ref` (an `.agent.yml`) or an inline `model`.

    Without either, the project's `defaults.agent` (Oxy) or `defaults.model` answers.
    """

    type: Literal["agent"]
    agent_ref: str | None = Field(None, description="Agent file, relative to the root.")
    model: str | None = Field(None, description="Model name from config, or a litellm string.")
    prompt: str = Field(description="The prompt (Jinja).")
    variables: dict[str, Any] = Field(default_factory=dict)
    consistency_run: int = Field(1, ge=1, description="Runs; > 1 selects the most consistent.")
    consistency_prompt: str | None = None
    consistency_model: str | None = None
    consistency_prejudge: Literal["off", "identical", "tolerant"] | None = None

    def templates(self) -> Iterable[tuple[Loc, str]]:
        yield ("prompt",), self.prompt
        yield from variable_templates(self.variables)
        yield from super().templates()

    def local_names(self) -> frozenset[str]:
        return frozenset(self.variables)

    def sources(self) -> Iterable[tuple[Loc, str]]:
        if self.agent_ref is not None:
            yield ("agent_ref",), self.agent_ref

    def child_scopes(self) -> list[ChildScope]:
        if self.consistency_run < 2:
            return []
        return [
            ChildScope("consistency", ("consistency_run",), consistency_children(self), frozenset())
        ]

    # the compiled consistency nodes ask the task through these two, so that the consistency
    # package never imports the agent package back
    async def answer(self, ctx: TaskContext, *, sample: int = 0) -> AgentAnswer:
        return await answer(self, ctx, sample=sample)

    def answering_model(self, ctx: TaskContext) -> str | None:
        return task_agent(self, ctx)[0].model

    def project_issues(self, project: Any) -> Iterable[tuple[Loc, str]]:
        from ...engine.catalog import ModelCatalog

        catalog = ModelCatalog(project.config)
        if self.model is not None:
            problem = catalog.problem(self.model)
            if problem:
                yield ("model",), problem
        ref = self.agent_ref or (None if self.model else project.config.defaults.agent)
        if ref is None or not (project.root / ref).is_file():
            return
        try:
            inside(project.root, ref, "agent_ref")
        except PathError:
            return  # reported with the task's other files
        try:
            agent = load_agent(project.root / ref)
        except ValidationError as exc:
            yield ("agent_ref",), f"in agent file '{ref}':\n{exc.message}"
            return
        except AccordError as exc:
            yield ("agent_ref",), exc.message
            return
        if agent.model is not None and self.model is None:
            problem = catalog.problem(agent.model)
            if problem:
                yield ("agent_ref",), f"agent file '{ref}': {problem}"
        yield from instruction_issues(agent, ref, frozenset(self.variables))
        for problem in agent_file_issues(agent, project):
            yield ("agent_ref",), f"agent file '{ref}': {problem}"


def task_agent(spec: AgentTaskSpec, ctx: TaskContext) -> tuple[AgentSpec, Path | None]:
    """The agent that answers this task: its file, or an inline model with no tools."""
    ref = spec.agent_ref or (None if spec.model else ctx.run.project.config.defaults.agent)
    if ref is None:
        return AgentSpec(model=spec.model), None
    agent = load_agent(ctx.path(ref))
    if spec.model is not None:
        agent = agent.model_copy(update={"model": spec.model})
    return agent, ctx.path(ref)


async def answer(spec: AgentTaskSpec, ctx: TaskContext, *, sample: int = 0) -> AgentAnswer:
    """One answer to the task's prompt (sample `sample` of the same prompt)."""
    agent, _path = task_agent(spec, ctx)
    variables = ctx.evaluate_variables(spec.variables)
    prompt = ctx.render(spec.prompt, variables)
    return await run_agent_loop(agent, prompt, ctx, sample=sample, variables=variables)


@register_task("agent", AgentTaskSpec)
async def run_agent(task: PlannedTask, ctx: TaskContext) -> Any:
    spec = task.spec
    assert isinstance(spec, AgentTaskSpec)
    if spec.consistency_run > 1:
        outputs = await ctx.run_child(task.children["consistency"], {}, label="", index=0)
        return outputs["select"]
    return await answer(spec, ctx)
