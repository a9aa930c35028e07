"""`accord test` runs on the engine's runner: each test file's run is in the run store, and
`--resume` finishes a run that was killed, running only the tests it had not finished."""

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
from tests.commands.conftest import JUDGE_YAML, Script, accord_test
from tests.fakes import FakeOpenAI, Reply

WORKFLOW = f"""
consistency_prompt: |
{JUDGE_YAML}
tasks:
  - name: users
    type: agent
    prompt: "How many users do we have?"
  - name: revenue
    type: agent
    prompt: "What was the revenue?"
tests:
  - type: consistency
    task_ref: users
    n: 3
  - type: consistency
    task_ref: revenue
    n: 3
"""


def stored_outcomes(db: Path) -> list[str]:
    """The tests whose outcome the run store holds (empty while the store is not there)."""
    if not db.is_file():
        return []
    conn = sqlite3.connect(db, timeout=5)
    try:
        rows = conn.execute(
            "SELECT key FROM results WHERE key LIKE '%.outcome' AND status = 'succeeded'"
        ).fetchall()
    except sqlite3.OperationalError:  # the tables are being created
        return []
    finally:
        conn.close()
    return sorted(r[0] for r in rows)


def verdict(doc: dict[str, Any]) -> dict[str, Any]:
    """What the run decided: the figures of every test, without timings and call counts."""
    tests = [{k: v for k, v in t.items() if k != "seconds"} for t in doc["tests"]]
    return {"accuracy": doc["accuracy"], "tests": tests}


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_stopped_test_run_resumes_with_only_the_unfinished_tests(
    project: Callable[..., Path],
    script: Script,
    fake_llm: FakeOpenAI,
    tmp_path: Path,
    stop: signal.Signals,
) -> None:
    def scripted() -> None:  # each run's three answers (the last one repeats)
        script.answer("How many users", "42 users", "42 users", "41 users")
        script.answer("What was the revenue", "1,200 USD", "1200 USD", "900 USD")

    scripted()
    path = project({"w.workflow.yml": WORKFLOW})
    args = ("--format", "json", "--cache", "off")
    unbroken = accord_test(path, *args)
    assert unbroken.exit_code == 0, unbroken.stderr

    # the revenue test's model calls are held until the run is killed
    release = threading.Event()
    answer = fake_llm.responder
    assert answer is not None

    def held(body: dict[str, Any]) -> Reply:
        if "revenue" in json.dumps(body):
            release.wait(PROCESS_SECONDS)
            return Reply(drop=True)  # the run that asked was killed meanwhile
        return answer(body)

    fake_llm.responder = held
    scripted()
    db = tmp_path / ".accord" / "runs.db"
    before = stored_outcomes(db)
    process = subprocess.Popen(
        [sys.executable, "-m", "accord.cli", "test", str(path), *args],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + PROCESS_SECONDS
        while len(stored_outcomes(db)) == len(before):  # the users test's outcome is stored
            assert process.poll() is None, process.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "no test outcome was stored"
            time.sleep(0.05)
        os.killpg(process.pid, stop)
        _out, err = process.communicate(timeout=PROCESS_SECONDS)
    finally:
        release.set()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if stop == signal.SIGKILL:
        assert process.returncode == -signal.SIGKILL
    else:  # recorded as interrupted, with the command that finishes it
        assert process.returncode == 143, err.decode()[-2000:]
        assert f"`accord test {path} --resume last` runs the rest" in err.decode()
        listed = CliRunner().invoke(
            main, ["runs", "list", "--project", str(tmp_path), "--format", "json"]
        )
        assert json.loads(listed.stdout)[0]["status"] == "interrupted"

    fake_llm.responder = answer
    scripted()
    script.prompts.clear()
    asked = len(fake_llm.requests)
    resumed = accord_test(path, *args, "--resume", "last")
    assert resumed.exit_code == unbroken.exit_code, resumed.stderr
    again = [json.dumps(r) for r in fake_llm.requests[asked:]]
    assert again and all("revenue" in r for r in again)  # the users test was not run again
    assert not any("How many users" in p for p in script.prompts)
    assert verdict(resumed.doc) == verdict(unbroken.doc)


def test_resume_runs_a_test_whose_runs_failed_again(
    project: Callable[..., Path], script: Script, fake_llm: FakeOpenAI
) -> None:
    script.answer("How many users", "42 users")
    script.answer("What was the revenue", Reply.error(400, "bad request"))
    path = project({"w.workflow.yml": WORKFLOW})
    first = accord_test(path, "--format", "json", "--cache", "off")
    assert [t["status"] for t in first.doc["tests"]] == ["ok", "error"], first.stderr
    script.answer("What was the revenue", "1200 USD")
    script.prompts.clear()
    again = accord_test(path, "--format", "json", "--cache", "off", "--resume", "last")
    assert again.exit_code == 0, again.stderr
    assert [t["status"] for t in again.doc["tests"]] == ["ok", "ok"]
    assert script.prompts and all("revenue" in p for p in script.prompts)


def test_a_test_run_is_in_the_run_store(project: Callable[..., Path], script: Script) -> None:
    script.answer("How many users", "42 users")
    script.answer("What was the revenue", "1200 USD")
    path = project({"w.workflow.yml": WORKFLOW})
    run = accord_test(path, "--format", "json")
    assert run.exit_code == 0, run.stderr
    listed = CliRunner().invoke(
        main, ["runs", "list", "--project", str(path.parent), "--format", "json"]
    )
    assert listed.exit_code == 0, listed.output
    runs = json.loads(listed.stdout)
    assert [r["status"] for r in runs] == ["succeeded"]


def test_resume_last_of_a_test_run_never_takes_a_run_of_the_same_file(
    project: Callable[..., Path], script: Script
) -> None:
    """`accord run F` and `accord test F` record different workflows of one file: the newest
    run of the file being an `accord run` must not make `accord test --resume last` reuse
    nothing (or, worse, a run's outputs), and a run's id given to `accord test` is refused."""
    script.answer("How many users", "42 users")
    script.answer("What was the revenue", Reply.error(400, "bad request"))
    path = project({"w.workflow.yml": WORKFLOW})
    first = accord_test(path, "--format", "json", "--cache", "off")
    assert [t["status"] for t in first.doc["tests"]] == ["ok", "error"], first.stderr
    ran = CliRunner().invoke(main, ["run", str(path), "--format", "json", "--cache", "off"])
    listed = CliRunner().invoke(
        main, ["runs", "list", "--project", str(path.parent), "--format", "json"]
    )
    runs = json.loads(listed.stdout)
    assert [r["workflow"] for r in runs] == ["w", "w tests"], (ran.output, runs)

    script.answer("What was the revenue", "1200 USD")
    script.prompts.clear()
    again = accord_test(path, "--format", "json", "--cache", "off", "--resume", "last")
    assert again.exit_code == 0, again.stderr
    assert [t["status"] for t in again.doc["tests"]] == ["ok", "ok"]
    # the test run was resumed: its users test was reused, only revenue asked again
    assert script.prompts and all("revenue" in p for p in script.prompts)

    refused = accord_test(path, "--resume", runs[0]["run_id"])
    assert refused.exit_code == 2, refused.stderr
    assert f"run {runs[0]['run_id']} is a run of workflow 'w'" in refused.stderr
    assert "Traceback" not in refused.stderr
