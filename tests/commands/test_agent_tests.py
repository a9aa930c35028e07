"""`tests:` of an agent file: consistency over `task_description`, custom datasets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.commands.conftest import JUDGE_YAML, Script, accord_test
from tests.fakes import Reply

DATABASE = """\
databases:
  - name: shop
    type: duckdb
    dataset: data
"""
USERS = "name,age\nAda,36\nBen,29\nChloe,31\n"

AGENT = f"""
model: fake
system_instructions: You answer questions about the shop's users.
tools:
  - type: execute_sql
    database: shop
tests:
  - type: consistency
    n: 4
    task_description: Count the users.
    prompt: |
{JUDGE_YAML}
  - type: custom
    dataset: data/cases.yml
    metrics:
      - type: similarity
      - type: context_recall
    prompt: |
{JUDGE_YAML}
"""

CASES = """
- query: How many users are there?
  response: There are 3 users.
  relevant_contexts:
    - SELECT COUNT(*) FROM users
- query: Who is the oldest user?
  response: Ada, aged 36.
  relevant_contexts: ["SELECT name, age FROM users ORDER BY age DESC LIMIT 1"]
"""


@pytest.fixture
def agent_file(project: Callable[..., Path]) -> Path:
    return project(
        {"analyst.agent.yml": AGENT, "data/cases.yml": CASES, "data/users.csv": USERS},
        DATABASE,
    )


def test_agent_consistency_and_custom_tests(agent_file: Path, script: Script) -> None:
    script.answer("Count the users.", "3 users", "3 users", "three users: 3", "4 users")
    script.answer(
        "How many users are there?",
        Reply.tool("execute_sql", {"sql": "select count(*) from users"}),
        "There are 3 users.",
    )
    script.answer(
        "Who is the oldest user?",
        Reply.tool("execute_sql", {"sql": "SELECT name FROM users ORDER BY age DESC LIMIT 1"}),
        "Ada is 35.",
    )
    run = accord_test(agent_file, "--format", "json", "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    doc = run.doc
    # consistency: {3, 3, 3, 4}: the 3 pairs among the first three agree -> 3/6
    # custom: the first answer matches (pre-judged identical), the second does not -> 1/2
    assert doc["accuracy"] == [0.5, 0.5]
    assert doc["accuracy_n"] == [6, 2]
    reference = "select name, age from users order by age desc limit 1"
    second = 1 - len(", age") / len(reference)  # one insertion of 5 characters
    assert doc["recall"] == [pytest.approx((1.0 + second) / 2, abs=1e-6)]
    assert script.judged[-1] == ("Ada, aged 36.", "Ada is 35.")
    consistency_prompts = [p for p in script.prompts if p == "Count the users."]
    assert len(consistency_prompts) == 4


def test_pretty_shows_accuracy_recall_and_failing_cases(agent_file: Path, script: Script) -> None:
    script.answer("Count the users.", "3 users")
    script.answer(
        "How many users are there?",
        Reply.tool("execute_sql", {"sql": "SELECT COUNT(*) FROM users"}),
        "There are 3 users.",
    )
    script.answer("Who is the oldest user?", "Ben, aged 29.")
    run = accord_test(agent_file, "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines.count("✅Eval finished with metrics:") == 2
    assert "Accuracy: 100.00% (6 pairs, 95% CI 60.97%-100.00%)" in lines
    assert "Accuracy: 50.00% (2 answers, 95% CI 9.45%-90.55%)" in lines
    assert "Recall: 50.00% (2 cases)" in lines  # 1.0 for the first case, 0 (no SQL) for the other
    assert "✗ case 2: Who is the oldest user?" in run.stdout
    assert "expected: Ada, aged 36." in run.stdout and "answer:   Ben, aged 29." in run.stdout


def test_a_failed_answer_is_reported_on_stderr_only(agent_file: Path, script: Script) -> None:
    script.answer("Count the users.", "3 users", Reply.error(400, "context too long"), "3 users")
    script.answer("How many users are there?", "There are 3 users.")
    script.answer("Who is the oldest user?", "Ada, aged 36.")
    run = accord_test(agent_file, "--format", "json", "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert run.doc["accuracy"] == [1.0, 1.0]
    assert run.doc["accuracy_n"] == [3, 2]  # the failed run is dropped, not counted
    assert run.doc["tests"][0]["runs_failed"] == 1
    assert "1 of 4 runs failed" in run.stderr and "context too long" in run.stderr
    assert "context too long" not in run.stdout


def test_every_run_failing_is_an_error_with_its_cause(agent_file: Path, script: Script) -> None:
    script.answer("Count the users.", Reply.error(400, "model is overloaded"))
    script.answer("How many users are there?", Reply.error(400, "model is overloaded"))
    script.answer("Who is the oldest user?", Reply.error(400, "model is overloaded"))
    run = accord_test(agent_file, "--format", "json", "--cache", "off")
    assert run.exit_code == 3
    assert "accuracy" not in run.doc  # not a score of 0
    assert [t["status"] for t in run.doc["tests"]] == ["error", "error"]
    assert "all 4 runs failed" in run.stderr and "model is overloaded" in run.stderr
    assert "all 2 answers failed" in run.stderr
    assert "overloaded" not in run.stdout
    assert "no test produced a result" in run.stderr


def test_one_test_failing_does_not_stop_the_others(agent_file: Path, script: Script) -> None:
    script.answer("Count the users.", Reply.error(400, "bad request"))
    script.answer("How many users are there?", "There are 3 users.")
    script.answer("Who is the oldest user?", "Ada, aged 36.")
    run = accord_test(agent_file, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert run.doc["accuracy"] == [1.0]  # only the test that produced a result
    assert [t["status"] for t in run.doc["tests"]] == ["error", "ok"]
    assert "Test 1: consistency: Count the users.: all 4 runs failed" in run.stderr


def test_one_surviving_run_is_an_error_not_a_perfect_score(
    agent_file: Path, script: Script
) -> None:
    failure = Reply.error(400, "invalid prompt")
    script.answer("Count the users.", "3 users", failure, failure, failure)
    script.answer("How many users are there?", "There are 3 users.")
    script.answer("Who is the oldest user?", "Ada, aged 36.")
    run = accord_test(agent_file, "--format", "json", "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert run.doc["accuracy"] == [1.0]  # the custom test only
    assert run.doc["tests"][0]["status"] == "error"
    assert "only 1 of 4 runs succeeded, so no pair could be judged" in run.stderr


def test_similarity_and_correctness_together(project: Callable[..., Path], script: Script) -> None:
    agent = (
        "model: fake\ntests:\n  - type: custom\n    dataset: rows.jsonl\n"
        f"    metrics: [correctness, similarity]\n    prompt: |\n{JUDGE_YAML}"
    )
    rows = '{"query": "q1", "response": "12"}\n{"query": "q2", "response": "7"}\n'
    path = project({"a.agent.yml": agent, "rows.jsonl": rows})
    script.answer("q1", "It is 12.")
    script.answer("q2", "It is 8.")
    run = accord_test(path, "--format", "json", "--cache", "off", "--max-concurrency", "1")
    assert run.exit_code == 0, run.stderr
    assert run.doc["accuracy"] == 0.5  # correctness, listed first
    assert "correctness" not in run.doc  # it is the accuracy
    assert run.doc["similarity"] == 0.5
    assert len(script.graded) == 2 and len(script.judged) == 2
