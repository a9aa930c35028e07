"""B5: the per-model rate limiter against a provider that enforces requests per minute.

The fake provider (tests.fakes.FakeOpenAI, in this process, with a responder) counts the
requests it accepted in a sliding window and answers 429 with a retry-after header when a
request would exceed the limit. The window is scaled down so the benchmark takes seconds, not
minutes: 600 requests per 6 s sliding window. The model entry says the same, `rpm: 600` with
`rate_window: 6` (seconds; 60 by default): the engine paces requests 10.2 ms apart and never
sends more than 600 in any 6.18 s (engine.models.RequestPacer).

(1) limiter on: 2,000 calls through engine.scheduler.Scheduler(max_concurrency=50) and
    ModelClient.complete (cache off, engine retries at their defaults), 200 ms fake latency.
    Targets: 0 answers 429; achieved rate >= 95 % of the limit, where the achieved rate is
    (accepted requests - 1) / (last arrival - first arrival) at the fake.
(2) limiter off (no rpm), a short run of 900 calls with engine retries off: the fake does
    answer 429 once the window is full.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _synthetic import machine_note  # noqa: E402

from accord.engine.models import ModelCatalog, ModelClient  # noqa: E402
from accord.engine.results import Status  # noqa: E402
from accord.engine.scheduler import Node, Scheduler  # noqa: E402
from accord.engine.spec import ConfigSpec, ModelSpec  # noqa: E402
from tests.fakes import FakeOpenAI, Reply  # noqa: E402

LIMIT = 600  # requests the fake accepts ...
WINDOW = 6.0  # ... in any sliding window of this many seconds
RPM = LIMIT  # the model entry's rpm, counted over rate_window = WINDOW seconds
CALLS = 2_000
CALLS_OFF = 900
SLOTS = 50
LATENCY = 0.2
TARGET_SHARE = 0.95


class WindowedProvider:
    """A responder for FakeOpenAI: at most LIMIT accepted requests per WINDOW seconds."""

    def __init__(self) -> None:
        self.accepted: list[float] = []
        self.rejected = 0
        self._recent: deque[float] = deque()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            now = time.monotonic()
            while self._recent and self._recent[0] <= now - WINDOW:
                self._recent.popleft()
            if len(self._recent) >= LIMIT:
                self.rejected += 1
                wait = self._recent[0] + WINDOW - now
                return Reply.error(
                    429,
                    f"rate limit reached: {LIMIT} requests per {WINDOW:g} s",
                    **{"retry-after": f"{wait:.3f}"},
                )
            self._recent.append(now)
            self.accepted.append(now)
        return Reply(text=f"answer to: {body['messages'][-1]['content']}")

    def rate(self) -> float:
        """Accepted requests per second between the first and the last one."""
        if len(self.accepted) < 2:
            return 0.0
        return (len(self.accepted) - 1) / (self.accepted[-1] - self.accepted[0])

    def busiest_window(self) -> int:
        """The most accepted requests in any WINDOW-second interval."""
        most, start = 0, 0
        for end, at in enumerate(self.accepted):
            while self.accepted[start] <= at - WINDOW:
                start += 1
            most = max(most, end - start + 1)
        return most


def start_fake(provider: WindowedProvider) -> FakeOpenAI:
    fake = FakeOpenAI()
    fake.latency = LATENCY
    fake.responder = provider
    # the handler writes headers and body separately: without this, Nagle's algorithm and the
    # client's delayed ACK add ~40 ms to every answer
    fake.server.RequestHandlerClass.disable_nagle_algorithm = True
    return fake


def make_client(url: str, **model: Any) -> ModelClient:
    spec = ModelSpec(name="fake", model="openai/fake-model", api_base=url, api_key="test", **model)
    return ModelClient(ModelCatalog(ConfigSpec(models=[spec])), cache=None, mode="off")


async def run_calls(client: ModelClient, count: int, label: str) -> tuple[float, list[Any]]:
    """Makespan and the results of `count` independent calls through the Scheduler."""

    def node(i: int) -> Node:
        key = f"call_{i:04d}"

        async def body() -> Any:
            messages = [{"role": "user", "content": f"{label} question {i}"}]
            return await client.complete("fake", messages, task=key)

        return Node(key=key, name=key, type="agent", order=(i,), priority=1, body=body)

    scheduler = Scheduler(max_concurrency=SLOTS, keep_going=True)
    start = time.perf_counter()
    await scheduler.run([node(i) for i in range(count)], [])
    return time.perf_counter() - start, scheduler.results


async def warmed_run(
    client: ModelClient, provider: WindowedProvider, count: int, label: str
) -> tuple[float, list[Any]]:
    """One call first (litellm's import is B12's business), then the run, in one event loop."""
    await client.complete("fake", [{"role": "user", "content": "warm-up"}], task="warm-up")
    await asyncio.sleep(WINDOW)  # let the warm-up call leave the window
    provider.accepted.clear()
    return await run_calls(client, count, label)


async def bare_limiter(count: int) -> float:
    """The engine's limiter alone (RequestPacer), bodies that only sleep LATENCY."""
    from accord.engine.models import RequestPacer

    limiter = RequestPacer(RPM, WINDOW)
    gate = asyncio.Semaphore(SLOTS)
    granted: list[float] = []

    async def one() -> None:
        async with gate:
            await limiter.wait()
            granted.append(time.monotonic())
            await asyncio.sleep(LATENCY)

    await asyncio.gather(*(one() for _ in range(count)))
    return (len(granted) - 1) / (granted[-1] - granted[0]) / (RPM / 60)


def limiter_on() -> tuple[int, float]:
    provider = WindowedProvider()
    fake = start_fake(provider)
    try:
        client = make_client(fake.url, rpm=RPM, rate_window=WINDOW)
        makespan, results = asyncio.run(warmed_run(client, provider, CALLS, "on"))
    finally:
        fake.close()
    failed = sum(1 for r in results if r.status is not Status.SUCCEEDED)
    share = provider.rate() / (LIMIT / WINDOW)
    print(
        f"(1) limiter on, rpm={RPM}: {CALLS} calls in {makespan:.2f} s "
        f"(ideal at the limit: {CALLS / (LIMIT / WINDOW):.1f} s); {failed} failed"
    )
    print(
        f"    429s received: {provider.rejected}; engine retries: "
        f"{client.usage.total.retries}; accepted by the fake: {len(provider.accepted)}"
    )
    print(
        f"    achieved rate {provider.rate():.2f} requests/s = {share:.1%} of the limit "
        f"({LIMIT / WINDOW:.0f}/s); busiest {WINDOW:g} s window: {provider.busiest_window()} "
        f"of {LIMIT} allowed"
    )
    gaps = [b - a for a, b in zip(provider.accepted, provider.accepted[1:], strict=False)]
    if gaps:
        gaps.sort()
        print(
            f"    gap between requests at the fake: median {gaps[len(gaps) // 2] * 1e3:.2f} ms, "
            f"p99 {gaps[int(len(gaps) * 0.99)] * 1e3:.2f} ms "
            f"(the limiter's interval: {WINDOW / RPM * 1.02 * 1e3:.2f} ms)"
        )
    return provider.rejected, share


def limiter_off() -> int:
    provider = WindowedProvider()
    fake = start_fake(provider)
    try:
        client = make_client(fake.url, max_retries=0)
        makespan, results = asyncio.run(warmed_run(client, provider, CALLS_OFF, "off"))
    finally:
        fake.close()
    failed = [r for r in results if r.status is not Status.SUCCEEDED]
    example = failed[0].error if failed else "none"
    print(
        f"(2) limiter off (no rpm), engine retries off: {CALLS_OFF} calls in {makespan:.2f} s; "
        f"429s received: {provider.rejected}; failed calls: {len(failed)}"
    )
    print(f"    e.g. {example}")
    return provider.rejected


def main() -> int:
    print(
        f"B5 rate limit: the fake enforces {LIMIT} requests per {WINDOW:g} s sliding window "
        f"(scaled down from per-minute limits so the run takes seconds); the model entry sets "
        f"rpm={RPM} with rate_window={WINDOW:g} s, the same limit: requests paced "
        f"{WINDOW / RPM * 1.02 * 1e3:.1f} ms apart, at most {RPM} in any {WINDOW * 1.03:.2f} s"
    )
    print(
        f"{CALLS} calls, concurrency {SLOTS}, fake latency {LATENCY * 1e3:.0f} ms; "
        f"machine: {machine_note()}"
    )
    rejected, share = limiter_on()
    rejected_off = limiter_off()
    print("targets (limiter on): 0 answers 429, achieved rate >= 95 % of the limit")
    print(f"429s with the limiter on: {rejected}: {'MET' if rejected == 0 else 'MISSED'}")
    print(
        f"achieved rate: {share:.1%} of the limit: {'MET' if share >= TARGET_SHARE else 'MISSED'}"
    )
    print(f"check: the fake answered {rejected_off} requests 429 with the limiter off")
    if share < TARGET_SHARE:
        alone = asyncio.run(bare_limiter(1_000))
        print(
            f"diagnosis: the same limiter alone, 1000 bodies that only sleep "
            f"{LATENCY * 1e3:.0f} ms (no model calls): {alone:.1%} of the limit; the model "
            "calls' CPU on the event loop makes wake-ups late"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
