"""Files name only the project's own Python code: `agent_class`, `--agent-class` and
`{type: python}` targets whose module is not a file under the project root are refused
before anything runs (exit 2, the file and line), and an object a project module merely
imported (`helpers.Popen`) is refused before it is called."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI

# Popen(config) iterates the mapping's keys: `touch pwned` from YAML alone
POPEN = """agent_class: {cls}
agent_config: {{touch: 1, pwned: 1}}
scenarios:
  - {{expected_output: ok, name: run, input_message: hi}}
"""
HELPERS = "from subprocess import Popen\nfrom os import system\n"


@pytest.fixture
def project(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    (tmp_path / "config.yml").write_text(
        fake_model_config(fake_llm) + "defaults:\n  judge_model: fake\n"
    )
    (tmp_path / "helpers.py").write_text(HELPERS)
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("helpers", None)
    yield tmp_path
    sys.modules.pop("helpers", None)


def refused(result_stderr: str, root: Path) -> None:
    assert "not a file of the project" in result_stderr
    assert "define the agent class in a module under the project root" in result_stderr
    assert "Traceback" not in result_stderr
    assert not (root / "pwned").exists() and not (root / "touch").exists()


def test_agent_class_from_the_standard_library(project: Path, fake_llm: FakeOpenAI) -> None:
    path = project / "scenarios.yaml"
    path.write_text(POPEN.format(cls="subprocess.Popen"))
    result = accord("eval", path)
    assert result.exit_code == 2
    assert f"{path}:1:" in result.stderr and "agent_class 'subprocess.Popen'" in result.stderr
    refused(result.stderr, project)
    assert not fake_llm.requests


def test_agent_class_given_on_the_command_line(project: Path) -> None:
    path = project / "scenarios.yaml"
    path.write_text(POPEN.format(cls="subprocess.Popen").split("\n", 1)[1])
    result = accord("eval", path, "--agent-class", "subprocess.Popen")
    assert result.exit_code == 2
    assert "--agent-class" in result.stderr
    refused(result.stderr, project)


def test_a_scenario_own_agent_class_is_refused_at_its_line(project: Path) -> None:
    path = project / "scenarios.yaml"
    path.write_text(
        "agent_config: {touch: 1, pwned: 1}\nscenarios:\n"
        "  - name: run\n    input_message: hi\n"
        "    agent_class: shutil.rmtree\n    expected_output: ok\n"
    )
    result = accord("eval", path)
    assert result.exit_code == 2
    assert f"{path}:5:" in result.stderr
    refused(result.stderr, project)


def test_an_object_a_project_module_imported_is_refused(project: Path) -> None:
    """`helpers.py` is the project's, but `Popen` in it is the standard library's."""
    path = project / "scenarios.yaml"
    path.write_text(POPEN.format(cls="helpers.Popen"))
    result = accord("eval", path, "--format", "json")
    assert result.exit_code == 1
    (case,) = result.suite()["cases"]
    assert case["status"] == "error"
    assert "it comes from module 'subprocess'" in case["error"]
    assert not (project / "pwned").exists() and not (project / "touch").exists()


EVAL = """target: {{type: python, function: "{function}"}}
evaluators:
  - {{type: contains, value: x}}
cases:
  - id: one
    input: "touch pwned"
"""


def test_python_target_from_the_standard_library(project: Path) -> None:
    path = project / "run.eval.yml"
    path.write_text(EVAL.format(function="os:system"))
    result = accord("eval", path)
    assert result.exit_code == 2
    assert f"{path}:1:" in result.stderr and "python target 'os:system'" in result.stderr
    assert "not a file of the project" in result.stderr
    assert not (project / "pwned").exists()


def test_python_target_re_exported_by_a_project_module(project: Path) -> None:
    path = project / "run.eval.yml"
    path.write_text(EVAL.format(function="helpers:system"))
    result = accord("eval", path, "--format", "json")
    assert result.exit_code == 3  # its one case errored: no result
    (case,) = result.suite()["cases"]
    assert "it comes from module 'posix'" in case["error"] or "'os'" in case["error"]
    assert not (project / "pwned").exists()


def test_the_project_own_code_runs(project: Path) -> None:
    (project / "agents").mkdir()
    (project / "agents" / "__init__.py").write_text("")
    (project / "agents" / "echo.py").write_text(
        "class Echo:\n    def __init__(self, config):\n        pass\n"
        "    def run(self, message):\n        return 'echo ' + message\n"
        "def answer(text):\n    return 'x ' + text\n"
    )
    path = project / "run.eval.yml"
    path.write_text(EVAL.format(function="agents.echo:answer"))
    try:
        result = accord("eval", path)
        assert result.exit_code == 0, result.stderr
    finally:
        for name in ("agents", "agents.echo"):
            sys.modules.pop(name, None)
