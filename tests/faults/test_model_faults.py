"""Faults injected by the scripted model server: runs complete, or fail naming task and model.

429s and 5xx mixed into normal replies, replies slower than the model's timeout, connections
dropped mid-response and bodies that are not JSON. Every run is a real `accord` process with
a time limit, so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from accord.engine import retry as engine_retry
from accord.engine.errors import ConfigError, ModelError
from accord.engine.models import ModelCatalog, ModelClient
from accord.engine.spec import ConfigSpec
from tests.bounds import PROCESS_SECONDS
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply
from tests.faults.helpers import accord, assert_no_traceback

SEED = 20261121
TASKS = 30


def write_project(tmp_path: Path, fake: FakeOpenAI, workflow: str, **model: Any) -> Path:
    (tmp_path / "config.yml").write_text(
        fake_model_config(fake, **model) + "defaults:\n  model: fake\n", encoding="utf-8"
    )
    path = tmp_path / "faults.workflow.yml"
    path.write_text(workflow, encoding="utf-8")
    return path


def prompt_of(body: dict[str, Any]) -> str:
    return str(body["messages"][-1].get("content") or "")


class ScriptedFaults:
    """Decides each reply from (seed, prompt, attempt), so the faults each task meets do not
    depend on the order concurrent requests arrive in, and the expected count is exact."""

    RATE_LIMITED = ("429", Reply.error(429, "rate limited", **{"Retry-After": "0"}))
    SERVER_ERRORS = (
        # without Retry-After the engine's own backoff applies (ACCORD_RETRY_BACKOFF)
        *[(str(code), Reply.error(code, f"upstream {code}")) for code in (500, 502, 503, 529)],
        ("500ra", Reply.error(500, "busy", **{"Retry-After": "0"})),
    )

    def __init__(self, rate_429: float, rate_5xx: float, max_in_a_row: int) -> None:
        self.rate_429 = rate_429
        self.rate_5xx = rate_5xx
        self.max_in_a_row = max_in_a_row
        self.attempts: Counter[str] = Counter()
        self.served: Counter[str] = Counter()
        self._lock = threading.Lock()

    def fault(self, prompt: str, attempt: int) -> tuple[str, Reply] | None:
        if attempt > self.max_in_a_row:
            return None
        digest = hashlib.sha256(f"{SEED}:{prompt}:{attempt}".encode()).digest()
        rng = random.Random(digest)
        draw = rng.random()
        if draw < self.rate_429:
            return self.RATE_LIMITED
        if draw < self.rate_429 + self.rate_5xx:
            return rng.choice(self.SERVER_ERRORS)
        return None

    def expected(self, prompts: list[str]) -> int:
        """Faults the run will meet: each prompt's faults until its first normal reply."""
        total = 0
        for prompt in prompts:
            attempt = 1
            while self.fault(prompt, attempt) is not None:
                total += 1
                attempt += 1
        return total

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = prompt_of(body)
        with self._lock:
            self.attempts[prompt] += 1
            attempt = self.attempts[prompt]
        chosen = self.fault(prompt, attempt)
        if chosen is None:
            return Reply(text=f"answer to {prompt}")
        with self._lock:
            self.served[chosen[0]] += 1
        return chosen[1]


def many_agents(count: int) -> str:
    lines = ["tasks:"]
    for i in range(count):
        lines += [f"  - name: ask{i:02d}", "    type: agent", f"    prompt: question {i:02d}"]
    refs = " / ".join(f"{{{{ ask{i:02d} }}}}" for i in range(count))
    lines += ["  - name: joined", "    type: formatter", f'    template: "{refs}"']
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_429_and_5xx_mixed_in_are_retried_and_counted(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    # 10% of replies are 429 and 10% 5xx (529 included); a task meets at most three faults
    # in a row, under max_retries, so every task must end up answered
    faults = ScriptedFaults(rate_429=0.1, rate_5xx=0.1, max_in_a_row=3)
    fake_llm.responder = faults
    prompts = [f"question {i:02d}" for i in range(TASKS)]
    expected = faults.expected(prompts)
    assert expected >= TASKS // 10  # the seed injects a real share of faults
    path = write_project(tmp_path, fake_llm, many_agents(TASKS), max_retries=4)

    done = accord(
        "run", str(path), "--format", "json", "--cache", "off", "--max-concurrency", "8",
        cwd=tmp_path,
    )  # fmt: skip

    assert done.code == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    outputs = doc["outputs"]
    for i in range(TASKS):
        assert outputs[f"ask{i:02d}"] == f"answer to question {i:02d}"
    assert outputs["joined"] == " / ".join(f"answer to question {i:02d}" for i in range(TASKS))
    usage = doc["summary"]["usage"]
    assert sum(faults.served.values()) == expected
    assert usage["retries"] == expected
    assert usage["calls"] == TASKS and usage["failures"] == 0
    assert len(fake_llm.requests) == TASKS + expected
    assert faults.served["429"] >= 2 and faults.served["529"] >= 1
    assert sum(n for kind, n in faults.served.items() if kind != "429") >= 3
    per_task = {t["task"]: t.get("usage", {}).get("retries", 0) for t in doc["tasks"]}
    assert sum(per_task.values()) == expected
    retry_lines = [line for line in done.stderr.splitlines() if "model_retry" in line]
    assert len(retry_lines) == expected  # each retry is logged
    assert_no_traceback(done)


SLOW = """
tasks:
  - name: quick
    type: agent
    prompt: quick question
  - name: slow_answer
    type: agent
    model: fake
    prompt: slow question
  - name: slow_task_limit
    type: agent
    model: patient
    prompt: slow question too
    timeout: 1
  - name: after_slow
    type: formatter
    template: "{{ slow_answer }}"
"""


@pytest.mark.slow
def test_replies_slower_than_the_timeout_fail_naming_task_and_model(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.responder = lambda body: Reply(
        text="late", delay=4.0 if "slow" in prompt_of(body) else 0.0
    )
    path = write_project(tmp_path, fake_llm, SLOW, timeout=0.5, max_retries=1)
    config = (tmp_path / "config.yml").read_text()
    patient = fake_model_config(fake_llm, timeout=30, max_retries=0).replace("models:\n", "")
    patient = patient.replace("name: fake", "name: patient")
    config = config.replace("defaults:", patient + "defaults:")
    (tmp_path / "config.yml").write_text(config)

    done = accord(
        "run", str(path), "--keep-going", "--format", "json", cwd=tmp_path, timeout=PROCESS_SECONDS
    )

    assert done.code == 1, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    states = {t["task"]: t["status"] for t in doc["tasks"]}
    assert states == {
        "quick": "succeeded",
        "slow_answer": "failed",
        "slow_task_limit": "failed",
        "after_slow": "skipped",
    }
    errors = {t["task"]: t["error"] for t in doc["tasks"]}
    # the model's own timeout, retried once: the task's record names the model and the limit
    assert "'fake'" in errors["slow_answer"]
    assert "no answer within 0.5 s" in errors["slow_answer"]
    assert "after 2 attempts" in errors["slow_answer"]
    # the task's own timeout cuts a call the model would have waited 30 s for
    assert "timed out after 1 s" in errors["slow_task_limit"]
    assert doc["outputs"]["quick"] == "late"  # the fast reply of the same scripted model
    assert_no_traceback(done)


FLAKY = """
tasks:
  - name: steady
    type: agent
    prompt: steady
  - name: drop_once
    type: agent
    prompt: drop once
  - name: garbage_once
    type: agent
    prompt: garbage once
  - name: drop_always
    type: agent
    prompt: drop always
  - name: garbage_always
    type: agent
    prompt: garbage always
  - name: html_always
    type: agent
    prompt: html always
  - name: uses_drop
    type: formatter
    template: "{{ drop_always }}"
  - name: uses_steady
    type: formatter
    template: "got {{ steady }} and {{ drop_once }} and {{ garbage_once }}"
"""


class BrokenReplies:
    """Drops and malformed bodies by prompt: `... once` fails the first attempt only."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = prompt_of(body)
        with self._lock:
            self.seen[prompt] += 1
            first = self.seen[prompt] == 1
        if prompt.startswith("drop") and (first or prompt.endswith("always")):
            return Reply(drop=True)
        if prompt.startswith("garbage") and (first or prompt.endswith("always")):
            return Reply(raw=b'{"id": "chatcmpl-1", "choices": [{"message": {"content": "tru')
        if prompt.startswith("html"):
            return Reply(raw=b"<html><body>502 Bad Gateway</body></html>")
        return Reply(text=f"ok {prompt}")


@pytest.mark.slow
def test_dropped_connections_and_malformed_bodies_retry_then_fail_clearly(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    broken = BrokenReplies()
    fake_llm.responder = broken
    path = write_project(tmp_path, fake_llm, FLAKY, max_retries=2)

    done = accord(
        "run", str(path), "--keep-going", "--format", "json", cwd=tmp_path, timeout=PROCESS_SECONDS
    )

    assert done.code == 1, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    states = {t["task"]: t["status"] for t in doc["tasks"]}
    assert states == {
        "steady": "succeeded",
        "drop_once": "succeeded",
        "garbage_once": "succeeded",
        "drop_always": "failed",
        "garbage_always": "failed",
        "html_always": "failed",
        "uses_drop": "skipped",
        "uses_steady": "succeeded",
    }
    assert doc["outputs"]["uses_steady"] == "got ok steady and ok drop once and ok garbage once"
    errors = {t["task"]: t["error"] or "" for t in doc["tasks"]}
    assert "Connection error" in errors["drop_always"]
    assert "after 3 attempts" in errors["drop_always"]
    for task in ("garbage_always", "html_always"):
        assert "not valid JSON" in errors[task]
        assert "model 'fake'" in errors[task] and "after 3 attempts" in errors[task]
    # 2 flaky tasks retried once, 3 broken ones twice each
    assert doc["summary"]["usage"]["retries"] == 2 + 3 * 2
    assert broken.seen["drop always"] == 3 and broken.seen["steady"] == 1
    assert_no_traceback(done)


@pytest.mark.slow
def test_fail_fast_stops_on_the_first_broken_reply(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = BrokenReplies()
    workflow = "tasks:\n  - name: only\n    type: agent\n    prompt: garbage always\n"
    path = write_project(tmp_path, fake_llm, workflow, max_retries=0)

    done = accord("run", str(path), cwd=tmp_path, timeout=PROCESS_SECONDS)

    assert done.code == 3  # the run produced nothing: every model call failed
    assert "only" in done.stderr and "not valid JSON" in done.stderr
    assert_no_traceback(done)


@pytest.mark.parametrize("retry_after", ["3600", "inf", "1e308"])
def test_a_huge_retry_after_is_capped(
    fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, retry_after: str
) -> None:
    # the cap is 120 s in production; shrink it so a missing cap shows as a hang, caught below
    monkeypatch.setattr(engine_retry, "RETRY_AFTER_CAP", 0.05)
    fake_llm.script(Reply.error(429, "slow down", **{"Retry-After": retry_after}), "fine")
    config = ConfigSpec.model_validate(
        {"models": [{"name": "fake", "model": "openai/m", "api_base": fake_llm.url,
                     "api_key": "k", "max_retries": 1}]}
    )  # fmt: skip
    client = ModelClient(ModelCatalog(config), None, "off")

    async def call() -> str:
        completion = await client.complete("fake", [{"role": "user", "content": "hi"}], task="t")
        return completion.text

    assert asyncio.run(asyncio.wait_for(call(), timeout=30)) == "fine"
    assert client.usage.total.retries == 1


def test_retry_backoff_env_must_be_a_number(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCORD_RETRY_BACKOFF", "soon")
    with pytest.raises(ConfigError, match="ACCORD_RETRY_BACKOFF"):
        ModelClient(ModelCatalog(ConfigSpec()), None, "off")


def test_a_trickling_body_is_bounded_by_the_model_timeout(fake_llm: FakeOpenAI) -> None:
    # each piece arrives within the read timeout; the whole answer would take ~6 s
    fake_llm.script(Reply(text="x" * 200, trickle=0.25))
    config = ConfigSpec.model_validate(
        {"models": [{"name": "fake", "model": "openai/m", "api_base": fake_llm.url,
                     "api_key": "k", "max_retries": 0, "timeout": 1}]}
    )  # fmt: skip
    client = ModelClient(ModelCatalog(config), None, "off")

    async def call() -> str:
        completion = await client.complete("fake", [{"role": "user", "content": "hi"}], task="t")
        return completion.text

    with pytest.raises(ModelError) as caught:
        asyncio.run(call())
    assert "no answer within 1 s" in caught.value.text


# every test here runs through both paths of an `openai/` model (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("model_path")
