"""Ollama's native API (github.com/ollama/ollama, docs/api.md), as litellm speaks it:
`ollama_chat/` models `POST /api/chat` with the messages, `ollama/` models `POST /api/generate`
with them written into one prompt (litellm's `ollama_pt` template; tools asked for in it as
JSON, the answer read back as a call). Options carry the sampling parameters; streaming off."""

from __future__ import annotations

import json
import os
import re
import uuid
from typing import Any

from .. import openai_wire
from ..model_workers import WorkerCallError
from ..openai_wire import NoChoices, Pool

_DEFAULT_BASE = "http://localhost:11434"
_OPTIONS = {"temperature": "temperature", "seed": "seed", "max_tokens": "num_predict",
            "top_p": "top_p", "frequency_penalty": "repeat_penalty", "stop": "stop"}  # fmt: skip
_REASONING = re.compile(
    r"<(?:think|thinking|budget:thinking)>(.*?)</(?:think|thinking|budget:thinking)>(.*)", re.DOTALL
)
_FUNCTION_PROMPT = (
    'Produce JSON OUTPUT ONLY! Adhere to this format {"name": "function_name", "arguments":'
    '{"argument_name": "argument_value"}} The following functions are available to you:'
)
# the kinds litellm gives each status of Ollama's server (other 4xx: BadRequestError)
KINDS = {401: "AuthenticationError", 403: "PermissionDeniedError", 404: "NotFoundError",
         408: "Timeout", 429: "RateLimitError", 500: "InternalServerError",
         502: "BadGatewayError", 503: "ServiceUnavailableError", 504: "Timeout"}  # fmt: skip


def missing_keys(litellm_model: str, api_base: str | None) -> list[str]:
    return []  # a local server: litellm names only OLLAMA_API_BASE, which has a default


def _text(content: Any) -> str:
    """litellm's `convert_content_list_to_str`: a string, or the text parts joined."""
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content
                       if isinstance(p, dict) and p.get("type") == "text")  # fmt: skip
    return content if isinstance(content, str) else ""


def _images(content: Any) -> list[str]:
    """A message's images as Ollama takes them: the base64 data of each `data:` URL."""
    found = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict) or part.get("type") != "image_url":
            continue
        ref = part.get("image_url")
        url = str(ref.get("url") if isinstance(ref, dict) else ref or "")
        if not (url.startswith("data:") and ";base64," in url):
            raise WorkerCallError(
                "BadRequestError",
                "an image for Ollama must be a data: URL on accord's own client (litellm "
                "fetches others: ACCORD_MODEL_CLIENT=litellm)",
                400,
                None,
            )
        found.append(url.split(";base64,", 1)[1])
    return found


def _format(kwargs: dict[str, Any]) -> Any:
    form = kwargs.get("response_format")
    if not isinstance(form, dict):
        return None
    if form.get("type") == "json_object":
        return "json"
    if form.get("type") == "json_schema":
        schema = (form.get("json_schema") or {}).get("schema")
        return schema if schema is not None else None
    return None


def _base(kwargs: dict[str, Any]) -> str:
    return str(kwargs.get("api_base") or os.environ.get("OLLAMA_API_BASE") or _DEFAULT_BASE)


def _headers(kwargs: dict[str, Any]) -> dict[str, str]:
    headers = {"content-type": "application/json"}
    if kwargs.get("api_key"):
        headers["authorization"] = f"Bearer {kwargs['api_key']}"
    headers.update({str(k): str(v) for k, v in (kwargs.get("extra_headers") or {}).items()})
    return headers


async def complete(kwargs: dict[str, Any], pool: Pool) -> dict[str, Any]:
    provider, name = kwargs["model"].split("/", 1)
    options = {_OPTIONS[k]: kwargs[k] for k in _OPTIONS if kwargs.get(k) is not None}
    body: dict[str, Any] = {"model": name, "options": options, "stream": False}
    chat = provider == "ollama_chat"
    tools = kwargs.get("tools")
    if chat:
        body["messages"] = [_message(m) for m in kwargs["messages"]]
        if tools:
            body["tools"] = tools
    else:
        messages = kwargs["messages"]
        if tools:  # litellm's `function_call_prompt`: the tools asked for in the system text
            messages = _with_function_prompt(messages, tools)
        body["prompt"] = _prompt(messages)
        body["images"] = [
            image
            for m in messages
            if m.get("role") in ("user", "tool", "function")
            for image in _images(m.get("content"))
        ]
    form = "json" if tools and not chat else _format(kwargs)
    if form is not None:
        body["format"] = form
    url = _base(kwargs).rstrip("/") + ("/api/chat" if chat else "/api/generate")
    response = await openai_wire._post(pool, url, body, _headers(kwargs), kwargs.get("timeout"))
    if response.status >= 400:
        raise openai_wire._status_error(response, KINDS, "BadRequestError")
    try:
        doc = json.loads(response.content)
    except ValueError as exc:
        raise WorkerCallError("InternalServerError", str(exc), None, None) from None
    if not isinstance(doc, dict):
        raise NoChoices
    if chat:
        text, calls = _chat_answer(doc)
    else:
        text, calls = _generate_answer(doc, body.get("format") == "json")
    input_tokens = int(doc.get("prompt_eval_count") or 0)
    output_tokens = int(doc.get("eval_count") or 0)
    return {
        "text": text,
        "tool_calls": calls,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost": openai_wire.price((f"{provider}/{name}",), input_tokens, output_tokens),
    }


def _message(m: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.get("role"), "content": _text(m.get("content")),
                           "images": _images(m.get("content"))}  # fmt: skip
    calls = m.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [
            {"function": {"name": c["function"].get("name") or "",
                          "arguments": json.loads(c["function"].get("arguments") or "{}")}}
            for c in calls if c.get("type", "function") == "function"
        ]  # fmt: skip
    if m.get("tool_call_id") is not None:
        out["tool_call_id"] = m["tool_call_id"]
    return out


def _reasoned(text: str) -> str:
    match = _REASONING.match(text) if text else None
    return match.group(2) if match else text


def _chat_answer(doc: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    message = doc.get("message")
    if not isinstance(message, dict):
        raise NoChoices
    content = message.get("content")
    text = _reasoned(content) if isinstance(content, str) and "thinking" not in message else ""
    if "thinking" in message and isinstance(content, str):
        text = content
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append((str(call.get("id") or uuid.uuid4()), function.get("name") or "", arguments))
    return text or "", calls


def _generate_answer(
    doc: dict[str, Any], json_mode: bool
) -> tuple[str, list[tuple[str, str, str]]]:
    text = doc.get("response") or ""
    if not isinstance(text, str):
        return str(text), []
    if json_mode and text.strip():
        try:
            parsed = json.loads(text)
        except ValueError:
            return _reasoned(text), []
        if isinstance(parsed, dict) and "name" in parsed and "arguments" in parsed:
            call = (f"call_{uuid.uuid4()}", str(parsed["name"]), json.dumps(parsed["arguments"]))
            return "", [call]
        return json.dumps(parsed), []
    return _reasoned(text) if not json_mode else text, []


def _with_function_prompt(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    prompt = _FUNCTION_PROMPT + "".join(f"\n{tool}\n" for tool in tools)
    out = []
    added = False
    for m in messages:
        if "system" in str(m.get("role")):
            m = dict(m)
            if isinstance(m.get("content"), str):
                m["content"] += f" {prompt}"
            else:
                m["content"] = [*(m.get("content") or []), {"type": "text", "text": f" {prompt}"}]
            added = True
        out.append(m)
    if not added:
        out.append({"role": "system", "content": prompt})
    return out


def _prompt(messages: list[dict[str, Any]]) -> str:
    """litellm's `ollama_pt`: user (and tool) turns, system turns and assistant turns, each
    run of one role merged under its `### Role:` heading."""
    prompt = ""
    i = 0
    while i < len(messages):
        start = i
        user = ""
        while i < len(messages) and messages[i].get("role") in ("user", "tool", "function"):
            content = messages[i].get("content")
            if content:
                user += _text(content) if isinstance(content, list) else str(content)
            i += 1
        if user:
            prompt += f"### User:\n{user}\n\n"
        system = ""
        while i < len(messages) and messages[i].get("role") == "system":
            system += _text(messages[i].get("content"))
            i += 1
        if system:
            prompt += f"### System:\n{system}\n\n"
        assistant = ""
        while i < len(messages) and messages[i].get("role") == "assistant":
            assistant += _text(messages[i].get("content"))
            calls = [
                {"id": c["id"], "type": "function",
                 "function": {"name": c["function"]["name"],
                              "arguments": json.loads(c["function"]["arguments"])}}
                for c in messages[i].get("tool_calls") or []
            ]  # fmt: skip
            if calls:
                assistant += f"Tool Calls: {json.dumps(calls, indent=2)}"
            i += 1
        if assistant:
            prompt += f"### Assistant:\n{assistant}\n\n"
        if i == start:
            raise WorkerCallError(
                "BadRequestError", f"Invalid Message passed in {messages[i]}", 400, None
            )
    return prompt
