"""consistency_run: n run nodes, pairwise judge nodes, selection, against the fake server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from accord.cli import main
from accord.tasks.consistency.judge import parse_verdict
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

CUSTOM = """
consistency_prompt: |
  Task: {{ task_description }}
  S1: {{ submission_1 }}
  S2: {{ submission_2 }}
  Answer A (consistent) or B (disagreement).
tasks:
  - name: report
    type: agent
    model: fake
    prompt: How many users do we have?
    consistency_run: 5
  - name: show
    type: formatter
    template: "{{ report.value }} ({{ report.score }})"
"""


def answers_then_judge(answers: list[Any], judge: Any) -> Any:
    """Agent calls get `answers` in order; judge calls are answered by `judge(s1, s2)`."""
    queue = list(answers)

    def respond(body: dict[str, Any]) -> Reply:
        text = body["messages"][-1]["content"]
        if "S1:" in text:
            s1 = re.search(r"S1: (.*)", text).group(1)  # type: ignore[union-attr]
            s2 = re.search(r"S2: (.*)", text).group(1)  # type: ignore[union-attr]
            return judge(s1, s2)
        item = queue.pop(0)
        return item if isinstance(item, Reply) else Reply(text=item)

    return respond


def same_number(s1: str, s2: str) -> Reply:
    n1, n2 = re.findall(r"\d+", s1), re.findall(r"\d+", s2)
    return Reply(text=f"They {'agree' if n1 == n2 else 'differ'}.\n{'A' if n1 == n2 else 'B'}")


def run(tmp_path: Path, fake: FakeOpenAI, workflow: str, *args: str) -> Any:
    (tmp_path / "config.yml").write_text(fake_model_config(fake))
    path = tmp_path / "w.workflow.yml"
    path.write_text(workflow)
    return CliRunner().invoke(main, ["run", str(path), "--max-concurrency", "1", *args])


def test_selects_the_most_consistent_answer(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = answers_then_judge(
        [
            "We have 42 users.",
            "There are 42 users.",
            "We have 40 users.",
            "42 users in total.",
            "We have 42 users.",
        ],
        same_number,
    )
    result = run(tmp_path, fake_llm, CUSTOM, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    report = doc["outputs"]["report"]
    assert report["value"] == "We have 42 users."
    assert report["selected"] == 0 and report["score"] == 0.75
    # 5 answers, 2 identical (after normalisation): 4 distinct -> 6 judge calls, not 10
    assert report["judge_calls"] == 6
    assert [r["score"] for r in report["runs"]] == [0.75, 0.75, 0.0, 0.75, 0.75]
    assert doc["outputs"]["show"] == "We have 42 users. (0.75)"
    judge_requests = [r for r in fake_llm.requests if "S1:" in r["messages"][-1]["content"]]
    assert len(judge_requests) == 6
    assert all(r.get("temperature") == 0 for r in judge_requests)
    assert "How many users do we have?" in judge_requests[0]["messages"][-1]["content"]


def test_failed_runs_are_dropped_and_reported(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = answers_then_judge(
        [Reply.error(400, "bad"), "42 users", Reply.error(400, "bad"), "42 users", "41 users"],
        same_number,
    )
    result = run(tmp_path, fake_llm, CUSTOM, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["outputs"]["report"]
    assert [f["index"] for f in report["failed_runs"]] == [0, 2]
    assert report["selected"] == 1 and report["value"] == "42 users"
    assert report["score"] == 0.5


def test_one_success_scores_one_without_a_judge(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = answers_then_judge(
        [Reply.error(400, "x")] * 4 + ["only answer"], same_number
    )
    result = run(tmp_path, fake_llm, CUSTOM, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["outputs"]["report"]
    assert report["value"] == "only answer" and report["score"] == 1.0
    assert report["judge_calls"] == 0


def test_all_runs_failing_fails_the_task(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = answers_then_judge([Reply.error(400, "nope")] * 5, same_number)
    result = run(tmp_path, fake_llm, CUSTOM)
    assert result.exit_code != 0
    assert "all 5 consistency runs failed" in result.stderr and "report" in result.stderr


def test_judge_without_verdict_is_an_error_not_b(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = answers_then_judge(
        ["42", "42!", "43", "44", "45"], lambda a, b: Reply(text="I cannot decide.")
    )
    result = run(tmp_path, fake_llm, CUSTOM, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["outputs"]["report"]
    assert report["judge_errors"]  # reported
    assert "no verdict in the judge's reply: 'I cannot decide.'" in json.dumps(
        report["judge_errors"]
    )
    assert all(p["verdict"] is None for p in report["pairs"] if p["source"] == "judge")
    judge_requests = [r for r in fake_llm.requests if "S1:" in r["messages"][-1]["content"]]
    assert len(judge_requests) == 2 * report["judge_calls"]  # one retry per pair


def test_graph_shows_run_and_select_nodes(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    (tmp_path / "config.yml").write_text(fake_model_config(fake_llm))
    path = tmp_path / "w.workflow.yml"
    path.write_text(CUSTOM)
    result = CliRunner().invoke(main, ["graph", str(path)])
    assert result.exit_code == 0
    for i in range(5):
        assert f"run_{i} [agent_sample]" in result.stdout
    assert "select [consistency_select]  <- run_0, run_1, run_2, run_3, run_4" in result.stdout


def test_verdict_parsing() -> None:
    assert parse_verdict("reasoning...\nA") == "A"
    assert parse_verdict("reasoning\nAnswer: B") == "B"
    assert parse_verdict("text\n**A**") == "A"
    assert parse_verdict('{"verdict": "B"}') == "B"
    assert parse_verdict("blah\nVerdict: a\n") == "A"
    assert parse_verdict("They are consistent.") is None
    assert parse_verdict("A lot of text without a verdict line") is None
