"""Today's Oxy `.test.yml`: optional `target` and case `name`, a case's `tool`, `runs`
defaulting to 3; `accord test` with no FILE, `--case` by index, name or prompt, `-v`, and
`--output-json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes import FakeOpenAI
from tests.frontends.oxy.harness import SUITE, invoke, project

__all__ = ["project"]


def test_target_from_the_file_name_and_default_runs(project: Path, fake_llm: FakeOpenAI) -> None:
    run = invoke("test", "agents/sales.agent.test.yml", "--format", "json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["accuracy"] == 1.0
    answers = [r for r in fake_llm.requests if "Expected answer" not in json.dumps(r)]
    eu = [r for r in answers if "EU sales" in json.dumps(r["messages"][-1])]
    assert len(eu) == 3  # settings.runs defaults to 3


def test_case_tool_must_be_called(project: Path, fake_llm: FakeOpenAI) -> None:
    suite = SUITE.replace("tool: execute_sql", "tool: validate_sql")
    (project / "agents/sales.agent.test.yml").write_text(suite)
    run = invoke("test", "agents/sales.agent.test.yml", "--format", "json")
    assert json.loads(run.stdout)["accuracy"] == 0.5


def test_no_file_runs_the_projects_test_files(project: Path) -> None:
    run = invoke("test", "--format", "json", "--output-json", "out/results.json")
    assert run.exit_code == 0, run.output
    assert set(json.loads(run.stdout)) >= {"accuracy"}
    detail = json.loads((project / "out/results.json").read_text())
    cases = detail["tests"][0]["cases"]
    assert {c["name"] for c in cases} == {"case 0", "eu"}
    assert any("US sales were 50." in (c["output"] or "") for c in cases)


@pytest.mark.parametrize("case", ["0", "What were US sales?"])
def test_case_by_index_or_prompt(project: Path, fake_llm: FakeOpenAI, case: str) -> None:
    run = invoke("test", "agents/sales.agent.test.yml", "--case", case, "--format", "json")
    assert run.exit_code == 0, run.output
    assert not any("EU sales" in json.dumps(r) for r in fake_llm.requests)


def test_case_by_name_and_variables(project: Path, fake_llm: FakeOpenAI) -> None:
    args = ("--case", "eu", "-v", "unit=euros", "--format", "json")
    run = invoke("test", "agents/sales.agent.test.yml", *args)
    assert run.exit_code == 0, run.output
    assert "Analyst in euros." in json.dumps(fake_llm.requests[0])


def test_unknown_variable_is_an_error(project: Path) -> None:
    run = invoke("test", "agents/sales.agent.test.yml", "-v", "nope=1")
    assert run.exit_code == 2
    assert "nope" in run.output and "Traceback" not in run.output


def test_missing_implied_target_is_reported(project: Path) -> None:
    (project / "other.agent.test.yml").write_text(SUITE)
    run = invoke("test", "other.agent.test.yml")
    assert run.exit_code == 2
    assert "other.agent.test.yml" in run.output and "other.agent.yml" in run.output


def test_bad_case_is_reported_with_its_line(project: Path) -> None:
    (project / "agents/sales.agent.test.yml").write_text(SUITE + "  - prompt: no expected\n")
    run = invoke("validate", "agents/sales.agent.test.yml")
    assert run.exit_code == 2
    assert "sales.agent.test.yml:8" in run.output and "expected" in run.output
