"""The Ray executor on a local cluster: a workflow (SQL, an agent, a formatter), a consistency
run and an eval suite give the in-process executor's results; the work really runs in the
cluster (database actors, model-calling actors, named rate limiters, tasks); secrets stay out
of task arguments; a worker killed mid-task is retried."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

# every test needs the Ray cluster, seconds to start
pytestmark = [pytest.mark.usefixtures("ray_cluster"), pytest.mark.slow]

WORKFLOW = """\
tasks:
  - name: totals
    type: execute_sql
    database: shop
    sql_query: SELECT region, SUM(units) AS units FROM sales GROUP BY region ORDER BY region
  - name: summary
    type: agent
    model: fake
    prompt: "Summarise: {{ totals }}"
  - name: best
    type: agent
    model: fake
    prompt: "Pick the best region of {{ totals }}"
    consistency_run: 3
  - name: report
    type: formatter
    template: "{{ summary }} / {{ best }} / {{ totals.units | sum }}"
"""
SUITE = """\
target: {type: command, command: [%s, answer.py]}
evaluators:
  - {type: contains, value: "42"}
  - {type: regex, pattern: "^answer"}
cases:
  - {id: a, input: what is six times seven}
  - {id: b, input: and nine}
"""
ANSWER = (
    "import json, sys\ncase = json.load(sys.stdin)\n"
    "print('answer 42' if 'six' in case['input'] else 'answer 9')\n"
)


@pytest.fixture
def project(tmp_path: Path, fake_llm: FakeOpenAI) -> Iterator[Path]:
    def reply(body: dict[str, Any]) -> Reply:
        if body.get("tools"):  # the consistency judge's forced choice
            return Reply.tool("select_answer", {"reason": "same", "answer": "A"})
        text = body["messages"][-1]["content"]
        return Reply(text="East" if "best" in text else f"summary of {len(text)} characters")

    fake_llm.responder = reply
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sales.csv").write_text("region,units\nEast,3\nWest,5\nEast,4\n")
    config = fake_model_config(fake_llm, rpm=6000)
    config += "databases:\n  - {name: shop, type: duckdb, dataset: data}\n"
    (tmp_path / "config.yml").write_text(config)
    (tmp_path / "shop.workflow.yml").write_text(WORKFLOW)
    (tmp_path / "answer.py").write_text(ANSWER)
    (tmp_path / "s.eval.yml").write_text(SUITE % json.dumps(sys.executable))
    yield tmp_path


def cli(*args: str | Path) -> Any:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result


def test_a_workflow_gives_the_in_process_results(project: Path) -> None:
    from accord.engine.ray_executor import RayExecutor

    local = cli("run", project / "shop.workflow.yml", "--format", "json", "--cache", "off")
    remote = cli("run", project / "shop.workflow.yml", "--format", "json", "--cache", "off",
                 "--executor", "ray")  # fmt: skip
    assert local.exit_code == 0 and remote.exit_code == 0, remote.stderr
    outputs = [json.loads(r.stdout)["outputs"] for r in (local, remote)]
    assert outputs[0] == outputs[1]
    assert outputs[1]["report"].endswith("/ East / 12")
    executor = RayExecutor._connected
    assert executor is not None and executor._hosts  # the query ran in a database actor
    import ray

    limiter = ray.get_actor("rate:fake:6000:None:60.0", namespace="accord")  # rpm: one actor
    assert limiter is not None


def test_an_eval_suite_gives_the_in_process_results(project: Path) -> None:
    local = cli("eval", project / "s.eval.yml", "--format", "json", "--cache", "off")
    remote = cli("eval", project / "s.eval.yml", "--format", "json", "--cache", "off",
                 "--executor", "ray")  # fmt: skip

    def cases(result: Any) -> list[dict[str, Any]]:
        found = json.loads(result.stdout)["suites"][0]["cases"]
        return [{k: v for k, v in c.items() if k not in ("seconds",)} for c in found]

    assert local.exit_code == remote.exit_code == 1
    assert cases(local) == cases(remote)
    assert [c["status"] for c in cases(remote)] == ["passed", "failed"]


def test_secrets_travel_in_the_job_environment_not_in_arguments() -> None:
    import asyncio

    from accord.engine.ray_executor import RayModelCalls

    sent: list[tuple[Any, ...]] = []

    class Caller:
        class call:
            @staticmethod
            async def remote(kwargs: dict[str, Any], key_env: str | None) -> tuple[bool, Any]:
                sent.append((kwargs, key_env))
                return True, {"text": "ok"}

    calls = RayModelCalls([Caller()], {"sk-secret": "MY_KEY"})
    asyncio.run(calls.call({"model": "openai/x", "api_key": "sk-secret", "messages": []}))
    kwargs, key_env = sent[0]
    assert "api_key" not in kwargs and "sk-secret" not in json.dumps(kwargs)
    assert key_env == "MY_KEY"


def test_a_worker_killed_mid_task_is_retried(project: Path) -> None:
    slow = (
        "import json, os, sys, time\ncase = json.load(sys.stdin)\n"
        "marks = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'attempts.txt')\n"
        "open(marks, 'a').write(str(os.getppid()) + '\\n')\n"
        "time.sleep(3)\nprint('answer 42')\n"
    )
    (project / "answer.py").write_text(slow)
    (project / "one.eval.yml").write_text(
        (SUITE % json.dumps(sys.executable)).split("cases:")[0]
        + "cases:\n  - {id: a, input: six}\n"
    )
    import threading

    def kill_first_worker() -> None:
        marks = project / "attempts.txt"
        for _ in range(200):
            if marks.exists() and marks.read_text().strip():
                os.kill(int(marks.read_text().split()[0]), signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_first_worker)
    killer.start()
    result = cli("eval", project / "one.eval.yml", "--format", "json", "--executor", "ray")
    killer.join()
    assert result.exit_code == 0, result.stdout + result.stderr
    attempts = (project / "attempts.txt").read_text().split()
    assert len(attempts) == 2 and attempts[0] != attempts[1]  # run again, by another worker


def test_lost_work_fails_the_run_and_resume_finishes_it_in_process(
    project: Path, fake_llm: FakeOpenAI
) -> None:
    """The cluster's database actor is gone for good (as when its node is lost): the query
    fails with the reason, the model call that finished is kept, and `--resume` on the
    in-process executor runs only what is left."""
    import ray

    from accord.engine.ray_executor import RayExecutor

    (project / "two.workflow.yml").write_text(
        "tasks:\n"
        "  - {name: answer, type: agent, model: fake, prompt: hello}\n"
        "  - {name: rows, type: execute_sql, database: shop, depends_on: [answer],\n"
        "     sql_query: SELECT COUNT(*) AS n FROM sales}\n"
    )
    warm = cli("run", project / "two.workflow.yml", "--format", "json", "--executor", "ray",
               "--cache", "off")  # fmt: skip
    assert warm.exit_code == 0, warm.stderr
    executor = RayExecutor._connected
    assert executor is not None
    for host in executor._hosts.values():
        ray.kill(host, no_restart=True)
    try:
        lost = cli("run", project / "two.workflow.yml", "--format", "json", "--executor", "ray",
                   "--cache", "off")  # fmt: skip
        assert lost.exit_code == 1
        assert "the Ray cluster lost this work" in lost.stderr
        calls = len(fake_llm.requests)
        again = cli("run", project / "two.workflow.yml", "--format", "json", "--resume", "last",
                    "--executor", "local", "--cache", "off")  # fmt: skip
        assert again.exit_code == 0, again.stderr
        assert json.loads(again.stdout)["outputs"]["rows"][0]["n"] == 3
        assert len(fake_llm.requests) == calls  # the finished model call was kept
    finally:
        executor._hosts.clear()


def test_config_chooses_the_executor(project: Path) -> None:
    from accord.engine.ray_executor import RayExecutor

    config = project / "config.yml"
    config.write_text(config.read_text() + "executor: ray\n")
    executor = RayExecutor._connected
    if executor is not None:
        executor._hosts.clear()
    result = cli("run", project / "shop.workflow.yml", "--format", "json", "--cache", "off")
    assert result.exit_code == 0, result.stderr
    assert RayExecutor._connected is not None and RayExecutor._connected._hosts
    local = cli("run", project / "shop.workflow.yml", "--format", "json", "--executor", "local")
    assert local.exit_code == 0
