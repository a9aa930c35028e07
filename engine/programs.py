"""Running a program with a time limit and a cap on what is kept of its output: the one way
code judges, `command`/`cli` targets and workspace scripts run (here or in a Ray task).

A program that prints fast and runs past its time (`yes`) used to keep accord waiting for
ever: it was killed, but `Process.wait()` also waits for its pipes to close (Python 3.11.7 and
later), and nobody read them any more. Here the pipes are read until they close, whatever
happens; a timeout kills the program's whole process group (children it started hold the pipes
too); after the kill the wait is bounded; and at most `MAX_OUTPUT` bytes of each stream are
kept, the rest read and dropped, with a note saying so at the end of what is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

MAX_OUTPUT = 10_000_000  # bytes kept of a program's stdout, and of its stderr
KILL_GRACE = 5.0  # seconds for the pipes to close once the process group is killed
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Finished:
    """A program that ended: what it printed (capped) and its exit code; `timed_out` when it
    was killed at its time limit."""

    stdout: bytes
    stderr: bytes
    code: int
    timed_out: bool = False


def truncation_note(cap: int) -> bytes:
    return f"\n[output truncated at {cap:,} bytes]".encode()


async def run_program(
    argv: list[str],
    stdin: bytes,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    cap: int = MAX_OUTPUT,
) -> Finished:
    """Run `argv` in `cwd` with `stdin` (and `env` on top of this process's environment).

    `OSError` when it cannot start. Cancelling the caller kills the program's process group.
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(cwd),
        start_new_session=True,  # its own process group, so that a kill reaches its children
        env={**os.environ, **env} if env else None,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out = asyncio.create_task(_kept(proc.stdout, cap))
    err = asyncio.create_task(_kept(proc.stderr, cap))
    work = {
        asyncio.create_task(_fed(proc.stdin, stdin)),
        out,
        err,
        asyncio.create_task(proc.wait()),
    }
    try:
        _done, pending = await asyncio.wait(work, timeout=timeout)
        timed_out = bool(pending)
        if timed_out:
            kill_group(proc.pid)
            _done, pending = await asyncio.wait(pending, timeout=KILL_GRACE)
        if pending:  # a process that left the group still holds the pipes: stop reading them
            _close(proc)
    except BaseException:  # cancelled (Ctrl-C, fail-fast): the program must not outlive us
        kill_group(proc.pid)
        _close(proc)
        raise
    finally:
        for task in work:
            task.cancel()
    stdout = out.result() if out.done() and not out.cancelled() else b""
    stderr = err.result() if err.done() and not err.cancelled() else b""
    code = proc.returncode if proc.returncode is not None else -signal.SIGKILL
    return Finished(stdout, stderr, code, timed_out)


async def _fed(stream: asyncio.StreamWriter, data: bytes) -> None:
    # a program that exits (or is killed) without reading all of its stdin is no error
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        if data:
            stream.write(data)
            await stream.drain()
        stream.close()
        await stream.wait_closed()


async def _kept(stream: asyncio.StreamReader, cap: int) -> bytes:
    """Read `stream` to its end, keeping the first `cap` bytes."""
    kept = bytearray()
    dropped = False
    while chunk := await stream.read(_CHUNK):
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        dropped = dropped or len(chunk) > room
    if dropped:
        kept += truncation_note(cap)
    return bytes(kept)


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _close(proc: asyncio.subprocess.Process) -> None:
    # asyncio has no public way to drop a process's pipes; its transport's close() closes
    # them (and kills the process if it still runs), so that nothing waits on them any more
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()
