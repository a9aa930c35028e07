"""Shared by the fault tests: run the real `accord` command in a subprocess, bounded in time.

A subprocess is the only bound that holds whatever hangs (a blocked event loop, a thread that
never joins): `subprocess.run(timeout=...)` kills it and the test fails saying so.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

# retries of a scripted fault wait milliseconds, not the default second (engine/models.py)
FAST_BACKOFF = "0.01"


@dataclass(frozen=True)
class Finished:
    """A finished `accord` process."""

    code: int
    stdout: str
    stderr: str
    seconds: float


def accord(
    *args: str, cwd: Path, timeout: float = 90.0, env: dict[str, str] | None = None
) -> Finished:
    """`accord ARGS` in a fresh interpreter; fails the test if it runs past `timeout`."""
    environment = {
        k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "PYTEST_ADDOPTS"
    }
    environment.update(
        {
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "ACCORD_RETRY_BACKOFF": FAST_BACKOFF,
            "PYTHONUNBUFFERED": "1",
        }
    )
    environment.update(env or {})
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "accord.cli", *args],
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"accord {' '.join(args)} hung: still running after {timeout:g} s ({exc})")
    return Finished(done.returncode, done.stdout, done.stderr, time.perf_counter() - started)


def assert_no_traceback(finished: Finished) -> None:
    """A user error or a fault is a message, never a Python traceback or an internal error."""
    both = finished.stdout + finished.stderr
    assert "Traceback (most recent call last)" not in both, both[-3000:]
    assert "internal error" not in both, both[-3000:]


def bounded(
    args: list[str], cwd: Path, timeout: float = 240, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """`args` in a session of its own: (exit code, stdout, stderr). Past `timeout` the test
    fails; the process group is killed whatever happens."""
    environment = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    process = subprocess.Popen(
        args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL, start_new_session=True, env=environment,
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args[:4])} ... was still running after {timeout:g} s")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    return process.returncode, out, err
