"""B6: what the run store costs, and what resuming from it costs.

B1's graph: 10,000 formatter tasks (`template: "x"`), each depending on 0-4 random tasks among
the 200 before it (fixed seed), compiled once.

(a) Write overhead per task: engine.runner.execute with RunOptions(store=True) against
    store=False, runs interleaved; the difference of the medians divided by the task count.
    It covers everything the store adds: each task's input hash, the queue to the writer
    thread, the SQLite (WAL) rows, and the wait for the last commit at the end of the run.
    Target: <= 250 us per task.
(b) Resume overhead per 10,000 stored task results: engine.store.ResumeIndex built over the
    run's results, then every task key looked up with its input hash (each hit reads and
    unpickles the stored output). Target: <= 100 ms.
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _synthetic import machine_note, random_dag, summary, verdict, write_project

from accord.engine.results import Status
from accord.engine.runner import RunOptions, compile_workflow, execute
from accord.engine.store import ResumeIndex

N = 10_000
CONCURRENCY = 16  # the engine's default global limit
RUNS = 5
TARGET_WRITE_US = 250.0
TARGET_RESUME_MS = 100.0


def timed_run(project: object, plan: object, *, store: bool, run_id: str) -> float:
    options = RunOptions(max_concurrency=CONCURRENCY, store=store, run_id=run_id)
    gc.collect()
    start = time.perf_counter()
    result = asyncio.run(execute(project, plan, options))  # type: ignore[arg-type]
    seconds = time.perf_counter() - start
    if result.status is not Status.SUCCEEDED or len(result.results) != N:
        raise SystemExit(f"run {run_id} failed: {result.error}")
    return seconds


def stored_hashes(db: Path, run_id: str) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT key, input_hash FROM results WHERE run_id = ? AND output IS NOT NULL",
            (run_id,),
        ).fetchall()
    return [(str(k), str(h)) for k, h in rows]


def resume_lookup(db: Path, run_id: str, keys: list[tuple[str, str]]) -> tuple[float, float]:
    """Seconds to build the index, and to look every key up (all must hit)."""
    gc.collect()
    start = time.perf_counter()
    index = ResumeIndex(db, run_id)
    built = time.perf_counter()
    hits = sum(1 for key, digest in keys if index.lookup(key, digest)[0])
    done = time.perf_counter()
    index.close()
    if hits != len(keys):
        raise SystemExit(f"resume index: only {hits} of {len(keys)} stored results reused")
    return built - start, done - built


def main() -> int:
    deps = random_dag(N)
    print(
        f"B6 run store: {N} formatter tasks, {sum(len(d) for d in deps)} edges, "
        f"concurrency {CONCURRENCY}, {RUNS} runs each way, interleaved"
    )
    print(f"machine: {machine_note()}")
    with tempfile.TemporaryDirectory(prefix="accord-b6-") as tmp:
        path = write_project(Path(tmp), deps)
        project, plan = compile_workflow(path)
        db = Path(tmp) / ".accord" / "runs.db"

        with_store, without = [], []
        timed_run(project, plan, store=True, run_id="warm-up")
        for i in range(RUNS):
            without.append(timed_run(project, plan, store=False, run_id=f"plain-{i}"))
            with_store.append(timed_run(project, plan, store=True, run_id=f"stored-{i}"))
        write_us = (statistics.median(with_store) - statistics.median(without)) / N * 1e6
        print(f"(a) execute, store=False: {summary(without, 1e6 / N, ' us/task')}")
        print(f"    execute, store=True:  {summary(with_store, 1e6 / N, ' us/task')}")
        print(f"    store write overhead: {write_us:.1f} us/task (difference of the medians)")

        keys = stored_hashes(db, f"stored-{RUNS - 1}")
        if len(keys) != N:
            raise SystemExit(f"expected {N} stored results, found {len(keys)}")
        samples = [resume_lookup(db, f"stored-{RUNS - 1}", keys) for _ in range(RUNS)]
        build = [s[0] for s in samples]
        lookup = [s[1] for s in samples]
        total = [s[0] + s[1] for s in samples]
        resume_ms = statistics.median(total) * 1e3
        print(f"(b) ResumeIndex over {len(keys)} stored results: {summary(build, 1e3, ' ms')}")
        print(f"    every key looked up (and decoded): {summary(lookup, 1e3, ' ms')}")
        print(f"    resume overhead: {summary(total, 1e3, ' ms')}")

    print(f"target (a): store write <= {TARGET_WRITE_US:.0f} us/task (wall time, medians)")
    print(f"target (b): resume <= {TARGET_RESUME_MS:.0f} ms per {N} stored results (median)")
    print(f"(a) {write_us:.1f} us/task: {verdict(write_us, TARGET_WRITE_US)}")
    print(f"(b) {resume_ms:.1f} ms per {N} results: {verdict(resume_ms, TARGET_RESUME_MS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
