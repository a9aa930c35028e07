"""`.test.yml` case files: a target agent, cases with expected answers, the PASS/FAIL judge."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from accord.tasks.evaluators.judged import parse_grade
from tests.commands.conftest import Script, accord_test
from tests.fakes import FakeOpenAI, Reply

SUITE = """
target: agents/analyst.agent.yml
settings:
  runs: 2
  concurrency: 2
cases:
  - name: total
    prompt: What is the total revenue?
    expected: Total revenue is $1,200.
    tags: [smoke, revenue]
  - name: top_region
    prompt: Which region sold most?
    expected: East, with 600 in sales.
    tags: [regions]
"""
AGENT = "model: fake\nsystem_instructions: You analyse sales.\n"


@pytest.fixture
def suite_file(project: Callable[..., Path], script: Script) -> Path:
    script.answer("total revenue", "The total is $1200.")
    script.answer("region sold most", "East sold 500.")
    return project({"sales.test.yml": SUITE, "agents/analyst.agent.yml": AGENT})


def test_cases_are_graded_pass_fail(suite_file: Path, script: Script) -> None:
    run = accord_test(suite_file, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert run.doc["accuracy"] == 0.5  # one test: a scalar; 2 of 4 answers pass
    assert run.doc["accuracy_n"] == 4
    assert run.doc["tests"][0]["cases"] == {"total": 4, "passed": 2, "failed": 2, "errors": 0}
    assert sorted(set(script.graded)) == [
        ("East, with 600 in sales.", "East sold 500."),
        ("Total revenue is $1,200.", "The total is $1200."),
    ]
    assert len(script.graded) == 4  # runs: 2 answers per case, each graded


def test_tag_and_case_select_cases(suite_file: Path, script: Script) -> None:
    smoke = accord_test(suite_file, "--format", "json", "--tag", "smoke", "--cache", "off")
    assert smoke.exit_code == 0, smoke.stderr
    assert smoke.doc["accuracy"] == 1.0 and smoke.doc["accuracy_n"] == 2
    region = accord_test(suite_file, "--format", "json", "--case", "top_region", "--cache", "off")
    assert region.doc["accuracy"] == 0.0 and region.doc["accuracy_n"] == 2
    assert all("region" in p for p in script.prompts[-2:])
    none = accord_test(suite_file, "--tag", "nothing")
    assert none.exit_code == 2
    assert "no test or case matches --tag nothing" in none.stderr


def test_junit_has_one_testcase_per_test_and_per_case(suite_file: Path) -> None:
    run = accord_test(suite_file, "--format", "junit", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    root = ET.fromstring(run.stdout)
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    names = [c.get("name") for c in cases]
    assert names == [
        "Test 1: sales",
        "total (run 1)",
        "total (run 2)",
        "top_region (run 1)",
        "top_region (run 2)",
    ]
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == ["top_region (run 1)", "top_region (run 2)"]
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "2", "0")
    failure = cases[3].find("failure")
    assert failure is not None and "East sold 500." in (failure.text or "")


def test_a_reply_without_verdict_is_an_error_not_a_fail(
    suite_file: Path, fake_llm: FakeOpenAI, script: Script
) -> None:
    def undecided(body: dict[str, object]) -> Reply:
        text = str(body["messages"][-1]["content"])  # type: ignore[index]
        if "Expected answer:" in text:
            return Reply(text="Hard to say.")
        return script(body)

    fake_llm.responder = undecided
    run = accord_test(suite_file, "--format", "json", "--case", "total", "--cache", "off")
    assert run.exit_code == 3
    assert "accuracy" not in run.doc
    assert "no PASS/FAIL in the judge's reply" in run.stderr


def test_running_a_dataset_file_says_what_it_is(project: Callable[..., Path]) -> None:
    dataset = project({"data/custom_test.test.yml": "- query: q\n  response: r\n"})
    run = accord_test(dataset)
    assert run.exit_code == 2
    assert "is a list of rows, i.e. a dataset for a custom test" in run.stderr
    assert "'type: custom', 'dataset: <path>'" in run.stderr


def test_grade_parsing() -> None:
    assert parse_grade("The figures match.\nPASS") is True
    assert parse_grade("reasoning\n**FAIL**") is False
    assert parse_grade("Verdict: pass") is True
    assert parse_grade('{"verdict": "FAIL"}') is False
    assert parse_grade("It passes, I think.") is None
    assert parse_grade("PASS or FAIL? Unclear.") is None
