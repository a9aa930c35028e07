"""AgentV 4 conversations (`mode: conversation`, `turns`) beyond what the live conversations
of the differential test show (tests/data/agentv4/tutoring-conversations.suite.yaml):
`on_turn_failure: stop`, a turn the model fails, `window_size`, and what accord refuses.
Expectations read from AgentV's orchestrator.ts (runConversationMode, buildWindowedHistory,
aggregateConversationScores)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply

CATALOG = (
    "- id: openai\n  label: llm\n  base_url: '{{ env.FAKE_URL }}'\n"
    "  api_key: '{{ env.FAKE_KEY }}'\n  model: fake-model\n"
)
ANSWERS = {"Greet me": "Hi there", "Again": "Hello again", "Third": "Third answer"}


def _reply(body: dict[str, Any]) -> Reply:
    """The judge (AgentV's checklist form: a rubric fails on an answer holding "Hi there"),
    else the model's answer to the last message."""
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    if '"satisfied": boolean' in system:
        user = messages[1]["content"]
        answer = user.split("[[ ## answer ## ]]")[-1].split("[[ ## rubrics ## ]]")[0]
        ids = re.findall(r"^- \[([\w-]+)\]", user, re.MULTILINE)
        checks = [{"id": i, "satisfied": "Hi there" not in answer, "reasoning": "r"} for i in ids]
        return Reply(text=json.dumps({"checks": checks, "overall_reasoning": "r"}))
    last = messages[-1]["content"]
    if "(unavailable)" in last:
        return Reply.error(400, "model unavailable")
    return Reply(text=next((a for p, a in ANSWERS.items() if p in last), "?"))


def _run(
    root: Path,
    fake: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    test: str,
    responder: Callable[[dict[str, Any]], Reply] = _reply,
) -> Run:
    monkeypatch.setenv("FAKE_URL", fake.url)
    monkeypatch.setenv("FAKE_KEY", "k")
    fake.responder = responder
    (root / "config.yml").write_text(
        "models:\n  - name: judge\n    model: openai/fake-model\n"
        f"    api_base: {fake.url}\n    key_var: FAKE_KEY\ndefaults:\n  judge_model: judge\n"
    )
    (root / ".agentv").mkdir()
    (root / ".agentv" / "providers.yaml").write_text(CATALOG)
    suite = root / "s.eval.yaml"
    suite.write_text(
        "name: c\nproviders: [llm]\nprompts: ['{{ input }}']\ntests:\n  - id: talk\n"
        "    vars:\n      input:\n        - role: system\n          content: Be brief.\n" + test
    )
    return accord("eval", suite, "--format", "json", "--cache", "off")


def _case(run: Run) -> dict[str, Any]:
    assert run.exit_code in (0, 1), run.stderr + run.stdout
    return dict(json.loads(run.stdout)["suites"][0]["cases"][0])


def test_a_failed_turn_with_stop_scores_the_turns_after_it_zero(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _case(_run(tmp_path, fake_llm, monkeypatch, (
        "    mode: conversation\n    on_turn_failure: stop\n    aggregation: max\n"
        "    turns:\n      - input: Greet me\n        assert: [Greets the user]\n"
        "      - input: Again\n        assert: [Greets the user]\n"
    )))  # fmt: skip
    parts = case["evaluations"][0]["metadata"]["components"]
    assert [(p["name"], p["score"]) for p in parts] == [("turn-1", 0.0), ("turn-2", 0.0)]
    assert parts[1]["reason"] == "Skipped due to previous turn failure"
    # max of the turns: turn 2 would have scored 1 had it been graded
    assert (case["score"], case["status"]) == (0.0, "failed")
    # nor is it asked: the model got turn 1 only, the judge graded turn 1 only
    asked = [r["messages"][-1]["content"] for r in fake_llm.requests]
    assert asked[0] == "Greet me" and len(asked) == 2, asked
    assert not any("Again" in json.dumps(r["messages"]) for r in fake_llm.requests)


@pytest.mark.parametrize("stop", [False, True])
def test_a_turn_the_model_fails_scores_zero_and_the_test_is_scored(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, stop: bool
) -> None:
    case = _case(_run(tmp_path, fake_llm, monkeypatch, (
        "    mode: conversation\n" + ("    on_turn_failure: stop\n" if stop else "") +
        "    turns:\n      - input: Again\n        assert: [Greets the user]\n"
        "      - input: Greet me (unavailable)\n        assert: [Greets the user]\n"
        "      - input: Third\n"
    )))  # fmt: skip
    parts = case["evaluations"][0]["metadata"]["components"]
    # runConversationMode: the failed call scores its turn 0, "Provider error: ..."
    assert parts[1]["score"] == 0.0
    assert parts[1]["reason"].startswith("Provider error: ")
    assert "model unavailable" in parts[1]["reason"]
    # a scored test, not an errored one; its answer is the last one given
    assert case["status"] == "failed" and case["error"] is None
    sent = [
        r["messages"] for r in fake_llm.requests if "satisfied" not in r["messages"][0]["content"]
    ]
    if stop:
        assert [p["score"] for p in parts] == [1.0, 0.0, 0.0]
        assert case["score"] == pytest.approx(1 / 3, abs=1e-4)
        assert len(sent) == 2 and case["output"] == "Hello again"
    else:
        assert [p["score"] for p in parts] == [1.0, 0.0, 1.0]
        assert case["score"] == pytest.approx(2 / 3, abs=1e-4)
        # the turn after goes on from the unanswered message, as AgentV's history holds it
        assert [m["content"] for m in sent[2][-3:]] == [
            "Hello again",
            "Greet me (unavailable)",
            "Third",
        ]
        assert case["output"] == "Third answer"


def test_without_stop_every_turn_counts_and_the_mean_decides(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _case(_run(tmp_path, fake_llm, monkeypatch, (
        "    mode: conversation\n"
        "    turns:\n      - input: Greet me\n        assert: [Greets the user]\n"
        "      - input: Again\n        assert:\n          - Greets the user\n"
        "          - type: contains\n            value: again\n"
        "      - input: Third\n"
    )))  # fmt: skip
    parts = case["evaluations"][0]["metadata"]["components"]
    # a turn with no assertion scores 1 (runConversationMode)
    assert [p["score"] for p in parts] == [0.0, 1.0, 1.0]
    assert case["score"] == pytest.approx(2 / 3, abs=1e-4)
    assert case["status"] == "failed"


def test_window_size_sends_the_system_messages_and_the_last_pairs(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    _case(_run(tmp_path, fake_llm, monkeypatch, (
        "    mode: conversation\n    window_size: 1\n"
        "    turns:\n      - input: Greet me\n      - input: Again\n      - input: Third\n"
    )))  # fmt: skip
    sent = [r["messages"] for r in fake_llm.requests]
    assert len(sent) == 3  # no assertion anywhere: no judge asked
    # buildWindowedHistory: the system messages, then the last 2 * window_size others
    assert sent[2] == [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hello again"},
        {"role": "user", "content": "Third"},
    ]
    assert sent[1] == [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hi there"},
        {"role": "user", "content": "Again"},
    ]


@pytest.mark.parametrize(
    ("test", "parts"),
    [
        ("    turns:\n      - input: Hi\n", ["s.eval.yaml:11", "mode: conversation"]),
        (
            "    mode: conversation\n    turns:\n      - input: Hi\n        expected_output: [x]\n",
            ["s.eval.yaml:13", "expected_output is text or one message", "not a list"],
        ),
        (
            "    mode: conversation\n    turns:\n      - input: Hi\n        context: x\n",
            ["s.eval.yaml:13", "'context' of a turn is not supported"],
        ),
        (
            "    mode: conversation\n    aggregation: median\n    turns:\n      - input: Hi\n",
            ["s.eval.yaml:11", "mean, min, max"],
        ),
    ],
)
def test_a_conversation_accord_does_not_run_is_refused_at_its_line(
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    test: str,
    parts: list[str],
) -> None:
    run = _run(tmp_path, fake_llm, monkeypatch, test)
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    for part in parts:
        assert part in run.stderr, run.stderr
    assert not fake_llm.requests


def test_a_turn_whose_judge_fails_errors_the_test_and_asks_no_further_turn(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    def judge_fails(body: dict[str, Any]) -> Reply:
        if '"satisfied": boolean' in body["messages"][0]["content"]:
            return Reply.error(400, "judge unavailable")
        return _reply(body)

    run = _run(tmp_path, fake_llm, monkeypatch, (
        "    mode: conversation\n"
        "    turns:\n      - input: Greet me\n        assert: [Greets the user]\n"
        "      - input: Again\n"
    ), judge_fails)  # fmt: skip
    assert run.exit_code == 3, run.stderr  # every case errored
    case = json.loads(run.stdout)["suites"][0]["cases"][0]
    assert case["status"] == "error", case
    found = case["evaluations"][0]
    assert found["error"].startswith("turn-1: ") and "judge unavailable" in found["error"]
    # the grade of turn 1 failed before turn 2 was asked: no use asking it
    assert not any("Again" in json.dumps(r["messages"]) for r in fake_llm.requests)
