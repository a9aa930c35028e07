"""`model_workers: N` is deprecated: the key is accepted, has no effect (calls run in the run's
own process, with the same cache, retries and errors), and every run says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply
from tests.faults.helpers import accord, assert_no_traceback

TASKS = "".join(
    f"  - name: q{i}\n    type: agent\n    model: fake\n    prompt: question {i}\n"
    for i in range(6)
)


def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    (tmp_path / "config.yml").write_text(fake_model_config(fake) + "model_workers: 2\n")
    path = tmp_path / "w.workflow.yml"
    path.write_text("tasks:\n" + TASKS)
    return path


def run(path: Path, *args: str) -> Any:
    return accord("run", str(path), "--format", "json", *args, cwd=path.parent)


@pytest.mark.slow
def test_model_workers_is_deprecated_and_calls_still_answer_retry_and_cache(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    seen: dict[str, int] = {}

    def respond(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        seen[prompt] = seen.get(prompt, 0) + 1
        if prompt == "question 2" and seen[prompt] == 1:
            return Reply.error(429, "slow down", **{"Retry-After": "0"})
        return Reply(text=f"answer to {prompt}")

    fake_llm.responder = respond
    path = project(tmp_path, fake_llm)
    first = run(path)
    assert first.code == 0, first.stderr[-2000:]
    assert "model_workers in config.yml has no effect and is deprecated" in first.stderr
    assert "remove the key" in first.stderr
    doc = json.loads(first.stdout)
    assert doc["outputs"] == {f"q{i}": f"answer to question {i}" for i in range(6)}
    assert doc["summary"]["usage"]["retries"] == 1
    assert doc["summary"]["usage"]["input_tokens"] > 0
    again = run(path)
    assert json.loads(again.stdout)["summary"]["usage"]["cached"] == 6
    assert sum(seen.values()) == 7
    assert_no_traceback(again)


@pytest.mark.slow
def test_a_provider_error_with_model_workers_set_is_reported_like_any_other(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.responder = lambda body: Reply.error(401, "invalid api key provided")
    path = project(tmp_path, fake_llm)
    result = run(path, "--keep-going")
    assert result.code == 3
    errors = [t["error"] for t in json.loads(result.stdout)["tasks"]]
    assert all("AuthenticationError" in e and "invalid api key" in e for e in errors)
    assert "test-key" not in result.stdout + result.stderr


# every test here runs through both paths of an `openai/` model (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("model_path")
