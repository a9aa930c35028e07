"""Tests on the minimal sub-DAG versus running the whole workflow per sample (what Oxy does).

A workflow of 1 SQL task and 20 agent tasks that each read it; 20 consistency tests, one per
agent task, n = 10 each. The model is the scripted OpenAI-compatible fake server with 200 ms
of latency per call, reached through litellm like any provider. Both modes run on accord's
test runner, one scheduler, the same concurrency limit and the same judge; they differ only
in what a sample runs:

- accord: the tested task and its ancestors (the SQL task and one agent task);
- whole workflow: every task of the workflow, for every sample of every test.

Printed: wall time and model calls of each, and the ratio.       target: >= 10x fewer calls
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _synthetic import machine_note, verdict  # noqa: E402

from accord.engine.runner import RunOptions  # noqa: E402
from tests.fakes import FakeOpenAI, Reply  # noqa: E402

TASKS, N, LATENCY, CONCURRENCY = 20, 10, 0.2, 32
TARGET_CALL_RATIO = 10.0
JUDGE = "S1: {{ submission_1 }}\\nS2: {{ submission_2 }}\\nAnswer A or B."


def workflow_yaml() -> str:
    lines = [
        f'consistency_prompt: "{JUDGE}"',
        "tasks:",
        "  - name: orders",
        "    type: execute_sql",
        "    database: shop",
        "    sql_query: SELECT region, SUM(amount) AS revenue FROM orders GROUP BY region",
    ]
    for i in range(TASKS):
        lines += [
            f"  - name: q{i:02d}",
            "    type: agent",
            f'    prompt: "Question {i}: which region leads? {{{{ orders }}}}"',
        ]
    lines.append("tests:")
    for i in range(TASKS):
        lines += ["  - type: consistency", f"    task_ref: q{i:02d}", f"    n: {N}"]
    return "\n".join(lines) + "\n"


def responder() -> Any:
    """Mostly one answer, sometimes another (so there is something to judge)."""
    counter = itertools.count()

    def respond(body: dict[str, Any]) -> Reply:
        text = str(body["messages"][-1]["content"])
        if text.startswith("S1: "):
            first, second = text[4:].split("\nS2: ", 1)
            same = first.split()[-1] == second.split("\n")[0].split()[-1]
            return Reply(text="A" if same else "B")
        return Reply(text="East leads with 1450." if next(counter) % 7 else "East leads, 1400.")

    return respond


def project(folder: Path, fake: FakeOpenAI) -> Path:
    (folder / "data").mkdir()
    (folder / "data" / "orders.csv").write_text("region,amount\nEast,1450\nWest,600\n")
    (folder / "config.yml").write_text(
        "databases:\n  - {name: shop, type: duckdb, dataset: data}\n"
        f"models:\n  - {{name: fake, model: openai/fake, api_base: '{fake.url}', "
        "api_key: k, max_retries: 0}\ndefaults: {model: fake}\n"
    )
    path = folder / "bench.workflow.yml"
    path.write_text(workflow_yaml())
    return path


def measure(path: Path, whole: bool) -> tuple[float, int, int, list[float]]:
    """Wall time, model calls, judge calls and accuracies of one `accord test` run."""
    from accord.tasks.suites.frontends.oxy.loading import prepare
    from accord.tasks.suites.testing import plan as testing

    suite = prepare(path)
    options = RunOptions(max_concurrency=CONCURRENCY, cache_mode="off")
    patch = mock.patch.object(testing, "sub_plan", lambda plan, ref: plan) if whole else None
    started = time.perf_counter()
    if patch is not None:
        with patch:
            result = asyncio.run(testing.run_suite(suite, options))
    else:
        result = asyncio.run(testing.run_suite(suite, options))
    seconds = time.perf_counter() - started
    judge_calls = sum(t.judge_calls for t in result.tests)
    accuracies = [t.accuracy.value for t in result.tests if t.accuracy is not None]
    return seconds, result.model_calls, judge_calls, accuracies


def main() -> int:
    from accord.engine.models import load_litellm

    load_litellm()  # its 2-5 s import is paid once, before either measurement
    fake = FakeOpenAI()
    fake.latency = LATENCY
    fake.responder = responder()
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = project(Path(folder), fake)
            print(
                f"B-tests: {TASKS} consistency tests of n = {N} on a workflow of 1 SQL task "
                f"and {TASKS} agent tasks; fake model {LATENCY * 1e3:.0f} ms per call; "
                f"concurrency {CONCURRENCY}"
            )
            print(f"machine: {machine_note()}")
            rows = [("accord (minimal sub-DAG)", False), ("whole workflow per sample", True)]
            figures = {}
            for label, whole in rows:
                seconds, calls, judges, accuracies = measure(path, whole)
                figures[whole] = (seconds, calls)
                mean = sum(accuracies) / len(accuracies) if accuracies else float("nan")
                print(
                    f"{label:28s} wall {seconds:7.2f} s   model calls {calls:5d} "
                    f"(judge {judges:3d})   mean accuracy {mean:.3f} over {len(accuracies)} tests"
                )
    finally:
        fake.close()
    (fast_s, fast_calls), (slow_s, slow_calls) = figures[False], figures[True]
    ratio = slow_calls / fast_calls
    print(f"calls ratio whole/accord: {ratio:.1f}x; wall-time ratio: {slow_s / fast_s:.1f}x")
    print(f"target: at least {TARGET_CALL_RATIO:.0f}x fewer model calls than the whole workflow")
    print(f"calls ratio {ratio:.1f}x: {verdict(-ratio, -TARGET_CALL_RATIO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
