"""Agent tasks through the real litellm path against the scripted fake server."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def project(tmp_path: Path, fake: FakeOpenAI, workflow: str, **model: Any) -> Path:
    (tmp_path / ".db").mkdir(exist_ok=True)
    (tmp_path / ".db" / "sales.csv").write_text("region,amount\nEU,10\nUS,20\nEU,5\n")
    config = fake_model_config(fake, **model)
    config += "databases:\n  - name: local\n    type: duckdb\n    dataset: .db\n"
    config += "defaults:\n  database: local\n  model: fake\n"
    (tmp_path / "config.yml").write_text(config)
    path = tmp_path / "w.workflow.yml"
    path.write_text(workflow)
    return path


INLINE = """
tasks:
  - name: totals
    type: execute_sql
    sql_query: SELECT region, SUM(amount) AS total FROM sales GROUP BY 1 ORDER BY 1
  - name: summary
    type: agent
    model: fake
    prompt: "Summarise:\\n{{ totals }}"
  - name: report
    type: formatter
    template: "Report: {{ summary }}"
"""


def test_inline_model_answer_flows_into_templates(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script("EU leads with 15.")
    path = project(tmp_path, fake_llm, INLINE)
    result = run_cli("run", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["outputs"]["report"] == "Report: EU leads with 15."
    sent = fake_llm.requests[0]["messages"][-1]["content"]
    assert "| EU | 15 |" in sent  # the table rendered as Markdown into the prompt
    usage = doc["summary"]["usage"]
    assert usage["calls"] == 1 and usage["input_tokens"] > 0 and usage["output_tokens"] > 0


def test_second_identical_run_is_answered_from_cache(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script("first answer")
    path = project(tmp_path, fake_llm, INLINE)
    assert run_cli("run", str(path), "--format", "json").exit_code == 0
    assert len(fake_llm.requests) == 1
    again = run_cli("run", str(path), "--format", "json")
    assert again.exit_code == 0
    assert len(fake_llm.requests) == 1  # no new call
    doc = json.loads(again.stdout)
    assert doc["outputs"]["summary"] == "first answer"
    assert doc["summary"]["usage"]["cached"] == 1
    replay = run_cli("run", str(path), "--format", "json", "--cache", "replay")
    assert replay.exit_code == 0
    off = run_cli("run", str(path), "--format", "json", "--cache", "off")
    assert off.exit_code == 0 and len(fake_llm.requests) == 2


def test_replay_miss_fails_naming_the_task(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    path = project(tmp_path, fake_llm, INLINE)
    result = run_cli("run", str(path), "--cache", "replay")
    assert result.exit_code == 1
    assert "summary" in result.stderr and "replay" in result.stderr
    assert fake_llm.requests == []


AGENT = """
model: fake
system_instructions: |
  You analyse {{ databases.local.dialect }} data. Tables: {{ databases.local.tables | join(', ') }}
tools:
  - name: run_query
    type: execute_sql
    database: local
"""

AGENT_TASK = """
tasks:
  - name: ask
    type: agent
    agent_ref: analyst.agent.yml
    prompt: Which region sells most?
    export: {path: out/ask.csv, format: csv}
  - name: ask_sql
    type: formatter
    template: "{{ ask.sql }}"
"""


ASK_ONLY = """
tasks:
  - name: ask
    type: agent
    agent_ref: analyst.agent.yml
    prompt: Which region sells most?
"""


def test_agent_runs_sql_tool_and_exports_its_table(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(
        Reply.tool(
            "run_query",
            {"sql": "SELECT region, SUM(amount) AS t FROM sales GROUP BY 1 ORDER BY t DESC"},
        ),
        "US sells most (20).",
    )
    (tmp_path / "analyst.agent.yml").write_text(AGENT)
    path = project(tmp_path, fake_llm, AGENT_TASK)
    result = run_cli("run", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["outputs"]["ask"] == "US sells most (20)."
    assert doc["outputs"]["ask_sql"].startswith("SELECT region")
    system = fake_llm.requests[0]["messages"][0]["content"]
    assert "duckdb" in system and "sales" in system
    assert fake_llm.requests[0]["tools"][0]["function"]["name"] == "run_query"
    tool_message = fake_llm.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "| US | 20 |" in tool_message["content"]
    assert (tmp_path / "out" / "ask.csv").read_text().splitlines() == ["region,t", "US,20", "EU,15"]


def test_tool_errors_go_back_to_the_model(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(
        Reply.tool("run_query", "{not json"),
        Reply.tool("no_such_tool", {}),
        Reply.tool("run_query", {"sql": "SELECT * FROM missing_table"}),
        "Sorry, I could not query.",
    )
    (tmp_path / "analyst.agent.yml").write_text(AGENT)
    path = project(tmp_path, fake_llm, ASK_ONLY)
    result = run_cli("run", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    tool_results = [r["messages"][-1]["content"] for r in fake_llm.requests[1:]]
    assert "not valid JSON" in tool_results[0]
    assert "no tool 'no_such_tool'" in tool_results[1]
    assert "missing_table" in tool_results[2] and tool_results[2].startswith("error:")


def test_max_tool_calls_stops_offering_tools(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(*[Reply.tool("run_query", {"sql": "SELECT 1"})] * 2, "done")
    (tmp_path / "analyst.agent.yml").write_text(AGENT + "max_tool_calls: 2\n")
    path = project(tmp_path, fake_llm, ASK_ONLY)
    result = run_cli("run", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    assert "tools" in fake_llm.requests[1]
    assert "tools" not in fake_llm.requests[2]


def test_429_is_retried_honouring_retry_after(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(
        Reply.error(429, "slow down", **{"Retry-After": "0"}),
        Reply.error(503, "busy", **{"Retry-After": "0"}),
        "ok after retries",
    )
    path = project(tmp_path, fake_llm, INLINE)
    result = run_cli("run", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["outputs"]["summary"] == "ok after retries"
    assert doc["summary"]["usage"]["retries"] == 2
    assert len(fake_llm.requests) == 3


def test_non_retryable_error_fails_at_once_with_provider_text(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply.error(401, "invalid api key provided"))
    path = project(tmp_path, fake_llm, INLINE)
    result = run_cli("run", str(path))
    assert result.exit_code == 1
    assert "invalid api key provided" in result.stderr
    assert "summary" in result.stderr and "fake" in result.stderr
    assert len(fake_llm.requests) == 1
    assert "Traceback" not in result.output


def test_retries_exhausted_names_task_and_model(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(*[Reply.error(500, "boom", **{"Retry-After": "0"})] * 5)
    path = project(tmp_path, fake_llm, INLINE, max_retries=1)
    result = run_cli("run", str(path))
    assert result.exit_code != 0
    assert "after 2 attempts" in result.stderr and "'fake'" in result.stderr
    assert len(fake_llm.requests) == 2


def test_empty_answer_is_an_error(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply(text=""))
    path = project(tmp_path, fake_llm, INLINE)
    result = run_cli("run", str(path))
    assert result.exit_code != 0
    assert "returned no text" in result.stderr and "summary" in result.stderr


def test_slow_model_times_out(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply(text="late", delay=3))
    path = project(tmp_path, fake_llm, INLINE, timeout=0.5, max_retries=0)
    result = run_cli("run", str(path))
    assert result.exit_code != 0
    assert "summary" in result.stderr and ("0.5 s" in result.stderr or "Timeout" in result.stderr)


def test_dropped_connection_and_bad_json_are_clear(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply(drop=True), Reply(raw=b"<html>oops</html>"))
    path = project(tmp_path, fake_llm, INLINE, max_retries=0)
    first = run_cli("run", str(path))
    assert first.exit_code != 0 and "summary" in first.stderr
    second = run_cli("run", str(path))
    assert second.exit_code != 0 and "summary" in second.stderr
    assert "Traceback" not in first.output + second.output


def test_keep_going_keeps_other_tasks(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply.error(400, "bad request"))
    path = project(tmp_path, fake_llm, INLINE)
    result = run_cli("run", str(path), "--keep-going", "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    states = {t["task"]: t["status"] for t in doc["tasks"]}
    assert states == {"totals": "succeeded", "summary": "failed", "report": "skipped"}


def test_missing_key_names_the_env_var(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    path = project(tmp_path, fake_llm, INLINE)
    config = (
        (tmp_path / "config.yml")
        .read_text()
        .replace("api_key: test-key", "key_var: ACCORD_TEST_MISSING_KEY")
    )
    (tmp_path / "config.yml").write_text(config)
    result = run_cli("run", str(path))
    assert result.exit_code != 0
    assert "ACCORD_TEST_MISSING_KEY" in result.stderr
    assert fake_llm.requests == []


def test_a_provider_key_that_is_not_set_fails_at_once_naming_it(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # no api_key, no key_var: litellm says the openai provider reads OPENAI_API_KEY, unset here
    path = project(tmp_path, fake_llm, INLINE)
    config = (tmp_path / "config.yml").read_text().replace("    api_key: test-key\n", "")
    (tmp_path / "config.yml").write_text(config.replace("max_retries: 2", "max_retries: 6"))
    started = time.perf_counter()
    result = run_cli("run", str(path))
    assert time.perf_counter() - started < 10  # not retried like a server error
    assert result.exit_code == 1  # the SQL task before it succeeded
    assert "model 'fake' needs an API key" in result.stderr
    assert "OPENAI_API_KEY" in result.stderr and "key_var" in result.stderr
    assert "model_retry" not in result.stderr
    assert fake_llm.requests == []


def test_unknown_model_is_a_validation_error(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    path = project(tmp_path, fake_llm, INLINE.replace("model: fake", "model: fkae"))
    result = run_cli("validate", str(path))
    assert result.exit_code == 2
    assert "w.workflow.yml:8" in result.stderr and "unknown model 'fkae'" in result.stderr
    assert "did you mean 'fake'" in result.stderr


def test_unreachable_api_base_is_a_clear_error(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    path = project(tmp_path, fake_llm, INLINE)
    config = (tmp_path / "config.yml").read_text().replace(fake_llm.url, "http://127.0.0.1:9/v1")
    (tmp_path / "config.yml").write_text(config.replace("max_retries: 2", "max_retries: 0"))
    result = run_cli("run", str(path))
    assert result.exit_code != 0
    assert "connection refused by http://127.0.0.1:9/v1" in result.stderr
    assert "nothing listens there" in result.stderr


def test_every_model_call_failing_exits_3(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply.error(401, "invalid api key provided"))
    only_agent = "tasks:\n  - name: a\n    type: agent\n    model: fake\n    prompt: hi\n"
    path = project(tmp_path, fake_llm, only_agent)
    result = run_cli("run", str(path))
    assert result.exit_code == 3
