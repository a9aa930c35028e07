"""Synthetic inputs shared by the benchmark scripts: random DAGs and the workflow files for them.

Not a benchmark itself (the leading underscore). Every generator takes a seed, so each script
measures the same graph on every run. Files are written into a folder the caller owns (a
temporary directory); nothing generated is kept in the repository.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

SEED = 20261121


def random_dag(
    n: int, *, max_deps: int = 4, window: int = 200, seed: int = SEED
) -> list[list[int]]:
    """`deps[i]`: 0 to `max_deps` distinct random nodes among the `window` nodes before `i`."""
    rng = random.Random(seed)
    deps: list[list[int]] = []
    for i in range(n):
        lo = max(0, i - window)
        k = min(rng.randint(0, max_deps), i - lo)
        deps.append(sorted(rng.sample(range(lo, i), k)))
    return deps


def task_name(i: int) -> str:
    return f"t{i:05d}"


def longest_remaining_path(deps: Sequence[Sequence[int]]) -> list[int]:
    """Longest path (in nodes) from each node to the end, itself included.

    The same definition the compiler uses for priorities; node order is already topological.
    """
    n = len(deps)
    dependants: list[list[int]] = [[] for _ in range(n)]
    for i, ds in enumerate(deps):
        for d in ds:
            dependants[d].append(i)
    priority = [1] * n
    for i in range(n - 1, -1, -1):
        if dependants[i]:
            priority[i] = 1 + max(priority[c] for c in dependants[i])
    return priority


def workflow_yaml(deps: Sequence[Sequence[int]], name: str = "synthetic") -> str:
    """A `.workflow.yml` of formatter tasks (`template: "x"`) with `depends_on` for the edges."""
    lines = [f"name: {name}", "tasks:"]
    for i, ds in enumerate(deps):
        lines.append(f"  - name: {task_name(i)}")
        lines.append("    type: formatter")
        lines.append('    template: "x"')
        if ds:
            lines.append(f"    depends_on: [{', '.join(task_name(d) for d in ds)}]")
    return "\n".join(lines) + "\n"


def write_project(folder: Path, deps: Sequence[Sequence[int]], name: str = "synthetic") -> Path:
    """A project folder (its own `config.yml`, so the root search stops here) and the file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yml").write_text("# synthetic benchmark project\ndefaults: {}\n")
    path = folder / f"{name}.workflow.yml"
    path.write_text(workflow_yaml(deps, name), encoding="utf-8")
    return path


def repeat(fn: Callable[[], object], times: int) -> list[float]:
    """Wall seconds of `times` calls of `fn`."""
    out = []
    for _ in range(times):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def summary(samples: Sequence[float], scale: float = 1.0, unit: str = "") -> str:
    """`median X (min Y, max Z) over N runs`, each sample multiplied by `scale`."""
    med = statistics.median(samples) * scale
    return (
        f"median {med:.1f}{unit} (min {min(samples) * scale:.1f}{unit}, "
        f"max {max(samples) * scale:.1f}{unit}) over {len(samples)} runs"
    )


def verdict(value: float, target: float) -> str:
    return "MET" if value <= target else "MISSED"


def machine_note() -> str:
    """The load when the run started: wall times on a shared, busy machine read high."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - platforms without getloadavg
        return f"{os.cpu_count()} cores"
    return f"{os.cpu_count()} cores, load average {load:.2f} at the start"
