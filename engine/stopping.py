"""A run that was told to stop ends within seconds, whatever it is doing.

Ctrl-C and SIGTERM stop a run through Python: asyncio cancels the run's task, the run store
records the run as interrupted, and the command exits 130 or 143 (engine/cli/signals.py). That
path needs the interpreter's main thread to reach its signal handler and then get through the
cancellation; a main thread allocating without end (a run out of memory, where every step
fails with MemoryError, even the handler's own) can take minutes, or never.

`Deadline` does not depend on it. The signal's number reaches a pipe from C, by
`signal.set_wakeup_fd` (written in the signal handler of the interpreter itself, before any
Python code runs), and a thread waiting on that pipe gives the orderly stop `GRACE` seconds;
a process still running then is ended with the signal's exit code (128 + its number), saying
so on stderr. The run's row then stays `running` in the store (its finished results are
kept, and `--resume` reuses them as after a SIGKILL).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

GRACE = 10.0  # seconds the orderly stop has after the first Ctrl-C or SIGTERM
STOPPING = frozenset({signal.SIGINT, signal.SIGTERM})


class Deadline:
    """The thread ending the process `grace` seconds after a stopping signal."""

    def __init__(self, grace: float = GRACE) -> None:
        self.grace = grace
        self.read, self.write = os.pipe()
        os.set_blocking(self.write, False)  # the interpreter's handler never waits on it
        # prepared now: after the signal, memory may be short
        self._messages = {
            int(s): (
                f"\ninterrupted ({signal.Signals(s).name}): the run did not stop within "
                f"{grace:g} s, so it was ended; its finished tasks are kept for --resume "
                "(the run is not recorded as interrupted)\n"
            ).encode()
            for s in STOPPING
        }
        self._thread = threading.Thread(target=self._watch, name="accord-stop", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            try:
                data = os.read(self.read, 64)
            except OSError:
                return
            if not data:  # closed: the run ended before any stopping signal
                with contextlib.suppress(OSError):
                    os.close(self.read)
                return
            stopping = [b for b in data if b in self._messages]
            if stopping:
                self._end_after_grace(stopping[0])
                return

    def _end_after_grace(self, signum: int) -> None:
        # kept even when the run's block ends first: after a stopping signal the process
        # is on its way out, and what follows the block (recording the run as interrupted,
        # writing its report) is bounded too
        time.sleep(self.grace)
        with contextlib.suppress(OSError):
            os.write(2, self._messages[signum])
        os._exit(128 + signum)

    def close(self) -> None:
        """The run is over without a stopping signal: the thread ends (one that saw a
        signal keeps its deadline: the process is on its way out)."""
        with contextlib.suppress(OSError):
            os.close(self.write)


@contextmanager
def deadline_after_signal(grace: float = GRACE) -> Iterator[None]:
    """While the block runs (in the main thread), Ctrl-C or SIGTERM end the process within
    `grace` seconds even when the orderly stop cannot."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    watch = Deadline(grace)
    try:
        previous = signal.set_wakeup_fd(watch.write, warn_on_full_buffer=False)
    except ValueError:  # not the main interpreter
        watch.close()
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(previous)
        watch.close()
