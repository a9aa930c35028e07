"""The helpers of the differential tests against promptfoo (node's `promptfoo@0.118.0`, a
test-only install): where it is, the skip where it is missing, `promptfoo eval` in a folder
with its process group ended, and its JSON results by cell."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

PROMPTFOO = Path(
    os.environ.get(
        "ACCORD_PROMPTFOO",
        Path.home()
        / ".cache"
        / "accord-bench"
        / "promptfoo"
        / "node_modules"
        / ".bin"
        / "promptfoo",
    )
)
needs_promptfoo = pytest.mark.skipif(
    shutil.which("node") is None or not PROMPTFOO.exists(),
    reason=f"needs node and promptfoo 0.118 installed at {PROMPTFOO} "
    "(python benchmarks/b13_*.py installs it; or set ACCORD_PROMPTFOO)",
)


def run_promptfoo(folder: Path, *outputs: str) -> None:
    """`promptfoo eval` in `folder`, its process group ended whatever happens."""
    argv = [str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "--no-cache",
            "--no-progress-bar", "--no-table", "-j", "2"]  # fmt: skip
    for output in outputs:
        argv += ["-o", output]
    env = {
        **os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
        "NO_COLOR": "1", "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo"),
    }  # fmt: skip
    process = subprocess.Popen(
        argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        _out, err = process.communicate(timeout=180)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    # promptfoo exits 100 when an assertion failed
    assert process.returncode in (0, 100), err.decode(errors="replace")[-2000:]


def by_cell(path: Path) -> dict[tuple[int, int], dict[str, Any]]:
    doc = json.loads(path.read_text())
    return {(r["testIdx"], r["promptIdx"]): r for r in doc["results"]["results"]}


def verdicts(path: Path) -> dict[tuple[int, int], tuple[Any, ...]]:
    """Each result's verdict, score, named scores and reason."""
    return {
        cell: (r["success"], round(r["score"], 6),
               {k: round(v, 6) for k, v in r["namedScores"].items()},
               (r["gradingResult"] or {}).get("reason"))
        for cell, r in by_cell(path).items()
    }  # fmt: skip


def results(path: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(path.read_text())["results"]["results"]
    return sorted(found, key=lambda r: (r["testIdx"], r["promptIdx"]))
