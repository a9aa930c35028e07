"""`agent`: a model answers a rendered prompt, with an agent file's instructions and tools.

Beside it: `tools` (the tool-calling loop and the tools), `context` (system instructions:
context files, database schemas) and `anonymize` (Oxy's anonymizer).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from accord.engine.errors import AccordError, Issue, ValidationError
from accord.engine.loader import agent_model, load_spec
from accord.engine.paths import PathError, inside
from accord.engine.plan import PlannedTask
from accord.engine.registry import register_task
from accord.engine.spec import AgentSpec, ChildScope, TaskSpec, variable_templates
from accord.tasks.agent.tools import AgentAnswer, run_agent_loop

if TYPE_CHECKING:
    from accord.engine.context import TaskContext

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
        from accord.tasks.consistency import consistency_children

        return [
            ChildScope("consistency", ("consistency_run",), consistency_children(self), frozenset())
        ]

    def project_issues(self, project: Any) -> Iterable[tuple[Loc, str]]:
        from accord.engine.catalog import ModelCatalog

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
        yield from _instruction_issues(agent, ref, frozenset(self.variables))
        for problem in agent_file_issues(agent, project):
            yield ("agent_ref",), f"agent file '{ref}': {problem}"


def check_agent_file(path: Path) -> str | None:
    """`accord validate` on an .agent.yml: its schema, model, instructions' syntax and the
    files, databases, workflows and agents it names (None for any other file)."""
    if not path.name.endswith((".agent.yml", ".agent.yaml")):
        return None
    from accord.engine.catalog import ModelCatalog
    from accord.engine.project import load_project
    from accord.engine.render import TemplateError, referenced_names

    project = load_project(path)
    agent = load_agent(path)
    problems: list[str] = []
    if agent.model is not None:
        problem = ModelCatalog(project.config).problem(agent.model)
        if problem:
            problems.append(f"model: {problem}")
    try:
        referenced_names(agent.system_instructions)
    except TemplateError as exc:
        problems.append(f"system_instructions: {exc}")
    problems += agent_file_issues(agent, project)
    if problems:
        raise ValidationError([_placed(path, agent, problem) for problem in problems])
    if agent.type == "routing":
        from accord.tasks.agent.routing import resolve_routes

        skipped: list[str] = []
        resolve_routes(agent, project.root, skipped)
        notes = [f"line {_placed(path, agent, note).line}: {note}" for note in skipped]
        count = f"{len(agent.routes)} route{'' if len(agent.routes) == 1 else 's'}"
        return "; ".join([f"routing agent, {count}", *notes])
    return f"agent, {len(agent.tools)} tool{'' if len(agent.tools) == 1 else 's'}"


def _placed(path: Path, agent: AgentSpec, problem: str) -> Issue:
    """A problem of an agent file at the line of what it names (a tool, a context entry, a
    route, the model), else at the file."""
    import re

    from accord.engine.yamlmarks import parse_yaml, read_text

    loc: tuple[str | int, ...] | None = None
    found = re.match(r"(tools|context)\[(\d+)\]", problem)
    if found:
        loc = (found.group(1), int(found.group(2)))
    elif problem.startswith(("model:", "system_instructions:", "route_fallback:")):
        loc = (problem.split(":", 1)[0],)
    else:
        route = re.match(r"route '([^']*)'", problem)
        if route:
            loc = next(
                (("routes", i) for i, pattern in enumerate(agent.routes)
                 if pattern == route.group(1) or _matches(route.group(1), pattern)),
                ("routes",),
            )  # fmt: skip
    if loc is None:
        return Issue(path, None, None, "", problem)
    try:
        _data, marks = parse_yaml(read_text(path), path)
    except AccordError:
        return Issue(path, None, None, "", problem)
    line, column = marks.find(loc)
    return Issue(path, line, column, "", problem)


def _matches(ref: str, pattern: str) -> bool:
    import fnmatch

    return fnmatch.fnmatch(ref, pattern)


def agent_file_issues(agent: AgentSpec, project: Any) -> Iterable[str]:
    """Context globs that match no file, tools naming a database, workflow or agent that
    does not exist, unreadable `anonymize` files (paths are relative to the project root, as
    at run time)."""
    from accord.engine.spec import AgentToolSpec, SqlToolSpec, WorkflowToolSpec
    from accord.tasks.agent.context import context_paths

    root = project.root
    for index, entry in enumerate(agent.context):
        for pattern in entry.globs:
            try:
                found = context_paths(root, pattern)
            except PathError as exc:
                yield f"context[{index}] '{entry.name}': {exc.message}"
                continue
            if not found:
                yield (
                    f"context[{index}] '{entry.name}': no file matches '{pattern}' "
                    f"(relative to the project root {root})"
                )
    known = frozenset(project.databases)
    for index, tool in enumerate(agent.tools):
        where = f"tools[{index}] ({tool.name or tool.type})"
        if isinstance(tool, SqlToolSpec):
            name = tool.database or project.default_database
            if name is None:
                yield f"{where}: no database given and the project has no default"
            elif name not in known:
                listing = ", ".join(sorted(known)) or "none configured"
                yield f"{where}: unknown database '{name}' (databases: {listing})"
        elif isinstance(tool, WorkflowToolSpec | AgentToolSpec):
            ref = tool.workflow_ref if isinstance(tool, WorkflowToolSpec) else tool.agent_ref
            try:
                inside(root, ref, "file")
            except PathError as exc:
                yield f"{where}: {exc.message}"
                continue
            if not (root / ref).is_file():
                yield f"{where}: file '{ref}' not found under {root}"
    from accord.tasks.agent.routing import routing_issues

    yield from routing_issues(agent, project)
    if agent.anonymize is not None:
        from accord.tasks.agent.anonymize import Anonymizer

        try:
            Anonymizer.from_spec(agent.anonymize, root)
        except AccordError as exc:
            yield exc.message


def _instruction_issues(
    agent: AgentSpec, ref: str, given: frozenset[str]
) -> Iterable[tuple[Loc, str]]:
    """Names in the system instructions that nothing will define at run time."""
    from accord.engine.render import BUILTIN_NAMES, TemplateError, referenced_names
    from accord.tasks.agent.context import OXY_ONLY_NAMES

    try:
        names = referenced_names(agent.system_instructions)
    except TemplateError as exc:
        yield ("agent_ref",), f"agent file '{ref}': system_instructions: {exc}"
        return
    known = BUILTIN_NAMES | OXY_ONLY_NAMES | {"context", "databases"} | given
    for name in sorted(names - known - frozenset(agent.variables)):
        yield (
            ("agent_ref",),
            (
                f"agent file '{ref}': system_instructions use unknown name '{name}' (available: "
                "context, databases, and the task's variables)"
            ),
        )


def load_agent(path: Path) -> AgentSpec:
    """Load and validate an `.agent.yml`; a file read before and unchanged since (same
    modification time and size) is not parsed again."""
    resolved = path.resolve()
    try:
        stat = resolved.stat()
    except OSError:
        raise AccordError(f"{path}: file not found") from None
    return _parsed_agent(resolved, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=128)  # a project's agent files; bounded for long-lived callers
def _parsed_agent(path: Path, mtime_ns: int, size: int) -> AgentSpec:
    spec: AgentSpec = load_spec(path, agent_model(), kind="agent").spec
    return spec


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
