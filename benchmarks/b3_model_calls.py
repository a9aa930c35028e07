"""B3: makespan of 1,000 independent model calls, 200 ms each, at concurrency 50.

engine.scheduler.Scheduler(max_concurrency=50) runs one Node per call; each body awaits
engine.models.ModelClient.complete (cache off) with a distinct prompt, so the real model path
runs (HTTP, JSON, cost: the lean OpenAI client for this `openai/` model, litellm in (7))
against tests.fakes.FakeOpenAI answering after 200 ms.
Ideal makespan: 1,000 / 50 * 200 ms = 4.0 s.                        target: ratio <= 1.05

Runs:
(1) the fake in this process, as the tests use it (its threads share the GIL with the loop);
(2) the same fake in a child process, so only the engine's own CPU is in this process;
controls, each once, with the fake in a child process:
(3) litellm.acompletion with the engine's arguments under an asyncio.Semaphore(50): no
    scheduler, no ModelClient;
(4) a plain aiohttp client: what the fake itself can serve at concurrency 50.
The fake's handler writes headers and body separately; with Nagle's algorithm on, the client's
delayed ACK adds ~40 ms to every answer, so the benchmark switches Nagle off on the fake.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
from _synthetic import machine_note, verdict  # noqa: E402
from b10_model_overhead import child_server, fake_server, print_profile, profiler  # noqa: E402

from accord.engine.models import ModelCatalog, ModelClient, load_litellm  # noqa: E402
from accord.engine.results import Status  # noqa: E402
from accord.engine.scheduler import Node, Scheduler  # noqa: E402
from accord.engine.spec import ConfigSpec, ModelSpec  # noqa: E402
from tests.fakes import FakeOpenAI  # noqa: E402

N = 1_000
SLOTS = 50
LATENCY = 0.2
IDEAL = N / SLOTS * LATENCY
TARGET_RATIO = 1.05
RUNS = 3


def make_client(url: str) -> ModelClient:
    spec = ModelSpec(name="fake", model="openai/fake-model", api_base=url, api_key="test")
    return ModelClient(ModelCatalog(ConfigSpec(models=[spec])), cache=None, mode="off")


def prompt(run: int, i: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"run {run}, question {i}: how many orders last week?"}]


async def engine_run(client: ModelClient, run: int) -> tuple[float, float]:
    """Makespan and CPU seconds of N calls through the Scheduler and ModelClient."""

    def node(i: int) -> Node:
        key = f"call_{i:04d}"

        async def body() -> Any:
            return await client.complete("fake", prompt(run, i), task=key)

        return Node(key=key, name=key, type="agent", order=(i,), priority=1, body=body)

    nodes = [node(i) for i in range(N)]
    scheduler = Scheduler(max_concurrency=SLOTS)
    gc.collect()
    cpu, start = time.process_time(), time.perf_counter()
    await scheduler.run(nodes, [])
    makespan, cpu = time.perf_counter() - start, time.process_time() - cpu
    failed = [r for r in scheduler.results if r.status is not Status.SUCCEEDED]
    if failed:
        raise SystemExit(f"{len(failed)} calls failed, e.g. {failed[0].key}: {failed[0].error}")
    return makespan, cpu


async def bounded(call: Callable[[int], Awaitable[Any]]) -> tuple[float, float]:
    """Makespan and CPU seconds of N calls of `call` under a semaphore of SLOTS."""
    gate = asyncio.Semaphore(SLOTS)

    async def one(i: int) -> Any:
        async with gate:
            return await call(i)

    gc.collect()
    cpu, start = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(N)))
    return time.perf_counter() - start, time.process_time() - cpu


async def raw_litellm(client: ModelClient) -> tuple[float, float]:
    litellm = load_litellm()
    model = client.catalog.resolve("fake")

    async def call(i: int) -> Any:
        return await litellm.acompletion(
            model=model.litellm_model,
            messages=prompt(-1, i),
            timeout=model.timeout,
            num_retries=0,
            max_retries=0,
            api_base=model.api_base,
            api_key=model.api_key,
        )

    return await bounded(call)


async def plain_aiohttp(url: str) -> tuple[float, float]:
    async with aiohttp.ClientSession() as session:

        async def call(i: int) -> Any:
            body = {"model": "fake-model", "messages": prompt(-2, i)}
            async with session.post(f"{url}/chat/completions", json=body) as response:
                return await response.json()

        return await bounded(call)


async def engine_runs(url: str, label: str, path: str = "lean") -> list[float]:
    """The engine's runs with `openai/` models on `path` (ACCORD_MODEL_CLIENT)."""
    os.environ["ACCORD_MODEL_CLIENT"] = path
    client = make_client(url)
    # import litellm (on its path) and make a first call
    await asyncio.gather(
        *(client.complete("fake", prompt(-3, i), task="warm-up") for i in range(SLOTS))
    )
    spans = []
    for run in range(RUNS):
        makespan, cpu = await engine_run(client, run)
        spans.append(makespan)
        print(
            f"{label} run {run + 1}: makespan {makespan:.2f} s, ratio {makespan / IDEAL:.3f}, "
            f"CPU in this process {cpu:.2f} s ({cpu / N * 1e3:.2f} ms per call)"
        )
    return spans


async def profiled_run(url: str) -> None:
    client = make_client(url)
    await client.complete("fake", prompt(-4, 0), task="warm-up")
    prof = profiler()
    prof.enable()
    await engine_run(client, 99)
    prof.disable()
    print_profile(prof, f"one engine run of {N} calls (fake in a child process)")


_AIOHTTP_SERVER = """
import asyncio, json, sys, time
from aiohttp import web

latency = float(sys.argv[1])

async def chat(request):
    body = await request.json()
    await asyncio.sleep(latency)
    text = "answer"
    return web.json_response({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    })

async def main():
    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await runner.cleanup()

asyncio.run(main())
"""


@contextlib.contextmanager
def asyncio_fake_server(latency: float) -> Iterator[str]:
    """An OpenAI-compatible fake on aiohttp's event loop, in a child process: unlike the
    thread-per-request test server it answers 50 concurrent calls without queueing."""
    with child_server(_AIOHTTP_SERVER, str(latency)) as url:
        yield url


def main() -> int:
    print(
        f"B3 model calls: {N} independent calls, fake latency {LATENCY * 1e3:.0f} ms, "
        f"concurrency {SLOTS}, ideal makespan {IDEAL:.1f} s, {RUNS} runs of each engine variant"
    )
    print(f"machine: {machine_note()}")
    fake = FakeOpenAI()
    fake.latency = LATENCY
    fake.server.RequestHandlerClass.disable_nagle_algorithm = True
    try:
        in_process = asyncio.run(engine_runs(fake.url, "(1) fake in-process"))
    finally:
        fake.close()
    with fake_server(LATENCY) as url:
        child = asyncio.run(engine_runs(url, "(2) fake in a child process"))
        raw = asyncio.run(raw_litellm(make_client(url)))
        print(
            f"(3) litellm.acompletion under a semaphore, no engine: makespan {raw[0]:.2f} s, "
            f"ratio {raw[0] / IDEAL:.3f}, CPU {raw[1]:.2f} s ({raw[1] / N * 1e3:.2f} ms per call)"
        )
        floor = asyncio.run(plain_aiohttp(url))
        print(
            f"(4) plain aiohttp client, no litellm: makespan {floor[0]:.2f} s, "
            f"ratio {floor[0] / IDEAL:.3f}, CPU {floor[1]:.2f} s"
        )
        ratio_1 = statistics.median(in_process) / IDEAL
        ratio_2 = statistics.median(child) / IDEAL
        print(f"target: makespan <= {TARGET_RATIO} x {IDEAL:.1f} s = {TARGET_RATIO * IDEAL:.2f} s")
        print(
            f"(1) fake in-process: median makespan {statistics.median(in_process):.2f} s, "
            f"ratio {ratio_1:.3f}: {verdict(ratio_1, TARGET_RATIO)}"
        )
        print(
            f"(2) fake in a child process: median makespan {statistics.median(child):.2f} s, "
            f"ratio {ratio_2:.3f}: {verdict(ratio_2, TARGET_RATIO)}"
        )
    with asyncio_fake_server(LATENCY) as url:
        floor = asyncio.run(plain_aiohttp(url))
        print(
            f"(5) asyncio fake server, plain aiohttp client (no litellm): makespan "
            f"{floor[0]:.2f} s, ratio {floor[0] / IDEAL:.3f}"
        )
        raw = asyncio.run(raw_litellm(make_client(url)))
        print(
            f"(5) asyncio fake server, litellm.acompletion under a semaphore (no engine): "
            f"makespan {raw[0]:.2f} s, ratio {raw[0] / IDEAL:.3f}, {raw[1] / N * 1e3:.2f} ms CPU "
            "per call"
        )
        best = asyncio.run(engine_runs(url, "(6) asyncio fake server, engine"))
        ratio_6 = statistics.median(best) / IDEAL
        print(
            f"(6) asyncio fake server: median makespan {statistics.median(best):.2f} s, "
            f"ratio {ratio_6:.3f}: {verdict(ratio_6, TARGET_RATIO)}"
        )
        pooled = asyncio.run(
            engine_runs(url, "(7) asyncio fake server, engine, through litellm", "litellm")
        )
        ratio_7 = statistics.median(pooled) / IDEAL
        print(
            f"(7) through litellm: median makespan {statistics.median(pooled):.2f} s, "
            f"ratio {ratio_7:.3f}: {verdict(ratio_7, TARGET_RATIO)}"
        )
        if min(ratio_6, ratio_7) > TARGET_RATIO:
            asyncio.run(profiled_run(url))
    return 0


if __name__ == "__main__":
    sys.exit(main())
