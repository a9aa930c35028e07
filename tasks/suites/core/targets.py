"""Targets: what answers a case. Each runs inside the case's target node.

- `model`: a model of config.yml or a litellm string, sent the case's input (text or messages);
- `agent`: an `.agent.yml`, its tools really run (tool calls recorded);
- `workflow`: `file.workflow.yml#task`, the minimal sub-DAG of that task, the input as a
  variable;
- `command`: a program run with the case as JSON on stdin; its stdout is the output (a JSON
  object with `output` and optional `tool_calls`/`contexts` is read as a trace);
- `python`: `module:function` (or a callable from Python), given the input (or the test case
  object), sync or async;
- `echo`: returns the input (a suite tried without a model).

A target that fails or times out errors its case; the other cases go on.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import shlex
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator

from ....engine.blocking import call_blocking
from ....engine.errors import AccordError
from ....engine.executor import WorkFailure
from ....engine.paths import PathError, inside
from ....engine.project_code import ProjectCodeError, import_from_project, module_problem
from ....engine.registry import Registry
from ....engine.specbase import Spec
from ...evaluators.cases import Case, Output, content_text, text_of

if TYPE_CHECKING:
    from ....engine.context import TaskContext
    from ....engine.plan import Plan


class TargetFailure(WorkFailure):
    """A target that produced no output: the message says why."""


class Target(Spec):
    """Fields every target has."""

    type: str
    timeout: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="Seconds before the case errors."
    )
    kind: ClassVar[str] = ""
    # the limit of a target none is given to (neither its own `timeout` nor its suite's):
    # None, no limit of its own (a model's calls, a workflow's tasks have theirs)
    default_timeout: ClassVar[float | None] = None

    def seconds(self) -> float:
        """The seconds a program this target starts may run: the case's limit
        (`time_limit`, set by the node that runs the case), else the target's own."""
        given = SECONDS.get()
        if given is not None:
            return given
        return self.timeout or self.default_timeout or DEFAULT_SECONDS

    def describe(self) -> str:
        return self.type

    def problem(self, root: Path) -> str | None:
        """What keeps this target from running in the project at `root`, found before
        anything runs (a file outside the project, code that is not the project's), or None."""
        return None

    def admission(self, file: Path, root: Path) -> str | None:
        """Why the programs this target runs may not run when `file` (of the project at
        `root`) names them (engine/programs.admit: not the project's own, and the file not
        trusted), or None."""
        return None

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        raise NotImplementedError


DEFAULT_SECONDS = 60.0  # a program's limit when nothing else gives one
# the seconds the running case's target has (`time_limit`); its programs run that long at most
SECONDS: ContextVar[float | None] = ContextVar("accord_target_seconds", default=None)


def time_limit(target: Target, suite_timeout: float | None) -> float | None:
    """How long a case's target may take: the innermost explicit limit wins (the target's
    own `timeout`), else the suite's, else the target's default (None: no limit)."""
    if target.timeout is not None:
        return target.timeout
    if suite_timeout is not None:
        return suite_timeout
    return target.default_timeout


TARGETS: Registry[type[Target]] = Registry("target type")
# the case's workspace folder while its target answers (AgentV runs the target there)
WORKSPACE: ContextVar[str | None] = ContextVar("accord_case_workspace", default=None)


def target(name: str) -> Callable[[type[Target]], type[Target]]:
    def decorate(cls: type[Target]) -> type[Target]:
        return TARGETS.add(name, cls)

    return decorate


def messages_of(case: Case, system: str | None = None) -> list[dict[str, Any]]:
    """The case's input as chat messages."""
    value = case.input
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value):
        messages = [{"role": m["role"], "content": content_text(m.get("content"))} for m in value]
    else:
        messages = [{"role": "user", "content": text_of(value)}]
    if system and not any(m["role"] == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": system})
    return messages


@target("echo")
class EchoTarget(Target):
    """Returns the case's input as its output."""

    type: Literal["echo"] = "echo"

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        return Output(text=case.prompt)


@target("model")
class ModelTarget(Target):
    """One model call with the case's input."""

    type: Literal["model"] = "model"
    model: str = Field(description="A model of config.yml, or a litellm model string.")
    system: str | None = Field(None, description="A system message to send first.")
    temperature: float | None = Field(None, ge=0, allow_inf_nan=False)

    def describe(self) -> str:
        return f"model {self.model}"

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        completion = await tctx.run.models().complete(
            self.model,
            messages_of(case, self.system),
            task=tctx.key,
            temperature=self.temperature,
            sample=repeat,
        )
        calls = [{"name": c.name, "arguments": _args(c.arguments)} for c in completion.tool_calls]
        return Output(
            text=completion.text,
            tool_calls=calls,
            usage={"input": completion.input_tokens, "output": completion.output_tokens},
            cost=completion.cost,
            duration_ms=completion.latency * 1000 if not completion.cached else None,
        )


def _args(text: str) -> Any:
    try:
        return json.loads(text or "{}")
    except ValueError:
        return text


@target("agent")
class AgentTarget(Target):
    """An `.agent.yml` answering the case's input; its tools run."""

    type: Literal["agent"] = "agent"
    agent: str = Field(description="The agent file, relative to the project root.")

    def describe(self) -> str:
        return f"agent {self.agent}"

    def problem(self, root: Path) -> str | None:
        return file_problem(root, self.agent, "agent file")

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        from ....engine.spec import variable_spec
        from ...agent import load_agent
        from ...agent.tools import run_agent_loop

        agent = load_agent(tctx.path(self.agent, "agent file"))
        defaults = {k: variable_spec(v).default for k, v in agent.variables.items()}
        reply = await run_agent_loop(agent, case.prompt, tctx, sample=repeat, variables=defaults)
        contexts = [reply.sql] if reply.sql else []
        return Output(text=str(reply), contexts=contexts, tool_calls=list(reply.tool_calls))


@target("workflow")
class WorkflowTarget(Target):
    """A workflow task: the minimal sub-DAG that produces `task`, the case's input passed as
    the variable `variable` (when given)."""

    type: Literal["workflow"] = "workflow"
    workflow: str = Field(description="The workflow file, relative to the project root.")
    task: str | None = Field(
        None, description="The task whose output is the answer (default: the last)."
    )
    variable: str | None = Field(None, description="The variable that receives the case's input.")

    def describe(self) -> str:
        return f"task '{self.task}' of {self.workflow}" if self.task else self.workflow

    def problem(self, root: Path) -> str | None:
        return file_problem(root, self.workflow, "workflow file")

    def plan(self, root: Path) -> Plan:
        from ....engine.compile import compile_workflow
        from .subdag import sub_plan

        _project, plan = compile_workflow(inside(root, self.workflow, "workflow file"))
        task = self.task or plan.tasks[-1].name
        if task not in plan.by_name:
            known = ", ".join(plan.by_name)
            raise AccordError(f"{self.workflow} has no task '{task}' (its tasks: {known})")
        return sub_plan(plan, task)

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        from ....engine import variables as workflow_variables
        from .subdag import contexts_of, output_text, sampled

        plan = tctx.task.children.get("workflow") or self.plan(tctx.root)
        given = {self.variable: case.input} if self.variable else {}
        values = workflow_variables.resolve(
            plan.variables, given, where=str(plan.path), lines=plan.variable_lines
        )
        outputs = await tctx.run_child(
            sampled(plan, repeat), dict(values), label=".workflow", index=0, isolated=True
        )
        task = self.task or plan.tasks[-1].name
        return Output(text=output_text(plan, task, outputs[task]), contexts=contexts_of(outputs))


@target("command")
class CommandTarget(Target):
    """A program: the case as JSON on stdin, the output on stdout."""

    type: Literal["command"] = "command"
    command: str | list[str] = Field(description="argv, or a command line split like a shell.")
    cwd: str | None = Field(None, description="Working directory, relative to the project root.")
    default_timeout: ClassVar[float | None] = DEFAULT_SECONDS

    @field_validator("command")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        if not (shlex.split(value) if isinstance(value, str) else value):
            raise ValueError("the command is empty")
        return value

    def argv(self) -> list[str]:
        return shlex.split(self.command) if isinstance(self.command, str) else list(self.command)

    def describe(self) -> str:
        return f"command {' '.join(self.argv())}"

    def admission(self, file: Path, root: Path) -> str | None:
        from ....engine.programs import admit

        return admit(self.argv(), file, root, root / (self.cwd or "."))

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        payload = json.dumps({**case.data(), "repeat": repeat}, default=str).encode()
        stdout, stderr, code = await run_program(
            self.argv(), payload, tctx.root / (self.cwd or "."), self.seconds()
        )
        if code != 0:
            tail = stderr.decode(errors="replace").strip()[-500:]
            raise TargetFailure(f"{self.describe()} exited with {code}: {tail or '(no stderr)'}")
        return parse_trace(stdout.decode(errors="replace"))


async def run_program(
    argv: list[str], stdin: bytes, cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> tuple[bytes, bytes, int]:
    """Run a program with `stdin` (and `env` on top of this process's environment);
    (stdout, stderr, exit code), each stream capped (`engine.programs`). A timeout kills it
    with its children. The run's executor may run it elsewhere (a Ray task)."""
    from ....engine import programs
    from ....engine.executor import current

    try:
        elsewhere = await current().program(argv, stdin, cwd, timeout, env)
    except WorkFailure as exc:  # the executor's reason, as this target's failure
        raise TargetFailure(str(exc)) from None
    if elsewhere is not None:
        return elsewhere
    try:
        done = await programs.run_program(argv, stdin, cwd, timeout, env)
    except OSError as exc:
        raise TargetFailure(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from None
    if done.timed_out:
        raise TargetFailure(f"{argv[0]} gave no answer within {timeout:g} s (killed)")
    return done.stdout, done.stderr, done.code


def parse_trace(stdout: str) -> Output:
    """A command's stdout: a JSON object with `output` (and `tool_calls`, `contexts`), or
    AgentV's trace (`output_messages` or `text`, with `token_usage`, `cost_usd`,
    `duration_ms`), is read as a trace; anything else is the output text."""
    text = stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and "output" in data:
            output = data["output"]
            calls = data.get("tool_calls") or []
            contexts = data.get("contexts") or []
            return Output(
                text=output if isinstance(output, str) else json.dumps(output, default=str),
                value=None if isinstance(output, str) else output,
                tool_calls=[tool_call(c) for c in calls if isinstance(c, dict)],
                contexts=[str(c) for c in contexts],
            )
        if isinstance(data, dict) and ("output_messages" in data or "text" in data):
            return agent_reply(data)
    return Output(text=text)


def tool_call(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call in one shape (`name`, `arguments`, and `duration_ms` when known), from
    accord's form (`name`, `arguments`) or AgentV's (`tool`, `input`, `duration_ms`)."""
    out: dict[str, Any] = {
        "name": str(call.get("name", call.get("tool", ""))),
        "arguments": call.get("arguments", call.get("input", call.get("args"))),
    }
    duration = call.get("duration_ms")
    if isinstance(duration, int | float) and not isinstance(duration, bool) and duration >= 0:
        out["duration_ms"] = float(duration)
    if "output" in call:
        out["output"] = call["output"]
    return out


def agent_reply(data: dict[str, Any]) -> Output:
    """An agent's reply in AgentV's wire form: the last assistant message's content is the
    answer; the tool calls of every message, the token usage, cost and duration are kept."""
    messages = data.get("output_messages")
    if not isinstance(messages, list) or not messages:
        raw = data.get("text", "")
        messages = [{"role": "assistant", "content": raw}]
    messages = [m for m in messages if isinstance(m, dict)]
    answer = next(
        (m.get("content") for m in reversed(messages) if m.get("role", "assistant") == "assistant"),
        "",
    )
    calls = [
        tool_call(c) for m in messages for c in (m.get("tool_calls") or []) if isinstance(c, dict)
    ]
    usage = data.get("token_usage")
    cost = data.get("cost_usd")
    duration = data.get("duration_ms")
    return Output(
        text=answer if isinstance(answer, str) else content_text(answer),
        value=None if isinstance(answer, str) else answer,
        tool_calls=calls,
        messages=messages,
        usage={k: int(v) for k, v in usage.items() if isinstance(v, int | float)}
        if isinstance(usage, dict)
        else None,
        cost=float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
        duration_ms=float(duration)
        if isinstance(duration, int | float) and duration >= 0
        else None,
    )


@target("python")
class PythonTarget(Target):
    """A Python function `module:function` (importable from the project root), given the
    case's input; it may be async, and may return text, a value, or an `Output`."""

    type: Literal["python"] = "python"
    function: str = Field(pattern=r"^[\w.]+:[\w.]+$", description="module:function")
    pass_case: bool = Field(False, description="Give the function the whole case (a dict).")
    callable: Any = Field(None, exclude=True, description="A callable passed in from Python.")

    def describe(self) -> str:
        return f"python {self.function}"

    def problem(self, root: Path) -> str | None:
        if self.callable is not None:
            return None  # given from Python: the caller's own
        problem = module_problem(self.function.partition(":")[0], root)
        if problem is None:
            return None
        return (
            f"python target '{self.function}': {problem}; a project file may name only the "
            "project's own Python code (define the function in a module under the project root)"
        )

    def resolve(self, root: Path) -> Callable[..., Any]:
        if self.callable is not None:
            return self.callable  # type: ignore[no-any-return]
        module_name, _, attr = self.function.partition(":")
        try:
            obj = import_from_project(module_name, attr, root, f"python target '{self.function}'")
        except ProjectCodeError as exc:
            raise TargetFailure(exc.message) from None
        if not callable(obj):
            raise TargetFailure(f"{self.function} is not callable")
        return obj  # type: ignore[no-any-return]

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        fn = self.resolve(tctx.root)
        if case.obj is not None:
            arg: Any = case.obj
        else:
            arg = case.data() if self.pass_case else case.input
        return await call_python(fn, arg)


async def call_python(fn: Callable[..., Any], arg: Any) -> Output:
    """Call a user's function (a coroutine awaited, a plain one in a daemon thread of its
    own, so that one that never returns cannot hold the process after its timeout)."""
    try:
        if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__):
            value = await fn(arg)
        else:
            value = await call_blocking(fn, arg)
            if inspect.isawaitable(value):
                value = await value
    except (TargetFailure, asyncio.CancelledError):
        raise
    except Exception as exc:
        raise TargetFailure(f"{type(exc).__name__}: {exc}") from None
    if isinstance(value, Output):
        return value
    if isinstance(value, str):
        return Output(text=value)
    return Output(text=text_of(value) if _plain(value) else str(value), value=value)


def _plain(value: Any) -> bool:
    return isinstance(value, dict | list | int | float | bool) or value is None


def file_problem(root: Path, relative: str, what: str) -> str | None:
    """Why the file a target names is not the project's (outside it, or missing), or None."""
    try:
        path = inside(root, relative, what)
    except PathError as exc:
        return exc.message
    return None if path.is_file() else f"{what} '{relative}' not found under {root}"


def target_from(value: Any) -> Target:
    """A target from its YAML form: a mapping with `type`, or a shorthand string (`echo`,
    `x.agent.yml`, `x.workflow.yml#task`, else a model name)."""
    if isinstance(value, Target):
        return value
    if isinstance(value, str):
        if value == "echo":
            return EchoTarget()
        if value.endswith((".agent.yml", ".agent.yaml")):
            return AgentTarget(agent=value)
        if ".workflow.y" in value or ".procedure.y" in value:
            file, _, task = value.partition("#")
            return WorkflowTarget(workflow=file, task=task or None)
        return ModelTarget(model=value)
    if isinstance(value, dict):
        kind = value.get("type")
        if not isinstance(kind, str) or kind not in TARGETS:
            raise ValueError(TARGETS.unknown(str(kind)) if kind else "a target needs a 'type'")
        return TARGETS.get(kind).model_validate(value)
    raise ValueError(f"a target is a name or a mapping with 'type', not {type(value).__name__}")
