"""The tests that depend on time or signals (marked `timing` in tests/conftest.py) pass on a
busy machine: they run again here beside two busy loops, one per core of CI's machine, as a
loaded CI runner would have them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bounds import as_from_a_terminal

ROOT = Path(__file__).resolve().parents[2]
BUSY_LOOP = "while True:\n    pass\n"


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("ACCORD_UNDER_LOAD") == "1", reason="already running under load")
def test_timing_tests_pass_beside_two_busy_loops(tmp_path: Path) -> None:
    loops = [
        subprocess.Popen([sys.executable, "-c", BUSY_LOOP], start_new_session=True)
        for _ in range(2)
    ]
    env = {**os.environ, "ACCORD_UNDER_LOAD": "1", "ACCORD_CRASH_KILLS": "3"}
    command = [sys.executable, "-m", "pytest", "-m", "timing", "-q", "-p", "no:cacheprovider",
               "-n", "0", f"--basetemp={tmp_path / 'run'}"]  # fmt: skip
    tests = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, preexec_fn=as_from_a_terminal,
    )  # fmt: skip
    try:
        out, _ = tests.communicate(timeout=1200)
    finally:
        for process in [tests, *loops]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    # the failures' own report, not only the tail: the per-test summary lines that follow it
    # pushed a failure's traceback out of a 6,000-character tail
    failures = out.find("= FAILURES =")
    assert tests.returncode == 0, out[failures:][:12000] if failures >= 0 else out[-6000:]
    assert " passed" in out and "no tests ran" not in out, out[-2000:]
