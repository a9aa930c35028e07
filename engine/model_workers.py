"""A model call's answer and error as plain data, for calls made away from the run's loop.

The Ray executor's model callers send the answer's fields (text, tool calls, tokens, cost) and
a provider error's kind, status code and Retry-After back as plain data, so the engine's retry
policy treats them exactly as it would an in-process call; the lean clients (engine/wire,
engine/openai_wire.py) raise their errors in the same form.

`model_workers: N` (worker processes for model calls) is deprecated and has no effect: on the
project's 2-core machine 2 workers made 1,000 litellm calls 2.8x slower than the run's own
process (each worker imports litellm), and the lean client's calls cost too little CPU for a
worker to pay (B18).
"""

from __future__ import annotations

from typing import Any


class WorkerCallError(Exception):
    """A provider error raised in a worker, carried back with what retries need."""

    def __init__(
        self, kind: str, message: str, status_code: int | None, retry_after: str | None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status_code = status_code
        self.litellm_response_headers = {"retry-after": retry_after} if retry_after else None


def answer_fields(litellm: Any, response: Any) -> dict[str, Any]:
    """The parts of a litellm response the engine keeps (shared by both paths)."""
    choice = response.choices[0]
    message = choice.message
    calls = [
        (call.id or f"call_{index}", call.function.name or "", call.function.arguments or "")
        for index, call in enumerate(getattr(message, "tool_calls", None) or [])
    ]
    usage = getattr(response, "usage", None)
    hidden = getattr(response, "_hidden_params", None) or {}
    cost: float | None = hidden.get("response_cost")
    if cost is None and "response_cost" not in hidden:
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # litellm raises for models missing from its price table
            cost = None
    return {
        "text": message.content or "",
        "tool_calls": calls,
        "input_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
        "cost": cost,
    }


REFUSED = "ConnectionRefused"  # the kind of an error whose cause is a refused connection


def refused_connection(exc: BaseException) -> bool:
    """A refused connection (ECONNREFUSED) anywhere in the error's chain: litellm reports it
    as a connection error, or as an InternalServerError, several wrappers above the cause."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _error_fields(exc: BaseException) -> tuple[str, str, int | None, str | None]:
    headers: Any = getattr(exc, "litellm_response_headers", None)
    response = getattr(exc, "response", None)
    if headers is None and response is not None:
        headers = getattr(response, "headers", None)
    retry_after = None
    if headers:
        value = headers.get("retry-after") or headers.get("Retry-After")
        retry_after = str(value) if value is not None else None
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", "") or exc)
    kind = REFUSED if refused_connection(exc) else type(exc).__name__  # its chain stays here
    return kind, message, status if isinstance(status, int) else None, retry_after
