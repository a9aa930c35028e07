"""The agents a conversation can be played against, behind one call: given the history so
far (chat messages: what the user said, and what the agent actually said and did), give the
agent's next turn.

- a Python callable, or a class (constructed with no arguments) or object with `run` or
  `__call__`; sync or async, returning or yielding: text, an `AgentTurn`, a dict with `text`
  (or `content`) and `tool_calls`, or a `(text, tool_calls)` pair; a generator's pieces (text
  chunks, `ToolCall`s, dicts) are joined;
- an `.agent.yml` file (`AgentFile`): accord's agent, its tools really run;
- a model with tools (`ModelAgent`): Python functions offered as tools, run when called.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, create_model

from .....engine.blocking import call_blocking
from .....engine.errors import AccordError
from .turns import ToolCall, Turn

if TYPE_CHECKING:
    from .....engine.context import TaskContext

Messages = list[dict[str, Any]]


@dataclass
class Reply:
    """What the agent said and did in one turn."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {"text": self.text, "tool_calls": [c.model_dump() for c in self.tool_calls]}

    def messages(self, turn: int) -> Messages:
        """The turn as chat messages: the tool calls and their results, then the text."""
        out: Messages = []
        if self.tool_calls:
            ids = [f"call_{turn}_{i}" for i in range(len(self.tool_calls))]
            out.append({
                "role": "assistant", "content": None,
                "tool_calls": [
                    {"id": i, "type": "function",
                     "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for i, c in zip(ids, self.tool_calls, strict=True)
                ],
            })  # fmt: skip
            for i, call in zip(ids, self.tool_calls, strict=True):
                content = call.result if isinstance(call.result, str) else json.dumps(call.result)
                out.append({"role": "tool", "tool_call_id": i, "name": call.name,
                            "content": content})  # fmt: skip
        if self.text or not self.tool_calls:
            out.append({"role": "assistant", "content": self.text})
        return out


class Agent:
    """Anything that answers a conversation's next turn."""

    def describe(self) -> str:
        return type(self).__name__

    async def reply(self, history: Messages, tctx: TaskContext) -> Reply:
        raise NotImplementedError


class PythonAgent(Agent):
    """A callable, or an object with `run`, given the history (a list of chat messages)."""

    def __init__(self, agent: Any) -> None:
        if inspect.isclass(agent):
            try:
                agent = agent()
            except Exception as exc:
                raise AccordError(
                    f"could not construct the agent {agent.__qualname__}(): "
                    f"{type(exc).__name__}: {exc}"
                ) from None
        call = getattr(agent, "run", None)
        if not callable(call):
            call = agent if callable(agent) else None
        if call is None:
            raise AccordError(
                f"the agent {agent!r} is not callable: give a function, a class or object with "
                "run() or __call__, an .agent.yml path, or a ModelAgent"
            )
        self.agent = agent
        self.call: Callable[[Messages], Any] = call

    def describe(self) -> str:
        return getattr(self.agent, "__qualname__", type(self.agent).__qualname__)

    async def reply(self, history: Messages, tctx: TaskContext) -> Reply:
        fn, given = self.call, [dict(m) for m in history]
        if _is_async(fn) or (not inspect.isroutine(fn) and _is_async(type(fn).__call__)):
            value = fn(given)
        else:  # a blocking agent runs in a thread: the turn's timeout still holds
            value = await call_blocking(_drained, fn, given)
        if inspect.isawaitable(value):
            value = await value
        if inspect.isasyncgen(value):
            value = [piece async for piece in value]
        return reply_of(value)


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)


def _drained(fn: Callable[[Messages], Any], history: Messages) -> Any:
    value = fn(history)
    return list(value) if inspect.isgenerator(value) else value


def reply_of(value: Any) -> Reply:
    """An agent's answer, in any of the forms the module docstring lists, as a `Reply`."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(text=value)
    if isinstance(value, Turn):
        text = value.text if isinstance(value.text, str) else " ".join(value.text)
        return Reply(text=text, tool_calls=list(value.tool_calls))
    if isinstance(value, dict):
        text = value.get("text", value.get("content")) or ""
        calls = [_tool_call(c) for c in value.get("tool_calls") or []]
        return Reply(text=str(text), tool_calls=calls)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return Reply(text=value[0], tool_calls=[_tool_call(c) for c in value[1] or []])
    if isinstance(value, list):
        return _joined(value)
    raise AccordError(
        f"the agent answered a {type(value).__name__}: answer text, an AgentTurn, a dict with "
        "'text' and 'tool_calls', or a (text, tool_calls) pair"
    )


def _joined(pieces: Sequence[Any]) -> Reply:
    text: list[str] = []
    calls: list[ToolCall] = []
    for piece in pieces:
        if isinstance(piece, ToolCall):
            calls.append(piece)
        elif isinstance(piece, dict) and "name" in piece and "text" not in piece:
            calls.append(_tool_call(piece))
        else:
            part = reply_of(piece)
            text.append(part.text)
            calls.extend(part.tool_calls)
    return Reply(text="".join(text).strip(), tool_calls=calls)


def _tool_call(value: Any) -> ToolCall:
    if isinstance(value, ToolCall):
        return value
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        arguments = value.get("arguments") or value.get("args") or {}
        if isinstance(arguments, str):
            arguments = _parsed(arguments)
        return ToolCall(value["name"], arguments if isinstance(arguments, dict) else
                        {"value": arguments}, value.get("result"))  # fmt: skip
    raise AccordError(
        f"a tool call of the agent is a {type(value).__name__}: give ToolCall(name, arguments, "
        "result) or a dict with 'name' and 'arguments'"
    )


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments or "{}")
    except ValueError:
        return arguments


class AgentFile(Agent):
    """An `.agent.yml`: the model answers with the whole history, its tools really run."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)

    def describe(self) -> str:
        return f"agent {self.path}"

    async def reply(self, history: Messages, tctx: TaskContext) -> Reply:
        from .....engine.spec import variable_spec
        from ....agent import load_agent
        from ....agent.tools import run_agent_loop

        agent = load_agent(tctx.path(self.path, "agent file"))
        defaults = {k: variable_spec(v).default for k, v in agent.variables.items()}
        *before, last = history
        answer = await run_agent_loop(
            agent, str(last.get("content") or ""), tctx, variables=defaults, history=before
        )
        calls = [_tool_call(c) for c in answer.tool_calls]
        return Reply(text=str(answer), tool_calls=calls)


class ModelAgent(Agent):
    """A model (a name from config.yml or a litellm model string) with Python functions as
    tools: each call the model asks for runs the function with the model's arguments, and
    the result goes back to the model until it answers in text."""

    def __init__(
        self,
        model: str,
        tools: Sequence[Callable[..., Any]] = (),
        *,
        system: str | None = None,
        max_tool_calls: int = 10,
    ) -> None:
        self.model = model
        self.system = system
        self.max_tool_calls = max_tool_calls
        self.tools = {fn.__name__: fn for fn in tools}
        self.schemas = [tool_schema(fn) for fn in tools]

    def describe(self) -> str:
        return f"model {self.model}"

    async def reply(self, history: Messages, tctx: TaskContext) -> Reply:
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages += history
        made: list[ToolCall] = []
        client = tctx.run.models()
        while True:
            offer = self.schemas if len(made) < self.max_tool_calls else None
            completion = await client.complete(self.model, messages, task=tctx.key, tools=offer)
            if not completion.tool_calls or offer is None:
                return Reply(text=completion.text.strip(), tool_calls=made)
            messages.append(completion.message())
            for call in completion.tool_calls:
                arguments, problem = _arguments(call.arguments)
                result = problem or await self._run_tool(call.name, arguments)
                made.append(ToolCall(call.name, arguments, result))
                content = result if isinstance(result, str) else json.dumps(result, default=str)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})

    async def _run_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        fn = self.tools.get(name)
        if fn is None:
            return {"error": f"no tool named '{name}'"}
        try:
            if _is_async(fn):
                value = fn(**arguments)
            else:  # a blocking tool must not stop the event loop, and so the turn's timeout
                value = await call_blocking(lambda: fn(**arguments))
            return await value if inspect.isawaitable(value) else value
        except Exception as exc:  # the model sees the error, as with accord's agent tools
            return {"error": f"{type(exc).__name__}: {exc}"}


def _arguments(raw: str) -> tuple[dict[str, Any], dict[str, str] | None]:
    """A tool call's arguments as the model sent them, and the error the model is sent
    back instead of a call when they are not a JSON object (as `.agent.yml` agents do)."""
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        problem = f"the arguments are not valid JSON ({exc}); send a JSON object"
        return {"value": raw}, {"error": problem}
    if not isinstance(parsed, dict):
        return {"value": parsed}, {"error": "the arguments must be a JSON object"}
    return parsed, None


def tool_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The OpenAI tool definition of a Python function, from its signature and docstring."""
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(fn).parameters.items():
        annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, default)
    model: type[BaseModel] = create_model(
        fn.__name__, __config__=ConfigDict(extra="forbid"), **fields
    )
    parameters = model.model_json_schema()
    parameters.pop("title", None)
    return {
        "type": "function",
        "function": {
            "name": fn.__name__,
            "description": inspect.getdoc(fn) or fn.__name__,
            "parameters": parameters,
        },
    }


def agent_of(agent: Any) -> Agent:
    """Whatever the user gave as the agent, behind the `Agent` call."""
    if isinstance(agent, Agent):
        return agent
    if isinstance(agent, (str, Path)) and str(agent).endswith((".agent.yml", ".agent.yaml")):
        return AgentFile(agent)
    if isinstance(agent, (str, Path)):
        raise AccordError(
            f"the agent '{agent}' is a string: give a path ending in .agent.yml, a Python "
            "callable or class, or ModelAgent('model', tools=[...]) for a model with tools"
        )
    return PythonAgent(agent)
