"""The run store: runs and task results on disk, `runs list|show`, resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.bounds import PROCESS_SECONDS
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

REPO = Path(__file__).resolve().parents[2]
AGENTS = 6


def workflow() -> str:
    tasks = "".join(
        f"  - name: step_{i}\n    type: agent\n    model: fake\n    prompt: question {i}\n"
        for i in range(AGENTS)
    )
    parts = " ".join("{{ step_" + str(i) + " }}" for i in range(AGENTS))
    return f"tasks:\n{tasks}  - name: final\n    type: formatter\n    template: '{parts}'\n"


def make_project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    (tmp_path / "config.yml").write_text(fake_model_config(fake))
    path = tmp_path / "w.workflow.yml"
    path.write_text(workflow())
    return path


def answering(fake: FakeOpenAI, delay: float = 0.0) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        return Reply(text=f"answer to {body['messages'][-1]['content']}", delay=delay)

    fake.responder = respond


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def stored(db: Path) -> dict[str, str]:
    conn = sqlite3.connect(str(db))
    try:
        return dict(conn.execute("SELECT key, status FROM results").fetchall())
    finally:
        conn.close()


def test_runs_list_and_show(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    answering(fake_llm)
    path = make_project(tmp_path, fake_llm)
    first = cli("run", str(path), "--format", "json")
    assert first.exit_code == 0, first.output
    run_id = json.loads(first.stdout)["run_id"]
    listing = cli("runs", "list", "--project", str(tmp_path), "--format", "json")
    assert listing.exit_code == 0
    runs = json.loads(listing.stdout)
    assert runs[0]["run_id"] == run_id and runs[0]["status"] == "succeeded"
    shown = cli("runs", "show", run_id[:12], "--project", str(tmp_path), "--format", "json")
    doc = json.loads(shown.stdout)
    assert {t["task"] for t in doc["tasks"]} == {f"step_{i}" for i in range(AGENTS)} | {"final"}
    assert next(t for t in doc["tasks"] if t["task"] == "step_0")["output"] == (
        "answer to question 0"
    )
    missing = cli("runs", "show", "nope", "--project", str(tmp_path))
    assert missing.exit_code == 2 and "not a recorded run" in missing.stderr


def test_resume_reuses_finished_tasks_only(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    answering(fake_llm)
    path = make_project(tmp_path, fake_llm)
    assert cli("run", str(path), "--cache", "off").exit_code == 0
    calls = len(fake_llm.requests)
    again = cli("run", str(path), "--cache", "off", "--resume", "last", "--format", "json")
    assert again.exit_code == 0
    assert len(fake_llm.requests) == calls  # nothing re-ran
    assert json.loads(again.stdout)["summary"]["stats"]["reused"] == AGENTS + 1
    path.write_text(workflow().replace("question 3", "question three"))
    changed = cli("run", str(path), "--cache", "off", "--resume", "last", "--format", "json")
    assert changed.exit_code == 0
    assert len(fake_llm.requests) == calls + 1  # only the edited task re-ran
    assert "answer to question three" in json.loads(changed.stdout)["outputs"]["final"]
    # `runs show` says which tasks the resumed run took from the earlier one
    run_id = json.loads(changed.stdout)["run_id"]
    shown = cli("runs", "show", run_id, "--project", str(tmp_path), "--format", "json")
    tasks = {t["task"]: t for t in json.loads(shown.stdout)["tasks"]}
    assert [k for k, t in tasks.items() if not t["reused"]] == ["step_3", "final"]
    assert tasks["step_0"]["reused"] and tasks["step_0"]["attempts"] == 0
    table = cli("runs", "show", run_id, "--project", str(tmp_path)).stdout
    assert table.count("reused") == AGENTS - 1 and "succeeded" in table


def test_resume_after_sigkill_loses_no_finished_task(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    answering(fake_llm, delay=0.4)
    path = make_project(tmp_path, fake_llm)
    db = tmp_path / ".accord" / "runs.db"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "accord.cli",
            "run",
            str(path),
            "--max-concurrency",
            "1",
            "--cache",
            "off",
            "--quiet",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    done: dict[str, str] = {}
    while time.monotonic() < deadline:
        if db.is_file():
            try:
                done = {k: v for k, v in stored(db).items() if v == "succeeded"}
            except sqlite3.Error:
                done = {}
        if len(done) >= 2:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert 2 <= len(done) < AGENTS, done
    done = {k: v for k, v in stored(db).items() if v == "succeeded"}  # all committed
    asked_before = {r["messages"][-1]["content"] for r in fake_llm.requests}
    fake_llm.requests.clear()
    answering(fake_llm)
    resumed = cli("run", str(path), "--cache", "off", "--resume", "last", "--format", "json")
    assert resumed.exit_code == 0, resumed.output
    asked_now = [r["messages"][-1]["content"] for r in fake_llm.requests]
    finished = {f"question {k.split('_')[1]}" for k in done}
    assert not finished & set(asked_now)  # no finished task ran again
    assert len(asked_now) == AGENTS - len(done)
    assert asked_before  # the killed run had really started calling
    expected = " ".join(f"answer to question {i}" for i in range(AGENTS))
    assert json.loads(resumed.stdout)["outputs"]["final"] == expected


def test_two_runs_at_once_share_store_and_cache(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    answering(fake_llm, delay=0.05)
    path = make_project(tmp_path, fake_llm)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    command = [sys.executable, "-m", "accord.cli", "run", str(path), "--format", "json"]
    procs = [
        subprocess.Popen(
            command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=PROCESS_SECONDS) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    docs = [json.loads(o[0]) for o in outs]
    assert docs[0]["outputs"] == docs[1]["outputs"]
    runs = json.loads(cli("runs", "list", "--project", str(tmp_path), "--format", "json").stdout)
    assert {r["run_id"] for r in runs} == {d["run_id"] for d in docs}
    assert all(r["status"] == "succeeded" for r in runs)
    conn = sqlite3.connect(str(tmp_path / ".accord" / "cache.db"))
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT COUNT(*) FROM calls").fetchone() == (AGENTS,)


def test_finishing_a_run_does_not_wait_out_a_batch_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer pauses after a task's result so that the next ones share its transaction;
    after the run's end nothing more comes, and `finish` (which waits for the writer) returns
    at once: every run paid the pause (20 ms) at its end."""
    from accord.engine import store

    monkeypatch.setattr(store, "BATCH_SECONDS", 30.0)  # a pause no test waits out
    run_store = store.RunStore(store.runs_db(tmp_path), "20261125-000000-abcdef")
    started = time.monotonic()
    run_store.finish("succeeded", None, {"tasks": {}})
    assert time.monotonic() - started < 10
    assert run_store.finished
