"""Agent files (`.agent.yml`): loaded once per change, and checked as `accord validate` and
the compiler check them (schema, model, instructions, and the files, databases, workflows and
agents they name)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...engine.errors import AccordError, Issue, ValidationError
from ...engine.loader import agent_model, load_spec
from ...engine.paths import PathError, inside
from ...engine.spec import AgentSpec

Loc = tuple[str | int, ...]


def check_agent_file(path: Path) -> str | None:
    """`accord validate` on an .agent.yml: its schema, model, instructions' syntax and the
    files, databases, workflows and agents it names (None for any other file)."""
    if not path.name.endswith((".agent.yml", ".agent.yaml")):
        return None
    from ...engine.catalog import ModelCatalog
    from ...engine.project import load_project
    from ...engine.render import TemplateError, referenced_names

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
        from .routing import resolve_routes

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

    from ...engine.yamlmarks import parse_yaml, read_text

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
    from ...engine.spec import AgentToolSpec, SqlToolSpec, WorkflowToolSpec
    from .context import context_paths

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
    from .routing import routing_issues

    yield from routing_issues(agent, project)
    if agent.anonymize is not None:
        from .anonymize import Anonymizer

        try:
            Anonymizer.from_spec(agent.anonymize, root)
        except AccordError as exc:
            yield exc.message


def instruction_issues(
    agent: AgentSpec, ref: str, given: frozenset[str]
) -> Iterable[tuple[Loc, str]]:
    """Names in the system instructions that nothing will define at run time."""
    from ...engine.render import BUILTIN_NAMES, TemplateError, referenced_names
    from .context import OXY_ONLY_NAMES

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
    agent = _parsed_agent(resolved, stat.st_mtime_ns, stat.st_size)
    _refuse_retrieval_problems(path, agent)  # not cached: the file's trust may change
    return agent


def _refuse_retrieval_problems(path: Path, agent: AgentSpec) -> None:
    """A retrieval tool's `src` leading out of the project, or its endpoint given a key in
    a file the user does not trust, refused where the agent file is loaded, at its line."""
    from ...engine.project import find_root
    from ...engine.spec import OxyToolSpec
    from ...engine.yamlmarks import parse_yaml, read_text
    from .retrieval_tool import load_problems

    tools = [
        (index, tool) for index, tool in enumerate(agent.tools)
        if isinstance(tool, OxyToolSpec) and tool.type == "retrieval"
    ]  # fmt: skip
    if not tools:
        return
    root = find_root(path)[0]
    issues: list[Issue] = []
    marks = None
    for index, tool in tools:
        data = {"name": tool.name, **(tool.model_extra or {})}
        for key, message in load_problems(data, path, root):
            if marks is None:
                marks = parse_yaml(read_text(path), path)[1]
            line, column = marks.find(("tools", index, key))
            if not line:
                line, column = marks.find(("tools", index))
            issues.append(Issue(path, line, column, f"tools[{index}].{key}", message))
    if issues:
        raise ValidationError(issues)


@functools.lru_cache(maxsize=128)  # a project's agent files; bounded for long-lived callers
def _parsed_agent(path: Path, mtime_ns: int, size: int) -> AgentSpec:
    spec: AgentSpec = load_spec(path, agent_model(), kind="agent").spec
    return spec
