"""Crash harness: a 30-task workflow with slow model calls is SIGKILLed at random moments
(20 in CI, a few locally; ACCORD_CRASH_KILLS sets another count) and resumed each time. After
every kill the store passes SQLite's integrity check, and the resumed run's outputs equal an
uninterrupted run's, with no finished task run again."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

KILLS = int(os.environ.get("ACCORD_CRASH_KILLS", "20" if os.environ.get("CI") == "true" else "5"))
SEED = 20261123


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


def _finished_asks(db: Path) -> set[str]:
    """The model tasks the newest run finished (committed before it was killed)."""
    conn = sqlite3.connect(str(db))
    try:
        rows = conn.execute(
            "SELECT key FROM results WHERE status = 'succeeded' AND key LIKE 'ask_%' AND run_id ="
            " (SELECT run_id FROM runs ORDER BY started DESC LIMIT 1)"
        ).fetchall()
    finally:
        conn.close()
    return {str(r[0]) for r in rows}


def _run_count(db: Path) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    except sqlite3.OperationalError:  # the store is being created
        return 0
    finally:
        conn.close()


def _wait_for_run(db: Path, before: int, process: subprocess.Popen[bytes]) -> None:
    """Until the process has recorded its run in the store (a row, not a time)."""
    deadline = time.monotonic() + 120
    while _run_count(db) <= before:
        assert process.poll() is None, "the run ended before it was recorded"
        assert time.monotonic() < deadline, "the run was not recorded within 120 s"
        time.sleep(0.02)


def _run_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output[-2000:]
    return json.loads(result.stdout)  # type: ignore[no-any-return]


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
    for kill in range(KILLS):
        runs_before = _run_count(db)
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            if kill % 4 == 0:  # some kills land in start-up, before or while the store opens
                time.sleep(rng.uniform(0.0, 1.5))
            else:  # the rest once the run is recorded, at a random point of its work
                _wait_for_run(db, runs_before, process)
                recorded += 1
                time.sleep(rng.uniform(0.0, 2.5))
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        if not db.exists():
            continue  # killed before the run was recorded
        assert _integrity(db) == "ok"
        finished = _finished_asks(db)
        resumed = _run_json("run", str(path), "--format", "json", "--cache", "off",
                            "--resume", "last")  # fmt: skip
        assert resumed["outputs"] == reference
        called = {t["task"] for t in resumed["tasks"] if t.get("usage", {}).get("calls")}
        assert not called & finished  # no finished task asked the model again
        assert _integrity(db) == "ok"
        survived += 1
    assert survived >= recorded > 0  # every kill after the run was recorded was resumed
