"""The lean model clients: each provider's own HTTP API on aiohttp, without importing litellm.

One module per API family, sharing engine/openai_wire's connection pool, its POST and its
reading of litellm's price table (as data):

- `openai/` (engine/openai_wire): OpenAI and any OpenAI-compatible `api_base` (vLLM, LM Studio,
  llama.cpp's server);
- `compat`: the OpenAI-compatible hosted providers (`openrouter/`, `together_ai/`, `groq/`,
  `deepseek/`, `xai/`, `fireworks_ai/`, `perplexity/`) and Azure OpenAI (`azure/`: a
  deployment's URL, `api-version`, the `api-key` header);
- `anthropic`: Anthropic's Messages API (`anthropic/`);
- `gemini`: Google AI Studio's generateContent (`gemini/`);
- `ollama`: Ollama's `/api/chat` (`ollama_chat/`) and `/api/generate` (`ollama/`).

Each sends what litellm would send for the same call, answers with the fields
`model_workers.answer_fields` gives, and fails with litellm's error kind for each status
(tests/models/test_wire_*.py compare the two paths on loopback servers of each API). Every other
provider, and all of them under `ACCORD_MODEL_CLIENT=litellm`, goes through litellm.
"""

from __future__ import annotations

import importlib
from typing import Any

from .. import openai_wire
from ..openai_wire import NoChoices as NoChoices
from ..openai_wire import Pool as Pool
from ..openai_wire import client_choice as client_choice

# the model's prefix (litellm's provider) -> the module speaking its API
FAMILIES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "azure": "compat",
    "openrouter": "compat",
    "together_ai": "compat",
    "groq": "compat",
    "deepseek": "compat",
    "xai": "compat",
    "fireworks_ai": "compat",
    "perplexity": "compat",
    "ollama": "ollama",
    "ollama_chat": "ollama",
}


def family(litellm_model: str) -> str | None:
    """The module of a model's API family, or None for a model litellm serves."""
    provider, slash, name = litellm_model.partition("/")
    return FAMILIES.get(provider) if slash and name else None


def takes(litellm_model: str) -> bool:
    """Whether a model's calls take a lean client rather than litellm."""
    return family(litellm_model) is not None and client_choice() == "lean"


def _module(litellm_model: str) -> Any:
    name = family(litellm_model)
    if name == "openai":
        return openai_wire
    return importlib.import_module(f"{__name__}.{name}")


def missing_keys(litellm_model: str, api_base: str | None) -> list[str]:
    """The API-key variables litellm's `validate_environment` names as unset for the model."""
    found: list[str] = _module(litellm_model).missing_keys(litellm_model, api_base)
    return found


async def complete(kwargs: dict[str, Any], pool: Pool) -> dict[str, Any]:
    """One call of the keyword arguments litellm would have been given, on its family's
    client: the answer's fields, or a `WorkerCallError` with litellm's kind."""
    fields: dict[str, Any] = await _module(kwargs["model"]).complete(kwargs, pool)
    return fields
