"""`--resume` picks runs of the workflow being run; an interrupted run is recorded as such.

Also: `--resume ""` (of `run`, `test` and `eval`) and a `--project` folder that does not
exist are usage errors.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.bounds import PROCESS_SECONDS, as_from_a_terminal

REPO = Path(__file__).resolve().parents[2]
# minutes of DuckDB work unless interrupted
SLOW_DUCKDB = "SELECT sum(a.range * b.range) FROM range(3000000) a, range(3000000) b"


def cli(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def sql_workflow(*queries: str) -> str:
    tasks = "".join(
        f'  - name: q{i}\n    type: execute_sql\n    database: local\n    sql_query: "{sql}"\n'
        for i, sql in enumerate(queries)
    )
    return f"tasks:\n{tasks}"


def make_project(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "data").mkdir()
    (tmp_path / "config.yml").write_text(
        "databases:\n  - name: local\n    type: duckdb\n    dataset: data\n"
    )
    a = tmp_path / "A.workflow.yml"
    a.write_text(sql_workflow("SELECT 1 AS x", "SELECT 2 AS x"))
    (tmp_path / "flows").mkdir()
    b = tmp_path / "flows" / "B.workflow.yml"
    b.write_text(sql_workflow("SELECT 3 AS x", "SELECT 4 AS x", "SELECT 5 AS x"))
    return a, b


def run_json(path: Path, *extra: str) -> dict[str, Any]:
    result = cli("run", path, "--format", "json", *extra)
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def assert_usage_error(result: Any, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    for needle in needles:
        assert needle in result.stderr, result.stderr
    assert "Traceback" not in result.output


def test_resume_last_takes_the_newest_run_of_this_workflow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = make_project(tmp_path)
    first_b = run_json(b)
    first_a = run_json(a)  # the newest run in the project, of another workflow
    resumed = run_json(b, "--resume", "last")
    assert resumed["summary"]["resumed_from"] == first_b["run_id"]
    assert resumed["summary"]["stats"]["reused"] == 3
    # from another folder, with another spelling of the same file
    monkeypatch.chdir(tmp_path / "flows")
    again = run_json(Path("B.workflow.yml"), "--resume", "last")
    assert again["summary"]["resumed_from"] == resumed["run_id"]
    assert again["summary"]["stats"]["reused"] == 3
    assert first_a["run_id"] not in {resumed["summary"]["resumed_from"]}


def test_resume_last_without_a_run_of_this_workflow_is_an_error(tmp_path: Path) -> None:
    a, b = make_project(tmp_path)
    run_json(a)
    result = cli("run", b, "--resume", "last")
    assert_usage_error(
        result, "no earlier run of workflow 'B'", "B.workflow.yml", "none", "without --resume"
    )
    assert result.stdout == ""
    runs = json.loads(cli("runs", "list", "--project", tmp_path, "--format", "json").stdout)
    assert [r["workflow"] for r in runs] == ["A"]  # nothing ran


def test_resume_refuses_a_run_of_another_workflow(tmp_path: Path) -> None:
    a, b = make_project(tmp_path)
    run_a = run_json(a)["run_id"]
    run_b = run_json(b)["run_id"]
    for given in (run_a, run_a[:20]):  # a prefix unique to A (ids share the second)
        result = cli("run", b, "--resume", given)
        assert_usage_error(result, run_a, "workflow 'A'", "workflow 'B'", run_b)
    missing = cli("run", b, "--resume", "19990101-000000-abcdef")
    assert_usage_error(missing, "is not a recorded run", run_b)
    ok = run_json(b, "--resume", run_b)
    assert ok["summary"]["resumed_from"] == run_b


@pytest.mark.parametrize("value", ["", "  "])
def test_empty_resume_is_a_usage_error(tmp_path: Path, value: str) -> None:
    _a, b = make_project(tmp_path)
    result = cli("run", b, "--resume", value)
    assert_usage_error(result, "--resume", "'last'")
    assert not (tmp_path / ".accord" / "runs.db").exists()  # nothing ran


@pytest.mark.parametrize("value", ["", "  "])
@pytest.mark.parametrize("command", ["test", "eval"])
def test_test_and_eval_refuse_an_empty_resume_as_run_does(
    tmp_path: Path, command: str, value: str
) -> None:
    _a, b = make_project(tmp_path)
    suite = tmp_path / "s.eval.yml"  # runs and passes without --resume
    suite.write_text(
        "target: echo\nevaluators: [{type: contains, value: hi}]\ncases: [{id: a, input: hi}]\n"
    )
    result = cli(command, b if command == "test" else suite, "--resume", value)
    assert_usage_error(result, "--resume", "it is empty", "'last'")
    assert result.stdout == ""
    assert not (tmp_path / ".accord" / "runs.db").exists()  # nothing ran


@pytest.mark.parametrize("command", [["list"], ["show", "last"]])
def test_runs_commands_refuse_a_missing_project_folder(tmp_path: Path, command: list[str]) -> None:
    missing = tmp_path / "nope"
    result = cli("runs", *command, "--project", missing)
    assert_usage_error(result, f"project folder '{missing}' does not exist")
    assert result.stdout == ""
    assert not missing.exists()


def stored_results(db: Path) -> dict[str, str]:
    try:
        conn = sqlite3.connect(str(db))
        try:
            return dict(conn.execute("SELECT key, status FROM results").fetchall())
        finally:
            conn.close()
    except sqlite3.Error:
        return {}


def sigint_ignored() -> None:
    """As a shell without job control starts a command in the background."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    ("signum", "exit_code", "preexec"),
    [
        (signal.SIGINT, 130, as_from_a_terminal),
        (signal.SIGTERM, 128 + signal.SIGTERM, as_from_a_terminal),
        # asyncio's Ctrl-C handler is not installed then: SIGTERM raised KeyboardInterrupt
        # inside the loop's work, a traceback, and q1 never recorded as cancelled
        (signal.SIGTERM, 128 + signal.SIGTERM, sigint_ignored),
    ],
    ids=["sigint", "sigterm", "sigterm-sigint-ignored"],
)
def test_an_interrupted_run_is_recorded_and_can_be_resumed(
    tmp_path: Path, signum: int, exit_code: int, preexec: Callable[[], None]
) -> None:
    a, _b = make_project(tmp_path)
    a.write_text(
        sql_workflow("SELECT 42 AS answer", SLOW_DUCKDB)
        + "  - name: after\n    type: formatter\n    template: '{{ q1 }}'\n"
    )
    db = tmp_path / ".accord" / "runs.db"
    # the debug log says when q1 starts; the signal is sent then, while its query may still
    # be starting (a stop sent before DuckDB's execute began used to be lost, and the run
    # went on for minutes)
    process = subprocess.Popen(
        [sys.executable, "-m", "accord.cli", "--log-level", "debug", "--log-format", "json",
         "run", str(a), "--quiet"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=preexec,
    )  # fmt: skip
    lines: list[str] = []
    q1_started = threading.Event()

    def read_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if '"task_started"' in line and '"q1"' in line:
                q1_started.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert q1_started.wait(timeout=PROCESS_SECONDS), "".join(lines)
        deadline = time.monotonic() + 60
        while process.poll() is None and stored_results(db).get("q0") != "succeeded":
            assert time.monotonic() < deadline, "q0 was never stored"
            time.sleep(0.05)  # polls for the row, the event waited for
        assert process.poll() is None, "".join(lines)
        process.send_signal(signum)
        process.wait(timeout=30)
        reader.join(timeout=10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    err = "".join(lines)
    assert process.returncode == exit_code, err
    assert "interrupted" in err and "--resume" in err and "Traceback" not in err

    listing = cli("runs", "list", "--project", tmp_path, "--format", "json")
    [run] = json.loads(listing.stdout)
    assert run["status"] == "interrupted", run
    assert run["finished"] and run["error"]
    show = cli("runs", "show", "last", "--project", tmp_path, "--format", "json")
    shown = json.loads(show.stdout)
    tasks = {t["task"]: t["status"] for t in shown["tasks"]}
    assert tasks["q0"] == "succeeded" and tasks["q1"] == "cancelled", tasks
    pretty = cli("runs", "list", "--project", tmp_path)
    assert "interrupted" in pretty.stdout
    pretty = cli("runs", "show", run["run_id"], "--project", tmp_path)
    assert f"--resume {run['run_id']}" in pretty.stdout

    a.write_text(a.read_text().replace(SLOW_DUCKDB, "SELECT 7 AS x"))
    resumed = run_json(a, "--resume", "last")
    assert resumed["summary"]["resumed_from"] == run["run_id"]
    assert resumed["summary"]["stats"]["reused"] == 1  # q0; q1 was edited, so it ran again
