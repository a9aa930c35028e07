"""Model names: accord's form, Oxy's form, litellm strings, `local`, and their errors."""

from __future__ import annotations

import pytest

from accord.engine.errors import ConfigError
from accord.engine.models import LOCAL_LITELLM, ModelCatalog
from accord.engine.spec import ConfigSpec, ModelSpec


def catalog(*models: ModelSpec, default: str | None = None) -> ModelCatalog:
    return ModelCatalog(ConfigSpec(models=list(models), defaults={"model": default}))


def test_oxy_form_maps_vendor_to_litellm_provider() -> None:
    cat = catalog(
        ModelSpec(
            name="claude",
            vendor="anthropic",
            model_ref="claude-sonnet-4-6",
            key_var="ANTHROPIC_API_KEY",
        ),
        ModelSpec(name="gem", vendor="google", model_ref="gemini-1.5-pro"),
        ModelSpec(
            name="llama",
            vendor="ollama",
            model_ref="llama3.2:latest",
            api_url="http://localhost:11434/v1",
            api_key="secret",
        ),
    )
    assert cat.resolve("claude").litellm_model == "anthropic/claude-sonnet-4-6"
    assert cat.resolve("claude").key_var == "ANTHROPIC_API_KEY"
    assert cat.resolve("gem").litellm_model == "gemini/gemini-1.5-pro"
    llama = cat.resolve("llama")
    assert llama.litellm_model == "openai/llama3.2:latest"
    assert llama.api_base == "http://localhost:11434/v1"


def test_litellm_strings_pass_through_and_local_is_default() -> None:
    cat = catalog()
    assert cat.resolve("openai/gpt-4o-mini").litellm_model == "openai/gpt-4o-mini"
    assert cat.resolve(None).litellm_model == LOCAL_LITELLM
    assert catalog(default="openai/gpt-4o").resolve(None).litellm_model == "openai/gpt-4o"


def test_unknown_name_suggests_and_explains() -> None:
    cat = catalog(ModelSpec(name="openai-4o-mini", model="openai/gpt-4o-mini"))
    with pytest.raises(ConfigError) as err:
        cat.resolve("openai-4o-mnii")
    assert "did you mean 'openai-4o-mini'" in err.value.message
    assert "provider" in err.value.message


def test_model_entry_needs_a_model() -> None:
    with pytest.raises(ValueError, match="model_ref"):
        ModelSpec(name="x")
