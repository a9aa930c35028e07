"""B16: what `accord run` costs per formatter task beyond `accord validate`.

A generated workflow of 2,000 formatter tasks, each with its own template that uses the
outputs of up to 4 earlier tasks (`{{ t00012 }}`, `{{ t00034 | length }}`), compiled once
(that part is what `validate` does too), then run in-process by engine.runner.execute with
the run store off. Every template is rendered once; each is distinct, so nothing is shared
between tasks, and Jinja must compile each one into Python code.

Target (issue 10): <= 150 us per task beyond validate.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _synthetic import machine_note, random_dag, task_name, verdict

from accord.engine.results import Status
from accord.engine.runner import RunOptions, compile_workflow, execute

N = 2_000
RUNS = 5
TARGET_US = 150.0


def workflow(deps: list[list[int]]) -> str:
    lines = ["name: templates", "tasks:"]
    for i, ds in enumerate(deps):
        parts = [f"task {i}:"]
        for k, d in enumerate(ds):
            parts.append(
                f"{{{{ {task_name(d)} }}}}" if k % 2 == 0 else f"{{{{ {task_name(d)} | length }}}}"
            )
        lines.append(f"  - name: {task_name(i)}")
        lines.append("    type: formatter")
        lines.append(f'    template: "{" ".join(parts)}"')
    return "\n".join(lines) + "\n"


def main() -> int:
    deps = random_dag(N, max_deps=4, window=50)
    compile_s, run_s = [], []
    with tempfile.TemporaryDirectory(prefix="accord-b16-") as tmp:
        folder = Path(tmp)
        (folder / "config.yml").write_text("defaults: {}\n")
        path = folder / "templates.workflow.yml"
        path.write_text(workflow(deps), encoding="utf-8")
        for _ in range(RUNS):
            # a fresh process would start with empty template caches: clear them
            from accord.engine import render

            for cached in (render._parse, render.compile_template, render.referenced_names):
                cached.cache_clear()
            gc.collect()
            start = time.perf_counter()
            project, plan = compile_workflow(path)
            compiled = time.perf_counter()
            result = asyncio.run(execute(project, plan, RunOptions(store=False)))
            done = time.perf_counter()
            if result.status is not Status.SUCCEEDED:
                raise SystemExit(f"run failed: {result.error}")
            compile_s.append(compiled - start)
            run_s.append(done - compiled)
    per_task = statistics.median(run_s) / N * 1e6
    print(f"B16 run beyond validate ({N} formatter tasks, distinct templates, store off)")
    print(f"machine: {machine_note()}")
    print(
        f"load + compile (what validate does): median {statistics.median(compile_s) * 1e3:.0f} ms"
    )
    print(
        f"run: median {statistics.median(run_s) * 1e3:.0f} ms over {RUNS} runs "
        f"(min {min(run_s) * 1e3:.0f} ms) = {per_task:.0f} us per task"
    )
    print(f"target: <= {TARGET_US:.0f} us per task beyond validate")
    print(f"{per_task:.0f} us per task: {verdict(per_task, TARGET_US)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
