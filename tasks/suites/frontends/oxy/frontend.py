"""Oxy's `.test.yml` files as `accord eval` suites (`accord test` runs them too, and the tests
of workflows and agents; `accord validate` checks them with those, in accord.tasks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.frontend import FrontEnd, Request, Source

if TYPE_CHECKING:
    from ...core.cases import Suite

SUITE_SUFFIXES = (".test.yml", ".test.yaml")


def load(source: Source, request: Request) -> list[Suite]:
    from ..evalfile import load_test_file

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
