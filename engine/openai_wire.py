"""Chat completions in the OpenAI wire format, on httpx, without importing litellm.

`openai/...` models (OpenAI itself and every OpenAI-compatible `api_base`: vLLM, Ollama,
llama.cpp's server, LM Studio) take this path. litellm's import costs seconds of CPU and each
call through it milliseconds more (request transforms, model-info lookups, cost); for a
format that is one POST and one JSON answer, that CPU set the pace of model-backed evals.
Everything the engine sees stays as litellm gives it: the request body, the error kinds
(`RateLimitError`, `AuthenticationError`, ...) and their words, the cost from litellm's own
price table (read as data from the installed package). Other providers keep litellm.

`ACCORD_MODEL_CLIENT=litellm` sends `openai/...` models through litellm too (`lean`, the
default, uses this path).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import weakref
from functools import cache
from pathlib import Path
from typing import Any

from accord.engine.errors import ConfigError
from accord.engine.model_workers import REFUSED, WorkerCallError, refused_connection

CLIENT_ENV = "ACCORD_MODEL_CLIENT"
_PREFIX = "openai/"
_DEFAULT_BASE = "https://api.openai.com/v1"
# the kinds litellm gives each status of an OpenAI-compatible server (tests/models compare)
_KIND = {
    400: "BadRequestError",
    401: "AuthenticationError",
    404: "NotFoundError",
    408: "Timeout",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
    500: "InternalServerError",
    502: "BadGatewayError",
    503: "ServiceUnavailableError",
    504: "Timeout",
}
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


class NoChoices(Exception):
    """A JSON answer without a first choice's message."""


def client_choice() -> str:
    """`lean` (the default) or `litellm`, from ACCORD_MODEL_CLIENT."""
    value = os.environ.get(CLIENT_ENV, "").strip().lower() or "lean"
    if value not in ("lean", "litellm"):
        raise ConfigError(
            f"{CLIENT_ENV}={value!r}: expected 'lean' (OpenAI-format models without litellm, "
            "the default) or 'litellm'"
        )
    return value


def takes(litellm_model: str) -> bool:
    """Whether a model's calls take this path rather than litellm's."""
    return litellm_model.startswith(_PREFIX) and client_choice() == "lean"


def missing_keys(kwargs: dict[str, Any]) -> list[str]:
    """What litellm's `validate_environment` says for an `openai/` model without a key."""
    return [] if os.environ.get("OPENAI_API_KEY") else ["OPENAI_API_KEY"]


def _client() -> Any:
    """One connection pool per event loop (a pool's connections belong to their loop)."""
    import httpx

    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        # the openai SDK's limits, as litellm's calls had them
        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
        client = _clients[loop] = httpx.AsyncClient(limits=limits, follow_redirects=True)
    return client


async def complete(kwargs: dict[str, Any]) -> dict[str, Any]:
    """One chat completion from the keyword arguments litellm would have been given; the
    answer's fields as `model_workers.answer_fields` gives them, or a `WorkerCallError`
    carrying litellm's kind for the failure."""
    name = kwargs["model"][len(_PREFIX) :]
    body: dict[str, Any] = {"messages": kwargs["messages"], "model": name}
    for key in ("temperature", "seed", "max_tokens", "tools", "tool_choice"):
        if kwargs.get(key) is not None:
            body[key] = kwargs[key]
    base = (
        kwargs.get("api_base")
        or os.environ.get("OPENAI_BASE_URL")
        or os.environ.get("OPENAI_API_BASE")
        or _DEFAULT_BASE
    )
    headers = {"content-type": "application/json"}
    api_key = kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY")
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    if os.environ.get("OPENAI_ORGANIZATION"):
        headers["openai-organization"] = os.environ["OPENAI_ORGANIZATION"]
    headers.update({str(k): str(v) for k, v in (kwargs.get("extra_headers") or {}).items()})
    url = base.rstrip("/") + "/chat/completions"
    response = await _post(url, body, headers, kwargs.get("timeout"))
    if response.status_code == 422:
        # as litellm (drop_params): once more without the parameters the server named
        body = {k: v for k, v in body.items() if k not in _rejected_params(response)}
        response = await _post(url, body, headers, kwargs.get("timeout"))
    if response.status_code >= 400:
        raise _status_error(response)
    return _fields(response.content, name)


async def _post(url: str, body: dict[str, Any], headers: dict[str, str], timeout: Any) -> Any:
    import httpx

    try:
        return await _client().post(
            url,
            content=json.dumps(body, ensure_ascii=False).encode(),
            headers=headers,
            timeout=timeout,
        )
    except httpx.TimeoutException as exc:
        raise WorkerCallError("Timeout", str(exc), None, None) from exc
    except httpx.TransportError as exc:
        kind = REFUSED if refused_connection(exc) else "InternalServerError"
        raise WorkerCallError(kind, "Connection error.", None, None) from exc


def _rejected_params(response: Any) -> set[str]:
    """The parameters a 422's pydantic-style `detail` names (`loc: ["body", "seed"]`)."""
    try:
        message = response.json().get("error", {}).get("message")
        detail = json.loads(message).get("detail") if isinstance(message, str) else None
    except (ValueError, AttributeError):
        return set()
    if not isinstance(detail, list):
        return set()
    return {
        str(item["loc"][1])
        for item in detail
        if isinstance(item, dict) and isinstance(item.get("loc"), list) and len(item["loc"]) == 2
    }


def _status_error(response: Any) -> WorkerCallError:
    status = int(response.status_code)
    message = response.text
    try:
        doc = json.loads(message)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        error = doc.get("error", doc)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            message = error["message"]
        elif isinstance(error, str):
            message = error
    kind = _KIND.get(status, "APIError")
    if status == 400 and ("context_length_exceeded" in message or "maximum context" in message):
        kind = "ContextWindowExceededError"
    retry_after = response.headers.get("retry-after")
    return WorkerCallError(kind, message, status, retry_after)


def _fields(content: bytes, name: str) -> dict[str, Any]:
    try:
        doc = json.loads(content)
    except ValueError as exc:  # a proxy's HTML page, a body cut short
        raise WorkerCallError("InternalServerError", str(exc), None, None) from None
    if not isinstance(doc, dict):
        shown = content.decode("utf-8", "replace")[:200]
        raise WorkerCallError(
            "InternalServerError",
            f"Empty or invalid response from LLM endpoint. Received: {shown}. Check the "
            "reverse proxy or model server configuration.",
            None,
            None,
        )
    if doc.get("error") is not None and not doc.get("choices"):
        error = doc["error"]
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise WorkerCallError("BadRequestError", str(message), 400, None)
    try:
        message = doc["choices"][0]["message"]
        calls = [
            (
                call.get("id") or f"call_{index}",
                call["function"].get("name") or "",
                call["function"].get("arguments") or "",
            )
            for index, call in enumerate(message.get("tool_calls") or [])
        ]
    except (KeyError, IndexError, TypeError, AttributeError):
        raise NoChoices from None
    found = doc.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    input_tokens = int(usage.get("prompt_tokens") or 0)
    output_tokens = int(usage.get("completion_tokens") or 0)
    details = usage.get("prompt_tokens_details")
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    content_text = message.get("content")
    return {
        "text": content_text if isinstance(content_text, str) else "",
        "tool_calls": calls,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost": cost(name, input_tokens, output_tokens, cached),
    }


@cache
def _price_table() -> dict[str, Any]:
    """litellm's price table, the JSON file inside the installed package (never imported:
    importing litellm is what this path avoids); empty when litellm is not installed."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "model_prices_and_context_window_backup.json"
        if path.is_file():
            table: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return table
    return {}


def cost(name: str, input_tokens: int, output_tokens: int, cached: int = 0) -> float | None:
    """The call's cost in USD as litellm computes it for an OpenAI model; None for a model
    its price table does not list (as litellm's own lookup fails for those)."""
    table = _price_table()
    entry = table.get(name) or table.get(_PREFIX + name)
    if not isinstance(entry, dict) or "input_cost_per_token" not in entry:
        return None
    per_input = float(entry.get("input_cost_per_token") or 0.0)
    per_output = float(entry.get("output_cost_per_token") or 0.0)
    per_cached = float(entry.get("cache_read_input_token_cost") or per_input)
    cached = min(cached, input_tokens)
    return (input_tokens - cached) * per_input + cached * per_cached + output_tokens * per_output


async def close_clients() -> None:
    """Close the running loop's connection pool (at the end of a run)."""
    client = _clients.pop(asyncio.get_running_loop(), None)
    if client is not None:
        await client.aclose()
