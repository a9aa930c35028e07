"""`run_test_suite` as the Autoblocks SDK's (python-sdk fc6826dd, autoblocks/_impl/testing/
run.py): its argument order and defaults, its validation (report and return), the hook, retries,
sync evaluators in threads; and what accord shows of a case (tracebacks, outputs as data)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import accord
from accord import BaseTestCase, BaseTestEvaluator, Evaluation, Threshold, md5, run_test_suite
from tests.bounds import PROCESS_SECONDS


@dataclasses.dataclass
class Case(BaseTestCase):
    question: str

    def hash(self) -> str:
        return md5(self.question)


class NotEmpty(BaseTestEvaluator):
    id = "not-empty"

    def evaluate_test_case(self, test_case: Case, output: Any) -> Evaluation:
        return Evaluation(score=1 if output else 0, threshold=Threshold(gte=1))


def test_the_sdks_argument_order_and_optional_evaluators(tmp_path: Path) -> None:
    """The SDK's signature: (id, test_cases, fn, evaluators=None, max_test_case_concurrency)."""
    cases = [Case("a"), Case("b")]
    run = run_test_suite(
        "order",
        cases,
        lambda c: c.question.upper(),
        [NotEmpty()],
        2,
        project_root=tmp_path,
        quiet=True,
    )
    assert run is not None and [c.status for c in run.cases] == ["passed", "passed"]
    bare = run_test_suite("bare", cases, lambda c: c.question, project_root=tmp_path, quiet=True)
    assert bare is not None and [c.output for c in bare.cases] == ["a", "b"]


def test_an_invalid_suite_is_reported_and_the_next_one_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The SDK's validate_test_suite_inputs messages; it reports and returns (send_error),
    so a script with several suites goes on."""
    assert run_test_suite("empty", [], str, project_root=tmp_path) is None
    assert "[empty] No test cases provided." in capsys.readouterr().err
    dup = run_test_suite("dup", [Case("a"), Case("a")], str, project_root=tmp_path)
    assert dup is None
    assert f"[dup] Duplicate test case hash: '{md5('a')}'." in capsys.readouterr().err
    ids = run_test_suite("ids", [Case("a")], str, [NotEmpty(), NotEmpty()], project_root=tmp_path)
    assert ids is None
    assert "[ids] Duplicate evaluator id: 'not-empty'." in capsys.readouterr().err
    after = run_test_suite("after", [Case("a")], str, [NotEmpty()], project_root=tmp_path)
    assert after is not None and after.cases[0].status == "passed"


def test_a_script_with_an_empty_suite_runs_its_next_suite(tmp_path: Path) -> None:
    script = tmp_path / "suites.py"
    script.write_text(
        "from accord import BaseTestCase, run_test_suite\n"
        "class C(BaseTestCase):\n"
        "    def hash(self): return 'c'\n"
        "run_test_suite('first', [], lambda c: 'x')\n"
        "run = run_test_suite('second', [C()], lambda c: 'x', quiet=True)\n"
        "print('second ran:', run.cases[0].output)\n"
    )
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=PROCESS_SECONDS, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "[first] No test cases provided." in done.stderr and "Traceback" not in done.stderr
    assert "second ran: x" in done.stdout


def test_the_hook_runs_once_per_case_and_reaches_evaluators_that_take_it(tmp_path: Path) -> None:
    calls: list[str] = []

    def hook(test_case: Case, output: str) -> dict[str, int]:
        calls.append(test_case.question)
        return {"length": len(output)}

    class UsesHook(BaseTestEvaluator):
        id = "uses-hook"

        def evaluate_test_case(self, test_case: Case, output: str, hook_results: Any) -> Evaluation:
            return Evaluation(score=hook_results["length"], metadata={"seen": hook_results})

    class Ignores(BaseTestEvaluator):
        id = "ignores"

        def evaluate_test_case(self, test_case: Case, output: str) -> Evaluation:
            return Evaluation(score=1)

    run = run_test_suite("hook", [Case("ab"), Case("abc")], lambda c: c.question * 2,
                         [UsesHook(), Ignores()], before_evaluators_hook=hook,
                         project_root=tmp_path, quiet=True)  # fmt: skip
    assert run is not None and sorted(calls) == ["ab", "abc"]
    scores = {c.input["question"]: {f.name: f.score for f in c.findings} for c in run.cases}
    assert scores == {"ab": {"uses-hook": 4.0, "ignores": 1.0},
                      "abc": {"uses-hook": 6.0, "ignores": 1.0}}  # fmt: skip
    assert all(c.error is None for c in run.cases)


def test_grid_search_and_human_review_are_refused_with_a_message(tmp_path: Path) -> None:
    with pytest.raises(accord.AccordError, match="grid_search_params is not supported"):
        run_test_suite("g", [Case("a")], str, grid_search_params={"x": [1, 2]},
                       project_root=tmp_path)  # fmt: skip
    job = accord.CreateHumanReviewJob(assignee_email_address="a@b.c", name="review")
    with pytest.raises(accord.AccordError, match="human_review_job is not supported"):
        run_test_suite("h", [Case("a")], str, human_review_job=job, project_root=tmp_path)


def test_retry_count_retries_fn_on_httpx_timeouts_only(tmp_path: Path) -> None:
    """The SDK retries fn (retry_count times) on httpx timeouts and connection errors."""
    attempts: list[str] = []

    def flaky(test_case: Case) -> str:
        attempts.append(test_case.question)
        if test_case.question == "net" and attempts.count("net") < 3:
            raise httpx.ConnectError("refused")
        if test_case.question == "bug":
            raise ValueError("not retried")
        return "ok"

    run = run_test_suite("retry", [Case("net"), Case("bug")], flaky, [NotEmpty()], retry_count=2,
                         project_root=tmp_path, quiet=True)  # fmt: skip
    assert run is not None
    by = {c.input["question"]: c for c in run.cases}
    assert by["net"].status == "passed" and attempts.count("net") == 3
    assert by["bug"].status == "error" and attempts.count("bug") == 1


def test_sync_evaluators_run_in_threads_under_their_max_concurrency(tmp_path: Path) -> None:
    """Six cases, an evaluator sleeping 0.3 s with max_concurrency 3: three at once (before,
    they ran one at a time on the event loop)."""
    lock = threading.Lock()
    running = [0]
    peak = [0]

    class Slow(BaseTestEvaluator):
        id = "slow"
        max_concurrency = 3

        def evaluate_test_case(self, test_case: Case, output: str) -> Evaluation:
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.3)
            with lock:
                running[0] -= 1
            return Evaluation(score=1)

    cases = [Case(str(i)) for i in range(6)]
    run = run_test_suite("threads", cases, str, [Slow()], project_root=tmp_path, quiet=True)
    assert run is not None and all(c.error is None for c in run.cases)
    assert peak[0] == 3


def test_an_exception_in_fn_keeps_its_traceback(tmp_path: Path) -> None:
    def fn(test_case: Case) -> str:
        return lookup(test_case.question)

    def lookup(question: str) -> str:
        raise KeyError(question)

    run = run_test_suite("tb", [Case("q")], fn, [NotEmpty()], project_root=tmp_path, quiet=True)
    assert run is not None
    error = run.cases[0].error or ""
    assert error.splitlines()[0] == "KeyError: 'q'"
    assert "Traceback (most recent call last):" in error
    assert "in lookup" in error and "raise KeyError(question)" in error


@dataclasses.dataclass
class Answer:
    text: str
    sources: list[str]


def test_a_non_string_output_shows_as_its_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = run_test_suite("data", [Case("q")], lambda c: Answer("yes", ["doc-1"]), [NotEmpty()],
                         project_root=tmp_path)  # fmt: skip
    assert run is not None
    assert run.cases[0].output == '{"text": "yes", "sources": ["doc-1"]}'
    assert "Answer(" not in capsys.readouterr().out


def test_the_threshold_is_the_evaluations_as_in_the_sdk(tmp_path: Path) -> None:
    """The SDK sends `evaluation.threshold`; a class attribute `threshold` on a plain
    BaseTestEvaluator is not read (passed() is None without one)."""

    class ClassThreshold(BaseTestEvaluator):
        id = "class-threshold"
        threshold = Threshold(gte=1)

        def evaluate_test_case(self, test_case: Case, output: str) -> Evaluation:
            return Evaluation(score=0)

    run = run_test_suite("thr", [Case("q")], str, [ClassThreshold()], project_root=tmp_path,
                         quiet=True)  # fmt: skip
    assert run is not None
    finding = run.cases[0].findings[0]
    assert finding.score == 0 and finding.passed is None
    assert Evaluation(score=0).passed() is None


def test_the_docs_example_prints_the_pass_rate_as_a_number(tmp_path: Path) -> None:
    docs = (Path(__file__).parents[2] / "docs" / "evaluations.md").read_text()
    block = docs.split("## Python: seed 001's API", 1)[1].split("```python\n", 1)[1]
    script = tmp_path / "example.py"
    script.write_text(block.split("```", 1)[0])
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=PROCESS_SECONDS, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "1.0"


def test_test_case_config_repeats_a_case(tmp_path: Path) -> None:
    """The SDK's TestCaseConfig(repeat_num_times=n): the case n times, hashes `<hash>-<i>`."""

    @dataclasses.dataclass
    class Repeated(BaseTestCase):
        question: str
        test_case_config: accord.TestCaseConfig = dataclasses.field(
            default_factory=lambda: accord.TestCaseConfig(repeat_num_times=3)
        )

        def hash(self) -> str:
            return self.question

    run = run_test_suite("rep", [Repeated("q")], str, [NotEmpty()], project_root=tmp_path,
                         quiet=True)  # fmt: skip
    assert run is not None and sorted(c.id for c in run.cases) == ["q-0", "q-1", "q-2"]
    assert run.cases[0].input == {"question": "q"}
    assert re.fullmatch(r"q-\d", run.cases[0].id)


def test_event_evaluators_are_refused_and_both_kinds_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As in the SDK: a BaseEventEvaluator alone is not a test evaluator (the suite is
    reported and not run); a BaseEvaluator (both kinds) runs its evaluate_test_case."""

    class OnEvents(accord.BaseEventEvaluator):
        id = "events"

        def evaluate_event(self, event: accord.TracerEvent) -> Evaluation:
            return Evaluation(score=1)

    class Both(accord.BaseEvaluator):
        id = "both"

        def evaluate_test_case(self, test_case: Case, output: str) -> Evaluation:
            return Evaluation(score=1, threshold=Threshold(gte=1))

        def evaluate_event(self, event: accord.TracerEvent) -> Evaluation:
            return Evaluation(score=0)

    assert run_test_suite("ev", [Case("a")], str, [OnEvents()], project_root=tmp_path) is None
    assert "does not implement BaseTestEvaluator" in capsys.readouterr().err
    run = run_test_suite("both", [Case("a")], str, [Both()], project_root=tmp_path, quiet=True)
    assert run is not None and run.cases[0].status == "passed"
