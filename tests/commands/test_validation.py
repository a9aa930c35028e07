"""Bad input to `accord test` exits 2 with the file and line, before any model call."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.commands.conftest import accord_test
from tests.fakes import FakeOpenAI

WORKFLOW = """
variables:
  question: "How many?"
tasks:
  - name: count
    type: agent
    prompt: "{{ question }}"
tests:
  - type: consistency
    task_ref: cont
  - type: custom
    dataset: data/nope.yml
    workflow_variable_name: question
"""


def invalid(path: Path, fake: FakeOpenAI) -> str:
    run = accord_test(path, "--format", "json")
    assert run.exit_code == 2, (run.stdout, run.stderr)
    # stdout holds only the JSON error document, no result
    assert json.loads(run.stdout)["exit_code"] == 2
    assert fake.requests == []  # nothing ran
    return run.stderr


def test_every_problem_of_a_workflow_is_reported_together(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    path = project({"w.workflow.yml": WORKFLOW})
    stderr = invalid(path, fake_llm)
    assert "2 problems found" in stderr
    assert (
        f"{path}:9:15 tests[0].task_ref: task_ref names unknown task 'cont'; did you mean 'count'?"
    ) in stderr
    assert f"{path}:11:14 tests[1].dataset: dataset file 'data/nope.yml' not found" in stderr


def test_agent_consistency_test_needs_a_task_description(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    agent = "model: fake\ntests:\n  - type: consistency\n    n: 3\n"
    path = project({"a.agent.yml": agent})
    stderr = invalid(path, fake_llm)
    assert f"{path}:3:5 tests[0]: a consistency test on an agent needs 'task_description'" in (
        stderr
    )


def test_malformed_yaml_dataset_names_the_row_line(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    agent = "model: fake\ntests:\n  - type: custom\n    dataset: rows.yml\n"
    rows = "- query: one\n  response: '1'\n- response: '2'\n  colour: red\n"
    path = project({"a.agent.yml": agent, "rows.yml": rows})
    stderr = invalid(path, fake_llm)
    dataset = path.parent / "rows.yml"
    assert f"{dataset}:3:3 [1].query: required key 'query' is missing: add it" in stderr
    assert f"{dataset}:4:3 [1].colour: unknown key 'colour'" in stderr


def test_dataset_yaml_syntax_error(project: Callable[..., Path], fake_llm: FakeOpenAI) -> None:
    agent = "model: fake\ntests:\n  - type: custom\n    dataset: rows.yml\n"
    path = project({"a.agent.yml": agent, "rows.yml": "- query: [unclosed\n"})
    stderr = invalid(path, fake_llm)
    assert f"{path.parent / 'rows.yml'}:1:10: YAML syntax error" in stderr


def test_malformed_jsonl_and_csv_datasets(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    agent = (
        "model: fake\ntests:\n  - type: custom\n    dataset: rows.jsonl\n"
        "  - type: custom\n    dataset: rows.csv\n  - type: custom\n    dataset: bad.csv\n"
    )
    jsonl = '{"query": "a", "response": "1"}\n{"query": "b", response: 2}\n[1]\n'
    csv_rows = "query,response,extra\na,1,\nb,2,x\n"
    path = project(
        {
            "a.agent.yml": agent,
            "rows.jsonl": jsonl,
            "rows.csv": csv_rows,
            "bad.csv": "question,response\na,1\n",
        }
    )
    stderr = invalid(path, fake_llm)
    root = path.parent
    assert f"{root / 'rows.jsonl'}:2:" in stderr and "invalid JSON" in stderr
    assert f"{root / 'rows.jsonl'}:3:1 each line must be a JSON object" in stderr
    assert f"{root / 'rows.csv'}:3:1 extra: unknown key 'extra'" in stderr
    assert f"{root / 'bad.csv'}:1:1 the header needs a 'query' column" in stderr


def test_metrics_prompts_and_n_are_checked(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    agent = """
    model: fake
    tests:
      - type: consistency
        n: 1
        task_description: q
      - type: consistency
        task_description: q
        prompt: "{{ submission_1 }} vs {{ answer_two }}"
      - type: custom
        dataset: rows.yml
        metrics: [similarity, recall]
    """
    path = project({"a.agent.yml": agent, "rows.yml": "- query: q\n"})
    stderr = invalid(path, fake_llm)
    assert f"{path}:4:8 tests[0].n: a consistency test needs n >= 2 runs (got 1)" in stderr
    assert "tests[1].prompt: unknown name 'answer_two' in the judge prompt" in stderr
    assert (
        "tests[2].metrics[1]: invalid metric: type: unknown metric 'recall': did you mean "
        "'context_recall'? a custom test's metrics are similarity, context_recall, correctness"
        in stderr
    )
    assert "case 1 has no 'response', the expected answer that similarity compares with" in stderr


def test_custom_workflow_test_needs_its_query_variable(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    workflow = """
    variables:
      region: {type: string}
    tasks:
      - name: answer
        type: agent
        prompt: "{{ region }}"
    tests:
      - type: custom
        dataset: rows.yml
        workflow_variable_name: regoin
      - type: consistency
    """
    path = project({"w.workflow.yml": workflow, "rows.yml": "- query: q\n  response: r\n"})
    stderr = invalid(path, fake_llm)
    assert "tests[0].workflow_variable_name: the workflow declares no variable 'regoin'" in stderr
    assert "tests[1]: variable 'region' has no default and a test cannot set it" in stderr


def test_case_file_problems(project: Callable[..., Path], fake_llm: FakeOpenAI) -> None:
    suite = """
    target: agents/missing.agent.yml
    settings:
      rnus: 2
    cases:
      - name: a
        prompt: p
        expected: e
      - name: a
        prompt: p
        expected: e
    """
    path = project({"s.test.yml": suite})
    run = accord_test(path)
    assert run.exit_code == 2
    assert f"{path}:3:3 settings.rnus: unknown key 'rnus': did you mean 'runs'?" in run.stderr
    fixed = path.read_text().replace("rnus", "runs")
    path.write_text(fixed)
    stderr = invalid(path, fake_llm)
    assert f"{path}:1:9 target: file 'agents/missing.agent.yml' not found" in stderr
    assert f"{path}:8:11 cases[1].name: duplicate case name 'a'" in stderr


def test_files_accord_test_cannot_take(
    project: Callable[..., Path], fake_llm: FakeOpenAI, tmp_path: Path
) -> None:
    path = project(
        {"w.workflow.yml": "tasks:\n  - name: a\n    type: formatter\n    template: x\n"}
    )
    assert "has no tests: add a 'tests:' list" in invalid(path, fake_llm)
    assert "accord test takes a .workflow.yml" in invalid(tmp_path / "config.yml", fake_llm)
    assert "file not found" in invalid(tmp_path / "nope.workflow.yml", fake_llm)
