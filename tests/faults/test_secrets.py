"""Secrets never reach the terminal, the logs, the run store, the call cache or any file.

API keys come from `key_var`, a header from `env_var` and a Postgres password from
`password_var`. The scripted provider echoes the key in its error bodies, as some providers do
("Incorrect API key provided: sk-..."). Runs succeed, retry, fail and fail fast, with debug logs
and JSON output; then stdout, stderr and every byte written under the project are searched.
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FakeOpenAI, Reply
from tests.faults.helpers import Finished, accord, assert_no_traceback

WORKFLOW = """
tasks:
  - name: totals
    type: execute_sql
    database: local
    sql_query: SELECT region, SUM(amount) AS total FROM sales GROUP BY 1 ORDER BY 1
  - name: summary
    type: agent
    prompt: "summarise {{ totals }}"
    export: {path: out/summary.md, format: md}
  - name: flaky
    type: agent
    prompt: flaky question
  - name: refused
    type: agent
    prompt: refused question
  - name: remote
    type: execute_sql
    database: pg
    sql_query: SELECT 1 AS one
  - name: report
    type: formatter
    template: "{{ summary }} / {{ flaky }}"
    export: {path: out/report.txt, format: txt}
"""


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EchoingProvider:
    """Answers like a provider that quotes the credentials it was sent in its errors."""

    def __init__(self, key: str, token: str) -> None:
        self.key = key
        self.token = token
        self.seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = str(body["messages"][-1].get("content") or "")
        with self._lock:
            self.seen[prompt] += 1
            first = self.seen[prompt] == 1
        if prompt.startswith("refused"):
            return Reply.error(401, f"Incorrect API key provided: {self.key}. Token {self.token}")
        if prompt.startswith("flaky") and first:
            return Reply.error(
                500,
                f"upstream failed for key {self.key} token {self.token}",
                **{"Retry-After": "0"},
            )
        return Reply(text=f"answer ({len(prompt)} chars)")


def write_project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "sales.csv").write_text("region,amount\nEU,10\nUS,20\n")
    (tmp_path / "config.yml").write_text(
        "models:\n"
        "  - name: fake\n"
        "    model: openai/fake-model\n"
        f"    api_base: {fake.url}\n"
        "    key_var: ACCORD_TEST_MODEL_KEY\n"
        "    headers: {X-Team-Token: {env_var: ACCORD_TEST_HEADER_TOKEN}}\n"
        "    max_retries: 1\n"
        "databases:\n"
        "  - name: local\n    type: duckdb\n    dataset: .db\n"
        "  - name: pg\n    type: postgres\n    host: 127.0.0.1\n"
        f"    port: {closed_port()}\n    user: accord\n    database: accord\n"
        "    password_var: ACCORD_TEST_PG_PASSWORD\n"
        "defaults:\n  model: fake\n  database: local\n",
        encoding="utf-8",
    )
    path = tmp_path / "secrets.workflow.yml"
    path.write_text(WORKFLOW, encoding="utf-8")
    return path


def leaks(values: dict[str, str], finished: list[Finished], root: Path) -> list[str]:
    """Where any secret value shows up: a process's output, or a file under `root`."""
    found = []
    for name, value in values.items():
        for index, done in enumerate(finished):
            for stream, text in (("stdout", done.stdout), ("stderr", done.stderr)):
                if value in text:
                    found.append(f"{name} in the {stream} of run {index}")
        for path in sorted(root.rglob("*")):
            if path.is_file() and value.encode() in path.read_bytes():
                found.append(f"{name} in {path.relative_to(root)}")
    return found


@pytest.mark.slow
def test_secrets_stay_out_of_output_logs_store_and_files(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    values = {
        "API key (key_var)": f"sk-accord-{secrets.token_hex(12)}",
        "header token (env_var)": f"tok-{secrets.token_hex(12)}",
        "Postgres password (password_var)": f"pw-{secrets.token_hex(12)}",
    }
    key, token, password = values.values()
    provider = EchoingProvider(key, token)
    fake_llm.responder = provider
    path = write_project(tmp_path, fake_llm)
    env = {
        "ACCORD_TEST_MODEL_KEY": key,
        "ACCORD_TEST_HEADER_TOKEN": token,
        "ACCORD_TEST_PG_PASSWORD": password,
    }
    debug_json = ("--log-level", "debug", "run", str(path), "--format", "json")
    # keep going: success, a retried 500, a 401 and a database error in one run
    runs = [accord(*debug_json, "--keep-going", "--cache", "off", cwd=tmp_path, env=env)]
    # counted now: the fail-fast run below may send `flaky` again before `refused` stops it
    flaky_requests = provider.seen["flaky question"]
    runs += [
        # fail fast, pretty output, tracebacks on; answers recorded by the first run are reused
        accord("--debug", "run", str(path), cwd=tmp_path, env=env),
        accord("runs", "list", "--format", "json", cwd=tmp_path, env=env),
        accord("runs", "show", "last", "--format", "json", cwd=tmp_path, env=env),
        accord("runs", "show", "last", cwd=tmp_path, env=env),
    ]

    first = runs[0]
    assert first.code == 1, first.stderr[-3000:]
    doc = json.loads(first.stdout)
    states = {t["task"]: t["status"] for t in doc["tasks"]}
    assert states["summary"] == "succeeded" and states["flaky"] == "succeeded"
    assert states["refused"] == "failed" and states["remote"] == "failed"
    errors = {t["task"]: t["error"] or "" for t in doc["tasks"]}
    # the provider's words still arrive, with the credentials cut out
    assert "Incorrect API key provided: [redacted]" in errors["refused"]
    assert "check the key in ACCORD_TEST_MODEL_KEY" in errors["refused"]
    assert doc["summary"]["usage"]["retries"] == 1
    assert flaky_requests == 2
    assert (tmp_path / "out" / "report.txt").is_file()
    assert (tmp_path / ".accord" / "runs.db").is_file()
    assert runs[1].code == 1 and "refused" in runs[1].stderr + runs[1].stdout
    assert all(done.code == 0 for done in runs[2:]), [d.stderr for d in runs[2:]]
    assert '"level": "debug"' in first.stderr  # debug logs were on
    for done in runs:
        assert_no_traceback(done)

    assert leaks(values, runs, tmp_path) == []


def test_a_missing_key_is_named_by_its_variable_never_by_a_value(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    path = write_project(tmp_path, fake_llm)
    done = accord("run", str(path), "--format", "json", cwd=tmp_path, env={})
    assert done.code != 0
    assert "ACCORD_TEST_MODEL_KEY" in done.stderr or "ACCORD_TEST_PG_PASSWORD" in done.stderr
    assert fake_llm.requests == []
    assert_no_traceback(done)


def test_a_token_in_the_api_base_never_reaches_output_or_store(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from accord.cli import main

    token = "QUERYTOKEN-5f3a9c"
    (tmp_path / "config.yml").write_text(
        "models:\n  - name: m\n    model: openai/x\n"
        f"    api_base: 'http://user:PASSWORD-77@127.0.0.1:9/v1?key={token}'\n"
        "    api_key: k\n    max_retries: 0\n    timeout: 5\n"
    )
    path = tmp_path / "w.workflow.yml"
    path.write_text("tasks:\n  - name: ask\n    type: agent\n    model: m\n    prompt: hi\n")
    result = CliRunner().invoke(main, ["run", str(path), "--format", "json"])
    assert result.exit_code != 0
    assert "127.0.0.1:9" in result.stderr  # the hint still says where it tried
    stored = b"".join(p.read_bytes() for p in (tmp_path / ".accord").rglob("*") if p.is_file())
    for secret in (token, "PASSWORD-77"):
        assert secret not in result.output and secret not in result.stderr
        assert secret.encode() not in stored
