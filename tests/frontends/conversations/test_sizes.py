"""A failing conversation turn with a 10 MB answer and a 200 kB judge reason printed 20 MB
under pytest: the failure now shows the start of each value, how much was cut and where the
whole is (the run store, which keeps every character)."""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FakeOpenAI, Reply
from tests.faults.helpers import bounded

ANSWER = 10_000_000  # characters the agent answers
REASON = 200_000  # characters of the judge's reason
MARKER = re.compile(
    r"… \[([\d,]+) more characters cut; the whole is in the run store \(run ([\w-]+) in "
    r"\.accord/runs\.db\)\]"
)


CONVERSATION = f"""
from accord import AgentTurn, UserTurn


def test_long_answer(accord_conversation):
    expected = [UserTurn("hi"), AgentTurn("hello")]
    accord_conversation(lambda history: "x" * {ANSWER}, expected).run_sync()
"""


@pytest.mark.slow
def test_a_pytest_failure_shows_the_start_of_each_long_value(
    project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    def judge(body: dict[str, Any]) -> Reply:
        return Reply.tool("select_answer", {"reason": "r" * REASON, "answer": "no"})

    judge_server.responder = judge
    root = project({"test_chat.py": CONVERSATION})
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_chat.py"]
    code, out, err = bounded(pytest, root, env={"ACCORD_JUDGE_MODEL": ""})
    assert code == 1, out[-3000:] + err[-3000:]
    assert "turn 2 did not match" in out
    assert len(out) < 100_000, f"{len(out):,} characters of pytest output"
    cuts = MARKER.findall(out)
    assert cuts, out[-3000:]
    shown = {int(n.replace(",", "")) for n, _ in cuts}
    assert any(n > ANSWER - 10_000 for n in shown)  # the answer, cut
    assert any(REASON - 10_000 < n < REASON for n in shown)  # the judge's reason, cut
    # where the whole is: the run's rows in the store hold every character of the answer
    run_id = cuts[0][1]
    with closing(sqlite3.connect(root / ".accord" / "runs.db")) as store:
        outputs = store.execute("SELECT output FROM results WHERE run_id = ?", (run_id,))
        assert any("x" * ANSWER in (text or "") for (text,) in outputs)
