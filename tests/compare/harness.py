"""The helpers of the comparison tests: an echo suite whose failing cases are chosen, written
into a project, and `accord view` started (waiting for its printed URL) and stopped."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.bounds import PROCESS_SECONDS, as_from_a_terminal

HOSTILE = "\"><img src=x onerror=alert(1)><script>alert('x')</script>"


def suite(bad: set[int], cases: int = 8, name: str = "stable", first: str = "c1") -> str:
    """An echo suite: case i passes when its input says ok, fails when it says bad; the
    first case's id is `first`."""
    lines = [f"name: {name}", "target: echo", "evaluators:", "  - {type: contains, value: ok}"]
    lines.append("cases:")
    for i in range(1, cases + 1):
        word = "bad" if i in bad else "ok"
        case_id = first if i == 1 else f"c{i}"
        lines.append(f"  - {{id: {json.dumps(case_id)}, input: {json.dumps(f'{word} {i}')}}}")
    return "\n".join(lines) + "\n"


def write(root: Path, text: str) -> Path:
    path = root / "s.eval.yml"
    path.write_text(text)
    return path


def start(root: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "accord.cli", "view", "--port", "0", "--project", str(root)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()))  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout=60)
    match = re.search(r"http://127\.0\.0\.1:\d+/", lines[0] if lines else "")
    if match is None:
        stop(proc)
        raise AssertionError(
            f"no URL printed: {lines!r} {proc.stderr.read() if proc.stderr else ''}"
        )
    return proc, match.group(0)


def stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    try:
        return proc.communicate(timeout=PROCESS_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.communicate()
