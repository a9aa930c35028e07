"""Calling blocking code that may never return (a user's function or agent, a query) without
letting it hold the process.

`asyncio.to_thread` runs on the loop's default executor, whose threads `asyncio.run` joins at
shutdown and the interpreter joins at exit: one call stuck in `time.sleep(100000)` kept the
process alive after its node had failed on its timeout, and so kept a pytest session or a CI
job. Here each call has a daemon thread of its own and hands its result back through a future;
a call nobody waits for any more is abandoned to the interpreter's exit.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


def start_blocking(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Start `fn(*args)` in a daemon thread (with the caller's context variables)."""
    future: Future[T] = Future()
    context = contextvars.copy_context()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            value = context.run(fn, *args)
        except BaseException as exc:  # handed to whoever awaits the future
            future.set_exception(exc)
        else:
            future.set_result(value)

    name = getattr(fn, "__qualname__", type(fn).__qualname__)
    threading.Thread(target=work, name=f"accord-call-{name}", daemon=True).start()
    return future


async def call_blocking(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a daemon thread of its own, awaited; cancelling the caller stops the
    wait (the call itself runs on until it returns or the process ends)."""
    return await asyncio.wrap_future(start_blocking(fn, *args))
