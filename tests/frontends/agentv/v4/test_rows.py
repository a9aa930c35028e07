"""AgentV's own test keys (`input`, `criteria`, `expected_output`) in a test file's rows, a
file without `prompts`: through AgentV itself and through `accord eval`, the same scores,
verdicts, model messages and judge prompts (the helpers of harness.py);
and AgentV's refusals (yaml-parser.ts at commit 58f316ca2) said at load, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import trust_project
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI
from tests.frontends.agentv.v4 import harness

# the model's answers to the rows of graded-rows/rows/support-replies.jsonl
ROW_ANSWERS = {
    "refund window": "You can get a refund within 30 days of purchase.",
    "named Ana": f"{harness.WRONG}, Ana.",
    "leaked API token": "Rotate the token now; never paste its value here.",
    "priority support": "Priority support comes with the Business plan.",
    "pay by invoice": "Yes, invoices are accepted for annual plans.",
    # grader-per-assertion
    "capital of Portugal": "Lisbon.",
    "hello to the team": "Hello team!",
    # output-transforms
    "seat of government": "Lisbon is the capital.",
    "three primary colors": "red yellow blue",
    "planet with rings": "Saturn has rings.",
}


answer = harness.answering(ROW_ANSWERS)


@pytest.mark.reference
@harness.needs_agentv
def test_rows_with_input_criteria_and_expected_output_score_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    name = "graded-rows"
    expected, asked, sent, got = harness.through_both(tmp_path, name, fake)
    assert got == expected
    # the judge got the same text from both (the criteria, the reference answer, the
    # question), and the model the same messages (each row's input)
    assert harness.judge_requests(fake.requests) == asked
    assert harness.model_requests(fake.requests) == sent
    # what AgentV sends: the row's criteria and reference in the rubric prompt
    # (llm-grader.ts buildRubricPrompt); the template's {{ criteria }} is the row's, its
    # {{ expected_output }} the object as indented JSON (JSON.stringify(v, null, 2))
    users = [user for _system, user in asked]
    assert any("[[ ## criteria ## ]]\nThe reply states the 30 day refund window." in u and
               "[[ ## reference_answer ## ]]\nRefunds are accepted within 30 days" in u
               for u in users), users  # fmt: skip
    assert any('Rubric: PASS if the reply asks to rotate the token' in u and
               'Reference: {\n  "label": "pass",' in u for u in users), users  # fmt: skip
    # the messages input: its system message replaces AgentV's default one
    assert any('"You answer for the billing desk."' in m for m in sent), sent
    assert expected == {
        "refund-window": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "greeting-new-customer": {"score": 0.0, "passed": False, "assertions": [0.0]},
        "escalation-template": {"score": 0.9, "passed": True, "assertions": [0.9]},
        "value-over-criteria": {"score": 0.95, "passed": True, "assertions": [0.9, 1.0]},
        "messages-input": {"score": 1.0, "passed": True, "assertions": [1.0]},
    }  # fmt: skip


def write(root: Path, suite: str, rows: list[dict[str, Any]] | None = None) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "config.yml").write_text("")
    (root / ".agentv").mkdir()
    (root / ".agentv" / "providers.yaml").write_text("- id: echo\n  label: llm\n")
    if rows is not None:
        (root / "evals" / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = root / "evals" / "suite.yaml"
    path.write_text(suite)
    return path


def test_input_and_expected_output_written_in_the_eval_file_are_refused_as_agentv_does(
    tmp_path: Path,
) -> None:
    """yaml-parser.ts rejectAuthoredDirectInput / rejectAuthoredExpectedOutput: a test in
    the eval file itself takes neither; accord says so at their lines, with AgentV's fix."""
    path = write(tmp_path, (
        "providers: [llm]\n"
        "prompts: ['{{ question }}']\n"
        "tests:\n"
        "  - id: inline\n"
        "    input: What is 2+2?\n"
        "    expected_output: '4'\n"
        "    assert: [Says 4]\n"
    ))  # fmt: skip
    run = accord("validate", path)
    assert run.exit_code == 2, run.stdout + run.stderr
    assert f"{path}:5" in run.stderr
    assert "'input' has been removed from a test written" in run.stderr
    assert f"{path}:6" in run.stderr and "vars.expected_output" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_row_without_input_in_a_file_without_prompts_is_refused(tmp_path: Path) -> None:
    """AgentV skips such a test ("Missing required fields: id, input"); accord refuses it
    at the row's line, as it refuses a row with nothing to grade it by."""
    path = write(
        tmp_path,
        "providers: [llm]\ntests:\n  - file://rows.jsonl\n",
        [
            {"id": "fine", "input": "Say hi", "criteria": "Says hi"},
            {"id": "no-input", "criteria": "Says hi"},
            {"id": "ungraded", "input": "Say hi"},
        ],
    )
    run = accord("validate", path)
    assert run.exit_code == 2, run.stdout + run.stderr
    rows = tmp_path / "evals" / "rows.jsonl"
    assert f"{rows}:2" in run.stderr and "has no 'input'" in run.stderr
    assert f"{rows}:3" in run.stderr and "nothing to grade it by" in run.stderr
    assert f"{rows}:1" not in run.stderr


def test_rows_run_through_accord_with_the_row_as_prompt(tmp_path: Path) -> None:
    """Without `prompts` the echo provider answers each row's input (its prompt); a row's
    criteria-only test is graded by a rubric, a contains grades the echoed input."""
    path = write(
        tmp_path,
        "providers: [llm]\ntests:\n  - file://rows.jsonl\n",
        [
            {"id": "one", "input": "Reply with the word lantern",
             "assert": [{"type": "contains", "value": "lantern"}]},
            {"id": "two", "input": "Reply with the word harbor", "expected_output": "harbor",
             "assert": [{"type": "contains", "value": "lantern"}]},
        ],
    )  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code == 1, run.stdout + run.stderr
    cases = {c["id"]: c for c in json.loads(run.stdout)["suites"][0]["cases"]}
    assert cases["one"]["status"] == "passed" and cases["two"]["status"] == "failed"


# the catalog's second grader: the same fake server, a model name of its own
SECOND_GRADER = """\
- id: openai
  label: grader_two
  base_url: "{{ env.FAKE_URL }}"
  api_key: "{{ env.FAKE_KEY }}"
  model: fake-grader-two
"""


def graded_by(requests: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(model, the rubric's value) of each judge request, in a fixed order."""
    out = []
    for body in requests:
        messages = body["messages"]
        if len(messages) == 2 and "Return only JSON." in messages[0]["content"]:
            user = messages[1]["content"]
            if "[[ ## criteria ## ]]" in user:
                criteria = user.split("[[ ## criteria ## ]]")[1].split("[[ ##")[0].strip()
            else:  # a template of the suite's own: its rubric line
                criteria = user.split("Rubric: ")[1].splitlines()[0]
            out.append((body["model"], criteria))
    return sorted(out)


@pytest.mark.reference
@harness.needs_agentv
def test_an_llm_rubric_is_graded_by_its_own_provider_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """grader-parser.ts: an llm-rubric's `provider` names its grader in the catalog; the
    others are graded by the suite's grader (AgentV's defaults.grader, accord's
    defaults.judge_model: the same fake model)."""
    name = "grader-per-assertion"
    suites = []
    for tool in ("agentv", "accord"):
        suite = harness.project(tmp_path / tool, name)
        catalog = suite.parents[1] / ".agentv" / "providers.yaml"
        catalog.write_text(catalog.read_text() + SECOND_GRADER)
        suites.append(suite)
    expected = harness.run_agentv(suites[0])
    agentv_graders = graded_by(fake.requests)
    asked = harness.judge_requests(fake.requests)
    fake.requests.clear()
    got = harness.run_accord(suites[1])
    assert got == expected
    assert graded_by(fake.requests) == agentv_graders
    assert harness.judge_requests(fake.requests) == asked
    assert agentv_graders == [
        ("fake-grader-two", "Greets the team."),
        ("fake-grader-two", "Names Lisbon as the capital."),
        ("fake-model", "Answers in one sentence."),
        ("fake-model", "Is friendly."),
    ]


def test_an_assertions_target_is_refused_with_agentvs_fix_and_a_grader_must_be_a_model(
    tmp_path: Path,
) -> None:
    """AgentV skips every test whose llm-rubric has `target` ("Assertion field 'target' has
    been removed ... Use assertion 'provider' instead"); accord refuses the file at the
    assertion, inside an assert-set too. A grader label that names no model is refused."""
    path = write(tmp_path, (
        "providers: [llm]\n"
        "prompts: ['{{ q }}']\n"
        "tests:\n"
        "  - id: a\n"
        "    vars: {q: hi}\n"
        "    assert:\n"
        "      - type: assert-set\n"
        "        assert:\n"
        "          - {type: llm-rubric, target: grader_a, value: Says hi}\n"
        "      - {type: llm-rubric, provider: llm, value: Says hi}\n"
        "      - {type: llm-rubric, provider: nobody, value: Says hi}\n"
    ))  # fmt: skip
    run = accord("validate", path)
    assert run.exit_code == 2, run.stdout + run.stderr
    lines = run.stderr.splitlines()
    assert any(f"{path}:7" in line and "'target'" in line and "'provider'" in line
               for line in lines), run.stderr  # fmt: skip
    assert any(f"{path}:10" in line and "the grader 'llm' is 'echo', no model" in line
               for line in lines), run.stderr  # fmt: skip
    assert any(f"{path}:11" in line and "provider 'nobody' is not in" in line
               for line in lines), run.stderr  # fmt: skip
    assert "Traceback" not in run.stderr


@pytest.mark.reference
@harness.needs_agentv
def test_a_tests_transform_runs_before_its_graders_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """output-transform.ts: an expression (default_test's), a module's function, and a
    body reading context.vars; every grader of the test (contains, is-json, equals, the
    judge) gets what the transform returned."""
    name = "output-transforms"
    expected, asked, _sent, got = harness.through_both(tmp_path, name, fake)
    assert got == expected
    assert asked and harness.judge_requests(fake.requests) == asked
    assert any("[[ ## answer ## ]]\nLISBON IS THE CAPITAL." in user for _s, user in asked)
    assert expected == {
        # contains LISBON holds, contains Lisbon does not: the graders saw the transform's
        "shouted": {"score": 0.6667, "passed": False, "assertions": [1.0, 0.0, 1.0]},
        "counted-by-a-module": {"score": 1.0, "passed": True, "assertions": [1.0, 1.0]},
        "body-with-context": {"score": 1.0, "passed": True, "assertions": [1.0]},
    }  # fmt: skip


def test_a_typescript_transform_and_one_outside_the_project_are_refused(tmp_path: Path) -> None:
    """A .ts transform AgentV imports only under Bun (Node, which accord runs, cannot); a
    transform file must lie inside the project, as every file an eval file names."""
    project = tmp_path / "project"
    (tmp_path / "outside.mjs").write_text("export default (o) => o;\n")
    path = write(project, (
        "providers: [llm]\n"
        "prompts: ['{{ q }}']\n"
        "tests:\n"
        "  - id: a\n"
        "    vars: {q: hi}\n"
        "    options: {transform: 'file://to-csv.ts'}\n"
        "    assert: [Says hi]\n"
        "  - id: b\n"
        "    vars: {q: hi}\n"
        "    options: {transform: 'file://../../outside.mjs'}\n"
        "    assert: [Says hi]\n"
    ))  # fmt: skip
    (project / "evals" / "to-csv.ts").write_text("export default (o: string) => o;\n")
    run = accord("validate", path)
    assert run.exit_code == 2, run.stdout + run.stderr
    lines = run.stderr.splitlines()
    assert any(f"{path}:6" in line and "TypeScript" in line for line in lines), run.stderr
    assert any(f"{path}:10" in line and "outside the project" in line for line in lines), lines


def test_a_transform_that_throws_fails_the_answer_with_agentvs_words(tmp_path: Path) -> None:
    path = write(tmp_path, (
        "providers: [llm]\n"
        "prompts: ['{{ q }}']\n"
        "tests:\n"
        "  - id: a\n"
        "    vars: {q: hi}\n"
        "    options: {transform: 'output.notAFunction()'}\n"
        "    assert: [{type: contains, value: hi}]\n"
    ))  # fmt: skip
    trust_project(path.parent)  # inline code, or a program of the PATH: the test's own file
    run = accord("eval", path, "--format", "json", "--cache", "off")
    case = json.loads(run.stdout)["suites"][0]["cases"][0]
    assert case["status"] == "error", case
    assert "Transform failed ([inline transform]): output.notAFunction is not a function" in (
        json.dumps(case)
    ), case


REPLAY = """\
- id: replay
  label: recorded
  fixtures: ../fixtures/answers.jsonl
  source_target: llm
"""


@pytest.mark.reference
@harness.needs_agentv
def test_recorded_answers_graded_by_a_panel_score_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """replay.ts: each test's answer is its record of the fixtures (this suite's, this
    test's, the source target's), no model is asked for it; rows of AgentV's own keys and
    no prompts; an assert-set of two llm-rubrics, each graded by its own `provider`."""
    name = "recorded-panel"
    suites = []
    for tool in ("agentv", "accord"):
        suite = harness.project(tmp_path / tool, name)
        catalog = suite.parents[1] / ".agentv" / "providers.yaml"
        catalog.write_text(catalog.read_text() + SECOND_GRADER + REPLAY)
        suites.append(suite)
    expected = harness.run_agentv(suites[0])
    graders = graded_by(fake.requests)
    asked = harness.judge_requests(fake.requests)
    assert harness.model_requests(fake.requests) == []  # only the graders were asked
    fake.requests.clear()
    got = harness.run_accord(suites[1])
    assert got == expected
    assert graded_by(fake.requests) == graders
    assert harness.judge_requests(fake.requests) == asked
    assert harness.model_requests(fake.requests) == []
    # the recorded answer reached the graders (the other suite's record was not taken)
    assert any("Candidate response: Please rotate the token now." in u for _s, u in asked)
    assert {model for model, _c in graders} == {"fake-model", "fake-grader-two"}
    assert expected == {
        # the set's score is its members' mean; a recorded "Hi there" fails both graders
        "refund-approved": {"score": 0.9, "passed": True, "assertions": [0.9]},
        "refund-with-fee": {"score": 0.3, "passed": False, "assertions": [0.3]},
        "token-leak": {"score": 0.9, "passed": True, "assertions": [0.9]},
    }


def test_replay_fixtures_stay_in_the_project_and_a_missing_record_fails_the_answer(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    suite = "providers: [recorded]\nprompts: ['{{ q }}']\ntests:\n" + "".join(
        f"  - id: {tid}\n    vars: {{q: hi}}\n    assert: [{{type: contains, value: hi}}]\n"
        for tid in ("recorded-one", "never-recorded")
    )
    path = write(project, suite)
    catalog = project / ".agentv" / "providers.yaml"
    (tmp_path / "outside.jsonl").write_text("")
    catalog.write_text(REPLAY.replace("../fixtures/answers.jsonl", "../../outside.jsonl"))
    run = accord("validate", path)
    assert run.exit_code == 2 and "outside the project root" in run.stderr, run.stderr
    assert f"{path}:1" in run.stderr
    (project / "answers.jsonl").write_text(json.dumps({
        "schema_version": "agentv.replay_fixture.v1", "suite": "suite", "test_id": "recorded-one",
        "source_target": "llm", "output": [{"role": "assistant", "content": "hi there"}],
    }) + "\n")  # fmt: skip
    catalog.write_text(REPLAY.replace("../fixtures/answers.jsonl", "../answers.jsonl"))
    run = accord("eval", path, "--format", "json", "--cache", "off")
    cases = {c["id"]: c for c in json.loads(run.stdout)["suites"][0]["cases"]}
    assert cases["recorded-one"]["status"] == "passed", cases
    assert cases["never-recorded"]["status"] == "error"
    assert ("Replay fixture lookup found no record for suite=suite test_id=never-recorded "
            "source_target=llm") in json.dumps(cases["never-recorded"])  # fmt: skip


def test_an_inherited_assertions_problem_is_said_once_at_its_own_line(tmp_path: Path) -> None:
    """The offline grader benchmark's shape: rows in a test file, the panel in the eval
    file's top-level `assert` with AgentV's removed `target`: refused once, at the eval
    file's line of that assertion, not at each row."""
    path = write(
        tmp_path,
        "providers: [llm]\ntests:\n  - file://rows.jsonl\nassert:\n"
        "  - type: assert-set\n    assert:\n"
        "      - {type: llm-rubric, target: grader_a, prompt: 'Rate {{ output }}'}\n",
        [{"id": f"row-{n}", "input": "Say hi", "criteria": "Says hi"} for n in range(3)],
    )
    run = accord("validate", path)
    assert run.exit_code == 2, run.stdout + run.stderr
    problems = [line for line in run.stderr.splitlines() if "'target'" in line]
    assert len(problems) == 1 and f"{path}:5" in problems[0], run.stderr
    assert "rows.jsonl" not in run.stderr


CLI = """\
- id: cli
  label: answerer
  command: >-
    python3 scripts/answer.py --prompt {PROMPT} --prompt-file {PROMPT_FILE}
    --output {OUTPUT_FILE}
  cwd: ..
  healthcheck:
    command: python3 scripts/answer.py --healthcheck
    cwd: ..
"""


@pytest.mark.reference
@harness.needs_agentv
def test_a_cli_provider_of_the_catalog_answers_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """cli.ts: the question as {PROMPT} (a quote in it included) and in {PROMPT_FILE}, the
    answer read from {OUTPUT_FILE} as text or as AgentV's JSON reply, the command run in
    `cwd` from the eval file's folder after its healthcheck."""
    name = "program-answers"
    suites = []
    for tool in ("agentv", "accord"):
        suite = harness.project(tmp_path / tool, name)
        catalog = suite.parents[1] / ".agentv" / "providers.yaml"
        catalog.write_text(catalog.read_text() + CLI)
        suites.append(suite)
    expected = harness.run_agentv(suites[0])
    asked = harness.judge_requests(fake.requests)
    fake.requests.clear()
    got = harness.run_accord(suites[1])
    assert got == expected
    assert asked and harness.judge_requests(fake.requests) == asked
    assert expected == {
        "plain-text": {"score": 1.0, "passed": True, "assertions": [1.0, 1.0]},
        "json-reply": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "greeting": {"score": 0.0, "passed": False, "assertions": [0.0]},
    }  # fmt: skip


def test_a_cli_entry_accord_cannot_run_safely_is_refused_at_load(tmp_path: Path) -> None:
    """The offline grader benchmark's catalog entry (`grader_target`, which AgentV refuses
    too), a value from the file inside single quotes (the shell would hand it on unread),
    a working folder outside the project: each refused naming the catalog's line."""
    project = tmp_path / "project"
    path = write(project, "providers: [a, b, c]\nprompts: ['{{ q }}']\ntests:\n"
                 "  - id: t\n    vars: {q: hi}\n    assert: [Says hi]\n")  # fmt: skip
    (project / ".agentv" / "providers.yaml").write_text(
        "- {id: cli, label: a, command: 'run {PROMPT} {OUTPUT_FILE}', grader_target: grader}\n"
        "- {id: cli, label: b, command: \"sh -c 'echo {PROMPT}'\"}\n"
        "- {id: cli, label: c, command: 'run {PROMPT}', cwd: ../../..}\n"
    )
    run = accord("validate", path)
    assert run.exit_code == 2, run.stdout + run.stderr
    catalog = project / ".agentv" / "providers.yaml"
    assert f"provider 'a' ({catalog}:1): key 'grader_target'" in run.stderr
    assert "defaults.grader" in run.stderr
    assert f"provider 'b' ({catalog}:2): command: {{PROMPT}} sits inside single quotes" in (
        run.stderr
    )
    assert f"provider 'c' ({catalog}:3): 'cwd'" in run.stderr
    assert "outside the project root" in run.stderr
