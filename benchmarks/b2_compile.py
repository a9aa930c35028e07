"""B2: compiling a 10,000-task workflow from YAML to a validated Plan.

The same workflow as B1 (formatter tasks, depends_on edges, fixed seed). Measured:
- engine.runner.compile_workflow end to end (project + load + compile);       target <= 1.5 s
- its graph part: the dependency ordering with its cycle check and the priorities (and the
  networkx DiGraph build, in an engine that builds one);                        target <= 150 ms
  (timed inside engine.compile by wrapping those steps for the duration of each run);
- the split: YAML parse (with the line/column marks), pydantic validation, compile; each step
  timed inside the same compile_workflow calls by wrapping the engine's functions.
"""

from __future__ import annotations

import gc
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from _synthetic import machine_note, random_dag, summary, verdict, write_project

import accord.engine.compile as compile_module
import accord.engine.loader as loader_module
import accord.engine.project as project_module
import accord.engine.runner as runner_module
from accord.engine.runner import compile_workflow

N = 10_000
RUNS = 5
TARGET_TOTAL_S = 1.5
TARGET_GRAPH_MS = 150.0
GRAPH_STEPS = ("graph build", "order + cycle check", "priorities")


class _Clock:
    """Seconds spent in each wrapped step during one compile.

    `phase` names the outer step running now, so that an inner step (the YAML parser) is
    counted only where it serves the workflow file, not the project's config.yml.
    """

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.phase = ""

    def add(self, name: str, seconds: float) -> None:
        self.spent[name] = self.spent.get(name, 0.0) + seconds

    def wrap(self, name: str, fn: Any, *, phase: str | None = None, only_in: str = "") -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            outer = self.phase
            if phase is not None:
                self.phase = phase
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                if not only_in or outer == only_in:
                    self.add(name, time.perf_counter() - start)
                self.phase = outer

        return timed


@contextmanager
def split_clock(clock: _Clock) -> Any:
    """Time the project, the YAML parse and the whole load inside one compile_workflow call.

    Each function is wrapped where the engine looks it up (module attributes read at call
    time), so this follows the engine as it moves code between modules.
    """
    patches: list[tuple[Any, str, str, str | None, str]] = [
        (project_module, "load_project", "project", "project", ""),
        (compile_module, "load_workflow", "load", "load", ""),
        (loader_module, "read_text", "read file", None, "load"),
        (loader_module, "parse_yaml", "YAML parse + marks", None, "load"),
    ]
    for module in (runner_module, compile_module):  # a module-level `from ... import`
        if hasattr(module, "load_project"):
            patches.append((module, "load_project", "project", "project", ""))
    saved = _patch(clock, patches)
    try:
        yield clock
    finally:
        _restore(saved)


def _patch(clock: _Clock, patches: list[tuple[Any, str, str, str | None, str]]) -> list[Any]:
    """Wrap each (owner, attribute) that exists; return what to restore."""
    saved = []
    for owner, attr, name, phase, only_in in patches:
        if not hasattr(owner, attr):
            continue  # the engine no longer has this step
        saved.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, clock.wrap(name, getattr(owner, attr), phase=phase, only_in=only_in))
    return saved


def _restore(saved: list[Any]) -> None:
    for owner, attr, fn in reversed(saved):
        setattr(owner, attr, fn)


@contextmanager
def graph_clock(clock: _Clock) -> Any:
    """Time engine.compile's graph steps: the ordering with its cycle check, the priorities,
    and a networkx graph build where the engine builds one (restored after)."""
    saved = _patch(
        clock,
        [
            (compile_module._FileCompiler, "check_cycles", "order + cycle check", None, ""),
            (compile_module, "_priorities", "priorities", None, ""),
        ],
    )
    nx = getattr(compile_module, "nx", None)
    if nx is not None:  # an engine that still builds a networkx DiGraph per scope

        class TimedDiGraph(nx.DiGraph):  # type: ignore[misc, name-defined]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                start = time.perf_counter()
                super().__init__(*args, **kwargs)
                clock.add("graph build", time.perf_counter() - start)

            def add_nodes_from(self, *args: Any, **kwargs: Any) -> None:
                start = time.perf_counter()
                super().add_nodes_from(*args, **kwargs)
                clock.add("graph build", time.perf_counter() - start)

            def add_edges_from(self, *args: Any, **kwargs: Any) -> None:
                start = time.perf_counter()
                super().add_edges_from(*args, **kwargs)
                clock.add("graph build", time.perf_counter() - start)

        names = {k: getattr(nx, k) for k in dir(nx) if not k.startswith("__")}
        proxy = SimpleNamespace(**names)
        proxy.DiGraph = TimedDiGraph
        saved.append((compile_module, "nx", nx))
        compile_module.nx = proxy
    try:
        yield clock
    finally:
        _restore(saved)


def timed(fn: Any, *args: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def main() -> int:
    deps = random_dag(N)
    with tempfile.TemporaryDirectory(prefix="accord-b2-") as tmp:
        path = write_project(Path(tmp), deps)
        size_kb = path.stat().st_size / 1024
        print(
            f"B2 compile: {N} formatter tasks, {sum(map(len, deps))} depends_on edges, "
            f"{size_kb:.0f} KiB of YAML, {RUNS} runs each"
        )

        print(f"machine: {machine_note()}")
        # warm the caches a real `accord validate` also fills once per process
        # (the plugin registry and the pydantic discriminated union)
        loader_module.workflow_model()

        totals, cpus, graph_parts, parts = [], [], [], []
        for _ in range(RUNS):
            clock = _Clock()
            cpu = time.process_time()
            with graph_clock(clock), split_clock(clock):
                total, (_project, plan) = timed(compile_workflow, path)
            cpus.append(time.process_time() - cpu)
            if len(plan.tasks) != N:
                raise SystemExit(f"compiled {len(plan.tasks)} tasks, expected {N}")
            totals.append(total)
            spent = clock.spent
            graph_parts.append({k: spent[k] for k in GRAPH_STEPS if k in spent})
            load = spent["load"]
            parts.append(
                {
                    "project (config.yml)": spent["project"],
                    "read file": spent["read file"],
                    "YAML parse + marks": spent["YAML parse + marks"],
                    "pydantic validation": load - spent["read file"] - spent["YAML parse + marks"],
                    "compile (spec -> Plan)": total - spent["project"] - load,
                    "  of which graph part": sum(graph_parts[-1].values()),
                }
            )

        total_s = statistics.median(totals)
        graph_ms = statistics.median(sum(g.values()) for g in graph_parts) * 1e3
        print(f"compile_workflow end to end: {summary(totals, 1e3, ' ms')}")
        print(f"  CPU time (process):        {summary(cpus, 1e3, ' ms')}")
        print(
            "split inside the same calls (medians; validation is load minus read and parse,\n"
            "compile is the rest after the project and the load):"
        )
        for name in parts[0]:
            value = statistics.median(p[name] for p in parts) * 1e3
            print(f"  {name:<24} {value:8.1f} ms  ({value / (total_s * 1e3):5.1%})")
        print(f"graph part inside compile: median {graph_ms:.1f} ms")
        for name in [k for k in GRAPH_STEPS if k in graph_parts[0]]:
            value = statistics.median(g.get(name, 0.0) for g in graph_parts) * 1e3
            print(f"  {name:<24} {value:8.1f} ms")

    print(
        f"target: end to end <= {TARGET_TOTAL_S} s, graph part <= {TARGET_GRAPH_MS:.0f} ms "
        "(wall, median)"
    )
    print(f"end to end {total_s:.3f} s: {verdict(total_s, TARGET_TOTAL_S)}")
    print(f"graph part {graph_ms:.1f} ms: {verdict(graph_ms, TARGET_GRAPH_MS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
