"""Pydantic models of what `accord test` reads.

- The `tests:` of a workflow or an agent file (`TestSpecBase`), a section the engine's
  workflow and agent models gain from here: the engine knows no tests.
- `.test.yml` case files (`TestSuiteSpec`): a target agent, settings, and cases with expected
  answers, judged PASS/FAIL by the correctness judge, plus any `evaluators:` of the library.
- The metrics a `type: custom` test lists (`MetricSpec`).
- One row of a custom test's dataset (`DatasetRow`): Oxy's `{query, response,
  relevant_contexts}`, plus an optional `name` and `tags` for `--case` and `--tag`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from .....engine.errors import did_you_mean
from .....engine.kinds import register_section
from .....engine.loader import is_workflow_file
from .....engine.plan import Plan
from .....engine.spec import Spec, oxy_ignored
from .....engine.yamlmarks import Loc


class TestSpecBase(Spec):
    """A `tests:` entry. Test execution belongs to the test runner; here it is validated."""

    type: Literal["consistency", "custom"]
    name: str | None = Field(None, description="Display name of the test.")
    n: int = Field(10, ge=1, description="Number of samples.")
    task_ref: str | None = Field(None, description="Workflows: the task tested.")
    task_description: str | None = Field(None, description="The question judged.")
    prompt: str | None = Field(None, description="Custom judge prompt.")
    pairs: Literal["all", "circular"] = "all"
    consistency_prejudge: Literal["off", "identical", "tolerant"] | None = None
    dataset: str | None = None
    workflow_variable_name: str | None = None
    metrics: list[Any] | None = None
    evaluators: list[Any] | None = None
    concurrency: int | None = Field(
        None, ge=1, description="Cap on this test's work running at once (Oxy)."
    )
    is_context_id: Any = oxy_ignored()


def _task_refs(tests: list[TestSpecBase], plan: Plan) -> list[tuple[Loc, str]]:
    """Each test's `task_ref` names a task of the workflow."""
    names = sorted(t.name for t in plan.tasks)
    problems: list[tuple[Loc, str]] = []
    for index, test in enumerate(tests):
        if test.task_ref is not None and test.task_ref not in names:
            hint = did_you_mean(test.task_ref, names)
            message = f"task_ref names unknown task '{test.task_ref}'{hint}"
            problems.append((("tests", index, "task_ref"), message))
    return problems


def tests_of(spec: Any) -> list[TestSpecBase]:
    """The `tests:` of a workflow or agent spec (the section registered below)."""
    tests: list[TestSpecBase] = getattr(spec, "tests", [])
    return tests


register_section(
    "tests",
    list[TestSpecBase],
    Field(default_factory=list),
    files=("workflow", "agent"),
    check=_task_refs,
)


class MetricSpec(Spec):
    """A metric of a custom test: `{type: similarity}` (or just `similarity`)."""

    type: str = Field(
        description="A registered evaluator: similarity, context_recall, correctness."
    )
    prompt: str | None = Field(None, description="Judge prompt (similarity, correctness).")
    model: str | None = Field(None, description="Judge model (default: the test's judge).")
    model_ref: str | None = Field(None, description="Oxy's name for `model`.")
    distance: str | None = Field(None, description="Oxy: accepted; Levenshtein is used.")
    threshold: float | None = Field(None, description="Oxy: accepted and ignored.")

    @field_validator("type")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in OXY_METRICS:
            hint = did_you_mean(value, OXY_METRICS, before="", after=" ")
            raise ValueError(
                f"unknown metric '{value}': {hint}a custom test's metrics are "
                f"{', '.join(OXY_METRICS)} (the evaluator library goes under 'evaluators:')"
            )
        return value


OXY_METRICS = ("similarity", "context_recall", "correctness")


class DatasetRow(Spec):
    """One case of a custom test's dataset."""

    query: str = Field(description="The question sent to the agent or workflow.")
    response: str | None = Field(None, description="The expected answer.")
    relevant_contexts: list[str] = Field(
        default_factory=list, description="What should be retrieved (SQL, documents)."
    )
    name: str | None = Field(None, description="Case name, for `--case`.")
    tags: list[str] = Field(default_factory=list, description="Tags, for `--tag`.")

    @field_validator("relevant_contexts", mode="before")
    @classmethod
    def _one_context(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class SuiteSettings(Spec):
    """How a `.test.yml` runs."""

    runs: int = Field(3, ge=1, le=1000, description="Answers per case (each judged).")
    concurrency: int | None = Field(None, ge=1, description="Cap on work running at once.")
    judge_model: str | None = Field(None, description="Model of the correctness judge.")
    judge_prompt: str | None = Field(
        None,
        description="Custom correctness prompt: sees {{ question }}, {{ expected }}, "
        "{{ answer }}; must end with PASS or FAIL.",
    )


class CaseSpec(Spec):
    """One case: a prompt for the target and the answer expected."""

    name: str | None = Field(None, description="Unique case name (for `--case`).")
    prompt: str = Field(description="Sent to the target as is.")
    expected: str = Field(description="The expected answer, given to the correctness judge.")
    tags: list[str] = Field(default_factory=list, description="Tags (for `--tag`).")
    tool: str | None = Field(
        None, description="A tool the agent must call (its tool calls must include it)."
    )
    evaluators: list[Any] = Field(
        default_factory=list,
        description="Evaluators of this case (replace the suite's of the same name).",
    )


class TestSuiteSpec(Spec):
    """A `.test.yml`: cases run against one agent and judged for correctness."""

    __test__ = False  # not a pytest test class

    name: str | None = Field(None, description="Suite name (defaults to the file stem).")
    description: str | None = None
    target: str | None = Field(
        None,
        description="The agent file under test, relative to the project root (default: the "
        "project's `defaults.agent`, else its only agent file).",
    )
    settings: SuiteSettings = Field(default_factory=SuiteSettings)
    cases: list[CaseSpec] = Field(min_length=1, description="The cases, at least one.")
    evaluators: list[Any] = Field(
        default_factory=list, description="Evaluators applied to every case's answer."
    )


def declares_tests(path: Path) -> bool:
    """A .test.yml, or a workflow or agent file with a top-level `tests:` (a quick look at
    the text, so that `accord validate` loads the test runner only for files with tests)."""
    name = path.name
    if name.endswith((".test.yml", ".test.yaml")):
        return True
    if not (is_workflow_file(path) or name.endswith((".agent.yml", ".agent.yaml"))):
        return False
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False  # the workflow or agent check reports it
    return re.search(r"^tests\s*:", text, re.MULTILINE) is not None
