"""Oxy's routing agents (`type: routing`): the model picks one of `routes`, which answers.

The routes are agents, workflows (or procedures, automations) and SQL files, given as paths or
globs relative to the project root. The model chooses by a forced call of one tool,
`choose_route(reason, route)`, whose `route` is an enum of the routes' names plus `none`
(models without tool calling end their reply with `Answer: <route>`). Then the route runs:
an agent answers the question; a workflow runs with its defaults and its outputs go back to
the model to summarise (or are returned, with `synthesize_results: false`); an SQL file runs
on the default database and its table is the answer. `none` takes `route_fallback`, else the
model's reason is the answer. A semantic `.topic.yml` route is answered by the routing
agent's model with a semantic_query tool over the topic. A route Oxy leaves out (its
`integration::topic` routes, a path or glob that finds no file) is left out with a note at
validate and a warning at run time; any other route accord cannot run is an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine import log
from ...engine.asking import Reading, ask_until_parsed, read_forced_choice
from ...engine.errors import AccordError, TaskError
from ...engine.loader import is_workflow_file
from ...engine.paths import PathError, inside
from ...engine.spec import AgentSpec
from ..semantic.model import TOPIC_SUFFIXES
from .tools import AgentAnswer, tool_call_record

if TYPE_CHECKING:
    from ...engine.context import TaskContext
    from ...engine.usage import Completion

CHOOSE_ROUTE = "choose_route"
NO_ROUTE = "none"
DEFAULT_INSTRUCTIONS = (
    "You are a routing agent. Your job is to route the task to the route that handles it "
    "best. If a route matches the task, even partially, choose it; choose 'none' only when "
    "no route fits, and say why."
)
AGENT_SUFFIXES = (".agent.yml", ".agent.yaml")


@dataclass(frozen=True)
class Route:
    """A file the routing agent may hand the question to."""

    name: str
    kind: str  # agent, workflow, sql or topic
    ref: str  # relative to the project root
    description: str


def route_kind(ref: str) -> str | None:
    """`agent`, `workflow`, `sql` or `topic`; None for a file accord cannot run as a route."""
    if ref.endswith(AGENT_SUFFIXES):
        return "agent"
    if ref.endswith(TOPIC_SUFFIXES):
        return "topic"
    if is_workflow_file(Path(ref)):
        return "workflow"
    if ref.endswith(".sql"):
        return "sql"
    return None


def _unsupported(pattern: str, ref: str) -> str:
    if "::" in pattern:
        return (
            f"route '{pattern}': Oxy's integration routes (<integration>::<topic>, e.g. omni) "
            "are not supported by accord"
        )
    return f"route '{ref}': not an agent, workflow, procedure, SQL or topic file"


def resolve_routes(
    agent: AgentSpec, root: Path, skipped: list[str] | None = None
) -> tuple[list[Route], list[str]]:
    """The agent's routes (globs expanded, in order, each file once) and the problems of
    those it cannot run. Routes Oxy leaves out without failing (an integration route, a file
    or glob that finds nothing) are not offered: said in `skipped`, not a problem."""
    routes: list[Route] = []
    problems: list[str] = []
    seen: set[str] = set()
    for pattern in agent.routes:
        refs, problem = _expand(pattern, root)
        if problem and _tolerated(pattern, refs):
            if skipped is not None:
                skipped.append(f"{problem}; not offered to the model")
        elif problem:
            problems.append(problem)
        for ref in refs:
            if ref in seen:
                continue
            seen.add(ref)
            kind = route_kind(ref)
            if kind is None:
                problems.append(_unsupported(pattern, ref))
                continue
            routes.append(Route(_name(ref, routes), kind, ref, _describe(root, ref, kind)))
    return routes, problems


def _tolerated(pattern: str, refs: list[str]) -> bool:
    """Oxy's routing agent expands its routes and offers what it finds: an integration
    route (accord has no integrations) or a path that finds no file is left out there too."""
    return "::" in pattern or (not refs and ".." not in pattern and not pattern.startswith("/"))


def fallback_route(agent: AgentSpec, root: Path) -> tuple[Route | None, str | None]:
    """`route_fallback` as a route, or the problem with it."""
    ref = agent.route_fallback
    if ref is None:
        return None, None
    refs, problem = _expand(ref, root)
    if problem:
        return None, f"route_fallback: {problem}"
    kind = route_kind(refs[0])
    if kind is None or len(refs) != 1:
        return None, f"route_fallback: {_unsupported(ref, refs[0])}"
    return Route("fallback", kind, refs[0], "the fallback"), None


def routing_issues(agent: AgentSpec, project: Any, skipped: list[str] | None = None) -> list[str]:
    """`accord validate`'s problems with a routing agent's routes (and in `skipped` the
    routes left out, as Oxy leaves them out)."""
    if agent.type != "routing":
        return []
    routes, problems = resolve_routes(agent, project.root, skipped)
    fallback, problem = fallback_route(agent, project.root)
    if problem:
        problems.append(problem)
    for route in [*routes, *([fallback] if fallback else [])]:
        if route.kind == "sql" and project.default_database is None:
            problems.append(
                f"route '{route.ref}': an SQL route runs on the default database and the "
                "project has none: set defaults.database in config.yml"
            )
        if route.kind == "topic":
            try:
                _topic(project.root, route.ref)
            except AccordError as exc:
                problems.append(exc.message)
        if route.kind == "workflow":
            problems += _required_variables(project.root, route.ref)
    return problems


def _required_variables(root: Path, ref: str) -> list[str]:
    """A workflow route runs with its variables' defaults: one without a default is an error
    here rather than at run time."""
    from ...engine.loader import load_workflow
    from ...engine.spec import variable_spec

    try:
        variables = load_workflow(root / ref).spec.variables or {}
    except AccordError:
        return []  # the workflow's own validation reports it
    return [
        f"route '{ref}': the workflow needs variable '{name}' (it has no default) and a route "
        "runs with defaults only: give it a default, or route to an agent that calls it"
        for name, value in variables.items()
        if not variable_spec(value).has_default
    ]


def _expand(pattern: str, root: Path) -> tuple[list[str], str | None]:
    if "::" in pattern:
        return [], _unsupported(pattern, pattern)
    try:
        inside(root, pattern.replace("*", "x"), "route")
    except PathError as exc:
        return [], exc.message
    if not any(c in pattern for c in "*?["):
        if (root / pattern).is_file():
            return [pattern], None
        return [], f"route '{pattern}': file not found under {root}"
    found = sorted(p.relative_to(root).as_posix() for p in root.glob(pattern) if p.is_file())
    if not found:
        return [], f"route '{pattern}': no file matches it under {root}"
    return found, None


def _name(ref: str, taken: list[Route]) -> str:
    """A tool-safe name from the file name (`agents/duckdb.agent.yml` -> `duckdb_agent`)."""
    stem = Path(ref).name.rsplit(".", 1)[0]
    base = re.sub(r"[^A-Za-z0-9_]+", "_", stem).strip("_") or "route"
    names = {r.name for r in taken} | {NO_ROUTE}
    name, number = base, 2
    while name in names:
        name, number = f"{base}_{number}", number + 1
    return name


def _describe(root: Path, ref: str, kind: str) -> str:
    """The route's description for the model: the file's own, else what it is."""
    try:
        if kind == "agent":
            from .agent_files import load_agent

            text = load_agent(root / ref).description
        elif kind == "workflow":
            from ...engine.loader import load_workflow

            text = load_workflow(root / ref).spec.description
        elif kind == "topic":
            topic = _topic(root, ref)
            text = (
                getattr(topic.spec, "description", None) or f"the data of topic {topic.spec.name}"
            )
        else:
            text = (root / ref).read_text(encoding="utf-8")[:500]
    except (AccordError, OSError, UnicodeDecodeError):
        text = None
    return " ".join((text or f"the {kind} {ref}").split())


def choose_route_tool(routes: list[Route]) -> dict[str, Any]:
    listing = "; ".join(f"{r.name}: {r.description}" for r in routes)
    return {
        "type": "function",
        "function": {
            "name": CHOOSE_ROUTE,
            "description": f"Choose the route that handles the task. Routes: {listing}",
            "parameters": {
                "type": "object",
                "properties": {
                    "reason": {"type": "string", "description": "Why this route"},
                    "route": {
                        "type": "string",
                        "enum": [*(r.name for r in routes), NO_ROUTE],
                        "description": f"The route's name, or '{NO_ROUTE}' when none fits",
                    },
                },
                "required": ["reason", "route"],
            },
        },
    }


async def run_routing(
    agent: AgentSpec,
    prompt: str,
    ctx: TaskContext,
    *,
    sample: int = 0,
    variables: dict[str, Any] | None = None,
    depth: int = 0,
    history: Sequence[dict[str, Any]] = (),
) -> AgentAnswer:
    """Choose a route for `prompt` and return what the route answers."""
    from .context import system_message

    skipped: list[str] = []
    routes, problems = resolve_routes(agent, ctx.root, skipped)
    for note in skipped:
        log.get().warning("route_skipped", task=ctx.key, problem=note)
    fallback, problem = fallback_route(agent, ctx.root)
    if problems or problem:
        raise TaskError(
            ctx.key, "routing agent: " + "; ".join([*problems, *([problem] if problem else [])])
        )
    if agent.system_instructions.strip():
        system = await system_message(agent, ctx, variables or {})
    else:
        system = DEFAULT_INSTRUCTIONS
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, *history]
    messages.append({"role": "user", "content": prompt})
    model = agent.model or ctx.run.project.default_model
    chosen, reason = await _choose(ctx, model, messages, routes, sample)
    record = tool_call_record(CHOOSE_ROUTE, json.dumps({"route": chosen, "reason": reason}), "")
    route = next((r for r in routes if r.name == chosen), None) or fallback
    if route is None:
        record["result"] = "no route fits"
        return AgentAnswer(reason or "No route fits this question.", tool_calls=[record])
    record["result"] = route.ref
    answer = await _run_route(route, agent, prompt, ctx, sample, depth, messages)
    return AgentAnswer(str(answer), answer.sql, answer.table, [record, *answer.tool_calls])


async def _choose(
    ctx: TaskContext,
    model: str | None,
    messages: list[dict[str, Any]],
    routes: list[Route],
    sample: int,
) -> tuple[str, str]:
    """(route name, reason) by a forced `choose_route` call; asked twice at most."""
    from ..evaluators.judging import parse_choice

    client = ctx.run.models()
    choices = [*(r.name for r in routes), NO_ROUTE]
    tools = client.catalog.resolve(model).tools
    extra: dict[str, Any] = {}
    ask = list(messages)
    if tools:
        forced = {"type": "function", "function": {"name": CHOOSE_ROUTE}}
        extra = {"tools": [choose_route_tool(routes)], "tool_choice": forced}
    else:
        listing = "\n".join(f"- {r.name}: {r.description}" for r in routes)
        ask[-1] = {
            "role": "user",
            "content": f"{messages[-1]['content']}\n\nChoose the route for this task:\n"
            f"{listing}\n- {NO_ROUTE}: no route fits\n\nGive your reason, then end with a "
            "last line `Answer: <route>`.",
        }

    def read(completion: Completion) -> Reading[tuple[str, str]]:
        choice = read_forced_choice(completion, CHOOSE_ROUTE, "route", choices, parse_choice)
        if choice.name is not None:
            return Reading((choice.name, choice.reason))
        if choice.called:
            return Reading(None, f"a route {choice.given!r} that is none of {choices}")
        return Reading(None, f"no choice (reply: {choice.raw[-200:]!r})")

    asked = await ask_until_parsed(
        lambda attempt: client.complete(
            model, ask, task=ctx.key, sample=sample * 2 + attempt, **extra
        ),
        read,
    )
    if asked.value is None:
        raise TaskError(ctx.key, f"model '{model}' did not choose a route: {asked.problem}")
    return asked.value


async def _run_route(
    route: Route,
    agent: AgentSpec,
    prompt: str,
    ctx: TaskContext,
    sample: int,
    depth: int,
    messages: list[dict[str, Any]],
) -> AgentAnswer:
    if route.kind == "agent":
        from .agent_files import load_agent
        from .tools import run_agent_loop

        if depth >= 3:
            raise TaskError(ctx.key, "agents may hand a question on at most 3 deep")
        other = load_agent(ctx.path(route.ref))
        return await run_agent_loop(other, prompt, ctx, sample=sample, depth=depth + 1)
    if route.kind == "topic":
        return await _run_topic(route, agent, prompt, ctx, sample, depth)
    if route.kind == "sql":
        db = ctx.run.databases.get(ctx.run.databases.resolve_name(None))
        sql = ctx.path(route.ref).read_text(encoding="utf-8")
        table = await db.query(sql)
        return AgentAnswer(str(table), sql, table)
    return await _run_workflow(route, agent, ctx, sample, messages)


def _topic(root: Path, ref: str) -> Any:
    """The semantic topic a `.topic.yml` route names (a ValidationError when it is broken)."""
    from ..semantic.model import load_layer

    layer = load_layer(root)
    target = (root / ref).resolve()
    for topic in layer.topics.values():
        if topic.loaded.path.resolve() == target:
            return topic
    problems = layer.broken.get(root / ref) or layer.broken.get(target)
    detail = f": {problems[0].render()}" if problems else ""
    raise AccordError(f"route '{ref}': the topic does not load{detail}")


async def _run_topic(
    route: Route, agent: AgentSpec, prompt: str, ctx: TaskContext, sample: int, depth: int
) -> AgentAnswer:
    """A topic route: the routing agent's model answers with a semantic_query tool over the
    topic (it picks measures and dimensions; the query is checked before it runs)."""
    from ...engine.spec import AgentSpec as Spec
    from .tools import run_agent_loop

    try:
        topic = _topic(ctx.root, route.ref)
    except AccordError as exc:
        raise TaskError(ctx.key, exc.message) from None
    inner = Spec.model_validate({
        "model": agent.model,
        "system_instructions": "Answer the task from the data of the topic "
        f"'{topic.spec.name}': query it with the {route.name} tool, then answer in words.",
        "tools": [{"type": "semantic_query", "name": route.name, "topic": topic.spec.name}],
    })  # fmt: skip
    return await run_agent_loop(inner, prompt, ctx, sample=sample, depth=depth + 1)


async def _run_workflow(
    route: Route,
    agent: AgentSpec,
    ctx: TaskContext,
    sample: int,
    messages: list[dict[str, Any]],
) -> AgentAnswer:
    from ...engine import variables as workflow_variables
    from ...engine.compile import compile_file
    from ...engine.render import to_json

    plan = compile_file(ctx.path(route.ref), ctx.root, project=ctx.run.project)
    values = workflow_variables.resolve(plan.variables, {}, where=route.ref)
    outputs = await ctx.run_child(plan, values, label=f".{route.name}", index=0, isolated=True)
    result = to_json(outputs)
    if not agent.synthesize_results:
        return AgentAnswer(result)
    summary = [
        *messages,
        {
            "role": "user",
            "content": f"The workflow '{route.ref}' ran for this task. Its outputs:\n{result}\n\n"
            "Answer the task from them; do not return the raw outputs.",
        },
    ]
    model = agent.model or ctx.run.project.default_model
    completion = await ctx.run.models().complete(model, summary, task=ctx.key, sample=sample)
    if not completion.text.strip():
        raise TaskError(ctx.key, f"model '{model}' returned no text")
    return AgentAnswer(completion.text)
