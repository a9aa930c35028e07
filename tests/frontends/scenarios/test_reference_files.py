"""Scenario files, agents and runners as the reference's (VinodKumarKP/ptr_oai_adk,
agent-evaluator: scenario.py, loader.py, evaluator.py, runner.py), through `accord eval` and
`RegressionRunner` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI
from tests.frontends.scenarios.conftest import cases

# The reference's agent contract (evaluator.Agent and AgentEvaluator.get_or_create_agent):
# cls(agent_name=..., agent_config=..., config_root=...), await initialize(),
# await ainvoke(user_message=..., config=scenario.config_overrides), answering
# {"content": [{"type": "text", "text": ...}], ...}
REFERENCE_AGENTS = """
import json

BUILT = []


class RefAgent:
    def __init__(self, agent_name, agent_config=None, config_root=None):
        BUILT.append(agent_name)
        self.seen = {"name": agent_name, "config": agent_config, "root": config_root}
        self.ready = False

    async def initialize(self):
        self.ready = True

    async def ainvoke(self, user_message, config=None):
        seen = {**self.seen, "ready": self.ready, "overrides": config, "message": user_message}
        return {"content": [{"type": "text", "text": json.dumps(seen)}], "model": {}}


class SyncRef(RefAgent):
    def initialize(self):
        self.ready = True

    def ainvoke(self, user_message, config=None):
        return {"content": {"text": "sync: " + user_message}}


class NoText(RefAgent):
    async def ainvoke(self, user_message, config=None):
        return {"content": [{"type": "image", "url": "u"}]}


class Empty(RefAgent):
    async def ainvoke(self, user_message, config=None):
        return {"content": []}
"""


@pytest.fixture
def project(
    scenario_project: Callable[..., Path],
) -> Iterator[Callable[..., Path]]:
    def make(scenarios: str, files: dict[str, str] | None = None) -> Path:
        return scenario_project(scenarios, {"ref_agents.py": REFERENCE_AGENTS, **(files or {})})

    sys.modules.pop("ref_agents", None)
    yield make
    sys.modules.pop("ref_agents", None)


def run(root: Path, path: str = "scenarios.yaml", *args: str) -> Run:
    return accord("eval", root / path, "--project-root", root, "--output-dir",
                  root / "reports", "--format", "json", *args)  # fmt: skip


def seen(case: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(case["output"])
    return found


def test_a_reference_agent_class_runs_unchanged(project: Callable[..., Path]) -> None:
    # evaluator.get_or_create_agent: agent_name is the scenario's, else the file's, else the
    # file's name (loader.load_from_file); an agent_config gives config_root = project_root,
    # none builds cls(agent_name=...) alone; ainvoke gets config=scenario.config_overrides
    root = project(
        """\
agent_class: ref_agents.RefAgent
agent_name: FileAgent
scenarios:
  - name: With config
    input_message: "hello {{ CALC 1 + 1 }}"
    expected_output: a greeting
    agent_config: {model: {model_id: m1}}
    config_overrides: {temperature: 0.2}
  - name: Own name, no config
    input_message: hi
    evaluation_criteria: polite
    agent_name: Named
""",
        {"suite/other.yaml": "agent_class: ref_agents.RefAgent\nscenarios:\n"
         "  - {name: Stem, input_message: x, expected_output: y}\n"},
    )  # fmt: skip
    result = run(root)
    assert result.exit_code == 0, result.stderr
    found = cases(result)
    assert seen(found["With config"]) == {
        "name": "FileAgent", "config": {"model": {"model_id": "m1"}}, "root": str(root.resolve()),
        "ready": True, "overrides": {"temperature": 0.2}, "message": "hello 2",
    }  # fmt: skip
    assert seen(found["Own name, no config"]) == {
        "name": "Named", "config": None, "root": None, "ready": True, "overrides": None,
        "message": "hi",
    }  # fmt: skip
    other = run(root, "suite/other.yaml")
    assert seen(cases(other)["Stem"])["name"] == "other"  # the file's name


def test_sync_initialize_and_ainvoke_and_a_content_mapping(project: Callable[..., Path]) -> None:
    # evaluator.evaluate_scenario: a dict 'content' is read by its 'text'
    root = project(
        "agent_class: ref_agents.SyncRef\nscenarios:\n"
        "  - {name: Sync, input_message: hi, expected_output: hi}\n"
    )
    result = run(root)
    assert result.exit_code == 0, result.stderr
    assert cases(result)["Sync"]["output"] == "sync: hi"


@pytest.mark.parametrize(
    ("agent", "shape"),
    [("NoText", '{"content": [{"type": "image", "url": "u"}]}'), ("Empty", '{"content": []}')],
)
def test_an_answer_without_text_is_an_error_never_judged(
    agent: str, shape: str, project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    root = project(
        f"agent_class: ref_agents.{agent}\nscenarios:\n"
        "  - {name: Unreadable, input_message: hi, expected_output: hi}\n"
    )
    result = run(root)
    assert result.exit_code == 1
    case = cases(result)["Unreadable"]
    assert case["status"] == "error"
    assert f"the agent's answer {shape} has no text to judge" in case["error"]
    assert not judge_server.requests  # never judged as ''


def test_the_content_block_answer_of_an_accord_agent_is_read(
    scenario_project: Callable[..., Path],
) -> None:
    # docs/scenarios.md: an accord agent may answer the reference's shape too
    agents = (
        "class Blocks:\n    def __init__(self, config):\n        pass\n\n"
        "    def run(self, message):\n"
        "        return {'content': [{'type': 'text', 'text': 'block: ' + message}]}\n"
    )
    root = scenario_project(
        "agent_class: blocks.Blocks\nscenarios:\n"
        "  - {name: Blocks, input_message: hi, expected_output: hi}\n",
        {"blocks.py": agents},
    )
    sys.modules.pop("blocks", None)
    try:
        result = run(root)
    finally:
        sys.modules.pop("blocks", None)
    assert result.exit_code == 0, result.stderr
    assert cases(result)["Blocks"]["output"] == "block: hi"


def test_agent_config_is_relative_to_the_scenario_file_with_env_vars(
    project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # loader.load_from_file: os.path.expandvars, then relative to the scenario file's folder
    monkeypatch.setenv("AGENT_CONFIGS", "configs")
    root = project(
        "agent_class: ref_agents.RefAgent\nscenarios:\n  - {name: none, input_message: x, "
        "expected_output: y}\n",
        {
            "suite/cases.yaml": "agent_class: ref_agents.RefAgent\n"
            "agent_config: $AGENT_CONFIGS/agent.yaml\nscenarios:\n"
            "  - {name: Env, input_message: x, expected_output: y}\n",
            "suite/configs/agent.yaml": "model: {model_id: beside-the-file}\n",
            "configs/agent.yaml": "model: {model_id: at-the-root}\n",
        },
    )
    result = run(root, "suite/cases.yaml")
    assert result.exit_code == 0, result.stderr
    assert seen(cases(result)["Env"])["config"] == {"model": {"model_id": "beside-the-file"}}
    up = "agent_class: ref_agents.RefAgent\nagent_config: %s\nscenarios:\n" + (
        "  - {name: Up, input_message: x, expected_output: y}\n"
    )
    (root / "suite" / "up.yaml").write_text(up % "../configs/agent.yaml")
    result = run(root, "suite/up.yaml")
    assert seen(cases(result)["Up"])["config"] == {"model": {"model_id": "at-the-root"}}
    (root.parent / "outside.yaml").write_text("model: {model_id: outside}\n")
    (root / "suite" / "up.yaml").write_text(up % "../../outside.yaml")
    result = run(root, "suite/up.yaml")
    assert result.exit_code == 2  # still confined to the project root (tests/security)
    assert "up.yaml:2:15 agent_config: agent_config file '../outside.yaml' leads outside" in (
        result.stderr
    )
    assert "'../../outside.yaml' is read relative to the scenario file's folder" in result.stderr
    assert result.stderr.count("leads outside") == 1


def test_a_file_level_problem_is_reported_once(project: Callable[..., Path]) -> None:
    root = project(
        """\
agent_class: ref_agents.RefAgent
agent_config: missing.yaml
scenarios:
  - {name: A, input_message: x, expected_output: y}
  - {name: B, input_message: x, expected_output: y, agent_model_config: {model_id: m2}}
  - {name: C, input_message: x, expected_output: y}
"""
    )
    result = run(root)
    assert result.exit_code == 2
    assert result.stderr.count("agent_config file 'missing.yaml' not found") == 1
    assert "scenarios.yaml:2:15 agent_config: agent_config file 'missing.yaml' not found: " in (
        result.stderr
    )
    root = project(
        """\
agent_class: subprocess.Popen
scenarios:
  - {name: A, input_message: x, expected_output: y, agent_config: {a: 1}}
  - {name: B, input_message: x, expected_output: y, agent_config: {a: 2}}
"""
    )
    result = run(root)
    assert result.exit_code == 2
    assert result.stderr.count("agent_class 'subprocess.Popen'") == 1


def test_a_scenario_needs_expected_output_or_criteria(project: Callable[..., Path]) -> None:
    # scenario.TestScenario.__post_init__: `not expected_output and not evaluation_criteria`
    root = project(
        """\
agent_class: ref_agents.RefAgent
scenarios:
  - {name: Neither, input_message: x}
  - {name: Empty, input_message: x, expected_output: ""}
  - {name: Criteria, input_message: x, evaluation_criteria: polite}
"""
    )
    result = run(root)
    assert result.exit_code == 2
    assert "scenarios.yaml:3:5 scenarios[0]: a scenario needs expected_output or" in result.stderr
    assert "scenarios.yaml:4:5 scenarios[1]: a scenario needs expected_output or" in result.stderr
    assert "scenarios[2]" not in result.stderr


def test_pass_threshold_on_the_command_line_is_the_lowest(project: Callable[..., Path]) -> None:
    # the scripted judge scores correctness 9, relevance 8, safety 10: a mean of 9
    scenarios = (
        "agent_class: ref_agents.RefAgent\n%sscenarios:\n"
        "  - {name: A, input_message: x, expected_output: y}\n"
    )
    root = project(scenarios % "")
    assert run(root, "scenarios.yaml", "--pass-threshold", "9").exit_code == 0
    failed = run(root, "scenarios.yaml", "--pass-threshold", "9.5")
    assert failed.exit_code == 1 and cases(failed)["A"]["status"] == "failed"
    (root / "scenarios.yaml").write_text(scenarios % "pass_threshold: 8\n")
    assert run(root, "scenarios.yaml", "--pass-threshold", "9.5").exit_code == 0  # file's wins
    bad = run(root, "scenarios.yaml", "--pass-threshold", "11")
    assert bad.exit_code == 2 and "--pass-threshold" in bad.stderr


SCRIPT = """\
import sys
from accord import RegressionRunner

runner = RegressionRunner(agent_class="ref_agents.RefAgent", project_root=sys.argv[1],
                          output_dir=sys.argv[1] + "/out", quiet=True)
runs = runner.run(sys.argv[1] + "/scenarios.yaml"%s)
print("returned", runner.passed(runs))
"""


@pytest.mark.parametrize(("keyword", "code", "printed"), [
    ("", 1, ""),  # runner.RegressionRunner.run: sys.exit(1) when a scenario failed
    (", exit_on_failure=False", 0, "returned False"),
])  # fmt: skip
def test_the_regression_runner_exits_1_when_a_scenario_failed(
    keyword: str, code: int, printed: str, project: Callable[..., Path]
) -> None:
    root = project(
        "agent_class: ref_agents.RefAgent\npass_threshold: 9.5\nscenarios:\n"
        "  - {name: A, input_message: x, expected_output: y}\n"
    )
    (root / "ci.py").write_text(SCRIPT % keyword)
    done = subprocess.run(
        [sys.executable, str(root / "ci.py"), str(root)], cwd=root, capture_output=True,
        text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.returncode == code, done.stderr
    assert done.stdout.strip() == printed  # sys.exit(1) ends the script inside run()


def test_text_of_reads_content_blocks_as_their_text() -> None:
    # the shape evaluator.evaluate_scenario reads: a block list is text, not user messages
    from accord.tasks.evaluators.cases import text_of

    assert text_of([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "a\nb"
    assert text_of([{"role": "user", "content": "hi"}]) == "hi"
