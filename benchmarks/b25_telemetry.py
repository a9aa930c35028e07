"""B25: what a run's trace costs (engine/telemetry.py, docs/observability.md).

(a) a span's cost on the run's thread, alone: `RunTrace.node_started` + `node_finished` for
    N nodes (a span started, its attributes set, ended and queued for the batch processor);
(b) the whole engine path: B1's workflow of N formatter tasks (no-op nodes) run by
    engine.runner.execute with telemetry off, then on (an OTLP/HTTP receiver on 127.0.0.1 that
    keeps the request bodies, decoded once the timing is done), runs alternated; the
    difference per node is the cost of a node's span on a run, batching and export included
    (they share the process's 2 cores with the run).

Every span must reach the receiver (N + 1 per run), else exit 1.

Target: <= 100 us of CPU per span on the whole path (b), batching and OTLP encoding included
(OpenTelemetry's Python SDK alone spends tens of microseconds to start, end and encode a
span). Spans come from nodes and calls that do real work: a hosted model call takes hundreds
of milliseconds and a DuckDB query about a millisecond, so 100 us is under 0.1% of the one
and about a tenth of the other. On B1's empty nodes, the worst case, a trace multiplies the
engine's own ~25 us per node; that is what turning telemetry on costs such a run, and off it
costs nothing (B1 unchanged).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _synthetic import machine_note, random_dag, summary, verdict, write_project

from accord.engine import telemetry
from accord.engine.results import Status, TaskResult
from accord.engine.runner import RunOptions, compile_workflow, execute
from accord.engine.scheduler import Node

N = 10_000
RUNS = 5
CONCURRENCY = 16
TARGET_US = 100.0


class Collector:
    """An OTLP/HTTP receiver that keeps the bodies (decoded after the timing)."""

    def __init__(self) -> None:
        bodies: list[bytes] = []
        self.bodies = bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                bodies.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> int:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        count = 0
        for body in self.bodies:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    count += len(scope.spans)
        return count

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def alone(url: str) -> list[float]:
    """(a): seconds for N node spans, started and ended, per run."""
    spec = type("Spec", (), {"enabled": True, "endpoint": url, "protocol": None, "headers": {},
                             "headers_var": None, "service_name": None, "content": False,
                             "flush_timeout": 5.0})()  # fmt: skip
    out = []
    for run in range(RUNS):
        trace = telemetry.start_run(spec, f"b25-{run}", "b25", "b25.workflow.yml")
        assert trace is not None
        nodes = [
            Node(
                key=f"t{i}",
                name=f"t{i}",
                type="formatter",
                order=(i,),
                priority=0,
                body=lambda: asyncio.sleep(0),
            )
            for i in range(N)
        ]
        results = [
            TaskResult(key=n.key, type=n.type, status=Status.SUCCEEDED, attempts=1) for n in nodes
        ]
        gc.collect()
        start = time.perf_counter()
        for node, result in zip(nodes, results, strict=True):
            trace.node_started(node)
            trace.node_finished(node, result)
        out.append(time.perf_counter() - start)
        trace.finish()
    return out


def main() -> int:
    print(f"B25 telemetry: {N} no-op nodes (B1's workflow), {RUNS} runs each")
    print(f"machine: {machine_note()}")
    collector = Collector()
    try:
        a = alone(collector.url)
        telemetry.shutdown()
        print(f"(a) a node's span alone:        {summary(a, 1e6 / N, ' us/span')}")
        collector.bodies.clear()
        with tempfile.TemporaryDirectory(prefix="accord-b25-") as tmp:
            deps = random_dag(N)
            off_path = write_project(Path(tmp) / "off", deps)
            on_path = write_project(Path(tmp) / "on", deps)
            with (on_path.parent / "config.yml").open("a") as config:
                config.write(f"\ntelemetry:\n  endpoint: {collector.url}\n")
            off_project, off_plan = compile_workflow(off_path)
            on_project, on_plan = compile_workflow(on_path)
            times: dict[str, list[float]] = {"off": [], "on": []}
            cpu: dict[str, list[float]] = {"off": [], "on": []}
            for _ in range(RUNS):
                for name, project, plan in (("off", off_project, off_plan),
                                            ("on", on_project, on_plan)):  # fmt: skip
                    gc.collect()
                    start, began = time.perf_counter(), time.process_time()
                    options = RunOptions(max_concurrency=CONCURRENCY, store=False)
                    result = asyncio.run(execute(project, plan, options))
                    times[name].append(time.perf_counter() - start)
                    cpu[name].append(time.process_time() - began)
                    if result.status is not Status.SUCCEEDED:
                        raise SystemExit(f"run failed: {result.error}")
            flush = time.perf_counter()
            telemetry.shutdown()
            flush = time.perf_counter() - flush
        off_us = statistics.median(times["off"]) / N * 1e6
        on_us = statistics.median(times["on"]) / N * 1e6
        per_span = on_us - off_us
        cpu_span = (statistics.median(cpu["on"]) - statistics.median(cpu["off"])) / N * 1e6
        print(f"(b) engine path, telemetry off: {summary(times['off'], 1e6 / N, ' us/node')}")
        print(f"    engine path, telemetry on:  {summary(times['on'], 1e6 / N, ' us/node')}")
        print(
            f"    a node's span on a run: {per_span:.1f} us wall, {cpu_span:.1f} us CPU "
            f"(process, batching and export included); the last flush at exit {flush:.2f} s"
        )
        received, expected = collector.spans(), RUNS * (N + 1)
        print(f"    spans received: {received} of {expected}")
        print(f"target: <= {TARGET_US:.0f} us of CPU per span (b, medians)")
        print(f"(b) {cpu_span:.1f} us/span: {verdict(cpu_span, TARGET_US)}")
        return 0 if received == expected else 1
    finally:
        collector.close()


if __name__ == "__main__":
    sys.exit(main())
