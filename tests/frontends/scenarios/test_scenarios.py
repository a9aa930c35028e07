"""Scenario suites end to end through `accord eval`: precedence, model matrices, agents,
metrics and thresholds, reports, seeded macros, and every bad input failing only its scenario."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.bounds import PROCESS_SECONDS, as_from_a_terminal
from tests.fakes import FakeOpenAI
from tests.frontends.scenarios.conftest import cases, judge_models, judge_prompts, report, run

BASIC = """\
agent_class: scen_agents.Echo
agent_model_config:
  - model_id: m1
    temperature: 0.1
  - model_id: m2
metrics: [correctness, relevance]
scenarios:
  - name: Greeting
    description: Say hello.
    input_message: "Hello, I am {{ SET who {{ FAKER first_name }} }}"
    expected_output: "A greeting for {{ GET who }}"
  - name: Override
    input_message: "Explain {{ CALC 6 * 7 }}"
    expected_output: "42"
    agent_model_config: {model_id: solo}
    metrics: [correctness, tone]
    pass_threshold: 9
    judge_model_id: strong
"""


def test_a_matrix_runs_every_scenario_on_every_model_with_its_own_agent(
    scenario_project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    import sys

    root = scenario_project(BASIC)
    result = run(root)
    assert result.exit_code == 1, result.stderr  # Override: mean (9 + 4) / 2 = 6.5 < 9
    found = cases(result)
    assert list(found) == ["Greeting [m1 (temperature 0.1)]", "Greeting [m2]", "Override"]
    assert found["Greeting [m2]"]["status"] == "passed" and found["Greeting [m2]"]["score"] == 0.85
    assert found["Override"]["status"] == "failed" and found["Override"]["score"] == 0.65
    assert found["Greeting [m1 (temperature 0.1)]"]["output"].startswith("[m1] Hello, I am ")
    built = [json.loads(c) for c in sorted(sys.modules["scen_agents"].BUILT)]  # type: ignore[attr-defined]
    assert built == [
        {"model": {"model_id": "m1", "temperature": 0.1}},
        {"model": {"model_id": "m2"}},
        {"model": {"model_id": "solo"}},
    ]  # one agent per configuration: never the agent of another model
    # the scenario's judge and metrics win over the file's
    assert sorted(judge_models(judge_server)) == ["fake-model", "fake-model", "strong-model"]
    override = next(p for p in judge_prompts(judge_server) if "Explain 42" in p)
    assert '- tone: how well the response does on "tone"' in override
    data = report(root)
    assert data["seed"] is not None and len(data["cases"]) == 3
    greeting = data["cases"][0]
    assert greeting["usage"] == {"input": 3, "output": 4}
    name = greeting["input"].removeprefix("Hello, I am ")
    assert name and greeting["expected"] == f"A greeting for {name}"  # one scope per scenario
    assert [m["name"] for m in greeting["metrics"]] == ["correctness", "relevance"]
    assert (root / "reports").glob("scenarios-*.html")


def test_precedence_scenario_then_file_then_command_line(
    scenario_project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    scenarios = """\
agent_config: {style: plain}
scenarios:
  - name: From the command line
    input_message: hi
    expected_output: ok
  - name: Own class
    input_message: hi
    expected_output: ok
    agent_class: scen_agents.AsyncCall
    agent_config: {style: own}
    pass_threshold: 8.5
"""
    root = scenario_project(scenarios)
    result = run(root, "--agent-class", "scen_agents.Echo", "--judge-model", "strong")
    found = cases(result)
    assert found["From the command line"]["output"] == "[none] hi"
    assert found["Own class"]["output"] == "async: hi"
    # defaults: correctness, relevance, safety -> (9 + 8 + 10) / 3 = 9.0 >= 8.5
    assert found["Own class"]["status"] == "passed"
    assert set(judge_models(judge_server)) == {"strong-model"}
    assert result.exit_code == 0


def test_agent_config_file_and_none(scenario_project: Callable[..., Path]) -> None:
    import sys

    scenarios = """\
agent_class: scen_agents.Echo
scenarios:
  - name: From a file
    input_message: hi
    expected_output: ok
    agent_config: configs/agent.yaml
  - name: Own default
    input_message: hi
    expected_output: ok
"""
    root = scenario_project(scenarios, {"configs/agent.yaml": "model: {model_id: from-file}\n"})
    assert run(root).exit_code == 0
    built = [json.loads(c) for c in sys.modules["scen_agents"].BUILT]  # type: ignore[attr-defined]
    assert sorted(built, key=str) == [None, {"model": {"model_id": "from-file"}}]


def test_an_accord_target_in_place_of_a_class(scenario_project: Callable[..., Path]) -> None:
    scenarios = "agent_class: {type: echo}\nscenarios:\n  - {expected_output: ok, name: Echo, input_message: ping}\n"
    root = scenario_project(scenarios)
    result = run(root)
    assert cases(result)["Echo"]["output"] == "ping" and result.exit_code == 0


def test_bad_scenarios_fail_alone_and_the_others_run(
    scenario_project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    scenarios = """\
agent_class: scen_agents.Echo
timeout: 0.5
scenarios:
  - {expected_output: ok, name: Fine, input_message: hi}
  - {expected_output: ok, name: Unknown macro, input_message: "{{ NOPE 1 }}"}
  - {expected_output: ok, name: Wrong arguments, input_message: "{{ RANDOM_INT 1 }}"}
  - {expected_output: ok, name: Missing file, input_message: "{{ OPEN nowhere.txt }}"}
  - {expected_output: ok, name: Outside the root, input_message: "{{ OPEN ../secret.txt }}"}
  - {expected_output: ok, name: Env refused, input_message: "{{ ENV HOME }}"}
  - {expected_output: ok, name: No module, input_message: hi, agent_class: nowhere.Agent}
  - {expected_output: ok, name: Bad init, input_message: hi, agent_class: scen_agents.BadInit}
  - {expected_output: ok, name: Raises, input_message: hi, agent_class: scen_agents.Raises}
  - {expected_output: ok, name: Hangs, input_message: hi, agent_class: scen_agents.Hangs}
  - {expected_output: ok, name: No scores, input_message: unscored}
"""
    root = scenario_project(scenarios)
    result = run(root)
    assert result.exit_code == 1
    found = cases(result)
    assert found["Fine"]["status"] == "passed"
    errors = {name: c["error"] for name, c in found.items() if name != "Fine"}
    assert all(c["status"] == "error" for n, c in found.items() if n != "Fine"), found
    assert (
        "unknown macro 'NOPE'" in errors["Unknown macro"]
        and "RANDOM_INT" in errors["Unknown macro"]
    )
    assert "usage: {{ RANDOM_INT min max }}" in errors["Wrong arguments"]
    assert "'nowhere.txt' not found" in errors["Missing file"]
    assert "outside the project root" in errors["Outside the root"]
    assert "allow_env" in errors["Env refused"]
    assert "cannot import agent_class 'nowhere.Agent'" in errors["No module"]
    assert "cannot construct scen_agents.BadInit: ValueError: no API key" in errors["Bad init"]
    assert "the agent raised RuntimeError: the agent broke" in errors["Raises"]
    assert "no answer within 0.5 s" in errors["Hangs"]
    assert "no score for every metric in the judge's reply" in errors["No scores"]
    unscored = [p for p in judge_prompts(judge_server) if "unscored" in p]
    assert len(unscored) == 2  # asked again once, then an error: never a score
    rows = {c["id"]: c for c in report(root)["cases"]}
    assert rows["No module"]["agent"] == "nowhere.Agent"  # an errored row keeps its columns
    assert rows["Raises"]["scenario"] == "Raises" and rows["Raises"]["model"] == "default"


def test_invalid_files_exit_2_with_lines(scenario_project: Callable[..., Path]) -> None:
    root = scenario_project("scenarios:\n  - name: A\n    input_mesage: hi\n")
    result = run(root)
    assert result.exit_code == 2
    assert "scenarios.yaml:3:5 scenarios[0].input_mesage" in result.stderr
    root = scenario_project(
        "scenarios:\n  - {expected_output: ok, name: A, input_message: a}\n  - {expected_output: ok, name: A, input_message: b}\n"
    )
    result = run(root)
    assert result.exit_code == 2 and "duplicate scenario name 'A'" in result.stderr
    assert "no agent_class" in result.stderr and "--agent-class" in result.stderr
    root = scenario_project("metrics: []\nagent_class: scen_agents.Echo\nscenarios: []\n")
    result = run(root)
    assert result.exit_code == 2 and "metrics" in result.stderr


def test_the_seed_replays_random_macros_and_resume_reuses_answers(
    scenario_project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    scenarios = """\
agent_class: scen_agents.Echo
scenarios:
  - {expected_output: ok, name: Random, input_message: "{{ UUID }} {{ RANDOM_INT 1 1000000 }} {{ FAKER name }}"}
"""
    root = scenario_project(scenarios)
    first = cases(run(root, "--seed", "7"))["Random"]["input"]
    again = cases(run(root, "--seed", "7"))["Random"]["input"]
    other = cases(run(root, "--seed", "8"))["Random"]["input"]
    assert first == again and first != other
    fresh = run(root, "--cache", "off")
    seed = fresh.stderr.split("macros seeded with ")[1].split()[0]
    calls = len(judge_server.requests)
    resumed = run(root, "--cache", "off", "--resume", "last")
    assert f"macros seeded with {seed}" in resumed.stderr  # the resumed run's seed
    assert cases(resumed)["Random"]["input"] == cases(fresh)["Random"]["input"]
    assert len(judge_server.requests) == calls  # every node reused from the run


def test_regression_runner_with_a_class_and_user_macros(
    scenario_project: Callable[..., Path], tmp_path: Path
) -> None:
    from accord import RegressionRunner

    class Shout:
        def __init__(self, config: object) -> None:
            self.config = config

        async def run(self, message: str) -> str:
            return message.upper()

    scenarios = """\
scenarios:
  - name: Custom macro
    input_message: "{{ MY_MACRO hello }}"
    expected_output: "PROCESSED HELLO"
"""
    root = scenario_project(scenarios)
    runner = RegressionRunner(
        agent_class=Shout, project_root=root, judge_model_id="fake", output_dir=tmp_path / "out",
        max_concurrency=2, macro_functions={"MY_MACRO": lambda arg: f"Processed {arg}"}, quiet=True,
    )  # fmt: skip
    runs = runner.run(root / "scenarios.yaml")
    case = runs[0].cases[0]
    assert case.input == "Processed hello" and case.output == "PROCESSED HELLO"
    assert case.status == "passed" and RegressionRunner.passed(runs)
    assert len(list((tmp_path / "out").glob("scenarios-*.html"))) == 1


def test_a_folder_of_scenario_files(scenario_project: Callable[..., Path]) -> None:
    from tests.evals.conftest import accord

    root = scenario_project(
        "agent_class: scen_agents.Echo\nscenarios:\n  - {expected_output: ok, name: A, input_message: a}\n"
    )
    (root / "more").mkdir()
    (root / "more" / "b.yaml").write_text(
        "agent_class: scen_agents.Echo\nscenarios:\n  - {expected_output: ok, name: B, input_message: b}\n"
    )
    (root / "more" / "notes.yaml").write_text("title: not a scenario file\n")
    result = accord(
        "eval", root, "--project-root", root, "--output-dir", root / "reports", "--format", "json"
    )
    assert result.exit_code == 0, result.stderr
    assert [s["cases"][0]["id"] for s in result.doc()["suites"]] == ["B", "A"]
    assert len(list((root / "reports").glob("*-*.html"))) == 2
    empty = root / "empty"
    empty.mkdir()
    result = accord("eval", empty)
    assert result.exit_code == 2 and "no scenario file" in result.stderr


def test_ctrl_c_exits_130(scenario_project: Callable[..., Path]) -> None:
    import os
    import signal
    import subprocess
    import sys

    root = scenario_project(
        "agent_class: scen_agents.Hangs\nscenarios:\n  - {expected_output: ok, name: A, input_message: a}\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "accord.cli", "eval", "scenarios.yaml", "-q"],
        cwd=root, stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=as_from_a_terminal,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:  # the agent prints this once it is called: the run is under way
            lines.append(line)
            if "agent started" in line:
                break
        else:
            raise AssertionError("the run ended before the agent was called: " + "".join(lines))
        assert "macros seeded with" in lines[0]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=PROCESS_SECONDS) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
