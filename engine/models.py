"""The one door to model providers: model resolution, rate limits, retries, usage and the
call cache.

`openai/`, `anthropic/`, `gemini/`, `azure/`, `ollama/`, `ollama_chat/` and the
OpenAI-compatible hosted providers' models take the lean clients (engine/wire: each API on
aiohttp, no litellm import, litellm's price table read as data); every other provider, and
all of them under `ACCORD_MODEL_CLIENT=litellm`, goes through litellm. litellm is imported
lazily, on the first call that is not answered from the cache, with
`LITELLM_LOCAL_MODEL_COST_MAP=True` set first so it never fetches a price table. Its own
retries are switched off: the engine owns retries, re-entering the rate limiter each time.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import importlib
import json
import os
import re
import sys
import threading
import time
from typing import Any

from . import keys, log, openai_wire, telemetry, wire
from .cache import CallCache, call_key
from .catalog import LOCAL_LITELLM as LOCAL_LITELLM
from .catalog import LOCAL_MODEL as LOCAL_MODEL
from .catalog import ModelCatalog as ModelCatalog
from .catalog import ModelConfig
from .errors import ConfigError, ModelError
from .local_model import local_model_problem
from .model_workers import REFUSED, answer_fields, refused_connection
from .ratelimit import RequestPacer as RequestPacer
from .ratelimit import _Limiters
from .retry import RetryPolicy, wait_out
from .usage import Completion, ToolCall, UsageLedger

RETRYABLE = (
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "APIConnectionError",
    "Timeout",
)
BACKOFF_ENV = "ACCORD_RETRY_BACKOFF"
_JSON_PROBLEM = re.compile(
    r"(Expecting |Unterminated string|Extra data|Invalid control character|Invalid \\escape)"
    r".*line \d+ column \d+"
)


_litellm: Any = None
_local_handler: Any = None


_import_lock = threading.Lock()


async def litellm_ready(model: str | None = None) -> Any:
    """`load_litellm` off the event loop: its first import takes seconds of CPU, which on
    the loop would freeze every running node (and count against their timeouts). With the
    model, what litellm's first call for its provider would import on the loop is imported
    there too, so that no call's latency holds it."""
    litellm = _litellm if _litellm is not None else await asyncio.to_thread(load_litellm)
    if model is not None and _sdk_client(model) and "openai.resources" not in sys.modules:
        await asyncio.to_thread(importlib.import_module, "openai.resources")
    return litellm


# litellm providers with a handler of their own; the others build the openai SDK's client,
# whose first `client.chat` imports `openai.resources` (0.8 s of CPU here)
_OWN_HANDLERS = ("anthropic", "gemini", "vertex_ai", "ollama", "ollama_chat", "bedrock",
                 LOCAL_LITELLM.split("/", 1)[0])  # fmt: skip


def _sdk_client(model: str) -> bool:
    return "/" in model and model.split("/", 1)[0] not in _OWN_HANDLERS


def load_litellm() -> Any:
    """Import litellm once, offline price table, its own retries and logging quiet."""
    with _import_lock:
        return _load_litellm()


def _load_litellm() -> Any:
    global _litellm, _local_handler
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        # The import allocates some 340,000 objects that all live on: the collector's passes
        # over them while they are built find nothing and cost a fifth of the import's CPU
        # (B20). It stays off for the import only, and the objects are frozen below.
        collecting = gc.isenabled()
        gc.disable()
        try:
            import litellm
        finally:
            if collecting:
                gc.enable()

        litellm.suppress_debug_info = True
        litellm.drop_params = True
        litellm.num_retries = 0
        from .local_model import LocalModel

        provider = LOCAL_LITELLM.split("/", 1)[0]
        _local_handler = LocalModel()
        litellm.custom_provider_map = [
            *[p for p in litellm.custom_provider_map if p.get("provider") != provider],
            {"provider": provider, "custom_handler": _local_provider(litellm, _local_handler)},
        ]
        from litellm.utils import custom_llm_setup

        custom_llm_setup()  # type: ignore[no-untyped-call]
        _litellm = litellm
        # litellm's import leaves some 340,000 long-lived objects; every full collection
        # would rescan them, a 100-150 ms pause of the event loop. They live as long as the
        # process: move them out of the collector's view (and back at exit, so that extension
        # modules see their objects freed: duckdb reports leaks otherwise).
        gc.freeze()
        atexit.register(gc.unfreeze)
    return _litellm


def _local_provider(litellm: Any, local: Any) -> Any:
    """The `local` model as a litellm custom provider, so it takes the same door as others."""
    from .local_model import fill_response

    class LocalProvider(litellm.CustomLLM):  # type: ignore[misc]
        async def acompletion(
            self, model: str, messages: list[Any], *args: Any, **kwargs: Any
        ) -> Any:
            params = kwargs.get("optional_params")
            if params is None:  # litellm passes it positionally: the 10th argument
                params = args[8] if len(args) > 8 else {}
            response = kwargs.get("model_response", args[2] if len(args) > 2 else None)
            raw = await local.answer(messages, params)
            return fill_response(response, raw, model, litellm.Usage)

    return LocalProvider()


def _unrecorded(what: str, task: str) -> ModelError:
    """`--cache replay` met a call the cache has no answer for."""
    return ModelError(
        f"no recorded {what} (--cache replay allows recorded calls only; run once with "
        "--cache on to record)",
        task=task,
        permanent=True,
    )


def _kind(exc: BaseException) -> str:
    """The provider error's kind, also for errors carried back from a worker process."""
    return str(getattr(exc, "kind", type(exc).__name__))


def _is_retryable(exc: Exception) -> bool:
    """429, 5xx, timeouts and connection errors; litellm names some 5xx plainly `APIError`."""
    if _kind(exc) in RETRYABLE or isinstance(exc, TimeoutError):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or 500 <= status <= 599)


def redact(text: str, secrets: list[str]) -> str:
    """`text` with every secret (API key, password) replaced by `[redacted]`.

    Providers echo the key they were sent in some error messages ("Incorrect API key
    provided: sk-..."); those messages reach the terminal, the logs and the run store.
    """
    from .masking import REDACTED, mask

    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return mask(text)


def _retry_after(exc: Exception) -> float | None:
    headers: Any = getattr(exc, "litellm_response_headers", None)
    response = getattr(exc, "response", None)
    if headers is None and response is not None:
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    try:
        seconds = float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
    if seconds is None or seconds != seconds:  # NaN
        return None
    return seconds


def _provider_message(exc: Exception) -> str:
    """The provider's words without litellm's repeated `litellm.Kind: Kind:` prefixes."""
    message = str(getattr(exc, "message", "") or exc).strip()
    kind = _kind(exc)
    changed = True
    while changed:
        changed = False
        for prefix in ("litellm.", f"{kind}:", "OpenAIException -", "OpenAIException:"):
            if message.startswith(prefix):
                message = message[len(prefix) :].strip()
                changed = True
    return message


class ModelClient:
    """Every model call of a run goes through `complete`.

    Retries follow the one `RetryPolicy`: `backoff_base * 2**k` seconds with full jitter, at
    most `backoff_cap`, or what the provider's Retry-After asks (capped), without holding the
    node's slot while they wait. The environment variable `ACCORD_RETRY_BACKOFF` (seconds)
    overrides `backoff_base`: tests and CI set it small so retries of a scripted fault do not
    wait a second each.
    """

    def __init__(
        self,
        catalog: ModelCatalog,
        cache: CallCache | None,
        mode: str = "on",
        *,
        backoff_base: float = 1.0,
        backoff_cap: float = 30.0,
        workers: Any = None,
    ) -> None:
        self.catalog = catalog
        self.workers = workers
        self.cache = cache
        self.mode = mode
        self.usage = UsageLedger()
        self.limiters = _Limiters()
        self.backoff_base = _env_seconds(BACKOFF_ENV, backoff_base)
        openai_wire.client_choice()  # a misspelt ACCORD_MODEL_CLIENT is refused up front
        self._wire = openai_wire.Pool()
        self.backoff_cap = backoff_cap
        self._log = log.get()
        self._key_check: dict[str, list[str]] = {}

    def close(self) -> None:
        """Release the cache and the local model's weights."""
        if self.cache is not None:
            self.cache.close()
        if self.workers is not None:
            self.workers.close()
        self._wire.close()
        if _local_handler is not None:
            _local_handler.close()

    def _params(
        self, model: ModelConfig, temperature: float | None, seed: int | None, sample: int = 0
    ) -> dict[str, Any]:
        """The call's settings. Sample i of a call (a consistency run, a test's run i, a
        judge's retry) gets the seed + i: with one fixed seed every sample would be the
        same answer, and n agreeing samples would prove nothing. Sample 0 keeps the seed as
        given, and every sample stays reproducible."""
        params: dict[str, Any] = {}
        temp = temperature if temperature is not None else model.temperature
        if temp is not None:
            params["temperature"] = temp
        chosen_seed = seed if seed is not None else model.seed
        if chosen_seed is not None:
            params["seed"] = chosen_seed + sample
        if model.max_tokens:
            params["max_tokens"] = model.max_tokens
        for name, text in model.body:
            params[name] = json.loads(text)
        return params

    def _missing_keys(self, model: ModelConfig) -> list[str]:
        """The provider's API-key variables that are unset (litellm knows which a provider
        reads); other settings it lists (a base URL, AWS profiles) have working defaults."""
        if model.litellm_model == LOCAL_LITELLM:
            return []
        if wire.takes(model.litellm_model):
            return wire.missing_keys(model.litellm_model, model.api_base)
        if model.litellm_model not in self._key_check:
            try:
                found = load_litellm().validate_environment(
                    model=model.litellm_model, api_base=model.api_base
                )
                names = [str(k) for k in found.get("missing_keys") or []]
            except Exception:  # a model litellm cannot place: the call itself will say so
                names = []
            self._key_check[model.litellm_model] = [n for n in names if n.endswith("_API_KEY")]
        return self._key_check[model.litellm_model]

    def _credentials(self, model: ModelConfig, task: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if model.api_base_var:
            base = keys.read(model.api_base_var)
            if not base:
                raise ModelError(
                    f"needs its API base URL: set the environment variable "
                    f"{model.api_base_var} (api_base_var in config.yml)",
                    task=task,
                    model=model.name,
                    permanent=True,
                )
            out["api_base"] = base
        elif model.api_base:
            out["api_base"] = model.api_base
        if model.api_version:
            out["api_version"] = model.api_version
        if model.key_var:
            key = keys.read(model.key_var)
            if not key:
                raise ModelError(
                    f"needs an API key: set the environment variable {model.key_var} "
                    "(key_var in config.yml)",
                    task=task,
                    model=model.name,
                    permanent=True,
                )
            out["api_key"] = key
        elif model.api_key:
            out["api_key"] = model.api_key
        else:
            missing = self._missing_keys(model)
            if missing:
                raise ModelError(
                    f"needs an API key: set the environment variable {' and '.join(missing)}, "
                    "or name the variable holding it with key_var on the model in config.yml",
                    task=task,
                    model=model.name,
                    permanent=True,
                )
        headers = {}
        for name, value in model.headers:
            if value.startswith("env:"):
                env = value[4:]
                if env not in os.environ:
                    raise ModelError(
                        f"header {name} needs the environment variable {env}",
                        task=task,
                        model=model.name,
                        permanent=True,
                    )
                headers[name] = keys.read(env) or ""
            else:
                headers[name] = value
        if headers:
            out["extra_headers"] = headers
        _remember_credentials(model, out)
        return out

    @telemetry.traced_completion
    async def complete(
        self,
        model_name: str | None,
        messages: list[dict[str, Any]],
        *,
        task: str,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        sample: int = 0,
        tool_choice: dict[str, Any] | None = None,
    ) -> Completion:
        """One chat completion, from the cache when allowed, else from the provider.
        `tool_choice` forces a tool call (judges' structured answers)."""
        model = self.catalog.resolve(model_name)
        params = self._params(model, temperature, seed, sample)
        if tool_choice is not None:
            params["tool_choice"] = tool_choice
        key = ""
        if self.cache is not None:
            key = call_key(model.litellm_model, model.api_base, params, messages, tools, sample)
        if self.cache is not None and self.mode in ("on", "readonly", "replay"):
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    completion = Completion.from_cache(hit)
                except ValueError as exc:  # a damaged entry is a miss, recorded anew below
                    self._log.warning("cache_entry_unreadable", task=task, error=str(exc))
                else:
                    self.usage.record(task, completion)
                    return completion
        if self.mode == "replay":
            raise _unrecorded(f"answer for this call to model '{model.name}'", task)
        completion = await self._call(model, messages, tools, params, task)
        if self.cache is not None and self.mode == "on":
            self.cache.put(key, completion.to_cache())
        self.usage.record(task, completion)
        return completion

    async def embed(
        self,
        model_name: str | ModelConfig,
        texts: list[str],
        *,
        task: str,
        dimensions: int | None = None,
    ) -> list[list[float]]:
        """Embedding vectors of `texts` (a config.yml model, with its api_base and key, a
        litellm string, or a model a tool configures itself), from the call cache when
        allowed, else from the provider. `dimensions` asks for shortened vectors."""
        import json

        if isinstance(model_name, ModelConfig):
            model = model_name
        else:
            model = self.catalog.resolve(model_name)
        shape: dict[str, Any] = {"embedding": 1}
        extra: dict[str, Any] = {}
        if dimensions is not None:
            shape["dimensions"] = extra["dimensions"] = dimensions
        key = ""
        if self.cache is not None:
            inputs = [{"role": "input", "content": text} for text in texts]
            key = call_key(model.litellm_model, model.api_base, shape, inputs, None, 0)
        if self.cache is not None and self.mode in ("on", "readonly", "replay"):
            hit = self.cache.get(key)
            vectors = _cached_vectors(hit, len(texts)) if hit is not None else None
            if vectors is not None:
                return vectors
            if hit is not None:  # a damaged entry is a miss, recorded anew below
                self._log.warning("cache_entry_unreadable", task=task, error="not embeddings")
        if self.mode == "replay":
            raise _unrecorded(f"embeddings from model '{model.name}'", task)
        litellm = await litellm_ready()
        response = await litellm.aembedding(
            model=model.litellm_model, input=texts, timeout=model.timeout, num_retries=0,
            **extra, **self._credentials(model, task),
        )  # fmt: skip
        vectors = [list(map(float, item["embedding"])) for item in response.data]
        if self.cache is not None and self.mode == "on":
            self.cache.put(key, json.dumps(vectors))
        return vectors

    async def _call(
        self,
        model: ModelConfig,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        task: str,
    ) -> Completion:
        lean = wire.takes(model.litellm_model)
        litellm = None if lean else await litellm_ready(model.litellm_model)
        kwargs: dict[str, Any] = {
            "model": model.litellm_model,
            "messages": messages,
            "timeout": model.timeout,
            "num_retries": 0,
            "max_retries": 0,
            **params,
            **self._credentials(model, task),
        }
        if tools:
            kwargs["tools"] = tools
        if model.litellm_model == LOCAL_LITELLM:
            local_model_problem(task)
        gate = self.limiters.gate(model)
        policy = RetryPolicy(
            attempts=model.max_retries + 1,
            backoff=self.backoff_base,
            cap=self.backoff_cap,
            jitter=True,
        )
        attempt = 0
        while True:
            attempt += 1
            await self.limiters.acquire(model, messages)
            try:
                # the latency is the request's own: the wait for a slot of the model's
                # concurrency is queueing, not the provider's time (promptfoo's `latency`
                # assertion times its provider's callApi alone)
                if gate is not None:
                    async with gate:
                        started = time.perf_counter()
                        response = await self._guarded(litellm, kwargs, model, lean)
                else:
                    started = time.perf_counter()
                    response = await self._guarded(litellm, kwargs, model, lean)
                return self._completion(response, time.perf_counter() - started, model, task)
            except ModelError:
                raise
            except Exception as exc:
                error = self._error(exc, model, task, attempt)
                if not policy.retries(attempt, error):
                    self.usage.failed(task)
                    raise error from None
                delay = policy.delay(attempt, _retry_after(exc))
                self.usage.retried(task)
                self._log.warning(
                    "model_retry",
                    task=task,
                    model=model.name,
                    attempt=attempt,
                    error=error.kind,
                    delay=round(delay, 3),
                )
                await wait_out(delay)

    async def _guarded(
        self, litellm: Any, kwargs: dict[str, Any], model: ModelConfig, lean: bool
    ) -> dict[str, Any]:
        """One attempt: on the lean client of the model's API family (engine/wire; always in
        this process: a call costs it too little CPU to send elsewhere), through the executor's
        model transport when it has one (Ray; never the in-process `local` model), else
        through litellm here; the answer's fields, or the provider's error."""
        # the model's timeout bounds the whole attempt: litellm's own applies to each read, so
        # a body trickling in a few bytes at a time took three times as long and said 5 s
        async with asyncio.timeout(model.timeout):
            if lean:
                try:
                    return await wire.complete(kwargs, self._wire)
                except openai_wire.NoChoices:
                    raise ModelError("returned no choices", model=model.name) from None
            if self.workers is not None and model.litellm_model != LOCAL_LITELLM:
                fields: dict[str, Any] = await self.workers.call(kwargs)
                return fields
            response = await litellm.acompletion(**kwargs)
            try:
                return answer_fields(litellm, response)
            except (AttributeError, IndexError, TypeError):
                raise ModelError("returned no choices", model=model.name) from None

    def _error(self, exc: Exception, model: ModelConfig, task: str, attempt: int) -> ModelError:
        """The provider's error as a `ModelError`: its kind, its words (secrets redacted)
        and a hint; permanent unless it is a 429, a 5xx, a timeout or a connection error."""
        kind = _kind(exc)
        message = redact(_provider_message(exc), _secrets(model))
        if isinstance(exc, TimeoutError) or kind == "Timeout":
            message = f"no answer within {model.timeout:g} s"
        elif _JSON_PROBLEM.search(message):
            message = f"the provider's answer is not valid JSON ({message})"
        hint = ""
        refused = refused_connection(exc) or kind == REFUSED
        if refused:
            # nothing listens at the address: a retry a second later meets the same closed
            # port, and the retries only delayed saying so (44 s)
            where = _shown_base(model.api_base) if model.api_base else f"the provider ({message})"
            message = f"connection refused by {where}"
            hint = " (nothing listens there: start the server, or fix api_base in config.yml)"
            kind = REFUSED
        elif kind == "AuthenticationError":
            hint = f" (check the key in {model.key_var or 'the model entry'})"
        elif model.api_base and (kind == "APIConnectionError" or "Connection error" in message):
            hint = f" (is {_shown_base(model.api_base)} reachable?)"
        return ModelError(
            f"{message}{hint}",
            task=task,
            model=model.name,
            kind=kind,
            permanent=refused or not _is_retryable(exc),
            attempts=attempt,
        )

    def _completion(
        self, fields: dict[str, Any], latency: float, model: ModelConfig, task: str
    ) -> Completion:
        calls = tuple(ToolCall(*call) for call in fields["tool_calls"])
        text = fields["text"]
        if not text and not calls:
            raise ModelError("returned no text", task=task, model=model.name)
        cost = 0.0 if model.litellm_model == LOCAL_LITELLM else fields["cost"]
        return Completion(
            text, calls, fields["input_tokens"], fields["output_tokens"], cost, latency
        )


def _cached_vectors(text: str, count: int) -> list[list[float]] | None:
    """`count` embedding vectors of finite numbers from a cache entry; None for any other."""
    import json
    import math

    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, list) or len(data) != count:
        return None
    vectors = []
    for vector in data:
        if not isinstance(vector, list) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in vector
        ):
            return None
        try:  # an integer of 400 digits overflows a float
            numbers = [float(x) for x in vector]
        except OverflowError:
            return None
        if not all(math.isfinite(x) for x in numbers):
            return None
        vectors.append(numbers)
    return vectors


def _env_seconds(name: str, default: float) -> float:
    """A non-negative number of seconds from the environment, else `default`."""
    value = os.environ.get(name)
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r}: expected a number of seconds") from None
    if not 0 <= seconds <= 60:
        raise ConfigError(f"{name}={value!r}: expected seconds between 0 and 60")
    return seconds


def _shown_base(url: str) -> str:
    """An api_base as messages show it: no query string and no password (tokens live there)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "…" if parts.query else "", ""))


def _url_secrets(url: str | None) -> list[str]:
    """Values in an api_base that may be credentials: query parameters and a password."""
    if not url:
        return []
    from urllib.parse import parse_qsl, urlsplit

    parts = urlsplit(url)
    found = [value for _name, value in parse_qsl(parts.query)]
    if parts.password:
        found.append(parts.password)
    return found


def _remember_credentials(model: ModelConfig, sent: dict[str, Any]) -> None:
    """Mask what a call to `model` sends (engine/masking): its key, its headers, and what its
    api_base carries, a password or query values (a query's `api-version=2024-02-01` is
    masked only from 6 characters, as any value that is not named a credential)."""
    from urllib.parse import parse_qsl, urlsplit

    from .masking import CREDENTIAL_NAME, remember

    remember(sent.get("api_key"))
    for name, value in model.headers:
        if value.startswith("env:"):
            remember(os.environ.get(value[4:]), value[4:])
        elif CREDENTIAL_NAME.search(name):  # `Authorization: Bearer ...` written in config.yml
            remember(value, name)
    base = sent.get("api_base")
    if base and model.api_base_var:
        remember(base, model.api_base_var)
    if base:
        parts = urlsplit(base)
        remember(parts.password)
        for name, value in parse_qsl(parts.query):
            remember(value, name)


def _secrets(model: ModelConfig) -> list[str]:
    """The secret values a call to `model` sends: its key, its headers from env vars, and
    what its api_base carries (a token in the query string, a password)."""
    found = [model.api_key or "", *_url_secrets(model.api_base)]
    if model.key_var:
        found.append(os.environ.get(model.key_var, ""))
    for _name, value in model.headers:
        if value.startswith("env:"):
            found.append(os.environ.get(value[4:], ""))
    return [s for s in found if s]
