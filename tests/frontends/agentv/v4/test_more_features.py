"""AgentV 4 eval files accord used to refuse: each feature loads and scores as AgentV's
source (commit 58f316ca2) has it; the file and function each expected value comes from is
named beside it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply


def _write(root: Path, text: str, name: str = "s.eval.yaml") -> Path:
    (root / "config.yml").write_text("")
    path = root / name
    path.write_text(text)
    return path


def _cases(run: Run) -> dict[str, dict[str, Any]]:
    assert run.exit_code in (0, 1), run.stderr + run.stdout
    assert "Traceback" not in run.stderr
    return {c["id"]: c for c in run.suite()["cases"]}


# two contains of which the echoed prompt holds one: each test scores 0.5
ASSERTS = "    assert:\n      - {type: contains, value: alpha}\n"
HALF = ASSERTS + "      - {type: contains, value: zeta}\n"


def test_tests_of_one_file_pass_each_at_its_own_threshold(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests:\n"
        "  - id: low\n    execution: {threshold: 0.5}\n    vars: {input: alpha}\n" + HALF +
        "  - id: high\n    execution: {threshold: 0.6}\n    vars: {input: alpha}\n" + HALF +
        "  - id: zero\n    run: {threshold: 0}\n    vars: {input: alpha}\n" + HALF +
        "  - id: run-wins\n    execution: {threshold: 0.4}\n    run: {threshold: 0.6}\n"
        "    vars: {input: alpha}\n" + HALF +
        "  - id: out-of-range\n    execution: {threshold: 7}\n    vars: {input: alpha}\n" + HALF +
        "  - id: own-key\n    threshold: 0.1\n    vars: {input: alpha}\n" + HALF +
        "  - id: none\n    vars: {input: alpha}\n" + HALF
    ))  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    cases = _cases(run)
    assert {k: (c["score"], c["status"]) for k, c in cases.items()} == {
        # yaml-parser.ts: caseThreshold is execution.threshold when a number in [0, 1]; the
        # test's `run` (normalizeRunOverride) merged over it (mergeRunOverrides: run wins);
        # run-eval.ts resolveEffectiveRunPolicy: cli ?? run ?? test ?? suite default;
        # orchestrator.ts classifyQualityStatus: score >= threshold passes
        "low": (0.5, "passed"),
        "high": (0.5, "failed"),
        # `??` keeps a 0: every score reaches it
        "zero": (0.5, "passed"),
        "run-wins": (0.5, "failed"),
        # out of [0, 1]: ignored; a test's own top-level `threshold` is never read
        "out-of-range": (0.5, "failed"),
        "own-key": (0.5, "failed"),
        # no threshold anywhere: DEFAULT_THRESHOLD 0.8 (classifyQualityStatus's default)
        "none": (0.5, "failed"),
    }
    # neither is silent: a warning names each line
    assert "s.eval.yaml:31: execution.threshold 7 is not a number from 0 to 1" in run.stderr
    assert "s.eval.yaml:37: a test's own 'threshold' is not read by AgentV" in run.stderr


@pytest.mark.parametrize(
    ("run_", "message"),
    [
        ("{threshold: 2}", "run.threshold is a number from 0 to 1"),
        ("{retries: 2}", "unknown key 'retries' in a test's run"),
        ("{repeat: 2}", "run.repeat (this test's own repeat) is not supported"),
        ("{budget_usd: 1}", "run.budget_usd (this test's own budget) is not"),
    ],
)
def test_a_run_accord_cannot_honour_is_refused_at_its_line(
    tmp_path: Path, run_: str, message: str
) -> None:
    # experiment.ts normalizeExperimentRunOverride throws on an unknown key and on a
    # threshold out of [0, 1]; repeat, timeout_seconds and budget_usd of one test AgentV
    # runs in a group of its own, which accord does not
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests:\n"
        f"  - id: one\n    run: {run_}\n    vars: {{input: alpha}}\n" + HALF
    ))  # fmt: skip
    run = accord("eval", path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "s.eval.yaml:6:" in run.stderr and message in run.stderr, run.stderr


def test_a_tests_execution_workspace_or_unknown_key_is_refused(tmp_path: Path) -> None:
    # yaml-parser.ts: execution.workspace "has been removed from eval YAML"; a key out of
    # KNOWN_TEST_EXECUTION_FIELDS "is not supported"
    for execution in ("{workspace: w}", "{retries: 2}"):
        path = _write(tmp_path, (
            "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests:\n"
            f"  - id: one\n    execution: {execution}\n    vars: {{input: alpha}}\n" + HALF
        ))  # fmt: skip
        run = accord("eval", path)
        assert run.exit_code == 2 and "Traceback" not in run.stderr
        assert "s.eval.yaml:6:" in run.stderr and "of a test's execution is not" in run.stderr


def test_a_csv_rows_threshold_column_is_its_execution_threshold(tmp_path: Path) -> None:
    # case-file-loader.ts: a row's __threshold becomes its execution.threshold
    (tmp_path / "t.csv").write_text(
        "input,__expected1,__expected2,__threshold\n"
        "alpha,contains: alpha,contains: zeta,0.5\n"
        "alpha,contains: alpha,contains: zeta,\n"
    )
    path = _write(tmp_path, "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\n"
                  "tests: file://t.csv\n")  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    cases = _cases(run)
    assert [(c["score"], c["status"]) for c in cases.values()] == [
        (0.5, "passed"),  # at its 0.5
        (0.5, "failed"),  # at the default 0.8
    ]
    assert "not read by AgentV" not in run.stderr


def test_default_test_threshold_is_the_bar_of_tests_without_their_own(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\n"
        "threshold: 0.9\ndefault_test:\n  threshold: 0.4\ntests:\n"
        "  - id: own\n    execution: {threshold: 0.9}\n    vars: {input: alpha}\n" + HALF +
        "  - id: inherited\n    vars: {input: alpha}\n" + HALF
    ))  # fmt: skip
    cases = _cases(accord("eval", path, "--format", "json", "--cache", "off"))
    # run-eval.ts: suiteDefaultThreshold = suite.defaultTest?.threshold ?? suite.threshold,
    # the default of resolveEffectiveRunPolicy behind the test's own
    assert {k: c["status"] for k, c in cases.items()} == {"own": "failed", "inherited": "passed"}


def test_a_default_test_file_gives_its_vars_threshold_and_asserts(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "base.yaml").write_text(
        "threshold: 0.5\nvars: {suffix: alpha}\nassert:\n  - {type: contains, value: zeta}\n"
    )
    (tmp_path / "evals").mkdir()
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }} {{ suffix }}']\n"
        "default_test: file://shared/base.yaml\ntests:\n"
        "  - id: one\n    vars: {input: x}\n" + ASSERTS
    ), "evals/s.eval.yaml")  # fmt: skip
    cases = _cases(accord("eval", path, "--format", "json", "--cache", "off"))
    # yaml-parser.ts loadDefaultTestFile, found from the eval file's folder upwards
    # (file-resolver.ts buildSearchRoots: evals/, then the root); its vars fill the prompt
    # (readDefaultTestVars), its assert runs after the test's own (combineInheritedAssertions),
    # its threshold is the bar (extractDefaultTestThreshold): alpha found, zeta not: 0.5 passes
    assert cases["one"]["output"] == "x alpha"
    assert (cases["one"]["score"], cases["one"]["status"]) == (0.5, "passed")


def test_a_default_test_file_that_is_missing_or_has_a_description_is_refused(
    tmp_path: Path,
) -> None:
    head = "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\n"
    tail = "tests:\n  - id: one\n    vars: {input: x}\n" + ASSERTS
    path = _write(tmp_path, head + "default_test: file://nope.yaml\n" + tail)
    run = accord("eval", path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "s.eval.yaml:4" in run.stderr and "default_test file not found: nope.yaml" in run.stderr
    # loadDefaultTestFile: "default_test file must not define description"
    (tmp_path / "d.yaml").write_text("threshold: 0.5\ndescription: no\n")
    path.write_text(head + "default_test: file://d.yaml\n" + tail)
    run = accord("eval", path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "d.yaml:2" in run.stderr and "must not define description" in run.stderr


def test_a_default_test_rubric_prompt_loads_and_the_judge_gets_agentvs_default_prompt(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    (tmp_path / "base.yaml").write_text("options:\n  rubric_prompt: 'MY OWN PROMPT {{ output }}'\n")
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\n"
        "default_test: file://base.yaml\ntests:\n"
        "  - id: one\n    vars: {input: hello}\n    assert:\n      - Greets the reader\n"
    ))  # fmt: skip
    (tmp_path / "config.yml").write_text(
        fake_model_config(fake_llm) + "defaults:\n  judge_model: fake\n"
    )

    def judge(body: dict[str, Any]) -> Reply:
        # AgentV's checklist reply: every rubric the judge is shown is satisfied
        asked = "\n".join(str(m.get("content")) for m in body["messages"])
        ids = re.findall(r"^- \[([\w-]+)\]", asked, re.MULTILINE)
        checks = [{"id": i, "satisfied": True, "reasoning": "r"} for i in ids]
        return Reply(text=json.dumps({"checks": checks, "overall_reasoning": "r"}))

    fake_llm.responder = judge
    case = _cases(accord("eval", path, "--format", "json", "--cache", "off"))["one"]
    assert case["status"] == "passed", json.dumps(case)
    # config-loader.ts extractDefaultTestRubricPrompt keeps it on suite.defaultTest
    # (yaml-parser.ts buildEvalSuiteResult) and no grader of 58f316ca2 reads it: the judge
    # is asked with the default grader prompt
    asked = "\n".join(str(m.get("content")) for m in fake_llm.requests[-1]["messages"])
    assert "MY OWN PROMPT" not in asked and "Greets the reader" in asked


def test_prompts_written_as_file_or_prompt_are_the_files_text_and_the_text(
    tmp_path: Path,
) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "ask.txt").write_text("Answer for {{ who }}:\r\n{{ q }}\r\n")
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts:\n"
        "  - {id: from-file, label: File, file: ./prompts/ask.txt}\n"
        "  - {id: terse, prompt: 'In one line, {{ who }}: {{ q }}'}\n"
        "default_test:\n  vars: {who: users}\ntests:\n"
        "  - id: one\n    vars: {q: why?}\n    assert:\n      - {type: contains, value: why?}\n"
    ))  # fmt: skip
    cases = _cases(accord("eval", path, "--format", "json", "--cache", "off"))
    # yaml-parser.ts parsePromptDefinition: `file` is the file's text (readPromptFile makes
    # CRLF LF), `prompt` the text; expandPromptMatrix renders each over the test's vars
    # with default_test's (readDefaultTestVars)
    outputs = sorted(c["output"] for c in cases.values())
    assert outputs == ["Answer for users:\nwhy?\n", "In one line, users: why?"]
    assert all(c["status"] == "passed" for c in cases.values())


def test_a_prompt_file_that_is_missing_is_refused_at_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts:\n  - {label: A, file: nope.txt}\n"
        "tests:\n  - id: one\n    vars: {q: x}\n" + ASSERTS
    ))  # fmt: skip
    run = accord("eval", path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "s.eval.yaml:4" in run.stderr and "prompt file not found: nope.txt" in run.stderr
    assert "no prompt" not in run.stderr  # the one problem, not a consequence of it


def test_defaults_other_than_provider_and_grader_change_nothing(tmp_path: Path) -> None:
    head = "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\n"
    tail = "tests:\n  - id: one\n    vars: {input: alpha}\n" + ASSERTS
    path = _write(tmp_path, head + "defaults:\n  system_message: Be brief.\n" + tail)
    cases = _cases(accord("eval", path, "--format", "json", "--cache", "off"))
    # yaml-parser.ts extractSuiteDefaults reads defaults.provider and defaults.grader only:
    # the system message reaches nothing (the echoed prompt is the test's input alone)
    assert (cases["one"]["output"], cases["one"]["status"]) == ("alpha", "passed")
    path.write_text(head + "defaults:\n  grader: judge\n" + tail)
    run = accord("eval", path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "s.eval.yaml:5" in run.stderr and "defaults.grader" in run.stderr


# a custom assertion as AgentV's SDK runtime answers (sdk/src/assertion.ts runAssertion,
# normalizeScore): the output's word count against 3, as JSON on stdout
WORDS = """\
import { readFileSync } from 'node:fs';
const input = JSON.parse(readFileSync(0, 'utf8'));
const words = String(input.output ?? '').trim().split(/\\s+/).filter(Boolean).length;
const pass = words >= 3;
console.log(JSON.stringify({pass, score: pass ? 1 : words / 4, reason: `${words} words`,
  checks: []}));
"""


def test_a_custom_assertion_type_runs_the_script_of_its_name_with_bun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts = tmp_path / ".agentv" / "assertions"
    scripts.mkdir(parents=True)
    (scripts / "word-floor.mjs").write_text(WORDS)
    # bun is not needed to show what accord runs: a stand-in that runs `bun run FILE` on node
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "bun").write_text('#!/bin/sh\n[ "$1" = run ] && shift\nexec node "$@"\n')
    (tools / "bun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    (tmp_path / "evals").mkdir()
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests:\n"
        "  - id: long\n    vars: {input: one two three four}\n"
        "    assert:\n      - type: word-floor\n        weight: 2\n"
        "      - {type: contains, value: zeta}\n"
        "  - id: short\n    vars: {input: one}\n    assert:\n      - type: word-floor\n"
    ), "evals/s.eval.yaml")  # fmt: skip
    cases = _cases(accord("eval", path, "--format", "json", "--cache", "off"))
    # registry/assertion-discovery.ts discoverAssertions: a type AgentV does not define
    # (types.ts isGraderKind) is `.agentv/assertions/TYPE.*` from the eval file's folder
    # upwards, run as a ScriptGrader with `bun run FILE`, named by its type
    # (grader-parser.ts); the test's score is the weighted mean: (2 * 1 + 0) / 3
    long = cases["long"]
    assert [e["name"] for e in long["evaluations"]] == ["word-floor", "contains"]
    assert long["score"] == pytest.approx(2 / 3, abs=1e-4) and long["status"] == "failed"
    assert (cases["short"]["score"], cases["short"]["status"]) == (0.25, "failed")


def test_a_type_with_no_script_of_its_name_is_still_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests:\n"
        "  - id: one\n    vars: {input: x}\n    assert:\n      - type: word-floor\n"
    ))  # fmt: skip
    run = accord("eval", path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "s.eval.yaml:8" in run.stderr and "'word-floor' is not supported" in run.stderr


def test_a_not_prefix_agentv_does_not_read_is_refused_and_negate_scores_as_agentv(
    tmp_path: Path,
) -> None:
    """grader-parser.ts parseGraders reads `not-X` as X inverted only for the trajectory
    checks (TRAJECTORY_GRADER_TYPES) and registers `not-skill-used`; `not-contains` is looked
    up as a type of its own, which grader-registry.ts does not know ("Unknown grader type":
    the test scores 0). accord refuses it at its line rather than score it otherwise;
    `negate: true` (GraderConfig.negate) inverts any check."""
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests:\n"
        "  - id: one\n    vars: {input: alpha}\n    assert:\n      - type: not-contains\n"
        "        value: zeta\n"
    ))  # fmt: skip
    run = accord("eval", path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "s.eval.yaml:8" in run.stderr and "no assertion type 'not-contains'" in run.stderr
    assert "'type: contains' with 'negate: true'" in run.stderr

    path.write_text(path.read_text().replace("type: not-contains", "type: contains\n"
                                             "        negate: true"))  # fmt: skip
    cases = _cases(accord("eval", path, "--format", "json", "--cache", "off"))
    assert (cases["one"]["score"], cases["one"]["status"]) == (1.0, "passed")


def test_a_budget_counts_what_a_python_provider_reports_it_cost(tmp_path: Path) -> None:
    # a Python provider's `cost` (promptfoo's ProviderResponse.cost) is the answer's cost;
    # one at a time, 0.4 each: three tests spend 1.2 >= 1, the fourth is not run
    # (orchestrator.ts dispatchTest, RunBudgetTracker.isExceeded; the figures toFixed(4))
    (tmp_path / "priced.py").write_text(
        "def call_api(prompt, options, context):\n    return {'output': prompt, 'cost': 0.4}\n"
    )
    tests = "".join(f"  - id: t{n}\n    vars: {{input: alpha}}\n" + ASSERTS for n in range(1, 5))
    path = _write(tmp_path, (
        "name: t\nproviders: ['python:priced.py']\nprompts: ['{{ input }}']\n"
        "evaluate_options:\n  budget_usd: 1\n  max_concurrency: 1\ntests:\n" + tests
    ))  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    cases = _cases(run)
    assert {k: (c["status"], c["error"]) for k, c in cases.items()} == {
        "t1": ("passed", None),
        "t2": ("passed", None),
        "t3": ("passed", None),
        "t4": ("error", "Run budget exceeded ($1.2000 / $1.0000)"),
    }
    assert run.exit_code == 1  # an errored case, by accord's exit codes


def test_a_promptfoo_cost_assertion_reads_a_python_providers_cost(tmp_path: Path) -> None:
    # promptfoo's cost assertion (assertions/cost.ts): the provider's cost at most threshold
    (tmp_path / "priced.py").write_text(
        "def call_api(prompt, options, context):\n    return {'output': prompt, 'cost': 0.02}\n"
    )
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['{{ input }}']\nproviders: ['python:priced.py']\ntests:\n"
        "  - vars: {input: a}\n    assert: [{type: cost, threshold: 0.05}]\n"
        "  - vars: {input: b}\n    assert: [{type: cost, threshold: 0.01}]\n"
    )
    (tmp_path / "config.yml").write_text("")
    run = accord("eval", tmp_path / "promptfooconfig.yaml", "--format", "json", "--cache", "off")
    cases = _cases(run)
    assert [c["status"] for c in cases.values()] == ["passed", "failed"]


def test_an_env_value_a_test_file_reads_is_masked_in_what_accord_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test file's `{{ env.NAME }}` is filled when the file is read (case-file-loader.ts
    interpolateEnv); the value is then masked wherever accord writes it, as every value read
    from the environment is (docs/security.md), even when NAME does not look like a key."""
    monkeypatch.setenv("SHARED_DB", "postgres://u:hunter2pw@db")
    (tmp_path / "cases.jsonl").write_text(json.dumps({
        "id": "leak", "vars": {"input": "connect to {{ env.SHARED_DB }}"},
        "assert": [{"type": "contains", "value": "connect"}],
    }) + "\n")  # fmt: skip
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests: file://cases.jsonl\n"
    ))  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert _cases(run)["leak"]["status"] == "passed"
    assert "hunter2pw" not in run.stdout + run.stderr
    stored = b"".join(p.read_bytes() for p in (tmp_path / ".accord").rglob("*") if p.is_file())
    assert b"hunter2pw" not in stored


def test_a_python_cell_that_is_an_option_is_refused(tmp_path: Path) -> None:
    """A CSV `python:` cell runs `uv run python CELL` (case-file-loader.ts
    parseAssertionFromString); `python:-c CODE` would make the cell's text code: refused."""
    (tmp_path / "cases.csv").write_text('id,input,__expected\none,hi,"python:-cprint(1)"\n')
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests: file://cases.csv\n"
    ))  # fmt: skip
    run = accord("eval", path)
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "names a script file of the project" in run.stderr
