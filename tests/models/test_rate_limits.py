"""The request pacer: never more than `limit` sends in any window, whatever the burst."""

from __future__ import annotations

import asyncio

from accord.engine.models import RequestPacer


def test_no_window_holds_more_than_the_limit() -> None:
    async def scenario() -> list[float]:
        pacer = RequestPacer(limit=4, window=0.2)
        loop = asyncio.get_running_loop()
        sent: list[float] = []

        async def one() -> None:
            await pacer.wait()
            sent.append(loop.time())

        await asyncio.gather(*(one() for _ in range(12)))
        return sent

    sent = sorted(asyncio.run(scenario()))
    assert len(sent) == 12
    # the sliding log checks the loop's clock at send time, so this lower bound holds on any
    # machine (a late wake-up can only widen the gaps)
    for first, fifth in zip(sent, sent[4:], strict=False):
        assert fifth - first >= 0.2
