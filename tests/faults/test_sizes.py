"""Answers of megabytes stay whole in the JSON report and the run store, and are clipped where
people read: the terminal and JUnit XML (a pytest failure:
tests/frontends/conversations/test_sizes.py).

Every process runs bounded in time, its process group killed at the end (helpers.bounded).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.faults.helpers import bounded

ANSWER = 10_000_000  # characters the agent answers
REASON = 200_000  # characters of the judge's reason
MARKER = re.compile(
    r"… \[([\d,]+) more characters cut; the whole is in the run store \(run ([\w-]+) in "
    r"\.accord/runs\.db\)\]"
)


EVAL = """\
target: {type: python, function: "bigmod:answer"}
evaluators:
  - {type: contains, value: hello}
cases:
  - {id: long, input: long}
  - {id: broken, input: broken}
"""

MODULE = f"""
def answer(text):
    if text == "broken":
        raise RuntimeError("e" * {ANSWER})
    return "x" * {ANSWER}
"""


@pytest.mark.slow
def test_the_terminal_and_junit_show_the_start_of_a_long_answer(tmp_path: Path) -> None:
    (tmp_path / "bigmod.py").write_text(MODULE)
    (tmp_path / "big.eval.yml").write_text(EVAL)
    accord = [sys.executable, "-m", "accord.cli", "eval", "big.eval.yml"]
    code, out, err = bounded([*accord, "--output-dir", "out"], tmp_path)
    assert code == 1, err[-3000:]
    assert len(out) + len(err) < 50_000, f"{len(out):,} + {len(err):,} characters shown"
    assert "error: case broken: " in err and MARKER.search(err)
    whole = json.loads((tmp_path / "out" / "results.json").read_text())
    cases = {c["id"]: c for c in whole["suites"][0]["cases"]}
    assert cases["long"]["output"] == "x" * ANSWER  # the JSON report keeps it whole
    code, junit, err = bounded([*accord, "--format", "junit"], tmp_path)
    assert code == 1, err[-3000:]
    assert len(junit) < 100_000, f"{len(junit):,} characters of JUnit XML"
    assert "<failure" in junit and "<error" in junit
    cut = [int(n.replace(",", "")) for n, _ in MARKER.findall(junit)]
    assert ANSWER - 10_000 in cut  # system-out: the first 10,000 characters of the answer
