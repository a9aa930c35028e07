"""The agent's tool-calling loop and its tools.

Tool failures (bad arguments, an unknown tool, an SQL error) go back to the model as the tool's
result so it can correct itself; they never crash the task.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine import log, telemetry
from ...engine.codec import register_output
from ...engine.databases import QueryError
from ...engine.errors import AccordError, TaskError
from ...engine.render import TableView, markdown_table
from ...engine.spec import AgentSpec, AgentToolSpec, OxyToolSpec, SqlToolSpec, WorkflowToolSpec
from .anonymize import Anonymizer, AnonymizeSession
from .context import system_message

if TYPE_CHECKING:
    from ...engine.context import TaskContext

TOOL_ROWS = 50  # rows of a result shown to the model


class AgentAnswer(str):
    """The agent's text; also carries the last SQL it ran and that query's table."""

    sql: str | None
    table: TableView | None
    tool_calls: list[dict[str, Any]]

    def __new__(
        cls,
        text: str,
        sql: str | None = None,
        table: TableView | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
    ) -> AgentAnswer:
        obj = super().__new__(cls, text)
        obj.sql = sql
        obj.table = table
        obj.tool_calls = list(tool_calls or [])  # what evaluators check (not stored)
        return obj


def _answer(data: Any) -> AgentAnswer:
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise ValueError("an agent answer's text expected")
    sql, table = data.get("sql"), data.get("table")
    if sql is not None and not isinstance(sql, str):
        raise ValueError("an agent answer's SQL must be text")
    if table is not None and not isinstance(table, TableView):
        raise ValueError("an agent answer's table must be a table")
    return AgentAnswer(data["text"], sql, table)


register_output(
    "agent_answer",
    AgentAnswer,
    lambda a: {"text": str(a), "sql": a.sql, "table": a.table},
    _answer,
)

Tool = Callable[[dict[str, Any]], Any]


class Toolbox:
    """The tools an agent offers, as OpenAI function schemas and their runners."""

    def __init__(self, agent: AgentSpec, ctx: TaskContext, depth: int, sample: int) -> None:
        self.ctx = ctx
        self.depth = depth
        self.sample = sample  # an agent tool's calls are part of the same sample
        self.schemas: list[dict[str, Any]] = []
        self.runners: dict[str, Tool] = {}
        self.last_sql: str | None = None
        self.last_table: TableView | None = None
        for spec in agent.tools:
            if isinstance(spec, SqlToolSpec):
                self._sql_tool(spec)
            elif isinstance(spec, WorkflowToolSpec):
                self._workflow_tool(spec)
            elif isinstance(spec, AgentToolSpec):
                self._agent_tool(spec)
            elif isinstance(spec, OxyToolSpec) and spec.type == "semantic_query":
                from .semantic_tool import semantic_tool

                self._add(*semantic_tool(spec, ctx, self))
            elif isinstance(spec, OxyToolSpec) and spec.type == "visualize":
                from .chart_tool import visualize_tool

                self._add(*visualize_tool(spec, ctx, self))
            elif isinstance(spec, OxyToolSpec) and spec.type == "retrieval":
                from .retrieval_tool import retrieval_tool

                self._add(*retrieval_tool(spec, ctx))
            elif isinstance(spec, OxyToolSpec):
                log.get().warning(
                    "agent_tool_unsupported", task=ctx.key, tool=spec.name, type=spec.type
                )

    def _add(self, name: str, description: str, parameters: dict[str, Any], run: Tool) -> None:
        self.schemas.append(
            {
                "type": "function",
                "function": {"name": name, "description": description, "parameters": parameters},
            }
        )
        self.runners[name] = run

    def _sql_tool(self, spec: SqlToolSpec) -> None:
        database = self.ctx.run.databases.resolve_name(spec.database)
        validate = spec.type == "validate_sql"
        name = spec.name or spec.type
        action = "Check that a SQL query is valid" if validate else "Run a SQL query"
        description = spec.description or f"{action} on the '{database}' database."
        params = {
            "type": "object",
            "properties": {"sql": {"type": "string", "description": "The SQL query."}},
            "required": ["sql"],
        }

        async def run(args: dict[str, Any]) -> str:
            sql = str(args.get("sql", "")).strip()
            if not sql:
                return "error: give the query in the 'sql' argument"
            if spec.variables:  # Oxy: the query may use them as {{ name }}
                sql = self.ctx.render(sql, spec.variables)
            db = self.ctx.run.databases.get(database)
            try:
                if validate:
                    await db.validate(sql)  # parsed and planned; nothing runs
                    return "valid"
                result = await db.query(sql, spec.dry_run_limit)
            except QueryError as exc:
                return f"error: {exc.message}"
            self.last_sql, self.last_table = sql, result
            shown = markdown_table(result.columns, result.rows[:TOOL_ROWS])
            more = len(result.rows) - TOOL_ROWS
            return shown + (f"\n({more} more rows not shown)" if more > 0 else "")

        self._add(name, description, params, run)

    def _workflow_tool(self, spec: WorkflowToolSpec) -> None:
        from ...engine.compile import compile_file

        plan = compile_file(
            self.ctx.path(spec.workflow_ref), self.ctx.root, project=self.ctx.run.project
        )
        name = spec.name or plan.name
        properties = {k: v.json_schema() for k, v in plan.variables.items()}
        required = [k for k, v in plan.variables.items() if not v.has_default]
        params = {"type": "object", "properties": properties, "required": required}

        async def run(args: dict[str, Any]) -> str:
            from ...engine import variables as workflow_variables
            from ...engine.render import to_json

            values = workflow_variables.resolve(plan.variables, args, where=spec.workflow_ref)
            outputs = await self.ctx.run_child(
                plan, values, label=f".{name}", index=0, isolated=True
            )
            if spec.output_task_ref:
                return str(outputs.get(spec.output_task_ref, ""))
            return to_json(outputs)

        self._add(name, spec.description or plan.description or f"Run {name}.", params, run)

    def _agent_tool(self, spec: AgentToolSpec) -> None:
        from .agent_files import load_agent

        other = load_agent(self.ctx.path(spec.agent_ref))
        name = spec.name or Path(spec.agent_ref).name.split(".")[0]
        params = {
            "type": "object",
            "properties": {"prompt": {"type": "string"}},
            "required": ["prompt"],
        }

        async def run(args: dict[str, Any]) -> str:
            if self.depth >= 3:
                return "error: agents may call other agents at most 3 deep"
            reply = await run_agent_loop(
                other,
                str(args.get("prompt", "")),
                self.ctx,
                sample=self.sample,
                depth=self.depth + 1,
                variables=agent_variables(other, spec.variables),
            )
            return str(reply)

        self._add(name, spec.description or other.description or f"Ask {name}.", params, run)

    @telemetry.traced_tool
    async def call(self, name: str, arguments: str) -> str:
        run = self.runners.get(name)
        if run is None:
            return f"error: there is no tool '{name}'; tools: {', '.join(self.runners) or 'none'}"
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return f"error: the arguments are not valid JSON ({exc.msg}); send a JSON object"
        if not isinstance(args, dict):
            return "error: the arguments must be a JSON object"
        try:
            return str(await run(args))
        except AccordError as exc:
            return f"error: {exc.message}"


async def run_agent_loop(
    agent: AgentSpec,
    prompt: str,
    ctx: TaskContext,
    *,
    sample: int = 0,
    variables: dict[str, Any] | None = None,
    depth: int = 0,
    history: Sequence[dict[str, Any]] = (),
) -> AgentAnswer:
    """Ask the model until it answers without a tool call or the tool budget is spent.
    `history` is the conversation before `prompt` (a conversation test's earlier turns)."""
    if agent.type == "routing":
        from .routing import run_routing

        return await run_routing(
            agent, prompt, ctx, sample=sample, variables=variables, depth=depth, history=history
        )
    client = ctx.run.models()
    toolbox = Toolbox(agent, ctx, depth, sample)
    shield = _anonymizer(agent, ctx)
    messages: list[dict[str, Any]] = []
    system = await system_message(agent, ctx, variables or {})
    if system:
        messages.append({"role": "system", "content": shield.hide(system)})
    for earlier in history:
        content = earlier.get("content")
        messages.append({**earlier, "content": shield.hide(content) if content else content})
    messages.append({"role": "user", "content": shield.hide(prompt)})
    calls = rounds = 0
    made: list[dict[str, Any]] = []
    model = agent.model or ctx.run.project.default_model
    while True:
        within = calls < agent.max_tool_calls and rounds < agent.max_iterations
        offer = toolbox.schemas if within else None
        rounds += 1
        completion = await client.complete(
            model, messages, task=ctx.key, tools=offer or None, sample=sample
        )
        if not completion.tool_calls or offer is None:
            if not completion.text.strip():
                if offer is None and toolbox.schemas:
                    limit = f"max_tool_calls ({agent.max_tool_calls})"
                    if calls < agent.max_tool_calls:
                        limit = f"max_iterations ({agent.max_iterations})"
                    raise TaskError(
                        ctx.key,
                        f"model '{model}' reached {limit} without answering: raise it in the "
                        "agent file, or ask for less",
                    )
                raise TaskError(ctx.key, f"model '{model}' returned no text")
            text = shield.reveal(completion.text)
            return AgentAnswer(text, toolbox.last_sql, toolbox.last_table, made)
        messages.append(completion.message())
        import asyncio  # a module-level import would cost `accord validate` ~20 ms

        results = await asyncio.gather(
            *(
                toolbox.call(call.name, shield.reveal(call.arguments))
                for call in completion.tool_calls
            )
        )
        for call, result in zip(completion.tool_calls, results, strict=True):
            calls += 1
            made.append(tool_call_record(call.name, call.arguments, result))
            content = shield.hide(result)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


def agent_variables(agent: AgentSpec, given: dict[str, Any] | None) -> dict[str, Any]:
    """An asked agent's variables: its defaults, then an `agent` tool's `variables`."""
    from ...engine.spec import variable_spec

    values = {k: variable_spec(v).default for k, v in agent.variables.items()}
    return {**values, **(given or {})}


def tool_call_record(name: str, arguments: str, result: Any) -> dict[str, Any]:
    """A tool call as evaluators see it: name, arguments (parsed when JSON), result."""
    try:
        parsed: Any = json.loads(arguments or "{}")
    except ValueError:
        parsed = arguments
    return {"name": name, "arguments": parsed, "result": result}


def _anonymizer(agent: AgentSpec, ctx: TaskContext) -> AnonymizeSession:
    """This conversation's anonymizer (one that changes nothing when the agent has no
    `anonymize:`)."""
    if agent.anonymize is None:
        return Anonymizer([]).session()
    try:
        words = Anonymizer.from_spec(agent.anonymize, ctx.root)
    except AccordError as exc:
        raise TaskError(ctx.key, exc.message) from None
    return words.session()
