"""Each lean API family answers as litellm does for the same calls, on a loopback server of
its API (tests/fakes.py): the same request sent (path, body, key header), the same text, tool
calls, usage and cost, the same error kinds and retry decisions for each status."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from accord.engine.errors import ModelError
from accord.engine.models import ModelCatalog, ModelClient
from accord.engine.spec import ConfigSpec
from tests.fakes import FakeOpenAI, Reply

PATHS = ("litellm", "lean")

# model -> (api_base under the fake's root, the headers that carry its key, extra settings)
FAMILIES: dict[str, tuple[str, tuple[str, ...], dict[str, Any]]] = {
    "anthropic/claude-sonnet-4-20250514": ("", ("x-api-key", "anthropic-version"), {}),
    "gemini/gemini-2.0-flash": ("", ("x-goog-api-key",), {}),
    "azure/gpt-4o": ("", ("api-key",), {"api_version": "2024-10-21"}),
    # an api-version before 2024-08: litellm asks a JSON schema as a forced tool
    "azure/gpt-4o-2024-05-13": ("", ("api-key",), {"api_version": "2024-02-01"}),
    "ollama_chat/llama3": ("", (), {}),
    "ollama/llama3": ("", (), {}),
    "openrouter/anthropic/claude-3.5-sonnet": ("/v1", ("authorization",), {}),
    "deepseek/deepseek-chat": ("/v1", ("authorization",), {}),
    "together_ai/meta-llama/Llama-3-8b-chat-hf": ("/v1", ("authorization",), {}),
    "xai/grok-2": ("/v1", ("authorization",), {}),
    "fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct": (
        "/v1",
        ("authorization",),
        {},
    ),
    "perplexity/sonar": ("/v1", ("authorization",), {}),
    "openai/gpt-4o-mini": ("/v1", ("authorization",), {}),
}
MODELS = sorted(FAMILIES)
RANDOM_IDS = ("gemini/", "ollama")  # litellm names their tool calls with a fresh uuid

TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "find", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}]  # fmt: skip
CONVERSATION = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "find x"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
     "function": {"name": "lookup", "arguments": '{"q": "x"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"found": 1}'},
    {"role": "assistant", "content": "found one"},
    {"role": "user", "content": [{"type": "text", "text": "and "}, {"type": "text", "text": "y?"}]},
]  # fmt: skip


def client_for(fake: FakeOpenAI, model: str, **settings: Any) -> ModelClient:
    suffix, _keys, extra = FAMILIES[model]
    root = fake.url.rsplit("/v1", 1)[0]
    entry = {
        "name": "fake",
        "model": model,
        "api_base": root + suffix,
        "api_key": "sk-secret-key-1",
        "max_retries": 0,
        "timeout": 3,
        **extra,
        **settings,
    }
    config = ConfigSpec.model_validate({"models": [entry]})
    return ModelClient(ModelCatalog(config), None, "off")


def outcome(
    fake: FakeOpenAI, model: str, reply: Reply, messages: list[dict[str, Any]], **call: Any
) -> tuple[Any, ...]:
    """What the engine sees of one call answered by `reply`, and what the server received."""
    fake.script(reply)
    settings = call.pop("settings", {})
    client = client_for(fake, model, **settings)
    before = len(fake.requests)

    async def go() -> Any:
        return await client.complete("fake", messages, task="t", **call)

    try:
        done = asyncio.run(go())
    except ModelError as exc:
        text = re.sub(r"127\.0\.0\.1:\d+", "HOST", exc.detail)
        return ("error", exc.kind, exc.permanent, text)
    finally:
        client.close()
    assert len(fake.requests) > before
    _suffix, key_headers, _extra = FAMILIES[model]
    sent = {name: fake.headers[-1].get(name) for name in key_headers}
    calls = [(c.name, c.arguments) if model.startswith(RANDOM_IDS) else c for c in done.tool_calls]
    return ("ok", done.text, calls, done.input_tokens, done.output_tokens, done.cost,
            fake.requests[-1], fake.paths[-1], sent)  # fmt: skip


def both_paths(
    monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI, model: str, reply: Reply,
    messages: list[dict[str, Any]] | None = None, **call: Any,
) -> dict[str, tuple[Any, ...]]:  # fmt: skip
    seen = {}
    for path in PATHS:
        monkeypatch.setenv("ACCORD_MODEL_CLIENT", path)
        chat = messages or [{"role": "system", "content": "be brief"},
                            {"role": "user", "content": "hi"}]  # fmt: skip
        seen[path] = outcome(fake, model, reply, chat, **dict(call))
    return seen


@pytest.mark.parametrize("model", MODELS)
def test_a_plain_answer_is_the_same(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, model: str
) -> None:
    seen = both_paths(monkeypatch, fake_llm, model, Reply(text="hello there"),
                      temperature=0.2, seed=7)  # fmt: skip
    assert seen["lean"] == seen["litellm"]
    assert seen["lean"][1] == "hello there"


@pytest.mark.parametrize("model", MODELS)
def test_tools_and_a_tool_conversation_are_sent_and_read_the_same(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, model: str
) -> None:
    reply = Reply(text="let me look", tool_calls=[("lookup", {"q": "y"})])
    seen = both_paths(
        monkeypatch, fake_llm, model, reply, CONVERSATION, tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "lookup"}},
        settings={"max_tokens": 300},
    )  # fmt: skip
    assert seen["lean"] == seen["litellm"]


IMAGE = "data:image/png;base64,iVBORw0KGgo="


@pytest.mark.parametrize("model", MODELS)
def test_an_image_a_system_part_stop_and_top_p_are_sent_the_same(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, model: str
) -> None:
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "sys part"}]},
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": IMAGE}}]},
    ]  # fmt: skip
    seen = both_paths(monkeypatch, fake_llm, model, Reply(text="a pixel"), messages,
                      settings={"stop": ["END"], "top_p": 0.5})  # fmt: skip
    assert seen["lean"] == seen["litellm"]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("kind", ["json_object", "json_schema"])
def test_json_mode_is_asked_the_same(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, model: str, kind: str
) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    form: dict[str, Any] = {"type": kind}
    if kind == "json_schema":
        form["json_schema"] = {"name": "answer", "schema": schema}
    seen = both_paths(monkeypatch, fake_llm, model, Reply(text='{"a": 1}'),
                      settings={"response_format": form})  # fmt: skip
    assert seen["lean"] == seen["litellm"]


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-20250514", "azure/gpt-4o-2024-05-13"])
def test_a_schema_asked_as_a_forced_tool_answers_with_the_tools_arguments_as_text(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, model: str
) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    form = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    reply = Reply(tool_calls=[("json_tool_call", {"a": 1})])
    seen = both_paths(monkeypatch, fake_llm, model, reply, settings={"response_format": form})
    assert seen["lean"] == seen["litellm"]
    assert seen["lean"][1:3] == ('{"a": 1}', [])


@pytest.mark.parametrize("model", MODELS)
def test_a_429_retry_after_is_obeyed_on_both_paths(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, model: str
) -> None:
    monkeypatch.delenv("ACCORD_RETRY_BACKOFF", raising=False)
    for path in PATHS:
        monkeypatch.setenv("ACCORD_MODEL_CLIENT", path)
        suffix, _keys, extra = FAMILIES[model]
        root = fake_llm.url.rsplit("/v1", 1)[0]
        entry = {"name": "fake", "model": model, "api_base": root + suffix, "api_key": "k",
                 "max_retries": 1, **extra}  # fmt: skip
        # the engine's own backoff would be 30 s: only the header's 0 lets this finish now
        client = ModelClient(
            ModelCatalog(ConfigSpec.model_validate({"models": [entry]})), None, "off",
            backoff_base=30.0,
        )  # fmt: skip
        fake_llm.script(Reply.error(429, "slow down", **{"Retry-After": "0"}), f"fine {path}")

        async def call(c: ModelClient = client) -> str:
            done = await c.complete("fake", [{"role": "user", "content": "hi"}], task="t")
            return done.text

        assert asyncio.run(asyncio.wait_for(call(), timeout=20)) == f"fine {path}"
        assert client.usage.total.retries == 1
        client.close()


STATUSES = [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("status", STATUSES)
def test_each_error_status_has_the_same_kind_words_and_retry_decision(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, model: str, status: int
) -> None:
    reply = Reply.error(status, f"scripted {status}: key sk-secret-key-1", **{"Retry-After": "0"})
    seen = both_paths(monkeypatch, fake_llm, model, reply)
    if seen["litellm"][0] == "ok":  # a 422 sent again without the parameters it names
        assert seen["lean"] == seen["litellm"]
        return
    # the same kind and retry decision; the words are the provider's own on the lean path,
    # where litellm wraps them (`AnthropicException - {"type": "error", ...}`)
    assert seen["lean"][:3] == seen["litellm"][:3]
    if seen["lean"][1] == "Timeout":  # said as the engine's own words, on both paths
        assert seen["lean"] == seen["litellm"]
        return
    assert f"scripted {status}: key [redacted]" in seen["lean"][3]
    assert "Exception" not in seen["lean"][3] and "sk-secret-key-1" not in seen["lean"][3]


PROBE = """
import sys
from accord.cli import main
try:
    main(["run", "w.workflow.yml", "--format", "json", "--cache", "off"])
except SystemExit as exc:
    print("EXIT", exc.code)
print("LITELLM", "litellm" in sys.modules)
"""


@pytest.mark.slow
@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-20250514", "gemini/gemini-2.0-flash",
                                   "azure/gpt-4o", "ollama_chat/llama3"])  # fmt: skip
def test_a_lean_family_runs_a_workflow_without_importing_litellm(
    tmp_path: Path, fake_llm: FakeOpenAI, model: str
) -> None:
    suffix, _keys, extra = FAMILIES[model]
    root = fake_llm.url.rsplit("/v1", 1)[0]
    settings = "".join(f"    {k}: {v}\n" for k, v in extra.items())
    (tmp_path / "config.yml").write_text(
        f"models:\n  - name: fake\n    model: {model}\n    api_base: {root + suffix}\n"
        f"    api_key: test-key\n{settings}defaults:\n  model: fake\n"
    )
    (tmp_path / "w.workflow.yml").write_text(
        "tasks:\n  - name: q\n    type: agent\n    prompt: question 1\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False, env={**os.environ, "ACCORD_MODEL_CLIENT": "lean"},
    )  # fmt: skip
    assert "EXIT 0" in done.stdout, done.stderr[-2000:]
    assert '"q": "echo: question 1"' in done.stdout
    assert "LITELLM False" in done.stdout
    assert "Unclosed" not in done.stderr


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-20250514"])
def test_a_proxy_from_the_environment_carries_the_calls_on_both_paths(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, model: str
) -> None:
    """HTTP_PROXY names the fake server: a model on a host that does not exist is reached
    through it (the request line carries the model's whole URL), on either path."""
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", fake_llm.url.rsplit("/v1", 1)[0])
    suffix = FAMILIES[model][0]
    entry = {"name": "fake", "model": model, "api_base": "http://model.invalid:4000" + suffix,
             "api_key": "k", "max_retries": 0, "timeout": 5}  # fmt: skip
    for path in PATHS:
        monkeypatch.setenv("ACCORD_MODEL_CLIENT", path)
        client = ModelClient(ModelCatalog(ConfigSpec.model_validate({"models": [entry]})),
                             None, "off")  # fmt: skip
        fake_llm.script(f"proxied {path}")

        async def call(c: ModelClient = client) -> str:
            done = await c.complete("fake", [{"role": "user", "content": "hi"}], task="t")
            return done.text

        assert asyncio.run(call()) == f"proxied {path}"
        assert fake_llm.paths[-1].startswith("http://model.invalid:4000/")
        client.close()


def test_an_ollama_image_by_address_is_refused_clearly_on_the_lean_path(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI
) -> None:
    """litellm downloads an image given by address before it sends it to Ollama; accord's own
    client takes `data:` URLs and says so, and nothing reaches the server."""
    monkeypatch.setenv("ACCORD_MODEL_CLIENT", "lean")
    messages = [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]}]  # fmt: skip
    seen = outcome(fake_llm, "ollama_chat/llama3", Reply(text="unused"), messages)
    assert seen[:3] == ("error", "BadRequestError", True)
    assert "data: URL" in seen[3] and "ACCORD_MODEL_CLIENT=litellm" in seen[3]
    assert fake_llm.requests == []
