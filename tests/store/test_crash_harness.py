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
    survived = 0
    for _kill in range(KILLS):
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(0.5, 4.0))  # start-up (~1.5 s) included: some kills land early
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
    assert survived >= KILLS - 1  # at most the first kill may land before the store exists
