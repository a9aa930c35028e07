"""AgentV eval files beyond the corpus: rubrics, trials, workspace scripts, code judges,
required and negated evaluators, and every kind of bad input (file:line, exit 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import trusted
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.agentv.v2.conftest import judge_with, run, write


def test_checklist_rubric_required_item_fails_the_case(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_with(
        fake_llm,
        {
            "checks": [
                {"id": "rubric-1", "satisfied": True, "reasoning": "says 42"},
                {"id": "tone", "satisfied": False, "reasoning": "curt"},
                {"id": "cites", "satisfied": False, "reasoning": "no source"},
            ],
            "overall_reasoning": "mostly right",
        },
    )
    file = write(
        folder,
        """tests:
  - id: answer
    criteria: Gives 42
    input: What is six times seven?
    rubrics:
      - Says 42
      - {id: tone, outcome: Is friendly, weight: 2, required: false}
      - {id: cites, outcome: Cites a source, required: true}
""",
    )
    code, found, _ = run(folder, file)
    record = found["answer"]
    assert record["score"] == pytest.approx(1 / 4)  # 1 of weights 1 + 2 + 1
    assert record["verdict"] == "fail"
    assert record["evaluator_results"][0]["type"] == "rubric"
    assert code == 1


def test_required_rubric_fails_even_a_high_score(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_with(
        fake_llm,
        {
            "checks": [
                {"id": "a", "satisfied": True, "reasoning": ""},
                {"id": "b", "satisfied": True, "reasoning": ""},
                {"id": "c", "satisfied": True, "reasoning": ""},
                {"id": "must", "satisfied": False, "reasoning": "missing"},
            ],
            "overall_reasoning": "",
        },
    )
    file = write(
        folder,
        """tests:
  - id: answer
    criteria: Gives 42
    input: What is six times seven?
    rubrics:
      - {id: a, outcome: A, weight: 3}
      - {id: b, outcome: B, weight: 3}
      - {id: c, outcome: C, weight: 3}
      - {id: must, outcome: Must, weight: 1, required: true}
""",
    )
    code, found, _ = run(folder, file, "--format", "json")
    assert found["answer"]["score"] == pytest.approx(0.9)
    assert found["answer"]["verdict"] == "fail"
    assert code == 1


def test_score_ranges_rubric(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_with(
        fake_llm,
        {
            "checks": [{"id": "depth", "score": 6, "reasoning": ""},
                       {"id": "accuracy", "score": 9, "reasoning": ""}],
            "overall_reasoning": "",
        },
    )  # fmt: skip
    file = write(
        folder,
        """tests:
  - id: ranges
    criteria: Explains well
    input: Explain
    rubrics:
      - id: depth
        weight: 1
        score_ranges: {0: Shallow, 4: Some depth, 8: Deep}
      - id: accuracy
        weight: 3
        required_min_score: 7
        score_ranges:
          - {score_range: [0, 6], outcome: Errors}
          - {score_range: [7, 10], outcome: Accurate}
""",
    )
    _code, found, _ = run(folder, file)
    assert found["ranges"]["score"] == pytest.approx((0.6 + 3 * 0.9) / 4)
    assert found["ranges"]["verdict"] == "pass"


def test_required_and_negated_evaluators(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_with(fake_llm, {"score": 1, "hits": [], "misses": [], "reasoning": ""})
    file = write(
        folder,
        """execution:
  evaluators:
    - {name: says-42, type: contains, value: "42"}
    - {name: no-apology, type: icontains, value: SORRY, negate: true}
tests:
  - id: plain
    criteria: Gives 42
    input: What is six times seven?
  - id: strict
    criteria: Gives 43
    input: What is six times seven?
    execution:
      evaluators:
        - {name: judge, type: llm_judge, weight: 9}
        - {name: says-43, type: contains, value: "43", required: true}
""",
    )
    code, found, _ = run(folder, file)
    assert found["plain"]["score"] == 1.0
    assert found["plain"]["evaluator_results"][1]["hits"] == ["does not contain 'SORRY'"]
    strict = found["strict"]
    assert strict["score"] == pytest.approx(0.9)  # 9 x 1.0 + 1 x 0.0 over 10
    assert strict["verdict"] == "fail"  # a required evaluator below 0.8
    assert code == 1


def test_trials_pass_at_k_stop_at_the_first_pass(folder: Path, fake_llm: FakeOpenAI) -> None:
    scores = {"answer 1": 0.3, "answer 2": 0.9, "answer 3": 1.0}
    judge_with(fake_llm, lambda prompt: {"score": next(v for k, v in scores.items() if k in prompt),
                                         "hits": [], "misses": []}, numbered=True)  # fmt: skip
    file = write(
        folder,
        """execution:
  trials: {count: 3, strategy: pass_at_k}
tests:
  - {id: t, criteria: Gives 42, input: What is six times seven}
""",
    )
    code, found, _ = run(folder, file, "--max-concurrency", "1")
    record = found["t"]
    assert [t["score"] for t in record["trials"]] == [0.3, 0.9]  # the third never ran
    # AgentV trials.ts aggregatePassAtK: the best trial's score; the test passes (exit 0)
    # though trial 1 failed, as AgentV counts tests, not trial runs
    assert record["score"] == 0.9 and record["aggregation"]["strategy"] == "pass_at_k"
    assert record["verdict"] == "pass"
    assert code == 0


def test_trials_pass_at_k_run_the_next_trial_after_one_that_errored(
    folder: Path, fake_llm: FakeOpenAI
) -> None:
    """AgentV 4a86b769 orchestrator.ts runEvalCaseWithTrials: a trial whose target fails is
    scored 0 (scoreToVerdict: 'fail') and the loop goes on; it breaks only once a trial
    passes (`pass_at_k` early exit). Trial 1's model answers HTTP 400 (no retry), trial 2
    answers and passes: 2 trials, the best scores 1.0, the test passes."""
    answered = iter([Reply(status=400, text="bad request"), Reply(text="The answer is 42.")])

    def respond(request: dict[str, Any]) -> Reply:
        system = request["messages"][0]
        if system["role"] == "system" and "JSON object" in system["content"]:
            return Reply(text=json.dumps({"score": 1.0, "hits": [], "misses": []}))
        return next(answered)

    fake_llm.responder = respond
    file = write(
        folder,
        """execution:
  trials: {count: 3, strategy: pass_at_k}
tests:
  - {id: t, criteria: Gives 42, input: What is six times seven}
""",
    )
    code, found, _ = run(folder, file, "--max-concurrency", "1")
    record = found["t"]
    assert [t["score"] for t in record["trials"]] == [0.0, 1.0]  # the third never ran
    assert record["score"] == 1.0 and record["verdict"] == "pass"
    assert code == 0


def test_trials_confidence_interval(folder: Path, fake_llm: FakeOpenAI) -> None:
    scores = {"answer 1": 0.8, "answer 2": 1.0, "answer 3": 0.9}
    judge_with(fake_llm, lambda prompt: {"score": next(v for k, v in scores.items() if k in prompt),
                                         "hits": [], "misses": []}, numbered=True)  # fmt: skip
    file = write(
        folder,
        """execution:
  trials: {count: 3, strategy: confidence_interval}
tests:
  - {id: t, criteria: Gives 42, input: What is six times seven}
""",
    )
    _code, found, _ = run(folder, file, "--max-concurrency", "1")
    # mean 0.9, sd 0.1, t(2) = 4.303: lower bound 0.9 - 4.303 * 0.1 / sqrt(3)
    assert found["t"]["score"] == pytest.approx(0.9 - 4.303 * 0.1 / 3**0.5)


def test_trials_confidence_interval_jsonl_renders_the_reported_score(
    folder: Path, fake_llm: FakeOpenAI
) -> None:
    """The JSONL record renders the score and verdict the run decided, the ones the terminal
    and the JSON report show, never a scoring of its own (its best trial scores 1.0)."""
    scores = {"answer 1": 0.8, "answer 2": 1.0, "answer 3": 0.9}
    judge_with(fake_llm, lambda prompt: {"score": next(v for k, v in scores.items() if k in prompt),
                                         "hits": [], "misses": []}, numbered=True)  # fmt: skip
    file = write(
        folder,
        """execution:
  trials: {count: 3, strategy: confidence_interval}
tests:
  - {id: t, criteria: Gives 42, input: What is six times seven}
""",
    )
    out = folder / "out.jsonl"
    shown = accord("eval", file, "--max-concurrency", "1", "--output", out)
    record = json.loads(out.read_text())
    lower = 0.9 - 4.303 * 0.1 / 3**0.5
    assert record["score"] == pytest.approx(lower)
    assert record["verdict"] == "borderline"
    assert f"t (run 2)  {lower:.2f}   borderline" in shown.stdout
    assert f"Mean score: {lower:.3f} (n=1)" in shown.stdout
    reported = accord("eval", file, "--max-concurrency", "1", "--output", out, "--format", "json")
    case = json.loads(reported.stdout)["suites"][0]["cases"][0]
    record = json.loads(out.read_text())
    assert case["score"] == pytest.approx(record["score"], abs=1e-4)  # the report rounds to 4
    assert case["verdict"] == record["verdict"] == "borderline"
    assert record["evaluator_results"][0]["score"] == 1.0  # the best trial's findings


def test_plain_repeats_jsonl_renders_the_best_run_as_reported(
    folder: Path, fake_llm: FakeOpenAI
) -> None:
    """`--repeat` without trials: the report lists every run, the JSONL record is the best
    run's, with the score and verdict the report gives that run."""
    scores = {"answer 1": 0.5, "answer 2": 0.9}
    judge_with(fake_llm, lambda prompt: {"score": next(v for k, v in scores.items() if k in prompt),
                                         "hits": [], "misses": []}, numbered=True)  # fmt: skip
    file = write(folder, "tests:\n  - {id: t, criteria: Gives 42, input: What is 6 times 7}\n")
    out = folder / "out.jsonl"
    reported = accord(
        "eval", file, "--repeat", "2", "--max-concurrency", "1", "--output", out,
        "--format", "json",
    )  # fmt: skip
    runs = json.loads(reported.stdout)["suites"][0]["cases"]
    assert sorted((c["score"], c["verdict"]) for c in runs) == [(0.5, "fail"), (0.9, "pass")]
    record = json.loads(out.read_text())
    assert (record["score"], record["verdict"]) == (0.9, "pass")
    assert "aggregation" not in record


def test_workspace_hooks(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_with(fake_llm, {"score": 1, "hits": [], "misses": []})
    log = folder / "hooks.log"
    hook = folder / "hook.py"
    hook.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(sys.argv[1] + ' ' + json.dumps(data) + '\\n')\n"
        "if data['case_metadata'] and data['case_metadata'].get('fail') == sys.argv[1]:\n"
        "    print('cannot check out the repo', file=sys.stderr); sys.exit(3)\n"
    )
    (folder / "in_workspace.py").write_text(
        "import json, os, sys\n"
        "data = json.load(sys.stdin)\n"
        "ok = os.environ.get('AGENTV_WORKSPACE_PATH') == data['workspace_path'] != None\n"
        "print(json.dumps({'score': 1.0 if ok else 0.0}))\n"
    )
    py = sys.executable
    file = write(
        folder,
        f"""execution:
  evaluators:
    - {{name: sees-workspace, type: code_judge, script: [{py}, ../in_workspace.py]}}
workspace:
  before_all: {{script: [{py}, {hook}, before_all]}}
  setup: {{script: [{py}, {hook}, setup]}}
  teardown: {{script: [{py}, {hook}, teardown]}}
  after_all: {{script: [{py}, {hook}, after_all]}}
tests:
  - id: good
    criteria: Gives 42
    input: What is six times seven?
    metadata: {{repo: sympy/sympy}}
  - id: bad-setup
    criteria: Gives 42
    input: What is six times seven?
    metadata: {{fail: setup}}
  - id: bad-teardown
    criteria: Gives 42
    input: What is six times seven?
    metadata: {{fail: teardown}}
""",
    )
    code, found, stderr = run(folder, file)
    assert found["good"]["verdict"] == "pass"
    assert found["good"]["evaluator_results"][0]["score"] == 1.0  # AGENTV_WORKSPACE_PATH
    assert found["bad-setup"]["verdict"] == "error"
    assert "cannot check out the repo" in found["bad-setup"]["error"]
    assert found["bad-teardown"]["verdict"] == "pass"
    assert "teardown of bad-teardown failed" in stderr and "cannot check out" in stderr
    lines = log.read_text().splitlines()
    assert lines[0].startswith("before_all ") and lines[-1].startswith("after_all ")
    setup = [json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("setup")]
    good = next(p for p in setup if p["test_id"] == "good")
    assert good["eval_case_id"] == "good" and good["case_metadata"] == {"repo": "sympy/sympy"}
    assert good["case_input"] == "What is six times seven?" and good["eval_run_id"]
    assert good["workspace_path"] and not Path(good["workspace_path"]).exists()  # cleaned up
    assert code == 1


CODE_JUDGE = """tests:
  - id: t
    criteria: Gives 42
    input: What is six times seven?
    execution:
      evaluators:
        - name: script
          type: code_judge
          script: [{py}, -c, "{code}"]
          threshold_words: 3
"""


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("import sys; print('boom', file=sys.stderr); sys.exit(4)", "exited with 4: stderr: boom"),
        ("print('no json here')", "printed no JSON object with a score"),
        ("import json; print(json.dumps(dict(score=7)))", "with a score from 0 to 1"),
    ],
)
def test_code_judge_failures_are_errors(
    folder: Path, fake_llm: FakeOpenAI, code: str, error: str
) -> None:
    file = write(folder, CODE_JUDGE.format(py=sys.executable, code=code))
    trusted(file)  # its code judge is `python -c CODE`: code written in the file
    exit_code, found, _ = run(folder, file)
    assert found["t"]["verdict"] == "error" and found["t"]["score"] is None
    assert error in found["t"]["error"]
    assert exit_code == 3  # no case produced a result


def test_code_judge_payload(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_with(fake_llm, {"score": 1, "hits": [], "misses": []})
    (folder / "judge.py").write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "ok = '42' in data['candidate_answer'] and data['config'] == {'threshold_words': 3}\n"
        "print(json.dumps({'score': 1.0 if ok else 0.0, 'hits': sorted(data),"
        " 'reasoning': data['metadata']['topic']}))\n"
    )
    file = write(
        folder,
        """tests:
  - id: t
    criteria: Gives 42
    input: What is six times seven?
    expected_output: "42"
    metadata: {topic: math}
    execution:
      evaluators:
        - {name: script, type: code_judge, script: "python3 ../judge.py", threshold_words: 3}
""",
    )
    _code, found, _ = run(folder, file)
    result = found["t"]["evaluator_results"][0]
    assert result["score"] == 1.0 and result["reasoning"] == "math"
    assert set(result["hits"]) >= {
        "question", "criteria", "candidate_answer", "reference_answer", "expected_messages",
        "input_messages", "input_files", "metadata",
    }  # fmt: skip


def test_unparseable_judge_is_an_error_after_one_retry(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_with(fake_llm, "I think it is pretty good")
    file = write(folder, "tests:\n  - {id: t, criteria: Gives 42, input: What is 6 x 7?}\n")
    code, found, _ = run(folder, file)
    assert found["t"]["verdict"] == "error"
    assert "no {score, hits, misses, reasoning} object" in found["t"]["error"]
    judged = [r for r in fake_llm.requests if "JSON object" in r["messages"][0]["content"]]
    assert len(judged) == 2
    assert code == 3


def test_judge_answering_by_tool_call(folder: Path, fake_llm: FakeOpenAI) -> None:
    def respond(request: dict[str, Any]) -> Reply:
        if request.get("tool_choice"):
            return Reply.tool("submit_evaluation", {"score": 0.7, "hits": ["h"], "misses": ["m"],
                                                     "reasoning": "r"})  # fmt: skip
        return Reply(text="The answer is 42.")

    fake_llm.responder = respond
    file = write(folder, "tests:\n  - {id: t, criteria: Gives 42, input: What is 6 x 7?}\n")
    _code, found, _ = run(folder, file)
    assert found["t"]["score"] == 0.7 and found["t"]["verdict"] == "borderline"
    assert found["t"]["hits"] == ["h"] and found["t"]["misses"] == ["m"]


def test_tool_trajectory_exact_scores_expected_positions(
    folder: Path, fake_llm: FakeOpenAI
) -> None:
    trace = {"output": "ok", "tool_calls": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
    (folder / "agent.py").write_text(f"print({json.dumps(json.dumps(trace))})\n")
    (folder / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    type: command\n"
        f"    command: [{sys.executable}, {folder / 'agent.py'}]\n"
    )
    file = write(
        folder,
        """tests:
  - id: t
    criteria: Calls a then b
    input: go
    execution:
      evaluators:
        - {name: exact, type: tool_trajectory, mode: exact, expected: [{tool: a}, {tool: b}]}
        - {name: ordered, type: tool_trajectory, mode: in_order, expected: [{tool: a}, {tool: c}]}
""",
    )
    _code, found, _ = run(folder, file)
    results = {r["name"]: r for r in found["t"]["evaluator_results"]}
    # AgentV tool-trajectory.ts evaluateExact: (sequence hits) / expected.length = 2 / 2; the
    # count mismatch is a miss line only
    assert results["exact"]["score"] == 1.0
    assert results["exact"]["misses"] == ["expected 2 tool calls, got 3"]
    assert results["ordered"]["score"] == 1.0


def test_field_accuracy(folder: Path, fake_llm: FakeOpenAI) -> None:
    answer = {"invoice": {"total": 101.0, "date": "15-JAN-2025", "vendor": "Acme"}}
    fake_llm.responder = lambda request: Reply(text=json.dumps(answer))
    file = write(
        folder,
        """tests:
  - id: t
    criteria: Extracts the invoice
    input: Extract
    expected_output:
      invoice: {total: 100, date: "2025-01-15", vendor: Acme Inc}
    execution:
      evaluators:
        - name: fields
          type: field_accuracy
          fields:
            - {path: invoice.total, match: numeric_tolerance, tolerance: 0.02, relative: true}
            - {path: invoice.date, match: date}
            - {path: invoice.vendor, match: exact, weight: 2}
""",
    )
    _code, found, _ = run(folder, file)
    assert found["t"]["score"] == pytest.approx(2 / 4)


# --- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("tests:\n  - criteria: x\n    input: y\n", ":2:", "required key 'id' is missing"),
        ("tests:\n  - id: a\n    input: y\n", ":2:", "test needs 'criteria'"),
        (
            "tests:\n  - {id: a, criteria: x, input: y}\n  - {id: a, criteria: x, input: y}\n",
            ":3:",
            "duplicate test id 'a'",
        ),
        (
            "tests:\n  - id: a\n    criteria: x\n    input: y\n    execution:\n      evaluators:\n"
            "        - {name: j, type: llm_judgee}\n",
            ":7:",
            "did you mean 'llm_judge'",
        ),
        (
            "tests:\n  - id: a\n    criteria: x\n    input: y\n    execution:\n      evaluators:\n"
            "        - {name: j, type: llm_judge, prompt: prompts/missing.md}\n",
            ":7:",
            "prompt file 'prompts/missing.md' not found",
        ),
        (
            "tests:\n  - id: a\n    criteria: x\n    input:\n      - role: user\n        content:\n"
            "          - {type: file, value: nowhere.md}\n",
            ":7:",
            "file 'nowhere.md' not found",
        ),
        (
            "tests:\n  - id: a\n    criteria: x\n    input: y\n"
            "    execution:\n      target: gpt5\n",
            ":6:",
            "unknown target 'gpt5' (targets in",
        ),
        (
            "tests:\n  - {id: a, criteria: x, input: y, rubric: [z]}\n",
            ":2:",
            "unknown key 'rubric'",
        ),
    ],
)
def test_bad_files_exit_2_at_their_line(folder: Path, text: str, where: str, message: str) -> None:
    file = write(folder, text)
    result = accord("eval", file)
    assert result.exit_code == 2, result.stderr
    assert f"dataset.yaml{where}" in result.stderr and message in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_target_on_the_command_line(folder: Path) -> None:
    file = write(folder, "tests:\n  - {id: a, criteria: x, input: y}\n")
    result = accord("eval", file, "--target", "nope")
    assert result.exit_code == 2
    assert "unknown target 'nope'" in result.stderr and "(given by --target)" in result.stderr


def test_unset_variable_is_an_error_at_the_targets_line(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKE_URL")
    file = write(folder, "tests:\n  - {id: a, criteria: x, input: y}\n")
    result = accord("eval", file)
    assert result.exit_code == 2
    assert "targets.yaml:4:" in result.stderr
    assert "${{ FAKE_URL }}, which is not set" in result.stderr


def test_dot_env_supplies_variables(
    folder: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge_with(fake_llm, {"score": 1, "hits": [], "misses": []})
    monkeypatch.delenv("FAKE_URL")
    (folder / ".env").write_text(f"FAKE_URL={fake_llm.url}\n")
    file = write(folder, "tests:\n  - {id: a, criteria: x, input: y}\n")
    code, found, _ = run(folder, file)
    assert code == 0 and found["a"]["verdict"] == "pass"


def test_cli_agent_providers_are_refused(folder: Path) -> None:
    (folder / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: claude-code\n"
    )
    file = write(folder, "tests:\n  - {id: a, criteria: x, input: y}\n")
    result = accord("eval", file)
    assert result.exit_code == 2
    assert "targets.yaml:3:" in result.stderr
    assert "provider 'claude-code' (the Claude Code CLI)" in result.stderr
    assert "provider: cli" in result.stderr


def test_legacy_expected_outcome_warns(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_with(fake_llm, {"score": 1, "hits": [], "misses": []})
    file = write(folder, "evalcases:\n  - {id: a, expected_outcome: x, input: y}\n")
    code, _found, stderr = run(folder, file)
    assert code == 0
    assert "'expected_outcome' is the old name of 'criteria'" in stderr
    assert "'evalcases' is the old name of 'tests'" in stderr


def test_latency_tokens_and_cost(folder: Path, fake_llm: FakeOpenAI) -> None:
    file = write(
        folder,
        """tests:
  - id: t
    criteria: Gives 42
    input: What is six times seven
    execution:
      evaluators:
        - {name: fast, type: latency, threshold: 60000}
        - {name: instant, type: latency, threshold: 0}
        - {name: tokens, type: token_usage, max_total: 100000, max_output: 0}
        - {name: spend, type: cost, budget: 1}
""",
    )
    judge_with(fake_llm, {"score": 1})
    _code, found, _ = run(folder, file)
    results = {r["name"]: r for r in found["t"]["evaluator_results"]}
    assert results["fast"]["score"] == 1.0 and results["instant"]["score"] == 0.0
    assert results["tokens"]["score"] == 0.0
    assert any(m.startswith("output tokens") for m in results["tokens"]["misses"])
    assert "reported no cost" in results["spend"]["error"]
