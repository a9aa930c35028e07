"""The offline `local` model: SmolLM2-135M through llama.cpp, reached through litellm."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.models.harness import needs_llama


@needs_llama
def test_local_model_answers_without_any_key(tmp_path: Path) -> None:
    wf = tmp_path / "w.workflow.yml"
    wf.write_text(
        "tasks:\n  - name: ask\n    type: agent\n    prompt: 'Say hello in one short sentence.'\n"
    )
    result = CliRunner().invoke(main, ["run", str(wf), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["outputs"]["ask"].strip()
    usage = doc["summary"]["usage"]
    assert usage["calls"] == 1 and usage["output_tokens"] > 0 and usage["cost"] == 0.0


def test_a_missing_llama_cpp_fails_at_once_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a missing optional package is permanent: no retry (the task asks for 3 attempts, and
    # the model door would retry a connection error 7 times), no traceback
    real_find_spec = importlib.util.find_spec

    def without_llama(name: str, *args: object) -> object:
        return None if name == "llama_cpp" else real_find_spec(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", without_llama)
    wf = tmp_path / "w.workflow.yml"
    wf.write_text(
        "tasks:\n  - name: ask\n    type: agent\n    prompt: 'Say hello.'\n"
        "    retry: {attempts: 3, backoff: 5}\n"
    )
    result = CliRunner().invoke(main, ["run", str(wf), "--format", "json", "--cache", "off"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    (task,) = doc["tasks"]
    assert task["attempts"] == 1 and task["status"] == "failed"
    assert doc["summary"]["usage"]["retries"] == 0
    assert "pip install 'accord[local]'" in result.stderr
    assert "model 'local' needs llama-cpp-python" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_a_forced_call_is_decoded_under_the_tool_schema() -> None:
    from accord.engine.local_model import ARGUMENT_CHARS, _bounded, forced_tool

    schema = {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "answer": {"type": "string", "enum": ["Yes", "No"]},
        },
    }
    tools = [
        {"type": "function", "function": {"name": "other", "parameters": {}}},
        {"type": "function", "function": {"name": "select_answer", "parameters": schema}},
    ]
    forced = {"type": "function", "function": {"name": "select_answer"}}
    assert forced_tool({"tools": tools, "tool_choice": forced}) == ("select_answer", schema)
    assert forced_tool({"tools": tools, "tool_choice": "auto"}) is None  # it cannot choose
    assert forced_tool({"tool_choice": forced}) is None
    bounded = _bounded(schema)["properties"]
    assert bounded["reason"]["maxLength"] == ARGUMENT_CHARS
    assert "maxLength" not in bounded["answer"]  # an enum is bounded already


@needs_llama
def test_the_local_judge_answers_by_a_forced_call() -> None:
    import asyncio

    from accord.engine.models import load_litellm

    litellm = load_litellm()
    tool = {
        "type": "function",
        "function": {
            "name": "select_answer",
            "parameters": {
                "type": "object",
                "properties": {
                    "reason": {"type": "string"},
                    "answer": {"type": "string", "enum": ["Yes", "No"]},
                },
                "required": ["reason", "answer"],
            },
        },
    }
    response = asyncio.run(
        litellm.acompletion(
            model="accord-local/smollm2-135m-instruct",
            messages=[{"role": "user", "content": "Is Paris in France?"}],
            tools=[tool],
            tool_choice={"type": "function", "function": {"name": "select_answer"}},
            temperature=0,
            seed=1,
        )
    )
    (call,) = response.choices[0].message.tool_calls
    arguments = json.loads(call.function.arguments)
    assert call.function.name == "select_answer" and arguments["answer"] in ("Yes", "No")
    assert isinstance(arguments["reason"], str) and len(arguments["reason"]) <= 600


@pytest.mark.slow
@needs_llama
def test_samples_of_the_local_model_differ_and_each_is_reproducible() -> None:
    """n samples of one question are n draws (seed 0 + sample, temperature 0.7), not one
    answer n times: offline consistency would otherwise always be 100%."""
    import asyncio

    from accord.engine.catalog import ModelCatalog
    from accord.engine.models import ModelClient
    from accord.engine.spec import ConfigSpec

    messages = [{"role": "user", "content": "Describe the sea in a few words."}]

    async def samples() -> list[str]:
        client = ModelClient(ModelCatalog(ConfigSpec()), None, "off")
        try:
            out = []
            for sample in range(4):
                done = await client.complete("local", messages, task="t", sample=sample)
                out.append(done.text)
            return out
        finally:
            client.close()

    first = asyncio.run(samples())
    assert len(set(first)) >= 3, first
    assert asyncio.run(samples()) == first  # sample i is the same draw every time
