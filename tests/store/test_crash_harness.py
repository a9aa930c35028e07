"""Crash harness: a 30-task workflow with slow model calls is SIGKILLed at random moments
(20 in CI, a few locally; ACCORD_CRASH_KILLS sets another count) and resumed each time. After
every kill the store passes SQLite's integrity check, and `--resume last` takes the newest run
the store recorded: the resumed run's outputs equal an uninterrupted run's, with no finished
task run again; with no run recorded yet it is refused, saying how to start fresh.

A run is recorded from its writer's first transaction on, a moment after it opens the store: a
kill between the two leaves a store without the run. The start-up kills aim at that moment
(after an event, the store's WAL file appearing, not after a time, which lands elsewhere on a
faster or slower machine); a second test reaches it every time by holding the transaction back."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.bounds import PROCESS_SECONDS
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

KILLS = int(os.environ.get("ACCORD_CRASH_KILLS", "20" if os.environ.get("CI") == "true" else "5"))
# the kills' random moments: ACCORD_CRASH_SEED replays a failure's (its report names it)
SEED = int(os.environ.get("ACCORD_CRASH_SEED", "20261123"))


def _workflow() -> str:
    """30 tasks: 10 model calls, 10 SQL queries, a loop of 3, and formatters joining them."""
    lines = ["tasks:"]
    for i in range(10):
        lines += [f"  - name: ask_{i}", "    type: agent", "    model: fake",
                  f"    prompt: 'question {i}'"]  # fmt: skip
        lines += [f"  - name: sql_{i}", "    type: execute_sql",
                  f"    sql_query: SELECT SUM(amount) * {i} AS total FROM sales"]  # fmt: skip
    lines += ["  - name: regions", "    type: loop_sequential", "    values: [EU, US, APAC]",
              "    tasks:", "      - name: line", "        type: formatter",
              "        template: '{{ value }}: {{ sql_1.total[0] }}'"]  # fmt: skip
    for j in range(8):
        parts = " ".join(f"{{{{ ask_{k} }}}}/{{{{ sql_{k}.total[0] }}}}" for k in (j, j + 1))
        lines += [f"  - name: join_{j}", "    type: formatter", f"    template: '{parts}'"]
    lines += ["  - name: final", "    type: formatter",
              "    template: \"{% for r in regions %}{{ r.line }};{% endfor %}"
              + "".join(f"{{{{ join_{j} }}}}|" for j in range(8)) + '"']  # fmt: skip
    return "\n".join(lines) + "\n"


def _project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "sales.csv").write_text("region,amount\nEU,10\nUS,20\nAPAC,5\n")
    (tmp_path / "config.yml").write_text(fake_model_config(fake))
    path = tmp_path / "crash.workflow.yml"
    path.write_text(_workflow())
    return path


def _answer(body: dict[str, Any]) -> Reply:
    return Reply(text=f"answer to {body['messages'][-1]['content']}", delay=0.15)


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(str(db))
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def _query(db: Path, sql: str, *params: str) -> list[tuple[Any, ...]]:
    """The rows of `sql`, none while the store or its tables do not exist yet: a run killed
    in start-up can leave the file without them (SQLite creates it when it opens it, and the
    schema follows)."""
    if not db.exists():
        return []
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        return []
    finally:
        conn.close()


def _run_ids(db: Path) -> list[str]:
    """The recorded runs, the newest first (the order `--resume last` takes)."""
    return [str(r[0]) for r in _query(db, "SELECT run_id FROM runs ORDER BY started DESC")]


def _finished_asks(db: Path, run_id: str) -> set[str]:
    """The model tasks a run finished (committed before it was killed)."""
    rows = _query(
        db,
        "SELECT key FROM results WHERE status = 'succeeded' AND key LIKE 'ask_%' AND run_id = ?",
        run_id,
    )
    return {str(r[0]) for r in rows}


def _wait_for_run(db: Path, before: int, process: subprocess.Popen[bytes]) -> None:
    """Until the process has recorded its run in the store (a row, not a time)."""
    deadline = time.monotonic() + 120
    while len(_run_ids(db)) <= before:
        # the row is read again once the process has ended: a starved test process can miss
        # the moment between a run's row and its end
        if process.poll() is not None:
            assert len(_run_ids(db)) > before, "the run ended before it was recorded"
            return
        assert time.monotonic() < deadline, "the run was not recorded within 120 s"
        time.sleep(0.02)


def _kill_moment_in_start_up(db: Path, rng: random.Random) -> str:
    """Wait for a random moment of a run's start-up, and say which: a random time after the
    process started, or sooner a random moment of the 40 ms after the run opened its store,
    where the store exists and the run's row may not be stored yet (the writer's first
    transaction stores it some 20-40 ms later). The second is reached on a machine of any
    speed, the first mostly on a busy one. The store's opening is an event: its WAL file
    appears (SQLite removes it when the last connection closes, so no earlier process left
    it)."""
    pause, after = rng.uniform(0.0, 1.5), rng.uniform(0.0, 0.04)
    wal = db.with_name(db.name + "-wal")
    deadline = time.monotonic() + pause
    while time.monotonic() < deadline:
        if wal.exists():
            time.sleep(after)
            return f"{after * 1000:.0f} ms after the store opened"
        time.sleep(0.005)
    return f"{pause:.3f} s into start-up"


def _resume_last(path: Path) -> Any:
    return CliRunner().invoke(
        main, ["run", str(path), "--format", "json", "--cache", "off", "--resume", "last"]
    )


def _run_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output[-2000:]
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _check_resume(db: Path, path: Path, before: list[str], reference: dict[str, Any]) -> bool:
    """After a kill: what `--resume last` does is decided by what the store holds, not by
    whether its file exists. A run is recorded (its row committed, with every result that
    finished before it) or not at all: SQLite creates the file when the run opens its store,
    its row follows in the writer's first transaction. Whether a run was resumed."""
    if db.exists():
        assert _integrity(db) == "ok"
    runs = _run_ids(db)
    killed = [r for r in runs if r not in before]
    assert len(killed) <= 1, runs
    if not runs:  # nothing recorded yet: refused, saying how to start fresh
        result = _resume_last(path)
        assert result.exit_code == 2, result.output[-2000:]
        assert "no earlier run of workflow 'crash'" in result.stderr, result.stderr
        assert "run it without --resume to start fresh" in result.stderr
        assert "Traceback" not in result.output
        return False
    # the killed run when it was recorded, else the newest run recorded before it
    newest = runs[0]
    assert newest == (killed[0] if killed else before[0]), (runs, before)
    finished = _finished_asks(db, newest)
    result = _resume_last(path)
    assert result.exit_code == 0, result.output[-2000:]
    resumed = json.loads(result.stdout)
    assert resumed["summary"]["resumed_from"] == newest
    assert resumed["outputs"] == reference
    called = {t["task"] for t in resumed["tasks"] if t.get("usage", {}).get("calls")}
    assert not called & finished  # no finished task asked the model again
    assert _integrity(db) == "ok"
    return True


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = _answer
    reference_root = tmp_path / "reference"
    reference_root.mkdir()
    reference = _run_json("run", str(_project(reference_root, fake_llm)), "--format", "json",
                          "--cache", "off")["outputs"]  # fmt: skip
    root = tmp_path / "crashed"
    root.mkdir()
    path = _project(root, fake_llm)
    db = root / ".accord" / "runs.db"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    command = [sys.executable, "-m", "accord.cli", "run", str(path), "--cache", "off",
               "--quiet", "--max-concurrency", "4"]  # fmt: skip
    rng = random.Random(SEED)
    survived = recorded = 0
    moments: list[str] = []
    try:
        for kill in range(KILLS):
            before = _run_ids(db)
            process = subprocess.Popen(
                command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                if kill % 4 == 0:  # in start-up: before the store opens or just after
                    when = _kill_moment_in_start_up(db, rng)
                else:  # once the run is recorded, at a random point of its work
                    _wait_for_run(db, len(before), process)
                    recorded += 1
                    pause = rng.uniform(0.0, 2.5)
                    time.sleep(pause)
                    when = f"{pause:.3f} s after its run was recorded"
            finally:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=30)
            runs = len(_run_ids(db))
            moments.append(f"kill {kill} {when}: runs {len(before)} -> {runs}")
            if _check_resume(db, path, before, reference):
                survived += 1
    except Exception as exc:  # how to replay it, and where each kill landed
        exc.add_note("; ".join(moments))
        exc.add_note(f"replay: ACCORD_CRASH_SEED={SEED} ACCORD_CRASH_KILLS={KILLS}")
        raise
    assert survived >= recorded > 0  # every kill after the run was recorded was resumed


def _killed_before_its_row(db: Path, path: Path, asked: threading.Event) -> None:
    """Run `path` and SIGKILL it once it is asking the model, while another connection holds
    the store's write lock (as another accord process writing the store does): the run has
    opened the store and started its tasks, and its row waits for the writer's first
    transaction."""
    lock = sqlite3.connect(str(db), isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    try:
        asked.clear()
        process = subprocess.Popen(
            [sys.executable, "-m", "accord.cli", "run", str(path), "--cache", "off", "--quiet"],
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            assert asked.wait(PROCESS_SECONDS), "the run did not ask the model"
            assert process.poll() is None
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    finally:
        lock.execute("ROLLBACK")
        lock.close()


def test_a_run_killed_before_it_is_recorded_is_not_resumed(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    asked = threading.Event()

    def answer(body: dict[str, Any]) -> Reply:
        asked.set()
        return _answer(body)

    fake_llm.responder = answer
    path = _project(tmp_path, fake_llm)
    other = tmp_path / "other.workflow.yml"
    other.write_text("tasks:\n  - name: hello\n    type: formatter\n    template: hi\n")
    _run_json("run", str(other), "--format", "json")  # the store exists, with another run
    db = tmp_path / ".accord" / "runs.db"
    before = _run_ids(db)

    _killed_before_its_row(db, path, asked)
    assert _integrity(db) == "ok"
    assert _run_ids(db) == before  # nothing of the killed run is recorded
    orphans = "SELECT run_id FROM results WHERE run_id NOT IN (SELECT run_id FROM runs)"
    assert _query(db, orphans) == []
    result = _resume_last(path)
    assert result.exit_code == 2, result.output[-2000:]
    assert "--resume last: no earlier run of workflow 'crash'" in result.stderr, result.stderr
    assert "run it without --resume to start fresh" in result.stderr
    assert "Traceback" not in result.output

    # with a run of the workflow recorded, `--resume last` takes it and asks the model nothing
    first = _run_json("run", str(path), "--format", "json", "--cache", "off")
    _killed_before_its_row(db, path, asked)
    assert _integrity(db) == "ok"
    assert _run_ids(db)[0] == first["run_id"]
    result = _resume_last(path)
    assert result.exit_code == 0, result.output[-2000:]
    resumed = json.loads(result.stdout)
    assert resumed["summary"]["resumed_from"] == first["run_id"]
    assert resumed["outputs"] == first["outputs"]
    assert not [t["task"] for t in resumed["tasks"] if t.get("usage", {}).get("calls")]
