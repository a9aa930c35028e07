"""Tests ready to run: validated, with their cases, judge settings and default `task_ref`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ....engine.plan import Plan
from ....engine.project import Project
from ....engine.spec import AgentSpec
from .outcomes import TestKind

if TYPE_CHECKING:
    from ...evaluators.base import EvaluatorSpec

SubjectKind = Literal["workflow", "agent", "suite"]
PrejudgeMode = Literal["off", "identical", "tolerant"]


@dataclass(frozen=True)
class CaseInput:
    """A prompt to run and what to compare its answer with."""

    name: str
    prompt: str
    expected: str | None = None
    contexts: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    evaluators: tuple[EvaluatorSpec, ...] = ()


@dataclass(frozen=True)
class Judging:
    """How a test's answers are judged."""

    model: str | None
    prompt: str
    prejudge: PrejudgeMode = "tolerant"
    pairs: Literal["all", "circular"] = "all"
    correctness_prompt: str | None = None


@dataclass(frozen=True)
class PreparedTest:
    """One test of the file, validated.

    `task_ref` is the tested task (workflows; the last task when the file names none).
    `metrics` names what a custom test or case file scores (Oxy's metrics); `evaluators`
    are the library's, applied to every answer (a case may add its own).
    """

    __test__ = False  # not a pytest test class

    index: int
    name: str
    kind: TestKind
    n: int
    judging: Judging
    task_ref: str | None = None
    task_description: str | None = None
    cases: tuple[CaseInput, ...] = ()
    metrics: tuple[str, ...] = ()
    variable: str | None = None
    metric_models: dict[str, str | None] = field(default_factory=dict)
    evaluators: tuple[EvaluatorSpec, ...] = ()

    def judge_model(self, metric: str) -> str | None:
        return self.metric_models.get(metric) or self.judging.model


@dataclass(frozen=True)
class PreparedSuite:
    """A file ready to test: its project, what is tested, and its tests in file order."""

    path: Path
    project: Project
    kind: SubjectKind
    name: str
    tests: tuple[PreparedTest, ...]
    plan: Plan | None = None
    agent: AgentSpec | None = None
    agent_path: Path | None = None
    variables: dict[str, Any] = field(default_factory=dict)
    max_concurrency: int | None = None

    def only(self, tests: list[PreparedTest]) -> PreparedSuite:
        return replace(self, tests=tuple(tests))


def select(suite: PreparedSuite, tags: tuple[str, ...], names: tuple[str, ...]) -> PreparedSuite:
    """Keep the tests and cases that `--tag` and `--case` ask for (all without filters).

    `--case` matches a test's name, or a case's name, prompt or 0-based index in its test
    (as Oxy's `--case`); `--tag` matches a case's tags. A test left without cases is dropped.
    """
    if not tags and not names:
        return suite
    kept: list[PreparedTest] = []
    for test in suite.tests:
        if names and test.name in names and not tags:
            kept.append(test)
            continue
        cases = tuple(c for i, c in enumerate(test.cases) if _wanted(c, i, tags, names, test.name))
        if cases:
            kept.append(replace(test, cases=cases))
    return suite.only(kept)


def _wanted(
    case: CaseInput, index: int, tags: tuple[str, ...], names: tuple[str, ...], test: str
) -> bool:
    keys = {case.name, case.prompt, str(index), test}
    if names and not keys & set(names):
        return False
    return not tags or bool(set(tags) & set(case.tags))
