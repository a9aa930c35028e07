"""The one retry policy: nodes, model calls and consistency samples retry through it; a node
waiting out a backoff holds no slot and no resource limit; permanent errors never retry."""

from __future__ import annotations

import asyncio
from typing import Any

from accord.engine.errors import ConfigError, ModelError, TaskError
from accord.engine.results import Status
from accord.engine.retry import RetryPolicy, is_permanent, wait_out
from accord.engine.scheduler import Node, Scheduler


def _node(key: str, body: Any, order: int, **kwargs: Any) -> Node:
    return Node(key=key, name=key, type="t", order=(order,), priority=1, body=body, **kwargs)


def _run(scheduler: Scheduler, nodes: list[Node]) -> None:
    async def go() -> None:
        await asyncio.wait_for(scheduler.run(nodes, []), timeout=10)

    asyncio.run(go())


def test_a_node_in_backoff_gives_its_slot_to_another() -> None:
    events: list[str] = []

    async def flaky() -> str:
        events.append("flaky try")
        if events.count("flaky try") == 1:
            raise TaskError("flaky", "transient")
        return "ok"

    async def other() -> str:
        events.append("other ran")
        return "ok"

    # one slot; `flaky` is declared first, so it runs first; its 0.2 s backoff lets `other` in
    scheduler = Scheduler(max_concurrency=1)
    first = _node("flaky", flaky, 0, retry=RetryPolicy(attempts=2, backoff=0.2))
    second = _node("other", other, 1)
    _run(scheduler, [first, second])
    assert events == ["flaky try", "other ran", "flaky try"]
    assert first.result is not None and first.result.status is Status.SUCCEEDED
    assert first.result.attempts == 2


def test_a_backoff_inside_a_body_frees_the_slot_and_the_resource_limit() -> None:
    # the model door waits out its retries with `wait_out`: the node's database/model
    # limit and its slot go to the next node while it sleeps
    events: list[str] = []

    async def calls_a_model() -> str:
        events.append("call 1")
        await wait_out(0.2)
        events.append("call 2")
        return "answer"

    async def queued() -> str:
        events.append("queued ran")
        return "ok"

    scheduler = Scheduler(max_concurrency=2, limits={"model:m": 1})
    first = _node("agent", calls_a_model, 0, resources=("model:m",))
    second = _node("other", queued, 1, resources=("model:m",))
    _run(scheduler, [first, second])
    assert events == ["call 1", "queued ran", "call 2"]


def test_permanent_errors_are_never_retried() -> None:
    tries = 0

    async def misconfigured() -> None:
        nonlocal tries
        tries += 1
        raise ConfigError("unknown database 'nope'")

    node = _node("n", misconfigured, 0, retry=RetryPolicy(attempts=5))
    _run(Scheduler(), [node])
    assert tries == 1
    assert node.result is not None and node.result.status is Status.FAILED


def test_what_is_permanent() -> None:
    assert is_permanent(ModelError("bad key", kind="AuthenticationError", permanent=True))
    assert not is_permanent(ModelError("slow down", kind="RateLimitError", permanent=False))
    assert is_permanent(ModuleNotFoundError("llama_cpp"))
    assert is_permanent(TaskError("t", "auth", permanent=True))
    assert not is_permanent(TaskError("t", "flaky"))


def test_the_delay_doubles_to_its_cap_and_honours_retry_after() -> None:
    policy = RetryPolicy(attempts=10, backoff=1.0, cap=5.0)
    assert [policy.delay(k) for k in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert policy.delay(1, retry_after=7.5) == 7.5
    assert policy.delay(1, retry_after=1e9) == 120.0  # a provider's Retry-After is capped
    jittered = RetryPolicy(attempts=3, backoff=1.0, jitter=True)
    assert all(0.0 <= jittered.delay(2) <= 2.0 for _ in range(50))


def test_error_fields_compose_the_message_once() -> None:
    error = ModelError("slow down", task="answer", model="gpt", kind="RateLimitError", attempts=3)
    assert (
        error.text
        == "task 'answer': model 'gpt' failed after 3 attempts: RateLimitError: slow down"
    )
    assert (
        error.text_in("answer") == "model 'gpt' failed after 3 attempts: RateLimitError: slow down"
    )
    wrapped = TaskError("report", error.text_in("report"))
    assert wrapped.text == (
        "task 'report' failed: task 'answer': model 'gpt' failed after 3 attempts: "
        "RateLimitError: slow down"
    )
