"""The one retry policy: nodes (a task's `retry:`), model calls and consistency samples.

A `RetryPolicy` says how many attempts there are and how long to wait before each retry:
`backoff * 2**k` seconds, at most `cap`, with full jitter for calls to a shared provider (so
a burst of 429s does not come back at once), or what the provider's Retry-After asks.
Permanent errors (bad input, a missing optional package, an auth error, a bad request) are
never retried.

Waiting out a backoff goes through `wait_out`: inside a scheduler node it gives the node's
concurrency slot and resource limits back while it sleeps, and takes them again (in priority
order, like any ready node) before the next attempt.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from .errors import AccordError
from .log import current_node

MAX_DELAY = 300.0  # a doubling backoff never waits longer than this between tries
RETRY_AFTER_CAP = 120.0  # a provider's Retry-After is honoured up to this many seconds


@dataclass(frozen=True)
class RetryPolicy:
    """`attempts` in all (1: no retry); waits `backoff * 2**k` seconds, at most `cap`."""

    attempts: int = 1
    backoff: float = 0.0
    cap: float = MAX_DELAY
    jitter: bool = False

    def retries(self, attempt: int, error: BaseException) -> bool:
        """Whether attempt number `attempt` (1-based), which failed with `error`, is retried."""
        return attempt < self.attempts and not is_permanent(error)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based)."""
        if retry_after is not None:
            return min(max(0.0, retry_after), RETRY_AFTER_CAP)
        ceiling = min(self.cap, self.backoff * 2 ** (attempt - 1))
        return random.uniform(0, ceiling) if self.jitter else ceiling


def is_permanent(error: BaseException) -> bool:
    """Errors no retry can fix: accord's permanent errors and a missing module."""
    if isinstance(error, AccordError):
        return error.permanent
    return isinstance(error, ImportError)


async def wait_out(delay: float) -> None:
    """Sleep `delay` seconds; inside a node (the scheduler sets `log.current_node` around each
    body), without holding its slot or resource limits."""
    node = current_node.get()
    if node is None:
        await asyncio.sleep(delay)
    else:
        await node.pause(delay)
