"""B4: makespan of a 1,000-node DAG of 200 ms nodes at concurrency 50, against an ideal.

The DAG is random with a fixed seed (each node depends on 0-4 random nodes among the 200
before it). Each node sleeps 200 ms (asyncio.sleep). engine.scheduler.Scheduler runs it with
max_concurrency 50; the measured makespan is compared with
- a zero-overhead discrete-event simulation of the same policy: one ready queue ordered by
  highest longest-remaining-path first, then declaration order; 50 slots; every node 200 ms;
  a slot is refilled the instant it frees.                                  target ratio <= 1.05
- the lower bound max(critical path * 200 ms, total work / 50), for information.
"""

from __future__ import annotations

import asyncio
import gc
import heapq
import sys
import time

from _synthetic import longest_remaining_path, machine_note, random_dag, task_name, verdict

from accord.engine.results import Status
from accord.engine.scheduler import Node, Scheduler

N = 1_000
SLOTS = 50
DURATION = 0.2
TARGET_RATIO = 1.05


def simulate(deps: list[list[int]], priority: list[int]) -> float:
    """Makespan of the scheduler's policy with no overhead at all (event-driven)."""
    dependants: list[list[int]] = [[] for _ in deps]
    left = [len(d) for d in deps]
    for i, ds in enumerate(deps):
        for d in ds:
            dependants[d].append(i)
    ready = [(-priority[i], i) for i in range(len(deps)) if left[i] == 0]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []  # (finish time, node)
    now = 0.0
    done = 0
    while done < len(deps):
        while ready and len(running) < SLOTS:
            _, node = heapq.heappop(ready)
            heapq.heappush(running, (now + DURATION, node))
        now, node = heapq.heappop(running)
        finished = [node]
        while running and running[0][0] <= now:  # everything ending at this instant
            finished.append(heapq.heappop(running)[1])
        for node in finished:
            done += 1
            for child in dependants[node]:
                left[child] -= 1
                if left[child] == 0:
                    heapq.heappush(ready, (-priority[child], child))
    return now


async def _sleep() -> None:
    await asyncio.sleep(DURATION)


def measure(deps: list[list[int]], priority: list[int]) -> tuple[float, int]:
    """Wall seconds of Scheduler.run over the DAG, and the most nodes seen running at once."""

    async def main() -> tuple[float, int]:
        peak = 0
        running = 0

        class Peak:
            def node_started(self, node: Node) -> None:
                nonlocal peak, running
                running += 1
                peak = max(peak, running)

            def node_finished(self, node: Node, result: object) -> None:
                nonlocal running
                running -= 1

        nodes = [
            Node(
                key=task_name(i),
                name=task_name(i),
                type="sleep",
                order=(i,),
                priority=priority[i],
                body=_sleep,
                top_level=True,
            )
            for i in range(N)
        ]
        edges = [(nodes[d], nodes[i]) for i, ds in enumerate(deps) for d in ds]
        scheduler = Scheduler(max_concurrency=SLOTS, observer=Peak())
        start = time.perf_counter()
        await scheduler.run(nodes, edges)
        elapsed = time.perf_counter() - start
        ok = sum(1 for r in scheduler.results if r.status is Status.SUCCEEDED)
        if ok != N:
            raise SystemExit(f"only {ok} of {N} nodes succeeded")
        return elapsed, peak

    gc.collect()
    return asyncio.run(main())


def main() -> int:
    deps = random_dag(N)
    priority = longest_remaining_path(deps)
    critical = max(priority) * DURATION
    work = N * DURATION / SLOTS
    bound = max(critical, work)
    ideal = simulate(deps, priority)
    print(
        f"B4 makespan: {N} nodes of {DURATION * 1e3:.0f} ms, {sum(map(len, deps))} edges, "
        f"concurrency {SLOTS}"
    )
    print(
        f"critical path {max(priority)} nodes = {critical:.2f} s; total work / {SLOTS} = "
        f"{work:.2f} s; lower bound {bound:.2f} s"
    )
    print(f"machine: {machine_note()}")
    print(f"zero-overhead simulation of the same policy: {ideal:.3f} s")
    measured, peak = measure(deps, priority)
    ratio = measured / ideal
    print(f"measured makespan (Scheduler.run): {measured:.3f} s, peak running {peak}")
    print(f"ratio to the simulation:  {ratio:.4f}")
    print(
        f"ratio to the lower bound: {measured / bound:.4f} (simulation itself: {ideal / bound:.4f})"
    )
    print(f"target: ratio to the simulation <= {TARGET_RATIO}")
    print(f"ratio {ratio:.4f}: {verdict(ratio, TARGET_RATIO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
