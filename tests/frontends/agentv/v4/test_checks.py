"""AgentV 4 files' assertions: promptfoo's form plus AgentV's own (plain-string rubrics,
`required`, `skill-used`, `trajectory:*`, `ends-with`), scored as AgentV's
packages/core/src/evaluation scores them (graders/trajectory.ts, graders/skill-used.ts, and
orchestrator.ts for the test: 0 under a failed required assertion, else the weighted mean,
pass at 0.8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.engine.errors import ConfigError
from accord.tasks.evaluators.cases import Output
from accord.tasks.suites.frontends.agentv.v4.checks.build import build_agentv_assertion
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.promptfoo.asserts.harness import score, write_project

EXAMPLE = Path(__file__).parents[3] / "data" / "agentv4" / "agent-trajectories.suite.yaml"

# what tests/data/agentv4/mock_agent.py answers to each test's prompt: its scenario's tool
# calls, in order
CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "library": [("catalogLookup", {"title": "Moby-Dick", "edition": 1}),
                ("catalogLookup", {"title": "Moby-Dick", "edition": 2}),
                ("openRecord", {"recordId": "md-1851"})],
    "inbox": [("readInbox", {"mailbox": "support"}), ("classifyMessage", {"label": "billing"}),
              ("draftReply", {"tone": "brief"}), ("sendReply", {"to": "customer@example.org"})],
    "freeze": [("lockAccount", {"account": "acct-77"}), ("notifyOwner", {"account": "acct-77"}),
               ("recordIncident", {"kind": "suspicious-sign-in"})],
    "host": [("listDisks", {"host": "build-2"}), ("listProcesses", {"host": "build-2"})],
    "forecast": [("geocode", {"place": "Oslo"}), ("get_forecast", {"city": "Oslo", "days": 1})],
    "csv": [("read_csv", {"path": "orders.csv"}), ("dedupe", {"keep": "first"}),
            ("write_parquet", {"path": "orders.parquet"})],
    "none": [],
}  # fmt: skip
SCENARIO = {
    "repeated-lookups": "library", "triage-in-order": "inbox", "freeze-exactly": "freeze",
    "host-inspection": "host", "citation-never-exported": "library",
    "forecast-arguments": "forecast", "one-argument-checked": "csv",
    "extra-calls-allowed": "library", "nothing-written": "none", "triage-with-gaps": "inbox",
    "wrong-argument-name": "inbox",
}  # fmt: skip
# AgentV's score of each test with a judge that passes every rubric: the deterministic
# assertions by trajectory.ts (evaluateToolUsed, evaluateToolSequence, evaluateToolArgsMatch:
# 1 or 0 each), then the mean
EXPECTED = {
    "repeated-lookups": ([1, 1, 1], 1.0, True),
    "triage-in-order": ([1, 1], 1.0, True),
    "freeze-exactly": ([1, 1], 1.0, True),
    "host-inspection": ([1, 1, 1], 1.0, True),
    "citation-never-exported": ([1, 1, 0, 1], 0.75, False),  # exportCitation never called
    "forecast-arguments": ([1, 1, 1, 1], 1.0, True),
    "one-argument-checked": ([1, 1, 1], 1.0, True),
    "extra-calls-allowed": ([1, 1, 1], 1.0, True),
    "nothing-written": ([1, 1], 1.0, True),
    "triage-with-gaps": ([1, 1], 1.0, True),  # in_order: a subsequence of the calls
    "wrong-argument-name": ([1, 0, 1], 2 / 3, False),  # readInbox has no 'folder' argument
}


@pytest.mark.parametrize("test_id", list(SCENARIO))
def test_a_trajectory_suites_assertions_score_as_agentv(
    tmp_path: Path, fake_llm: FakeOpenAI, test_id: str
) -> None:
    write_project(tmp_path, fake_llm)
    fake_llm.responder = lambda body: Reply(text='{"pass": true, "score": 1, "reason": "ok"}')
    tests = {t["id"]: t for t in yaml.safe_load(EXAMPLE.read_text())["tests"]}
    test = tests[test_id]
    calls = [{"name": n, "arguments": a} for n, a in CALLS[SCENARIO[test_id]]]
    found = score(tmp_path, test["assert"], Output(text="done", tool_calls=calls), agentv=True)
    scores, total, passed = EXPECTED[test_id]
    assert [f.score for f in found.findings] == scores, [f.reason for f in found.findings]
    assert found.test.score == pytest.approx(total) and found.test.passed is passed


def test_required_gates_the_test_score(tmp_path: Path) -> None:
    # orchestrator.ts: a required assertion below its minimum (0.8 by default) makes the
    # aggregate 0
    asserts: list[Any] = [
        {"type": "contains", "value": "a"},
        {"type": "contains", "value": "z", "required": True},
    ]
    found = score(tmp_path, asserts, "abc", agentv=True)
    assert (found.test.score, found.test.passed) == (0.0, False)
    assert "required" in found.test.reason
    ok = score(tmp_path, [{"type": "contains", "value": "a", "required": True}], "abc", agentv=True)
    assert (ok.test.score, ok.test.passed) == (1.0, True)


def test_skill_used_reads_the_skills_the_target_reported(tmp_path: Path) -> None:
    # skill-used.ts: every named skill used (not-: none of them); an object counts matches
    output = Output(
        text="ok",
        value={
            "skill_calls": [{"name": "csv-analyzer"}, {"name": "acme-deploy", "is_error": True}]
        },
    )
    found = score(
        tmp_path,
        [
            {"type": "skill-used", "value": "csv-analyzer"},
            {"type": "not-skill-used", "value": "acme-deploy"},
            {"type": "skill-used", "value": {"pattern": "csv-*", "max": 0}},
            {"type": "ends-with", "value": "}"},
        ],
        output,
        agentv=True,
    )
    assert [f.score for f in found.findings] == [1.0, 1.0, 0.0, 1.0]
    assert found.findings[0].reason == (
        "Observed required skill(s): csv-analyzer. Actual skills: csv-analyzer"
    )


def test_a_plain_string_is_a_rubric(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    write_project(tmp_path, fake_llm)
    fake_llm.script('{"pass": true, "score": 7, "reason": "very good"}')
    found = score(tmp_path, ["Response is polite"], "Thank you!", agentv=True)
    assert (found.findings[0].score, found.findings[0].passed) == (1.0, True)  # clamped
    assert "Response is polite" in fake_llm.requests[0]["messages"][-1]["content"]


def test_agentv_entries_are_checked_at_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        build_agentv_assertion(
            {"type": "trajectory:tool-used", "value": "x", "mode": "any"},
            base_dir=tmp_path, where="suite.yaml:12",
        )  # fmt: skip
    assert caught.value.message == (
        "suite.yaml:12: 'mode' is no key of a trajectory:tool-used assertion"
    )


def test_an_llm_rubric_with_agentvs_grader_prompt_file(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # AgentV's llm-rubric `prompt:` is a grader template ({{ output }} filled in) named
    # from the eval's folder; the judge's {score, assertions} gives the score
    write_project(tmp_path, fake_llm)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "safety.md").write_text("Is it safe?\n[[ ## answer ## ]]\n{{ output }}")
    (tmp_path / "evals").mkdir()
    fake_llm.script('{"score": 0.6, "assertions": [{"text": "mild", "passed": false}]}')
    asserts: list[Any] = [
        {
            "type": "assert-set",
            "assert": [
                {"type": "llm-rubric", "prompt": "file://../prompts/safety.md", "metric": "safety"},
                "Mentions Paris",
            ],
        }
    ]
    fake_llm.script('{"pass": true, "score": 1, "reason": "yes"}')
    found = score(tmp_path, asserts, "Paris is nice", agentv=True, base_dir=tmp_path / "evals")
    member = found.findings[0]
    assert sorted(c.score or 0 for c in member.children) == [0.6, 1.0]
    asked = [r["messages"][-1]["content"] for r in fake_llm.requests]
    assert any(a == "Is it safe?\n[[ ## answer ## ]]\nParis is nice" for a in asked)


def test_a_grader_prompt_outside_the_project_is_refused(tmp_path: Path) -> None:
    inner = tmp_path / "project" / "evals"
    inner.mkdir(parents=True)
    (tmp_path / "secret.md").write_text("x")
    with pytest.raises(ConfigError) as caught:
        build_agentv_assertion(
            {"type": "llm-rubric", "prompt": "file://../../secret.md"},
            base_dir=inner, where="suite.yaml:5", root=tmp_path / "project",
        )  # fmt: skip
    assert "is outside the project" in caught.value.message


def test_a_script_grader_reads_agentvs_payload_and_answers(tmp_path: Path) -> None:
    # graders/script-grader.ts: payload on stdin; score = score, else the checks' mean,
    # else pass; pass = pass, else score >= 0.8
    (tmp_path / "graders").mkdir()
    (tmp_path / "graders" / "keywords.py").write_text(
        "import json, sys\n"
        "p = json.load(sys.stdin)\n"
        "words = p['config']['words']\n"
        "checks = [{'text': w, 'pass': w in p['output'], 'reason': 'looked'} for w in words]\n"
        "print(json.dumps({'checks': checks}))\n"
    )
    (tmp_path / "evals").mkdir()
    import sys

    asserts: list[Any] = [
        {
            "type": "script",
            "command": [sys.executable, "../graders/keywords.py"],
            "words": ["Paris", "France", "Lyon"],
            "metric": "keywords",
        },
        # argv, never a shell line (accord runs no shell: agentv/v4/script.py)
        {"type": "script", "command": ["echo", '{"score": 1.5, "pass": false}']},
        {"type": "script", "command": ["echo", "nothing"]},
    ]
    found = score(tmp_path, asserts, "Paris, France", agentv=True, base_dir=tmp_path / "evals")
    first, second, third = found.findings
    assert (first.score, first.passed) == (pytest.approx(2 / 3), False)
    assert (second.score, second.passed) == (1.0, False)
    # plain text: the exit code decides (script-grader.ts, its plain-text fallback)
    assert (third.score, third.passed) == (1.0, True)


def test_execution_metrics_is_the_share_of_limits_met(tmp_path: Path) -> None:
    # graders/execution-metrics.ts: score = checks met / checks; a figure not reported fails
    spent = Output(
        text="ok",
        tool_calls=[{"name": "read", "arguments": {}}, {"name": "grep", "arguments": {}}],
        usage={"input": 900, "output": 300},
        duration_ms=1200.0,
    )
    entry: dict[str, Any] = {
        "type": "execution-metrics", "max_tool_calls": 5, "max_tokens": 1000,
        "max_duration_ms": 5000, "max_cost_usd": 0.1, "required": True,
    }  # fmt: skip
    found = score(tmp_path, [entry, {"type": "contains", "value": "ok"}], spent, agentv=True)
    assert found.findings[0].score == 0.5  # tokens 1200 > 1000, no cost reported
    assert (found.test.score, found.test.passed) == (0.0, False)  # required, below 0.8


def test_values_name_vars_either_way(tmp_path: Path) -> None:
    # AgentV's templates write {{ vars.name }} as well as {{ name }}
    found = score(
        tmp_path,
        [
            {"type": "contains", "value": "{{ vars.city }}"},
            {"type": "contains", "value": "{{city}}"},
        ],
        "Paris",
        vars={"city": "Paris"},
        agentv=True,
    )
    assert [f.score for f in found.findings] == [1.0, 1.0]


def test_a_rubric_reply_with_checks_only(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    # llm-grader.ts normalizePromptfooGradingResult: no pass/score -> the checks: pass when
    # all pass, score the mean of each check's score (else its pass)
    write_project(tmp_path, fake_llm)
    fake_llm.script(
        '{"checks": [{"text": "a", "pass": true}, {"text": "b", "score": 0.5}, '
        '{"text": "c", "passed": "no"}]}'
    )
    found = score(tmp_path, ["Covers a, b and c"], "x", agentv=True)
    assert (found.findings[0].score, found.findings[0].passed) == (0.5, False)


def test_regex_flags(tmp_path: Path) -> None:
    # graders/assertions.ts: new RegExp(pattern, flags)
    entry = {"type": "regex", "value": "[a-z]+@[a-z]+\\.[a-z]+", "flags": "i"}
    found = score(tmp_path, [entry], "Mail SUPPORT@ACME.COM", agentv=True)
    assert found.findings[0].score == 1.0
    with pytest.raises(ConfigError):
        build_agentv_assertion({**entry, "flags": "x"}, base_dir=tmp_path, where="s.yaml:3")
