"""Ctrl-C during macro expansion stops `accord eval`, also while a `SQL_QUERY` runs a query
that never ends (SQLite held the main thread, where Ctrl-C waits for Python code to run)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bounds import PROCESS_SECONDS, as_from_a_terminal

ENDLESS = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c"
)


def has_open(pid: int, path: Path) -> bool:
    """Whether process `pid` holds `path` open (Linux's /proc)."""
    wanted = str(path.resolve())
    try:
        links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
    except OSError:  # the process ended, or a descriptor closed while listed
        return False
    return wanted in links


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_ctrl_c_stops_an_endless_sql_query_macro(scenario_project: Callable[..., Path]) -> None:
    root = scenario_project(
        "agent_class: scen_agents.Echo\n"
        f"scenarios:\n  - name: A\n    input_message: '{{{{ SQL_QUERY app.db {ENDLESS} }}}}'\n    expected_output: ok\n"
    )
    database = root / "app.db"
    sqlite3.connect(database).close()
    proc = subprocess.Popen(
        [sys.executable, "-m", "accord.cli", "eval", "scenarios.yaml", "-q"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=as_from_a_terminal,
    )  # fmt: skip
    try:
        # the event: the macro has opened the database, its query starts at once
        deadline = time.monotonic() + 60
        while not has_open(proc.pid, database):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the SQL_QUERY macro never opened the database"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=PROCESS_SECONDS)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, err
    assert "interrupted (SIGINT)" in err and "Traceback" not in err
