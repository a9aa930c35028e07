"""B14: 200 cases x 3 model-graded evaluators (`llm_judge` with score_choices, `accuracy`,
`correctness`), `echo` target, each evaluator `max_concurrency: 5`, judge = tests.fakes.FakeOpenAI
answering after 200 ms; the whole `accord eval` process run twice in one project folder.

Ideal makespan: each evaluator makes 200 calls, 5 at a time, 200 ms each: 200 / 5 * 0.2 = 8.0 s,
the three evaluators side by side (`--max-concurrency 50`, above their 15 slots): 8.0 s.
Targets (issue): makespan <= 1.10 x 8.0 s = 8.8 s on the first run; 0 judge calls reaching the
server on a second identical run (the call cache, `--cache on`, `.accord/cache.db`).

The fake runs in this process (its threads only; `accord eval` is a child process), with a
responder that answers each judge as it expects (a forced `select_answer` tool call, or a
PASS line), sleeps the latency itself and records per evaluator how many calls were in flight;
its listen backlog is 128 (socketserver's default of 5 would drop some of the first wave's
connections, each retried a second later: a harness artefact, not the engine's).
Makespan is given three ways: the run as the suite reports it (`seconds`: the engine's run,
litellm's import included: about 2.3 s here, on the first judge call, in a thread so that the
loop goes on; a run answered from the cache never imports it), the span of judge calls at the
fake (first arrival to last answer), and the whole process. The target is judged on the first
two.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _synthetic import machine_note, verdict  # noqa: E402

from tests.fakes import FakeOpenAI, Reply  # noqa: E402

N = 200
LATENCY = 0.2
PER_EVALUATOR = 5
EVALUATORS = ("polite", "accuracy", "correctness")
CONCURRENCY = 50
IDEAL = N / PER_EVALUATOR * LATENCY  # the evaluators run side by side
TARGET_RATIO = 1.10
ACCORD = Path(sys.executable).parent / "accord"


def suite_text(n: int) -> str:
    limit = f"max_concurrency: {PER_EVALUATOR}"
    lines = [
        "name: b14",
        "target: echo",
        "evaluators:",
        "  - type: llm_judge",
        "    name: polite",
        '    prompt: "Is this polite? {{ output }}"',
        '    score_choices: [{name: "Yes", value: 1}, {name: "Somewhat", value: 0.5}, '
        '{name: "No", value: 0}]',
        f"    {limit}",
        f"  - {{type: accuracy, {limit}}}",
        f"  - {{type: correctness, {limit}}}",
        "cases:",
    ]
    lines += [
        f"  - {{id: c{i}, input: 'good morning {i}', expected: 'good morning {i}'}}"
        for i in range(n)
    ]
    return "\n".join(lines) + "\n"


def config_text(url: str) -> str:
    return (
        "models:\n"
        "  - name: fake\n"
        "    model: openai/fake-model\n"
        f"    api_base: {url}\n"
        "    api_key: test-key\n"
        "defaults:\n"
        "  judge_model: fake\n"
    )


@dataclass
class Judges:
    """The fake's responder: a right-shaped answer per evaluator, after LATENCY, and per
    evaluator the calls in flight at once (the most seen) and the span of all calls."""

    live: dict[str, int] = field(default_factory=lambda: dict.fromkeys(EVALUATORS, 0))
    peak: dict[str, int] = field(default_factory=lambda: dict.fromkeys(EVALUATORS, 0))
    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(EVALUATORS, 0))
    first: float | None = None
    last: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            for name in EVALUATORS:
                self.live[name] = self.peak[name] = self.calls[name] = 0
            self.first = self.last = None

    @staticmethod
    def which(body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1].get("content") or "")
        if prompt.startswith("Is this polite?"):
            return "polite"
        if "accurate" in prompt:
            return "accuracy"
        return "correctness"

    def __call__(self, body: dict[str, Any]) -> Reply:
        name = self.which(body)
        with self.lock:
            now = time.perf_counter()
            self.first = now if self.first is None else self.first
            self.live[name] += 1
            self.calls[name] += 1
            self.peak[name] = max(self.peak[name], self.live[name])
        time.sleep(LATENCY)
        with self.lock:
            self.live[name] -= 1
            self.last = time.perf_counter()
        if "tools" in body:
            enum = body["tools"][0]["function"]["parameters"]["properties"]["answer"]["enum"]
            return Reply.tool("select_answer", {"reason": "it reads fine", "answer": enum[0]})
        return Reply(text="The answer states the expected facts.\nPASS")

    def span(self) -> float:
        return 0.0 if self.first is None or self.last is None else self.last - self.first


@dataclass
class Run:
    wall: float
    seconds: float
    judge_calls_reported: int
    requests: int
    span: float
    to_first: float  # process start to the first judge call at the fake
    peak: dict[str, int]
    calls: dict[str, int]
    passed: int
    cpu: float  # the accord process's CPU seconds
    fake_cpu: float  # this process's CPU seconds meanwhile (the fake's threads)


def run_eval(folder: Path, fake: FakeOpenAI, judges: Judges) -> Run:
    """One whole `accord eval` process, the call cache on."""
    judges.reset()
    before = len(fake.requests)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cpu, fake_cpu = children_cpu(), time.process_time()
    started = time.perf_counter()
    done = subprocess.run(
        [str(ACCORD), "eval", "b14.eval.yml", "--max-concurrency", str(CONCURRENCY), "-q",
         "--format", "json", "--output", "out.json", "--cache", "on"],
        cwd=folder, capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    wall = time.perf_counter() - started
    cpu, fake_cpu = children_cpu() - cpu, time.process_time() - fake_cpu
    if done.returncode != 0:
        raise SystemExit(f"accord eval failed ({done.returncode}): {done.stderr[-800:]}")
    suite = json.loads((folder / "out.json").read_text())["suites"][0]
    return Run(
        wall=wall,
        seconds=float(suite["seconds"]),
        judge_calls_reported=int(suite["judge_calls"]),
        requests=len(fake.requests) - before,
        span=judges.span(),
        to_first=0.0 if judges.first is None else judges.first - started,
        peak=dict(judges.peak),
        calls=dict(judges.calls),
        passed=int(suite["counts"]["passed"]),
        cpu=cpu,
        fake_cpu=fake_cpu,
    )


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def litellm_import() -> tuple[float, float]:
    """Wall and CPU seconds of the engine's litellm import (`load_litellm`) in a fresh
    process, beyond the interpreter's and the engine's own start."""
    code = (
        "import time, resource; from accord.engine.models import load_litellm; "
        "c = time.process_time(); t = time.perf_counter(); load_litellm(); "
        "print(time.perf_counter() - t, time.process_time() - c)"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    wall, cpu = (float(x) for x in out.stdout.split())
    return wall, cpu


def show(label: str, run: Run) -> None:
    print(
        f"{label}: suite run {run.seconds:.2f} s (ratio {run.seconds / IDEAL:.3f}); "
        f"whole process {run.wall:.2f} s, CPU {run.cpu:.2f} s (the fake, in this process: "
        f"{run.fake_cpu:.2f} s)"
    )
    if run.requests:
        print(
            f"  judge calls at the fake: first {run.to_first:.2f} s after the process started, "
            f"then {run.span:.2f} s from first arrival to last answer "
            f"(ratio {run.span / IDEAL:.3f})"
        )
    per = ", ".join(f"{n} {run.calls[n]} (peak {run.peak[n]} at once)" for n in EVALUATORS)
    print(
        f"  judge calls reaching the fake: {run.requests} [{per}]; the suite reports "
        f"judge_calls {run.judge_calls_reported}; {run.passed}/{N} cases passed"
    )


def main() -> int:
    print(
        f"B14 accord eval: {N} cases x {len(EVALUATORS)} model-graded evaluators "
        f"({', '.join(EVALUATORS)}), echo target, fake judge latency {LATENCY * 1e3:.0f} ms, "
        f"max_concurrency {PER_EVALUATOR} per evaluator, --max-concurrency {CONCURRENCY}"
    )
    print(f"machine: {machine_note()}")
    judges = Judges()
    fake = FakeOpenAI()
    fake.responder = judges
    try:
        with tempfile.TemporaryDirectory(prefix="accord-b14-") as tmp:
            folder = Path(tmp)
            (folder / "config.yml").write_text(config_text(fake.url))
            (folder / "b14.eval.yml").write_text(suite_text(N))
            first = run_eval(folder, fake, judges)
            second = run_eval(folder, fake, judges)
    finally:
        fake.close()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    import_wall, import_cpu = litellm_import()
    show("first run (cache empty)", first)
    show("second identical run (cache on)", second)
    print(f"peak RSS of accord eval: {peak:.0f} MiB; load average now {os.getloadavg()[0]:.2f}")
    calls = max(first.requests, 1)
    per_call = (first.cpu - second.cpu - import_cpu) / calls
    print(
        f"litellm's import (load_litellm) in a fresh process: {import_wall:.2f} s wall, "
        f"{import_cpu:.2f} s CPU; it happens inside the first run, on the first judge call. "
        f"CPU per judge call in the accord process (first run - second run - import) / calls: "
        f"{per_call * 1e3:.1f} ms"
    )
    print(
        f"ideal makespan {IDEAL:.1f} s ({N} calls / {PER_EVALUATOR} at once x "
        f"{LATENCY * 1e3:.0f} ms, evaluators side by side)"
    )
    ratio, calls_ratio = first.seconds / IDEAL, first.span / IDEAL
    print(
        f"target: makespan <= {TARGET_RATIO} x {IDEAL:.1f} s = {TARGET_RATIO * IDEAL:.2f} s; "
        f"the suite run (litellm's import included): {first.seconds:.2f} s, ratio {ratio:.3f}: "
        f"{verdict(ratio, TARGET_RATIO)}; the judge calls (first arrival to last "
        f"answer): {first.span:.2f} s, ratio "
        f"{calls_ratio:.3f}: {verdict(calls_ratio, TARGET_RATIO)}"
    )
    expected = N * len(EVALUATORS)
    print(
        f"first run: {first.requests} judge calls at the fake (expected {expected}): "
        f"{'MET' if first.requests == expected else 'MISSED'}"
    )
    print(
        f"target: 0 judge calls on the second run: {second.requests}: "
        f"{'MET' if second.requests == 0 else 'MISSED'}"
    )
    limits = all(p <= PER_EVALUATOR for r in (first, second) for p in r.peak.values())
    print(
        f"per-evaluator limit honoured (<= {PER_EVALUATOR} at once at the fake): "
        f"{'yes' if limits else 'NO'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
