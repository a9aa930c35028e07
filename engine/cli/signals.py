"""Ctrl-C and SIGTERM while a command runs: the runs under way are recorded as interrupted,
the command that finishes them is named, and the process exits 130 or 143."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Coroutine

T = TypeVar("T")

_signal_received: int | None = None  # SIGTERM, when that is what interrupted `accord run`
_main_task: asyncio.Task[Any] | None = None  # the run's task while `accord run` is under way


def interrupted(open_stores: list[Any], again: str | None = None) -> NoReturn:
    """Ctrl-C or SIGTERM: record the command's unfinished runs as interrupted, and exit.

    Every task that finished is already on its way to the run store, so `--resume` reuses it
    (`again`: the command that does, when it is not `accord run FILE --resume last`).
    """
    import signal

    from ..paths import shown_path

    signum = _signal_received or signal.SIGINT
    name = signal.Signals(signum).name
    stored: list[Any] = []
    if open_stores:
        from ..store import interrupt_runs

        try:
            stored = interrupt_runs(open_stores, f"interrupted ({name})")
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting for the disk
            stored = []
    if not stored:
        click.echo(f"interrupted ({name})", err=True)
    for run_store in stored:
        for key, error in run_store.failures:
            click.echo(f"✗ {key}: {error}", err=True)
        kept = run_store.counts.get("succeeded", 0)
        file = shown_path(run_store.file) if run_store.file is not None else "FILE"
        click.echo(
            f"interrupted ({name}): run {run_store.run_id} is recorded as interrupted with "
            f"{kept} finished task{'' if kept == 1 else 's'} kept; "
            f"`{again or f'accord run {file} --resume last'}` runs the rest",
            err=True,
        )
    sys.exit(128 + signum)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """While a run is under way, SIGTERM stops it the way Ctrl-C does (and exits 143)."""
    import signal
    import threading

    global _signal_received
    _signal_received = None
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread can set handlers (the run is embedded: leave them)
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        global _signal_received
        _signal_received = signum
        from .. import render_budget

        render_budget.request_stop("the run received SIGTERM")  # a long render ends now
        handler = signal.getsignal(signal.SIGINT)  # asyncio's while a run is under way
        if callable(handler):
            handler(signal.SIGINT, frame)
            return
        # asyncio installs its Ctrl-C handler only where SIGINT has its default handler: a
        # process started in the background by a shell without job control inherits SIGINT
        # ignored, and a KeyboardInterrupt raised here, inside whatever the loop was doing,
        # left a traceback and a task that was never recorded. Cancel the run as asyncio's
        # handler does (a second SIGTERM still interrupts at once).
        task = _main_task
        if task is not None and not task.done() and not task.cancelling():
            task.get_loop().call_soon_threadsafe(task.cancel)
            return
        raise KeyboardInterrupt

    from ..stopping import deadline_after_signal

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        # should the orderly stop above not get through (a run out of memory), the process
        # still ends within seconds of the signal
        with deadline_after_signal():
            yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        from .. import render_budget

        render_budget.clear_stop()


def run_stoppable(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)`, its task known to the SIGTERM handler: a run that SIGTERM
    cancelled ends as a Ctrl-C'd one does, with KeyboardInterrupt."""

    import asyncio

    async def main() -> T:
        global _main_task
        _main_task = asyncio.current_task()
        try:
            return await work
        finally:
            _main_task = None

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if _signal_received is None:
            raise
        raise KeyboardInterrupt from None


@contextmanager
def interruptible(open_stores: list[Any], again: str) -> Iterator[None]:
    """Runs under way (`accord test`, `accord eval`): Ctrl-C or SIGTERM records them as
    interrupted, names `again` (the command that finishes them) and exits 130 or 143."""
    try:
        with sigterm_interrupts():
            yield
    except KeyboardInterrupt:
        interrupted(open_stores, again)
