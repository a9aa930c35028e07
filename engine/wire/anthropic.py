"""Anthropic's Messages API (docs.anthropic.com/en/api/messages), as litellm speaks it:
`POST {base}/v1/messages` with `x-api-key` and `anthropic-version: 2023-06-01`; system
messages in `system`, runs of one role merged, tool calls as `tool_use` blocks and their
results as `tool_result` blocks in a user turn, `max_tokens` always sent (the model's maximum
from litellm's table, else 4096), a JSON schema asked for as a forced `json_tool_call` whose
input is the answer's text."""

from __future__ import annotations

import json
import os
from typing import Any

from .. import openai_wire
from ..model_workers import WorkerCallError
from ..openai_wire import NoChoices, Pool

_DEFAULT_BASE = "https://api.anthropic.com"
VERSION = "2023-06-01"
_DEFAULT_MAX_TOKENS = 4096
_JSON_TOOL = "json_tool_call"
# the kinds litellm gives each status of Anthropic's API
KINDS = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
         404: "NotFoundError", 408: "Timeout", 413: "BadRequestError",
         422: "BadRequestError", 429: "RateLimitError", 500: "InternalServerError",
         502: "BadGatewayError", 503: "ServiceUnavailableError", 504: "Timeout",
         529: "InternalServerError"}  # fmt: skip


def missing_keys(litellm_model: str, api_base: str | None) -> list[str]:
    return [] if os.environ.get("ANTHROPIC_API_KEY") else ["ANTHROPIC_API_KEY"]


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as Messages content blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": str(part.get("text") or "")})
        elif part.get("type") == "image_url":
            blocks.append(_image(part.get("image_url")))
    return blocks


def _image(ref: Any) -> dict[str, Any]:
    url = str(ref.get("url") if isinstance(ref, dict) else ref or "")
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _turns(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, messages): user and tool turns are the user's, runs merged."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            system.extend(_blocks(message.get("content")))
            continue
        if role == "tool":
            result = message.get("content")
            blocks: list[dict[str, Any]] = [{
                "type": "tool_result", "tool_use_id": message.get("tool_call_id"),
                "content": result if isinstance(result, str) else _blocks(result),
            }]  # fmt: skip
            role = "user"
        elif role == "assistant":
            blocks = _blocks(message.get("content"))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                arguments = function.get("arguments") or "{}"
                blocks.append({"type": "tool_use", "id": call.get("id"),
                               "name": function.get("name"),
                               "input": json.loads(arguments)})  # fmt: skip
        else:
            blocks = _blocks(message.get("content"))
            role = "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return system, turns


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function") or {}
    schema = function.get("parameters") or {"type": "object", "properties": {}}
    out = {"name": function.get("name"), "type": "custom", "input_schema": schema}
    if function.get("description"):
        out["description"] = function["description"]
    return out


def _tool_choice(choice: Any) -> dict[str, Any] | None:
    if isinstance(choice, dict):
        return {"type": "tool", "name": (choice.get("function") or {}).get("name")}
    return {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}.get(
        str(choice)
    )


def _max_tokens(name: str) -> int:
    entry = openai_wire.price_entry((name, f"anthropic/{name}"))
    found = (entry or {}).get("max_output_tokens") or (entry or {}).get("max_tokens")
    return int(found) if found else _DEFAULT_MAX_TOKENS


def request(kwargs: dict[str, Any], name: str) -> dict[str, Any]:
    """The Messages body litellm sends for these keyword arguments."""
    system, turns = _turns(kwargs["messages"])
    body: dict[str, Any] = {"model": name, "messages": turns}
    if system:
        body["system"] = system
    for key in ("temperature", "top_p"):
        if kwargs.get(key) is not None:
            body[key] = kwargs[key]
    stop = kwargs.get("stop")
    if stop:
        body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    body["max_tokens"] = kwargs.get("max_tokens") or _max_tokens(name)
    tools = [_tool(t) for t in kwargs.get("tools") or []]
    choice = _tool_choice(kwargs["tool_choice"]) if kwargs.get("tool_choice") else None
    form = kwargs.get("response_format")
    if isinstance(form, dict) and form.get("type") == "json_schema":
        schema = (form.get("json_schema") or {}).get("schema")
        if schema is not None:
            tools.append({"name": _JSON_TOOL, "input_schema": schema})
            choice = {"name": _JSON_TOOL, "type": "tool"}
    if not tools and any(
        block.get("type") in ("tool_use", "tool_result")
        for turn in turns
        for block in turn["content"]
    ):  # Anthropic refuses tool blocks without tools: litellm declares a stand-in
        tools = [{"name": "dummy_tool", "type": "custom",
                  "description": "This is a dummy tool call",
                  "input_schema": {"type": "object", "properties": {}}}]  # fmt: skip
    if tools:
        body["tools"] = tools
    if choice is not None:
        body["tool_choice"] = choice
    return body


async def complete(kwargs: dict[str, Any], pool: Pool) -> dict[str, Any]:
    name = kwargs["model"].split("/", 1)[1]
    body = request(kwargs, name)
    base = (
        kwargs.get("api_base")
        or os.environ.get("ANTHROPIC_API_BASE")
        or os.environ.get("ANTHROPIC_BASE_URL")
        or _DEFAULT_BASE
    )
    url = base if base.endswith("/v1/messages") else base.rstrip("/") + "/v1/messages"
    headers = {"content-type": "application/json", "anthropic-version": VERSION}
    key = kwargs.get("api_key") or os.environ.get("ANTHROPIC_API_KEY")
    if key:
        headers["x-api-key"] = key
    headers.update({str(k): str(v) for k, v in (kwargs.get("extra_headers") or {}).items()})
    response = await openai_wire._post(pool, url, body, headers, kwargs.get("timeout"))
    if response.status >= 400:
        raise openai_wire._status_error(response, KINDS, "BadRequestError")
    return _fields(response.content, name, body.get("tool_choice"))


def _fields(content: bytes, name: str, choice: Any) -> dict[str, Any]:
    try:
        doc = json.loads(content)
    except ValueError as exc:
        raise WorkerCallError("InternalServerError", str(exc), None, None) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("content"), list):
        raise NoChoices
    text = ""
    calls = []
    json_tool = isinstance(choice, dict) and choice.get("name") == _JSON_TOOL
    for block in doc["content"]:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            text += str(block.get("text") or "")
        elif block.get("type") == "tool_use":
            arguments = json.dumps(block.get("input") or {})
            if json_tool and block.get("name") == _JSON_TOOL:
                text = arguments  # the schema's answer is the text, as litellm gives it
                continue
            calls.append((str(block.get("id") or ""), str(block.get("name") or ""), arguments))
    found = doc.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    input_tokens = int(usage.get("input_tokens") or 0) + read + written
    output_tokens = int(usage.get("output_tokens") or 0)
    return {
        "text": text,
        "tool_calls": calls,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost": openai_wire.price(
            (name, f"anthropic/{name}"), input_tokens, output_tokens, read, written
        ),
    }
