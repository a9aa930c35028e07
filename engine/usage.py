"""A model's answer and the accounting of calls: tokens, latency, cost, retries."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model asked for."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Completion:
    """A model's answer with its accounting."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    input_tokens: int
    output_tokens: int
    cost: float | None
    latency: float
    cached: bool = False

    def message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation."""
        out: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return out

    def to_cache(self) -> str:
        return json.dumps(
            {
                "text": self.text,
                "tool_calls": [[c.id, c.name, c.arguments] for c in self.tool_calls],
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cost": self.cost,
                "latency": self.latency,
            }
        )

    @classmethod
    def from_cache(cls, text: str) -> Completion:
        """A cached answer; `ValueError` when the entry is not one (damaged or tampered):
        every field is checked before anything is built from it."""
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or not isinstance(data.get("text"), str):
                raise TypeError("no text")
            calls = tuple(
                ToolCall(*_texts(call, 3)) for call in _items(data.get("tool_calls"), "tool calls")
            )
            cost = data.get("cost")  # None: the provider's price is not known
            return cls(
                text=data["text"],
                tool_calls=calls,
                input_tokens=_count(data.get("input_tokens")),
                output_tokens=_count(data.get("output_tokens")),
                cost=None if cost is None else _amount(cost),
                latency=_amount(data.get("latency")),
                cached=True,
            )
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise ValueError(f"not a cached answer: {type(exc).__name__}: {exc}") from None


def _items(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{what} are not a list")
    return value


def _texts(value: Any, length: int) -> list[str]:
    items = _items(value, "a tool call's fields")
    if len(items) != length or not all(isinstance(item, str) for item in items):
        raise TypeError(f"a tool call is not {length} texts")
    return items


def _count(value: Any) -> int:
    """A token count: a whole number, not negative (JSON's 1e999 is a float, and refused)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError(f"{value!r} is not a token count")
    return value


def _amount(value: Any) -> float:
    """A cost or a latency: a finite number, not negative."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{value!r} is not a number")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{value!r} is out of range")
    return number


@dataclass
class Usage:
    """Totals for a task or a run."""

    calls: int = 0
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    latency: float = 0.0
    retries: int = 0
    failures: int = 0
    cost_known: bool = True

    def add(self, completion: Completion) -> None:
        self.calls += 1
        if completion.cached:
            self.cached += 1
            return
        self.input_tokens += completion.input_tokens
        self.output_tokens += completion.output_tokens
        self.latency += completion.latency
        if completion.cost is None:
            self.cost_known = False
        else:
            self.cost += completion.cost

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached": self.cached,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": round(self.cost, 6) if self.cost_known else None,
            "latency": round(self.latency, 3),
            "retries": self.retries,
            "failures": self.failures,
        }


@dataclass
class UsageLedger:
    """Usage per task key and for the whole run."""

    total: Usage = field(default_factory=Usage)
    by_task: dict[str, Usage] = field(default_factory=dict)

    def task(self, key: str) -> Usage:
        if key not in self.by_task:
            self.by_task[key] = Usage()
        return self.by_task[key]

    def record(self, key: str, completion: Completion) -> None:
        self.total.add(completion)
        self.task(key).add(completion)

    def failed(self, key: str) -> None:
        self.total.failures += 1
        self.task(key).failures += 1

    def retried(self, key: str) -> None:
        self.total.retries += 1
        self.task(key).retries += 1
