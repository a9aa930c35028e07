"""B13: 1,000 cases, `echo` target, one `contains` evaluator, concurrency 50: the whole
`accord eval` process (start-up included), its wall time and peak memory; and the engine's
time per case beyond the target's own.

Target (issue): <= 1.0 s wall and <= 150 MiB peak on the project's 2-core machine. Peers on
the same job and machine: promptfoo 0.118 2.5 s / 182 MiB, Inspect AI 0.3.285 10.7 s / 161 MiB.
Beside promptfoo, a third column: accord given the very promptfooconfig.yaml promptfoo runs
(issue 35), <= 1.0 s and below promptfoo's time, with the same verdicts (else exit 1).
Target (issue 46): accord's time <= 0.15x promptfoo's on the same job.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N = 1000
ACCORD = Path(sys.executable).parent / "accord"


def suite_text(n: int) -> str:
    lines = [
        "name: b13",
        "target: echo",
        "evaluators:",
        "  - {type: contains, value: hello}",
        "cases:",
    ]
    lines += [f"  - {{id: c{i}, input: hello {i}}}" for i in range(n)]
    return "\n".join(lines) + "\n"


def whole_process(folder: Path) -> tuple[float, float]:
    """(seconds, peak MiB) of one `accord eval` run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(
        [str(ACCORD), "eval", "b13.eval.yml", "--max-concurrency", "50", "-q", "--format", "json",
         "--output", "out.json", "--cache", "off"],
        cwd=folder, capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"accord eval failed ({done.returncode}): {done.stderr[-500:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024


def per_case(folder: Path) -> float:
    """Microseconds of engine time per case (target, evaluator and verdict nodes, store on)."""
    from accord.engine.runner import RunOptions
    from accord.tasks.suites.core.nodes import run_suite
    from accord.tasks.suites.frontends.evalfile import load_eval_file

    suite = load_eval_file(folder / "b13.eval.yml")
    started = time.perf_counter()
    asyncio.run(run_suite(suite, RunOptions(max_concurrency=50, cache_mode="off")))
    return (time.perf_counter() - started) / N * 1e6


def main() -> None:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode kept after a run
    with tempfile.TemporaryDirectory(prefix="accord-b13-") as tmp:
        folder = Path(tmp)
        (folder / "b13.eval.yml").write_text(suite_text(N))
        whole_process(folder)  # warm the file cache once
        runs = [whole_process(folder) for _ in range(3)]
        overhead = statistics.median(per_case(folder) for _ in range(3))
    seconds = statistics.median(r[0] for r in runs)
    peak = max(r[1] for r in runs)
    load = os.getloadavg()[0]
    print(f"B13 accord eval: {N} cases, echo target, contains, concurrency 50 (load {load:.2f})")
    print(f"  whole process: {seconds:.2f} s wall (median of 3), {peak:.0f} MiB peak RSS")
    print(f"  engine per case (3 nodes, run store on): {overhead:.0f} us")
    print("  target: <= 1.0 s and <= 150 MiB; and ahead of promptfoo on the same job:")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _model_eval import compare, met, now, ratio_target, report

    def pf_target(mine: tuple[float, float], theirs: tuple[float, float] | None) -> str:
        below = "" if theirs is None else f", below promptfoo's {met(mine[0] < theirs[0])}"
        return f"<= 1.0 s and below promptfoo's time: <= 1.0 s {met(mine[0] <= 1.0)}{below}"

    summary = compare(n=N, concurrency=50, runs=3, echo=True, promptfoo_config=True)
    report(f"B13 beside promptfoo ({now()})", f"{N} cases, each tool's echo target", summary,
           ratio_target(summary, 0.15), pf_target)  # fmt: skip


if __name__ == "__main__":
    main()
