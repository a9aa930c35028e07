"""Model names: config.yml entries (accord's form and Oxy's), `local`, litellm strings."""

from __future__ import annotations

import json
from dataclasses import dataclass

from .errors import ConfigError, did_you_mean
from .masking import remember
from .spec import ConfigSpec, ModelSpec

LOCAL_MODEL = "local"
LOCAL_LITELLM = "accord-local/smollm2-135m-instruct"
_VENDOR_PREFIX = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gemini",
    "gemini": "gemini",
    "ollama": "ollama_chat",
    "azure": "azure",
    "mistral": "mistral",
    "groq": "groq",
    "deepseek": "deepseek",
}


@dataclass(frozen=True)
class ModelConfig:
    """A resolved model: the litellm string and the call parameters."""

    name: str
    litellm_model: str
    api_base: str | None = None
    api_base_var: str | None = None
    api_version: str | None = None
    key_var: str | None = None
    api_key: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    rpm: int | None = None
    tpm: int | None = None
    timeout: float = 120.0
    max_concurrency: int | None = None
    max_retries: int = 6
    rate_window: float = 60.0
    tools: bool = True
    # further request fields (response_format, top_p, stop, ...): name and value as JSON text
    body: tuple[tuple[str, str], ...] = ()


# the model entry's fields sent in the request body as they are
BODY_FIELDS = ("response_format", "top_p", "presence_penalty", "frequency_penalty", "stop")


def _from_spec(spec: ModelSpec) -> ModelConfig:
    remember(spec.api_key)  # a key written in config.yml is masked wherever it could show
    if spec.model is not None:
        model = spec.model
    else:
        assert spec.model_ref is not None
        vendor = (spec.vendor or "openai").lower()
        prefix = _VENDOR_PREFIX.get(vendor, vendor)
        if spec.api_url and vendor == "ollama":
            prefix = "openai"  # Oxy points ollama at its OpenAI-compatible /v1 endpoint
        model = f"{prefix}/{spec.model_ref}"
    headers: list[tuple[str, str]] = []
    for key, value in (spec.headers or {}).items():
        if isinstance(value, dict) and "env_var" in value:
            headers.append((key, f"env:{value['env_var']}"))
        else:
            headers.append((key, str(value)))
    return ModelConfig(
        name=spec.name,
        litellm_model=model,
        api_base=spec.api_base or spec.api_url,
        api_base_var=spec.api_base_var,
        api_version=spec.api_version,
        key_var=spec.key_var,
        api_key=spec.api_key,
        headers=tuple(headers),
        temperature=spec.temperature,
        seed=spec.seed,
        max_tokens=spec.max_tokens,
        rpm=spec.rpm,
        tpm=spec.tpm,
        timeout=spec.timeout or 120.0,
        max_concurrency=spec.max_concurrency,
        max_retries=spec.max_retries,
        rate_window=spec.rate_window,
        tools=spec.tools,
        body=tuple(
            (name, json.dumps(getattr(spec, name), sort_keys=True))
            for name in BODY_FIELDS
            if getattr(spec, name) is not None
        ),
    )


class ModelCatalog:
    """Model names from config.yml, plus `local` and plain litellm strings."""

    def __init__(self, config: ConfigSpec) -> None:
        self.specs = {m.name: m for m in config.models}
        self.default = config.defaults.model or LOCAL_MODEL
        # each entry's settings, built once: every call resolves its model (1,000 calls
        # rebuilt the same frozen ModelConfig 1,000 times)
        self._resolved: dict[str, ModelConfig] = {}

    def problem(self, name: str) -> str | None:
        """None when `name` resolves, else a message saying what to do."""
        if name in self.specs or name == LOCAL_MODEL or "/" in name:
            return None
        hint = did_you_mean(name, [*self.specs, LOCAL_MODEL], before="", after=" ")
        listing = ", ".join(sorted(self.specs)) or "none"
        return (
            f"unknown model '{name}': {hint}(models in config.yml: {listing}); a litellm "
            "model string needs its provider, e.g. openai/gpt-4o-mini"
        )

    def resolve(self, name: str | None) -> ModelConfig:
        name = name or self.default
        problem = self.problem(name)
        if problem is not None:
            raise ConfigError(problem)
        if name in self.specs:
            found = self._resolved.get(name)
            if found is None:
                found = self._resolved[name] = _from_spec(self.specs[name])
            return found
        if name == LOCAL_MODEL:
            return ModelConfig(
                name=LOCAL_MODEL,
                litellm_model=LOCAL_LITELLM,
                max_concurrency=1,
                max_tokens=512,
                timeout=600.0,
                # samples differ as a real model's do (seed 0 + sample: reproducible)
                temperature=0.7,
                seed=0,
                tools=True,  # forced calls only (judges), by constrained decoding
            )
        return ModelConfig(name=name, litellm_model=name)
