"""Each finding carries the check that made it, namespaced by its family as the one check
registry names it (`accord/contains`, `promptfoo/icontains`), in `accord eval`'s JSON."""

from __future__ import annotations

from pathlib import Path

from tests.evals.conftest import accord

EVAL = """\
targets:
  echo: echo
cases:
  - id: greet
    input: hello there
    target: echo
    evaluators:
      - {type: contains, value: hello}
      - {type: regex, pattern: "^h", name: starts}
"""

PROMPTFOO = """\
prompts: ["{{word}}"]
providers: [echo]
tests:
  - vars: {word: Paris}
    assert:
      - {type: icontains, value: paris}
      - {type: not-contains, value: London}
"""


def test_a_finding_names_its_check_by_family(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text("models: []\n")
    (tmp_path / "greet.eval.yml").write_text(EVAL)
    (tmp_path / "promptfooconfig.yaml").write_text(PROMPTFOO)
    run = accord(
        "eval", tmp_path / "greet.eval.yml", tmp_path / "promptfooconfig.yaml", "--format", "json"
    )
    assert run.exit_code == 0, run.stderr
    checks = {
        suite["suite"]: [f["check"] for case in suite["cases"] for f in case["evaluations"]]
        for suite in run.doc()["suites"]
    }
    assert sorted(checks.values()) == [
        ["accord/contains", "accord/regex"],
        ["promptfoo/icontains", "promptfoo/not-contains"],
    ], checks
