"""An `openai/` model answers the same on the lean wire client as through litellm: the same
error kinds, words and retry decisions, the same usage, cost and tool calls, the same cache
keys; and the lean path never imports litellm."""

from __future__ import annotations

import asyncio
import json
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
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply
from tests.faults.helpers import accord, assert_no_traceback

PATHS = ("litellm", "lean")


def client_for(fake: FakeOpenAI, model: str = "openai/gpt-4o-mini") -> ModelClient:
    config = ConfigSpec.model_validate(
        {"models": [{"name": "fake", "model": model, "api_base": fake.url,
                     "api_key": "sk-secret-key-1", "max_retries": 0, "timeout": 3}]}
    )  # fmt: skip
    return ModelClient(ModelCatalog(config), None, "off")


def outcome(fake: FakeOpenAI, reply: Reply, **call: Any) -> tuple[Any, ...]:
    """What the engine sees of one call answered by `reply`, with the server's port hidden."""
    fake.script(reply)
    client = client_for(fake, call.pop("model", "openai/gpt-4o-mini"))

    async def go() -> Any:
        return await client.complete("fake", [{"role": "user", "content": "hi"}], task="t", **call)

    try:
        done = asyncio.run(go())
    except ModelError as exc:
        text = re.sub(r"127\.0\.0\.1:\d+", "HOST", exc.detail)
        return ("error", exc.kind, exc.permanent, text)
    body = {k: v for k, v in fake.requests[-1].items()}
    return ("ok", done.text, done.tool_calls, done.input_tokens, done.output_tokens,
            done.cost, body)  # fmt: skip


def both_paths(
    monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI, reply: Reply, **call: Any
) -> dict[str, tuple[Any, ...]]:
    seen = {}
    for path in PATHS:
        monkeypatch.setenv("ACCORD_MODEL_CLIENT", path)
        seen[path] = outcome(fake, reply, **dict(call))
    return seen


STATUSES = [400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504, 529]


@pytest.mark.parametrize("status", STATUSES)
def test_each_error_status_has_the_same_kind_words_and_retry_decision(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, status: int
) -> None:
    reply = Reply.error(status, f"scripted {status}: key sk-secret-key-1", **{"Retry-After": "0"})
    seen = both_paths(monkeypatch, fake_llm, reply)
    assert seen["lean"] == seen["litellm"]
    if status != 422:  # a 422 is sent once more (the next test), answered by the echo
        assert seen["lean"][0] == "error" and "sk-secret-key-1" not in seen["lean"][3]


def test_a_422_naming_a_parameter_is_sent_again_without_it_on_both_paths(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI
) -> None:
    detail = json.dumps({"detail": [{"loc": ["body", "seed"], "msg": "unsupported"}]})
    seen = both_paths(monkeypatch, fake_llm, Reply.error(422, detail), seed=5)
    assert seen["lean"] == seen["litellm"]
    assert seen["lean"][0] == "ok" and "seed" not in seen["lean"][-1]


BROKEN = {
    "dropped": Reply(drop=True),
    "cut_json": Reply(raw=b'{"id": "chatcmpl-1", "choices": [{"message": {"content": "tru'),
    "html": Reply(raw=b"<html><body>502 Bad Gateway</body></html>"),
    "no_choices": Reply(raw=b'{"choices": []}'),
    "error_in_200": Reply(raw=b'{"error": {"message": "model overloaded"}}'),
    "a_list": Reply(raw=b"[1, 2]"),
    "html_500": Reply(status=500, raw=b"<html>Internal Server Error</html>"),
    "empty_text": Reply(text=""),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_answers_fail_the_same_way(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, case: str
) -> None:
    seen = both_paths(monkeypatch, fake_llm, BROKEN[case])
    assert seen["lean"] == seen["litellm"]


def test_text_tool_calls_usage_cost_and_request_body_are_the_same(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI
) -> None:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}}}}]  # fmt: skip
    tool_reply = Reply(text="let me look", tool_calls=[("lookup", {"q": "x"})])
    seen = both_paths(
        monkeypatch, fake_llm, tool_reply, tools=tools, temperature=0.2, seed=7,
        tool_choice={"type": "function", "function": {"name": "lookup"}},
    )  # fmt: skip
    assert seen["lean"] == seen["litellm"]
    _ok, text, calls, tokens_in, tokens_out, cost, body = seen["lean"]
    assert text == "let me look" and calls[0].name == "lookup"
    # litellm's price table for gpt-4o-mini: $0.15 / $0.60 per million tokens
    assert cost == pytest.approx(tokens_in * 0.15e-6 + tokens_out * 0.6e-6)
    assert body["model"] == "gpt-4o-mini" and body["seed"] == 7
    # a model the price table does not list has no cost on either path
    unknown = both_paths(monkeypatch, fake_llm, Reply(text="hi"), model="openai/my-vllm-model")
    assert unknown["lean"] == unknown["litellm"] and unknown["lean"][5] is None


def test_a_429_retry_after_is_obeyed_on_both_paths(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI
) -> None:
    config = ConfigSpec.model_validate(
        {"models": [{"name": "fake", "model": "openai/m", "api_base": fake_llm.url,
                     "api_key": "k", "max_retries": 1}]}
    )  # fmt: skip
    for path in PATHS:
        monkeypatch.setenv("ACCORD_MODEL_CLIENT", path)
        monkeypatch.delenv("ACCORD_RETRY_BACKOFF", raising=False)
        # the engine's own backoff would be 30 s: only the header's 0 lets this finish now
        client = ModelClient(ModelCatalog(config), None, "off", backoff_base=30.0)
        fake_llm.script(Reply.error(429, "slow down", **{"Retry-After": "0"}), f"fine {path}")

        async def call(c: ModelClient = client) -> str:
            done = await c.complete("fake", [{"role": "user", "content": "hi"}], task="t")
            return done.text

        assert asyncio.run(asyncio.wait_for(call(), timeout=20)) == f"fine {path}"
        assert client.usage.total.retries == 1


WORKFLOW = "tasks:\n" + "".join(
    f"  - name: q{i}\n    type: agent\n    prompt: question {i}\n" for i in range(3)
)


@pytest.mark.slow
def test_a_cache_recorded_through_litellm_replays_on_the_lean_path(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    (tmp_path / "config.yml").write_text(fake_model_config(fake_llm) + "defaults:\n  model: fake\n")
    path = tmp_path / "w.workflow.yml"
    path.write_text(WORKFLOW)
    first = accord("run", str(path), "--format", "json", cwd=tmp_path,
                   env={"ACCORD_MODEL_CLIENT": "litellm"})  # fmt: skip
    assert first.code == 0, first.stderr[-2000:]
    fake_llm.close()  # nothing answers now: replay must come from the cache alone
    again = accord("run", str(path), "--format", "json", "--cache", "replay", cwd=tmp_path,
                   env={"ACCORD_MODEL_CLIENT": "lean"})  # fmt: skip
    assert again.code == 0, again.stderr[-2000:]
    assert json.loads(again.stdout)["outputs"] == json.loads(first.stdout)["outputs"]
    assert json.loads(again.stdout)["summary"]["usage"]["cached"] == 3
    assert_no_traceback(again)


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
@pytest.mark.parametrize("path", PATHS)
def test_only_the_litellm_path_imports_litellm(
    tmp_path: Path, fake_llm: FakeOpenAI, path: str
) -> None:
    (tmp_path / "config.yml").write_text(fake_model_config(fake_llm) + "defaults:\n  model: fake\n")
    (tmp_path / "w.workflow.yml").write_text(WORKFLOW)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False, env={**os.environ, "ACCORD_MODEL_CLIENT": path},
    )  # fmt: skip
    assert "EXIT 0" in done.stdout, done.stderr[-2000:]
    assert '"q2": "echo: question 2"' in done.stdout
    assert f"LITELLM {path == 'litellm'}" in done.stdout
    assert "Unclosed" not in done.stderr  # the connection pool is closed with the run


def test_an_unknown_client_choice_is_refused_clearly(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    (tmp_path / "config.yml").write_text(fake_model_config(fake_llm) + "defaults:\n  model: fake\n")
    path = tmp_path / "w.workflow.yml"
    path.write_text(WORKFLOW)
    done = accord("run", str(path), cwd=tmp_path, env={"ACCORD_MODEL_CLIENT": "fast"})
    assert done.code == 2, done.stderr[-2000:]
    assert "ACCORD_MODEL_CLIENT='fast'" in done.stderr and "'lean'" in done.stderr
    assert_no_traceback(done)
    assert fake_llm.requests == []


def test_a_client_closing_leaves_another_clients_call_in_flight(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI
) -> None:
    """Two runs on one event loop (the suites of a folder run together) each have their own
    connections: the first to finish used to close the loop's one pool under the other's
    request still being answered ("Connection error", or a timeout said after 3 s)."""
    monkeypatch.setenv("ACCORD_MODEL_CLIENT", "lean")
    slow, quick = client_for(fake_llm), client_for(fake_llm)

    async def go() -> tuple[str, str]:
        fake_llm.script(Reply(text="slow answer", delay=1.0))
        pending = asyncio.create_task(
            slow.complete("fake", [{"role": "user", "content": "a"}], task="slow")
        )
        while not fake_llm.requests:  # the slow request has reached the server
            await asyncio.sleep(0.01)
        done = await quick.complete("fake", [{"role": "user", "content": "b"}], task="quick")
        quick.close()
        return (await pending).text, done.text

    assert asyncio.run(go()) == ("slow answer", "echo: b")


@pytest.mark.parametrize("path", PATHS)
def test_a_calls_latency_is_its_request_not_its_wait_for_a_slot(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeOpenAI, path: str
) -> None:
    # a model of max_concurrency 1 asked four times at once: the requests run one after
    # another, so the times measured around each request do not overlap and add up to no
    # more than the whole; timed from before the wait for the slot they added up to 2.5x it
    # (promptfoo's `latency` assertion and latencyMs time the provider's callApi alone)
    monkeypatch.setenv("ACCORD_MODEL_CLIENT", path)
    fake_llm.latency = 0.2
    config = ConfigSpec.model_validate(
        {"models": [{"name": "fake", "model": "openai/m", "api_base": fake_llm.url,
                     "api_key": "k", "max_retries": 0, "max_concurrency": 1}]}
    )  # fmt: skip
    client = ModelClient(ModelCatalog(config), None, "off")
    if path == "litellm":  # its import is no part of the calls
        from accord.engine.models import load_litellm

        load_litellm()

    async def go() -> tuple[list[float], float]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        done = await asyncio.gather(*(
            client.complete("fake", [{"role": "user", "content": f"q{i}"}], task=f"t{i}")
            for i in range(4)
        ))  # fmt: skip
        return [c.latency for c in done], loop.time() - started

    latencies, whole = asyncio.run(go())
    assert len(fake_llm.requests) == 4
    assert all(latency >= 0.2 for latency in latencies)
    assert sum(latencies) <= whole
