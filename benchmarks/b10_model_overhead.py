"""B10: CPU per model call: litellm's own, the engine's on top of it, and a cache hit.

Sequential calls (one at a time) with distinct prompts to tests.fakes.FakeOpenAI with zero
latency, CPU measured with time.process_time (every thread of this process: litellm runs its
success callbacks on executor threads, and they are part of what a call costs):
(a) litellm.acompletion directly, with the very arguments the engine passes;
(b) engine.models.ModelClient.complete, cache off (the engine's whole path around (a): model
    resolution, parameters, the cache key, limiter check, timeout guard, the Completion with
    its cost, usage accounting);
(c) ModelClient.complete answered from a warmed call cache (mode "on", SQLite in a temp dir);
(d) for information, (b) with litellm.acompletion replaced by a stub returning a recorded
    response: the engine's own work measured directly, without litellm's noise around it.
The fake runs in a child process so that its own CPU (parsing, threads, JSON) is not counted.
(a) and (b) alternate in rounds so that drift on a shared machine hits both alike.
Target: engine overhead (b) - (a) <= 0.5 ms of CPU per call, judged on the median of the paired
rounds (robust to a neighbour's burst of load landing in one round); the mean is printed too.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _synthetic import machine_note, verdict  # noqa: E402

from accord.engine.cache import CallCache  # noqa: E402
from accord.engine.models import ModelCatalog, ModelClient, load_litellm  # noqa: E402
from accord.engine.spec import ConfigSpec, ModelSpec  # noqa: E402

CALLS = 1_000
ROUNDS = 20
WARMUP = 30
TARGET_MS = 0.5

# The fake in its own process; its handler sends headers and body in two writes, so Nagle's
# algorithm plus the client's delayed ACK would add ~40 ms to every answer: switch Nagle off.
_SERVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.fakes import FakeOpenAI
fake = FakeOpenAI()
fake.latency = float(sys.argv[2])
fake.server.RequestHandlerClass.disable_nagle_algorithm = True
print(fake.url, flush=True)
sys.stdin.read()
"""

Call = Callable[[int], Awaitable[Any]]


@contextmanager
def child_server(script: str, *args: str) -> Iterator[str]:
    """Run a server script in a child process; yield the URL it prints first; stop it by
    closing its stdin."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit("the fake server did not start")
        yield url
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def fake_server(latency: float = 0.0) -> Iterator[str]:
    """Start FakeOpenAI in a child process; yield its URL."""
    with child_server(_SERVER, str(ROOT), str(latency)) as url:
        yield url


def catalog(url: str) -> ModelCatalog:
    spec = ModelSpec(name="fake", model="openai/fake-model", api_base=url, api_key="test")
    return ModelCatalog(ConfigSpec(models=[spec]))


def messages(i: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"question number {i}: how many orders last week?"}]


async def measure(call: Call, start: int, count: int) -> tuple[float, float]:
    """CPU and wall seconds of `count` sequential calls."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(start, start + count):
        await call(i)
    return time.process_time() - cpu, time.perf_counter() - wall


def profiler() -> cProfile.Profile:
    """A profiler on the thread's CPU clock: time blocked in epoll or preempted is not counted."""
    return cProfile.Profile(time.thread_time)


async def run_profiled(label: str, call: Call, start: int, count: int) -> None:
    """Profile `count` sequential calls and print the hotspots."""
    prof = profiler()
    prof.enable()
    for i in range(start, start + count):
        await call(i)
    prof.disable()
    print_profile(prof, f"{label}, {count} calls")


def print_profile(prof: cProfile.Profile, label: str, top: int = 15) -> None:
    """Own CPU time by package and by function, and the engine's functions, cumulative.

    Built-ins (isinstance, socket.send, ...) are charged to the package of their caller.
    """
    raw: dict[tuple[str, int, str], Any] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in raw.values()) or 1.0
    packages: dict[str, float] = {}
    for (path, _, _), (_, _, own, _, callers) in raw.items():
        if path == "~" and callers:
            for (caller, _, _), timing in callers.items():
                packages[_package(caller)] = packages.get(_package(caller), 0.0) + timing[2]
        else:
            packages[_package(path)] = packages.get(_package(path), 0.0) + own
    ranked = sorted(packages.items(), key=lambda item: -item[1])
    print(f"profile of {label}: {total:.2f} s of CPU on the loop's thread (cProfile inflates it)")
    print("  own time by package: " + ", ".join(f"{n} {t / total:.0%}" for n, t in ranked[:8]))
    print("  top functions by own time:")
    for (path, line, name), entry in sorted(raw.items(), key=lambda item: -item[1][2])[:top]:
        print(f"    {entry[2] / total:6.1%}  {name}  {_short(path)}:{line}")
    print("  engine/ functions by cumulative time (with what they call):")
    for (path, line, name), entry in sorted(raw.items(), key=lambda item: -item[1][3]):
        if f"{os.sep}engine{os.sep}" in path and entry[3] / total >= 0.005:
            print(f"    {entry[3] / total:6.1%}  {name}  {_short(path)}:{line}")


def _package(path: str) -> str:
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if path.startswith(f"{ROOT}{os.sep}"):
        return path[len(str(ROOT)) + 1 :].split(os.sep, 1)[0]
    if path == "~":
        return "built-ins"
    return "stdlib"


def _short(path: str) -> str:
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1]
    if path.startswith(f"{ROOT}{os.sep}"):
        return path[len(str(ROOT)) + 1 :]
    return re.sub(r"^.*/lib/python3\.\d+/", "", path)


async def main_async(url: str, cache_dir: Path) -> tuple[float, float, float, float]:
    litellm = load_litellm()  # the engine's settings (quiet, no retries) apply to (a) too
    # (b)-(d) measure the engine around litellm; (e) the lean OpenAI client (engine/openai_wire)
    os.environ["ACCORD_MODEL_CLIENT"] = "litellm"
    plain = ModelClient(catalog(url), cache=None, mode="off")
    cached = ModelClient(catalog(url), cache=CallCache(cache_dir / "cache.db"), mode="on")
    model = plain.catalog.resolve("fake")

    async def raw(i: int) -> Any:
        return await litellm.acompletion(
            model=model.litellm_model,
            messages=messages(i),
            timeout=model.timeout,
            num_retries=0,
            max_retries=0,
            api_base=model.api_base,
            api_key=model.api_key,
        )

    async def engine(i: int) -> Any:
        return await plain.complete("fake", messages(i), task="b10")

    async def hit(i: int) -> Any:
        completion = await cached.complete("fake", messages(i), task="b10")
        if not completion.cached:
            raise SystemExit(f"call {i} missed the warmed cache")
        return completion

    for i in range(WARMUP):
        await raw(-1 - i)
        await engine(-1 - i)
    per_round = CALLS // ROUNDS
    cpu_a: list[float] = []
    cpu_b: list[float] = []
    wall_a: list[float] = []
    wall_b: list[float] = []
    for r in range(ROUNDS):
        first, second = (raw, engine) if r % 2 == 0 else (engine, raw)
        for call in (first, second):
            cpu, wall = await measure(call, r * per_round, per_round)
            (cpu_a if call is raw else cpu_b).append(cpu)
            (wall_a if call is raw else wall_b).append(wall)

    for i in range(CALLS):  # warm the cache: these go to the fake once
        await cached.complete("fake", messages(i), task="b10")
    cpu_c, wall_c = await measure(hit, 0, CALLS)
    cached.close()

    # (d) the engine's path alone: acompletion replaced by a stub returning a recorded answer
    recorded = await raw(-100)
    real = litellm.acompletion

    async def stub(**kwargs: Any) -> Any:
        return recorded

    litellm.acompletion = stub
    try:
        cpu_d, _ = await measure(engine, 0, CALLS)
    finally:
        litellm.acompletion = real

    os.environ["ACCORD_MODEL_CLIENT"] = "lean"
    for i in range(WARMUP):
        await engine(-1000 - i)
    cpu_e, wall_e = await measure(engine, 30_000, CALLS)
    os.environ["ACCORD_MODEL_CLIENT"] = "litellm"

    a = sum(cpu_a) / CALLS * 1e3
    b = sum(cpu_b) / CALLS * 1e3
    c = cpu_c / CALLS * 1e3
    print(f"(a) litellm.acompletion directly:     {a:.3f} ms CPU per call", end="")
    print(f"  (wall {sum(wall_a) / CALLS * 1e3:.3f} ms)")
    print(f"(b) ModelClient.complete, cache off:  {b:.3f} ms CPU per call", end="")
    print(f"  (wall {sum(wall_b) / CALLS * 1e3:.3f} ms)")
    print(f"(c) ModelClient.complete, cache hit:  {c:.3f} ms CPU per call", end="")
    print(f"  (wall {wall_c / CALLS * 1e3:.3f} ms)")
    d = cpu_d / CALLS * 1e3
    print(f"(d) ModelClient.complete, acompletion stubbed: {d:.3f} ms CPU per call (the engine's")
    print("    own work, litellm.completion_cost included; for information)")
    e = cpu_e / CALLS * 1e3
    print("(e) ModelClient.complete, cache off, the lean OpenAI client (the default for openai/):")
    wall = wall_e / CALLS * 1e3
    print(f"    {e:.3f} ms CPU per call (wall {wall:.3f} ms), engine and HTTP together")
    rounds = [(y - x) / per_round * 1e3 for x, y in zip(cpu_a, cpu_b, strict=True)]
    print(
        f"    (b) - (a) over {ROUNDS} paired rounds of {per_round}: median "
        f"{statistics.median(rounds):.3f} ms (min {min(rounds):.3f}, max {max(rounds):.3f})"
    )
    overhead = statistics.median(rounds)
    if overhead > TARGET_MS:
        await run_profiled("(b) ModelClient.complete", engine, 10_000, 300)
        await run_profiled("(a) litellm.acompletion", raw, 20_000, 300)
    return a, b, c, overhead


def main() -> int:
    print(
        f"B10 model-call CPU overhead: {CALLS} sequential calls each, zero-latency fake "
        f"(tests.fakes.FakeOpenAI in a child process), {ROUNDS} alternating rounds of (a)/(b)"
    )
    print(f"machine: {machine_note()}")
    with fake_server() as url, tempfile.TemporaryDirectory(prefix="accord-b10-") as tmp:
        a, b, c, overhead = asyncio.run(main_async(url, Path(tmp)))
    print(
        f"engine overhead (b) - (a): {overhead:.3f} ms CPU per call "
        f"(median of paired rounds; difference of the means {b - a:.3f} ms)"
    )
    print(f"litellm's own CPU (a): {a:.3f} ms per call; a cache hit (c) costs {c:.3f} ms")
    print(f"target: engine overhead <= {TARGET_MS} ms per call: {verdict(overhead, TARGET_MS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
