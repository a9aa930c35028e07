"""AgentV 4 suites written for these tests (tests/data/agentv4) through AgentV itself and
through `accord eval`: the same test ids, and per test the same score, the same verdict and
the same assertion scores in order.

The expected numbers come from AgentV: its command line, built from its source at commit
58f316ca2, found at ~/.cache/accord-bench/agentv-src/dist/cli.js or $ACCORD_AGENTV (npm's
newest `agentv`, 4.42.4, predates the format; no recipe that builds it is kept here), runs
each file and writes its results (`index.jsonl`, each test's `grading.json`). Where node or
that build is missing the tests are skipped with the reason. Both tools read the same
unchanged `.agentv/providers.yaml`, whose `llm` and `grader` are AgentV `openai` providers
on one fake OpenAI server on loopback (tests/fakes.py; AgentV streams, so the fake answers
with server-sent events when asked): the model answers from tests/data/agentv4's
llm_answers.py and basic_answers.py; the judge answers in the form AgentV's judge prompt asks
for, failing the rubrics of a wrong greeting and those about politeness. Both tools must
send the judge the same messages (AgentV's own judge prompt) and the model the same
messages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes import FakeOpenAI
from tests.frontends.agentv.v4.harness import (
    CATALOG,
    judge_requests,
    model_requests,
    needs_agentv,
    project,
    run_accord,
    run_agentv,
    settings,
    through_both,
)

pytestmark = [pytest.mark.reference, needs_agentv]


@pytest.mark.parametrize(
    "name",
    [
        "required-checks.suite.yaml",
        "text-checks.suite.yaml",
        "suite-wide-rubrics.suite.yaml",
        "weighted-rubrics",
        "judge-prompts",
        "tutoring-conversations.suite.yaml",
    ],
)
def test_a_suite_scores_in_accord_as_in_agentv(tmp_path: Path, fake: FakeOpenAI, name: str) -> None:
    expected, agentv_asked, agentv_sent, got = through_both(tmp_path, name, fake)
    assert got == expected
    # the judge was asked the same text by both: AgentV's own prompt, word for word; and
    # the model under test got the same messages
    assert agentv_asked and judge_requests(fake.requests) == agentv_asked
    assert model_requests(fake.requests) == agentv_sent
    # the comparison means something: several tests, passes and failures (weighted-rubrics:
    # all pass, and of each test only the rubric written as text counts, since AgentV skips
    # an llm-rubric whose prompt is a file when it has no value)
    assert len(expected) >= 3
    if name == "weighted-rubrics":
        assert all(len(r["assertions"]) == 1 for r in expected.values()), expected
    else:
        assert {r["passed"] for r in expected.values()} == {True, False}


def test_failed_turns_play_and_score_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """A turn failing its grade under `on_turn_failure: stop`, a turn the model answers
    with an HTTP error (conversation going on, and stopping): AgentV's scores, and the
    same requests; the turns after a stop are asked of neither."""
    name = "conversation-failures.suite.yaml"
    expected, agentv_asked, agentv_sent, got = through_both(tmp_path, name, fake)
    assert got == expected
    assert judge_requests(fake.requests) == agentv_asked
    assert model_requests(fake.requests) == agentv_sent
    # stop: the turn after the failed one (and after the model's error) never reaches the
    # model; the third turn of the first test neither
    last_asked = [json.loads(m)[-1]["content"] for m in agentv_sent]
    assert "What is 12% of 50?" in last_asked  # the requests are there to look at
    assert "What are the three primary colors?" not in last_asked
    assert "What is the capital of France?" not in last_asked
    # after the error the conversation goes on: the next turn follows the unanswered one
    after = next(json.loads(m) for m in agentv_sent if "Which numbers did I start" in m)
    assert [m["role"] for m in after[-3:]] == ["assistant", "user", "user"]
    assert expected == {
        # turn 1 fails (a wrong greeting), 2 and 3 skipped, the transcript fails too
        "stop-after-a-failed-turn": {"score": 0.0, "passed": False,
                                     "assertions": [0.0, 0.0, 0.0, 0.0]},
        # the model's error scores its turn 0; the test is scored (max), not errored
        "model-error-then-go-on": {"score": 1.0, "passed": True,
                                   "assertions": [1.0, 0.0, 1.0]},
        "model-error-with-stop": {"score": 0.5, "passed": False,
                                  "assertions": [1.0, 0.0, 0.0, 1.0]},
    }  # fmt: skip


def test_a_turns_expected_output_reaches_its_graders_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """A turn's `expected_output` is what its graders read as the expected output (a script
    grader checks what it is given, field-accuracy compares with it), in AgentV's form; a
    turn without one has none; a turn with one and no assertion scores 1."""
    name = "conversation-expected.suite.yaml"
    expected, agentv_asked, agentv_sent, got = through_both(tmp_path, name, fake)
    assert got == expected
    assert agentv_asked and judge_requests(fake.requests) == agentv_asked
    assert model_requests(fake.requests) == agentv_sent
    # every script grader was given what it wants: AgentV's `[{content: text}]`, nothing
    # (not the test's var), the message as written; field-accuracy finds the expected
    # object in an assistant message only
    assert expected == {
        "turn-expected-output": {"score": 0.8, "passed": True,
                                 "assertions": [1.0, 1.0, 1.0, 1.0, 0.0]},
    }  # fmt: skip


def test_file_parts_expected_outputs_and_a_script_grader_score_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """File content parts in the prompt and the expected output, expected outputs as
    messages, text and an object, earlier turns in the input, a script grader and a
    value-less llm-rubric with a prompt file: AgentV's scores and verdicts."""
    name = "review-and-codegen.suite.yaml"
    expected = run_agentv(project(tmp_path / "agentv", name))
    got = run_accord(project(tmp_path / "accord", name))
    assert got == expected
    # score_python_answer.py's 0.75 (3 of 4 checks) beside the rubric; the llm-rubric
    # with a prompt file and no value is skipped by both
    assert expected["median-codegen"] == {"score": 0.875, "passed": True,
                                          "assertions": [1.0, 0.75]}  # fmt: skip
    assert len(expected) == 7


def test_file_parts_reach_the_model_and_the_judge_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """A file content part reaches the model and the judge as AgentV sends it: the file's
    text in `<file path="...">` tags."""
    name = "review-and-codegen.suite.yaml"
    run_agentv(project(tmp_path / "agentv", name))
    agentv_asked, agentv_sent = judge_requests(fake.requests), model_requests(fake.requests)
    assert any("<file path=" in user for _, user in agentv_asked)
    fake.requests.clear()
    run_accord(project(tmp_path / "accord", name))
    assert judge_requests(fake.requests) == agentv_asked
    assert model_requests(fake.requests) == agentv_sent


MOCK_SUITE = """\
name: mocked
providers: [canned]
prompts: ['{{ q }}']
tests:
  - id: capital
    vars: {q: capital of France?}
    assert:
      - {type: contains, value: Paris}
      - {type: icontains, value: "OF COURSE"}
  - id: elsewhere
    vars: {q: capital of Spain?}
    assert:
      - {type: contains, value: Madrid}
  - id: equal
    vars: {q: say it}
    assert:
      - {type: equals, value: "Paris, of course"}
"""


@pytest.mark.parametrize(
    "entry",
    ["- id: mock\n  label: canned\n  response: Paris, of course\n",
     "- id: mock\n  label: canned\n"],  # mock.ts DEFAULT_MOCK_RESPONSE
)  # fmt: skip
def test_the_mock_provider_answers_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI, entry: str
) -> None:
    results = []
    for tool in ("agentv", "accord"):
        root = tmp_path / tool
        (root / "evals").mkdir(parents=True)
        (root / ".git").mkdir()  # AgentV finds its project by the repository's top
        (root / "evals" / "suite.yaml").write_text(MOCK_SUITE)
        settings(root, CATALOG + entry)
        suite = root / "evals" / "suite.yaml"
        results.append(run_agentv(suite) if tool == "agentv" else run_accord(suite))
    expected, got = results
    assert got == expected
    assert len(expected) == 3 and not fake.requests  # no model was asked
