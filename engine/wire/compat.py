"""OpenAI-compatible hosted providers and Azure OpenAI: OpenAI's chat-completions body, each
provider's base URL, key variable and the parameters litellm drops for it.

Azure OpenAI (learn.microsoft.com, "Azure OpenAI in Azure AI Foundry Models REST API"):
`POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...` with the
key in an `api-key` header; the answer's `model` names the model behind the deployment, whose
price litellm's table lists as `azure/<model>`.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from .. import openai_wire
from ..openai_wire import Pool


class Provider(NamedTuple):
    base: str  # the default base URL
    base_vars: tuple[str, ...]  # environment variables naming another
    key_vars: tuple[str, ...]  # environment variables holding the key, the first one named
    dropped: tuple[str, ...] = ()  # parameters litellm drops for it (drop_params)
    extra: tuple[tuple[str, Any], ...] = ()  # body fields litellm adds


PROVIDERS = {
    "openrouter": Provider(
        "https://openrouter.ai/api/v1", ("OPENROUTER_API_BASE",), ("OPENROUTER_API_KEY",),
        extra=(("usage", {"include": True}),),  # the answer's usage carries OpenRouter's cost
    ),
    "together_ai": Provider(
        "https://api.together.ai/v1", ("TOGETHER_AI_API_BASE",),
        ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_AI_TOKEN"),
    ),
    "groq": Provider(
        "https://api.groq.com/openai/v1", ("GROQ_API_BASE",), ("GROQ_API_KEY",)
    ),
    "deepseek": Provider(
        "https://api.deepseek.com/beta", ("DEEPSEEK_API_BASE",), ("DEEPSEEK_API_KEY",)
    ),
    "xai": Provider("https://api.x.ai/v1", ("XAI_API_BASE",), ("XAI_API_KEY",)),
    "fireworks_ai": Provider(
        "https://api.fireworks.ai/inference/v1", ("FIREWORKS_API_BASE",),
        ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY"),
        dropped=("tools", "tool_choice"),
    ),
    "perplexity": Provider(
        "https://api.perplexity.ai", ("PERPLEXITY_API_BASE",),
        ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
        dropped=("seed", "stop", "tools", "tool_choice"),
    ),
}  # fmt: skip

# the kinds litellm gives each status where they differ from OpenAI's (a 422 is a bad request)
_COMMON = {**openai_wire._KIND, 422: "BadRequestError"}
KINDS = {
    "azure": {**_COMMON, 500: "APIError"},
    "openrouter": {**_COMMON, 500: "APIError", 502: "APIError"},
}
_RESENT_422 = ("perplexity",)  # litellm sends its 422 again without the parameters named
KINDS["perplexity"] = openai_wire._KIND
for _name in PROVIDERS:
    KINDS.setdefault(_name, _COMMON)

AZURE_VERSION = "2025-02-01-preview"  # litellm's default api-version


def _first(names: tuple[str, ...]) -> str | None:
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    return None


def missing_keys(litellm_model: str, api_base: str | None) -> list[str]:
    provider = litellm_model.split("/", 1)[0]
    if provider == "azure":
        return [] if _first(("AZURE_API_KEY", "AZURE_OPENAI_API_KEY")) else ["AZURE_API_KEY"]
    names = PROVIDERS[provider].key_vars
    return [] if _first(names) else [names[0]]


async def complete(kwargs: dict[str, Any], pool: Pool) -> dict[str, Any]:
    provider, name = kwargs["model"].split("/", 1)
    if provider == "azure":
        return await _azure(kwargs, pool, name)
    spec = PROVIDERS[provider]
    base = kwargs.get("api_base") or _first(spec.base_vars) or spec.base
    headers = {"content-type": "application/json"}
    key = kwargs.get("api_key") or _first(spec.key_vars)
    if key:
        headers["authorization"] = f"Bearer {key}"
    url = openai_wire._endpoint(base, headers)
    prices: tuple[str, ...] = (f"{provider}/{name}",)
    if provider == "together_ai":
        prices = (*prices, _together_tier(name))
    return await openai_wire.chat(
        kwargs, pool, name, url, headers, prices, dropped=spec.dropped, extra=dict(spec.extra),
        kinds=KINDS[provider], resend_422=provider in _RESENT_422,
        flat_text=provider == "deepseek",
    )  # fmt: skip


# litellm prices Together AI's models its table does not list by their size
_TIERS = ((4, "up-to-4b"), (8, "4.1b-8b"), (21, "8.1b-21b"), (41, "21.1b-41b"),
          (80, "41.1b-80b"), (110, "81.1b-110b"))  # fmt: skip


def _together_tier(name: str) -> str:
    """litellm's `get_model_params_and_category`: the first `<digits>b` of the name."""
    import re

    found = re.search(r"(\d+b)", name.lower())
    if found is not None:
        billions = float(found.group(1)[:-1])
        for limit, tier in _TIERS:
            if billions <= limit:
                return f"together-ai-{tier}"
    return name.lower()


async def _azure(kwargs: dict[str, Any], pool: Pool, deployment: str) -> dict[str, Any]:
    from yarl import URL

    base = (
        kwargs.get("api_base")
        or os.environ.get("AZURE_API_BASE")
        or os.environ.get("AZURE_OPENAI_ENDPOINT")
        or ""
    )
    if not base:
        from ..model_workers import WorkerCallError

        raise WorkerCallError(
            "APIConnectionError",
            "Missing Azure endpoint: set api_base (or AZURE_API_BASE) to "
            "https://<resource>.openai.azure.com",
            None,
            None,
        )
    version = (
        kwargs.get("api_version")
        or os.environ.get("AZURE_API_VERSION")
        or os.environ.get("OPENAI_API_VERSION")
        or AZURE_VERSION
    )
    headers = {"content-type": "application/json"}
    key = kwargs.get("api_key") or _first(("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"))
    if key:
        headers["api-key"] = key
    url = URL(base)
    path = url.path.rstrip("/")
    if "/openai/deployments/" not in path:
        path += f"/openai/deployments/{deployment}"
    if not path.endswith("/chat/completions"):
        path += "/chat/completions"
    url = url.with_path(path).update_query({"api-version": version})
    json_tool = False
    form = kwargs.get("response_format")
    if isinstance(form, dict) and not _takes_response_format(version, deployment):
        # as litellm: a schema becomes one forced tool whose arguments are the answer's
        # text; JSON mode without a schema is dropped
        kwargs = {k: v for k, v in kwargs.items() if k != "response_format"}
        schema = (form.get("json_schema") or {}).get("schema") or form.get("response_schema")
        if schema:
            tool = {"type": "function", "function": {"name": _JSON_TOOL, "parameters": schema}}
            kwargs["tools"] = [*(kwargs.get("tools") or []), tool]
            kwargs["tool_choice"] = {"type": "function", "function": {"name": _JSON_TOOL}}
            json_tool = True
    fields = await openai_wire.chat(
        kwargs, pool, deployment, url, headers, (f"azure/{deployment}",),
        priced_by_answer="azure/", kinds=KINDS["azure"], resend_422=False,
    )  # fmt: skip
    if json_tool:
        answers = [call for call in fields["tool_calls"] if call[1] == _JSON_TOOL]
        if answers:
            fields["text"] = answers[0][2]
            fields["tool_calls"] = [c for c in fields["tool_calls"] if c[1] != _JSON_TOOL]
    return fields


_JSON_TOOL = "json_tool_call"


def _takes_response_format(version: str, deployment: str) -> bool:
    """litellm's rule: `response_format` from api-version 2024-08 on, never for GPT-3.5."""
    import re

    if "gpt-3.5" in re.sub(r"(\d)-(\d)", r"\1.\2", deployment) or "gpt-35" in deployment:
        return False
    parts = version.split("-")
    if len(parts) < 3 or not (parts[0].isdigit() and parts[1].isdigit()):
        return True
    return (int(parts[0]), int(parts[1])) >= (2024, 8)
