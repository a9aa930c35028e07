"""AgentV 4's `script` graders, `llm-rubric` with a grader prompt of its own (`prompt:`) and
an `id` on an assertion, through `accord eval`, scored as AgentV scores them: each grader by
packages/core/src/evaluation/graders (script-grader.ts, llm-grader.ts), the test by
orchestrator.ts (the weighted mean of its graders' scores; a pass at 0.8)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_model_config, trust_project
from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply

DATA = Path(__file__).parents[3] / "data" / "agentv4"
GRADER_HEADING = "# Median Function Rubric"


def _cases(run: Run) -> dict[str, dict[str, Any]]:
    assert run.exit_code in (0, 1), run.stderr + run.stdout
    return {c["id"]: c for c in run.suite()["cases"]}


def _user_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")


def test_a_suite_with_file_parts_runs_its_script_and_skips_its_valueless_grader_prompt(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    (tmp_path / "config.yml").write_text(
        fake_model_config(fake_llm) + "defaults:\n  judge_model: fake\n"
    )
    shutil.copytree(DATA / "review-and-codegen", tmp_path / "evals")
    shutil.copy(DATA / "review-and-codegen.suite.yaml", tmp_path / "evals" / "suite.yaml")
    shutil.copy(DATA / "basic_answers.py", tmp_path / "basic_answers.py")
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "providers.yaml").write_text(
        "providers:\n  - id: python:../basic_answers.py\n    label: llm\n"
    )

    def judge(body: dict[str, Any]) -> Reply:
        if GRADER_HEADING in _user_text(body):  # the suite's own grader prompt
            return Reply(text='```json\n{"score": 0.75, "assertions": []}\n```')
        return Reply(text='{"pass": true, "score": 1, "reason": "ok"}')

    fake_llm.responder = judge
    run = accord("eval", tmp_path / "evals" / "suite.yaml", "--format", "json", "--cache", "off")
    cases = _cases(run)
    assert len(cases) == 7
    for test_id, case in cases.items():
        if test_id != "median-codegen":
            assert (case["score"], case["status"]) == (1.0, "passed"), case
    case = cases["median-codegen"]
    scores = {e["name"]: e["score"] for e in case["evaluations"]}
    # score_python_answer.py prints {"score": 0.75, ...}: annotated, documented and raising,
    # no doctest; script-grader.ts takes `score` as it is; orchestrator.ts: the mean of the
    # two graders that run. The llm-rubric `codegen_quality` names a prompt file and has no
    # value: AgentV skips it (grader-parser.ts: "expected value or prompt"; a prompt file is
    # read only beside a value), and accord says so
    assert scores == {"rubrics": 1.0, "python_checks": 0.75}, case
    assert case["score"] == pytest.approx((1.0 + 0.75) / 2, abs=1e-4)
    assert case["status"] == "passed"  # 0.875 >= 0.8
    checks = next(e for e in case["evaluations"] if e["name"] == "python_checks")
    assert checks["passed"] is False  # 0.75 < 0.8: the grader's own verdict is a fail
    assert not [b for b in fake_llm.requests if GRADER_HEADING in _user_text(b)]
    assert "suite.yaml:43: this llm-rubric has no 'value'" in run.stderr, run.stderr


def _write(root: Path, fake: FakeOpenAI, asserts: str, answer: str = "hello there") -> Path:
    (root / "config.yml").write_text(fake_model_config(fake) + "defaults:\n  judge_model: fake\n")
    path = root / "s.eval.yaml"
    path.write_text(
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\n"
        f"tests:\n  - id: a\n    vars: {{input: {answer}}}\n    assert:\n{asserts}"
    )
    return path


GRADER = """import json, sys
payload = json.load(sys.stdin)
MODE
"""


def _grader(root: Path, name: str, body: str) -> None:
    (root / name).write_text(GRADER.replace("MODE", body))


@pytest.mark.parametrize(
    ("body", "score", "passed"),
    [
        # script-grader.ts, normalizeScriptProtocol: `score` clamped into [0, 1]; no `pass`:
        # the verdict is score >= 0.8
        ("print(json.dumps({'score': 1.7}))", 1.0, True),
        ("print(json.dumps({'score': 0.5, 'reason': 'half'}))", 0.5, False),
        # `pass` given: it is the verdict; no score: 1 or 0
        ("print(json.dumps({'pass': False}))", 0.0, False),
        # no score: the mean of the checks (a check's score, else its pass as 1/0)
        (
            "print(json.dumps({'checks': [{'text': 'a', 'pass': True, 'reason': ''},"
            " {'text': 'b', 'pass': False, 'reason': '', 'score': 0.5}]}))",
            0.75,
            False,
        ),
        # plain text: the exit code is the verdict (exit 0: 1, else 0)
        ("print('fine')", 1.0, True),
        ("print('nope'); sys.exit(3)", 0.0, False),
        # a non-zero exit with something on stderr: the grader fails with 0
        ("sys.stderr.write('boom'); sys.exit(1)", 0.0, False),
        ("print(json.dumps({'score': 1})); sys.exit(2)", 0.0, False),
    ],
)
def test_a_script_graders_answer_is_read_as_agentv_reads_it(
    tmp_path: Path, fake_llm: FakeOpenAI, body: str, score: float, passed: bool
) -> None:
    _grader(tmp_path, "g.py", body)
    path = _write(tmp_path, fake_llm, (
        f"      - type: script\n        command: [{sys.executable}, g.py]\n"
    ))  # fmt: skip
    case = _cases(accord("eval", path, "--format", "json", "--cache", "off"))["a"]
    found = case["evaluations"][0]
    assert (found["score"], found["passed"]) == (score, passed), found
    assert case["score"] == score  # the test's only grader


def test_a_script_grader_reads_agentvs_payload_and_its_config_as_data(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # every key AgentV does not read itself reaches the script in `config` (grader-parser.ts),
    # as data: a shell never sees it
    _grader(tmp_path, "g.py", (
        "ok = payload['output'] == 'hello there' and payload['input'] == "
        "[{'role': 'user', 'content': 'hello there'}] and payload['config'] == "
        "{'id': 'greets', 'word': '$(touch pwned)', 'limit': 3}\n"
        "print(json.dumps({'score': 1 if ok else 0, 'reason': json.dumps(payload['config'])}))"
    ))  # fmt: skip
    path = _write(tmp_path, fake_llm, (
        f"      - type: script\n        id: greets\n        command: [{sys.executable}, g.py]\n"
        "        word: $(touch pwned)\n        config: {limit: 3}\n"
    ))  # fmt: skip
    case = _cases(accord("eval", path, "--format", "json", "--cache", "off"))["a"]
    assert case["evaluations"][0]["score"] == 1.0, case
    assert not (tmp_path / "pwned").exists()


def test_a_script_grader_that_cannot_start_is_an_error_not_a_score(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    (tmp_path / "g.py").write_text("")
    path = _write(tmp_path, fake_llm, (
        "      - type: script\n        command: [no-such-program-here, g.py]\n"
    ))  # fmt: skip
    trust_project(path.parent)  # inline code, or a program of the PATH: the test's own file
    run = accord("eval", path, "--format", "json", "--cache", "off")
    found = run.suite()["cases"][0]["evaluations"][0]
    assert found["score"] is None and "no-such-program-here" in found["error"], found


def _refused(run: Run, *parts: str) -> None:
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    for part in parts:
        assert part in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("entry", "parts"),
    [
        ("command: python3 g.py | tee x", ["s.eval.yaml:8", "needs a shell", "as a list"]),
        ("command: DEBUG=1 python3 g.py", ["s.eval.yaml:8", "needs a shell"]),
        ("command: 'python3 g.py # note'", ["s.eval.yaml:8", "needs a shell"]),
        ("command: [../outside.py]", ["s.eval.yaml:8", "outside the project"]),
        ("command: [python3, ../outside.py]", ["s.eval.yaml:8", "outside the project"]),
        ("command: [python3, missing.py]", ["s.eval.yaml:8", "missing.py", "does not exist"]),
        ("script: [python3, g.py]", ["s.eval.yaml:8", "'command'"]),
        # grader-parser.ts reads `provider` as true or {max_calls: N >= 0}, and ignores any
        # other value with a warning (no proxy): refused, naming the forms
        (
            "command: [python3, g.py]\n        provider: llm",
            ["s.eval.yaml:8", "'provider' is `true` or `{max_calls: N}`"],
        ),
        (
            "command: [python3, g.py]\n        provider: {max_calls: -1}",
            ["s.eval.yaml:8", "provider.max_calls is a number of calls, 0 or more"],
        ),
        (
            "command: [python3, g.py]\n        provider: {max_call: 2}",
            ["s.eval.yaml:8", "unknown key 'max_call'"],
        ),
    ],
)
def test_a_script_grader_accord_cannot_run_as_written_is_refused_at_its_line(
    tmp_path: Path, fake_llm: FakeOpenAI, entry: str, parts: list[str]
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (tmp_path / "outside.py").write_text("print('{}')")
    (project / "g.py").write_text("")
    path = _write(project, fake_llm, f"      - type: script\n        {entry}\n")
    _refused(accord("eval", path), *parts)


def test_a_string_command_without_shell_syntax_runs_as_its_words(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    _grader(tmp_path, "g.py", "print(json.dumps({'score': 0.9}))")
    path = _write(
        tmp_path, fake_llm, f"      - type: script\n        command: {sys.executable} g.py\n"
    )
    case = _cases(accord("eval", path, "--format", "json", "--cache", "off"))["a"]
    assert case["evaluations"][0]["score"] == 0.9, case


# --- llm-rubric with prompt: -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "score", "passed"),
    [
        # llm-grader.ts: a reply with pass/reason/checks is promptfoo's grading result
        # (normalizePromptfooGradingResult): `pass` is the verdict; without it every check
        # must pass; without `score` the checks' mean (a check's score, else its pass)
        ('{"pass": false, "score": 0.9, "reason": "close"}', 0.9, False),
        ('{"reason": "r", "checks": [{"pass": true}, {"pass": false, "score": 0.4}]}', 0.7, False),
        # otherwise freeform: a numeric score (clamped), the verdict score >= 0.8
        ('```json\n{"score": 1, "assertions": []}\n```', 1.0, True),
        ('Here: {"score": 0.5}', 0.5, False),
    ],
)
def test_an_llm_rubric_with_its_own_prompt_is_scored_from_agentvs_reply_forms(
    tmp_path: Path, fake_llm: FakeOpenAI, reply: str, score: float, passed: bool
) -> None:
    (tmp_path / "grader.md").write_text(
        "Q: {{ input }}\nA: {{output}}\nRef: {{ expected_output }}\nKeep {{ unknown_name }}"
    )
    fake_llm.responder = lambda body: Reply(text=reply)
    path = _write(
        tmp_path,
        fake_llm,
        "      - type: llm-rubric\n        value: greets\n        prompt: file://grader.md\n",
        answer="hello there, expected_output: hi",
    )
    case = _cases(accord("eval", path, "--format", "json", "--cache", "off"))["a"]
    found = case["evaluations"][0]
    assert (found["score"], found["passed"]) == (pytest.approx(score), passed), found
    asked = _user_text(fake_llm.requests[-1])
    # AgentV 4's reference answer is empty (vars.expected_output is a var only)
    assert asked == "Q: hello there\nA: hello there\nRef: \nKeep {{ unknown_name }}"


def test_an_unreadable_reply_to_a_grader_prompt_is_an_error_never_a_score(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.responder = lambda body: Reply(text="Looks good to me.")
    path = _write(
        tmp_path, fake_llm, "      - type: llm-rubric\n        prompt: 'Grade {{ output }}'\n"
    )
    run = accord("eval", path, "--format", "json", "--cache", "off")
    found = run.suite()["cases"][0]["evaluations"][0]
    assert found["score"] is None and "Looks good to me." in found["error"], found
    # llm-grader.ts runWithRetry: three asks, then one with the repair prompt
    assert len(fake_llm.requests) == 4
    assert "Repair it to satisfy the schema" in _user_text(fake_llm.requests[-1])


def test_a_grader_prompt_file_outside_the_project_is_refused(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (tmp_path / "g.md").write_text("x")
    path = _write(
        project,
        fake_llm,
        "      - type: llm-rubric\n        value: v\n        prompt: file://../g.md\n",
    )
    _refused(accord("eval", path), "s.eval.yaml:8", "outside the project")


def test_an_id_on_an_assertion_is_accepted_and_scores_the_same(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    path = _write(tmp_path, fake_llm, (
        "      - type: contains\n        id: SAYS_HELLO\n        value: hello\n"
        "      - type: is-json\n        id: IS_JSON\n"
    ))  # fmt: skip
    case = _cases(accord("eval", path, "--format", "json", "--cache", "off"))["a"]
    assert [e["score"] for e in case["evaluations"]] == [1.0, 0.0], case
    assert case["score"] == 0.5


# --- field-accuracy and execution-metrics ------------------------------------------------------


def test_field_accuracy_finds_no_reference_in_a_tests_vars_as_agentv(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    """AgentV 4 gives a test's graders no expected output (yaml-parser.ts line 313 refuses a
    test's own `expected_output`; EvalTest.expected_output is built from that key alone,
    lines 1642 and 1705-1714), so field-accuracy has no expected object whatever the
    `expected_output` var holds (field-accuracy.ts lines 97-106): 0, with AgentV's reason.
    The same reference in a conversation turn is compared field by field."""
    (tmp_path / "config.yml").write_text("")
    fields = (
        "[{path: invoice_number, match: exact, weight: 2},"
        " {path: total, match: numeric_tolerance, tolerance: 0.5},"
        " {path: date, match: date, formats: [YYYY-MM-DD, DD-MMM-YYYY]},"
        " {path: po, match: exact, required: false}]"
    )
    answer = '{"invoice_number": "INV-1", "total": 101, "date": "2024-01-15"}'
    reference = "{invoice_number: INV-1, total: 100, date: 15-Jan-2024, po: P1}"
    path = tmp_path / "s.eval.yaml"
    path.write_text(f"""\
name: t
providers: [echo]
prompts: ['{{{{ input }}}}']
tests:
  - id: a
    vars:
      input: '{answer}'
      expected_output: {reference}
    assert:
      - type: field-accuracy
        fields: {fields}
  - id: b
    mode: conversation
    vars: {{input: start}}
    turns:
      - input: '{answer}'
        expected_output: {{role: assistant, content: {reference}}}
        assert:
          - type: field-accuracy
            fields: {fields}
""")
    cases = _cases(accord("eval", path, "--format", "json", "--cache", "off"))
    found = cases["a"]["evaluations"][0]
    assert (found["score"], found["passed"]) == (0.0, False), found
    assert found["reason"] == "No expected data found in expected_output", found
    # field-accuracy.ts aggregateResults: the weighted mean of the fields (invoice 1 at
    # weight 2, total 0, date 1; a missing optional field weighs 0): (2 + 0 + 1) / 4
    turn = cases["b"]["evaluations"][0]["metadata"]["components"][0]
    assert turn["score"] == 0.75, cases["b"]


def test_execution_metrics_counts_the_limits_met_as_agentv(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    (tmp_path / "config.yml").write_text("")
    path = tmp_path / "s.eval.yaml"
    path.write_text(
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests:\n  - id: a\n"
        "    vars: {input: hi}\n    assert:\n      - type: execution-metrics\n"
        "        max_tokens: 10\n        max_duration_ms: 600000\n"
    )
    case = _cases(accord("eval", path, "--format", "json", "--cache", "off"))["a"]
    found = case["evaluations"][0]
    # execution-metrics.ts: the share of limits met; echo reports no token usage (a miss),
    # its time is within the limit (a hit)
    assert (found["score"], found["passed"]) == (0.5, False), found
    assert "tokens data not available" in found["reason"], found


def test_a_field_accuracy_without_fields_is_refused_at_its_line(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    path = _write(tmp_path, fake_llm, "      - type: field-accuracy\n        fields: []\n")
    _refused(accord("eval", path), "s.eval.yaml:8", "field-accuracy")
