"""Event-driven asyncio scheduler over a DAG of nodes.

Each node keeps its count of unfinished inputs; a node starts the moment the count reaches
zero. Ready nodes wait in one heap ordered by (longest remaining path, declaration order), so
with fewer slots than ready nodes the critical path goes first and `--max-concurrency 1` is
reproducible. Leaf nodes take a slot of the global limit and of each named resource limit
(per database, per model, per workflow cap); container nodes (loops, sub-workflows) take none
while they wait for their children, so nesting can never deadlock the pool.

Failure: fail-fast (default) cancels every running node; keep-going marks the failed node's
dependants `skipped` and runs everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import log
from .errors import AccordError
from .results import Status, TaskResult
from .retry import RetryPolicy

NO_RETRY = RetryPolicy()

NodeBody = Callable[[], Awaitable[Any]]


class Observer(Protocol):
    """Receives node events (progress display, run store)."""

    def node_started(self, node: Node) -> None: ...

    def node_finished(self, node: Node, result: TaskResult) -> None: ...


@dataclass(eq=False)
class Node:
    """One schedulable unit of work."""

    key: str
    name: str
    type: str
    order: tuple[int, ...]
    priority: int
    body: NodeBody
    uses_slot: bool = True
    resources: tuple[str, ...] = ()
    retry: RetryPolicy = NO_RETRY
    timeout: float | None = None
    top_level: bool = False
    deps_left: int = 0
    dependants: list[Node] = field(default_factory=list)
    graph: Graph | None = None
    result: TaskResult | None = None
    task: asyncio.Task[None] | None = None
    on_success: Callable[[Any], None] | None = None
    on_failure: Callable[[str], Any] | None = None
    holding: bool = False
    waiter: asyncio.Future[None] | None = None
    # the node whose body submitted this one (a loop, for its iterations' tasks); None at the
    # top of a run. The run's trace nests spans by it (engine/telemetry.py)
    parent: Node | None = None

    async def pause(self, delay: float) -> None:
        """Wait `delay` seconds without this node's slot and resource limits."""
        assert self.graph is not None
        await self.graph.scheduler.pause(self, delay)


@dataclass(eq=False)
class Graph:
    """A set of nodes run together (a workflow scope); done when every node is terminal."""

    nodes: list[Node]
    future: asyncio.Future[None]
    scheduler: Scheduler
    remaining: int = 0
    failures: list[TaskResult] = field(default_factory=list)


class SlotPool:
    """One global limit shared by several schedulers on one event loop.

    `accord eval a.yaml b.yaml` runs its files at once, each on its own scheduler (its own run
    in the run store), and `--max-concurrency` still bounds the work of all of them together.
    A slot freed by one scheduler lets the others start their ready nodes.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise AccordError("max concurrency must be at least 1")
        self.size = size
        self.used = 0
        self.schedulers: list[Scheduler] = []

    def released(self, by: Scheduler) -> None:
        for scheduler in self.schedulers:
            if scheduler is not by and self.used < self.size:
                scheduler._dispatch()


class Scheduler:
    """Runs graphs of nodes under one global limit and named resource limits."""

    def __init__(
        self,
        *,
        max_concurrency: int = 8,
        limits: dict[str, int] | None = None,
        keep_going: bool = False,
        observer: Observer | None = None,
        pool: SlotPool | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise AccordError("max concurrency must be at least 1")
        self.max_concurrency = max_concurrency
        self.pool = pool
        if pool is not None:
            pool.schedulers.append(self)
        self.limits = dict(limits or {})
        self.keep_going = keep_going
        self.observer = observer
        self.results: list[TaskResult] = []
        # False: results are not gathered here (a run in parts reads each part's from its
        # nodes, then lets them go: `runner.execute`); `first_failure` is kept either way
        self.keep_results = True
        self.first_failure: TaskResult | None = None
        self.out_of_memory: str | None = None  # the node that ran out of memory: run stopped
        self.error: TaskResult | None = None
        self._ready: list[tuple[int, tuple[int, ...], int, Node]] = []
        self._blocked: dict[str, list[tuple[int, tuple[int, ...], int, Node]]] = {}
        self._used: dict[str, int] = {}
        self._running = 0
        self._seq = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._graphs: dict[Graph, None] = {}  # unfinished graphs, in submission order
        self._aborted = False
        self.log = log.get()
        self._debug = log.enabled("debug")

    # -- building -----------------------------------------------------------------------

    def submit(self, nodes: Sequence[Node], edges: Sequence[tuple[Node, Node]]) -> Graph:
        """Add a graph; its roots become ready at once. Await `graph.future` for completion."""
        loop = asyncio.get_running_loop()
        graph = Graph(list(nodes), loop.create_future(), self, remaining=len(nodes))
        self._graphs[graph] = None
        for before, after in edges:
            before.dependants.append(after)
            after.deps_left += 1
        parent = log.current_node.get()
        for node in nodes:
            node.graph = graph
            node.parent = parent
        if not nodes:
            del self._graphs[graph]
            graph.future.set_result(None)
            return graph
        if self._aborted:
            for node in nodes:
                self._settle(node, Status.CANCELLED, error="run aborted")
            return graph
        for node in nodes:
            if node.deps_left == 0:
                self._make_ready(node)
        self._dispatch()
        return graph

    async def run(self, nodes: Sequence[Node], edges: Sequence[tuple[Node, Node]]) -> Graph:
        """Submit a graph and wait until it, and everything it started, is finished."""
        graph = self.submit(nodes, edges)
        try:
            await asyncio.shield(graph.future)
        except asyncio.CancelledError:
            self.abort()
            raise
        finally:
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
        return graph

    # -- readiness and dispatch ---------------------------------------------------------

    def _make_ready(self, node: Node) -> None:
        if not node.uses_slot and not node.resources:
            self._start(node)
            return
        self._seq += 1
        heapq.heappush(self._ready, (-node.priority, node.order, self._seq, node))

    def _saturated(self, node: Node) -> str | None:
        for name in node.resources:
            limit = self.limits.get(name)
            if limit is not None and self._used.get(name, 0) >= limit:
                return name
        return None

    def _free(self) -> bool:
        pool = self.pool
        return self._running < self.max_concurrency and (pool is None or pool.used < pool.size)

    def _dispatch(self) -> None:
        while self._ready and self._free() and not self._aborted:
            entry = heapq.heappop(self._ready)
            node = entry[3]
            if node.waiter is not None and node.waiter.done():
                continue  # it stopped waiting (cancelled) while in the queue
            full = self._saturated(node)
            if full is not None:
                heapq.heappush(self._blocked.setdefault(full, []), entry)
                continue
            self._start(node)

    def _acquire(self, node: Node) -> None:
        node.holding = True
        if node.uses_slot:
            self._running += 1
            if self.pool is not None:
                self.pool.used += 1
        for name in node.resources:
            self._used[name] = self._used.get(name, 0) + 1

    def _start(self, node: Node) -> None:
        self._acquire(node)
        if node.waiter is not None:  # back from a backoff: its task goes on
            waiter, node.waiter = node.waiter, None
            waiter.set_result(None)
            return
        task = asyncio.get_running_loop().create_task(self._execute(node), name=node.key)
        node.task = task
        self._tasks.add(task)
        task.add_done_callback(functools.partial(self._task_done, node))

    def _task_done(self, node: Node, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if node.result is None:
            # cancelled before its first step (fail-fast in the same tick it was started):
            # `_execute` never ran, so nothing released its slots or settled it
            self._release(node)
            self._settle(node, Status.CANCELLED, error="cancelled: the run stopped")
        # a finished task holds its context, which holds the node (log.current_node): let
        # go, so a finished part of a run is freed without waiting for the cycle collector
        node.task = None

    def _release(self, node: Node) -> None:
        if not node.holding:
            return
        node.holding = False
        if node.uses_slot:
            self._running -= 1
            if self.pool is not None:
                self.pool.used -= 1
                self.pool.released(self)
        for name in node.resources:
            self._used[name] -= 1
            waiting = self._blocked.get(name)
            if waiting:
                heapq.heappush(self._ready, heapq.heappop(waiting))

    # -- execution ----------------------------------------------------------------------

    async def pause(self, node: Node, delay: float) -> None:
        """Wait `delay` seconds without the node's slot and resource limits, then queue for
        them again like any ready node (its priority and order unchanged)."""
        self._release(node)
        self._dispatch()
        await asyncio.sleep(delay)
        if not node.uses_slot and not node.resources:
            self._acquire(node)
            return
        waiter = node.waiter = asyncio.get_running_loop().create_future()
        self._make_ready(node)
        self._dispatch()
        await waiter

    async def _execute(self, node: Node) -> None:
        started = time.perf_counter()
        log.current_node.set(node)  # log fields and `retry.wait_out` find the node here
        if self.observer is not None:
            _notify(self.observer.node_started, node)
        if self._debug:
            self.log.debug("task_started", task=node.key, type=node.type)
        attempt = 0
        status = Status.FAILED
        output: Any = None
        error: str | None = None
        try:
            while True:
                attempt += 1
                try:
                    output = await _call(node)
                    status = Status.SUCCEEDED
                    break
                except TimeoutError as exc:
                    # raised inside the body (a network read, say), not by the node's timeout
                    error = f"timed out: {exc}" if str(exc) else "timed out"
                    failure: BaseException = exc
                except AccordError as exc:
                    error, failure = exc.text_in(node.key), exc
                except MemoryError:
                    # every node after it would fail the same way (and, keeping going, the
                    # run would spin through them): the run stops, and says why
                    error = "out of memory"
                    if self.out_of_memory is None:
                        self.out_of_memory = node.key
                    self.abort()
                    break
                except Exception as exc:  # a bug in a task type: keep the run, report it
                    error = f"internal error: {type(exc).__name__}: {exc}"
                    failure = exc
                    self.log.exception("task_crashed", task=node.key)
                if not node.retry.retries(attempt, failure):
                    break
                delay = node.retry.delay(attempt)
                self.log.warning(
                    "task_retrying", task=node.key, attempt=attempt, error=error, delay=delay
                )
                await self.pause(node, delay)
        except asyncio.CancelledError:
            status, error = Status.CANCELLED, "cancelled"
        finally:
            self._release(node)
        if (
            status is Status.FAILED
            and node.on_failure is not None
            and error is not None
            and self.out_of_memory is None
        ):
            output, status, error = node.on_failure(error), Status.SUCCEEDED, None
        if status is Status.SUCCEEDED and node.on_success is not None:
            node.on_success(output)
        self._settle(node, status, output=output, error=error, started=started, attempts=attempt)
        self._dispatch()

    def _settle(
        self,
        node: Node,
        status: Status,
        *,
        output: Any = None,
        error: str | None = None,
        started: float | None = None,
        attempts: int = 0,
    ) -> None:
        if node.result is not None:
            return
        result = TaskResult(
            key=node.key,
            type=node.type,
            status=status,
            output=output if status is Status.SUCCEEDED else None,
            error=error,
            started=started,
            finished=time.perf_counter() if started is not None else None,
            attempts=attempts,
            top_level=node.top_level,
        )
        node.result = result
        if self.keep_results:
            self.results.append(result)
        if status is Status.FAILED and self.first_failure is None:
            self.first_failure = result
        if self.observer is not None:
            _notify(self.observer.node_finished, node, result)
        if self._debug or status is Status.FAILED:
            event = {Status.SUCCEEDED: "task_succeeded", Status.FAILED: "task_failed"}.get(
                status, f"task_{status.value}"
            )
            # a failure is the report's to show (once, formatted): logged at info
            level = "info" if status is Status.FAILED else "debug"
            getattr(self.log, level)(
                event, task=node.key, type=node.type, error=error, attempts=attempts
            )
        graph = node.graph
        assert graph is not None
        if status is Status.SUCCEEDED:
            for child in node.dependants:
                child.deps_left -= 1
                if child.deps_left == 0 and child.result is None and not self._aborted:
                    self._make_ready(child)
        elif status is Status.FAILED:
            graph.failures.append(result)
            if self.keep_going:
                self._skip_dependants(node)
            else:
                if self.error is None:
                    self.error = result
                self.abort()
        elif status is Status.SKIPPED:
            self._skip_dependants(node)
        graph.remaining -= 1
        node.graph = None  # settled: the graph no longer needs it (nor it the graph)
        if graph.remaining == 0:
            # a finished graph is not kept: its nodes (and their outputs) go with their owner
            self._graphs.pop(graph, None)
            if not graph.future.done():
                graph.future.set_result(None)

    def _skip_dependants(self, node: Node) -> None:
        for child in node.dependants:
            if child.result is None:
                self._settle(child, Status.SKIPPED, error=f"skipped: '{node.key}' did not succeed")

    def abort(self) -> None:
        """Fail-fast: cancel running nodes, and settle everything not started as cancelled."""
        if self._aborted:
            return
        self._aborted = True
        for task in list(self._tasks):
            task.cancel()
        self._ready.clear()
        self._blocked.clear()
        for graph in list(self._graphs):
            for node in graph.nodes:
                if node.result is None and node.task is None:
                    self._settle(node, Status.CANCELLED, error="not started: the run stopped")


def _notify(event: Callable[..., None], *args: Any) -> None:
    """Tell the observer (progress display, run store). Its failure (a display writing to a
    full or closed stderr) must not leave a node unsettled: the run would never end."""
    with contextlib.suppress(Exception):  # nothing to report it on; the result still is
        event(*args)


async def _call(node: Node) -> Any:
    """Await the node's body under its timeout, if it has one."""
    if node.timeout is None:
        return await node.body()
    deadline = asyncio.timeout(node.timeout)
    try:
        async with deadline:
            return await node.body()
    except TimeoutError:
        if deadline.expired():
            raise AccordError(f"timed out after {node.timeout:g} s") from None
        raise
