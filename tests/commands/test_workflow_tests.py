"""`tests:` of a workflow: the minimal sub-DAG n times, then the pairwise judge."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.commands.conftest import JUDGE_YAML, Script, accord_test
from tests.fakes import FakeOpenAI, Reply

WORKFLOW = f"""
consistency_prompt: |
{JUDGE_YAML}
tasks:
  - name: facts
    type: agent
    prompt: "Facts about users"
  - name: count
    type: agent
    prompt: "Using {{{{ facts }}}}: how many users do we have?"
  - name: unrelated
    type: agent
    prompt: "Write a poem"
  - name: headline
    type: formatter
    template: "Headline: {{{{ count }}}}"
tests:
  - type: consistency
    task_ref: count
    n: 5
"""


def test_task_ref_runs_only_its_ancestors_n_times(
    project: Callable[..., Path], script: Script
) -> None:
    script.answer("Facts about users", "users table has 42 rows")
    script.answer("how many users", "42 users", "42 users", "41 users", "42 users", "42 users")
    path = project({"w.workflow.yml": WORKFLOW})
    run = accord_test(path, "--format", "json", "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sum("Facts about users" in p for p in script.prompts) == 5
    assert sum("how many users" in p for p in script.prompts) == 5
    assert not any("poem" in p for p in script.prompts)  # not an ancestor: never run
    # 5 answers, 2 distinct: one judge call; 4 of the 10 pairs involve the odd answer
    assert len(script.judged) == 1
    assert run.doc["accuracy"] == 0.6
    assert run.doc["accuracy_n"] == 10
    low, high = run.doc["accuracy_ci95"]
    assert low == pytest.approx(0.3127, abs=1e-4) and high == pytest.approx(0.8318, abs=1e-4)


def test_the_judge_sees_the_rendered_task_prompt(
    project: Callable[..., Path], script: Script, fake_llm: FakeOpenAI
) -> None:
    script.answer("Facts about users", "the users table has 42 rows")
    script.answer("how many users", "42", "43")
    path = project({"w.workflow.yml": WORKFLOW.replace("n: 5", "n: 2")})
    run = accord_test(path, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    contents = [r["messages"][-1]["content"] for r in fake_llm.requests]
    judge = [c for c in contents if "S1: " in c]
    assert judge and "Task: Using the users table has 42 rows: how many users" in judge[0]


def test_task_ref_defaults_to_the_last_task(project: Callable[..., Path], script: Script) -> None:
    script.answer("Facts about users", "f")
    script.answer("how many users", "42 users", "42 users", "7 users")
    text = WORKFLOW.replace("    task_ref: count\n    n: 5", "    n: 3")
    path = project({"w.workflow.yml": text})
    run = accord_test(path, "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert "consistency of 'headline'" in run.stdout
    assert script.judged == [("Headline: 42 users", "Headline: 7 users")]
    assert "Accuracy: 33.33% (3 pairs, 95% CI" in run.stdout


LOOP = f"""
consistency_prompt: |
{JUDGE_YAML}
tasks:
  - name: per_region
    type: loop_sequential
    values: ["North", "South"]
    tasks:
      - name: sales
        type: formatter
        template: "{{{{ value }}}} sales"
      - name: comment
        type: agent
        prompt: "Comment on {{{{ sales }}}}"
tests:
  - type: consistency
    n: 2
"""


def test_a_loop_is_compared_by_its_last_subtask(
    project: Callable[..., Path], script: Script
) -> None:
    script.answer("Comment on North", "North sold 10", "North sold 10")
    script.answer("Comment on South", "South sold 20", "South sold 25")
    path = project({"w.workflow.yml": LOOP})
    run = accord_test(path, "--max-concurrency", "1", "--cache", "off", "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert script.judged == [("North sold 10\n\nSouth sold 20", "North sold 10\n\nSouth sold 25")]
    assert run.doc["accuracy"] == 0.0


def test_pretty_output_shows_failing_pairs_unless_quiet(
    project: Callable[..., Path], script: Script
) -> None:
    script.answer("Facts about users", "f")
    script.answer("how many users", "42 users", "42 users", "40 users", "42 users", "42 users")
    path = project({"w.workflow.yml": WORKFLOW})
    run = accord_test(path, "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "✅Eval finished with metrics:" in lines
    assert "Accuracy: 60.00% (10 pairs, 95% CI 31.27%-83.18%)" in lines
    assert "runs 0, 1, 3, 4 and run 2 disagree (judge):" in run.stdout
    assert "run 2: 40 users" in run.stdout and "Comparing the numbers. B" in run.stdout
    script.answer("how many users", "42 users", "42 users", "40 users", "42 users", "42 users")
    quiet = accord_test(path, "--max-concurrency", "1", "--cache", "off", "--quiet")
    assert "Accuracy: 60.00%" in quiet.stdout
    assert "disagree" not in quiet.stdout


def test_circular_pairs_judge_n_pairs(project: Callable[..., Path], script: Script) -> None:
    script.answer("Facts about users", "f")
    script.answer("how many users", "1", "2", "3", "4", "5")
    text = WORKFLOW.replace("    n: 5", "    n: 5\n    pairs: circular")
    path = project({"w.workflow.yml": text})
    run = accord_test(path, "--format", "json", "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert run.doc["accuracy_n"] == 5
    assert sorted(script.judged) == [("1", "2"), ("1", "5"), ("2", "3"), ("3", "4"), ("4", "5")]


def test_the_tests_own_prompt_is_honoured(
    project: Callable[..., Path], script: Script, fake_llm: FakeOpenAI
) -> None:
    script.answer("Facts about users", "f")
    script.answer("how many users", "42", "42.0")
    custom = (
        "    prompt: |\n      Strict!\n      S1: {{ submission_1 }}\n      S2: {{ submission_2 }}\n"
    )
    text = WORKFLOW.replace("    n: 5\n", "    n: 2\n" + custom)
    script.judge_text = lambda a, b: "A" if a == b else "B"
    path = project({"w.workflow.yml": text})
    run = accord_test(path, "--format", "json", "--cache", "off", "--max-concurrency", "1")
    assert run.exit_code == 0, run.stderr
    assert script.judged == [("42", "42.0")]
    assert run.doc["accuracy"] == 0.0
    judge = [r["messages"][-1]["content"] for r in fake_llm.requests if "S1: " in str(r)]
    assert len(judge) == 1 and judge[0].startswith("Strict!")  # not the workflow's prompt


def test_identical_answers_need_no_judge(project: Callable[..., Path], script: Script) -> None:
    script.answer("Facts about users", "f")
    script.answer("how many users", "We have 42 users.", "we have 42   users.")
    path = project({"w.workflow.yml": WORKFLOW.replace("n: 5", "n: 2")})
    run = accord_test(path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert script.judged == []
    assert run.doc["accuracy"] == 1.0
    assert run.doc["tests"][0]["judge_calls"] == 0


SEVERAL = f"""
consistency_prompt: |
{JUDGE_YAML}
tasks:
  - name: a
    type: agent
    prompt: "question a"
  - name: b
    type: agent
    prompt: "question b"
tests:
  - type: consistency
    task_ref: b
    n: 2
  - type: consistency
    task_ref: a
    n: 3
"""


def test_several_tests_give_arrays_in_file_order(
    project: Callable[..., Path], script: Script
) -> None:
    script.answer("question a", "1", "1", "1")
    script.answer("question b", "1", "2")
    path = project({"w.workflow.yml": SEVERAL})
    run = accord_test(path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert run.doc["accuracy"] == [0.0, 1.0]
    assert run.doc["accuracy_n"] == [1, 3]
    assert [t["name"] for t in run.doc["tests"]] == ["consistency of 'b'", "consistency of 'a'"]
    assert run.doc["summary"]["model_calls"] == 6  # 5 answers and 1 judge call, one ledger


def test_tests_share_one_scheduler_in_a_fixed_order(
    project: Callable[..., Path], script: Script, fake_llm: FakeOpenAI
) -> None:
    path = project({"w.workflow.yml": SEVERAL})
    orders = []
    for _ in range(2):
        script.answer("question a", "1", "2", "3")
        script.answer("question b", "1", "2")
        script.judged.clear()
        fake_llm.requests.clear()
        run = accord_test(path, "--format", "json", "--cache", "off", "--max-concurrency", "1")
        assert run.exit_code == 0, run.stderr
        orders.append([r["messages"][-1]["content"][:12] for r in fake_llm.requests])
    assert orders[0] == orders[1]
    # one scheduler, declaration order first: test 1's runs start before test 2's
    assert orders[0][:3] == ["question b", "question b", "question a"]
    assert len(orders[0]) == 2 + 3 + 1 + 3  # runs, then 1 + 3 judge calls


def test_runs_are_distinct_samples_in_the_cache(
    project: Callable[..., Path], script: Script
) -> None:
    script.answer("Facts about users", "f")
    script.answer("how many users", "42", "42", "41", "42", "42")
    path = project({"w.workflow.yml": WORKFLOW})
    first = accord_test(path, "--format", "json", "--max-concurrency", "1")
    assert first.exit_code == 0, first.stderr
    script.answer("how many users", "0")  # a new call would answer 0: the cache must serve
    again = accord_test(path, "--format", "json", "--cache", "replay")
    assert again.exit_code == 0, again.stderr
    assert again.doc["accuracy"] == first.doc["accuracy"] == 0.6


DEFAULT_PROMPT_WORKFLOW = """
tasks:
  - name: top
    type: agent
    prompt: "Which product sells most?"
tests:
  - type: consistency
    n: 3
"""


def test_without_a_prompt_the_built_in_judge_and_pre_judge_apply(
    project: Callable[..., Path], script: Script, fake_llm: FakeOpenAI
) -> None:
    script.answer(
        "Which product sells most?",
        "Apple sells most: 1,200 units.",
        "apple sells most:   1,200 units.",
        "Pear sells most: 1,200 units.",
    )
    seen: list[tuple[str, str]] = []

    def respond(body: dict[str, Any]) -> Reply:
        text = str(body["messages"][-1]["content"])
        pair = re.search(r"Answer 1:\n(.*?)\n\nAnswer 2:\n(.*?)\n\n", text, re.S)
        if pair is None:
            return script(body)
        assert "Question:\nWhich product sells most?" in text
        seen.append((pair.group(1), pair.group(2)))
        same = pair.group(1).split()[0].lower() == pair.group(2).split()[0].lower()
        return Reply(text=f"Products compared.\n{'A' if same else 'B'}")

    fake_llm.responder = respond
    path = project({"w.workflow.yml": DEFAULT_PROMPT_WORKFLOW})
    run = accord_test(path, "--format", "json", "--max-concurrency", "1", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    # runs 0 and 1 differ only in case and spacing: one cluster, no judge call between them
    assert seen == [("Apple sells most: 1,200 units.", "Pear sells most: 1,200 units.")]
    assert run.doc["accuracy"] == pytest.approx(1 / 3, abs=1e-6)
