"""AgentV files score as AgentV 4a86b769 scores them: each expected number is computed by
hand from the AgentV source named beside it (packages/core/src/evaluation/...)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.agentv.v2.conftest import command_target, judge_with, run, write


def by_name(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in record["evaluator_results"]}


# --- item 2: an evaluator's other keys --------------------------------------------------


def test_code_judge_other_keys_are_its_config(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_with(fake_llm, {"score": 1, "hits": [], "misses": []})
    (folder / "judge.py").write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "print(json.dumps({'score': data['config']['threshold'],"
        " 'hits': [json.dumps(data['config'], sort_keys=True)]}))\n"
    )
    file = write(
        folder,
        """tests:
  - id: t
    criteria: Gives 42
    input: What is six times seven?
    execution:
      evaluators:
        - name: script
          type: code_judge
          script: [python3, ../judge.py]
          weight: 2
          threshold: 0.8
          rules: {min_words: 3}
""",
    )
    code, found, stderr = run(folder, file)
    assert code == 0, stderr
    result = found["t"]["evaluator_results"][0]
    # evaluator-parser.ts parseEvaluators (code_judge): every key but name, type, script,
    # cwd, weight, target is `config`; the script's score is the test's
    assert json.loads(result["hits"][0]) == {"rules": {"min_words": 3}, "threshold": 0.8}
    assert result["score"] == 0.8 and found["t"]["score"] == 0.8


def test_threshold_on_another_evaluator_is_a_clear_error(folder: Path) -> None:
    file = write(
        folder,
        "tests:\n  - id: t\n    criteria: x\n    input: y\n    execution:\n      evaluators:\n"
        "        - {name: c, type: contains, value: '42', threshold: 0.8}\n",
    )
    result = accord("eval", file)
    assert result.exit_code == 2
    assert "dataset.yaml:7:" in result.stderr
    assert "'threshold' is no key of a contains evaluator" in result.stderr
    assert "ThresholdSpec" not in result.stderr and "instance of" not in result.stderr


# --- item 3: tool_trajectory ------------------------------------------------------------


def test_tool_trajectory_reads_tool_and_args_only(folder: Path, fake_llm: FakeOpenAI) -> None:
    calls = [
        {"name": "search", "arguments": {"q": "weather"}},
        {"name": "fetch", "arguments": {"id": 1}},
        {"name": "answer", "arguments": {}},
    ]
    command_target(folder, {"output": "sunny", "tool_calls": calls})
    file = write(
        folder,
        """tests:
  - id: t
    criteria: Searches then answers
    input: weather?
    execution:
      evaluators:
        - name: ordered
          type: tool_trajectory
          mode: in_order
          expected:
            - {tool: search, input: {q: weather}, output: "3 results"}
            - {tool: answer, args: {text: sunny}}
        - name: exact
          type: tool_trajectory
          mode: exact
          expected:
            - {tool: search, output: ignored}
            - {tool: fetch, args: any}
""",
    )
    code, found, stderr = run(folder, file)
    assert code in (0, 1), stderr
    results = by_name(found["t"])
    # tool-trajectory.ts evaluateInOrder: search found (1 hit); answer found at 2 but its
    # args lack `text` (a miss): 1 / 2. `input:`/`output:` are dropped by evaluator-parser.ts
    assert results["ordered"]["score"] == 0.5
    # evaluateExact: positions 0 and 1 match, the third call only notes the count: 2 / 2
    assert results["exact"]["score"] == 1.0
    assert results["exact"]["misses"] == ["expected 2 tool calls, got 3"]


# --- item 4: field_accuracy -------------------------------------------------------------

FIELDS_FILE = """tests:
  - id: t
    criteria: Extracts the invoice
    input: Extract
    expected_output:
      invoice_number: INV-1
      line_items: [{description: Widget, amount: 10}]
      supplier: {address: 1 Main St}
      net_total: 100
      gross_total: 120
    execution:
      evaluators:
        - name: fields
          type: field_accuracy
          aggregation: {aggregation}
          fields:
            - {path: invoice_number, match: exact, weight: 2}
            - {path: "line_items[0].description", match: exact}
            - {path: "line_items[0].amount", match: numeric_tolerance, tolerance: 0.5}
            - {path: notes, match: exact}
            - {path: supplier.address, match: exact, required: false, weight: 0.5}
            - {path: net_total, match: numeric_tolerance, tolerance: 0.01, relative: true,
               weight: 3}
            - {path: gross_total, match: numeric_tolerance, tolerance: 1, weight: 3}
"""


@pytest.mark.parametrize(
    ("aggregation", "score", "verdict"),
    [("weighted_average", 7 / 11, "borderline"), ("all_or_nothing", 0.0, "fail")],
)
def test_field_accuracy_as_agentv(
    folder: Path, fake_llm: FakeOpenAI, aggregation: str, score: float, verdict: str
) -> None:
    answer = {
        "invoice_number": "INV-1",
        "line_items": [{"description": "Widgets", "amount": "10.4 USD"}],
        "net_total": 100.5,
    }
    fake_llm.responder = lambda request: Reply(text=json.dumps(answer))
    file = write(folder, FIELDS_FILE.replace("{aggregation}", aggregation))
    _code, found, stderr = run(folder, file)
    # field-accuracy.ts: invoice_number 1 x 2; line_items[0].description (resolvePath splits
    # brackets) 0 x 1; amount parseFloat("10.4 USD") = 10.4 within 0.5: 1 x 1; notes has no
    # expected value: 1 x 1; supplier.address optional and missing: weight 0; net_total
    # 0.5 / 100 <= 0.01: 1 x 3; gross_total required and missing: 0 x 3 -> 7 / 11.
    # all_or_nothing: any miss is 0.
    result = found["t"]["evaluator_results"][0]
    assert result["score"] == pytest.approx(score), stderr
    assert "notes: no expected value" in result["hits"]
    assert found["t"]["verdict"] == verdict  # scoring.ts scoreToVerdict: borderline from 0.6


JS_VALUES_FILE = """tests:
  - id: t
    criteria: Extracts the record
    input: Extract
    expected_output:
      paid: true
      count: 1
      issued: 07-MAR-2025
      due: 2025-04-01
      shipped: 13/03/2025
      tags: [a, 1]
    execution:
      evaluators:
        - name: fields
          type: field_accuracy
          fields:
            - {path: paid, match: exact}
            - {path: count, match: exact}
            - {path: issued, match: date, formats: [DD-MMM-YYYY]}
            - {path: due, match: date, formats: []}
            - {path: shipped, match: date, formats: [MM/DD/YYYY]}
            - {path: tags, match: exact}
"""


def test_field_accuracy_compares_values_as_agentvs_javascript(
    folder: Path, fake_llm: FakeOpenAI
) -> None:
    answer = {
        # scoring.ts:56 deepEqual, `typeof a !== typeof b`: a miss where Python's == hits
        "paid": 1,
        "count": 1.0,  # one JavaScript number: a hit
        # field-accuracy.ts:491 parseDate tries new Date() first, whatever the formats: hit
        "issued": "2025-03-07",
        # new Date() reads it (:491); field-accuracy.ts:333 `formats ?? DEFAULT_DATE_FORMATS`
        # keeps [] as []: hit
        "due": "April 1, 2025",
        # new Date("13/03/2025") is NaN; field-accuracy.ts:509-521, US-only formats read 13
        # as a month: unparseable
        "shipped": "13/03/2025",
        "tags": ["a", True],  # deepEqual item by item: true is not 1, a miss
    }
    fake_llm.responder = lambda request: Reply(text=json.dumps(answer))
    file = write(folder, JS_VALUES_FILE)
    _code, found, stderr = run(folder, file)
    result = found["t"]["evaluator_results"][0]
    # field-accuracy.ts:226 (exact) and :358 (same day): 3 of 6 equally weighted fields hit
    # (count, issued, due)
    assert result["score"] == pytest.approx(3 / 6), stderr
    assert sorted(h.split(":")[0] for h in result["hits"]) == ["count", "due", "issued"]
    assert sorted(m.split(":")[0] for m in result["misses"]) == ["paid", "shipped", "tags"]


# --- item 7: trials -----------------------------------------------------------------------


def judge_in_turn(fake: FakeOpenAI, scores: dict[str, list[float]]) -> None:
    """The judge scores a test (by the word of its question) with its next score in turn."""
    turns = {word: iter(values) for word, values in scores.items()}

    def respond(request: dict[str, Any]) -> Reply:
        system = request["messages"][0]
        if system["role"] == "system" and "JSON object" in system["content"]:
            prompt = request["messages"][-1]["content"]
            word = next(w for w in turns if w in prompt)
            return Reply(text=json.dumps({"score": next(turns[word]), "hits": [], "misses": []}))
        return Reply(text="The answer is 42.")

    fake.responder = respond


TRIALS = """execution:
  trials: {count: 3, strategy: STRATEGY}
tests:
  - {id: a, criteria: Gives 42, input: alpha question}
  - {id: b, criteria: Gives 42, input: beta question}
"""


def test_trials_count_tests_not_runs(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_in_turn(fake_llm, {"alpha": [0.3, 0.9], "beta": [1.0]})
    file = write(folder, TRIALS.replace("STRATEGY", "pass_at_k"))
    out = folder / "summary.json"
    result = accord("eval", file, "--format", "json", "--output", out)
    assert result.exit_code == 0, result.stderr  # both tests pass under pass_at_k
    summary = json.loads(out.read_text())
    run_ = summary["suites"][0] if "suites" in summary else summary
    cases = run_["cases"]
    # orchestrator.ts runEvalCaseWithTrials + trials.ts aggregatePassAtK: a scores its best
    # trial 0.9 (the third never runs), b 1.0 after one trial; 2 tests, mean 0.95
    assert sorted((c["id"], c["score"], c["status"]) for c in cases) == [
        ("a", 0.9, "passed"), ("b", 1.0, "passed"),
    ]  # fmt: skip
    assert sum(c["score"] for c in cases) / len(cases) == pytest.approx(0.95)


def test_trials_mean_is_one_test(folder: Path, fake_llm: FakeOpenAI) -> None:
    judge_in_turn(fake_llm, {"alpha": [0.7, 1.0, 0.85], "beta": [0.5, 0.6, 0.4]})
    file = write(folder, TRIALS.replace("STRATEGY", "mean"))
    code, found, _stderr = run(folder, file)
    # trials.ts aggregateMean: a (0.7 + 1.0 + 0.85) / 3 = 0.85 passes; b 0.5 fails: exit 1
    assert found["a"]["score"] == pytest.approx(0.85) and found["a"]["verdict"] == "pass"
    assert found["b"]["score"] == pytest.approx(0.5) and found["b"]["verdict"] == "fail"
    assert len(found["a"]["trials"]) == 3 and found["a"]["aggregation"]["strategy"] == "mean"
    assert code == 1


# --- item 5: code judges ------------------------------------------------------------------

# what AgentV's SDK checks before a judge runs (packages/eval/src/schemas.ts,
# CodeJudgeInputSchema / MessageSchema / TraceSummarySchema), written out in Python
SCHEMA_JUDGE = r"""
import json, sys
data = json.load(sys.stdin)
problems = []
for key in ("expected_messages", "input_messages", "output_messages"):
    for index, message in enumerate(data[key] or []):
        content = message.get("content", "absent")
        ok = content == "absent" or isinstance(content, (str, dict)) or (
            isinstance(content, list) and all(isinstance(c, dict) for c in content))
        if not ok:
            problems.append(f"{key}[{index}].content: {content!r}")
        for call in message.get("tool_calls", []):
            if not isinstance(call.get("tool"), str):
                problems.append(f"{key}[{index}]: tool call without tool")
summary = data["trace_summary"]
for key in ("event_count", "tool_names", "tool_calls_by_name", "error_count"):
    if key not in summary:
        problems.append(f"trace_summary lacks {key}")
if problems:
    print("invalid input: " + "; ".join(problems))
    sys.exit(1)
print(json.dumps({"score": 1.0, "hits": [json.dumps(summary, sort_keys=True)]}))
"""


def test_code_judge_input_passes_agentv_schema(folder: Path, fake_llm: FakeOpenAI) -> None:
    calls = [
        {"tool": "search", "input": {"q": "x"}, "duration_ms": 40},
        {"tool": "search", "input": {"q": "y"}, "duration_ms": 60},
        {"tool": "answer", "input": {}},
    ]
    reply = {
        "output_messages": [{"role": "assistant", "content": "done", "tool_calls": calls}],
        "token_usage": {"input": 100, "output": 20},
        "cost_usd": 0.01,
    }
    command_target(folder, reply)
    (folder / "judge.py").write_text(SCHEMA_JUDGE)
    file = write(
        folder,
        """tests:
  - id: t
    criteria: Searches
    input: go
    expected_output:
      - role: assistant
        tool_calls: [{tool: search, input: {q: x}}]
    execution:
      evaluators:
        - {name: schema, type: code_judge, script: [python3, ../judge.py]}
""",
    )
    _code, found, stderr = run(folder, file)
    result = found["t"]["evaluator_results"][0]
    assert result["score"] == 1.0, (result, stderr)
    # trace.ts computeTraceSummary + mergeExecutionMetrics of this trace
    assert json.loads(result["hits"][0]) == {
        "event_count": 3, "tool_names": ["answer", "search"],
        "tool_calls_by_name": {"search": 2, "answer": 1}, "error_count": 0,
        "llm_call_count": 1, "tool_durations": {"search": [40, 60]},
        "token_usage": {"input": 100, "output": 20}, "cost_usd": 0.01,
    }  # fmt: skip


def test_code_judge_explanation_on_stdout_is_kept(folder: Path, fake_llm: FakeOpenAI) -> None:
    (folder / "judge.py").write_text(
        "print('rubric file missing: rules.md'); raise SystemExit(1)\n"
    )
    file = write(
        folder,
        "tests:\n  - id: t\n    criteria: x\n    input: y\n    execution:\n      evaluators:\n"
        "        - {name: j, type: code_judge, script: [python3, ../judge.py]}\n",
    )
    _code, found, _stderr = run(folder, file)
    assert found["t"]["verdict"] == "error"
    assert "exited with 1: stdout: rubric file missing: rules.md" in found["t"]["error"]


PROXY_JUDGE = r"""
import json, os, sys, urllib.request, urllib.error
url, token = os.environ["AGENTV_TARGET_PROXY_URL"], os.environ["AGENTV_TARGET_PROXY_TOKEN"]
assert url.startswith("http://127.0.0.1:")
def call(path, body=None, auth=token):
    request = urllib.request.Request(url + path, data=None if body is None else
        json.dumps(body).encode(), headers={"Authorization": f"Bearer {auth}",
        "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)
statuses = [call("/info", auth="wrong")[0]]
first = call("/invoke", {"question": "Is 42 right?"})
second = call("/invoke", {"question": "Again?"})
info = call("/info")[1]
statuses += [first[0], second[0]]
print(json.dumps({"score": 1.0 if first[1].get("rawText") == "proxied answer" else 0.0,
                  "hits": [json.dumps(statuses), json.dumps(info["callCount"])],
                  "misses": [second[1]["error"]]}))
"""


def test_code_judge_target_proxy_with_a_budget(folder: Path, fake_llm: FakeOpenAI) -> None:
    def respond(request: dict[str, Any]) -> Reply:
        if request["messages"][-1]["content"] == "Is 42 right?":
            return Reply(text="proxied answer")
        return Reply(text="The answer is 42.")

    fake_llm.responder = respond
    (folder / "judge.py").write_text(PROXY_JUDGE)
    file = write(
        folder,
        "tests:\n  - id: t\n    criteria: x\n    input: y\n    execution:\n      evaluators:\n"
        "        - {name: j, type: code_judge, script: [python3, ../judge.py],"
        " target: {max_calls: 1}}\n",
    )
    _code, found, stderr = run(folder, file)
    result = found["t"]["evaluator_results"][0]
    # runtime/target-proxy.ts: a wrong token is 401; the first /invoke answers (200) with
    # the judge's text as rawText; the second passes max_calls 1 (429)
    assert result["score"] == 1.0, (result, stderr)
    assert json.loads(result["hits"][0]) == [401, 200, 429]
    assert json.loads(result["hits"][1]) == 1
    assert result["misses"] == ["Max calls exceeded (limit: 1)"]


NAMED_TARGET_JUDGE = r"""
import json, os, urllib.request, urllib.error
url, token = os.environ["AGENTV_TARGET_PROXY_URL"], os.environ["AGENTV_TARGET_PROXY_TOKEN"]
def call(path, body=None):
    request = urllib.request.Request(url + path, data=None if body is None else
        json.dumps(body).encode(), headers={"Authorization": f"Bearer {token}",
        "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)
info = call("/info")[1]
named = call("/invoke", {"question": "Who are you?", "target": "gemini_base"})
canned = call("/invoke", {"question": "Anything?", "target": "canned"})
unknown = call("/invoke", {"question": "Hello?", "target": "nowhere"})
program = call("/invoke", {"question": "Ping?", "target": "echoer"})
print(json.dumps({"score": 1.0, "hits": [json.dumps(info["availableTargets"]),
                  named[1]["rawText"], canned[1]["rawText"], program[1]["rawText"]],
                  "misses": [str(unknown[0]), unknown[1]["error"]]}))
"""


def test_the_target_proxy_answers_with_any_target_of_the_project_by_name(
    folder: Path, fake_llm: FakeOpenAI
) -> None:
    # AgentV (4a86b769) orchestrator.ts: the proxy resolves a request's `target` among the
    # project's targets (resolveTargetByName -> targetResolver); /info lists the eval's
    # target, then every target of targets.yaml (availableTargets); an unknown name is 400
    # "Unknown target 'x'. Available: ..." (runtime/target-proxy.ts)
    def respond(request: dict[str, Any]) -> Reply:
        if request["model"] == "gemini-test":
            return Reply(text="I am gemini_base")
        return Reply(text="The answer is 42.")

    fake_llm.responder = respond
    (folder / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    endpoint: ${{ FAKE_URL }}\n"
        "    api_key: key\n    model: gpt-test\n"
        "  - name: gemini_base\n    provider: openai\n    endpoint: ${{ FAKE_URL }}\n"
        "    api_key: key\n    model: gemini-test\n"
        "  - name: canned\n    provider: mock\n    response: canned reply\n"
        "  - name: echoer\n    provider: cli\n    command_template: python3 ../echo.py {PROMPT}\n"
    )
    (folder / "echo.py").write_text("import sys\nprint('cli says: ' + sys.argv[1])\n")
    (folder / "judge.py").write_text(NAMED_TARGET_JUDGE)
    file = write(
        folder,
        "tests:\n  - id: t\n    criteria: x\n    input: y\n    execution:\n      evaluators:\n"
        "        - {name: j, type: code_judge, script: [python3, ../judge.py], target: true}\n",
    )
    _code, found, stderr = run(folder, file)
    result = found["t"]["evaluator_results"][0]
    assert result["score"] == 1.0, (result, stderr)
    # (AgentV writes the eval's target twice, as target.name and as a name of the file)
    assert json.loads(result["hits"][0]) == ["default", "gemini_base", "canned", "echoer"]
    # a program target runs with the question as its {PROMPT}
    assert result["hits"][1:] == ["I am gemini_base", "canned reply", "cli says: Ping?"]
    assert result["misses"][0] == "400"
    assert result["misses"][1].startswith("Unknown target 'nowhere'. Available: ")


def test_trials_stop_at_the_cost_limit(folder: Path, fake_llm: FakeOpenAI) -> None:
    (folder / "agent.py").write_text(
        "import json, pathlib\n"
        "count = pathlib.Path(__file__).with_name('count')\n"
        "n = int(count.read_text()) + 1 if count.exists() else 1\n"
        "count.write_text(str(n))\n"
        "print(json.dumps({'text': f'answer {n}', 'cost_usd': 0.003}))\n"
    )
    (folder / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    type: command\n"
        f"    command: [{sys.executable}, {folder / 'agent.py'}]\n"
    )
    file = write(
        folder,
        """execution:
  trials: {count: 3, strategy: mean, cost_limit_usd: 0.005}
tests:
  - id: t
    criteria: First answer
    input: go
    execution:
      evaluators:
        - {name: first, type: contains, value: answer 1}
""",
    )
    _code, found, stderr = run(folder, file)
    # orchestrator.ts runEvalCaseWithTrials: after trial 2 the trials cost 0.006 >= 0.005,
    # so trial 3 never runs; trials.ts aggregateMean of 1 and 0 is 0.5
    record = found["t"]
    assert [t["score"] for t in record["trials"]] == [1.0, 0.0], stderr
    assert record["score"] == 0.5


@pytest.mark.parametrize(
    ("entry", "line", "message"),
    [
        ("    workspace: {setup: echo hi}\n", 5, "(got 'echo hi')"),
        (
            "    execution:\n      evaluators:\n        - {name: t, type: tool_trajectory,"
            " mode: in_order, expected: [read]}\n",
            7,
            "(got 'read')",
        ),
    ],
)
def test_no_class_names_in_messages(folder: Path, entry: str, line: int, message: str) -> None:
    file = write(folder, "tests:\n  - id: a\n    criteria: x\n    input: y\n" + entry)
    result = accord("eval", file)
    assert result.exit_code == 2
    assert f"dataset.yaml:{line}:" in result.stderr
    assert f"input should be a mapping (key: value lines) {message}" in result.stderr
    assert "Spec" not in result.stderr and "instance of" not in result.stderr
