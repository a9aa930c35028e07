"""Targets and agent configurations named by eval, test and scenario files stay inside the
project: `../outside.workflow.yml#f`, absolute paths, `../x/outside.agent.yml`, a scenario's
`agent_config: ../outside.yaml` are refused at load (exit 2, the file and line), never read,
stored or shown."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI

SECRET = "sk-outside-7777"
WORKFLOW = """tasks:
  - name: f
    type: formatter
    template: "ran outside"
"""
AGENT = f"model: fake\nsystem_instructions: '{SECRET}'\n"


@pytest.fixture
def project(tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project below a folder holding a workflow, an agent and an agent config of others."""
    (tmp_path / "outside.workflow.yml").write_text(WORKFLOW)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "outside.agent.yml").write_text(AGENT)
    (tmp_path / "outside.yaml").write_text(f"api_key: {SECRET}\n")
    root = tmp_path / "project"
    root.mkdir()
    (root / "config.yml").write_text(
        fake_model_config(fake_llm) + "defaults:\n  judge_model: fake\n"
    )
    monkeypatch.chdir(root)
    return root


def refused(result_stderr: str, where: str) -> None:
    assert where in result_stderr, result_stderr
    assert "leads outside the project root" in result_stderr or "absolute path" in result_stderr
    assert "Traceback" not in result_stderr and SECRET not in result_stderr


EVAL = """evaluators:
  - {type: contains, value: ran}
target: %s
cases:
  - id: one
    input: hi
"""


@pytest.mark.parametrize(
    "target",
    ["../outside.workflow.yml#f", "ABSOLUTE#f", "../x/outside.agent.yml",
     "{type: workflow, workflow: ../outside.workflow.yml}",
     "{type: agent, agent: ../x/outside.agent.yml}"],
)  # fmt: skip
def test_eval_file_targets(project: Path, fake_llm: FakeOpenAI, target: str) -> None:
    target = target.replace("ABSOLUTE", str(project.parent / "outside.workflow.yml"))
    path = project / "run.eval.yml"
    path.write_text(EVAL % target)
    result = accord("eval", path)
    assert result.exit_code == 2
    refused(result.stderr, f"{path}:3:")
    assert not fake_llm.requests and not (project / ".accord").exists()


def test_a_case_target(project: Path) -> None:
    path = project / "run.eval.yml"
    path.write_text((EVAL % "echo") + "    target: ../outside.workflow.yml#f\n")
    result = accord("eval", path)
    assert result.exit_code == 2
    refused(result.stderr, f"{path}:7:")


@pytest.mark.parametrize("command", ["eval", "test"])
def test_test_file_target(project: Path, fake_llm: FakeOpenAI, command: str) -> None:
    path = project / "checks.test.yml"
    path.write_text("target: ../x/outside.agent.yml\ncases:\n  - prompt: hi\n    expected: hi\n")
    result = accord(command, path)
    assert result.exit_code == 2
    refused(result.stderr, f"{path}:1:")
    assert not fake_llm.requests


SCENARIOS = """agent_class: agents.Echo
scenarios:
  - name: one
    input_message: hi
    agent_config: %s
    expected_output: ok
"""
AGENTS = """
class Echo:
    def __init__(self, config):
        self.config = config

    def run(self, message):
        return str(self.config)
"""


@pytest.fixture
def agents(project: Path) -> Iterator[Path]:
    (project / "agents.py").write_text(AGENTS)
    sys.modules.pop("agents", None)
    yield project
    sys.modules.pop("agents", None)


@pytest.mark.parametrize("config", ["../outside.yaml", "ABSOLUTE"])
def test_scenario_agent_config_outside(agents: Path, fake_llm: FakeOpenAI, config: str) -> None:
    config = config.replace("ABSOLUTE", str(agents.parent / "outside.yaml"))
    path = agents / "scenarios.yaml"
    path.write_text(SCENARIOS % config)
    result = accord("eval", path, "--format", "json")
    assert result.exit_code == 2
    refused(result.stderr + result.stdout, f"{path}:5:")
    assert SECRET not in result.stdout
    assert not fake_llm.requests
    assert not (agents / ".accord").exists() and not (agents / "reports").exists()
