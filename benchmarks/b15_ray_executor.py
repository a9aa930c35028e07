"""B15: 2,000 model calls (a workflow looping an agent task over 2,000 values) against the
fake server answering after 200 ms, at concurrency 200, call cache off: in process vs on a
local Ray cluster (2 CPUs). Prints each makespan, their ratio, and the driver's CPU per call
(the benchmark process is the driver; the fake server runs in a process of its own), then the
throughput the measured per-call costs give on paper for more workers.

Target (issue 18): on 2 cores Ray cannot beat the process; report what it costs per call and
how throughput would scale with workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CALLS, CONCURRENCY, LATENCY = int(os.environ.get("B15_CALLS", "2000")), 200, 0.2
SERVER = """
import sys, time
sys.path.insert(0, %r)
from tests.fakes import FakeOpenAI
fake = FakeOpenAI()
fake.latency = %r
fake.responder = lambda body: __import__("tests.fakes", fromlist=["Reply"]).Reply(text="ok")
print(fake.url, flush=True)
sys.stdin.read()
"""


def project(folder: Path, url: str) -> Path:
    (folder / "config.yml").write_text(
        f"models:\n  - name: fake\n    model: openai/fake-model\n    api_base: {url}\n"
        "    api_key: bench\n    max_retries: 0\n"
    )
    workflow = folder / "b15.workflow.yml"
    workflow.write_text(
        "tasks:\n  - name: ask\n    type: loop_sequential\n"
        f"    values: '{{{{ range({CALLS}) | list }}}}'\n    concurrency: {CONCURRENCY}\n"
        "    tasks:\n      - {name: answer, type: agent, model: fake,\n"
        "         prompt: 'question {{ value }}'}\n"
    )
    return workflow


def run(workflow: Path, executor: str) -> tuple[float, float]:
    """(makespan seconds, driver CPU seconds) of one `accord run` in this process."""
    import asyncio

    from accord.engine import executor as executors
    from accord.engine.runner import RunOptions, compile_workflow, execute

    project, plan = compile_workflow(workflow)
    options = RunOptions(max_concurrency=CONCURRENCY, cache_mode="off", executor=executor)
    cpu, wall = time.process_time(), time.perf_counter()
    result = asyncio.run(execute(project, plan, options))
    spent = time.perf_counter() - wall, time.process_time() - cpu
    executors.use(executors.LOCAL)
    if result.failed_task is not None:
        raise SystemExit(f"the {executor} run failed: {result.failed_task}")
    return spent


def main() -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER % (str(Path(__file__).resolve().parents[1]), LATENCY)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    import ray

    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = project(Path(tmp), url)
            from accord.engine.models import load_litellm

            load_litellm()
            run(suite, "local")  # warm-up: imports, first connections
            local = run(suite, "local")
            started = time.perf_counter()
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)  # fmt: skip
            boot = time.perf_counter() - started
            run(suite, "ray")  # warm-up: actors, workers' imports
            remote = run(suite, "ray")
    finally:
        ray.shutdown()
        server.terminate()
    floor = CALLS / CONCURRENCY * LATENCY
    print(f"B15 Ray executor: {CALLS} model calls, {LATENCY * 1000:.0f} ms each, concurrency "
          f"{CONCURRENCY}, cache off (floor {floor:.1f} s)")  # fmt: skip
    per_local = local[1] / CALLS * 1000
    per_ray = remote[1] / CALLS * 1000
    print(f"  in process:        {local[0]:6.2f} s makespan, driver CPU {per_local:.2f} ms/call")
    print(f"  local Ray cluster: {remote[0]:6.2f} s makespan, driver CPU {per_ray:.2f} ms/call "
          f"(cluster start {boot:.1f} s, not counted)")  # fmt: skip
    print(f"  makespan ratio Ray / in process: {remote[0] / local[0]:.2f}")
    # on paper: the driver dispatches at most 1 / (its CPU per call) calls a second; each worker
    # makes litellm's calls at about the in-process CPU per call (litellm's part of it)
    driver_rate = 1000 / per_ray
    worker_rate = 1000 / per_local
    print("  throughput on paper (calls/s) = min(concurrency / latency, driver, workers x each):")
    for workers in (1, 2, 4, 8, 16, 32):
        rate = min(CONCURRENCY / LATENCY, driver_rate, workers * worker_rate)
        print(f"    {workers:>2} workers: {rate:7.0f}")
    print("  target: report the cost per call and how throughput scales with workers")
    print(f"  load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
