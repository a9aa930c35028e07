"""RunContext (one per run) and TaskContext (one per running task).

`TaskContext.run_plan` turns a compiled Plan into scheduler nodes: it is how the top of a
workflow, a loop iteration, a branch and a sub-workflow all run on the same scheduler.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import log
from . import render as rendering
from .cache import CallCache, cache_db
from .catalog import ModelCatalog
from .databases import Database, Databases
from .errors import AccordError, TaskError
from .executor import LOCAL, Executor
from .kinds import task_type
from .models import ModelClient
from .paths import inside, refuse_overwrite, written_by_accord
from .pinned import read_pinned, write_pinned
from .plan import Plan, PlannedTask
from .project import Project
from .results import Status, TaskResult
from .retry import RetryPolicy
from .scheduler import NO_RETRY, Graph, Node, Scheduler
from .store import ResumeIndex, RunStore
from .usage import UsageLedger


class Scope:
    """Names visible to templates: this scope's own values over its parent's."""

    __slots__ = ("parent", "values")

    def __init__(self, values: dict[str, Any], parent: Scope | None = None) -> None:
        self.values = values
        self.parent = parent

    def get(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        raise KeyError(name)


@dataclass
class RunContext:
    """Everything one run shares: project, databases, scheduler, caches, counters."""

    run_id: str
    project: Project
    databases: Databases
    scheduler: Scheduler
    output_dir: Path
    started_at: dt.datetime = field(default_factory=lambda: dt.datetime.now().astimezone())
    cache_mode: str = "on"
    stats: dict[str, int] = field(default_factory=dict)
    store: RunStore | None = None
    resume: ResumeIndex | None = None
    written: list[Path] = field(default_factory=list)  # files the run wrote: exports, charts
    executor: Executor = field(default_factory=lambda: LOCAL)
    _models: ModelClient | None = None
    # by task, for as long as the task lives: a run in parts lets each part's tasks go
    _identities: weakref.WeakKeyDictionary[PlannedTask, tuple[frozenset[str], bytes]] = field(
        default_factory=weakref.WeakKeyDictionary
    )

    @property
    def root(self) -> Path:
        return self.project.root

    def models(self) -> ModelClient:
        """The run's model client, created on the first model call."""
        if self._models is None:
            cache = None
            if self.cache_mode != "off":
                cache = CallCache(cache_db(self.root))
            workers: Any = self.executor.model_transport()
            if self.project.config.model_workers:
                # deprecated, never silently ignored: engine/model_workers.py says why
                log.get().warning(
                    "model_workers_deprecated",
                    message="model_workers in config.yml has no effect and is deprecated: "
                    "model calls run in the run's own process, which was faster on every "
                    "machine measured (benchmark B18); remove the key",
                )
            self._models = ModelClient(
                ModelCatalog(self.project.config), cache, self.cache_mode, workers=workers
            )
            shared = self.executor.limiters()
            if shared is not None:
                self._models.limiters = shared
        return self._models

    def count(self, name: str, amount: int = 1) -> None:
        """Add to a run counter (judge calls made and saved, ...)."""
        self.stats[name] = self.stats.get(name, 0) + amount

    @property
    def usage(self) -> UsageLedger | None:
        """Model usage of the run so far (None when no model was called)."""
        return self._models.usage if self._models is not None else None

    def close(self) -> None:
        self.databases.close()
        if self._models is not None:
            self._models.close()

    def task_identity(self, task: PlannedTask) -> tuple[frozenset[str], bytes]:
        """The names a task's templates use and the digest of its spec, once per task (specs
        are frozen; a loop body's tasks are hashed once for all iterations)."""
        known = self._identities.get(task)
        if known is None:
            names: frozenset[str] = frozenset()
            for _loc, source in task.spec.templates():
                names |= rendering.referenced_names(source)
            spec_digest = hashlib.sha256(task.spec.model_dump_json().encode()).digest()
            known = self._identities[task] = (names, spec_digest)
        return known

    def builtins(self) -> dict[str, Any]:
        return {"current_date": self.started_at.date().isoformat()}

    async def run_plan(
        self,
        plan: Plan,
        scope: Scope,
        *,
        key_prefix: str = "",
        order_prefix: tuple[int, ...] = (),
        priority_base: int = 0,
        resources: tuple[str, ...] = (),
        top_level: bool = False,
    ) -> dict[str, TaskResult]:
        """Schedule every task of `plan` in `scope`; return their results by task name.

        Outputs land in `scope.values` as tasks succeed, so later templates see them.
        """
        nodes, graph = self.submit_plan(
            plan, scope, key_prefix=key_prefix, order_prefix=order_prefix,
            priority_base=priority_base, resources=resources, top_level=top_level,
        )  # fmt: skip
        await graph.future
        return finished(nodes)

    def submit_plan(
        self,
        plan: Plan,
        scope: Scope,
        *,
        key_prefix: str = "",
        order_prefix: tuple[int, ...] = (),
        priority_base: int = 0,
        resources: tuple[str, ...] = (),
        top_level: bool = False,
    ) -> tuple[dict[str, Node], Graph]:
        """Put every task of `plan` on the scheduler (`run_plan` without the wait): its nodes
        by task name, and the graph whose future is done when they all are."""
        nodes: dict[str, Node] = {}
        for task in plan.tasks:
            key = f"{key_prefix}{task.name}"
            tctx = TaskContext(
                self,
                task,
                plan,
                scope,
                key,
                (*order_prefix, task.order),
                priority_base + task.priority,
                resources,
            )
            spec = task.spec
            retry = spec.retry
            on_failure = task_type(task.type).on_failure
            node = Node(
                key=key,
                name=task.name,
                type=task.type,
                order=(*order_prefix, task.order),
                priority=priority_base + task.priority,
                body=tctx.execute,
                uses_slot=not task.container,
                resources=(() if task.container else (*tctx.resources(), *resources)),
                retry=RetryPolicy(retry.attempts, retry.backoff) if retry else NO_RETRY,
                timeout=spec.timeout,
                top_level=top_level,
                on_success=_store(scope, task.name),
                on_failure=None if on_failure is None else functools.partial(on_failure, task, key),
            )
            nodes[task.name] = node
        edges = [(nodes[dep], nodes[task.name]) for task in plan.tasks for dep in task.deps]
        return nodes, self.scheduler.submit(list(nodes.values()), edges)


def finished(nodes: Mapping[str, Node]) -> dict[str, TaskResult]:
    """The results of the nodes that have one, by task name."""
    return {name: node.result for name, node in nodes.items() if node.result is not None}


def _store(scope: Scope, name: str) -> Any:
    def store(output: Any) -> None:
        scope.values[name] = output

    return store


@dataclass
class TaskContext:
    """What a running task sees: its spec, its scope, and the run."""

    run: RunContext
    task: PlannedTask
    plan: Plan
    scope: Scope
    key: str
    order: tuple[int, ...]
    priority: int
    inherited_resources: tuple[str, ...]

    @property
    def root(self) -> Path:
        return self.run.root

    @property
    def name(self) -> str:
        return self.task.name

    def resources(self) -> tuple[str, ...]:
        dbs = self.run.databases
        spec = self.task.spec
        named = tuple(f"db:{dbs.resolve_name(name)}" for _, name in spec.databases())
        return (*named, *spec.limit_names())

    def values_of(self, names: Iterable[str]) -> dict[str, Any]:
        """The values these names have for this task (its scopes, then the builtins), without
        copying every scope: a run of n tasks would otherwise copy n outputs n times."""
        builtins = self.run.builtins()
        out: dict[str, Any] = {}
        for name in names:
            try:
                out[name] = self.scope.get(name)
            except KeyError:
                if name in builtins:
                    out[name] = builtins[name]
        return out

    def _values_for(self, source: str, extra: Mapping[str, Any] | None) -> dict[str, Any]:
        """Only the names the template uses: copying every output in scope for every render
        would make a run quadratic in its number of tasks."""
        names = rendering.referenced_names(source)
        values = self.values_of(names.difference(extra) if extra else names)
        if extra:
            values.update(extra)
        return values

    def render(self, source: str, extra: Mapping[str, Any] | None = None) -> str:
        if "{" not in source:
            return source
        # a render may use the task's whole timeout, at most the render budget
        return rendering.render(source, self._values_for(source, extra), self.task.spec.timeout)

    def evaluate(self, source: str, extra: Mapping[str, Any] | None = None) -> Any:
        return rendering.evaluate(source, self._values_for(source, extra))

    def holds(self, condition: str) -> bool:
        """Whether a conditional's `if:` expression (bare or in `{{ }}`) is true."""
        names = rendering.condition_names(condition)
        return rendering.evaluate_condition(condition, self.values_of(names))

    def evaluate_variables(self, variables: Mapping[str, Any]) -> dict[str, Any]:
        """A task's `variables`: each text value evaluated in this task's scope (keeping the
        type of a single `{{ expression }}`), any other value as it is."""
        return {
            name: self.evaluate(value) if isinstance(value, str) else value
            for name, value in variables.items()
        }

    def database(self, name: str | None) -> Database:
        return self.run.databases.get(self.run.databases.resolve_name(name))

    def path(self, relative: str, what: str = "path") -> Path:
        """A file the task reads: inside the project root, or `PathError`."""
        return inside(self.root, relative, what)

    def render_path(self, source: str, what: str) -> str:
        """A path template rendered; values filled in cannot pick another folder."""
        if "{" not in source:
            return source
        return rendering.render_path(source, self._values_for(source, None), what)

    def input_hash(self) -> str:
        """Hash of what decides this task's output: its spec, the files it reads, and the
        values of the names its templates use."""
        spec = self.task.spec
        names, spec_digest = self.run.task_identity(self.task)
        digest = hashlib.sha256(spec_digest)
        if names:
            values = self.values_of(names)
            digest.update(
                json.dumps(
                    {n: rendering.jsonable(values[n]) for n in sorted(names) if n in values},
                    sort_keys=True,
                    default=str,
                ).encode()
            )
        for _loc, relative in spec.sources():
            path = self.root / relative
            if "{" not in relative and path.is_file():
                digest.update(path.read_bytes())
        for path in spec.input_files(self.root):
            if path.is_file():
                digest.update(path.read_bytes())
        return digest.hexdigest()

    async def execute(self) -> Any:
        """Run the task type's coroutine (or reuse a resumed run's output), then its export;
        errors name the task."""
        kind = task_type(self.task.type)
        runner = kind.run
        run = self.run
        try:
            reused, output = False, None
            if not self.task.container and (run.store is not None or run.resume is not None):
                digest = self.input_hash()
                if run.store is not None:
                    run.store.input_hashes[self.key] = digest
                if run.resume is not None:
                    reused, output = run.resume.lookup(self.key, digest, kind.accepts)
                    if reused and run.store is not None:
                        run.store.reused.add(self.key)
            pinned = self.task.spec.cache
            pinned_path = None
            if not reused and pinned is not None and pinned.enabled and pinned.path:
                # a pinned cache is the project's own file (its SQL is meant to be edited):
                # inside the root, and not in accord's store
                pinned_path = inside(self.root, self.render_path(pinned.path, "cache path"),
                                     "cache path")  # fmt: skip
                refuse_overwrite(
                    pinned_path, self.root, "cache path", pinned.path, project_files=False
                )
                reused, output = read_pinned(pinned_path, self.input_hash(), self.key)
            if not reused:
                output = await runner(self.task, self)
                if pinned_path is not None:
                    write_pinned(pinned_path, output, self.input_hash())
            export = self.task.spec.export
            if export is not None:
                from .export import write_export

                target = self.render_path(export.path, "export path")
                path = written_by_accord(self.root, target, "export path")
                write_export(path, export.format, output, self.key)
                run.written.append(path)
            return output
        except TaskError:
            raise
        except AccordError as exc:
            raise TaskError(self.key, exc.text_in(self.key), permanent=exc.permanent) from None

    async def run_leaves(
        self,
        items: list[tuple[str, Callable[[], Awaitable[Any]]]],
        *,
        type: str,
        limits: list[tuple[str, ...]] | None = None,
    ) -> list[Any]:
        """Run bodies as leaf nodes of this task (each takes a slot, and the slots of its
        named `limits`); results in order.

        The bodies report their own failures in their results: a body that raises fails
        the run like any node.
        """
        nodes = [
            Node(
                key=f"{self.key}.{label}",
                name=label,
                type=type,
                order=(*self.order, index),
                priority=self.priority,
                body=body,
                resources=(*self.inherited_resources, *(limits[index] if limits else ())),
            )
            for index, (label, body) in enumerate(items)
        ]
        graph = self.run.scheduler.submit(nodes, [])
        await graph.future
        failed = [n.result for n in nodes if n.result and n.result.status is not Status.SUCCEEDED]
        if failed:
            raise TaskError(self.key, f"{failed[0].key}: {failed[0].error}")
        return [n.result.output if n.result else None for n in nodes]

    async def run_child(
        self,
        plan: Plan,
        values: dict[str, Any],
        *,
        label: str,
        index: int,
        isolated: bool = False,
    ) -> dict[str, Any]:
        """Run a nested plan (loop iteration, branch, sub-workflow) and return its outputs.

        Raises `TaskError` naming the first child that failed.
        """
        parent = None if isolated else self.scope
        scope = Scope(dict(values), parent)
        results = await self.run.run_plan(
            plan,
            scope,
            key_prefix=f"{self.key}{label}.",
            order_prefix=(*self.order, index),
            priority_base=self.priority,
            resources=self.inherited_resources,
        )
        failed = [r for r in results.values() if r.status is Status.FAILED]
        if failed:
            raise TaskError(self.key, f"{failed[0].key}: {failed[0].error}")
        not_done = [r for r in results.values() if r.status is not Status.SUCCEEDED]
        if not_done:
            raise TaskError(self.key, f"{not_done[0].key} {not_done[0].status.value}")
        return {name: scope.values[name] for name in (t.name for t in plan.tasks)}
