"""Google AI Studio's generateContent (ai.google.dev/api/generate-content), as litellm speaks
it: `POST {base}/models/{model}:generateContent` with `x-goog-api-key`; system messages in
`system_instruction`, turns as `contents` of `parts` (the assistant's role is `model`, tool
calls `function_call` parts, their results `function_response` parts), sampling in
`generationConfig`, JSON mode as `response_mime_type` (and `response_json_schema`)."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

from .. import openai_wire
from ..model_workers import WorkerCallError
from ..openai_wire import NoChoices, Pool

_DEFAULT_BASE = "https://generativelanguage.googleapis.com/v1beta"
_KEY_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
# the kinds litellm gives each status of Gemini's API
KINDS = {400: "BadRequestError", 401: "AuthenticationError", 403: "BadRequestError",
         404: "NotFoundError", 408: "Timeout", 422: "BadRequestError",
         429: "RateLimitError", 500: "InternalServerError", 502: "APIConnectionError",
         503: "ServiceUnavailableError", 504: "Timeout"}  # fmt: skip
_CONFIG = {"temperature": "temperature", "max_tokens": "max_output_tokens", "top_p": "top_p",
           "presence_penalty": "presence_penalty",
           "frequency_penalty": "frequency_penalty"}  # fmt: skip


def missing_keys(litellm_model: str, api_base: str | None) -> list[str]:
    return [] if any(os.environ.get(n) for n in _KEY_VARS) else ["GOOGLE_API_KEY", "GEMINI_API_KEY"]


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            parts.append({"text": str(part.get("text") or "")})
        elif part.get("type") == "image_url":
            ref = part.get("image_url")
            url = str(ref.get("url") if isinstance(ref, dict) else ref or "")
            if url.startswith("data:") and ";base64," in url:
                media, data = url[5:].split(";base64,", 1)
                parts.append({"inline_data": {"mime_type": media, "data": data}})
            else:
                parts.append({"file_data": {"file_uri": url}})
    return parts


def _response(content: Any) -> dict[str, Any]:
    text = (
        content if isinstance(content, str) else "".join(p.get("text", "") for p in _parts(content))
    )
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"content": text}


def _contents(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system parts, contents), runs of one role merged."""
    system: list[dict[str, Any]] = []
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # a tool call's id -> its function's name
    for message in messages:
        role = message.get("role")
        if role == "system":
            system.extend(_parts(message.get("content")))
            continue
        if role == "assistant":
            role = "model"
            parts = _parts(message.get("content"))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                names[str(call.get("id"))] = str(function.get("name") or "")
                parts.append({"function_call": {"name": function.get("name"),
                              "args": json.loads(function.get("arguments") or "{}")}})  # fmt: skip
        elif role == "tool":
            role = "user"
            name = message.get("name") or names.get(str(message.get("tool_call_id")), "")
            answer = _response(message.get("content"))
            parts = [{"function_response": {"name": name, "response": answer}}]
        else:
            role = "user"
            parts = _parts(message.get("content"))
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return system, contents


def _tool_config(choice: Any) -> dict[str, Any] | None:
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        return {"functionCallingConfig": {"mode": "ANY", "allowed_function_names": [name]}}
    mode = {"auto": "AUTO", "required": "ANY", "none": "NONE"}.get(str(choice))
    return {"functionCallingConfig": {"mode": mode}} if mode else None


def request(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The generateContent body litellm sends for these keyword arguments."""
    system, contents = _contents(kwargs["messages"])
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["system_instruction"] = {"parts": system}
    tools = kwargs.get("tools")
    if tools:
        declarations = []
        for tool in tools:
            function = tool.get("function") or {}
            declaration = {"name": function.get("name")}
            if function.get("description"):
                declaration["description"] = function["description"]
            if function.get("parameters"):
                declaration["parameters"] = function["parameters"]
            declarations.append(declaration)
        body["tools"] = [{"function_declarations": declarations}]
    if kwargs.get("tool_choice"):
        config = _tool_config(kwargs["tool_choice"])
        if config is not None:
            body["toolConfig"] = config
    generation = {_CONFIG[k]: kwargs[k] for k in _CONFIG if kwargs.get(k) is not None}
    stop = kwargs.get("stop")
    if stop:
        generation["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    form = kwargs.get("response_format")
    if isinstance(form, dict) and form.get("type") in ("json_object", "json_schema"):
        generation["response_mime_type"] = "application/json"
        schema = (form.get("json_schema") or {}).get("schema")
        if form["type"] == "json_schema" and schema is not None:
            generation["response_json_schema"] = schema
    if generation:
        body["generationConfig"] = generation
    return body


async def complete(kwargs: dict[str, Any], pool: Pool) -> dict[str, Any]:
    name = kwargs["model"].split("/", 1)[1]
    body = request(kwargs)
    base = str(kwargs.get("api_base") or os.environ.get("GEMINI_API_BASE") or _DEFAULT_BASE)
    url = f"{base.rstrip('/')}/models/{name}:generateContent"
    headers = {"content-type": "application/json"}
    key = kwargs.get("api_key") or next(
        (os.environ[n] for n in _KEY_VARS if os.environ.get(n)), None
    )
    if key:
        headers["x-goog-api-key"] = key
    headers.update({str(k): str(v) for k, v in (kwargs.get("extra_headers") or {}).items()})
    response = await openai_wire._post(pool, url, body, headers, kwargs.get("timeout"))
    if response.status >= 400:
        raise openai_wire._status_error(response, KINDS, "BadRequestError")
    return _fields(response.content, name)


def _fields(content: bytes, name: str) -> dict[str, Any]:
    try:
        doc = json.loads(content)
    except ValueError as exc:
        raise WorkerCallError("InternalServerError", str(exc), None, None) from None
    candidates = doc.get("candidates") if isinstance(doc, dict) else None
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        raise NoChoices
    parts = (candidates[0].get("content") or {}).get("parts") or []
    text = ""
    calls = []
    for part in parts:
        if not isinstance(part, dict) or part.get("thought"):
            continue
        if "text" in part:
            text += str(part["text"] or "")
        call = part.get("functionCall") or part.get("function_call")
        if isinstance(call, dict):
            arguments = json.dumps(call.get("args") or {})
            calls.append((f"call_{uuid.uuid4().hex[:28]}", str(call.get("name") or ""), arguments))
    found = doc.get("usageMetadata")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    input_tokens = int(usage.get("promptTokenCount") or 0)
    output_tokens = int(usage.get("candidatesTokenCount") or 0) + int(
        usage.get("thoughtsTokenCount") or 0
    )
    cached = int(usage.get("cachedContentTokenCount") or 0)
    return {
        "text": text,
        "tool_calls": calls,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost": openai_wire.price((f"gemini/{name}",), input_tokens, output_tokens, cached),
    }
