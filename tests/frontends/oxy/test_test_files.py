"""Today's Oxy `.test.yml`: optional `target` and case `name`, a case's `tool`, `runs`
defaulting to 3; `accord test` with no FILE, `--case` by index, name or prompt, `-v`, and
`--output-json`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

SUITE = """\
cases:
  - prompt: What were US sales?
    expected: "50"
    tool: execute_sql
  - name: eu
    prompt: What were EU sales?
    expected: "10"
"""


def accord(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path, fake_llm: FakeOpenAI) -> Iterator[Path]:
    files = {
        "config.yml": "databases:\n  - name: local\n    type: duckdb\n    dataset: .db\n"
        "defaults:\n  database: local\n" + fake_model_config(fake_llm),
        ".db/sales.csv": "region,amount\nEU,10\nUS,50\n",
        "agents/sales.agent.yml": "model: fake\nvariables:\n  unit: dollars\n"
        "system_instructions: 'Analyst in {{ unit }}.'\n"
        "tools:\n  - type: execute_sql\n    database: local\n",
        "agents/sales.agent.test.yml": SUITE,
        "data/rows.test.yml": "- query: q\n  response: r\n",  # a dataset, not a suite
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    fake_llm.responder = respond
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def respond(body: dict[str, Any]) -> Reply:
    """The agent queries for US (a tool call), answers EU from memory; the judge compares."""
    messages = body["messages"]
    text = str(messages[-1].get("content") or "")
    if "Expected answer:" in text:
        expected = text.split("Expected answer:\n", 1)[1].split("\n", 1)[0].strip()
        given = text.split("Answer given:\n", 1)[1]
        return Reply(text="PASS" if expected in given else "FAIL")
    if messages[-1]["role"] == "tool":
        return Reply(text="US sales were 50.")
    if "US" in text:
        return Reply.tool("execute_sql", {"sql": "SELECT amount FROM sales WHERE region='US'"})
    unit = str(messages[0].get("content"))
    return Reply(text=f"EU sales were 10 ({unit}).")


def test_target_from_the_file_name_and_default_runs(project: Path, fake_llm: FakeOpenAI) -> None:
    run = accord("test", "agents/sales.agent.test.yml", "--format", "json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["accuracy"] == 1.0
    answers = [r for r in fake_llm.requests if "Expected answer" not in json.dumps(r)]
    eu = [r for r in answers if "EU sales" in json.dumps(r["messages"][-1])]
    assert len(eu) == 3  # settings.runs defaults to 3


def test_case_tool_must_be_called(project: Path, fake_llm: FakeOpenAI) -> None:
    suite = SUITE.replace("tool: execute_sql", "tool: validate_sql")
    (project / "agents/sales.agent.test.yml").write_text(suite)
    run = accord("test", "agents/sales.agent.test.yml", "--format", "json")
    assert json.loads(run.stdout)["accuracy"] == 0.5


def test_no_file_runs_the_projects_test_files(project: Path) -> None:
    run = accord("test", "--format", "json", "--output-json", "out/results.json")
    assert run.exit_code == 0, run.output
    assert set(json.loads(run.stdout)) >= {"accuracy"}
    detail = json.loads((project / "out/results.json").read_text())
    cases = detail["tests"][0]["cases"]
    assert {c["name"] for c in cases} == {"case 0", "eu"}
    assert any("US sales were 50." in (c["output"] or "") for c in cases)


@pytest.mark.parametrize("case", ["0", "What were US sales?"])
def test_case_by_index_or_prompt(project: Path, fake_llm: FakeOpenAI, case: str) -> None:
    run = accord("test", "agents/sales.agent.test.yml", "--case", case, "--format", "json")
    assert run.exit_code == 0, run.output
    assert not any("EU sales" in json.dumps(r) for r in fake_llm.requests)


def test_case_by_name_and_variables(project: Path, fake_llm: FakeOpenAI) -> None:
    args = ("--case", "eu", "-v", "unit=euros", "--format", "json")
    run = accord("test", "agents/sales.agent.test.yml", *args)
    assert run.exit_code == 0, run.output
    assert "Analyst in euros." in json.dumps(fake_llm.requests[0])


def test_unknown_variable_is_an_error(project: Path) -> None:
    run = accord("test", "agents/sales.agent.test.yml", "-v", "nope=1")
    assert run.exit_code == 2
    assert "nope" in run.output and "Traceback" not in run.output


def test_missing_implied_target_is_reported(project: Path) -> None:
    (project / "other.agent.test.yml").write_text(SUITE)
    run = accord("test", "other.agent.test.yml")
    assert run.exit_code == 2
    assert "other.agent.test.yml" in run.output and "other.agent.yml" in run.output


def test_bad_case_is_reported_with_its_line(project: Path) -> None:
    (project / "agents/sales.agent.test.yml").write_text(SUITE + "  - prompt: no expected\n")
    run = accord("validate", "agents/sales.agent.test.yml")
    assert run.exit_code == 2
    assert "sales.agent.test.yml:8" in run.output and "expected" in run.output
