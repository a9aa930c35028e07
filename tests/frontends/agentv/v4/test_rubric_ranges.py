"""AgentV 4's structured rubrics (score ranges, `min_score`, operators) and `scenarios`,
compared with AgentV itself (its command line built from its source at commit 58f316ca2,
as in test_differential.py, whose helpers (harness.py) run both tools on one fake OpenAI
server).

The suites are written for these tests (tests/data/agentv4: rubric-ranges.suite.yaml,
translation-scenarios/). The fake judge answers in the form AgentV's prompt asks for:
per criterion an integer 0-10 when the prompt lists `### Criterion:` headings
(llm-grader.ts buildScoreRangePrompt), else its checklist of `{id, satisfied, reasoning}`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.agentv.v4.harness import (
    AGENTV,
    model_requests,
    project,
    run_agentv,
)

pytestmark = [
    pytest.mark.reference,
    pytest.mark.skipif(
        not AGENTV.exists() or __import__("shutil").which("node") is None,
        reason=f"needs node and AgentV built from source at {AGENTV}",
    ),
]

# the fake model's answers, by a phrase of the prompt; "Hi there" marks a poor answer
ANSWERS = {
    "Release facts": "Version 2.4 is out since Tuesday, now with offline mode.",
    "library opens at 9": "The library is open from 9 to 17 on weekdays.",
    "sky blue": "Hi there, the sky is blue because it is.",
    "Give the steps": "First boil water, then add the pasta, then drain it.",
    # translation-scenarios: one wrong on purpose (Portuguese "thank you")
    "'hello' to Spanish": "hola",
    "'thank you' to Spanish": "gracias",
    "'hello' to French": "bonjour",
    "'thank you' to French": "merci",
    "'hello' to Portuguese": "ola",
    "'thank you' to Portuguese": "obrigada",
    "'good night' to German": "gute Nacht",
    "'good night' to Italian": "buona notte",
    "'hello' to German": "hallo",
}
POOR = "Hi there"
CRITERION = re.compile(r"^### Criterion: (\S+)", re.MULTILINE)
RUBRIC = re.compile(r"^- \[([^\]]+)\][^:]*: (.*)$", re.MULTILINE)


def judge(system: str, user: str) -> Reply | None:
    """Score ranges: 2 for a poor answer, 4 for a criterion named `...-weak`, else 9.
    Checklist: a rubric asking for an emoji is not met, nor any of a poor answer."""
    if '"score": integer (0-10)' in system:
        answer = user.split("[[ ## answer ## ]]")[-1].split("[[ ## scoring_criteria ## ]]")[0]
        checks = [
            {"id": cid, "score": 2 if POOR in answer else 4 if cid.endswith("-weak") else 9,
             "reasoning": "scored"}
            for cid in CRITERION.findall(user)
        ]  # fmt: skip
        return Reply(text=json.dumps({"checks": checks, "overall_reasoning": "scored"}))
    if '"satisfied": boolean' in system:
        answer = user.split("[[ ## answer ## ]]")[-1].split("[[ ## rubrics ## ]]")[0]
        rubrics = user.split("[[ ## rubrics ## ]]")[-1]
        checks = [
            {"id": rid, "satisfied": POOR not in answer and "emoji" not in text,
             "reasoning": "judged"}
            for rid, text in RUBRIC.findall(rubrics)
        ]  # fmt: skip
        return Reply(text=json.dumps({"checks": checks, "overall_reasoning": "judged"}))
    return None


def answer(body: dict[str, Any]) -> Reply:
    messages = body["messages"]
    if len(messages) == 2 and messages[0]["role"] == "system":
        found = judge(messages[0]["content"], messages[1]["content"])
        if found is not None:
            return found
    text = json.dumps(messages[-1])
    return Reply(text=next((a for p, a in ANSWERS.items() if p in text), "no answer"))


def run_accord(suite: Path) -> tuple[dict[str, dict[str, Any]], dict[str, list[bool]]]:
    """`accord eval` of the suite: per test id its score, verdict and assertion scores (as
    the differential test's helper gives them), and its assertions' own verdicts."""
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    assert run.exit_code in (0, 1), run.stderr + run.stdout
    cases = json.loads(run.stdout)["suites"][0]["cases"]
    results = {
        c["id"]: {
            "score": round(c["score"], 4),
            "passed": c["status"] == "passed",
            "assertions": [round(e["score"], 4) for e in c["evaluations"]],
        }
        for c in cases
    }
    return results, {c["id"]: [e["passed"] for e in c["evaluations"]] for c in cases}


def agentv_verdicts(suite: Path) -> dict[str, list[bool]]:
    """Each test's assertions' own verdicts from AgentV's results (grading.json's
    component_results), after run_agentv."""
    out = suite.parents[1] / "out"
    index = (out / ".internal" / "index.jsonl").read_text()
    rows = [json.loads(line) for line in index.splitlines()]
    return {
        row["test_id"]: [
            c["pass"]
            for c in json.loads((out / row["grading_path"]).read_text())["component_results"]
        ]
        for row in rows
    }


def test_score_ranges_and_operators_score_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Rubric items with operators (a checklist), score ranges as a map and as a list,
    `min_score` on a criterion, a criterion without ranges among scored ones, and one
    criterion made of a text value and the assertion's own `score_ranges`: the same scores
    and verdicts as AgentV, and the judge asked the same words."""
    name = "rubric-ranges.suite.yaml"
    suite = project(tmp_path / "agentv", name)
    expected, verdicts = run_agentv(suite), agentv_verdicts(suite)
    agentv_asked, agentv_sent = judge_requests_of(fake.requests), model_requests(fake.requests)
    fake.requests.clear()
    got, got_verdicts = run_accord(project(tmp_path / "accord", name))
    assert got == expected
    assert got_verdicts == verdicts
    assert judge_requests_of(fake.requests) == agentv_asked
    assert model_requests(fake.requests) == agentv_sent
    # the numbers follow llm-grader.ts: calculateRubricScore (2 of 2.5 weight met: 0.8),
    # calculateScoreRangeResult ((2 * 0.9 + 0.4) / 3; (3 * 0.2 + 1.5 * 0.2) / 4.5) and
    # orchestrator.ts's weighted mean, 0 under a required assertion below 0.8
    assert expected == {
        "release-notes-operators": {"score": 0.9, "passed": True, "assertions": [0.8, 1.0]},
        "summary-bands-as-a-map": {"score": 0.8667, "passed": True,
                                   "assertions": [0.7333, 1.0]},
        "bands-as-a-list-below-floor": {"score": 0.0, "passed": False, "assertions": [0.2]},
        "one-criterion-from-text": {"score": 0.9333, "passed": True, "assertions": [0.9, 1.0]},
        "floor-above-the-pass-mark": {"score": 0.9, "passed": True, "assertions": [0.9]},
    }  # fmt: skip
    # a grader's own verdict: below the pass mark (0.733), or a criterion under its
    # min_score (0.9 < 0.95) fails it, whatever its score does for the test
    assert verdicts == {
        "release-notes-operators": [True, True],
        "summary-bands-as-a-map": [False, True],
        "bands-as-a-list-below-floor": [False],
        "one-criterion-from-text": [True, True],
        "floor-above-the-pass-mark": [False],
    }
    asked = "\n".join(user for _system, user in agentv_asked)
    # the prompts the comparison covers: operator labels and guidance, both range forms,
    # the gate and weight labels, and the outcome filled from the test's vars
    for piece in (
        "(operator: contradiction)",
        "Operator guidance:",
        "Operator: correctness",
        "  - Score 8-10: Explains Rayleigh scattering and wavelength.",
        "  - Score 0-4: Stiff or unclear.",
        "### Criterion: depth (weight: 3) [REQUIRED: min score 0.9]",
        "Says that version 2.4 is out.",
        "- [rubric-1] (REQUIRED): Announces version 2.4 in one or two sentences.",
    ):
        assert piece in asked, piece


def judge_requests_of(requests: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The (system, user) messages of each request to this judge, in a fixed order."""
    return sorted(
        (r["messages"][0]["content"], r["messages"][1]["content"])
        for r in requests
        if len(r["messages"]) == 2
        and judge(r["messages"][0]["content"], r["messages"][1]["content"]) is not None
    )


def test_scenarios_expand_into_the_same_tests_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """`scenarios` from a glob of scenario files (a list, and `{scenarios: [...]}`) and
    written inline: the same tests, with the same ids, in AgentV's order, the same prompts
    sent to the model, and the same scores."""
    name = "translation-scenarios"
    suite = project(tmp_path / "agentv", name)
    expected = run_agentv(suite)
    agentv_sent = model_requests(fake.requests)
    fake.requests.clear()
    got, _verdicts = run_accord(project(tmp_path / "accord", name))
    assert got == expected
    assert model_requests(fake.requests) == agentv_sent
    # the ids of yaml-parser.ts mergeScenarioTestRows: the config row's id with the test's
    # number when its scenario has several tests, alone when one; the test row's own id;
    # `scenario-S-C-T` for a row without either, S counted after the files are read;
    # default_test's phrase under each row's; the config row's assertions first
    assert expected == {
        "plain-test": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "spanish__scenario_test_1": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "spanish__scenario_test_2": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "french__scenario_test_1": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "french__scenario_test_2": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "portuguese__scenario_test_1": {"score": 1.0, "passed": True,
                                        "assertions": [1.0, 1.0]},
        "portuguese__scenario_test_2": {"score": 0.5, "passed": False,
                                        "assertions": [1.0, 0.0]},
        "german-hello": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "spanish-with-its-own-id": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "scenario-4-1-1": {"score": 1.0, "passed": True, "assertions": [1.0]},
        "scenario-4-2-1": {"score": 0.0, "passed": False, "assertions": [0.0]},
    }  # fmt: skip
    prompts = [json.loads(m)[-1]["content"] for m in agentv_sent]
    assert "Translate 'thank you' to Portuguese." in prompts
    assert "Translate 'good night' to Italian." in prompts
