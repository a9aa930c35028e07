"""Memory per case and stopping a large run (finding F20 of files-from-others round 4).

A JSONL file of small promptfoo tests (`tests: file://rows.jsonl`, one `contains`, the `echo`
provider) cost ~27 KB a case; under a memory limit the run ended in "internal error:
MemoryError" or spun at 100% CPU ignoring SIGTERM. Now: a suite runs in parts, so a run of
many cases holds a few thousand nodes; SIGTERM ends a large run within seconds, recorded as
interrupted (exit 143); running out of memory is said plainly (exit 2); and should the
orderly stop not get through, the process still ends `stopping.GRACE` seconds after the
signal.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.bounds import PROCESS_SECONDS, as_from_a_terminal

REPO = Path(__file__).resolve().parents[2]
STOP_SECONDS = 20  # the bound on a stop: GRACE (10 s) and a busy machine's margin


def promptfoo_project(folder: Path, n: int) -> None:
    (folder / "config.yml").write_text("defaults: {}\n")
    with (folder / "rows.jsonl").open("w") as out:
        for i in range(n):
            row = {"vars": {"q": f"c{i}"}, "assert": [{"type": "contains", "value": "c"}]}
            out.write(json.dumps(row) + "\n")
    (folder / "promptfooconfig.yaml").write_text(
        "prompts: ['{{q}}']\nproviders: [echo]\ntests: file://rows.jsonl\n"
    )


def run_status(db: Path) -> str | None:
    try:
        conn = sqlite3.connect(str(db))
        try:
            row = conn.execute("SELECT status FROM runs").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def accord(folder: Path, *args: str, **popen: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "accord.cli", *args],
        cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True, **popen,  # type: ignore[call-overload]
    )  # fmt: skip


def drain(process: subprocess.Popen[str], lines: list[str]) -> threading.Thread:
    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


@pytest.mark.slow
def test_sigterm_ends_a_large_eval_within_seconds(tmp_path: Path) -> None:
    """60,000 cases: SIGTERM once the store shows the run started (its row is written before
    any case runs); the run ends within seconds, recorded as interrupted, exit 143. Before,
    every case's three nodes were built up front and each one not run was settled and
    written to the store as cancelled before the process could exit."""
    promptfoo_project(tmp_path, 60_000)
    db = tmp_path / ".accord" / "runs.db"
    process = accord(tmp_path, "eval", "-c", "promptfooconfig.yaml", "-q", "--cache", "off",
                     preexec_fn=as_from_a_terminal)  # fmt: skip
    lines: list[str] = []
    reader = drain(process, lines)
    try:
        deadline = time.monotonic() + PROCESS_SECONDS
        while process.poll() is None and run_status(db) != "running":
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)  # polls for the run's row, the event waited for
        assert process.poll() is None, "".join(lines)
        process.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        try:
            process.wait(timeout=STOP_SECONDS * 3)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running {STOP_SECONDS * 3} s after SIGTERM") from None
        took = time.monotonic() - sent
        reader.join(timeout=10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    err = "".join(lines)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert took < STOP_SECONDS, f"{took:.1f} s after SIGTERM\n{err}"
    assert "interrupted (SIGTERM)" in err and "--resume last" in err, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert run_status(db) == "interrupted"


def limited_memory(megabytes: int) -> object:
    def limit() -> None:
        as_from_a_terminal()
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))

    return limit


OWN_END_SECONDS = 60  # a run under the limit ends by itself in 5-20 s here, idle or loaded


@pytest.mark.slow
def test_running_out_of_memory_is_said_plainly(tmp_path: Path) -> None:
    """F20's reproduction, scaled to a test: under a memory limit too small for the run,
    a clear message and exit 2, not "internal error: MemoryError" (exit 70). A run that has
    not ended by itself (under a limit it may crawl from one MemoryError to the next; before,
    it could spin for minutes ignoring SIGTERM) must end at SIGTERM within the stop's bound."""
    # 150,000 cases: about 500 MB at ~3.3 KB a case (B22), well past the limit; 30,000
    # cases, once ~27 KB each, now fit in it
    promptfoo_project(tmp_path, 150_000)
    process = accord(tmp_path, "eval", "-c", "promptfooconfig.yaml", "-q", "--cache", "off",
                     preexec_fn=limited_memory(300))  # fmt: skip
    lines: list[str] = []
    reader = drain(process, lines)
    terminated = False
    try:
        try:
            process.wait(timeout=OWN_END_SECONDS)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGTERM)
            terminated = True
            try:
                process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                raise AssertionError(
                    f"out of memory, the run ignored SIGTERM for {STOP_SECONDS} s"
                ) from None
        reader.join(timeout=10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    err = "".join(lines)
    assert "internal error" not in err and "Traceback" not in err, err
    if process.returncode in (-signal.SIGABRT, -signal.SIGSEGV):
        # under an address-space limit the interpreter itself, or a C library in it, may
        # die where no Python code can catch anything (CPython's "Cannot recover from
        # MemoryErrors while normalizing exceptions"; SQLite; glibc's "libgcc_s.so.1 must
        # be installed for pthread_exit"): about one run in three here. Main ended that way
        # too, or with exit 70 "internal error: MemoryError".
        return
    if terminated:
        assert process.returncode == 128 + signal.SIGTERM, err
        return
    assert process.returncode == 2, err
    assert "ran out of memory" in err and "give it more memory" in err, err


STUCK = textwrap.dedent(
    """
    import signal
    from accord.engine.stopping import deadline_after_signal

    with deadline_after_signal(grace=1.0):
        # an orderly stop that never gets through: every Ctrl-C swallowed where it lands (a
        # handler of its own, so no KeyboardInterrupt can escape between two statements)
        signal.signal(signal.SIGINT, lambda signum, frame: None)
        print("ready", flush=True)
        while True:
            sum(range(100_000))
    """
)


def test_a_stop_that_cannot_get_through_still_ends_the_process(tmp_path: Path) -> None:
    """The main thread swallows every KeyboardInterrupt (as a run failing at each step for
    want of memory did): the process still ends, `grace` seconds after Ctrl-C, exit 130,
    saying why on stderr."""
    process = subprocess.Popen(
        [sys.executable, "-c", STUCK], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            _out, err = process.communicate(timeout=STOP_SECONDS * 3)
        except subprocess.TimeoutExpired:
            raise AssertionError("the process ignored Ctrl-C") from None
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 130, err
    assert 0.9 <= took < STOP_SECONDS, took
    assert "interrupted (SIGINT): the run did not stop within 1 s" in err, err
