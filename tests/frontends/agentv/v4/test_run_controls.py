"""AgentV 4's run controls through AgentV itself and through `accord eval`, on one fake
OpenAI server (as test_differential.py, whose AgentV build and helpers, harness.py, these use):
a file's run budget (`evaluate_options.budget_usd`), a test's `execution.threshold` and
`run.threshold`, the ids of a test under several prompts, the file's `defaults.grader`, and
a file content part whose file is missing.

The expected values are AgentV's own results (its `index.jsonl`, and the ids its progress
lines print); where each comes from in AgentV's source (commit 58f316ca2) is said beside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.agentv.v4.harness import AGENTV, needs_agentv, settings
from tests.frontends.agentv.v4.harness import answer as harness_answer

pytestmark = [pytest.mark.reference, needs_agentv]

# gpt-4o-mini: a model both price tables know (AgentV's pi-ai registry and litellm's), at
# $0.15 per million input tokens and $0.60 per million output tokens
CATALOG = """\
- id: openai
  label: llm
  base_url: "{{ env.FAKE_URL }}"
  api_key: "{{ env.FAKE_KEY }}"
  model: gpt-4o-mini
- id: openai
  label: other-llm
  base_url: "{{ env.FAKE_URL }}"
  api_key: "{{ env.FAKE_KEY }}"
  model: gpt-4o-mini
- id: openai
  label: grader
  base_url: "{{ env.FAKE_URL }}"
  api_key: "{{ env.FAKE_KEY }}"
  model: fake-model
- id: openai
  label: strict-grader
  base_url: "{{ env.FAKE_URL }}"
  api_key: "{{ env.FAKE_KEY }}"
  model: strict-judge
"""
# the fake counts a token per 4 characters: 4000 characters are 1001 output tokens, about
# $0.0006 each answer
LONG = "4 " * 2000


def project(root: Path, suite: str) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "evals" / "suite.yaml").write_text(suite)
    settings(root, CATALOG)  # accord's judge: AgentV's `grader` of .agentv/config.yaml
    return root / "evals" / "suite.yaml"


def agentv(suite: Path) -> tuple[list[dict[str, Any]], str]:
    """`agentv eval` of the suite: its result rows and what it printed."""
    root = suite.parents[1]
    process = subprocess.Popen(
        ["node", str(AGENTV), "eval", "evals/suite.yaml", "-o", "out", "--no-cache"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = process.communicate(timeout=240)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    printed = out.decode(errors="replace")
    index = root / "out" / ".internal" / "index.jsonl"
    assert index.exists(), printed[-3000:]
    return [json.loads(line) for line in index.read_text().splitlines()], printed


def agentv_verdicts(rows: list[dict[str, Any]]) -> dict[str, tuple[float, str, str | None]]:
    """Per test: score, status in accord's words, error."""
    status = {"ok": "passed", "quality_failure": "failed", "execution_error": "error"}
    return {
        r["test_id"]: (round(r["score"], 4), status[r["execution_status"]], r.get("error"))
        for r in rows
    }


def accord_run(suite: Path) -> tuple[dict[str, dict[str, Any]], str]:
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    assert run.exit_code in (0, 1), run.stderr + run.stdout
    assert "Traceback" not in run.stderr
    return {c["id"]: c for c in json.loads(run.stdout)["suites"][0]["cases"]}, run.stderr


def answer(body: dict[str, Any]) -> Reply:
    """The fake server's answers (the `fake` fixture of conftest.py): a long answer from the
    model under test, else the differential test's."""
    if body.get("model") == "gpt-4o-mini":
        return Reply(text=LONG)
    return harness_answer(body)


BUDGET = """\
name: budget
providers: [llm]
evaluate_options:
  budget_usd: 0.001
  max_concurrency: 1
{repeat}prompts: ["{{{{ input }}}}"]
tests:
  - id: first
    assert: [{{type: contains, value: "4"}}]
    vars: {{input: What is 2+2?}}
  - id: second
    assert: [{{type: contains, value: "4"}}]
    vars: {{input: What is 3+1?}}
  - id: third
    assert: [{{type: contains, value: "4"}}]
    vars: {{input: What is 1+3?}}
  - id: fourth
    assert: [{{type: contains, value: "4"}}]
    vars: {{input: What is 0+4?}}
"""


@pytest.mark.parametrize("repeat", ["", "  repeat: 2\n"])
def test_a_spent_budget_stops_the_tests_after_it_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI, repeat: str
) -> None:
    """orchestrator.ts dispatchTest: with the file's tracker at or over budget_usd (run-eval.ts
    makes one per file from evaluate_options.budget_usd; RunBudgetTracker.isExceeded is >=)
    a test is not run: an execution error "Run budget exceeded ($SPENT / $CAP)" (toFixed(4)),
    score 0. What a test spent is its target's cost (its trials' sum), added once it is
    done. One at a time (max_concurrency 1): each answer costs about $0.0006, so two tests
    run and two do not; with `repeat: 2` the first test's two trials spend it all."""
    suite = BUDGET.format(repeat=repeat)
    rows, _printed = agentv(project(tmp_path / "agentv", suite))
    expected = agentv_verdicts(rows)
    asked = len(fake.requests)
    fake.requests.clear()
    got, _stderr = accord_run(project(tmp_path / "accord", suite))
    assert {
        k: (c["score"] if c["status"] != "error" else 0.0, c["status"], c.get("error"))
        for k, c in got.items()
    } == expected
    assert len(fake.requests) == asked  # the tests not run asked nothing, in either
    spent = [e for _s, st, e in expected.values() if st == "error"]
    if repeat:
        assert asked == 2 and spent == ["Run budget exceeded ($0.0012 / $0.0010)"] * 3
    else:
        assert asked == 2 and spent == ["Run budget exceeded ($0.0012 / $0.0010)"] * 2


ORDERED = """\
name: budget-order
providers: [llm, other-llm]
evaluate_options:
  budget_usd: 0.0025
  max_concurrency: 1
prompts: ["{{ input }}"]
tests:
  - id: a
    assert: [{type: contains, value: "4"}]
    vars: {input: What is 2+2?}
  - id: b
    execution: {threshold: 0.5}
    assert: [{type: contains, value: "4"}]
    vars: {input: What is 3+1?}
  - id: c
    assert: [{type: contains, value: "4"}]
    vars: {input: What is 1+3?}
"""


def test_a_budget_stops_the_tests_agentv_would_start_last(tmp_path: Path, fake: FakeOpenAI) -> None:
    """One at a time, AgentV starts a file's tests provider by provider (run-eval.ts: the
    providers share max_concurrency), and a provider's tests grouped by their bar
    (groupTestsByRunPolicy: `b`'s execution.threshold makes a group of its own, run after
    `a` and `c`). Each answer costs about $0.0006: five run, and the sixth AgentV would
    start (other-llm's `b`) is the one stopped."""
    rows, _printed = agentv(project(tmp_path / "agentv", ORDERED))
    expected = {(r["test_id"], r["target"]): (r["execution_status"], r.get("error")) for r in rows}
    got, _stderr = accord_run(project(tmp_path / "accord", ORDERED))
    status = {"passed": "ok", "failed": "quality_failure", "error": "execution_error"}
    providers = ["llm", "other-llm"]  # a case id's `.N`: its provider

    def key(case_id: str) -> tuple[str, str]:
        test, number = case_id.rsplit(".", 1)
        return test, providers[int(number) - 1]

    assert {key(k): (status[c["status"]], c.get("error")) for k, c in got.items()} == expected
    stopped = [k for k, (s, _e) in expected.items() if s == "execution_error"]
    assert stopped == [("b", "other-llm")], expected
    # listed in the order they started, as AgentV lists them
    assert [key(k) for k in got] == [(r["test_id"], r["target"]) for r in rows]


THRESHOLDS = """\
name: thresholds
providers: [llm]
threshold: 0.9
default_test:
  threshold: 0.7
prompts: ["{{ input }}"]
tests:
  - id: own-key
    threshold: 0.1
    assert: [{type: contains, value: "4"}, {type: contains, value: "zzz"}]
    vars: {input: a}
  - id: execution
    execution: {threshold: 0.4, cache: false, fail_on_error: true}
    assert: [{type: contains, value: "4"}, {type: contains, value: "zzz"}]
    vars: {input: b}
  - id: run-over-execution
    execution: {threshold: 0.4}
    run: {threshold: 0.6}
    assert: [{type: contains, value: "4"}, {type: contains, value: "zzz"}]
    vars: {input: c}
  - id: execution-out-of-range
    execution: {threshold: 7}
    assert: [{type: contains, value: "4"}, {type: contains, value: "zzz"}]
    vars: {input: d}
  - id: run-zero
    run: {threshold: 0}
    assert: [{type: contains, value: "zzz"}]
    vars: {input: e}
  - id: inherited
    assert:
      - {type: contains, value: "4"}
      - {type: contains, value: "4"}
      - {type: contains, value: "4"}
      - {type: contains, value: "zzz"}
    vars: {input: f}
"""


def test_a_tests_execution_and_run_threshold_decide_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """yaml-parser.ts: a test's bar is execution.threshold (a number in [0, 1], else
    ignored) with run.threshold over it (mergeRunOverrides); a test's own `threshold` key is
    not read, nor execution's cache and fail_on_error (KNOWN_TEST_EXECUTION_FIELDS lets them
    through); run-eval.ts resolveEffectiveRunPolicy falls back to default_test's threshold
    (over the file's)."""
    rows, _printed = agentv(project(tmp_path / "agentv", THRESHOLDS))
    expected = agentv_verdicts(rows)
    got, stderr = accord_run(project(tmp_path / "accord", THRESHOLDS))
    assert {k: (c["score"], c["status"], c.get("error")) for k, c in got.items()} == expected
    assert {k: v[1] for k, v in expected.items()} == {
        "own-key": "failed", "execution": "passed", "run-over-execution": "failed",
        "execution-out-of-range": "failed", "run-zero": "passed", "inherited": "passed",
    }  # fmt: skip
    assert "a test's own 'threshold' is not read by AgentV" in stderr
    # keys AgentV lets through and never reads: said, not refused
    assert "AgentV accepts a test's execution.cache and does not read it" in stderr


PROMPTS = """\
name: prompts
providers: [llm]
prompts:
  - "Answer briefly: {{ input }}"
  - prompt: "Answer in full ({{ input }}) é"
    label: full
  - id: "my custom/id!"
    raw: "Custom {{ input }}"
  - file://prompts/ask.txt
tests:
  - id: sum
    assert: [{type: contains, value: "4"}]
    vars: {input: What is 2+2?}
  - id: other
    assert: [{type: contains, value: "4"}]
    vars: {input: What is 3+1?}
"""


def test_a_test_under_several_prompts_has_agentvs_ids(tmp_path: Path, fake: FakeOpenAI) -> None:
    """yaml-parser.ts expandPromptMatrix: `ID__prompt_PROMPTID` when there are several
    prompts, PROMPTID from parsePromptDefinition (`prompt-HASH` of text, `string-HASH` of a
    {prompt} or {raw}, the given id, a file's path) made safe by safePromptId. AgentV prints
    each test's id as it runs it."""
    suites = []
    for side in ("agentv", "accord"):
        suite = project(tmp_path / side, PROMPTS)
        (suite.parent / "prompts").mkdir()
        (suite.parent / "prompts" / "ask.txt").write_text("Ask: {{ input }}\n")
        suites.append(suite)
    _rows, printed = agentv(suites[0])
    shown = set(re.findall(r"✅ (\S+) \| llm", printed))
    got, _stderr = accord_run(suites[1])
    assert set(got) == shown
    assert "sum__prompt_my-custom-id" in shown and "other__prompt_prompts-ask.txt" in shown
    assert len(shown) == 8 and all(c["status"] == "passed" for c in got.values())
    # the ids of the results written with -o too
    written = tmp_path / "results.json"
    run = accord("eval", suites[1], "--cache", "off", "--format", "json", "-o", written)
    assert run.exit_code == 0, run.stderr
    assert {c["id"] for c in json.loads(written.read_text())["suites"][0]["cases"]} == shown


GRADER = """\
name: grader
providers: [llm]
defaults:
  grader: strict-grader
prompts: ["{{ input }}"]
tests:
  - id: judged
    assert: [Answers with the number]
    vars: {input: What is 2+2?}
"""


def test_a_files_defaults_grader_is_the_judge_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """run-eval.ts: the eval file's defaults.grader (suite.defaults.grader) is the grader
    provider over .agentv/config.yaml's (both projects' own judge is `grader`, model
    fake-model); here `strict-grader`, whose model is strict-judge."""
    rows, _printed = agentv(project(tmp_path / "agentv", GRADER))
    expected = agentv_verdicts(rows)
    judged = [r for r in fake.requests if r.get("model") != "gpt-4o-mini"]
    fake.requests.clear()
    got, _stderr = accord_run(project(tmp_path / "accord", GRADER))
    assert {k: (c["score"], c["status"], c.get("error")) for k, c in got.items()} == expected
    ours = [r for r in fake.requests if r.get("model") != "gpt-4o-mini"]
    assert {r["model"] for r in judged} == {r["model"] for r in ours} == {"strict-judge"}
    assert [r["messages"] for r in ours] == [r["messages"] for r in judged]
    # the command line's judge wins, as AgentV's --grader-provider does
    fake.requests.clear()
    suite = tmp_path / "accord" / "evals" / "suite.yaml"
    run = accord("eval", suite, "--cache", "off", "--judge-model", "grader")
    assert run.exit_code == 0, run.stderr
    assert {r["model"] for r in fake.requests if r["model"] != "gpt-4o-mini"} == {"fake-model"}


MISSING = """\
name: missing
providers: [llm]
prompts: ["{{ input }}"]
tests:
  - id: read
    assert: [{type: contains, value: "4"}]
    vars:
      input:
        - role: user
          content:
            - {type: text, value: What is 2+2?}
            - {type: file, value: notes/gone.md}
"""


def test_a_missing_file_part_is_left_out_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """message-processor.ts processMessages: "File not found: notes/gone.md" logged, the
    part skipped; the model gets the message without it, the test runs."""
    rows, printed = agentv(project(tmp_path / "agentv", MISSING))
    expected = agentv_verdicts(rows)
    sent = [r["messages"] for r in fake.requests]
    fake.requests.clear()
    got, stderr = accord_run(project(tmp_path / "accord", MISSING))
    assert {k: (c["score"], c["status"], c.get("error")) for k, c in got.items()} == expected
    assert [r["messages"] for r in fake.requests] == sent
    assert "File not found: notes/gone.md" in printed
    assert "file content part not found: notes/gone.md" in stderr
    assert shutil.which("node")  # the comparison ran (the module skips without node)


def test_the_object_form_of_repeat_is_refused_by_both(tmp_path: Path, fake: FakeOpenAI) -> None:
    """experiment.ts readRepeat throws on anything but a number ("The repeat object shape
    has been removed"), as AgentV's showcase multi-model-benchmark writes it; accord refuses
    it at its line (exit 2), before anything runs."""
    suite = BUDGET.format(repeat="  repeat:\n    count: 2\n    strategy: pass_any\n")
    root = tmp_path / "agentv"
    path = project(root, suite)
    done = subprocess.run(
        ["node", str(AGENTV), "eval", "evals/suite.yaml", "-o", "out", "--no-cache"],
        cwd=root, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode != 0
    assert "repeat object shape has been removed" in done.stdout + done.stderr
    run = accord("eval", project(tmp_path / "accord", suite))
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "suite.yaml:6" in run.stderr and "evaluate_options.repeat is a positive" in run.stderr
    assert not fake.requests and path.exists()


def test_two_prompts_giving_a_test_one_id_are_refused_by_both(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Two prompts of one text give a test the same id; orchestrator.ts
    validateDependencyGraph errors the run ("Duplicate test ID ..."), accord refuses the
    file at the test's line before anything runs."""
    suite = (
        'name: twice\nproviders: [llm]\nprompts: ["Ask {{ input }}", "Ask {{ input }}"]\n'
        "tests:\n  - id: sum\n    assert: [{type: contains, value: '4'}]\n"
        "    vars: {input: What is 2+2?}\n"
    )
    _rows, printed = agentv(project(tmp_path / "agentv", suite))
    assert "Duplicate test ID 'sum__prompt_prompt-" in printed
    fake.requests.clear()
    run = accord("eval", project(tmp_path / "accord", suite))
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert "suite.yaml:5:" in run.stderr and "test id 'sum__prompt_prompt-" in run.stderr
    assert "Duplicate test ID" in run.stderr and not fake.requests
