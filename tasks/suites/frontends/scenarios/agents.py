"""The agent under test of a scenario: a Python class `module.Class`, of one of two kinds.

- The reference's (seed 003's) agent class, one whose constructor takes `agent_name`: built as
  the reference's evaluator builds it, `cls(agent_name=..., agent_config=config,
  config_root=project root)` (`cls(agent_name=...)` when the configuration is empty), then
  `initialize()` once, and called `ainvoke(user_message=input, config=config_overrides)` (the
  scenario's `config_overrides`, None when it has none).
- accord's own: constructed with the merged configuration (or None, so it loads its own
  default) and called with the input message: `run(message)` or `__call__(message)`.

Every method may be sync or async.

One agent is built per distinct (class, merged configuration): a matrix entry never reuses the
agent built for another model. The class must be the project's own code: its module a file
under the project root (engine/project_code.py). It may answer text,
or a dict with `output` (or `text`, `response`, `content`) and `usage` (tokens), or an object
with those attributes. A `content` list is read as the reference reads its own answer
(`{"content": [{"type": "text", "text": ...}]}`: the first block's text), a `content` mapping
by its `text`; an answer whose text cannot be read fails its scenario with the answer's shape,
never judged as empty text.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, PrivateAttr

from .....engine.blocking import call_blocking
from .....engine.project_code import ProjectCodeError, import_from_project, module_problem
from ....evaluators.cases import Case, Output, text_of
from ...core.targets import Target, TargetFailure

MAX_SHAPE = 200  # characters of an unreadable answer shown in its error

if TYPE_CHECKING:
    from .....engine.context import TaskContext

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
    agent_name: str = Field("", description="A reference-style agent's agent_name.")
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
                self._agent = await self.build_agent(import_class(self.agent_class, root), root)
            return self._agent

    async def build_agent(self, cls: Any, root: Path) -> Any:
        """An agent of `cls`, built (and for the reference's kind, initialized) as its kind is."""
        try:
            if not takes_agent_name(cls):
                return await call_blocking(cls, self.config)
            name = self.agent_name or "UnknownAgent"
            if self.config:
                agent = await _called(
                    cls, agent_name=name, agent_config=self.config, config_root=str(root)
                )
            else:
                agent = await _called(cls, agent_name=name)
        except Exception as exc:
            raise TargetFailure(
                f"cannot construct {self.agent_class}: {type(exc).__name__}: {exc}"
            ) from None
        initialize = getattr(agent, "initialize", None)
        if callable(initialize):
            try:
                await _called(initialize)
            except Exception as exc:
                raise TargetFailure(
                    f"{self.agent_class}.initialize() raised {type(exc).__name__}: {exc}"
                ) from None
        return agent

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        agent = await self._built(tctx.root)
        # only the reference's kind: another class's ainvoke (a LangChain runnable's) differs
        ainvoke = getattr(agent, "ainvoke", None) if takes_agent_name(type(agent)) else None
        try:
            if callable(ainvoke):
                overrides = case.metadata.get("config_overrides")
                value = await _called(ainvoke, user_message=case.input, config=overrides)
            else:
                call = getattr(agent, "run", None)
                if not callable(call):
                    call = agent if callable(agent) else None
                if call is None:
                    raise TargetFailure(
                        f"{self.agent_class} has none of ainvoke(), run() or __call__()"
                    )
                value = await _called(call, case.input)
        except TargetFailure:
            raise
        except Exception as exc:
            raise TargetFailure(f"the agent raised {type(exc).__name__}: {exc}") from None
        return reply_output(value)


def takes_agent_name(cls: Any) -> bool:
    """A reference-style agent class: its constructor takes `agent_name`."""
    try:
        return "agent_name" in inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False


async def _called(function: Any, *args: Any, **kwargs: Any) -> Any:
    """`function(...)`'s value: awaited when async, in a daemon thread when not (a blocking
    call must not hold the event loop: engine/blocking.py)."""
    if inspect.iscoroutinefunction(function) or (
        not inspect.isroutine(function) and inspect.iscoroutinefunction(type(function).__call__)
    ):
        value = await function(*args, **kwargs)
    else:
        value = await call_blocking(functools.partial(function, *args, **kwargs))
    if inspect.isawaitable(value):
        value = await value
    return value


def reply_output(value: Any) -> Output:
    """An agent's answer as an `Output`: its text and, when it reports them, its tokens."""
    if isinstance(value, Output):
        return value
    if isinstance(value, str):
        return Output(text=value)
    if value is None:
        raise TargetFailure("the agent answered None: no text to judge")
    fields = value if isinstance(value, dict) else getattr(value, "__dict__", {})
    text = next((fields[k] for k in TEXT_KEYS if fields.get(k) is not None), None)
    usage = _usage(fields.get("usage", fields.get("token_usage")))
    content: object = fields.get("content")
    if text is content and isinstance(content, list | dict):
        return Output(text=_content_text(value, content), usage=usage)
    shown = text if isinstance(text, str) else text_of(value if text is None else text)
    return Output(text=shown, usage=usage)


def _content_text(answer: Any, content: list[Any] | dict[str, Any]) -> str:
    """The text of a `content` list (its first block's) or mapping, as the reference's
    evaluator reads it; an error naming the answer's shape when it has none."""
    block = content if isinstance(content, dict) else (content[0] if content else None)
    text = block.get("text") if isinstance(block, dict) else None
    if isinstance(text, str):
        return text
    shape = _shape(answer)
    raise TargetFailure(
        f"the agent's answer {shape} has no text to judge: a 'content' list is read by its "
        "first block's 'text' ({'content': [{'type': 'text', 'text': '...'}]}), a 'content' "
        "mapping by its 'text'"
    )


def _shape(answer: Any) -> str:
    import json

    shown = json.dumps(answer, ensure_ascii=False, default=lambda v: type(v).__name__)
    return shown if len(shown) <= MAX_SHAPE else shown[: MAX_SHAPE - 3] + "..."


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
