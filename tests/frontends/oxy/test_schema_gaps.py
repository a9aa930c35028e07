"""Keys of today's Oxy files that accord once refused: written as an Oxy user writes them,
validated and run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from accord.cli import main
from accord.engine.databases.postgres import Postgres, PostgresDatabase
from accord.engine.errors import ConfigError
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

DUCKDB = "databases:\n  - name: local\n    type: duckdb\n    file_search_path: .db\n"


def accord(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def outputs(path: Path) -> dict[str, Any]:
    run = accord("run", path, "--format", "json")
    assert run.exit_code == 0, run.output
    result: dict[str, Any] = json.loads(run.stdout)["outputs"]
    return result


def test_duckdb_file_search_path_and_integer_retry(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config.yml": DUCKDB,
            ".db/sales.csv": "region,amount\nEU,10\nUS,50\n",
            "q.workflow.yml": "tasks:\n  - name: total\n    type: execute_sql\n"
            "    database: local\n    retry: 3\n"
            "    sql_query: SELECT SUM(amount) AS total FROM sales\n",
        },
    )
    assert accord("validate", tmp_path / "q.workflow.yml").exit_code == 0
    assert "60" in json.dumps(outputs(tmp_path / "q.workflow.yml")["total"])


def test_integer_retry_retries(tmp_path: Path) -> None:
    from accord.engine.loader import load_workflow

    write(tmp_path, {"r.workflow.yml": "tasks:\n  - name: a\n    type: formatter\n"
                     "    retry: 3\n    template: x\n"})  # fmt: skip
    retry = load_workflow(tmp_path / "r.workflow.yml").spec.tasks[0].retry
    assert (retry.attempts, retry.backoff) == (3, 1.0)


def test_retry_that_is_not_a_number_is_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path, {"r.workflow.yml": "tasks:\n  - name: a\n    type: formatter\n"
                     "    retry: three\n    template: x\n"})  # fmt: skip
    run = accord("validate", tmp_path / "r.workflow.yml")
    assert run.exit_code == 2
    assert "r.workflow.yml:4" in run.output and "retry" in run.output
    assert "Traceback" not in run.output


def test_unquoted_date_stays_text(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "d.workflow.yml": "variables:\n  start: 2024-01-15\ntasks:\n"
            "  - name: show\n    type: formatter\n"
            '    template: "{{ start }} {{ start[:4] }}"\n'
        },
    )
    assert outputs(tmp_path / "d.workflow.yml")["show"] == "2024-01-15 2024"


def test_index_past_the_end_is_falsy_in_a_test_and_default(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config.yml": DUCKDB,
            ".db/sales.csv": "region,amount\nEU,10\n",
            "t.workflow.yml": "tasks:\n  - name: t\n    type: execute_sql\n"
            "    sql_query: SELECT region FROM sales\n"
            "  - name: show\n    type: formatter\n    template: |-\n"
            "      {% if t.region[0] %}{{ t.region[0] }}{% endif %}"
            "{% if t.region[3] %}never{% else %}-none{% endif %}"
            "-{{ t.region[5] | default('dflt') }}\n",
        },
    )
    assert outputs(tmp_path / "t.workflow.yml")["show"] == "EU-none-dflt"


def test_index_past_the_end_printed_is_an_error(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config.yml": DUCKDB,
            ".db/sales.csv": "region,amount\nEU,10\n",
            "t.workflow.yml": "tasks:\n  - name: t\n    type: execute_sql\n"
            "    sql_query: SELECT region FROM sales\n"
            "  - name: show\n    type: formatter\n    template: '{{ t.region[3] }}'\n",
        },
    )
    run = accord("run", tmp_path / "t.workflow.yml")
    assert run.exit_code == 1
    assert "index 3 is past the end of a list of 1 value" in run.output


def agent_project(tmp_path: Path, fake: FakeOpenAI, agent: str) -> Path:
    write(
        tmp_path,
        {
            "config.yml": DUCKDB + "defaults:\n  database: local\n" + fake_model_config(fake),
            ".db/sales.csv": "region,amount\nEU,10\nUS,50\n",
            "helper.agent.yml": "model: fake\nvariables:\n  tone: plain\n"
            "system_instructions: 'Helper speaking {{ tone }}.'\n",
            "main.agent.yml": agent,
            "ask.workflow.yml": "tasks:\n  - name: answer\n    type: agent\n"
            "    agent_ref: main.agent.yml\n    prompt: Question?\n",
        },
    )
    return tmp_path / "ask.workflow.yml"


def test_max_iterations_stops_offering_tools(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    path = agent_project(
        tmp_path,
        fake_llm,
        "model: fake\nmax_iterations: 2\nsystem_instructions: Analyst.\n"
        "tools:\n  - type: execute_sql\n    database: local\n",
    )
    query = Reply.tool("execute_sql", {"sql": "SELECT 1"})
    fake_llm.script(query, query, "done")
    assert outputs(path)["answer"] == "done"
    assert ["tools" in r for r in fake_llm.requests] == [True, True, False]


def test_execute_sql_tool_variables(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    path = agent_project(
        tmp_path,
        fake_llm,
        "model: fake\nsystem_instructions: Analyst.\n"
        "tools:\n  - type: execute_sql\n    database: local\n    variables:\n      region: US\n",
    )
    sql = "SELECT amount FROM sales WHERE region = '{{ region }}'"
    fake_llm.script(Reply.tool("execute_sql", {"sql": sql}), "done")
    assert accord("validate", path).exit_code == 0
    outputs(path)
    tool_result = fake_llm.requests[1]["messages"][-1]["content"]
    assert "50" in tool_result and "10" not in tool_result


def test_agent_tool_variables(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    path = agent_project(
        tmp_path,
        fake_llm,
        "model: fake\nsystem_instructions: Main.\ntools:\n  - type: agent\n"
        "    agent_ref: helper.agent.yml\n    description: Helps\n"
        "    variables:\n      tone: formal\n",
    )
    fake_llm.script(Reply.tool("helper", {"prompt": "help"}), "helped", "done")
    assert accord("validate", path).exit_code == 0
    outputs(path)
    assert fake_llm.requests[1]["messages"][0]["content"] == "Helper speaking formal."


def test_test_concurrency_is_accepted(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    write(
        tmp_path,
        {
            "config.yml": fake_model_config(fake_llm),
            "a.agent.yml": "model: fake\nsystem_instructions: hi\ntests:\n"
            "  - type: consistency\n    n: 2\n    concurrency: 1\n"
            "    task_description: How much?\n",
        },
    )
    assert accord("validate", tmp_path / "a.agent.yml").exit_code == 0
    from accord.tasks.suites.frontends.oxy.loading import prepare

    assert prepare(tmp_path / "a.agent.yml").max_concurrency == 1


def test_postgres_settings_from_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        tmp_path,
        {
            "config.yml": "databases:\n  - name: pg\n    type: postgres\n"
            "    host_var: PG_HOST\n    port_var: PG_PORT\n    user_var: PG_USER\n"
            "    database_var: PG_DB\n    password_var: PG_PASSWORD\n",
            "q.workflow.yml": "tasks:\n  - name: a\n    type: execute_sql\n"
            "    database: pg\n    sql_query: SELECT 1\n",
        },
    )
    assert accord("validate", tmp_path / "q.workflow.yml").exit_code == 0
    spec = PostgresDatabase(
        name="pg", type="postgres", host_var="PG_HOST", port_var="PG_PORT",
        user_var="PG_USER", database_var="PG_DB", password_var="PG_PASSWORD",
    )  # fmt: skip
    values = {"PG_HOST": "db.internal", "PG_PORT": "6543", "PG_USER": "ana"}
    for name, value in {**values, "PG_DB": "shop", "PG_PASSWORD": "pw"}.items():
        monkeypatch.setenv(name, value)
    settings = Postgres(spec, tmp_path).settings()
    assert settings == {
        "host": "db.internal", "port": "6543", "user": "ana", "password": "pw",
        "dbname": "shop",
    }  # fmt: skip
    monkeypatch.delenv("PG_HOST")
    with pytest.raises(ConfigError, match="PG_HOST \\(host_var\\) is not set"):
        Postgres(spec, tmp_path).settings()
