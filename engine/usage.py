"""A model's answer and the accounting of calls: tokens, latency, cost, retries."""

from __future__ import annotations

import json
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
        """A cached answer; `ValueError` when the entry is not one (damaged or tampered)."""
        try:
            data = json.loads(text)
            calls = tuple(ToolCall(str(i), str(n), str(a)) for i, n, a in data["tool_calls"])
            numbers = [data[k] for k in ("input_tokens", "output_tokens", "latency")]
            cost = data["cost"]  # None: the provider's price is not known
            if not isinstance(data["text"], str) or not all(
                isinstance(n, int | float) and not isinstance(n, bool)
                for n in (*numbers, *([] if cost is None else [cost]))
            ):
                raise TypeError("wrong types")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise ValueError(f"not a cached answer: {type(exc).__name__}: {exc}") from None
        return cls(
            text=data["text"],
            tool_calls=calls,
            input_tokens=int(numbers[0]),
            output_tokens=int(numbers[1]),
            cost=None if cost is None else float(cost),
            latency=float(numbers[2]),
            cached=True,
        )


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
