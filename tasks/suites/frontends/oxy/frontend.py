"""Oxy's `.test.yml` files as `accord eval` suites (`accord test` runs them too, and the tests
of workflows and agents; `accord validate` checks them with those, in accord.tasks)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ....evaluators.cases import Case, case_digest
from ...core.cases import Suite
from ...core.frontend import FrontEnd, Request, Source

SUITE_SUFFIXES = (".test.yml", ".test.yaml")


def load_test_file(
    path: Path,
    *,
    judge_model: str | None = None,
    repeat: int | None = None,
    text: str | None = None,
) -> Suite:
    """A `.test.yml` (validated as `accord test` does) as a suite: its agent the target, the
    correctness judge and its `evaluators:` the evaluators, `settings.runs` the repeats.
    `text`: the file's, read already."""
    from ....evaluators.judged import Correctness
    from ...core.targets import AgentTarget
    from .loading import prepare

    prepared = prepare(path, text=text)
    (test,) = prepared.tests
    assert prepared.agent_path is not None
    agent = prepared.agent_path.resolve().relative_to(prepared.project.root.resolve())
    cases = [
        Case(
            id=c.name, input=c.prompt, expected=c.expected, tags=c.tags, target="default",
            evaluators=c.evaluators,
        )
        for c in test.cases
    ]  # fmt: skip
    correctness = Correctness(prompt=test.judging.correctness_prompt)
    return Suite(
        id=prepared.name,
        cases=[replace(c, digest=case_digest(c)) for c in cases],
        targets={"default": AgentTarget(agent=agent.as_posix())},
        evaluators=(correctness, *test.evaluators),
        default_target="default",
        repeat=repeat or test.n,
        judge_model=judge_model or test.judging.model,
        path=path,
        project=prepared.project,
        max_concurrency=prepared.max_concurrency,
    )


def load(source: Source, request: Request) -> list[Suite]:
    suite = load_test_file(
        source.path, judge_model=request.judge_model, repeat=request.repeat, text=source.text
    )
    return [suite]


FRONTEND = FrontEnd(
    name="oxy-test",
    describe="a .test.yml suite",
    claims=lambda source: source.path.name.endswith(SUITE_SUFFIXES),
    load=load,
    checked=False,  # `accord validate` checks .test.yml files with workflows' and agents' tests
)
