"""Every run ends: a failing run whose stderr is full (/dev/full) or closed (2>&-) used to hang
at 0% CPU, output to a full device printed a traceback, and a FIFO in a dataset folder
blocked the run in open() for ever."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bounds import PROCESS_SECONDS

FAILING = "tasks:\n  - name: a\n    type: execute_sql\n    sql_query: SELECT x FROM nope\n"


def _project(tmp_path: Path) -> Path:
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "t.csv").write_text("a,b\n1,2\n")
    path = tmp_path / "f.workflow.yml"
    path.write_text(FAILING)
    return path


def _accord(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "accord.cli", *args],
        text=True,
        timeout=PROCESS_SECONDS,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("fmt", ["pretty", "json"])
def test_a_failing_run_with_stderr_on_dev_full_ends(tmp_path: Path, fmt: str) -> None:
    path = _project(tmp_path)
    with open("/dev/full", "w") as full:
        done = _accord("run", str(path), "--format", fmt, stdout=subprocess.PIPE, stderr=full)
    assert done.returncode == 1


@pytest.mark.parametrize("fmt", ["pretty", "json"])
def test_a_failing_run_with_stderr_closed_ends(tmp_path: Path, fmt: str) -> None:
    path = _project(tmp_path)
    done = _accord(
        "run", str(path), "--format", fmt, stdout=subprocess.PIPE,
        preexec_fn=lambda: os.close(2),
    )  # fmt: skip
    assert done.returncode == 1


def test_output_to_a_full_device_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    path = _project(tmp_path)
    with open("/dev/full", "w") as full:
        done = _accord("run", str(path), "--format", "json", stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 1
    assert "cannot write the output: No space left on device" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_fifo_in_a_dataset_folder_is_refused(tmp_path: Path) -> None:
    path = _project(tmp_path)
    path.write_text("tasks:\n  - name: a\n    type: execute_sql\n    sql_query: SELECT 1 AS x\n")
    os.mkfifo(tmp_path / ".db" / "pipe.csv")
    done = _accord("run", str(path), capture_output=True)
    assert done.returncode == 1
    assert "is not a regular file (a pipe" in done.stderr


def test_a_huge_answer_is_cut_on_a_terminal_and_whole_in_a_file() -> None:
    # 10 MB of text took 44 s to print in pretty mode
    import io

    from rich.console import Console

    from accord.engine.report.pretty import SHOWN_CHARACTERS, _show_output

    text = "word " * 2_000_000
    terminal = io.StringIO()
    _show_output(Console(file=terminal, force_terminal=True, width=100), "answer", text)
    shown = terminal.getvalue()
    assert "more characters not shown" in shown and len(shown) < SHOWN_CHARACTERS * 2
    file = io.StringIO()
    _show_output(Console(file=file, force_terminal=False), "answer", text)
    assert text.strip() in file.getvalue()


@pytest.mark.slow
def test_runs_on_a_full_disk_end(tmp_path: Path) -> None:
    # 7 of 8 runs on a full disk with stderr there used to hang
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(small)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        path = _project(small)
        path.write_text(FAILING + "  - name: b\n    type: formatter\n    template: x\n"
                        "    export: {path: out/b.txt, format: txt}\n")  # fmt: skip
        with open(small / "fill", "wb") as fill:  # noqa: SIM117
            with contextlib.suppress(OSError):
                fill.write(b"\0" * 1_000_000)
        for _ in range(4):
            with open(small / "err.txt", "w") as err:
                done = _accord("run", str(path), "--keep-going", stdout=err, stderr=err)
            assert done.returncode in (1, 2)
    finally:
        subprocess.run(["umount", str(small)], capture_output=True)
