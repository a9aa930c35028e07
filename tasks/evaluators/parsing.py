"""Evaluator entries of any file (`evaluators:` of an eval file, a test, a suite, a case)
validated against the registry: every problem an issue at its line."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Union

import pydantic
from pydantic import Field, create_model

from ...engine.errors import Issue
from ...engine.loader import Loaded, pydantic_issues_at
from ...engine.specbase import Spec
from ...engine.yamlmarks import Loc
from .base import EVALUATORS, EvaluatorSpec


@cache
def evaluator_union() -> Any:
    """The discriminated union of every registered evaluator spec."""
    members = tuple(EVALUATORS.get(name) for name in EVALUATORS.names())
    return Annotated[Union[members], Field(discriminator="type")]  # noqa: UP007


@cache
def _holder() -> type[Spec]:
    union = evaluator_union()
    holder: type[Spec] = create_model(
        "Evaluators",
        __base__=Spec,
        evaluators=(list[union], Field()),  # type: ignore[valid-type]
    )
    return holder


def parse_evaluators(
    items: list[Any] | None,
    loaded: Loaded,
    at: Loc,
    issues: list[Issue],
    taken: tuple[str, ...] = (),
) -> tuple[EvaluatorSpec, ...]:
    """The evaluators of the list at `at + ("evaluators",)` of `loaded`'s file; problems
    are added to `issues` (with the file's lines) and leave an empty tuple. `taken` are
    names already used by the test's metrics."""
    if not items:
        return ()
    data = {"evaluators": items}
    try:
        holder: Any = _holder().model_validate(data)
    except pydantic.ValidationError as exc:
        issues.extend(pydantic_issues_at(exc, data, loaded.marks, loaded.path, _holder(), at))
        return ()
    specs: tuple[EvaluatorSpec, ...] = tuple(holder.evaluators)
    seen: set[str] = set()
    for position, spec in enumerate(specs):
        problem = None
        if spec.id in seen:
            problem = f"two evaluators named '{spec.id}': give one a different 'name'"
        elif spec.id in taken:
            problem = (
                f"'{spec.id}' is also a metric of this test: give this evaluator a different 'name'"
            )
        if problem is not None:
            issues.append(loaded.issue((*at, "evaluators", position), problem))
        seen.add(spec.id)
    return specs


def merge_evaluators(
    outer: tuple[EvaluatorSpec, ...], inner: tuple[EvaluatorSpec, ...]
) -> tuple[EvaluatorSpec, ...]:
    """`outer` (a suite's) then `inner` (a case's); an inner evaluator replaces the outer
    one of the same name."""
    own = {spec.id for spec in inner}
    return (*(spec for spec in outer if spec.id not in own), *inner)
