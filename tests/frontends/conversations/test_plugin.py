"""The pytest plugin in real pytest runs (subprocesses): fixtures and the marker, the judge
options, and the pass-rate summary under pytest-xdist (`-n 2`) and pytest-repeat (`--count 3`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from accord.tasks.suites.core.reducers import wilson_interval

TESTS = '''
import fcntl, os
from accord import AgentTurn, UserTurn

COUNTER = os.path.join(os.path.dirname(__file__), "calls.txt")


def flaky(history):
    """Every second of three calls answers wrongly: two of three repeats pass."""
    with open(COUNTER, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        calls = len(f.read())
        f.write("x")
    return "Goodbye" if calls % 3 == 1 else "Hello"


def test_steady(accord_conversation):
    accord_conversation(lambda h: "Hello", [UserTurn("hi"), AgentTurn("hello")]).run_sync()


def test_flaky(accord_conversation):
    accord_conversation(flaky, [UserTurn("hi"), AgentTurn("hello")]).run_sync()


def test_greets(accord_conversation):
    expected = [UserTurn("hi"), AgentTurn("<greets the user>")]
    accord_conversation(lambda h: "Hey there", expected).run_sync()


def test_not_a_conversation():
    assert 1 + 1 == 2
'''


def pytest_run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_chat.py", *args],
        cwd=root, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "ACCORD_JUDGE_MODEL": ""},
    )  # fmt: skip


def summary(output: str) -> dict[str, str]:
    lines = output.split("accord conversations", 1)[1].splitlines()[1:]
    out = {}
    for line in lines:
        if "::" in line:
            name, _, rest = line.partition("  ")
            out[name.split("::")[1]] = rest.strip()
    return out


@pytest.mark.slow
def test_pass_rates_across_xdist_workers_and_repeats(project: Callable[..., Path]) -> None:
    root = project({"test_chat.py": TESTS}, judge=False)
    done = pytest_run(root, "-n", "2", "--count", "3", "--accord-judge-model", "fake")
    assert done.returncode == 1, done.stdout[-3000:]  # the flaky test failed once
    assert "2 workers" in done.stdout
    assert "1 failed, 11 passed" in done.stdout
    rates = summary(done.stdout)
    low, high = wilson_interval(2, 3)
    assert rates["test_flaky"] == f"2/3 passed  67%  (95% interval {low:.0%}-{high:.0%})"
    low, high = wilson_interval(3, 3)
    assert rates["test_steady"] == f"3/3 passed  100%  (95% interval {low:.0%}-{high:.0%})"
    assert rates["test_greets"].startswith("3/3 passed")
    assert "test_not_a_conversation" not in rates
    assert "turn 2 did not match" in done.stdout and 'actual:    "Goodbye"' in done.stdout


@pytest.mark.slow
def test_without_a_judge_tests_that_need_one_skip_loudly(project: Callable[..., Path]) -> None:
    root = project({"test_chat.py": TESTS}, judge=False)
    done = pytest_run(root, "-rs", "-k", "steady or greets")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "1 passed, 1 skipped" in done.stdout
    assert "SKIPPED" in done.stdout
    assert "NO JUDGE MODEL: this turn needs a judge model" in done.stdout
    assert summary(done.stdout)["test_greets"] == "no run judged, 1 skipped"


@pytest.mark.slow
def test_require_judge_fails_instead(project: Callable[..., Path]) -> None:
    root = project({"test_chat.py": TESTS}, judge=False)
    done = pytest_run(root, "-k", "greets", "--accord-require-judge")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "no judge model (--accord-require-judge)" in done.stdout


PARAMETRIZED = """
import pytest
from accord import AgentTurn, UserTurn


@pytest.mark.parametrize("size,age", [(4, 19), (2, 20)])
def test_party(accord_conversation, size, age):
    accord_conversation(lambda h: "Hello", [UserTurn("hi"), AgentTurn("hello")]).run_sync()


@pytest.mark.parametrize("month", ["2024-01", "2024-02"])
def test_month(accord_conversation, month):
    answer = "Hello" if month == "2024-01" else ""  # an empty reply fails without a judge
    accord_conversation(lambda h: answer, [UserTurn("hi"), AgentTurn("hello")]).run_sync()
"""


@pytest.mark.slow
def test_the_summary_folds_only_pytest_repeats_own_parameter(project: Callable[..., Path]) -> None:
    """Ids ending in `digits-digits` are parameters of their own: `[4-19]` and `[2-20]`, or
    `[2024-01]` and `[2024-02]`, are different tests; only `--count`'s `i-n` folds."""
    root = project({"test_chat.py": PARAMETRIZED}, judge=False)
    once = summary(pytest_run(root).stdout)
    assert {n: rate.split("  ")[0] for n, rate in once.items() if " - " not in n} == {
        "test_party[4-19]": "1/1 passed", "test_party[2-20]": "1/1 passed",
        "test_month[2024-01]": "1/1 passed", "test_month[2024-02]": "0/1 passed",
    }  # fmt: skip
    repeated = summary(pytest_run(root, "--count", "2", "-n", "2").stdout)
    assert {n: rate.split("  ")[0] for n, rate in repeated.items() if " - " not in n} == {
        "test_party[4-19]": "2/2 passed", "test_party[2-20]": "2/2 passed",
        "test_month[2024-01]": "2/2 passed", "test_month[2024-02]": "0/2 passed",
    }  # fmt: skip
