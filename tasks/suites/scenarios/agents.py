"""The agent under test of a scenario: a Python class `module.Class`, constructed with the
scenario's merged configuration (or None, so it loads its own default) and called with the
input message: `run(message)` or `__call__(message)`, sync or async.

One agent is built per distinct (class, merged configuration): a matrix entry never reuses the
agent built for another model. The class must be the project's own code: its module a file
under the project root (engine/project_code.py). It may answer text,
or a dict with `output` (or `text`, `response`, `content`) and `usage` (tokens), or an object
with those attributes.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, PrivateAttr

from accord.engine.blocking import call_blocking
from accord.engine.project_code import ProjectCodeError, import_from_project, module_problem
from accord.tasks.suites.core.cases import Case, Output, text_of
from accord.tasks.suites.core.targets import Target, TargetFailure

if TYPE_CHECKING:
    from accord.engine.context import TaskContext

TEXT_KEYS = ("output", "text", "response", "content", "final_output")
TOKEN_KEYS = {
    "input": ("input", "input_tokens", "prompt_tokens"),
    "output": ("output", "output_tokens", "completion_tokens"),
}


def split_class_path(path: str) -> tuple[str, str]:
    """`module.Class` (or `module:Class`) as (module, Class); ValueError for another form."""
    module_name, _, name = path.replace(":", ".").rpartition(".")
    if not module_name or not name:
        raise ValueError(f"agent_class '{path}' is not of the form module.Class")
    return module_name, name


def class_problem(path: str, root: Path) -> str | None:
    """Why `agent_class` may not be imported for a scenario file (found before anything
    runs), or None."""
    try:
        module_name, _name = split_class_path(path)
    except ValueError as exc:
        return str(exc)
    problem = module_problem(module_name, root)
    if problem is None:
        return None
    return (
        f"agent_class '{path}': {problem}; a scenario file may name only the project's own "
        "Python code: define the agent class in a module under the project root (a subclass "
        "may wrap an installed one)"
    )


def import_class(path: str, root: Path) -> Any:
    """`module.Class` (or `module:Class`), a class of the project's own code."""
    try:
        module_name, name = split_class_path(path)
        return import_from_project(module_name, name, root, f"agent_class '{path}'")
    except ValueError as exc:
        raise TargetFailure(str(exc)) from None
    except ProjectCodeError as exc:
        raise TargetFailure(exc.message) from None


class AgentClassTarget(Target):
    """A scenario's agent: `agent_class` built with `config`."""

    type: Literal["agent_class"] = "agent_class"
    agent_class: str
    config: Any = Field(None, description="The merged configuration (None: the agent's own).")
    _agent: Any = PrivateAttr(None)
    _lock: asyncio.Lock | None = PrivateAttr(None)

    def describe(self) -> str:
        return self.agent_class

    def problem(self, root: Path) -> str | None:
        return class_problem(self.agent_class, root)

    async def _built(self, root: Path) -> Any:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._agent is None:
                cls = import_class(self.agent_class, root)
                try:
                    self._agent = await call_blocking(cls, self.config)
                except Exception as exc:
                    raise TargetFailure(
                        f"cannot construct {self.agent_class}: {type(exc).__name__}: {exc}"
                    ) from None
            return self._agent

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        agent = await self._built(tctx.root)
        call = getattr(agent, "run", None)
        if not callable(call):
            call = agent if callable(agent) else None
        if call is None:
            raise TargetFailure(f"{self.agent_class} has neither run() nor __call__()")
        try:
            if inspect.iscoroutinefunction(call) or (
                not inspect.isroutine(call) and inspect.iscoroutinefunction(type(call).__call__)
            ):
                value = await call(case.input)
            else:
                value = await call_blocking(call, case.input)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            raise TargetFailure(f"the agent raised {type(exc).__name__}: {exc}") from None
        return reply_output(value)


def reply_output(value: Any) -> Output:
    """An agent's answer as an `Output`: its text and, when it reports them, its tokens."""
    if isinstance(value, Output):
        return value
    if isinstance(value, str):
        return Output(text=value)
    fields = value if isinstance(value, dict) else getattr(value, "__dict__", {})
    text = next((fields[k] for k in TEXT_KEYS if fields.get(k) is not None), None)
    usage = _usage(fields.get("usage"))
    shown = text if isinstance(text, str) else text_of(value if text is None else text)
    return Output(text=shown, usage=usage)


def _usage(raw: Any) -> dict[str, int] | None:
    if raw is None:
        return None
    fields = raw if isinstance(raw, dict) else getattr(raw, "__dict__", {})
    out: dict[str, int] = {}
    for name, keys in TOKEN_KEYS.items():
        found = next((fields[k] for k in keys if isinstance(fields.get(k), int)), None)
        if found is not None:
            out[name] = found
    return out or None
