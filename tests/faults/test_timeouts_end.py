"""A timeout ends the work: a program that prints fast past its time limit, or a blocking
Python target or agent that never returns, fails its case and the process still ends, with
its report written. Each run is a subprocess bounded by the test (`helpers.accord`, or
`communicate(timeout=...)` with the process group killed in `finally`)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from accord.engine.programs import run_program
from tests.bounds import PROCESS_SECONDS
from tests.conftest import trusted
from tests.fakes import FakeOpenAI, Reply
from tests.faults.helpers import accord, assert_no_traceback

AGENTV_TARGETS = (
    "targets:\n  - name: default\n    provider: openai\n    endpoint: ${{ FAKE_URL }}\n"
    "    api_key: key\n    model: gpt-test\n"
)


def agentv_project(tmp_path: Path, fake_llm: FakeOpenAI, eval_file: str) -> Path:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(AGENTV_TARGETS)
    (tmp_path / ".env").write_text(f"FAKE_URL={fake_llm.url}\n")
    fake_llm.responder = lambda request: Reply(text="The answer is 42.")
    path = tmp_path / "evals" / "dataset.yaml"
    path.parent.mkdir()
    path.write_text(eval_file)
    return path


@pytest.mark.parametrize("script", ["yes", "sleep 300 & yes"])
def test_a_code_judge_printing_past_its_timeout_is_killed_and_the_run_ends(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    # `yes` prints gigabytes a minute; the run used to wait for ever on its pipes after the
    # kill. The second form leaves a child holding the pipes too: the whole group is killed.
    monkeypatch.setenv("FAKE_URL", fake_llm.url)
    file = agentv_project(
        tmp_path,
        fake_llm,
        "tests:\n  - id: t\n    criteria: Gives 42\n    input: What is six times seven?\n"
        "    execution:\n      evaluators:\n"
        f"        - {{name: floods, type: code_judge, script: '{script}', timeout_ms: 1000}}\n",
    )
    trusted(file)  # its code judge is a program of the PATH
    out = tmp_path / "out.jsonl"
    finished = accord(
        "eval", str(file), "--output", str(out), cwd=tmp_path, timeout=PROCESS_SECONDS
    )
    assert_no_traceback(finished)
    assert finished.code == 3, finished.stderr  # no case produced a result
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["verdict"] == "error"
    assert "gave no answer within 1 s (killed)" in record["error"]


def test_what_is_kept_of_a_programs_output_is_capped_and_says_so(tmp_path: Path) -> None:
    # what is kept of a program's output has a cap; the rest is read and dropped, and the
    # result says where it was cut
    flood = "yes | head -c 3000000"
    done = asyncio.run(
        asyncio.wait_for(run_program(["/bin/sh", "-c", flood], b"", tmp_path, 30, cap=1000), 40)
    )
    assert not done.timed_out and done.code == 0
    assert done.stdout.startswith(b"y\ny\n")
    assert done.stdout.endswith(b"\n[output truncated at 1,000 bytes]")
    assert len(done.stdout) < 1100


def test_a_program_that_does_not_read_its_large_stdin_still_ends(tmp_path: Path) -> None:
    done = asyncio.run(
        asyncio.wait_for(
            run_program(["/bin/sh", "-c", "echo early"], b"x" * 5_000_000, tmp_path, 30), 40
        )
    )
    assert done.stdout == b"early\n" and done.code == 0 and not done.timed_out


BLOCKING_MODULE = """
import time


def blocks(question):
    time.sleep(100000)


class BlockingAgent:
    def __init__(self, config):
        pass

    def run(self, message):
        time.sleep(100000)
"""


def test_a_blocking_python_target_fails_at_its_timeout_and_the_process_ends(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # the node failed at 2 s, then asyncio.run waited for ever for the worker thread
    (tmp_path / "slowtarget.py").write_text(BLOCKING_MODULE)
    (tmp_path / "config.yml").write_text(
        f"models:\n  - name: fake\n    model: openai/gpt-test\n    api_base: {fake_llm.url}\n"
        "    api_key: test-key\n"
    )
    (tmp_path / "blocks.eval.yml").write_text(
        "target: {type: python, function: 'slowtarget:blocks', timeout: 2}\n"
        "cases:\n  - {id: a, input: What is six times seven?}\n"
        "evaluators: [{type: contains, value: '42'}]\n"
    )
    out = tmp_path / "report.json"
    finished = accord(
        "eval", "blocks.eval.yml", "--format", "json", "--output", str(out), cwd=tmp_path,
        timeout=PROCESS_SECONDS,
    )  # fmt: skip
    assert_no_traceback(finished)
    assert finished.code == 3, finished.stdout + finished.stderr  # no case produced a result
    assert "gave no answer within 2 s" in finished.stdout + finished.stderr
    assert json.loads(out.read_text())["suites"]  # the report is written


def test_a_blocking_scenario_agent_fails_at_its_timeout_and_the_process_ends(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    (tmp_path / "slowtarget.py").write_text(BLOCKING_MODULE)
    (tmp_path / "scenarios.yaml").write_text(
        "agent_class: slowtarget.BlockingAgent\ntimeout: 2\n"
        "scenarios:\n  - {name: A, input_message: hello, expected_output: ok}\n"
    )
    finished = accord("eval", "scenarios.yaml", "-q", cwd=tmp_path, timeout=PROCESS_SECONDS)
    assert_no_traceback(finished)
    assert finished.code == 1, finished.stdout + finished.stderr  # a case errored
    assert "BlockingAgent gave no answer within 2 s" in finished.stderr
    assert list((tmp_path / "reports").glob("scenarios-*.json"))  # the report is written


RUNNER_SCRIPT = """
import time
from accord import AgentTurn, ConversationRunner, UserTurn

def agent(history):
    time.sleep(100000)

runner = ConversationRunner(agent, [UserTurn("hello"), AgentTurn("*")], turn_timeout=2)
try:
    runner.run_sync()
except Exception as exc:
    print("failed:", type(exc).__name__, exc, flush=True)
print("returned", flush=True)
"""


def test_run_sync_with_a_blocking_agent_returns_and_the_interpreter_exits(
    tmp_path: Path,
) -> None:
    script = tmp_path / "conversation.py"
    script.write_text(textwrap.dedent(RUNNER_SCRIPT))
    proc = subprocess.Popen(
        [sys.executable, str(script)], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=PROCESS_SECONDS)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert "returned" in out, out + err
    assert proc.returncode == 0, out + err
