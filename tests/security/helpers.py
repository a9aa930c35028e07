"""Shared by the attack tests of the doors (test_programs.py, test_round5.py): a project
written from a mapping of files, `accord` run in it in a process of its own, and what a
refusal and a failed attack look like."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# a test's text that runs five commands wherever it is read as shell code
ATTACK = "a $(touch pwned1) `touch pwned2`; touch pwned3 \"$(touch pwned4)\" '$(touch pwned5)'"


def accord(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`accord ARGS` run in `root` in a process of its own (the trust record is the test's:
    XDG_DATA_HOME, tests/conftest.py)."""
    return subprocess.run(
        [sys.executable, "-m", "accord.cli", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def pwned(*folders: Path) -> list[str]:
    """The files an attack created (`pwned*`) under `folders`."""
    return sorted(p.name for folder in folders for p in folder.rglob("pwned*"))


def refused(run: subprocess.CompletedProcess[str], *said: str) -> None:
    """Refused at load: exit 2, no traceback, every text of `said` (the file and line among
    them) on stderr."""
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    for text in said:
        assert text in run.stderr, run.stderr


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
