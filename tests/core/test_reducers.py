"""Repeats and trials reduced in one place: the reducer registry (pass@k, pass^k, mean, the
t interval's lower bound) and what a user sees of it: pass@k and pass^k of `--repeat`, and an
unknown strategy named with the known ones."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from accord.engine.errors import ConfigError
from accord.tasks.suites.core.reducers import REDUCERS, reduce_runs
from tests.conftest import fake_model_config
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI


def test_the_registry_holds_every_strategy() -> None:
    assert REDUCERS.names() == [
        "pass_at_k",
        "pass_any",
        "pass_hat_k",
        "mean",
        "confidence_interval",
    ]
    with pytest.raises(ConfigError, match=r"unknown trial strategy 'pass_at_2'.*pass_at_k"):
        reduce_runs("pass_at_2", [1.0], [True])


def test_reducers_of_three_runs() -> None:
    scores, passed = [0.8, 1.0, 0.3], [True, True, False]
    best = reduce_runs("pass_at_k", scores, passed)
    assert (best.score, best.passed) == (1.0, True)
    assert best.details == {"strategy": "pass_at_k", "passed": 2, "trials": 3}
    every = reduce_runs("pass_hat_k", scores, passed)
    assert (every.score, every.passed) == (0.3, False)
    mean = reduce_runs("mean", scores, passed)
    assert mean.score == pytest.approx(0.7) and mean.passed is None  # the pass score decides
    low = reduce_runs("confidence_interval", [0.8, 1.0, 0.9], [True] * 3)
    assert low.score == pytest.approx(0.9 - 4.303 * 0.1 / 3**0.5)
    assert low.details["upper"] == 1.0 and low.passed is None


FLAKY = """\
import json, os, sys
case = json.load(sys.stdin)
count = os.path.join(os.path.dirname(os.path.abspath(__file__)), case["id"] + ".count")
runs = int(open(count).read()) if os.path.exists(count) else 0
open(count, "w").write(str(runs + 1))
print("yes" if case["id"] == "steady" or runs % 2 == 0 else "no")
"""


def test_repeat_shows_pass_at_k_and_pass_hat_k(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """`steady` passes every run, `flaky` its first and third only: pass@3 counts both,
    pass^3 the steady one alone."""
    suite = (
        f"target: {{type: command, command: [{sys.executable!r}, flaky.py]}}\n"
        "evaluators: [{type: contains, value: 'yes'}]\n"
        "cases: [{id: steady, input: a}, {id: flaky, input: b}]\n"
    )
    root = tmp_path
    (root / "config.yml").write_text(fake_model_config(fake_llm))
    (root / "flaky.py").write_text(FLAKY)
    (root / "f.eval.yml").write_text(suite)
    run = accord(
        "eval", root / "f.eval.yml", "--repeat", "3", "--format", "json", "--max-concurrency", "1"
    )
    figures = run.suite()
    flaky = sorted(c["status"] for c in figures["cases"] if c["id"] == "flaky")
    assert flaky == ["failed", "passed", "passed"]
    assert figures["pass_at_k"]["successes"] == 2 and figures["pass_at_k"]["n"] == 2
    assert figures["pass_all_k"]["successes"] == 1 and figures["pass_all_k"]["n"] == 2
    for name in ("steady", "flaky"):
        (root / f"{name}.count").unlink()
    pretty = accord("eval", root / "f.eval.yml", "--repeat", "3", "--max-concurrency", "1")
    assert "pass@3: 100.00% (2/2 cases" in pretty.stdout
    assert "pass^3: 50.00% (1/2 cases" in pretty.stdout
