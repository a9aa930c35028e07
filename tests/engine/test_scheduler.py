"""The scheduler on its own: order, limits, failure policies, retries, timeouts, nesting."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

import pytest

from accord.engine.errors import AccordError, TaskError
from accord.engine.results import Status
from accord.engine.retry import RetryPolicy
from accord.engine.scheduler import Graph, Node, Scheduler, SlotPool

Body = Callable[[], Awaitable[Any]]

_order = 0


def node(
    name: str,
    body: Body | None = None,
    *,
    priority: int = 1,
    order: int | None = None,
    **kwargs: Any,
) -> Node:
    """A node whose body returns its name unless another body is given."""
    global _order
    _order += 1

    async def default() -> str:
        await asyncio.sleep(0)
        return name

    return Node(
        key=name,
        name=name,
        type="test",
        order=(_order if order is None else order,),
        priority=priority,
        body=body or default,
        **kwargs,
    )


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine with a generous guard, so a deadlock fails instead of hanging."""

    async def guarded() -> Any:
        return await asyncio.wait_for(coro, timeout=10)

    return asyncio.run(guarded())


def run_graph(
    scheduler: Scheduler, nodes: Sequence[Node], edges: Sequence[tuple[Node, Node]] = ()
) -> Graph:
    async def go() -> Graph:
        return await scheduler.run(nodes, edges)

    result: Graph = run(go())
    return result


def statuses(nodes: Sequence[Node]) -> dict[str, Status]:
    return {n.name: n.result.status for n in nodes if n.result is not None}


class Recorder:
    """Bodies that record start order and how many ran at once."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.running = 0
        self.peak = 0
        self.by_resource: dict[str, int] = {}
        self.peak_by_resource: dict[str, int] = {}

    def body(self, name: str, resource: str | None = None, hold: int = 3) -> Body:
        async def work() -> str:
            self.started.append(name)
            self.running += 1
            self.peak = max(self.peak, self.running)
            if resource:
                self.by_resource[resource] = self.by_resource.get(resource, 0) + 1
                self.peak_by_resource[resource] = max(
                    self.peak_by_resource.get(resource, 0), self.by_resource[resource]
                )
            for _ in range(hold):  # yield so other ready bodies get to start and overlap
                await asyncio.sleep(0)
            await asyncio.sleep(0.001)
            self.running -= 1
            if resource:
                self.by_resource[resource] -= 1
            return name

        return work


def test_outputs_and_statuses_of_a_simple_chain() -> None:
    a, b = node("a"), node("b")
    outputs: dict[str, Any] = {}
    b.on_success = lambda value: outputs.__setitem__("b", value)
    scheduler = Scheduler()
    run_graph(scheduler, [a, b], [(a, b)])
    assert statuses([a, b]) == {"a": Status.SUCCEEDED, "b": Status.SUCCEEDED}
    assert b.result is not None and b.result.output == "b"
    assert outputs == {"b": "b"}
    assert [r.key for r in scheduler.results] == ["a", "b"]


def test_dependants_start_only_after_their_inputs() -> None:
    rec = Recorder()
    a = node("a", rec.body("a"))
    b = node("b", rec.body("b"))
    c = node("c", rec.body("c"))
    run_graph(Scheduler(max_concurrency=4), [c, b, a], [(a, b), (b, c)])
    assert rec.started == ["a", "b", "c"]


def test_start_order_at_concurrency_one_is_priority_then_declaration() -> None:
    rec = Recorder()
    # a -> d ; b ; c -> e -> f   (priorities are the longest remaining path)
    a = node("a", rec.body("a"), priority=2, order=0)
    b = node("b", rec.body("b"), priority=1, order=1)
    c = node("c", rec.body("c"), priority=3, order=2)
    d = node("d", rec.body("d"), priority=1, order=3)
    e = node("e", rec.body("e"), priority=2, order=4)
    f = node("f", rec.body("f"), priority=1, order=5)
    nodes = [a, b, c, d, e, f]
    edges = [(a, d), (c, e), (e, f)]
    run_graph(Scheduler(max_concurrency=1), nodes, edges)
    first = list(rec.started)
    assert first == ["c", "a", "e", "b", "d", "f"]
    assert rec.peak == 1


def test_start_order_is_reproducible() -> None:
    orders = []
    for _ in range(3):
        rec = Recorder()
        nodes = [node(n, rec.body(n), priority=1, order=i) for i, n in enumerate("pqrstu")]
        run_graph(Scheduler(max_concurrency=1), nodes)
        orders.append(rec.started)
    assert orders[0] == list("pqrstu")
    assert orders[0] == orders[1] == orders[2]


def test_global_limit_is_never_exceeded() -> None:
    rec = Recorder()
    nodes = [node(f"n{i}", rec.body(f"n{i}")) for i in range(12)]
    run_graph(Scheduler(max_concurrency=3), nodes)
    assert rec.peak == 3
    assert len(rec.started) == 12


def test_a_slot_pool_bounds_several_schedulers_together() -> None:
    rec = Recorder()
    pool = SlotPool(3)
    first, second = (Scheduler(max_concurrency=3, pool=pool) for _ in range(2))
    a = [node(f"a{i}", rec.body(f"a{i}")) for i in range(8)]
    b = [node(f"b{i}", rec.body(f"b{i}")) for i in range(8)]

    async def both() -> None:
        await asyncio.gather(first.run(a, ()), second.run(b, ()))

    run(both())
    assert rec.peak == 3  # each alone could run 3: together they still run 3
    assert len(rec.started) == 16
    assert pool.used == 0


def test_named_resource_limits_are_respected() -> None:
    rec = Recorder()
    db_nodes = [node(f"q{i}", rec.body(f"q{i}", "db:x"), resources=("db:x",)) for i in range(6)]
    free = [node(f"f{i}", rec.body(f"f{i}")) for i in range(3)]
    scheduler = Scheduler(max_concurrency=8, limits={"db:x": 2})
    run_graph(scheduler, [*db_nodes, *free])
    assert rec.peak_by_resource["db:x"] == 2
    assert rec.peak >= 4  # the free nodes ran alongside the limited ones
    assert all(n.result and n.result.status is Status.SUCCEEDED for n in [*db_nodes, *free])


def test_resource_limit_does_not_block_other_ready_nodes() -> None:
    rec = Recorder()
    limited = [node(f"q{i}", rec.body(f"q{i}", "m", hold=6), resources=("m",)) for i in range(3)]
    other = node("other", rec.body("other"), priority=0)
    run_graph(Scheduler(max_concurrency=2, limits={"m": 1}), [*limited, other])
    # with one 'm' slot taken, the second global slot goes to 'other' before q1 and q2
    assert rec.started.index("other") < rec.started.index("q1")
    assert rec.peak_by_resource["m"] == 1


def test_fail_fast_cancels_running_and_unstarted_nodes() -> None:
    blocker = asyncio.Event()
    started: list[str] = []

    async def boom() -> None:
        await asyncio.sleep(0)
        raise TaskError("bad", "division by zero")

    async def wait_forever() -> None:
        started.append("slow")
        await blocker.wait()

    slow = node("slow", wait_forever, priority=2)
    bad = node("bad", boom)
    after_slow = node("after_slow")
    after_bad = node("after_bad")
    nodes = [slow, bad, after_slow, after_bad]
    scheduler = Scheduler(max_concurrency=4)
    run_graph(scheduler, nodes, [(slow, after_slow), (bad, after_bad)])
    assert started == ["slow"]
    assert statuses(nodes) == {
        "slow": Status.CANCELLED,
        "bad": Status.FAILED,
        "after_slow": Status.CANCELLED,
        "after_bad": Status.CANCELLED,
    }
    assert scheduler.error is not None and scheduler.error.key == "bad"
    assert scheduler.error.error == "division by zero"


def test_fail_fast_does_not_start_waiting_ready_nodes() -> None:
    ran: list[str] = []

    async def boom() -> None:
        raise AccordError("nope")

    def body(name: str) -> Body:
        async def work() -> None:
            ran.append(name)

        return work

    bad = node("bad", boom, priority=5)
    rest = [node(f"r{i}", body(f"r{i}")) for i in range(4)]
    run_graph(Scheduler(max_concurrency=1), [bad, *rest])
    assert ran == []
    assert {n.result.status for n in rest if n.result} == {Status.CANCELLED}


def test_keep_going_skips_dependants_transitively_and_runs_the_rest() -> None:
    async def boom() -> None:
        raise TaskError("bad", "broken")

    bad = node("bad", boom)
    child = node("child")
    grandchild = node("grandchild")
    independent = node("independent")
    after_independent = node("after_independent")
    nodes = [bad, child, grandchild, independent, after_independent]
    edges = [(bad, child), (child, grandchild), (independent, after_independent)]
    scheduler = Scheduler(max_concurrency=2, keep_going=True)
    graph = run_graph(scheduler, nodes, edges)
    assert statuses(nodes) == {
        "bad": Status.FAILED,
        "child": Status.SKIPPED,
        "grandchild": Status.SKIPPED,
        "independent": Status.SUCCEEDED,
        "after_independent": Status.SUCCEEDED,
    }
    assert grandchild.result is not None and grandchild.result.error is not None
    assert "skipped" in grandchild.result.error
    assert [f.key for f in graph.failures] == ["bad"]


def test_keep_going_node_with_one_failed_input_is_skipped() -> None:
    async def boom() -> None:
        raise TaskError("bad", "broken")

    good, bad, join = node("good"), node("bad", boom), node("join")
    run_graph(Scheduler(keep_going=True), [good, bad, join], [(good, join), (bad, join)])
    assert statuses([good, bad, join]) == {
        "good": Status.SUCCEEDED,
        "bad": Status.FAILED,
        "join": Status.SKIPPED,
    }


def test_retry_reruns_a_failing_body_until_it_succeeds() -> None:
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise TaskError("flaky", f"attempt {calls} failed")
        return "ok"

    flaky_node = node("flaky", flaky, retry=RetryPolicy(attempts=3))
    run_graph(Scheduler(), [flaky_node])
    assert calls == 3
    assert flaky_node.result is not None
    assert flaky_node.result.status is Status.SUCCEEDED
    assert flaky_node.result.output == "ok"
    assert flaky_node.result.attempts == 3


def test_retry_gives_up_after_the_last_attempt() -> None:
    calls = 0

    async def broken() -> None:
        nonlocal calls
        calls += 1
        raise TaskError("broken", f"attempt {calls}")

    broken_node = node("broken", broken, retry=RetryPolicy(attempts=2))
    run_graph(Scheduler(), [broken_node])
    assert calls == 2
    assert broken_node.result is not None
    assert broken_node.result.status is Status.FAILED
    assert broken_node.result.error == "attempt 2"


def test_timeout_fails_a_slow_body() -> None:
    async def slow() -> None:
        await asyncio.Event().wait()

    slow_node = node("slow", slow, timeout=0.05)
    run_graph(Scheduler(), [slow_node])
    assert slow_node.result is not None
    assert slow_node.result.status is Status.FAILED
    assert slow_node.result.error is not None
    assert "timed out" in slow_node.result.error


def test_timeout_error_raised_by_a_body_without_timeout_fails_the_node() -> None:
    async def socket_timeout() -> None:
        raise TimeoutError("read timed out")

    timeout_node = node("net", socket_timeout)
    after = node("after")
    run_graph(Scheduler(keep_going=True), [timeout_node, after], [(timeout_node, after)])
    assert statuses([timeout_node, after]) == {"net": Status.FAILED, "after": Status.SKIPPED}
    assert timeout_node.result is not None and timeout_node.result.error is not None
    assert "timed out" in timeout_node.result.error


def test_unexpected_exception_is_reported_as_internal_error() -> None:
    async def crash() -> None:
        raise KeyError("oops")

    crash_node = node("crash", crash)
    run_graph(Scheduler(), [crash_node])
    assert crash_node.result is not None
    assert crash_node.result.status is Status.FAILED
    assert crash_node.result.error == "internal error: KeyError: 'oops'"


def test_containers_submitting_children_do_not_deadlock_at_concurrency_one() -> None:
    scheduler = Scheduler(max_concurrency=1)
    rec = Recorder()

    def container(name: str, depth: int) -> Body:
        async def body() -> list[str]:
            children: list[Node] = [node(f"{name}.{i}", rec.body(f"{name}.{i}")) for i in range(2)]
            if depth > 0:
                children.append(
                    node(f"{name}.sub", container(f"{name}.sub", depth - 1), uses_slot=False)
                )
            graph = scheduler.submit(children, [])
            await graph.future
            return [c.name for c in children]

        return body

    loops = [node(f"loop{i}", container(f"loop{i}", 1), uses_slot=False) for i in range(3)]
    leaf = node("leaf", rec.body("leaf"))
    run_graph(scheduler, [*loops, leaf], [(leaf, loops[2])])
    assert all(n.result and n.result.status is Status.SUCCEEDED for n in [*loops, leaf])
    assert rec.peak == 1
    assert len(rec.started) == 1 + 3 * 4


def test_observer_sees_every_start_and_finish() -> None:
    events: list[tuple[str, str]] = []

    class Observer:
        def node_started(self, n: Node) -> None:
            events.append(("start", n.key))

        def node_finished(self, n: Node, result: Any) -> None:
            events.append((result.status.value, n.key))

    a, b = node("a"), node("b")
    run_graph(Scheduler(observer=Observer()), [a, b], [(a, b)])
    assert events == [("start", "a"), ("succeeded", "a"), ("start", "b"), ("succeeded", "b")]


def test_empty_graph_finishes() -> None:
    graph = run_graph(Scheduler(), [])
    assert graph.future.done()


def test_max_concurrency_must_be_positive() -> None:
    with pytest.raises(AccordError):
        Scheduler(max_concurrency=0)
