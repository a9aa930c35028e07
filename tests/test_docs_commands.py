"""Every command in README.md and docs/ runs as written, offline, in a copy of the examples.

A command is a line of a shell code block (a synopsis of options goes in a `text` block) that
starts with `accord` or `pytest` (or `.venv/bin/accord`, or `cd DIR && ...`). One that ends with
`# needs ...` says what it needs and is not run here (the GitHub Actions jobs and the
examples' real-model commands have tests of their own, with a scripted model). `make test`
is what CI runs; `make demo` runs the sales review, as tests/workflows does. An `accord`
command passes when it exits 0, or 1 (a documented verdict: a case or a gate failed), with no
traceback; a `pytest` command (the conversation example) when every test passed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL = ("", "sh", "bash", "shell", "console")
COMMAND = re.compile(r"^(cd \S+ && )?(\.\./)?(\.venv/bin/)?(accord|pytest)\b")


def documented(path: Path) -> list[str]:
    """The command lines of the document's shell blocks, in order."""
    out: list[str] = []
    fence: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = None if fence is not None else stripped[3:].strip()
            continue
        if fence in SHELL and (COMMAND.match(stripped) or stripped.startswith("make ")):
            out.append(stripped)
    return out


def test_the_documents_have_commands() -> None:
    found = {p.name: documented(p) for p in DOCUMENTS}
    assert len(found["README.md"]) >= 4 and len(found["evaluations.md"]) >= 3
    assert [c.split()[:2] for c in found["README.md"][:2]] == [["make", "demo"], ["make", "test"]]


@pytest.mark.slow
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_documented_command_runs_as_written(document: Path, tmp_path: Path) -> None:
    shutil.copytree(
        REPO / "workflows", tmp_path / "workflows",
        ignore=shutil.ignore_patterns(".accord", "output", "results", "reports"),
    )  # fmt: skip
    shim = tmp_path / "bin"
    shim.mkdir()
    launcher = shim / "accord"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m accord.cli "$@"\n')
    launcher.chmod(0o755)
    pytest_launcher = shim / "pytest"
    pytest_launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pytest "$@"\n')
    pytest_launcher.chmod(0o755)
    ran = 0
    for command in documented(document):
        line = command.split("  #", 1)[0].strip()
        if command.startswith("make ") or "# needs" in command:
            continue
        line = re.sub(r"(\.\./)*\.venv/bin/(accord|pytest)", r"\2", line)
        done = subprocess.run(
            ["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=600,
            env={"PATH": f"{shim}:/usr/bin:/bin", "HOME": str(tmp_path)},
        )  # fmt: skip
        allowed = (0,) if "pytest" in line.split()[:3] else (0, 1)
        assert done.returncode in allowed, (command, done.returncode, done.stdout[-2000:],
                                             done.stderr[-2000:])  # fmt: skip
        assert "Traceback" not in done.stderr, (command, done.stderr[-2000:])
        ran += 1
    assert ran or document.name == "testing.md"
