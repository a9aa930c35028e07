"""AgentV 4 eval files accord used to refuse: each feature loads and scores as AgentV's
source (commit 58f316ca2) has it; the file and function each expected value comes from is
named beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.evals.conftest import Run, accord


def _write(root: Path, text: str, name: str = "s.eval.yaml") -> Path:
    (root / "config.yml").write_text("")
    path = root / name
    path.write_text(text)
    return path


def _cases(run: Run) -> dict[str, dict[str, Any]]:
    assert run.exit_code in (0, 1), run.stderr + run.stdout
    assert "Traceback" not in run.stderr
    return {c["id"]: c for c in run.suite()["cases"]}


# two contains of which the echoed prompt holds one: each test scores 0.5
ASSERTS = "    assert:\n      - {type: contains, value: alpha}\n"
HALF = ASSERTS + "      - {type: contains, value: zeta}\n"


def test_tests_of_one_file_pass_each_at_its_own_threshold(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\ntests:\n"
        "  - id: low\n    threshold: 0.5\n    vars: {input: alpha}\n" + HALF +
        "  - id: high\n    threshold: 0.6\n    vars: {input: alpha}\n" + HALF +
        "  - id: zero\n    threshold: 0\n    vars: {input: alpha}\n" + HALF +
        "  - id: none\n    vars: {input: alpha}\n" + HALF
    ))  # fmt: skip
    cases = _cases(accord("eval", path, "--format", "json", "--cache", "off"))
    assert {k: (c["score"], c["status"]) for k, c in cases.items()} == {
        # run-eval.ts resolveEffectiveRunPolicy: cli ?? run ?? test.threshold ?? suite default;
        # orchestrator.ts classifyQualityStatus: score >= threshold passes
        "low": (0.5, "passed"),
        "high": (0.5, "failed"),
        # `??` keeps a 0: every score reaches it
        "zero": (0.5, "passed"),
        # no threshold anywhere: DEFAULT_THRESHOLD 0.8 (classifyQualityStatus's default)
        "none": (0.5, "failed"),
    }


def test_default_test_threshold_is_the_bar_of_tests_without_their_own(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\n"
        "default_test:\n  threshold: 0.4\ntests:\n"
        "  - id: own\n    threshold: 0.9\n    vars: {input: alpha}\n" + HALF +
        "  - id: inherited\n    vars: {input: alpha}\n" + HALF
    ))  # fmt: skip
    cases = _cases(accord("eval", path, "--format", "json", "--cache", "off"))
    # run-eval.ts: suiteDefaultThreshold = suite.defaultTest?.threshold ?? suite.threshold,
    # the default of resolveEffectiveRunPolicy behind the test's own
    assert {k: c["status"] for k, c in cases.items()} == {"own": "failed", "inherited": "passed"}
