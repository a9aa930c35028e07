"""AgentV 4 rubric items and scenarios that need no AgentV to check, through `accord eval`:
what loaders/grader-parser.ts (parseRubricItems, parseScoreRanges,
normalizeScoreRangesShorthand) and loaders/scenario-file-loader.ts refuse is refused at its
line with what to write, as is what AgentV skips or ignores with a warning; an unreadable
reply of the score-range judge is an error, never a score. The scores themselves are
compared with AgentV's in test_rubric_ranges.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply

RANGES = "score_ranges: {0: Poor, 5: Fair, 8: Good}"


def _write(root: Path, fake: FakeOpenAI, rubrics: str) -> Path:
    (root / "config.yml").write_text(fake_model_config(fake) + "defaults:\n  judge_model: fake\n")
    path = root / "s.eval.yaml"
    path.write_text(
        "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\n"
        "tests:\n  - id: a\n    vars: {input: hello there}\n    assert:\n"
        f"      - type: llm-rubric\n{rubrics}"
    )
    return path


def _refused(run: Run, *parts: str) -> None:
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    for part in parts:
        assert part in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("rubrics", "parts"),
    [
        # parseScoreRanges: full coverage of 0-10, no overlap, whole numbers, an outcome each
        (
            "value:\n  - id: c\n    score_ranges:\n      - {score_range: [0, 4], outcome: a}\n"
            "      - {score_range: [6, 10], outcome: b}\n",
            ["cover no band for 5"],
        ),
        (
            "value:\n  - id: c\n    score_ranges:\n      - {score_range: [0, 6], outcome: a}\n"
            "      - {score_range: [5, 10], outcome: b}\n",
            ["[0, 6] and [5, 10] overlap"],
        ),
        (
            "value:\n  - id: c\n    score_ranges:\n      - {score_range: [0, 10.5], outcome: a}\n",
            ["whole numbers"],
        ),
        (
            "value:\n  - id: c\n    score_ranges:\n      - {score_range: [0, 10]}\n",
            ["needs an 'outcome'"],
        ),
        # normalizeScoreRangesShorthand: a map starts at 0
        ("value:\n  - id: c\n    score_ranges: {3: Fair, 8: Good}\n", ["starts at 0"]),
        # parseRubricItems: min_score in (0, 1]; required_min_score removed
        (
            f"value:\n  - id: c\n    min_score: 8\n    {RANGES}\n",
            ["'min_score' is a number in (0, 1]"],
        ),
        (
            f"value:\n  - id: c\n    required_min_score: 8\n    {RANGES}\n",
            ["'required_min_score' was removed", "min_score"],
        ),
        # what AgentV skips or ignores with a warning
        (
            "value:\n  - id: c\n    operator: implication\n    outcome: x\n",
            ["'operator' is one of correctness, contradiction"],
        ),
        ("value:\n  - id: c\n    weight: 2\n  - x\n", ["needs an 'outcome'"]),
        (f"value:\n  - id: c\n    required: true\n    {RANGES}\n", ["use min_score"]),
        (f"value: [x, y]\n        {RANGES}\n", ["'score_ranges' on an llm-rubric counts only"]),
        ("value: x\n        operator: correctness\n", ["'operator' on an llm-rubric counts only"]),
        ("value:\n  - id: c\n    outcome: x\n    description: y\n", ["unknown key 'description'"]),
    ],
)
def test_a_rubric_item_agentv_refuses_or_passes_over_is_refused_at_its_line(
    tmp_path: Path, fake_llm: FakeOpenAI, rubrics: str, parts: list[str]
) -> None:
    indented = "".join(f"        {line}\n" if not line.startswith(" " * 8) else f"{line}\n"
                       for line in rubrics.splitlines())  # fmt: skip
    path = _write(tmp_path, fake_llm, indented)
    _refused(accord("eval", path), "s.eval.yaml:8", *parts)
    assert not fake_llm.requests  # refused before anything runs


def test_an_unreadable_score_range_reply_is_an_error_never_a_score(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # a checklist's reply to a score-range prompt: no integer score per criterion
    reply = {"checks": [{"id": "c", "satisfied": True, "reasoning": "ok"}],
             "overall_reasoning": "ok"}  # fmt: skip
    fake_llm.responder = lambda body: Reply(text=json.dumps(reply))
    path = _write(tmp_path, fake_llm, f"        value:\n          - id: c\n            {RANGES}\n")
    run = accord("eval", path, "--format", "json", "--cache", "off")
    found = run.suite()["cases"][0]["evaluations"][0]
    assert found["score"] is None and "'score' (a whole number from 0 to 10)" in found["error"]
    # llm-grader.ts runWithRetry: three asks, then one with the repair prompt
    assert len(fake_llm.requests) == 4
    assert "Repair it to satisfy the schema" in fake_llm.requests[-1]["messages"][1]["content"]


@pytest.mark.parametrize(
    ("score", "expected"),
    [(10, (1.0, True)), (7, (0.7, False)), (11, None), (6.5, None), (True, None)],
)
def test_a_score_range_reply_is_read_as_agentv_reads_it(
    tmp_path: Path, fake_llm: FakeOpenAI, score: Any, expected: tuple[float, bool] | None
) -> None:
    """scoreRangeEvaluationSchema: an integer 0-10 (anything else is no reply, asked again
    and then an error); calculateScoreRangeResult: score/10, a pass at 0.8."""
    reply = {"checks": [{"id": "c", "score": score}]}  # reasoning and summary are optional
    fake_llm.responder = lambda body: Reply(text=f"```json\n{json.dumps(reply)}\n```")
    path = _write(tmp_path, fake_llm, f"        value:\n          - id: c\n            {RANGES}\n")
    found = accord("eval", path, "--format", "json", "--cache", "off").suite()["cases"][0]
    evaluation = found["evaluations"][0]
    if expected is None:
        assert evaluation["score"] is None and evaluation["error"], evaluation
    else:
        assert (evaluation["score"], evaluation["passed"]) == expected, evaluation


def _scenario_project(root: Path, scenarios: str, files: dict[str, str]) -> Path:
    (root / "config.yml").write_text("")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    path = root / "s.eval.yaml"
    path.write_text("name: t\nproviders: [echo]\nprompts: ['{{ word }}']\nscenarios:\n" + scenarios)
    return path


def test_scenario_files_are_read_in_path_order_and_their_rows_named_as_agentv_names_them(
    tmp_path: Path,
) -> None:
    row = (
        "  - config: [{{vars: {{word: {w}}}}}]\n"
        "    tests: [{{assert: [{{type: equals, value: {w}}}]}}]\n"
    )
    path = _scenario_project(tmp_path, "  - file://more/*.yml\n" + row.format(w="gamma"), {
        "more/b.yml": "scenarios:\n" + row.format(w="beta"),
        "more/a.yml": row.format(w="alpha"),
        "more/empty.yml": "\n",  # AgentV skips an empty scenario file
    })  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    cases = {c["id"]: c["output"] for c in run.suite()["cases"]}
    # scenario-file-loader.ts sorts a glob's files; yaml-parser.ts numbers the scenarios
    # after the files are read (stableScenarioTestId)
    assert cases == {"scenario-1-1-1": "alpha", "scenario-2-1-1": "beta",
                     "scenario-3-1-1": "gamma"}  # fmt: skip


@pytest.mark.parametrize(
    ("scenarios", "files", "parts"),
    [
        ("  - file://nope/*.yaml\n", {}, ["s.eval.yaml:5", "matches no file"]),
        ("  - file://../outside.yaml\n", {}, ["s.eval.yaml:5", "outside the project"]),
        ("  - file://rows.txt\n", {"rows.txt": "[]"}, ["s.eval.yaml:5", ".yaml, .yml and .json"]),
        ("  - file://rows.yaml\n", {"rows.yaml": "config: []\n"}, ["rows.yaml:1", "a list of"]),
        # lowerScenariosIntoTests: config and tests are both required lists
        (
            "  - file://rows.yaml\n",
            {"rows.yaml": "- config: [{vars: {word: x}}]\n"},
            ["rows.yaml:1", "needs 'config' and 'tests'"],
        ),
        (
            # yaml-parser.ts ~line 310: a test's `input` "has been removed from authored
            # eval YAML" (read only from a test file)
            "  - config: [{vars: {word: x}}]\n    tests: [{input: y}]\n",
            {},
            ["s.eval.yaml:6", "'input' has been removed from a scenario's test"],
        ),
        ("  - just text\n", {}, ["s.eval.yaml:5", "file://PATH"]),
    ],
)
def test_a_scenario_agentv_refuses_is_refused_at_its_line(
    tmp_path: Path, scenarios: str, files: dict[str, str], parts: list[str]
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (tmp_path / "outside.yaml").write_text("[]\n")
    _refused(accord("eval", _scenario_project(project, scenarios, files)), *parts)
