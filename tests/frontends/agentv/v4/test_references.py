"""Graders that compare the answer with a reference (field-accuracy, equals and the other
text checks, a script grader, python and javascript, llm-rubric's reference answer) with
the reference given as the test's `expected_output` var, as a conversation turn's
`expected_output`, and not at all (tests/data/agentv4/reference-graders.suite.yaml),
through AgentV itself and `accord eval`: the same scores, verdicts and assertion scores
(the helpers of harness.py).

Where the reference comes from in AgentV 4 (packages/core/src/evaluation at 58f316ca2):
- yaml-parser.ts line 313 refuses a test's own `expected_output`; the reference goes in
  `vars.expected_output`, a var like any other. The test's EvalTest.expected_output is built
  from the test's own key only (lines 1642 and 1705-1714: resolveExpectedMessages, then
  processExpectedMessages), so it is empty, and its reference_answer '' (lines 1716-1734).
- orchestrator.ts runConversationMode, lines 3354-3365: a turn's grader sees the turn's own
  `expected_output`, text as `{content: text}` (no role), anything else as written; none
  when the turn has none; reference_answer stays the test's ('').
- graders/field-accuracy.ts evaluate, lines 97-106: with no expected object, score 0 and
  "No expected data found in expected_output"; extractExpectedData, lines 123-143: the last
  message with role `assistant` and a content, an object as it is, text read as JSON.
- loaders/grader-parser.ts lines 1509-1707: contains, equals, regex, starts-with, ... are
  skipped ("missing value") unless their value, after interpolateRawEvalCase filled in the
  vars (a whole `{{ name }}` becoming the var's value, object or number included), is
  non-empty text.
- graders/promptfoo-assertions.ts buildAssertionContext, lines 25-43: a python or
  javascript assertion's context holds EvalTest.expected_output, and no vars.
- graders/llm-grader.ts lines 1063-1064: the judge prompt has a reference section only for
  a non-empty reference_answer; graders/script-grader.ts line 258: the script's
  `expected_output` is EvalTest.expected_output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import trust_project
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI
from tests.frontends.agentv.v4 import harness

NAME = "reference-graders.suite.yaml"
# the model under test: a fixed answer per question
ANSWERS = {
    "List the invoice fields as JSON": (
        '{"invoice_number": "INV-1", "total": 101, "date": "2024-01-15"}'
    ),
    "Report the build status": '{"status": "ok", "code": 200}',
    "Multiply 3 times 3": "9",
    "Repeat the braces": "{{ expected_output }}",
}


answer = harness.answering(ANSWERS, harness.answer)


@pytest.mark.reference
@harness.needs_agentv
def test_reference_graders_score_in_accord_as_in_agentv(tmp_path: Path, fake: FakeOpenAI) -> None:
    expected, agentv_asked, agentv_sent, got = harness.through_both(tmp_path, NAME, fake)
    assert got == expected
    # the judge was asked the same, its reference answer empty (the reference is a var, or
    # a turn's expected output), and the model got the same messages
    assert agentv_asked and harness.judge_requests(fake.requests) == agentv_asked
    # (the two llm-rubrics' template has the section, the rubric checklist's prompt none)
    marker = "[[ ## reference_answer ## ]]"
    references = [
        user.split(marker)[1].split("[[ ## answer ## ]]")[0]
        for _, user in agentv_asked
        if marker in user
    ]
    assert len(references) == 2 and all(not r.strip() for r in references), agentv_asked
    assert harness.model_requests(fake.requests) == agentv_sent
    assert expected == {
        # field-accuracy 0 (the var is no expected output), the script given [] scores 1,
        # the equals whose value is an object skipped, the rubric 1, the python assertion
        # finding no expected output and no vars in its context 1
        "fields-reference-in-vars": {"score": 0.75, "passed": False,
                                     "assertions": [0.0, 1.0, 1.0, 1.0]},
        # field-accuracy 0, the equals rendering as nothing skipped, contains 1
        "fields-reference-absent": {"score": 0.5, "passed": False, "assertions": [0.0, 1.0]},
        # equals the var 1, the judge's 0.9, the equals of a number skipped
        "text-reference-in-vars": {"score": 0.95, "passed": True, "assertions": [1.0, 0.9]},
        # turns: text has no role (field-accuracy 0; python sees `[{content}]`: 1); code 201
        # is not 200 (0.5); the message from a var (1, the judge's 0.9, javascript reading
        # context.expectedOutput 1); none (0); a user message (0); every field kind, as
        # weighted (invoice 2, total 0, date 1, the missing optional field weighing 0: 0.75)
        "fields-reference-in-turns": {"score": 0.4528, "passed": False,
                                      "assertions": [0.5, 0.5, 0.9667, 0.0, 0.0, 0.75]},
    }  # fmt: skip


@pytest.mark.reference
@harness.needs_agentv
def test_inherited_assertions_keep_their_values_as_written_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """yaml-parser.ts interpolateRawEvalCase (lines 489-522, called at 1553) fills the vars
    into the test's own `assert` only, rubrics written as text included; the inherited
    ones (combineInheritedAssertions, line 1534) keep `{{ expected_output }}` as written."""
    name = "inherited-references.suite.yaml"
    expected, agentv_asked, _sent, got = harness.through_both(tmp_path, name, fake)
    assert got == expected
    assert agentv_asked and harness.judge_requests(fake.requests) == agentv_asked
    users = [user for _, user in agentv_asked]
    assert any("- [rubric-1] (REQUIRED): The reply is 9\n" in user for user in users), users
    # each test's inherited llm-rubric: its criteria as written
    assert sum("]]\nMatches the reference answer: {{ expected_output }}\n" in u for u in users) == 2
    assert expected == {
        # the own rubric and contains filled in (1, 1); the inherited equals compares with
        # the text "{{ expected_output }}" (0); the inherited llm-rubric, the judge's 0.9
        "own-rubric-names-the-reference": {"score": 0.725, "passed": False,
                                           "assertions": [1.0, 1.0, 0.0, 0.9]},
        # the answer is the text "{{ expected_output }}": the own contains of the filled-in
        # input fails, the inherited equals holds
        "literal-reference": {"score": 0.6333, "passed": False, "assertions": [0.0, 1.0, 0.9]},
    }  # fmt: skip


def test_a_skipped_assertion_is_noted_as_agentv_warns(tmp_path: Path, fake: FakeOpenAI) -> None:
    """AgentV warns of each assertion it skips for want of a value (grader-parser.ts:
    "Skipping equals evaluator ...: missing value"); accord says so, at the entry's line."""
    suite = harness.project(tmp_path, NAME)
    trust_project(suite.parent)  # inline code, or a program of the PATH: the test's own file
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    assert run.exit_code == 1, run.stderr + run.stdout
    noted = [
        int(line.split("suite.yaml:")[1].split(":")[0])
        for line in run.stderr.splitlines()
        if "so AgentV skips it ('missing value')" in line
    ]
    equals = [
        number
        for number, line in enumerate(suite.read_text().splitlines(), 1)
        if line.strip() == "- type: equals"
    ]
    # all but the third: the object var, the absent var, (the text var), the number
    assert len(equals) == 4 and noted == [equals[0], equals[1], equals[3]], run.stderr
    # and they are not scored: of each test's assertions, one fewer is graded
    graded = {c["id"]: len(c["evaluations"]) for c in json.loads(run.stdout)["suites"][0]["cases"]}
    assert graded == {"fields-reference-in-vars": 4, "fields-reference-absent": 2,
                      "text-reference-in-vars": 2, "fields-reference-in-turns": 1}  # fmt: skip


def _inline_suite(tmp_path: Path, asserts: str) -> Path:
    (tmp_path / "config.yml").write_text("")
    path = tmp_path / "s.eval.yaml"
    path.write_text(
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests:\n  - id: a\n"
        "    metadata: {team: x}\n    vars: {input: '9', expected_output: '9'}\n"
        f"    assert:\n{asserts}"
    )
    return path


def test_python_and_javascript_get_agentvs_context_and_results(tmp_path: Path) -> None:
    """promptfoo-assertions.ts: the context of AgentV's grader (no vars; the expected output
    a test has is none), and normalizeScriptResult's reading of the result."""
    checks = [
        # the context: AgentV's names, no vars, no expected output for a test
        ("python", "sorted(context) == ['cost_usd', 'criteria', 'dependency_results', "
         "'duration_ms', 'expected_output', 'file_changes', 'input', 'metadata', 'token_usage', "
         "'trace', 'workspace_path'] and context['metadata'] == {'team': 'x'} "
         "and context['expected_output'] == []", 1.0),
        ("javascript", "context.vars === undefined && context.expectedOutput.length === 0 "
         "&& context.metadata.team === 'x'", 1.0),
        # a number is the score; a list is no result (0); an object without score or pass 0
        ("python", "0.3", 0.3), ("python", "[1]", 0.0), ("python", "{'reason': 'r'}", 0.0),
        ("python", "{'pass': True}", 1.0), ("javascript", "({score: 0.25})", 0.25),
        # code that raises scores 0; a body of several lines returns its value
        ("python", "1/0", 0.0), ("python", "|\n          x = output.strip()\n"
                                           "          return x == '9'", 1.0),
    ]  # fmt: skip
    entries = "".join(
        f"      - type: {kind}\n        value: {code if code[0] == '|' else json.dumps(code)}\n"
        for kind, code, _ in checks
    )
    suite = _inline_suite(tmp_path, entries)
    trust_project(suite.parent)  # inline code, or a program of the PATH: the test's own file
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    assert run.exit_code in (0, 1), run.stderr + run.stdout
    found = json.loads(run.stdout)["suites"][0]["cases"][0]["evaluations"]
    assert [round(e["score"], 4) for e in found] == [s for _, _, s in checks], found
    assert "ZeroDivisionError" in found[7]["reason"]


def test_a_file_reference_as_python_code_is_refused_at_its_line(tmp_path: Path) -> None:
    """AgentV runs a python assertion's value as code: `file://check.py` fails there."""
    path = _inline_suite(tmp_path, "      - type: python\n        value: file://check.py\n")
    run = accord("eval", path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr, run.stderr
    assert "s.eval.yaml:9" in run.stderr and "runs a python assertion's value as code" in (
        run.stderr
    ), run.stderr


def test_python_without_code_is_skipped_with_a_note(tmp_path: Path) -> None:
    """grader-parser.ts lines 1436-1440: python/javascript with no code are skipped."""
    entries = "      - type: python\n      - type: contains\n        value: '9'\n"
    path = _inline_suite(tmp_path, entries)
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr + run.stdout
    assert "s.eval.yaml:9: this python has no text" in run.stderr, run.stderr
    found = json.loads(run.stdout)["suites"][0]["cases"][0]["evaluations"]
    assert [e["name"] for e in found] == ["contains"], found
