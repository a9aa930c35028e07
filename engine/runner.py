"""The engine's front door: compile a workflow file and run it."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime as dt
import gc
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import executor, log, openai_wire, render, telemetry
from . import variables as workflow_variables
from .cache import check_cache
from .compile import compile_workflow as compile_workflow  # re-exported
from .context import RunContext, Scope, finished
from .errors import ConfigError, OutOfMemory
from .paths import shown_path
from .plan import Plan
from .project import Project
from .results import RunResult, Status, TaskResult
from .scheduler import Graph, Node, Observer, Scheduler, SlotPool
from .store import ResumeIndex, RunStore, find_run, runs_db

DEFAULT_CONCURRENCY = 16
# a run in parts submits its next part only while at most this many finished results wait
# for the run store's writer: results the scheduler produces faster than they reach the
# disk would otherwise all be held (B22: ~200 MB of 100,000 cases' results at the peak)
STORE_BACKLOG = 4096
STORE_WAIT = 0.005  # seconds between looks at the writer's backlog
RUN_GC_THRESHOLDS = (5000, 50, 100)  # Python's defaults are (700, 10, 10)


@dataclass
class RunOptions:
    """How to run: variables from the command line, failure policy, limits."""

    variables: dict[str, Any] = field(default_factory=dict)
    keep_going: bool = False
    max_concurrency: int | None = None
    run_id: str | None = None
    cache_mode: str = "on"
    resume: str | None = None
    store: bool = True
    # named limits beyond the databases' (an evaluator's max_concurrency, a suite's targets)
    limits: dict[str, int] = field(default_factory=dict)
    # the caller's list of this run's store: a caller stopped by Ctrl-C or SIGTERM records
    # the run as interrupted through it (`store.interrupt_runs`)
    open_stores: list[RunStore] = field(default_factory=list)
    # a global limit shared with other runs on the same event loop (`accord eval` of several
    # files); None: this run's `max_concurrency` alone
    pool: SlotPool | None = None
    # where node bodies do their work: `local`, `ray` (None: --executor, else config.yml's)
    executor: str | None = None
    ray_address: str | None = None
    # Oxy's row-level filter values (`--filter NAME=VALUE`); None: the run gives none
    filters: dict[str, Any] | None = None


class _Fanout:
    """Passes scheduler events to several observers (display, run store)."""

    def __init__(self, observers: list[Observer]) -> None:
        self.observers = observers

    def node_started(self, node: Node) -> None:
        for observer in self.observers:
            observer.node_started(node)

    def node_finished(self, node: Node, result: TaskResult) -> None:
        for observer in self.observers:
            observer.node_finished(node, result)


def _summary(result: RunResult) -> dict[str, Any]:
    return {
        "seconds": round(result.duration, 6),
        "tasks": result.counts(),
        "usage": result.usage.total.to_json() if result.usage is not None else None,
        "stats": result.stats,
        "failed_task": result.failed_task,
    }


GRAPH_TASKS = 500  # a run's stored summary keeps its top-level task graph up to this size


def _graph(plan: Plan, parts: PlanParts | None) -> dict[str, Any]:
    """The top-level tasks and what each waits for, for `accord view`'s picture of the run;
    nothing for a run in parts (an evaluation's cases) or a larger one."""
    if parts is not None or len(plan.tasks) > GRAPH_TASKS:
        return {}
    return {"graph": {t.name: list(t.deps) for t in plan.tasks}}


class _RunsUnderWay:
    """How many runs are under way on this thread's loop, and the collector's thresholds from
    before the first: runs of several eval files overlap, and only the last to end restores
    them."""

    count = 0
    thresholds: tuple[int, int, int] = (700, 10, 10)


def _gc_for_runs(change: int) -> None:
    if change > 0 and _RunsUnderWay.count == 0:
        _RunsUnderWay.thresholds = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(*RUN_GC_THRESHOLDS)
    _RunsUnderWay.count += change
    if change < 0 and _RunsUnderWay.count == 0:
        gc.set_threshold(*_RunsUnderWay.thresholds)
        gc.unfreeze()


def new_run_id() -> str:
    """Sortable and unique: `20261121-230412-3f9a1c`."""
    return f"{dt.datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def concurrency_for(project: Project, plan: Plan, options: RunOptions) -> int:
    """The global limit: the command line, else the workflow's cap, else config, else 16."""
    caps = [
        options.max_concurrency,
        getattr(plan.workflow, "max_concurrency", None),
        project.config.max_concurrency,
    ]
    given = [c for c in caps if c]
    if options.max_concurrency:
        return options.max_concurrency
    return min(given) if given else DEFAULT_CONCURRENCY


def executor_for(project: Project, options: RunOptions) -> executor.Executor:
    """The run's executor: the options', else the command line's, else config.yml's."""
    name, address = executor.chosen()
    name = options.executor or name or project.config.executor
    address = options.ray_address or address or project.config.ray_address
    if name == "local":
        return executor.LOCAL
    if name == "ray":
        from .ray_executor import RayExecutor

        return RayExecutor.connect(address, project)
    raise ConfigError(f"unknown executor '{name}': use local or ray")


def create_run_context(
    project: Project, plan: Plan, options: RunOptions, observer: Observer | None = None
) -> RunContext:
    """A run's context: its id, open databases, and one scheduler under the run's limits.

    The test runner uses it too, so every test of a file shares one scheduler.
    """
    run_id = options.run_id or new_run_id()
    render.use_template_cache(project.root)  # compiled templates kept across runs
    chosen = executor_for(project, options)
    executor.use(chosen)  # this run's node bodies (tasks started from here) find it
    databases = project.open_databases(options.filters)
    scheduler = Scheduler(
        max_concurrency=concurrency_for(project, plan, options),
        limits={**databases.limits(), **options.limits},
        keep_going=options.keep_going,
        observer=observer,
        pool=options.pool,
    )
    return RunContext(
        run_id=run_id,
        project=project,
        databases=databases,
        scheduler=scheduler,
        output_dir=project.root / ".accord" / "runs" / run_id,
        cache_mode=options.cache_mode,
        executor=chosen,
    )


@dataclass
class PlanParts:
    """A run's tasks given as parts (plans) run one after another in the one run, so that
    only a few parts are held at a time: a part is built when its turn comes near, and its
    nodes, outputs and results go once `harvest` has taken what the caller keeps of them (an
    evaluation of a million cases keeps each case's verdict, not its nodes).

    `ahead` parts are on the scheduler at once (the next one starts while the last nodes of
    the one before finish, so the slots stay busy). `harvest(part, outputs, results)` gets a
    finished part's outputs and results by task name, in the order the parts were given.
    """

    parts: Iterable[Plan]
    harvest: Callable[[Plan, dict[str, Any], dict[str, TaskResult]], None]
    ahead: int = 2


async def _run_parts(ctx: RunContext, scope: Scope, parts: PlanParts, tally: _Tally) -> None:
    ctx.scheduler.keep_results = False  # each part's results are read from its own nodes
    source = iter(parts.parts)
    running: collections.deque[tuple[Plan, dict[str, Node], Graph]] = collections.deque()

    def submit() -> None:
        part = next(source, None)
        if part is not None:
            running.append((part, *ctx.submit_plan(part, scope, top_level=True)))

    for _ in range(max(1, parts.ahead)):
        submit()
    while running:
        part, nodes, graph = running.popleft()
        await graph.future
        await _store_caught_up(ctx.store)
        submit()
        results = finished(nodes)
        del nodes
        outputs = {name: scope.values.pop(name) for name in results if name in scope.values}
        tally.add(results.values())
        parts.harvest(part, outputs, results)


async def _store_caught_up(store: RunStore | None) -> None:
    """Wait while the run store's writer is more than `STORE_BACKLOG` results behind (the
    parts on the scheduler go on running meanwhile)."""
    while store is not None and store.backlog > STORE_BACKLOG:
        await asyncio.sleep(STORE_WAIT)


class _Tally:
    """The counts of a run in parts, whose results are not kept."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.top_level_unfinished = False

    def add(self, results: Iterable[TaskResult]) -> None:
        for result in results:
            self.counts[result.status.value] = self.counts.get(result.status.value, 0) + 1
            if result.top_level and result.status is not Status.SUCCEEDED:
                self.top_level_unfinished = True


async def execute(
    project: Project,
    plan: Plan,
    options: RunOptions,
    observer: Observer | None = None,
    parts: PlanParts | None = None,
) -> RunResult:
    """Run a compiled plan to completion and collect its results (`parts`: its tasks come
    in parts, `plan` names the run and holds its variables)."""
    values = workflow_variables.resolve(
        plan.variables, options.variables, where=str(plan.path), lines=plan.variable_lines
    )
    run_id = options.run_id or new_run_id()
    store_path = runs_db(project.root)
    if options.cache_mode != "off":
        check_cache(project.root)
    openai_wire.client_choice()  # a misspelt ACCORD_MODEL_CLIENT: exit 2 before any task runs
    resume = None
    if options.resume:
        resume = ResumeIndex(store_path, find_run(store_path, options.resume).run_id)
    # the run's trace (None: telemetry off); a missing SDK stops the run before it starts
    trace = telemetry.start_run(
        project.config.telemetry, run_id, plan.name, plan.path,
        resume.run_id if resume is not None else None,
    )  # fmt: skip
    store = RunStore(store_path, run_id) if options.store else None
    if store is not None:
        options.open_stores.append(store)
    watchers = [w for w in (observer, store, trace) if w is not None]
    ctx = create_run_context(
        project, plan, dataclasses.replace(options, run_id=run_id), _Fanout(watchers)
    )
    ctx.store, ctx.resume = store, resume
    if store is not None:
        store.begin(plan.name, plan.path, values)
    scheduler = ctx.scheduler
    scope = Scope(dict(values))
    log.bind_context(run_id=run_id, workflow=plan.name)  # every node's messages carry these
    logger = log.get()
    logger.info("run_started", tasks=len(plan.tasks))
    started = time.perf_counter()
    # The compiled plan, the project and the libraries live as long as the run: keep them out
    # of the collector's scans while it runs (16 of B1's 35 us per node went to them), and
    # collect the young objects nodes leave less often (B1: 250 collections -> 38, 28 -> 22 us
    # per node). Both are undone when the run ends.
    _gc_for_runs(+1)
    tally = _Tally()
    try:
        if parts is None:
            await ctx.run_plan(plan, scope, top_level=True)
        else:
            await _run_parts(ctx, scope, parts, tally)
    except BaseException as exc:  # stopped (Ctrl-C, out of memory): the trace says so
        if trace is not None:
            trace.finish(error=exc)
        raise
    finally:
        _gc_for_runs(-1)
        ctx.close()
        if resume is not None:
            ctx.count("reused", resume.reused)
            resume.close()
    finished = time.perf_counter()
    outputs = {
        name: scope.values[name] for name in (t.name for t in plan.tasks) if name in scope.values
    }
    first = scheduler.error or scheduler.first_failure
    status = Status.FAILED if first is not None else Status.SUCCEEDED
    if tally.top_level_unfinished or any(
        r.status is not Status.SUCCEEDED for r in scheduler.results if r.top_level
    ):
        status = Status.FAILED
    result = RunResult(
        run_id=run_id,
        workflow=plan.name,
        status=status,
        results=scheduler.results,
        outputs=outputs,
        started=started,
        finished=finished,
        error=first.error if first else None,
        failed_task=first.key if first else None,
        usage=ctx.usage,
        stats=dict(ctx.stats),
        resumed_from=resume.run_id if resume is not None else None,
        earlier=tally.counts,
        files=[shown_path(p) for p in dict.fromkeys(ctx.written)],
    )
    if store is not None:
        store.finish(status.value, result.error, {**_summary(result), **_graph(plan, parts)})
    if trace is not None:
        trace.finish(result)
    logger.info("run_finished", status=status.value, seconds=round(result.duration, 3))
    if scheduler.out_of_memory is not None:
        raise OutOfMemory(scheduler.out_of_memory)
    return result


def run_workflow(
    file: str | Path, variables: dict[str, Any] | None = None, **options: Any
) -> RunResult:
    """Compile and run a workflow file from Python; `options` are `RunOptions` fields
    (`keep_going`, `max_concurrency`, `cache_mode`, `resume`, `store`). Raises `AccordError`
    for invalid input; a failed task is in the result, not raised."""
    import asyncio

    project, plan = compile_workflow(Path(file))
    run_options = RunOptions(variables=dict(variables or {}), **options)
    return asyncio.run(execute(project, plan, run_options))
