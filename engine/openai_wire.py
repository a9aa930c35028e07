"""Chat completions in the OpenAI wire format, on aiohttp, without importing litellm.

`openai/...` models (OpenAI itself and every OpenAI-compatible `api_base`: vLLM, Ollama,
llama.cpp's server, LM Studio) take this path. litellm's import costs seconds of CPU and each
call through it milliseconds more (request transforms, model-info lookups, cost); for a
format that is one POST and one JSON answer, that CPU set the pace of model-backed evals.
Everything the engine sees stays as litellm gives it: the request body, the error kinds
(`RateLimitError`, `AuthenticationError`, ...) and their words, the cost from litellm's own
price table (read as data from the installed package). The other API families' lean clients
(engine/wire: Anthropic, Gemini, Azure, Ollama, the OpenAI-compatible hosted providers) share
its connection pool, its POST and its price table; every other provider keeps litellm.

`ACCORD_MODEL_CLIENT=litellm` sends every lean family's models through litellm too (`lean`,
the default, uses the lean clients).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import weakref
from collections.abc import AsyncIterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from .errors import ConfigError
from .model_workers import REFUSED, WorkerCallError, refused_connection

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
_closing: set[asyncio.Task[None]] = set()


class NoChoices(Exception):
    """A JSON answer without a first choice's message."""


def client_choice() -> str:
    """`lean` (the default) or `litellm`, from ACCORD_MODEL_CLIENT."""
    value = os.environ.get(CLIENT_ENV, "").strip().lower() or "lean"
    if value not in ("lean", "litellm"):
        raise ConfigError(
            f"{CLIENT_ENV}={value!r}: expected 'lean' (the APIs accord speaks itself without "
            "litellm, the default) or 'litellm'"
        )
    return value


def takes(litellm_model: str) -> bool:
    """Whether a model's calls take this path rather than litellm's."""
    return litellm_model.startswith(_PREFIX) and client_choice() == "lean"


def missing_keys(litellm_model: str = "", api_base: str | None = None) -> list[str]:
    """What litellm's `validate_environment` says for an `openai/` model without a key."""
    return [] if os.environ.get("OPENAI_API_KEY") else ["OPENAI_API_KEY"]


class Pool:
    """The connections of one model client: one aiohttp session per event loop (a session's
    connections belong to their loop), closed when that loop's async generators are shut down
    (`asyncio.run` does it at its end) or by `close`. Each client owns its pool: two runs
    sharing a loop (the suites of a folder) no longer close each other's connections under a
    request still being written."""

    def __init__(self) -> None:
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._proxies: dict[tuple[str, str, int | None], tuple[Any, Any]] = {}

    def proxy(self, url: Any) -> tuple[Any, Any]:
        """(proxy URL, its auth) for a request to `url` from the environment (HTTP_PROXY,
        HTTPS_PROXY, NO_PROXY), read once per origin as the openai SDK reads them once per
        client: aiohttp's `trust_env` read them, and looked for a .netrc, in a worker thread
        at every request (two thread hops and ~150 us of CPU each)."""
        key = (url.scheme, url.host or "", url.port)
        found = self._proxies.get(key)
        if found is None:
            from aiohttp.helpers import get_env_proxy_for_url

            try:
                found = get_env_proxy_for_url(url)
            except LookupError:
                found = (None, None)
            self._proxies[key] = found
        return found

    async def session(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        entry = self._sessions.get(loop)
        if entry is None or entry[0].closed:
            # the openai SDK's limit of 1,000 connections; proxies from the environment as it
            # (`proxy`, read once per origin)
            connector = aiohttp.TCPConnector(limit=1000)
            session = aiohttp.ClientSession(connector=connector)
            closer = _closed_with_the_loop(session)
            await closer.__anext__()
            entry = self._sessions[loop] = (session, closer)
        return entry[0]

    def close(self) -> None:
        """Close this pool's session on the running loop (from sync code on the loop, at the
        end of a run): its connector closes now, so no `Unclosed client session` is reported
        later."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        entry = self._sessions.pop(loop, None)
        if entry is not None and not entry[0].closed:
            waiter = entry[0].connector.close()
            task = loop.create_task(_drain(waiter))
            _closing.add(task)
            task.add_done_callback(_closing.discard)


async def _closed_with_the_loop(session: Any) -> AsyncIterator[None]:
    try:
        yield
    finally:
        await session.close()


class _Answer(NamedTuple):
    status: int
    headers: Mapping[str, str]
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


async def complete(kwargs: dict[str, Any], pool: Pool) -> dict[str, Any]:
    """One chat completion from the keyword arguments litellm would have been given; the
    answer's fields as `model_workers.answer_fields` gives them, or a `WorkerCallError`
    carrying litellm's kind for the failure."""
    name = kwargs["model"][len(_PREFIX) :]
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
    url = _endpoint(base, headers)
    return await chat(kwargs, pool, name, url, headers, (name, _PREFIX + name))


PARAMS = ("temperature", "seed", "max_tokens", "tools", "tool_choice", "response_format",
          "top_p", "presence_penalty", "frequency_penalty", "stop")  # fmt: skip


async def chat(
    kwargs: dict[str, Any],
    pool: Pool,
    name: str,
    url: Any,
    headers: dict[str, str],
    prices: tuple[str, ...],
    *,
    dropped: tuple[str, ...] = (),
    extra: dict[str, Any] | None = None,
    kinds: Mapping[int, str] | None = None,
    priced_by_answer: str | None = None,
    resend_422: bool = True,
    flat_text: bool = False,
) -> dict[str, Any]:
    """One POST of an OpenAI chat-completions body (model `name`, the parameters litellm
    would send but `dropped`, then `extra`) to `url`; the answer's fields, its cost from the
    first of `prices` litellm's table lists (with `priced_by_answer`, the answer's own
    `model` after that prefix first: Azure names the model behind a deployment). A 422 is
    sent again without the parameters it names (`resend_422`, litellm's way with OpenAI);
    `flat_text` sends a list of parts as the string of its text parts (litellm's way with
    DeepSeek)."""
    body: dict[str, Any] = {"messages": _messages(kwargs["messages"], flat_text), "model": name}
    for key in PARAMS:
        if kwargs.get(key) is not None and key not in dropped:
            body[key] = kwargs[key]
    body.update(extra or {})
    headers.update({str(k): str(v) for k, v in (kwargs.get("extra_headers") or {}).items()})
    response = await _post(pool, url, body, headers, kwargs.get("timeout"))
    if response.status == 422 and resend_422:
        # as litellm (drop_params): once more without the parameters the server named
        body = {k: v for k, v in body.items() if k not in _rejected_params(response)}
        response = await _post(pool, url, body, headers, kwargs.get("timeout"))
    if response.status >= 400:
        raise _status_error(response, kinds)
    return _fields(response.content, prices, priced_by_answer)


def _messages(messages: list[dict[str, Any]], flat_text: bool) -> list[dict[str, Any]]:
    """The messages as litellm sends them: no `content: null` beside an assistant's tool
    calls (the openai SDK leaves it out); with `flat_text`, the text parts joined and the
    others dropped (litellm's way with DeepSeek, whose chat takes text only)."""
    out = []
    for message in messages:
        content = message.get("content", "")
        if content is None and "content" in message:
            message = {k: v for k, v in message.items() if k != "content"}
        elif flat_text and isinstance(content, list):
            texts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
            message = {**message, "content": "".join(str(p.get("text") or "") for p in texts)}
        out.append(message)
    return out


def _endpoint(base: str, headers: dict[str, str]) -> Any:
    """`base` + /chat/completions, its query kept; a user and password in it become Basic
    authorization, as httpx (under the openai SDK) made them, in place of the Bearer key."""
    import base64

    from yarl import URL

    url = URL(base)
    url = url.with_path(url.path.rstrip("/") + "/chat/completions", keep_query=True)
    if url.user is not None or url.password is not None:
        login = f"{url.user or ''}:{url.password or ''}".encode()
        headers["authorization"] = "Basic " + base64.b64encode(login).decode("ascii")
        url = url.with_user(None)
    return url


async def _post(
    pool: Pool, url: Any, body: dict[str, Any], headers: dict[str, str], timeout: Any
) -> _Answer:
    import aiohttp
    from yarl import URL

    target = url if isinstance(url, URL) else URL(url)
    proxy, proxy_auth = pool.proxy(target)
    try:
        async with (await pool.session()).post(
            target,
            data=json.dumps(body, ensure_ascii=False).encode(),
            headers=headers,
            proxy=proxy,
            proxy_auth=proxy_auth,
            # per read, as the openai SDK's; the engine bounds the whole attempt
            timeout=aiohttp.ClientTimeout(total=None, sock_read=timeout, sock_connect=timeout),
        ) as response:
            return _Answer(response.status, response.headers, await response.read())
    except TimeoutError as exc:
        raise WorkerCallError("Timeout", str(exc), None, None) from exc
    except aiohttp.ClientError as exc:
        refused = refused_connection(exc) or isinstance(
            getattr(exc, "os_error", None), ConnectionRefusedError
        )
        kind = REFUSED if refused else "InternalServerError"
        raise WorkerCallError(kind, "Connection error.", None, None) from exc


def _rejected_params(response: _Answer) -> set[str]:
    """The parameters a 422's pydantic-style `detail` names (`loc: ["body", "seed"]`)."""
    try:
        message = json.loads(response.content).get("error", {}).get("message")
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


def _status_error(
    response: _Answer, kinds: Mapping[int, str] | None = None, other_4xx: str = "APIError"
) -> WorkerCallError:
    status = response.status
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
    kind = (kinds or _KIND).get(status) or (other_4xx if 400 <= status < 500 else "APIError")
    if status == 400 and ("context_length_exceeded" in message or "maximum context" in message):
        kind = "ContextWindowExceededError"
    retry_after = response.headers.get("retry-after")
    return WorkerCallError(kind, message, status, retry_after)


def _fields(
    content: bytes, prices: tuple[str, ...], priced_by_answer: str | None = None
) -> dict[str, Any]:
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
    answered = doc.get("model")
    if priced_by_answer is not None and isinstance(answered, str) and answered:
        prices = (priced_by_answer + answered, *prices)
    return {
        "text": content_text if isinstance(content_text, str) else "",
        "tool_calls": calls,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost": price(prices, input_tokens, output_tokens, cached),
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
    return price((name, _PREFIX + name), input_tokens, output_tokens, cached)


def price_entry(names: tuple[str, ...]) -> dict[str, Any] | None:
    """The first of `names` litellm's price table lists with a price per input token."""
    table = _price_table()
    for name in names:
        entry = table.get(name)
        if isinstance(entry, dict) and "input_cost_per_token" in entry:
            return entry
    return None


def price(
    names: tuple[str, ...],
    input_tokens: int,
    output_tokens: int,
    cached: int = 0,
    written: int = 0,
) -> float | None:
    """The call's cost in USD as litellm computes it from its price table: `input_tokens`
    counts every prompt token, of which `cached` were read from the provider's prompt cache
    and `written` written to it (Anthropic's cache_creation); None for a model the table does
    not list (litellm's own lookup fails for those)."""
    entry = price_entry(names)
    if entry is None:
        return None
    per_input = float(entry.get("input_cost_per_token") or 0.0)
    per_output = float(entry.get("output_cost_per_token") or 0.0)
    per_cached = float(entry.get("cache_read_input_token_cost") or per_input)
    per_written = float(entry.get("cache_creation_input_token_cost") or per_input)
    cached = min(cached, input_tokens)
    written = min(written, input_tokens - cached)
    plain = input_tokens - cached - written
    return (
        plain * per_input + cached * per_cached + written * per_written + output_tokens * per_output
    )


async def _drain(waiter: Any) -> None:
    await waiter
